"""Reader for AG2 (the AutoGen 0.2 line, ``import autogen``) chat histories kept as JSON Lines.

Two layouts, each grouped into one run per conversation:

- one ``ChatResult`` per line or item (``dataclasses.asdict(result)``: ``chat_id``,
  ``chat_history``, ``summary``, ``cost``, ``human_input``): a run per result;
- one ``chat_history`` message per line, each carrying its conversation's ``chat_id``: the
  messages of one ``chat_id`` are one run (in order of each conversation's first message), so
  interleaved conversations are still apart;
- AG2's own runtime log to a file (``autogen.runtime_logging``, ``ag2_runtime``): its
  ``received_message`` events, a run ending where the chat terminates.

A chat history is seen from the initiating agent (``initiate_chat``): its own messages have
role ``assistant`` and the other agent's ``user``, so roles say nothing about who is the agent
under test. Read here: the first message is the user's request; a message with ``tool_calls``
(OpenAI ``function`` items) is one call step (parallel calls stay together); a ``tool`` message's
``tool_responses`` are the results, joined by ``tool_call_id``; a text message from the
initiator's ``name`` is a user turn, any other text an assistant turn, the last one the final
answer (else ``summary``).

Usage: ``cost.usage_including_cached_inference`` (each model's ``prompt_tokens`` /
``completion_tokens``, summed over models; ``total_cost`` is the run's cost). A message per
line carries none. AG2 has no error flag: a raising tool's response reads ``"Error: ..."``,
kept as text with ``is_error`` unknown (``--error-pattern '^Error: '`` marks them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolResult, Trajectory, Usage
from . import ag2_runtime
from ._util import StepList, as_plain, finalize, is_seq, mapping, to_float, to_int, usage_or_none
from .messages import openai_calls

FORMAT = "ag2_chats"
GROUPED_BY = "chat_id"
_MSG_KEYS = ("content", "tool_calls", "tool_responses", "function_call")


def is_chat_result(obj: Any) -> bool:
    """True for a ``ChatResult`` dump: a ``chat_history`` list with ``chat_id`` or ``cost``."""
    return (isinstance(obj, Mapping) and is_seq(obj.get("chat_history"))
            and ("chat_id" in obj or isinstance(obj.get("cost"), Mapping)))


def is_message(obj: Any) -> bool:
    """True for one chat-history message carrying its conversation's ``chat_id``."""
    return (isinstance(obj, Mapping) and obj.get("chat_id") is not None and isinstance(obj.get("role"), str)
            and any(k in obj for k in _MSG_KEYS))


def is_source(obj: Any) -> bool:
    """True for a ``ChatResult`` dump, a ``chat_id`` message, a record of AG2's file runtime
    log (``ag2_runtime``), or a list of them."""
    obj = as_plain(obj)
    if is_seq(obj):
        items = [as_plain(x) for x in obj]
        return bool(items) and all(is_chat_result(x) or is_message(x) or ag2_runtime.is_record(x) for x in items)
    return is_chat_result(obj) or is_message(obj) or ag2_runtime.is_record(obj)


def _usage(cost: Any, problems: list[str], where: str) -> tuple[Usage | None, float | None]:
    inc = mapping(mapping(cost).get("usage_including_cached_inference"))
    tin = tout = tot = None
    for model, u in inc.items():
        if model == "total_cost" or not isinstance(u, Mapping):
            continue
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            if u.get(key) is not None and to_int(u.get(key)) is None:
                problems.append(f"{where}.cost.usage_including_cached_inference.{model}.{key}: "
                                f"not a count ({u.get(key)!r}); ignored")
        p, c, t = to_int(u.get("prompt_tokens")), to_int(u.get("completion_tokens")), to_int(u.get("total_tokens"))
        tin = tin if p is None else (tin or 0) + p
        tout = tout if c is None else (tout or 0) + c
        tot = tot if t is None else (tot or 0) + t
    return usage_or_none(Usage(input_tokens=tin, output_tokens=tout, total_tokens=tot)), to_float(inc.get("total_cost"))


