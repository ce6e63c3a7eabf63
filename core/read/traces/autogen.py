"""Reader for AutoGen AgentChat (``autogen-agentchat`` 0.4+): ``TaskResult``, ``run_stream``
events, and saved agent / team state.

Accepted (all as their ``model_dump()`` / ``save_state()`` dicts):

- a ``TaskResult`` ``{messages, stop_reason}``;
- the messages and events ``run`` / ``run_stream`` yield, as a list or one per JSON Lines line
  (``{type, source, models_usage, content, ...}``); the events of one file are one run, and a
  new run starts at a ``user`` message that follows an answer;
- saved state: ``AssistantAgentState`` (its ``llm_context.messages``: ``UserMessage``,
  ``AssistantMessage``, ``FunctionExecutionResultMessage``, ``SystemMessage``), and
  ``TeamState`` (the group chat manager's ``message_thread``, the same messages as a
  ``TaskResult``; else each agent's context in turn).

Messages -> steps: ``TextMessage`` (and the other text messages) from ``user`` -> a ``user``
step, from an agent -> an ``assistant`` step (the last one is the final response);
``ToolCallRequestEvent`` / an ``AssistantMessage`` with ``FunctionCall`` content -> one
``tool_call`` step (the calls the model asked for together, ``arguments`` parsed from JSON);
``ToolCallExecutionEvent`` / ``FunctionExecutionResultMessage`` -> one result step per
``FunctionExecutionResult`` (``call_id``, ``content``, ``is_error``: AutoGen's own error flag);
``ThoughtEvent`` / an ``AssistantMessage.thought`` -> a ``reasoning`` step;
``ToolCallSummaryMessage`` (the tool outputs restated when the agent does not reflect) ->
an ``assistant`` step marked ``metadata.tool_call_summary``, never the final response.
``models_usage`` (``prompt_tokens`` / ``completion_tokens``) is the step's usage; saved
agent state has no usage. Streaming chunks, user-input requests and speaker selections are
not steps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    text_of,
    to_int,
    usage_or_none,
)

FORMAT = "autogen"
_TEXT = {"TextMessage", "StopMessage", "HandoffMessage", "MultiModalMessage", "StructuredMessage"}
_EVENTS = {"ToolCallRequestEvent", "ToolCallExecutionEvent", "ToolCallSummaryMessage", "ThoughtEvent",
           "MemoryQueryEvent", "ModelClientStreamingChunkEvent", "UserInputRequestedEvent", "SelectSpeakerEvent",
           "SelectorEvent", "CodeGenerationEvent", "CodeExecutionEvent"}
_LLM = {"UserMessage", "AssistantMessage", "FunctionExecutionResultMessage", "SystemMessage"}
_STATES = {"AssistantAgentState", "TeamState"}


def _type(x: Any) -> str:
    t = x.get("type") if isinstance(x, Mapping) else None
    return t if isinstance(t, str) else ""


def is_message(x: Any) -> bool:
    """True for one AgentChat message or event dict (a known ``type`` and a ``source``)."""
    x = as_plain(x)
    t = _type(x)
    return isinstance(x, Mapping) and "source" in x and (t in _TEXT or t in _EVENTS or t.startswith("StructuredMessage"))


def is_source(obj: Any) -> bool:
    """True for a ``TaskResult``, a saved agent/team state, or a list of AgentChat messages
    holding a tool-call event."""
    obj = as_plain(obj)
    if isinstance(obj, Mapping):
        if _type(obj) in _STATES:
            return True
        msgs = obj.get("messages")
        return "stop_reason" in obj and is_seq(msgs) and bool(msgs) and all(is_message(m) for m in msgs)
    if is_seq(obj) and obj:
        items = [as_plain(x) for x in obj]
        return all(is_message(x) for x in items) and any(_type(x).startswith("ToolCall") for x in items)
    return False


def _usage(u: Any) -> Usage | None:
    u = mapping(as_plain(u))
    return usage_or_none(Usage(input_tokens=to_int(u.get("prompt_tokens")), output_tokens=to_int(u.get("completion_tokens"))))


def _calls(content: Any, problems: list[str], w: str) -> list[ToolCall]:
    out: list[ToolCall] = []
    for j, fc in enumerate(content if is_seq(content) else ()):
        fc = as_plain(fc)
        if not isinstance(fc, Mapping):
            problems.append(f"{w}.content[{j}]: not a FunctionCall; skipped")
            continue
        nm = fc.get("name")
        name = nm if isinstance(nm, str) else ""
        if not name:
            problems.append(f"{w}.content[{j}]: call has no name")
        args, raw, err = parse_args(fc.get("arguments"), problems, f"{w}.content[{j}] ({name})")
        out.append(ToolCall(name=name, args=args, call_id=None if fc.get("id") is None else str(fc["id"]),
                            raw_args=raw, args_parse_error=err))
    return out


def _results(sl: StepList, content: Any, agent: str | None) -> None:
    for r in content if is_seq(content) else ():
        r = as_plain(r)
        if not isinstance(r, Mapping):
            continue
        err = r.get("is_error")
        out = r.get("content")
        sl.result(ToolResult(call_id=None if r.get("call_id") is None else str(r["call_id"]), name=r.get("name"),
                             output=out, is_error=err if isinstance(err, bool) else None,
                             error=str(out).split("\n")[0] if err is True else None), agent_name=agent)


def _text(m: Mapping[str, Any]) -> str | None:
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, Mapping):  # StructuredMessage
        return json.dumps(c, ensure_ascii=False)
    return text_of(c)


def _messages(sl: StepList, msgs: list[Any], problems: list[str], w: str) -> None:
    """AgentChat messages and events (TaskResult, run_stream, a manager's message thread)."""
    for i, raw in enumerate(msgs):
        m = as_plain(raw)
        loc = f"{w}[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{loc}: not an object; skipped")
            continue
        t, src = _type(m), m.get("source")
        agent = src if isinstance(src, str) and src != "user" else None
        usage = _usage(m.get("models_usage"))
        if t == "ToolCallRequestEvent":
            sl.call(_calls(m.get("content"), problems, loc), usage=usage, agent_name=agent)
        elif t == "ToolCallExecutionEvent":
            _results(sl, m.get("content"), agent)
        elif t == "ThoughtEvent":
            sl.add("reasoning", content=_text(m), usage=usage, agent_name=agent)
        elif t == "ToolCallSummaryMessage":
            sl.add("assistant", content=_text(m), usage=usage, agent_name=agent, metadata={"tool_call_summary": True})
        elif t in _TEXT or t.startswith("StructuredMessage"):
            if src == "user":
                sl.add("user", content=_text(m))
            else:
                meta = {"handoff_to": m["target"]} if t == "HandoffMessage" and m.get("target") else {}
                sl.add("assistant", content=_text(m), usage=usage, agent_name=agent, metadata=meta)
        elif t not in _EVENTS:
            problems.append(f"{loc}: message type {t!r} not read")


