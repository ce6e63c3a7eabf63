"""Reader for MLflow traces (``mlflow.entities.Trace``).

Accepted: ``Trace.to_json()`` / ``to_dict()`` (``{"info": {...}, "data": {"spans": [...]}}``),
a list of those or of ``Trace`` objects (``mlflow.search_traces(return_type="list")``), the
rows of ``search_traces()``'s DataFrame (``df.to_dict("records")`` or ``df.to_json(orient=
"records")``: a ``trace`` column holding the trace or its JSON, else ``trace_id`` + ``spans``),
and the DataFrame itself. Spans are in MLflow 3's OTLP-like shape (``span_id``,
``parent_span_id``, ``start_time_unix_nano``, ``status.code``, ``attributes``) or MLflow 2's
(``context.span_id``, ``parent_id``, ``start_time`` in ns, ``status_code``); base64 ids are kept
as hex. Attribute values are JSON-encoded strings and are decoded.

Span mapping (``mlflow.spanType``), spans ordered by start, then end, then file order:

- ``TOOL``: one call: name = the span name, arguments = ``mlflow.spanInputs`` (an object;
  missing inputs give ``args=None`` and a problem naming the span), result =
  ``mlflow.spanOutputs``; failed when the status is ``ERROR`` (the error is the ``exception``
  event's message, else the status message).
- ``CHAT_MODEL`` / ``LLM``: one model call: usage from ``mlflow.chat.tokenUsage``
  (``input_tokens``, ``output_tokens``, ``total_tokens``), text and requested call ids from its
  outputs (Chat Completions, Responses or message shapes). Tools after one model span and before
  the next are its calls, one step (a parallel turn stays together).
- the trace-level ``mlflow.trace.tokenUsage`` aggregates the spans' usage and is used only when
  no span has usage (counted once per model call). ``info.execution_duration_ms`` is the run's
  latency. The user step is the first user message of the first model span's inputs; the final
  response is the last model text with no later call, else the root span's string output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._genout import decode_json, first_user_text, model_output
from ._util import (
    StepList,
    as_plain,
    is_seq,
    json_or_text,
    mapping,
    mark_last_reply,
    parse_args,
    sum_usage,
    to_float,
    to_int,
    usage_or_none,
)
from .otel import norm_id

FORMAT = "mlflow"
_MODEL_TYPES = ("CHAT_MODEL", "LLM")


def _plain(obj: Any) -> Any:
    if type(obj).__name__ == "DataFrame" and callable(getattr(obj, "to_dict", None)):
        return obj.to_dict(orient="records")
    if type(obj).__module__.startswith("mlflow") and callable(getattr(obj, "to_dict", None)):
        return obj.to_dict()
    return as_plain(obj)


def _trace_of(obj: Any) -> Mapping[str, Any] | None:
    """The ``{info, data}`` trace of one trace object or search row, or None."""
    obj = _plain(obj)
    if not isinstance(obj, Mapping):
        return None
    if isinstance(obj.get("info"), Mapping) and isinstance(obj.get("data"), Mapping) and is_seq(obj["data"].get("spans")):
        return obj
    tr = decode_json(obj.get("trace")) if "trace" in obj else None
    tr = _plain(tr)
    if isinstance(tr, Mapping) and isinstance(tr.get("data"), Mapping):
        return tr
    spans = decode_json(obj.get("spans"))
    if ("trace_id" in obj or "request_id" in obj) and is_seq(spans) and spans and all(_is_span(s) for s in spans):
        info = {k: obj.get(k) for k in ("trace_id", "request_id", "execution_duration", "trace_metadata", "tags")}
        return {"info": info, "data": {"spans": spans}}
    return None


def _is_span(s: Any) -> bool:
    s = as_plain(s)
    return isinstance(s, Mapping) and "name" in s and isinstance(s.get("attributes"), Mapping) and (
        "span_id" in s or isinstance(s.get("context"), Mapping))


def is_trace(obj: Any) -> bool:
    """True for one MLflow trace, search row, or a non-empty list of them (or a DataFrame)."""
    obj = _plain(obj)
    if is_seq(obj):
        return bool(obj) and all(_trace_of(x) is not None for x in obj)
    return _trace_of(obj) is not None


def _attr(a: Mapping[str, Any], key: str) -> Any:
    """An attribute's value; MLflow stores every value JSON-encoded (a string too)."""
    return json_or_text(a.get(key))


def _span(s: Mapping[str, Any], order: int) -> dict[str, Any]:
    ctx = mapping(s.get("context"))
    st = mapping(s.get("status"))
    code = st.get("code", s.get("status_code"))
    a = mapping(s.get("attributes"))
    start = to_int(s.get("start_time_unix_nano", s.get("start_time")))
    end = to_int(s.get("end_time_unix_nano", s.get("end_time")))
    exc = next((mapping(e.get("attributes")) for e in s.get("events") or () if mapping(e).get("name") == "exception"),
               None)
    typ = _attr(a, "mlflow.spanType")
    return {
        "id": norm_id(s.get("span_id", ctx.get("span_id"))),
        "parent": norm_id(s.get("parent_span_id", s.get("parent_id"))),
        "name": s.get("name"), "type": str(typ).upper() if typ is not None else None,
        "start": start / 1e9 if start is not None else None, "end": end / 1e9 if end is not None else None,
        "error": isinstance(code, str) and code.upper().endswith("ERROR"),
        "message": st.get("message", s.get("status_message")) or None, "exception": exc, "attrs": a,
        "order": order,
    }