def _conversation(msgs: list[tuple[Any, str]], problems: list[str]) -> tuple[StepList, str | None]:
    """Steps of one chat history (``(message, where)`` pairs); returns them and the initiator."""
    sl = StepList()
    first = mapping(as_plain(msgs[0][0])) if msgs else {}
    initiator = first.get("name") if isinstance(first.get("name"), str) else None
    for i, (m, w) in enumerate(msgs):
        m = as_plain(m)
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not a message object; ignored")
            continue
        name = m.get("name") if isinstance(m.get("name"), str) else None
        text = m.get("content") if isinstance(m.get("content"), str) else None
        if m.get("tool_calls") or m.get("function_call"):
            calls = openai_calls(m, problems, w)
            sl.call(calls, content=text or None, agent_name=name)
        elif is_seq(m.get("tool_responses")):
            for j, r in enumerate(m["tool_responses"]):
                r = as_plain(r)
                if not isinstance(r, Mapping):
                    problems.append(f"{w}.tool_responses[{j}]: not an object; ignored")
                    continue
                cid = r.get("tool_call_id")
                sl.result(ToolResult(call_id=None if cid is None else str(cid), name=None,
                                     output=r.get("content"), is_error=None), agent_name=name)
        elif m.get("role") == "tool" or m.get("role") == "function":
            sl.result(ToolResult(call_id=None, name=name, output=m.get("content"), is_error=None))
        elif i == 0 or (initiator is not None and name == initiator):
            sl.add("user", content=text, agent_name=name)
        elif text is not None:
            sl.add("assistant", content=text, agent_name=name)
    return sl, initiator


def _run(msgs: list[tuple[Any, str]], meta: dict[str, Any], usage: Usage | None, cost: float | None,
         summary: Any, problems: list[str]) -> Trajectory:
    sl, initiator = _conversation(msgs, problems)
    steps, final = finalize(sl.steps)
    if final is None and isinstance(summary, str) and summary:
        final = summary
    if initiator:
        meta["initiator"] = initiator
    if problems:
        meta["problems"] = list(problems)
    return Trajectory(steps=steps, final_response=final, total_usage=usage, total_cost_usd=cost,
                      source_format=FORMAT, session_id=meta.get("chat_id"), metadata=meta)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per conversation of ``objs`` (``ChatResult`` dumps and ``chat_id``
    messages, or lists of them; module docstring).

    Raises:
        TraceFormatError: when no ``ChatResult`` or ``chat_id`` message is there.
    """
    flat: list[tuple[Any, str]] = []
    for i, o in enumerate(objs):
        o = as_plain(o)
        if is_seq(o):
            flat.extend((x, f"item {i}[{j}]") for j, x in enumerate(o))
        else:
            flat.append((o, f"item {i}"))
    out: list[Trajectory] = []
    groups: dict[str, list[tuple[Any, str]]] = {}
    order: list[tuple[str, Any]] = []  # ("result", obj), ("chat", chat_id), ("runtime", None): first seen
    runtime: list[tuple[Any, str]] = []
    for o, w in flat:
        o = as_plain(o)
        if is_chat_result(o):
            order.append(("result", (o, w)))
        elif is_message(o):
            key = str(o["chat_id"])
            if key not in groups:
                groups[key] = []
                order.append(("chat", key))
            groups[key].append((o, w))
        elif ag2_runtime.is_record(o):
            if ("runtime", None) not in order:
                order.append(("runtime", None))
            runtime.append((o, w))
    if not order:
        raise TraceFormatError(f"{FORMAT}: no AG2 ChatResult or chat_id message")
    for kind, x in order:
        problems: list[str] = []
        if kind == "result":
            o, w = x
            hist = [(m, f"{w}.chat_history[{j}]") for j, m in enumerate(o["chat_history"])]
            usage, cost = _usage(o.get("cost"), problems, w)
            meta: dict[str, Any] = {"grouped_by": "ChatResult"}
            if o.get("chat_id") is not None:
                meta["chat_id"] = str(o["chat_id"])
            out.append(_run(hist, meta, usage, cost, o.get("summary"), problems))
        elif kind == "chat":
            out.append(_run(groups[x], {"grouped_by": GROUPED_BY, "chat_id": x}, None, None, None, problems))
        else:
            for msgs, usage in ag2_runtime.conversations(runtime):
                out.append(_run(msgs, {"grouped_by": "runtime log termination"}, usage, None, None, []))
    return out


def read(obj: Any) -> Trajectory:
    """The first conversation of ``obj`` (see ``read_all``)."""
    return read_all([obj])[0]


__all__ = ["FORMAT", "is_source", "read", "read_all"]
