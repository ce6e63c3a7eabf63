"""Reader for OpenTelemetry traces in OTLP JSON (research notes traces.md §5).

Accepted: an OTLP ``TracesData`` / ``ExportTraceServiceRequest`` document
(``resourceSpans`` -> ``scopeSpans`` -> ``spans``), camelCase or snake_case (Phoenix
``otlpv1``; ``instrumentationLibrarySpans`` too), a list of such documents (a file
exporter's JSON Lines), or a list of span dicts, including the simplified form with flat
``attributes`` and a ``context`` object (Phoenix REST, the Python SDK's ``to_json`` /
console exporter, any-agent's span dumps with integer ids and nanosecond times). OTLP logs
documents (``resourceLogs``) and SDK log records are read for their GenAI events
(``collect_spans``).

Decoding rules (OTLP JSON encoding, opentelemetry-proto ``docs/specification.md``): trace
and span ids are hex strings and are kept as lower-case hex (a ``0x`` prefix is dropped; an
id that is not hex but is valid base64 of 8/16 bytes is converted to hex; an integer id is
written as 32 / 16 hex digits); int64 values (``intValue``, ``*UnixNano``) may be strings or
numbers; enums may be ints or names; ``AnyValue`` arrays and kvlists become lists and dicts.

Span mapping, spans ordered by start time, then end time, then file order; model turns and
tool runs become steps by the rules of ``_turns`` (the tool spans after a model span are
that turn's one ``tool_call`` step, in the order the model requested them):

- tool spans -> a call and its result: OpenTelemetry GenAI (``gen_ai.operation.name =
  execute_tool`` or a ``gen_ai.tool.name``; ``gen_ai.tool.call.id``, arguments from
  ``gen_ai.tool.call.arguments``, result ``gen_ai.tool.call.result``), any-agent
  (``gen_ai.tool.args``, ``gen_ai.output``), OpenInference (``openinference.span.kind =
  TOOL``; ``tool.name``, ``tool.id`` / ``tool_call.id``, args from ``input.value``, else
  ``tool.parameters`` unless it looks like a JSON schema; result ``output.value``), Vercel
  AI SDK ``ai.toolCall.*``, OpenLLMetry (``traceloop.span.kind = tool``,
  ``traceloop.entity.input`` / ``.output``). A tool span that records no arguments gets
  ``args=None`` and a problem naming the span, never ``{}``. ``is_error`` = status code 2 /
  ``ERROR``, or an ``error.type`` attribute, or an ``exception`` event; else False.
  ``error`` = status message, exception message or error type.
- model spans (GenAI ``chat`` / ``generate_content`` / ``text_completion``, any-agent
  ``call_llm``, OpenInference ``LLM``, OpenLLMetry ``llm.request.type``) -> a model turn with
  usage (``gen_ai.usage.*`` incl. the deprecated ``prompt_tokens`` / ``completion_tokens``,
  or ``llm.token_count.*``), cost (``llm.cost.total``, ``gen_ai.usage.cost``, or any-agent's
  ``gen_ai.usage.input_cost + output_cost``; USD), model, output text and the calls it
  requested (``gen_ai.output.messages`` tool_call parts, OpenInference
  ``llm.output_messages.*.tool_calls.*``, OpenLLMetry ``gen_ai.completion.*.tool_calls.*``,
  any-agent's ``gen_ai.output`` list). Those requested calls are the calls only when no
  tool span executed them (client instrumentations record model calls alone); their results
  then come from a later model span's prompt (tool messages joined by call id).
- a root span's plain-text ``input.value``, else the first model span's first user
  message -> the first ``user`` step.

Each span's latency is ``(end - start)`` in ms; times are unix seconds.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage, _frozen_plain
from . import otel_haystack as haystack
from . import otel_layouts as layouts
from . import otel_pydantic_ai as pyd
from ._turns import ModelTurn, ToolRun, build, mark_final
from ._util import (
    StepList,
    as_plain,
    get,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    to_float,
    to_int,
    to_unix_seconds,
    usage_or_none,
)
from ._util import (
    json_or_text as _json,
)

FORMAT = "otel"
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_LOWER_HEX = "0123456789abcdef"


def is_otlp(obj: Any) -> bool:
    """True for an OTLP traces document (``resourceSpans`` / ``resource_spans``)."""
    return isinstance(obj, Mapping) and is_seq(get(obj, "resourceSpans", "resource_spans"))


def is_span(obj: Any) -> bool:
    """True for a span dict: a span id (``spanId``/``span_id``/``context.span_id``) and a ``name``."""
    if not isinstance(obj, Mapping) or "name" not in obj:
        return False
    ctx = obj.get("context")
    return get(obj, "spanId", "span_id") is not None or (isinstance(ctx, Mapping) and "span_id" in ctx)


def norm_id(v: Any, width: int = 0) -> str | None:
    """A trace/span id as lower-case hex (see module docstring); None for empty ids.

    An integer id (the OTel Python SDK's ``SpanContext`` ints, as in span dumps that did not
    format them) is written as hex padded to ``width`` digits (32 for a trace id, 16 for a
    span id); 0 means no id."""
    if type(v) is str and v and not v.strip(_LOWER_HEX):
        return v  # already lower-case hex (the usual id): what the steps below give
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return format(v, f"0{width}x") if v > 0 else None
    s = str(v).strip()
    if s.lower().startswith("0x"):
        s = s[2:]
    if not s:
        return None
    if _HEX.match(s):
        return s.lower()
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return s
    return raw.hex() if len(raw) in (8, 16) else s


def any_value(v: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` (camel or snake case) as a plain Python value."""
    if depth > 50 or not (type(v) is dict or isinstance(v, Mapping)):
        return v
    for k in ("stringValue", "string_value"):
        if k in v:
            return v[k]
    for k in ("boolValue", "bool_value"):
        if k in v:
            return bool(v[k])
    for k in ("intValue", "int_value"):
        if k in v:
            i = to_int(v[k])
            return i if i is not None else v[k]
    for k in ("doubleValue", "double_value"):
        if k in v:
            f = to_float(v[k])
            return f if f is not None else v[k]
    for k in ("arrayValue", "array_value"):
        if k in v:
            vals = v[k].get("values") if isinstance(v[k], Mapping) else None
            return [any_value(x, depth + 1) for x in vals or ()]
    for k in ("kvlistValue", "kvlist_value"):
        if k in v:
            vals = v[k].get("values") if isinstance(v[k], Mapping) else None
            return attrs(vals or (), depth + 1)
    for k in ("bytesValue", "bytes_value"):
        if k in v:
            return v[k]
    return None