def _usage(u: Any) -> Usage | None:
    u = mapping(decode_json(u))
    if not u:
        return None
    return usage_or_none(Usage(input_tokens=to_int(u.get("input_tokens")), output_tokens=to_int(u.get("output_tokens")),
                               total_tokens=to_int(u.get("total_tokens"))))


def read(obj: Any) -> Trajectory:
    """One MLflow trace (see the module docstring). Raises ``TraceFormatError`` when ``obj`` is
    not one."""
    tr = _trace_of(obj)
    if tr is None:
        raise TraceFormatError(f"{FORMAT}: expected an MLflow trace ({{'info': {{...}}, 'data': {{'spans': [...]}}}})")
    info = mapping(tr.get("info"))
    spans = [_span(as_plain(s), i) for i, s in enumerate(mapping(tr.get("data")).get("spans") or ())
             if isinstance(as_plain(s), Mapping)]
    spans.sort(key=lambda s: (s["start"] if s["start"] is not None else float("inf"),
                              s["end"] if s["end"] is not None else float("inf"), s["order"]))
    problems: list[str] = []
    turns: list[dict[str, Any]] = []
    for s in spans:
        if s["type"] in _MODEL_TYPES:
            turns.append({"model": s, "tools": []})
        elif s["type"] == "TOOL":
            if not turns:
                turns.append({"model": None, "tools": []})
            turns[-1]["tools"].append(s)
    sl = StepList()
    first_model = next((t["model"] for t in turns if t["model"] is not None), None)
    user = first_user_text(_attr(first_model["attrs"], "mlflow.spanInputs")) if first_model else None
    if user is not None:
        sl.add("user", content=user)
    for turn in turns:
        m = turn["model"]
        text, requested = (model_output(_attr(m["attrs"], "mlflow.spanOutputs")) if m is not None else (None, []))
        kw: dict[str, Any] = {}
        if m is not None:
            kw = _times(m)
            kw["usage"] = _usage(_attr(m["attrs"], "mlflow.chat.tokenUsage"))
            model_name = _attr(m["attrs"], "mlflow.llm.model") or _attr(m["attrs"], "gen_ai.request.model")
            if isinstance(model_name, str):
                kw["model"] = model_name
            if m["error"]:
                problems.append(f"span {m['id']} ({m['name']}): model call failed: {m['message']}")
        used: set[int] = set()
        calls: list[ToolCall] = []
        results: list[tuple[ToolResult, dict[str, Any]]] = []
        for t in turn["tools"]:
            w = f"span {t['id']} ({t['name']})"
            name = t["name"]
            if not isinstance(name, str) or not name:
                problems.append(f"{w}: field 'name' is missing")
                name = "" if name is None else str(name)
            raw = _attr(t["attrs"], "mlflow.spanInputs")
            err: str | None
            if raw is None:
                problems.append(f"{w}: attribute 'mlflow.spanInputs' is missing; arguments unknown")
                args, raw_s, err = None, None, "arguments not recorded"
            else:
                args, raw_s, err = parse_args(raw if isinstance(raw, (str, Mapping)) else json.dumps(raw), problems, w)
            k = next((j for j, (n, _) in enumerate(requested) if n == name and j not in used), None)
            cid = None
            if k is not None:
                used.add(k)
                cid = requested[k][1]
            calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=err))
            out = _attr(t["attrs"], "mlflow.spanOutputs")
            etext = None
            if t["error"]:
                exc = t["exception"] or {}
                etext = str(exc.get("exception.message") or t["message"] or exc.get("exception.type") or "error")
            results.append((ToolResult(call_id=cid, name=name, output=out, is_error=t["error"], error=etext), _times(t)))
        if calls:
            sl.call(calls, content=text, **kw)
        elif m is not None:
            sl.add("assistant", content=text, **kw)
        for r, tk in results:
            sl.result(r, **tk)
    steps, final = mark_last_reply(list(sl.steps))
    roots = [s for s in spans if s["parent"] is None]
    if final is None and roots:
        out = _attr(roots[0]["attrs"], "mlflow.spanOutputs")
        final = out if isinstance(out, str) else None
    fs = tuple(steps)
    total = sum_usage(fs)
    meta_in = mapping(info.get("trace_metadata") or info.get("request_metadata"))
    if total is None:
        total = _usage(meta_in.get("mlflow.trace.tokenUsage"))
    lat = to_float(info.get("execution_duration_ms", info.get("execution_duration")))
    meta: dict[str, Any] = {}
    if info.get("state") is not None:
        meta["state"] = info["state"]
    if problems:
        meta["problems"] = problems
    tid = info.get("trace_id") or info.get("request_id")
    sess = meta_in.get("mlflow.trace.session")
    # the run's case: trace metadata (mlflow.update_current_trace(metadata=...)), else a tag
    cid = meta_in.get("case_id", mapping(info.get("tags")).get("case_id"))
    if cid is not None:
        meta["case_id"] = str(cid)
    return Trajectory(steps=fs, final_response=final, total_usage=total, total_latency_ms=lat, source_format=FORMAT,
                      trace_id=str(tid) if tid is not None else None,
                      session_id=str(sess) if sess is not None else None, metadata=meta)


def _times(s: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"span_id": s["id"], "parent_id": s["parent"], "start_time": s["start"], "end_time": s["end"]}
    if s["start"] is not None and s["end"] is not None:
        out["latency_ms"] = (s["end"] - s["start"]) * 1000.0
    return {k: v for k, v in out.items() if v is not None}


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per trace over ``objs`` (traces, lists of traces, search rows, DataFrames)."""
    out: list[Trajectory] = []
    for o in objs:
        o = _plain(o)
        for x in o if is_seq(o) else [o]:
            out.append(read(x))
    return out


__all__ = ["FORMAT", "is_trace", "read", "read_all"]