def _llm_context(sl: StepList, msgs: list[Any], problems: list[str], w: str) -> None:
    """A model context's messages (saved ``AssistantAgentState``)."""
    for i, raw in enumerate(msgs):
        m = as_plain(raw)
        loc = f"{w}[{i}]"
        t = _type(m)
        if not isinstance(m, Mapping) or t not in _LLM:
            problems.append(f"{loc}: not a model context message; skipped")
            continue
        src = m.get("source")
        agent = src if isinstance(src, str) and src != "user" else None
        c = m.get("content")
        if t == "SystemMessage":
            sl.add("system", content=text_of(c))
        elif t == "UserMessage":
            sl.add("user", content=text_of(c))
        elif t == "FunctionExecutionResultMessage":
            _results(sl, c, None)
        elif is_seq(c) and c and all(isinstance(as_plain(x), Mapping) and "arguments" in as_plain(x) for x in c):
            if isinstance(m.get("thought"), str) and m["thought"]:
                sl.add("reasoning", content=m["thought"], agent_name=agent)
            sl.call(_calls(c, problems, loc), agent_name=agent)
        else:
            sl.add("assistant", content=text_of(c), agent_name=agent)


def _finish(sl: StepList, problems: list[str], meta: dict[str, Any]) -> Trajectory:
    steps = list(sl.steps)
    final = None
    for k in range(len(steps) - 1, -1, -1):
        s = steps[k]
        if s.kind == "assistant" and s.content and not s.metadata.get("tool_call_summary"):
            if all(x.kind in ("assistant", "reasoning") for x in steps[k + 1:]):
                steps[k] = replace(s, kind="final_response")
                final = s.content
            break
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=tuple(steps), final_response=final, total_usage=sum_usage(steps), source_format=FORMAT,
                      metadata=meta)


