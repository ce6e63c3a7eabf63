"""Reader for LangChain ``astream_events`` output (``version="v2"``; v1 events read the same).

Accepted: the events as a list or one per JSON Lines line, each ``{event, name, run_id,
parent_ids, data, ...}`` with ``data`` as the stream gives it (messages as objects, or dumped
with ``langchain_core.load.dumpd`` -- ``{lc, type: constructor, id, kwargs}`` -- or
``model_dump``). Events are grouped into one run per root run: ``parent_ids[0]``, or the
event's own ``run_id`` when it has no parents.

Events -> steps, in stream order (v2 events carry no times): ``on_chat_model_end`` is a model
turn (its ``output`` message: text, ``tool_calls`` ``{name, args, id}``, ``usage_metadata``);
``on_tool_end`` an executed call (``input`` = the arguments; ``output`` a ``ToolMessage`` -- its
``content``, ``tool_call_id`` and ``status`` ``"error"`` = failed -- or a plain value);
``on_tool_error`` a failed call (``error`` text). The tools run after a model turn are that
turn's one ``tool_call`` step, ordered as the model asked (``_turns``). The user's request is
the root chain's string input, else the first human message a chat model was given; the final
answer the last model turn that asked for no tool, else the root chain's string output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._turns import ModelTurn, ToolRun, build, mark_final
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

FORMAT = "langchain_events"
_READ = ("on_chat_model_end", "on_tool_end", "on_tool_error")


def is_event(x: Any) -> bool:
    """True for one ``astream_events`` event (``event`` ``on_*``, a ``run_id`` and ``data``)."""
    return (isinstance(x, Mapping) and isinstance(x.get("event"), str) and x["event"].startswith("on_")
            and "run_id" in x and isinstance(x.get("data"), Mapping))


def is_source(obj: Any) -> bool:
    """True for one event or a list of events with at least one model or tool end."""
    obj = as_plain(obj)
    if isinstance(obj, Mapping):
        return is_event(obj)
    if is_seq(obj) and obj:
        items = [as_plain(x) for x in obj]
        return all(is_event(x) for x in items) and any(x["event"] in _READ for x in items)
    return False


def _msg(m: Any) -> Mapping[str, Any]:
    """A message as a flat dict: ``dumpd``'s kwargs, a ``model_dump``, or the object dumped."""
    m = as_plain(m)
    if isinstance(m, Mapping) and m.get("lc") == 1 and isinstance(m.get("kwargs"), Mapping):
        return m["kwargs"]
    return m if isinstance(m, Mapping) else {}


def _usage(u: Any) -> Usage | None:
    u = mapping(u)
    det_in, det_out = mapping(u.get("input_token_details")), mapping(u.get("output_token_details"))
    return usage_or_none(Usage(input_tokens=to_int(u.get("input_tokens")), output_tokens=to_int(u.get("output_tokens")),
                               total_tokens=to_int(u.get("total_tokens")),
                               cache_read_tokens=to_int(det_in.get("cache_read")),
                               reasoning_tokens=to_int(det_out.get("reasoning"))))


def _turn(ev: Mapping[str, Any], problems: list[str], w: str) -> ModelTurn:
    out = ev["data"].get("output")
    gens = mapping(as_plain(out)).get("generations")
    if is_seq(gens) and gens and is_seq(gens[0]) and gens[0]:  # an LLMResult
        out = mapping(gens[0][0]).get("message")
    m = _msg(out)
    calls: list[ToolCall] = []
    for j, tc in enumerate(m.get("tool_calls") or ()):
        tc = as_plain(tc)
        if not isinstance(tc, Mapping):
            continue
        nm = tc.get("name")
        name = nm if isinstance(nm, str) else ""
        if not name:
            problems.append(f"{w}.tool_calls[{j}]: call has no name")
        args, raw, err = parse_args(tc.get("args"), problems, f"{w}.tool_calls[{j}] ({name})")
        calls.append(ToolCall(name=name, args=args, call_id=None if tc.get("id") is None else str(tc["id"]),
                              raw_args=raw, args_parse_error=err))
    meta = mapping(m.get("response_metadata"))
    model = meta.get("model_name") or meta.get("model")
    return ModelTurn(content=text_of(m.get("content")) or None, requested=calls, requested_any=bool(calls),
                     usage=_usage(m.get("usage_metadata")), model=model if isinstance(model, str) else None,
                     span_id=str(ev.get("run_id")))


