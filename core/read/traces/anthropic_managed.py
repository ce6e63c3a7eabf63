"""Reader for Anthropic Managed Agents session event streams (``client.beta.sessions.events``).

Accepted: a list of session events (``{"type": "agent.custom_tool_use", "id": "sevt_...",
...}``), an ``events.list`` page (``{"data": [events]}``), or a recording of SDK calls, one
``[method, payload]`` pair per JSONL line (``["client.beta.sessions.events.stream", event]``,
``["client.beta.sessions.create", session]``, ``["client.beta.sessions.events.send",
[session_id, {"events": [...]}]]``). In a recording the streamed / listed events are read and
the ``send`` calls are skipped, since the stream echoes every event that was sent. One run
per session (the session named by the latest ``create`` / ``retrieve`` / ``send`` before the
events; one run when no session is named).

Event mapping (Managed Agents "events and streaming" documentation):

- ``user.message`` -> a ``user`` step; ``agent.message`` -> assistant text; ``agent.thinking``
  -> a ``reasoning`` step.
- ``agent.custom_tool_use`` / ``agent.tool_use`` / ``agent.mcp_tool_use`` (``id``, ``name``,
  ``input``) -> a call whose id is the event id (``tool_type`` ``custom``, ``server``,
  ``mcp``); ``user.custom_tool_result`` (``custom_tool_use_id``), ``agent.tool_result``
  (``tool_use_id``), ``agent.mcp_tool_result`` (``mcp_tool_use_id``) -> its result, failed
  when ``is_error`` is true.
- ``span.model_request_start`` ... ``span.model_request_end`` brackets one model call: the
  calls and text between them are one step (parallel calls stay together), and the end
  event's ``model_usage`` is that step's usage, once per model call. Input tokens include
  cache reads and writes (as for Anthropic Messages). Without span events, consecutive tool
  uses with no result between them are one step.
- ``session.error`` is recorded as a problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    mark_last_reply,
    sum_usage,
    text_of,
    to_int,
    to_unix_seconds,
    usage_or_none,
)

FORMAT = "anthropic_managed"
_DOMAINS = ("user.", "agent.", "session.", "span.")
_USES = {"agent.custom_tool_use": "custom", "agent.tool_use": "server", "agent.mcp_tool_use": "mcp"}
_RESULTS = {"user.custom_tool_result": "custom_tool_use_id", "agent.tool_result": "tool_use_id",
            "agent.mcp_tool_result": "mcp_tool_use_id"}
_EVENT_METHODS = (".events.stream", ".events.list", ".events.retrieve")


def _is_event(x: Any) -> bool:
    return isinstance(x, Mapping) and isinstance(x.get("type"), str) and x["type"].startswith(_DOMAINS) \
        and "role" not in x


def _is_call_record(x: Any) -> bool:
    return is_seq(x) and len(x) == 2 and isinstance(x[0], str) and x[0].startswith("client.beta.sessions")


def is_source(obj: Any) -> bool:
    """True for one recorded ``[method, payload]`` pair of a sessions call, an event list with
    at least one ``user.*`` / ``agent.*`` event, or an ``events.list`` page."""
    obj = as_plain(obj)
    if _is_call_record(obj):
        return True
    if isinstance(obj, Mapping) and "type" not in obj and is_seq(obj.get("data")):
        obj = obj["data"]
    if not is_seq(obj) or not obj:
        return False
    items = [as_plain(x) for x in obj]
    if all(_is_call_record(x) for x in items):
        return True
    return all(_is_event(x) for x in items) and any(x["type"].startswith(("user.", "agent.")) for x in items)


def _sessions(objs: list[Any]) -> list[tuple[str | None, dict[str, Any], list[Mapping[str, Any]]]]:
    """``(session_id, session_object, events)`` per session, in order of first appearance."""
    records: list[Any] = []
    for o in objs:
        o = as_plain(o)
        if _is_call_record(o):
            records.append(o)
            continue
        if isinstance(o, Mapping) and "type" not in o and is_seq(o.get("data")):
            o = o["data"]
        for x in o if is_seq(o) else [o]:
            records.append(as_plain(x))
    streamed = any(_is_call_record(r) and r[0].endswith(_EVENT_METHODS) for r in records)
    out: dict[str | None, tuple[dict[str, Any], list[Mapping[str, Any]]]] = {}
    cur: str | None = None
    for r in records:
        if _is_call_record(r):
            method, payload = r[0], as_plain(r[1])
            if isinstance(payload, Mapping) and payload.get("type") == "session":
                cur = str(payload.get("id")) if payload.get("id") is not None else cur
                out.setdefault(cur, ({}, []))[0].update(payload)
                continue
            if method.endswith(".events.send"):
                if is_seq(payload) and payload and isinstance(payload[0], str):
                    cur = payload[0]
                    out.setdefault(cur, ({}, []))
                if not streamed:  # no echo: the sent events are all there is
                    body = payload[1] if is_seq(payload) and len(payload) > 1 else payload
                    for e in mapping(body).get("events") or ():
                        out.setdefault(cur, ({}, []))[1].append(as_plain(e))
                continue
            if method.endswith(_EVENT_METHODS):
                evs = payload.get("data") if isinstance(payload, Mapping) and "type" not in payload else [payload]
                for e in evs or ():
                    if _is_event(as_plain(e)):
                        out.setdefault(cur, ({}, []))[1].append(as_plain(e))
            continue
        if not _is_event(r):
            raise TraceFormatError(f"{FORMAT}: expected session events or [method, payload] records, "
                                   f"got {type(r).__name__}")
        out.setdefault(cur, ({}, []))[1].append(r)
    return [(sid, sess, evs) for sid, (sess, evs) in out.items() if evs]


def usage_of(mu: Any) -> Usage | None:
    """A ``Usage`` from ``model_usage``; input tokens include cache reads and writes."""
    u = mapping(mu)
    if not u:
        return None
    inp, cr, cw = to_int(u.get("input_tokens")), to_int(u.get("cache_read_input_tokens")), \
        to_int(u.get("cache_creation_input_tokens"))
    total_in = None if inp is None and cr is None and cw is None else (inp or 0) + (cr or 0) + (cw or 0)
    return usage_or_none(Usage(input_tokens=total_in, output_tokens=to_int(u.get("output_tokens")),
                               cache_read_tokens=cr, cache_write_tokens=cw))


def _trajectory(sid: str | None, session: Mapping[str, Any], events: list[Mapping[str, Any]]) -> Trajectory:
    problems: list[str] = []
    sl = StepList()
    model = mapping(mapping(session.get("agent")).get("model")).get("id")
    model = model if isinstance(model, str) else None
    names: dict[str, str] = {}
    turn: dict[str, Any] | None = None
    bracketed = any(e.get("type") == "span.model_request_start" for e in events)

    def new_turn(start: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {"texts": [], "calls": [], "usage": None, "start": start, "end": None, "agent": None}

    def flush() -> None:
        nonlocal turn
        t, turn = turn, None
        if t is None or not (t["texts"] or t["calls"] or t["usage"]):
            return
        kw: dict[str, Any] = {"usage": t["usage"]}
        if model:
            kw["model"] = model
        a = to_unix_seconds(mapping(t["start"]).get("processed_at"))
        b = to_unix_seconds(mapping(t["end"]).get("processed_at"))
        if a is not None:
            kw["start_time"] = a
        if b is not None:
            kw["end_time"] = b
        if a is not None and b is not None:
            kw["latency_ms"] = (b - a) * 1000.0
        if t["agent"]:
            kw["agent_name"] = t["agent"]
        text = "\n".join(t["texts"]) if t["texts"] else None
        if t["calls"]:
            sl.call(t["calls"], content=text, **kw)
        else:
            sl.add("assistant", content=text, **kw)

    for i, e in enumerate(events):
        typ = e["type"]
        w = f"event {i} ({e.get('id') or typ})"
        if typ == "span.model_request_start":
            flush()
            turn = new_turn(e)
        elif typ == "span.model_request_end":
            if turn is None:
                turn = new_turn()
            turn["usage"] = usage_of(e.get("model_usage"))
            turn["end"] = e
            if e.get("is_error"):
                problems.append(f"{w}: model request ended with an error")
            flush()
        elif typ == "user.message":
            flush()
            sl.add("user", content=text_of(e.get("content")))
        elif typ == "agent.message":
            if turn is None or (not bracketed and turn["calls"]):
                flush()
                turn = new_turn()
            txt = text_of(e.get("content"))
            if txt:
                turn["texts"].append(txt)
            turn["agent"] = turn["agent"] or e.get("agent_name")
        elif typ == "agent.thinking":
            if not bracketed:
                flush()
            sl.add("reasoning", content=text_of(e.get("content")) or text_of(e.get("thinking")))
        elif typ in _USES:
            if turn is None:
                turn = new_turn()
            name = e.get("name")
            if not isinstance(name, str) or not name:
                problems.append(f"{w}: field 'name' is missing")
                name = "" if name is None else str(name)
            cid = str(e["id"]) if e.get("id") is not None else None
            inp = e.get("input")
            if isinstance(inp, Mapping):
                args: dict[str, Any] | None = dict(inp)
                err = None
            else:
                problems.append(f"{w}: field 'input' is {'missing' if inp is None else 'not an object'}; "
                                "arguments unknown")
                args, err = None, "arguments not recorded" if inp is None else "arguments are not an object"
            if cid:
                names[cid] = name
            turn["calls"].append(ToolCall(name=name, args=args, call_id=cid, args_parse_error=err,
                                          tool_type=_USES[typ]))
        elif typ in _RESULTS:
            if turn is not None and (turn["calls"] or not bracketed):
                flush()
            cid = e.get(_RESULTS[typ])
            cid = str(cid) if cid is not None else None
            if cid is not None and cid not in names:
                problems.append(f"{w}: '{_RESULTS[typ]}' {cid!r} matches no earlier tool use")
            content = e.get("content")
            out = text_of(content) if is_seq(content) or isinstance(content, str) else content
            failed = bool(e.get("is_error"))
            sl.result(ToolResult(call_id=cid, name=names.get(cid or ""), output=out, is_error=failed,
                                 error=out if failed and isinstance(out, str) else None),
                      start_time=to_unix_seconds(e.get("processed_at")))
        elif typ == "session.error":
            eobj = mapping(e.get("error"))
            problems.append(f"{w}: session error: {eobj.get('message') or eobj.get('type') or e.get('error')}")
    flush()
    steps, final = mark_last_reply(list(sl.steps))
    times = [t for t in (to_unix_seconds(e.get("processed_at")) for e in events) if t is not None]
    meta: dict[str, Any] = {}
    if isinstance(mapping(session.get("agent")).get("name"), str):
        meta["agent_name"] = session["agent"]["name"]
    if problems:
        meta["problems"] = problems
    fs = tuple(steps)
    return Trajectory(steps=fs, final_response=final, total_usage=sum_usage(fs),
                      total_latency_ms=(max(times) - min(times)) * 1000.0 if times else None,
                      source_format=FORMAT, session_id=sid, metadata=meta)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per session over every event or recorded call in ``objs``. Raises
    ``TraceFormatError`` when an item is neither an event nor a recorded sessions call."""
    return [_trajectory(sid, sess, evs) for sid, sess, evs in _sessions(objs)]


def read(obj: Any) -> Trajectory:
    """The events of ``obj`` as one trajectory; raises ``TraceFormatError`` when it holds no
    event or the events of more than one session."""
    trajs = read_all([obj])
    if len(trajs) != 1:
        raise TraceFormatError(f"{FORMAT}: expected the events of one session, found {len(trajs)}")
    return trajs[0]


__all__ = ["FORMAT", "is_source", "read", "read_all", "usage_of"]
