"""Reader for LiteLLM's standard logging payload (``StandardLoggingPayload``: what
``kwargs["standard_logging_object"]`` holds in a ``CustomLogger`` callback, and what LiteLLM's
proxy loggers write), one record per model call, as a list or JSON Lines.

Grouping into runs (one record is one model call, never a run): records of one ``trace_id``
are one run (LiteLLM sets it from ``litellm_trace_id``, or from ``litellm_session_id`` when
that is given); a record whose ``trace_id`` no other record shares continues the run whose last
call it follows -- its ``messages`` begin with that call's ``messages`` and response -- else it
starts a run of its own (keyed ``session_id`` when set). ``inspect`` names the grouping.

Per record, in ``startTime`` order: a model turn with the response's text and ``tool_calls``
(``choices[0].message``), ``prompt_tokens`` / ``completion_tokens`` as usage,
``response_cost`` (USD), ``model``, times (unix seconds). LiteLLM logs model calls only: a
call's result is the ``tool`` message of a later call's ``messages`` (joined by
``tool_call_id``), so results have no error flag (``is_error`` None; see ``--error-pattern``).
A record with ``status`` ``failure`` is a problem naming its ``error_str``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._turns import ModelTurn, build, mark_final
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    text_of,
    to_float,
    to_int,
    usage_or_none,
)

FORMAT = "litellm"


def is_payload(x: Any) -> bool:
    """True for one standard logging payload (``call_type``, ``trace_id``, ``messages``,
    ``response`` and one of LiteLLM's own keys)."""
    return isinstance(x, Mapping) and all(k in x for k in ("call_type", "trace_id", "messages", "response")) and any(
        k in x for k in ("model_map_information", "hidden_params", "status_fields", "response_cost"))


def is_source(obj: Any) -> bool:
    """True for one payload or a list of them."""
    obj = as_plain(obj)
    if is_seq(obj):
        return bool(obj) and all(is_payload(as_plain(x)) for x in obj)
    return is_payload(obj)


def _message(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    ch = mapping(as_plain(rec.get("response"))).get("choices")
    return mapping(mapping(ch[0]).get("message")) if is_seq(ch) and ch else {}


def _continues(prev: Mapping[str, Any], rec: Mapping[str, Any]) -> bool:
    """True when ``rec``'s prompt is ``prev``'s prompt plus ``prev``'s response (and more)."""
    pm, rm = prev.get("messages"), rec.get("messages")
    if not (is_seq(pm) and is_seq(rm)) or len(rm) <= len(pm) or list(rm[:len(pm)]) != list(pm):
        return False
    nxt, resp = mapping(rm[len(pm)]), _message(prev)
    ids = [mapping(tc).get("id") for tc in resp.get("tool_calls") or ()]
    got = [mapping(tc).get("id") for tc in nxt.get("tool_calls") or ()]
    return nxt.get("role") == "assistant" and (ids == got if ids else text_of(nxt.get("content")) ==
                                               text_of(resp.get("content")))


def group(recs: list[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """The records grouped into runs (module docstring), each ``(key, records in start order)``."""
    recs = sorted(recs, key=lambda r: to_float(r.get("startTime")) or 0.0)
    counts: dict[str, int] = {}
    for r in recs:
        counts[str(r.get("trace_id") or "")] = counts.get(str(r.get("trace_id") or ""), 0) + 1
    runs: dict[str, list[Mapping[str, Any]]] = {}
    for r in recs:
        tid = str(r.get("trace_id") or "")
        if tid and counts[tid] > 1:
            runs.setdefault(tid, []).append(r)
            continue
        prev = next((k for k, g in runs.items() if _continues(g[-1], r)), None)
        key = prev or str(r.get("session_id") or "") or tid or str(r.get("id"))
        runs.setdefault(key, []).append(r)
    return list(runs.items())


def _turn(rec: Mapping[str, Any], problems: list[str], w: str) -> ModelTurn:
    m = _message(rec)
    calls: list[ToolCall] = []
    for j, tc in enumerate(m.get("tool_calls") or ()):
        fn = mapping(mapping(tc).get("function"))
        nm = fn.get("name")
        name = nm if isinstance(nm, str) else ""
        if not name:
            problems.append(f"{w}.tool_calls[{j}]: call has no name")
        args, raw, err = parse_args(fn.get("arguments"), problems, f"{w}.tool_calls[{j}] ({name})")
        cid = mapping(tc).get("id")
        calls.append(ToolCall(name=name, args=args, call_id=None if cid is None else str(cid), raw_args=raw,
                              args_parse_error=err))
    results = [ToolResult(call_id=None if x.get("tool_call_id") is None else str(x["tool_call_id"]), name=x.get("name"),
                          output=x.get("content"))
               for x in (mapping(y) for y in _messages(rec)) if x.get("role") == "tool"]
    s, e = to_float(rec.get("startTime")), to_float(rec.get("endTime"))
    if rec.get("status") == "failure":
        problems.append(f"{w}: the model call failed: {str(rec.get('error_str'))[:200]}")
    model = rec.get("model")
    return ModelTurn(content=text_of(m.get("content")) or None, requested=calls, requested_any=bool(calls),
                     input_results=results,
                     usage=usage_or_none(Usage(input_tokens=to_int(rec.get("prompt_tokens")),
                                               output_tokens=to_int(rec.get("completion_tokens")),
                                               total_tokens=to_int(rec.get("total_tokens")))),
                     cost_usd=to_float(rec.get("response_cost")), model=model if isinstance(model, str) else None,
                     start=s, end=e, latency_ms=(e - s) * 1000.0 if s is not None and e is not None else None,
                     span_id=None if rec.get("id") is None else str(rec["id"]))


def _messages(rec: Mapping[str, Any]) -> list[Any]:
    msgs = rec.get("messages")
    return list(msgs) if is_seq(msgs) else []


def _first_user(rec: Mapping[str, Any]) -> str | None:
    for raw in _messages(rec):
        m = mapping(raw)
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return None


def _run(key: str, recs: list[Mapping[str, Any]]) -> Trajectory:
    problems: list[str] = []
    sl = StepList()
    user = _first_user(recs[0])
    if user:
        sl.add("user", content=user)
    build([_turn(r, problems, f"call {r.get('id')}") for r in recs], sl)
    steps, final = mark_final(sl.steps)
    costs = [s.cost_usd for s in steps if s.cost_usd is not None]
    starts = [x for x in (to_float(r.get("startTime")) for r in recs) if x is not None]
    ends = [x for x in (to_float(r.get("endTime")) for r in recs) if x is not None]
    sess = next((str(r["session_id"]) for r in recs if r.get("session_id")), None)
    meta: dict[str, Any] = {"grouped_by": "trace_id" if all(r.get("trace_id") == key for r in recs) else
                            "message chain", "model_calls": len(recs)}
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps),
                      total_cost_usd=sum(costs) if costs else None,
                      total_latency_ms=(max(ends) - min(starts)) * 1000.0 if starts and ends else None,
                      source_format=FORMAT, trace_id=key, session_id=sess, metadata=meta)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per run (``group``) over the payloads of ``objs`` (lists or single ones).
    Raises ``TraceFormatError`` when an item is not a standard logging payload."""
    recs: list[Mapping[str, Any]] = []
    for o in objs:
        for x in (as_plain(o) if is_seq(as_plain(o)) else [o]):
            x = as_plain(x)
            if not is_payload(x):
                raise TraceFormatError(f"{FORMAT}: expected LiteLLM standard logging payloads, got {type(x).__name__}")
            recs.append(x)
    return [_run(k, g) for k, g in group(recs)]


def read(obj: Any) -> Trajectory:
    """The payloads of ``obj`` as one run; raises ``TraceFormatError`` when they form several
    (read those with ``load``)."""
    trajs = read_all([obj])
    if len(trajs) != 1:
        raise TraceFormatError(f"{FORMAT}: the records form {len(trajs)} runs; read them with load()")
    return trajs[0]


__all__ = ["FORMAT", "group", "is_payload", "is_source", "read", "read_all"]