def attrs(a: Any, depth: int = 0) -> dict[str, Any]:
    """OTLP ``attributes`` (a list of ``{key, value}``) or an already-flat dict -> a flat dict."""
    if type(a) is dict or isinstance(a, Mapping):
        return dict(a)
    out: dict[str, Any] = {}
    for kv in a or ():
        if type(kv) is dict or isinstance(kv, Mapping):
            k = kv.get("key")
            if type(k) is str or isinstance(k, str):
                v = kv.get("value")
                # a text value, the usual one, without the call: what any_value gives for it
                out[k] = v["stringValue"] if type(v) is dict and "stringValue" in v and depth <= 50 \
                    else any_value(v, depth)
    return out


def _ns_to_s(v: Any) -> float | None:
    if type(v) is str and v.isdigit() and v.isascii():  # the usual text of an int64: what to_int gives
        i: int | None = int(v)
    else:
        i = to_int(v)
    if i is not None and abs(i) < 10 ** 30:  # beyond that, not a timestamp (and no float)
        return i / 1e9
    return None


def _time(v: Any) -> float | None:
    """Unix seconds from an ISO string or a number; numbers above 1e14 are nanoseconds (span
    dumps that kept the SDK's integer ``start_time``)."""
    f = to_float(v)
    if f is not None and not isinstance(v, str) and abs(f) > 1e14:
        return f / 1e9
    return to_unix_seconds(v)


def _span_record(sp: Mapping[str, Any], order: int, res_attrs: dict[str, Any]) -> dict[str, Any]:
    # each field's first present spelling read with ``sp.get`` in line (``get`` per field, the
    # same lookups, cost a third of a trace's reading when it holds thousands of spans)
    g = sp.get
    v = g("startTimeUnixNano")
    start = _ns_to_s(v if v is not None else g("start_time_unix_nano"))
    v = g("endTimeUnixNano")
    end = _ns_to_s(v if v is not None else g("end_time_unix_nano"))
    if start is None:
        start = _time(g("start_time"))
    if end is None:
        end = _time(g("end_time"))
    parent_id = g("parentSpanId")
    if parent_id is None:
        parent_id = get(sp, "parent_span_id", "parent_id")
        parent = g("parent")
        if parent_id is None and parent is not None and isinstance(parent, Mapping):
            parent_id = parent.get("span_id")
    st = g("status")
    if st is None:
        code, msg = g("status_code"), g("status_message")
    else:
        st = mapping(st)
        code = get(st, "code", "status_code", default=g("status_code"))
        msg = get(st, "message", "description", default=g("status_message"))
    a = attrs(g("attributes"))
    if "openinference.span.kind" not in a and isinstance(g("span_kind"), str):
        a["openinference.span.kind"] = sp["span_kind"]
    evs = g("events")
    # no events (the usual span): one shared empty tuple, not a list per span
    events: list[dict[str, Any]] | tuple[()] = [
        {"name": ev.get("name"), "attributes": attrs(ev.get("attributes"))}
        for ev in evs if isinstance(ev, Mapping)] if evs else ()
    tid = g("traceId")
    if tid is None:
        tid = get(sp, "trace_id", default=mapping(g("context")).get("trace_id"))
    sid = g("spanId")
    if sid is None:
        sid = get(sp, "span_id", default=mapping(g("context")).get("span_id"))
    return {
        "trace_id": tid if type(tid) is str and tid and not tid.strip(_LOWER_HEX) else norm_id(tid, 32),
        "span_id": sid if type(sid) is str and sid and not sid.strip(_LOWER_HEX) else norm_id(sid, 16),
        "parent_id": parent_id if type(parent_id) is str and parent_id and not parent_id.strip(_LOWER_HEX)
        else norm_id(parent_id, 16),
        "name": g("name"), "start": start, "end": end, "attrs": a, "events": events,
        "status_error": code is not None and _is_error_code(code),
        "status_message": msg if isinstance(msg, str) and msg else None,
        "order": order, "resource": res_attrs,
    }