def _tool(ev: Mapping[str, Any], problems: list[str], w: str) -> ToolRun:
    data = ev["data"]
    nm = ev.get("name")
    name = nm if isinstance(nm, str) else ""
    inp = as_plain(data.get("input"))
    if isinstance(inp, Mapping) and set(inp) >= {"args", "name"} and inp.get("type") == "tool_call":
        inp = inp["args"]  # the tool was invoked with its ToolCall
    err: str | None = "no arguments recorded"
    args: dict[str, Any] | None = None
    raw: str | None = None
    if inp is None:
        problems.append(f"{w}: tool event has no input; arguments unknown")
    else:
        args, raw, err = parse_args(inp, problems, f"{w} ({name})")
    cid = None
    if ev["event"] == "on_tool_error":
        out: Any = str(data.get("error"))
        failed = True
    else:
        m = _msg(data.get("output"))
        if m.get("type") == "tool" or "tool_call_id" in m:
            out, failed = m.get("content"), m.get("status") == "error"
            cid = None if m.get("tool_call_id") is None else str(m["tool_call_id"])
        else:
            out, failed = as_plain(data.get("output")), False
    return ToolRun(call=ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err),
                   result=ToolResult(call_id=cid, name=name, output=out, is_error=failed,
                                     error=str(out).split("\n")[0] if failed else None),
                   span_id=str(ev.get("run_id")))


def _first_human(ev: Mapping[str, Any]) -> str | None:
    msgs = mapping(ev["data"].get("input")).get("messages")
    for batch in msgs if is_seq(msgs) else ():
        for m in batch if is_seq(batch) else [batch]:
            mm = _msg(m)
            if mm.get("type") == "human" or mm.get("role") == "user":
                return text_of(mm.get("content"))
    return None


def read(obj: Any) -> Trajectory:
    """The events of ``obj`` (a list, or one event) as one trajectory.

    Raises ``TraceFormatError`` when ``obj`` holds no ``astream_events`` event.
    """
    items = [as_plain(x) for x in obj] if is_seq(obj) else [as_plain(obj)]
    if not items or not all(is_event(x) for x in items):
        raise TraceFormatError(f"{FORMAT}: expected LangChain astream_events events ({{event, run_id, data}})")
    problems: list[str] = []
    events: list[ModelTurn | ToolRun] = []
    user = final_out = None
    for i, ev in enumerate(items):
        kind = ev["event"]
        w = f"event {i} ({kind} {ev.get('name')})"
        root = not ev.get("parent_ids")
        if kind == "on_chain_start" and root and isinstance(ev["data"].get("input"), str):
            user = user or ev["data"]["input"]
        elif kind == "on_chain_end" and root and isinstance(ev["data"].get("output"), str):
            final_out = ev["data"]["output"]
        elif kind == "on_chat_model_start" and user is None:
            user = _first_human(ev)
        elif kind == "on_chat_model_end":
            events.append(_turn(ev, problems, w))
        elif kind in ("on_tool_end", "on_tool_error"):
            events.append(_tool(ev, problems, w))
    sl = StepList()
    if user:
        sl.add("user", content=user)
    build(events, sl)
    steps, final = mark_final(sl.steps)
    if final is None and final_out:
        final = final_out
    meta: dict[str, Any] = {"problems": problems} if problems else {}
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps), source_format=FORMAT,
                      trace_id=_root(items[0]), metadata=meta)


def _root(ev: Mapping[str, Any]) -> str | None:
    p = ev.get("parent_ids")
    r = p[0] if is_seq(p) and p else ev.get("run_id")
    return None if r is None else str(r)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per root run over the events of ``objs`` (lists or single events), in
    order of first appearance."""
    groups: dict[str | None, list[Any]] = {}
    for o in objs:
        for ev in (o if is_seq(o) else [o]):
            ev = as_plain(ev)
            if not is_event(ev):
                raise TraceFormatError(f"{FORMAT}: expected astream_events events, got {type(ev).__name__}")
            groups.setdefault(_root(ev), []).append(ev)
    return [replace(t, metadata={**t.metadata, "grouped_by": "root run"}) for t in
            (read(g) for g in groups.values() if any(e["event"] in _READ for e in g))]


__all__ = ["FORMAT", "is_event", "is_source", "read", "read_all"]
