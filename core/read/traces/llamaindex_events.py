"""Reader for LlamaIndex agent workflow events: what ``handler.stream_events()`` yields for a
``FunctionAgent`` / ``AgentWorkflow`` run, each serialised by the workflows package's own
``JsonSerializer`` (``{"__is_pydantic": true, "value": {...}, "qualified_name":
"llama_index.core.agent.workflow.workflow_events.ToolCallResult"}``), as a list or one per
JSON Lines line.

Runs: the events of a file in order; a ``StopEvent`` ends a run (a log of several runs holds
one per run; events after the last one are a run too).

Events -> steps (``llama_index.core.agent.workflow.workflow_events``):

- ``AgentInput``: the first of a run gives the user's request (the last user message of its
  ``input``, text in ``blocks`` or ``content``);
- ``AgentOutput``: one model turn: ``tool_calls`` (``ToolSelection``: ``tool_id``,
  ``tool_name``, ``tool_kwargs``) as one step with the response's text, else an assistant
  text step; ``current_agent_name`` is the step's agent;
- ``ToolCallResult``: a result joined by ``tool_id``: ``tool_output`` text (``blocks`` /
  ``content``, else ``raw_output``), failed when ``tool_output.is_error`` (the agent catches
  a raising tool and records it so);
- ``ToolCall``: read only when no ``AgentOutput`` announced its ``tool_id``;
- ``StopEvent``: its ``result.response`` is the final answer when no assistant text came.

What cannot be known: usage (``AgentOutput.raw``, the model's response, is not serialised).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory
from ._util import StepList, as_plain, finalize, is_seq, mapping, parse_args, sum_usage, text_of

FORMAT = "llamaindex_events"
_EVENTS = frozenset({"AgentInput", "AgentSetup", "AgentStream", "AgentOutput", "ToolCall", "ToolCallResult",
                     "StopEvent", "StartEvent", "InputRequiredEvent", "HumanResponseEvent"})


def _kind(x: Any) -> str | None:
    """The event class name of one serialised event, or None."""
    x = as_plain(x)
    if not isinstance(x, Mapping) or not isinstance(x.get("value"), Mapping):
        return None
    q = x.get("qualified_name")
    if not isinstance(q, str) or not (q.startswith("llama_index.") or q.startswith("workflows.")):
        return None
    name = q.rsplit(".", 1)[-1]
    return name if name in _EVENTS else None


def is_source(obj: Any) -> bool:
    """True for one serialised agent workflow event or a list of them (at least one a tool or
    agent event)."""
    obj = as_plain(obj)
    if is_seq(obj):
        return bool(obj) and all(_kind(x) is not None for x in obj)
    return _kind(obj) is not None


def _text(msg: Any) -> str | None:
    m = mapping(as_plain(msg))
    blocks = m.get("blocks")
    if is_seq(blocks):
        t = text_of([b for b in blocks if isinstance(b, Mapping) and b.get("block_type") == "text"])
        if t is not None:
            return t
    return text_of(m.get("content"))


def _run(events: list[tuple[str, Mapping[str, Any]]], problems: list[str]) -> Trajectory:
    sl = StepList()
    announced: set[str] = set()
    user_seen = False
    answered = False
    for i, (kind, v) in enumerate(events):
        w = f"events[{i}] ({kind})"
        agent = v.get("current_agent_name") if isinstance(v.get("current_agent_name"), str) else None
        if kind == "AgentInput" and not user_seen:
            users = [m for m in (v.get("input") or []) if mapping(as_plain(m)).get("role") == "user"]
            if users:
                sl.add("user", content=_text(users[-1]))
                user_seen = True
        elif kind == "AgentOutput":
            text = _text(v.get("response"))
            calls = []
            for j, tc in enumerate(v.get("tool_calls") or []):
                tc = mapping(as_plain(tc))
                args, raw, err = parse_args(tc.get("tool_kwargs"), problems, f"{w}.tool_calls[{j}]")
                cid = None if tc.get("tool_id") is None else str(tc["tool_id"])
                if cid:
                    announced.add(cid)
                calls.append(ToolCall(name=str(tc.get("tool_name") or ""), args=args, call_id=cid, raw_args=raw,
                                      args_parse_error=err, tool_type="function"))
            if calls:
                sl.call(calls, content=text, agent_name=agent)
            elif text is not None:
                sl.add("assistant", content=text, agent_name=agent)
                answered = True
        elif kind == "ToolCall":
            cid = None if v.get("tool_id") is None else str(v["tool_id"])
            if cid is None or cid not in announced:
                args, raw, err = parse_args(v.get("tool_kwargs"), problems, w)
                sl.call([ToolCall(name=str(v.get("tool_name") or ""), args=args, call_id=cid, raw_args=raw,
                                  args_parse_error=err, tool_type="function")], agent_name=agent)
                if cid:
                    announced.add(cid)
        elif kind == "ToolCallResult":
            out = mapping(as_plain(v.get("tool_output")))
            text = _text(out)
            output = text if text is not None else out.get("raw_output")
            is_err = out.get("is_error") if isinstance(out.get("is_error"), bool) else None
            sl.result(ToolResult(call_id=None if v.get("tool_id") is None else str(v["tool_id"]),
                                 name=v.get("tool_name") if isinstance(v.get("tool_name"), str) else None,
                                 output=output, is_error=is_err,
                                 error=output if is_err and isinstance(output, str) else None), agent_name=agent)
        elif kind == "StopEvent" and not answered:
            text = _text(mapping(as_plain(v.get("result"))).get("response"))
            if text is not None:
                sl.add("assistant", content=text)
    steps, final = finalize(sl.steps)
    meta: dict[str, Any] = {"problems": list(problems)} if problems else {}
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps), source_format=FORMAT,
                      metadata=meta)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per run of the events in ``objs`` (module docstring). Raises
    ``TraceFormatError`` when no event is there."""
    flat: list[Any] = []
    for o in objs:
        o = as_plain(o)
        flat.extend(o if is_seq(o) else [o])
    runs: list[list[tuple[str, Mapping[str, Any]]]] = [[]]
    for o in flat:
        kind = _kind(o)
        if kind is None:
            continue
        runs[-1].append((kind, as_plain(o)["value"]))
        if kind == "StopEvent":
            runs.append([])
    runs = [r for r in runs if r]
    if not runs:
        raise TraceFormatError(f"{FORMAT}: no LlamaIndex workflow events")
    out = []
    for r in runs:
        problems: list[str] = []
        out.append(_run(r, problems))
    return out


def read(obj: Any) -> Trajectory:
    """The first run of ``obj`` (an event or a list of events); see ``read_all``."""
    return read_all([obj])[0]


__all__ = ["FORMAT", "is_source", "read", "read_all"]