def _is_error_code(code: Any) -> bool:
    if isinstance(code, bool):
        return False
    if isinstance(code, int):
        return code == 2
    if isinstance(code, str):
        c = code.strip().upper()
        return c in ("2", "ERROR", "STATUS_CODE_ERROR", "STATUSCODE.ERROR")
    return False


def is_otlp_logs(obj: Any) -> bool:
    """True for an OTLP logs document (``resourceLogs`` / ``resource_logs``)."""
    return isinstance(obj, Mapping) and is_seq(get(obj, "resourceLogs", "resource_logs"))


def is_log_record(obj: Any) -> bool:
    """True for one log record as the OTel SDK writes it (``LogRecord.to_json``: ``body``,
    ``severity_number``, ``observed_timestamp``, ``event_name``) or an OTLP ``logRecords`` entry."""
    return isinstance(obj, Mapping) and "name" not in obj and "body" in obj and any(
        k in obj for k in ("severity_number", "severityNumber", "observed_timestamp", "observedTimeUnixNano",
                           "timeUnixNano", "event_name", "eventName"))


def is_source(obj: Any) -> bool:
    """True for anything this reader reads: an OTLP traces or logs document, a span, a log record."""
    return is_otlp(obj) or is_span(obj) or is_otlp_logs(obj) or is_log_record(obj)


# GenAI events (OTel semantic conventions): the current single event that carries a model
# call's messages as attributes, and the older one-event-per-message names (body = message).
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _log_record(lr: Mapping[str, Any], res_attrs: dict[str, Any]) -> dict[str, Any] | None:
    """A GenAI event log record as ``{trace_id, span_id, time, name, attrs, body}``; None for other logs."""
    a = attrs(lr.get("attributes"))
    name = get(lr, "eventName", "event_name") or a.get("event.name")
    if not isinstance(name, str) or not (name == _DETAILS_EVENT or name in _MESSAGE_EVENTS or name == "gen_ai.choice"):
        return None
    t = _ns_to_s(get(lr, "timeUnixNano", "time_unix_nano", "observedTimeUnixNano", "observed_time_unix_nano"))
    if t is None:
        t = _time(get(lr, "timestamp", "observed_timestamp"))
    body = lr.get("body")
    return {"trace_id": norm_id(get(lr, "traceId", "trace_id"), 32), "span_id": norm_id(get(lr, "spanId", "span_id"), 16),
            "time": t, "name": name, "attrs": a, "body": any_value(body) if isinstance(body, Mapping) and any(
                k.endswith("Value") or k.endswith("_value") for k in body) else body, "resource": res_attrs}