def _state(sl: StepList, st: Mapping[str, Any], problems: list[str], meta: dict[str, Any]) -> None:
    if _type(st) == "AssistantAgentState":
        _llm_context(sl, list(mapping(st.get("llm_context")).get("messages") or ()), problems, "llm_context.messages")
        return
    agents = mapping(st.get("agent_states"))
    thread = next((v.get("message_thread") for v in agents.values()
                   if isinstance(v, Mapping) and is_seq(v.get("message_thread"))), None)
    if thread is not None:
        meta["read_from"] = "group chat manager message_thread"
        _messages(sl, list(thread), problems, "message_thread")
        return
    for name, v in agents.items():
        inner = mapping(mapping(v).get("agent_state"))
        if _type(inner) == "AssistantAgentState":
            _llm_context(sl, list(mapping(inner.get("llm_context")).get("messages") or ()), problems,
                         f"agent_states.{name}.llm_context.messages")


def read(obj: Any) -> Trajectory:
    """Read a ``TaskResult``, saved state or a list of AgentChat messages into a ``Trajectory``.

    Raises ``TraceFormatError`` for anything else.
    """
    plain = as_plain(obj) if not is_seq(obj) else [as_plain(x) for x in obj]
    problems: list[str] = []
    meta: dict[str, Any] = {}
    sl = StepList()
    if isinstance(plain, Mapping) and _type(plain) in _STATES:
        meta["autogen_state"] = _type(plain)
        _state(sl, plain, problems, meta)
    elif isinstance(plain, Mapping) and is_seq(plain.get("messages")):
        _messages(sl, list(plain["messages"]), problems, "messages")
        if plain.get("stop_reason") is not None:
            meta["stop_reason"] = plain["stop_reason"]
    elif is_seq(plain) and all(is_message(x) for x in plain):
        _messages(sl, list(plain), problems, "messages")
    else:
        raise TraceFormatError(f"{FORMAT}: expected a TaskResult, a saved agent/team state or AgentChat messages")
    return _finish(sl, problems, meta)


def split_runs(msgs: list[Any]) -> list[list[Any]]:
    """The runs of a stream of AgentChat messages: a new run starts at a ``user`` text message
    that follows an agent's text answer."""
    runs: list[list[Any]] = [[]]
    answered = False
    for m in msgs:
        p = as_plain(m)
        t = _type(p)
        if t in _TEXT and p.get("source") == "user" and answered:
            runs.append([])
            answered = False
        runs[-1].append(p)
        if t in _TEXT and p.get("source") != "user":
            answered = True
    return [r for r in runs if r]


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per ``TaskResult`` / state in ``objs``; loose messages (JSON Lines of
    ``run_stream`` events) are read together, one run per ``split_runs`` group."""
    out: list[Trajectory] = []
    loose: list[Any] = []
    for o in objs:
        p = as_plain(o)
        if isinstance(p, Mapping) and not is_message(p):
            out.append(read(p))
        elif is_seq(p):
            loose.extend(p)
        else:
            loose.append(p)
    runs = split_runs(loose)
    out.extend(replace(t, metadata={**t.metadata, "grouped_by": "task (a user message after an answer)"})
               if len(loose) > 1 else t for t in (read(r) for r in runs))
    return out


__all__ = ["FORMAT", "is_message", "is_source", "read", "read_all", "split_runs"]