def _legacy_messages(events: list[dict[str, Any]]) -> dict[str, Any]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` built from one model call's older
    per-message events (``gen_ai.user.message`` ..., ``gen_ai.choice``; body = the message)."""
    inp: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for ev in events:
        body: Mapping[str, Any] = ev["body"] if isinstance(ev["body"], Mapping) else {"content": ev["body"]}
        if ev["name"] == "gen_ai.choice":
            body = mapping(body.get("message")) or body
            target, role = out, "assistant"
        else:
            target, role = inp, _MESSAGE_EVENTS[ev["name"]]
        parts: list[dict[str, Any]] = []
        content = body.get("content")
        if role == "tool":
            parts.append({"type": "tool_call_response", "id": body.get("id"), "response": content})
        elif isinstance(content, str) and content:
            parts.append({"type": "text", "content": content})
        for tc in body.get("tool_calls") or ():
            if isinstance(tc, Mapping):
                fn = mapping(tc.get("function"))
                parts.append({"type": "tool_call", "id": tc.get("id"), "name": fn.get("name"),
                              "arguments": fn.get("arguments")})
        target.append({"role": role, "parts": parts})
    got: dict[str, Any] = {}
    if inp:
        got["gen_ai.input.messages"] = inp
    if out:
        got["gen_ai.output.messages"] = out
    return got


def _merge_logs(spans: list[dict[str, Any]], logs: list[dict[str, Any]]) -> None:
    """Lay GenAI log events over their spans (matched by span id; the span's own attributes
    win), or add one model-call record per span id that no span in ``spans`` has."""
    by_id = {s["span_id"]: s for s in spans if s["span_id"] is not None}
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for lr in logs:
        groups.setdefault((lr["trace_id"], lr["span_id"] or f"log-{len(groups)}"), []).append(lr)
    for (tid, sid), evs in groups.items():
        extra: dict[str, Any] = {}
        for ev in evs:
            if ev["name"] == _DETAILS_EVENT:
                extra.update(ev["attrs"])
        extra.update({k: v for k, v in _legacy_messages([e for e in evs if e["name"] != _DETAILS_EVENT]).items()
                      if k not in extra})
        extra.setdefault("gen_ai.operation.name", "chat")
        sp = by_id.get(sid)
        if sp is not None:
            for k, v in extra.items():
                sp["attrs"].setdefault(k, v)
            continue
        times = [e["time"] for e in evs if e["time"] is not None]
        spans.append({"trace_id": tid, "span_id": sid, "parent_id": None, "name": "GenAI log events",
                      "start": min(times) if times else None, "end": max(times) if times else None,
                      "attrs": extra, "events": [], "status_error": False, "status_message": None,
                      "order": len(spans), "resource": evs[0]["resource"]})


def collect_spans(obj: Any) -> list[dict[str, Any]]:
    """All spans of ``obj`` (a document, a list of documents or a list of spans) as normalised records.

    OTLP logs documents and SDK log records in ``obj`` are read for their GenAI events (see
    ``_merge_logs``): a model call whose messages an instrumentation put in log events (the
    OpenAI client instrumentations do, by their content-capture setting) is read from them.
    Raises ``TraceFormatError`` when nothing in ``obj`` is an OTLP document, span or log record.
    """
    docs = [as_plain(x) for x in obj] if is_seq(obj) else [as_plain(obj)]
    spans: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    found = False
    for d in docs:
        if is_otlp(d):
            found = True
            for rs in get(d, "resourceSpans", "resource_spans") or ():
                if not isinstance(rs, Mapping):
                    continue
                res = mapping(rs.get("resource"))
                ra = attrs(res.get("attributes"))
                for ss in get(rs, "scopeSpans", "scope_spans", "instrumentationLibrarySpans") or ():
                    if not isinstance(ss, Mapping):
                        continue
                    for sp in ss.get("spans") or ():
                        if type(sp) is dict or isinstance(sp, Mapping):
                            spans.append(_span_record(sp, len(spans), ra))
        elif is_otlp_logs(d):
            found = True
            for rl in get(d, "resourceLogs", "resource_logs") or ():
                if not isinstance(rl, Mapping):
                    continue
                ra = attrs(mapping(rl.get("resource")).get("attributes"))
                for sl in get(rl, "scopeLogs", "scope_logs") or ():
                    for lr in (sl.get("logRecords", sl.get("log_records")) if isinstance(sl, Mapping) else None) or ():
                        rec = _log_record(lr, ra) if isinstance(lr, Mapping) else None
                        if rec is not None:
                            logs.append(rec)
        elif is_span(d):
            found = True
            res = mapping(d.get("resource"))
            spans.append(_span_record(d, len(spans), attrs(res.get("attributes"))))
        elif is_log_record(d):
            found = True
            rec = _log_record(d, attrs(mapping(d.get("resource")).get("attributes")))
            if rec is not None:
                logs.append(rec)
    if not found:
        raise TraceFormatError(f"{FORMAT}: expected an OTLP document with 'resourceSpans' or a list of spans")
    if logs:
        _merge_logs(spans, logs)
    return spans


def _looks_like_schema(v: Any) -> bool:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return False
    return isinstance(v, Mapping) and v.get("type") == "object" and "properties" in v


def _first(a: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if a.get(k) is not None:
            return a[k]
    return None


def _first_key(a: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        if a.get(k) is not None:
            return k
    return None


# Tool-call arguments and results by emitter, first found wins: OTel GenAI semconv (current),
# any-agent, OpenInference, Vercel AI SDK, pydantic-ai (old), OpenLLMetry (Traceloop).
_ARG_KEYS = ("gen_ai.tool.call.arguments", "gen_ai.tool.args", "gen_ai.tool.input", "input.value",
             "ai.toolCall.args", "tool_arguments", "tool.arguments", "traceloop.entity.input")
_RESULT_KEYS = ("gen_ai.tool.call.result", "gen_ai.tool.output", "output.value", "ai.toolCall.result",
                "tool_response", "gen_ai.output", "traceloop.entity.output")
_LLM_OPS = ("chat", "generate_content", "text_completion", "call_llm", "completion")


def _kind(a: Mapping[str, Any]) -> str | None:
    op = a.get("gen_ai.operation.name")
    oi = str(a.get("openinference.span.kind") or "").upper()
    tl = str(a.get("traceloop.span.kind") or "").lower()
    if op == "execute_tool" or oi == "TOOL" or tl == "tool" or a.get("gen_ai.tool.name") is not None \
            or a.get("ai.toolCall.name") is not None:
        return "tool"
    if op in _LLM_OPS or oi == "LLM" or a.get("llm.request.type") in ("chat", "completion"):
        return "llm"
    return None


def _indexed(a: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened indexed attributes (``<prefix>.<i>.<rest>``) as one dict of ``rest -> value`` per index."""
    out: dict[int, dict[str, Any]] = {}
    pre = prefix + "."
    for k, v in a.items():
        if not k.startswith(pre):
            continue
        idx, _, rest = k[len(pre):].partition(".")
        if idx.isdigit() and rest:
            out.setdefault(int(idx), {})[rest] = v
    return [out[i] for i in sorted(out)]


def _call(name: Any, raw: Any, cid: Any, problems: list[str], w: str) -> ToolCall:
    nm = name if isinstance(name, str) else str(name or "")
    if not nm:
        problems.append(f"{w}: requested call has no name")
    args, raw_s, err = parse_args(raw, problems, f"{w} ({nm})")
    return ToolCall(name=nm, args=args, call_id=None if cid is None else str(cid), raw_args=raw_s,
                    args_parse_error=err)


def _messages_out(a: Mapping[str, Any], problems: list[str], w: str) -> tuple[str | None, list[ToolCall], bool]:
    """Output text, requested calls and whether calls were requested, from an LLM span."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    om = _json(a.get("gen_ai.output.messages"))
    if is_seq(om):
        for m in om:
            for p in (m.get("parts") if isinstance(m, Mapping) else None) or ():
                if not isinstance(p, Mapping):
                    continue
                if p.get("type") == "text" and isinstance(p.get("content"), str):
                    texts.append(p["content"])
                elif p.get("type") == "tool_call":
                    calls.append(_call(p.get("name"), p.get("arguments"), p.get("id"), problems, w))
        return ("\n".join(texts) if texts else None), calls, bool(calls)
    go = a.get("gen_ai.output")
    if go is not None:  # any-agent: a JSON list of {tool.name, tool.args} when the model called tools
        val = _json(go)
        if is_seq(val) and val and all(isinstance(x, Mapping) and "tool.name" in x for x in val):
            for x in val:
                calls.append(_call(x.get("tool.name"), x.get("tool.args"), x.get("tool.id"), problems, w))
            return None, calls, True
        return (go if isinstance(go, str) else json.dumps(go)), [], False
    requested = False
    for prefix, tc_pre, tc_fields in (
            ("llm.output_messages", "message.tool_calls", ("tool_call.function.name", "tool_call.function.arguments",
                                                            "tool_call.id")),
            ("gen_ai.completion", "tool_calls", ("name", "arguments", "id"))):
        for m in _indexed(a, prefix):
            c = m.get("message.content", m.get("content"))
            if isinstance(c, str) and c:
                texts.append(c)
            for tc in _indexed(m, tc_pre):
                requested = True
                calls.append(_call(tc.get(tc_fields[0]), tc.get(tc_fields[1]), tc.get(tc_fields[2]), problems, w))
    if not texts:
        out = a.get("output.value")
        if isinstance(out, str) and not str(a.get("output.mime_type", "")).endswith("json"):
            texts.append(out)
    return ("\n".join(texts) if texts else None), calls, requested or bool(calls)


def _messages_in(a: Mapping[str, Any]) -> tuple[str | None, list[ToolResult]]:
    """The first user message's text and the tool results in an LLM span's prompt."""
    user: str | None = None
    results: list[ToolResult] = []
    im = _json(a.get("gen_ai.input.messages"))
    if is_seq(im):
        for m in im:
            if not isinstance(m, Mapping):
                continue
            parts = m.get("parts")
            if m.get("role") == "user" and user is None:
                if isinstance(m.get("content"), str):
                    user = m["content"]
                elif is_seq(parts):
                    user = "\n".join(p["content"] for p in parts if isinstance(p, Mapping) and p.get("type") == "text"
                                     and isinstance(p.get("content"), str)) or None
            for p in parts or ():
                if isinstance(p, Mapping) and p.get("type") == "tool_call_response":
                    results.append(ToolResult(call_id=None if p.get("id") is None else str(p["id"]), name=None,
                                              output=p.get("response", p.get("result"))))
        return user, results
    for prefix, pre in (("llm.input_messages", "message."), ("gen_ai.prompt", "")):
        for m in _indexed(a, prefix):
            role = m.get(pre + "role")
            content = m.get(pre + "content")
            if role == "user" and user is None and isinstance(content, str):
                user = content
            if role == "tool":
                cid = m.get(pre + "tool_call_id")
                results.append(ToolResult(call_id=None if cid is None else str(cid), name=m.get(pre + "name"),
                                          output=content))
    return user, results


def _usage(a: Mapping[str, Any]) -> Usage | None:
    return usage_or_none(Usage(
        input_tokens=to_int(_first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")),
        output_tokens=to_int(_first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                    "llm.token_count.completion")),
        total_tokens=to_int(_first(a, "llm.token_count.total", "gen_ai.usage.total_tokens", "llm.usage.total_tokens")),
        cache_read_tokens=to_int(_first(a, "gen_ai.usage.cache_read.input_tokens",
                                        "gen_ai.usage.cache_read_input_tokens",
                                        "llm.token_count.prompt_details.cache_read")),
        cache_write_tokens=to_int(_first(a, "gen_ai.usage.cache_creation.input_tokens",
                                         "gen_ai.usage.cache_creation_input_tokens",
                                         "llm.token_count.prompt_details.cache_write")),
        reasoning_tokens=to_int(_first(a, "gen_ai.usage.reasoning.output_tokens",
                                       "llm.token_count.completion_details.reasoning")),
    ))


def _cost(a: Mapping[str, Any]) -> float | None:
    """USD cost of an LLM span: OpenInference ``llm.cost.total``, ``gen_ai.usage.cost``, or
    any-agent's ``gen_ai.usage.input_cost`` + ``gen_ai.usage.output_cost``."""
    c = to_float(_first(a, "llm.cost.total", "gen_ai.usage.cost"))
    if c is not None:
        return c
    i, o = to_float(a.get("gen_ai.usage.input_cost")), to_float(a.get("gen_ai.usage.output_cost"))
    return None if i is None and o is None else (i or 0.0) + (o or 0.0)


def _tool_run(s: dict[str, Any], problems: list[str], w: str, times: dict[str, Any]) -> ToolRun:
    a = s["attrs"]
    ag = a.get
    name = ag("gen_ai.tool.name")
    if name is None:
        name = _first(a, "tool.name", "ai.toolCall.name")
    if name is None and isinstance(s["name"], str) and s["name"].startswith("execute_tool "):
        name = s["name"][len("execute_tool "):]
    if name is None and str(a.get("traceloop.span.kind") or "").lower() == "tool":
        name = a.get("traceloop.entity.name") or (s["name"].removesuffix(".tool") if isinstance(s["name"], str) else None)
    if not isinstance(name, str) or not name:
        problems.append(f"{w}: tool span has no tool name")
        name = "" if name is None else str(name)
    key = "gen_ai.tool.call.arguments" if ag("gen_ai.tool.call.arguments") is not None else _first_key(a, _ARG_KEYS)
    raw = a.get(key) if key else None
    if key == "traceloop.entity.input":
        val = _json(raw)
        if isinstance(val, Mapping) and isinstance(val.get("inputs"), Mapping):
            raw = val["inputs"]
    if raw is None:
        raw = layouts.event_args(s)
    if raw is None and a.get("tool.parameters") is not None and not _looks_like_schema(a["tool.parameters"]) \
            and not _is_inputs_spec(a["tool.parameters"]):
        raw = a["tool.parameters"]
    if raw is not None:
        raw = layouts.unwrap_call(raw, a, problems, w)
    if raw is None:
        # never {}: a call whose arguments were not recorded must not match a no-argument call
        problems.append(f"{w}: tool span records no arguments (none of {', '.join(_ARG_KEYS[:3])}, ...); "
                        "args unknown" + (haystack.CONTENT_HINT if str(s["name"]).startswith(haystack.PREFIX) else ""))
        err: str | None = "no arguments recorded"
        args, raw_s = None, None
    else:
        args, raw_s, err = parse_args(raw, problems, w)
    cid = ag("gen_ai.tool.call.id")
    if cid is None:
        cid = _first(a, "tool.id", "tool_call.id", "ai.toolCall.id")
    cid = None if cid is None else str(cid).strip()
    rkey = "gen_ai.tool.call.result" if ag("gen_ai.tool.call.result") is not None else _first_key(a, _RESULT_KEYS)
    out = a.get(rkey) if rkey else None
    if rkey == "traceloop.entity.output" and isinstance(out, str):
        out = _json(out)  # Traceloop's @tool writes json.dumps(return value) (checked on traceloop-sdk 0.62.4)
    if rkey is None:
        out = layouts.event_result(s)[1]
    exc = next((e for e in s["events"] if e.get("name") in ("exception", "gen_ai.execute_tool.exception")),
               None) if s["events"] else None
    etype = a.get("error.type")
    flag = layouts.flagged_error(a)
    is_err = bool(s["status_error"] or etype or exc or flag)
    error = None
    if is_err:
        error = s["status_message"] or (exc["attributes"].get("exception.message") if exc else None) \
            or (str(etype) if etype else None) or flag or "error"
    # the model's classes built from their fields at once (``model._frozen_plain``: what their
    # constructors give, at a third of the cost; a trace may hold thousands of tool spans)
    call = _frozen_plain(ToolCall, {"name": name, "args": args, "call_id": cid, "raw_args": raw_s, "args_parse_error": err,
                              "tool_type": str(a["gen_ai.tool.type"]) if a.get("gen_ai.tool.type") else None})
    res = _frozen_plain(ToolResult, {"call_id": cid, "name": name, "output": out, "is_error": is_err, "error": error})
    return ToolRun(call, res, **times)


def _is_inputs_spec(v: Any) -> bool:
    """True for a smolagents ``inputs`` mapping (``{name: {type, description}}``): the tool's
    parameters, not the call's arguments."""
    val = _json(v)
    return isinstance(val, Mapping) and bool(val) and all(
        isinstance(x, Mapping) and "type" in x and "description" in x for x in val.values())


def _drop_final_answer_calls(events: list[ModelTurn | ToolRun], answer: str | None) -> list[ModelTurn | ToolRun]:
    """Model turns without their ``final_answer`` call (smolagents): a turn that asked only for
    it is the answer itself, so it carries the answer's text."""
    out: list[ModelTurn | ToolRun] = []
    for ev in events:
        if isinstance(ev, ModelTurn) and any(c.name == layouts.FINAL_ANSWER_TOOL for c in ev.requested):
            rest = [c for c in ev.requested if c.name != layouts.FINAL_ANSWER_TOOL]
            fa = next(c for c in ev.requested if c.name == layouts.FINAL_ANSWER_TOOL)
            text = ev.content
            if not rest and not text:
                got = (fa.args or {}).get("answer")
                text = answer or (got if isinstance(got, str) else None)
            ev = replace(ev, requested=rest, requested_any=bool(rest), content=text)
        out.append(ev)
    return out


#: The span or resource attribute that ties a trace to its case (docs/formats.md).
CASE_ID_ATTR = "trajcheck.case_id"


def _case_id(spans: list[dict[str, Any]], roots: list[dict[str, Any]]) -> str | None:
    """The trace's case id: ``trajcheck.case_id`` on a root span, else on any span, else in a
    span's resource attributes; None when no span carries it."""
    for group in (roots, spans):
        for s in group:
            v = s["attrs"].get(CASE_ID_ATTR)
            if v is not None and not isinstance(v, (dict, list)):
                return str(v)
    for s in spans:
        v = mapping(s.get("resource")).get(CASE_ID_ATTR)
        if v is not None and not isinstance(v, (dict, list)):
            return str(v)
    return None


def _trajectory(spans: list[dict[str, Any]]) -> Trajectory:
    spans = sorted(spans, key=lambda s: (s["start"] if s["start"] is not None else float("inf"),
                                         s["end"] if s["end"] is not None else float("inf"), s["order"]))
    problems: list[str] = []
    sl = StepList()
    ids = {s["span_id"] for s in spans}
    roots = [s for s in spans if s["parent_id"] is None or s["parent_id"] not in ids]
    user: str | None = None
    for r in roots[:1]:
        iv = r["attrs"].get("input.value")
        if isinstance(iv, str) and iv.strip() and not iv.strip().startswith(("{", "[")) and _kind(r["attrs"]) is None:
            user = iv
    session = None
    events: list[ModelTurn | ToolRun] = []
    answer: str | None = None  # smolagents' final_answer tool
    answers: list[str] = []  # pydantic-ai output functions' results
    deferred: list[dict[str, Any]] = []  # pydantic-ai calls deferred, not run
    components = False  # Haystack component spans (2.x: a ToolInvoker's calls are only there)
    for s in spans:
        if s["events"]:
            layouts.lift_details(s)
        if isinstance(s["name"], str) and s["name"].startswith(haystack.PREFIX):
            haystack.lift(s)
            components = components or s["name"] == haystack.COMPONENT_SPAN
    shadowed = haystack.shadowed_components(spans, _kind) if components else frozenset()
    for s in spans:
        a = s["attrs"]
        session = session or a.get("gen_ai.conversation.id") or a.get("session.id")
        kind = _kind(a)
        if (kind is None and not components) or (components and s["span_id"] in shadowed):
            continue
        lat = (s["end"] - s["start"]) * 1000.0 if s["start"] is not None and s["end"] is not None else None
        agent = a.get("gen_ai.agent.name") or a.get("agent.name")
        times: dict[str, Any] = {"start": s["start"], "end": s["end"], "latency_ms": lat, "span_id": s["span_id"],
                                 "parent_id": s["parent_id"], "agent_name": agent if isinstance(agent, str) else None}
        w = f"span {s['span_id']} ({s['name']})"
        if kind is None:
            if s["name"] == haystack.COMPONENT_SPAN:
                events.extend(haystack.component_runs(s, problems, w, times) or ())
            continue
        if kind == "tool":
            if not pyd.tool_span_is_call(s, problems, w, deferred, answers):
                continue
            run = _tool_run(s, problems, w, times)
            if run.call.name == layouts.FINAL_ANSWER_TOOL:
                got = (run.call.args or {}).get("answer")
                answer = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False) if got is not None else None
                continue
            events.append(run)
        elif kind == "llm":
            text, req, any_req = _messages_out(a, problems, w)
            outs = pyd.output_tools(a)
            if outs and any(c.name in outs for c in req):  # pydantic-ai output tools: the answer
                req = [c for c in req if c.name not in outs]
                any_req = bool(req)
            first_user, in_results = _messages_in(a)
            if first_user is None and s["events"]:
                first_user = layouts.event_user(s)
            if user is None and first_user:
                user = first_user
            model = _first(a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
            events.append(ModelTurn(content=text, requested=req, requested_any=any_req, input_results=in_results,
                                    usage=_usage(a), cost_usd=_cost(a), model=model if isinstance(model, str) else None,
                                    **times))
            if s["status_error"]:
                problems.append(f"{w}: LLM span has error status: {s['status_message']}")
    if user is not None:
        sl.add("user", content=user)
    for s in spans:  # after the tool spans' own deferrals, which name the kind
        # (deferred_requests reads final_result: a span without it defers nothing)
        if s["attrs"].get("final_result") is not None and layouts.is_agent_span(s):
            deferred.extend({"name": n, "call_id": c, "deferral": "DeferredToolRequests"}
                            for n, c in pyd.deferred_requests(s["attrs"]))
    if deferred:
        events = pyd.drop_deferred(events, deferred)
    build(_drop_final_answer_calls(events, answer), sl)
    final_steps, final = mark_final(sl.steps)
    if final is None:
        answer = answer or (answers[-1] if answers else None) or next((x for x in (layouts.agent_answer(s) for s in spans if layouts.is_agent_span(s)) if x),
                                None)
        if answer:
            sl.add("final_response", content=answer)
            final_steps, final = tuple(sl.steps), answer
    starts = [s["start"] for s in spans if s["start"] is not None]
    ends = [s["end"] for s in spans if s["end"] is not None]
    costs = [st.cost_usd for st in final_steps if st.cost_usd is not None]
    meta: dict[str, Any] = {"problems": problems} if problems else {}
    if deferred:
        meta["deferred_calls"] = pyd.unique_deferred(deferred)
    cid = _case_id(spans, roots)
    if cid is not None:
        meta["case_id"] = cid
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      total_cost_usd=sum(costs) if costs else None,
                      total_latency_ms=(max(ends) - min(starts)) * 1000.0 if starts and ends else None,
                      source_format=FORMAT, trace_id=spans[0]["trace_id"] if spans else None,
                      session_id=str(session) if session is not None else None, metadata=meta)


def read_all(obj: Any) -> list[Trajectory]:
    """One trajectory per trace id in ``obj`` (in order of first appearance)."""
    spans = collect_spans(obj)
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for s in spans:
        groups.setdefault(s["trace_id"], []).append(s)
    return [_trajectory(g) for g in groups.values()]


def read(obj: Any) -> Trajectory:
    """All spans of ``obj`` as one trajectory (use ``read_all`` to split by trace id).

    Raises ``TraceFormatError`` when ``obj`` holds no OTLP document or span.
    """
    spans = collect_spans(obj)
    t = _trajectory(spans)
    if len({s["trace_id"] for s in spans}) > 1:
        return replace(t, trace_id=None)
    return t
