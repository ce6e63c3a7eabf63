"""Reader for Langfuse trace exports (a trace with its observations).

Accepted: ``{"trace": {...}, "observations": [...]}`` (the export shape) or a trace object
whose ``observations`` is a list of observation objects (``GET /api/public/traces/{id}``).
Observation fields (Langfuse public API): ``id``, ``type`` (``GENERATION``, ``TOOL``,
``SPAN``, ``AGENT``, ``EVENT``, ...), ``parentObservationId``, ``startTime``, ``endTime``,
``name``, ``input``, ``output``, ``metadata``, ``level`` (``ERROR`` marks a failure),
``statusMessage``, ``model``, ``usageDetails`` / ``usage``, ``costDetails`` / ``totalCost``.
``input``, ``output`` and ``metadata`` may be JSON-encoded strings; they are decoded.

Mapping, observations ordered by start time, then end time, then export order:

- ``GENERATION``: one model call: usage from ``usageDetails`` (``input``, ``output``,
  ``total``, cache-read and reasoning details; older ``usage`` / ``promptTokens`` names too),
  cost from ``costDetails.total`` / ``totalCost`` (USD), latency from start/end; output text
  and the calls it requested (Responses ``function_call`` items or chat ``tool_calls``) from
  ``output``. Usage is read from generations only (parents' figures are aggregates).
- ``TOOL`` (or a span whose OpenInference / GenAI attributes in ``metadata.attributes`` say
  tool): one call, arguments from ``input``, result from ``output``; ``level`` ``ERROR`` makes
  the result failed (``statusMessage`` is the error). Tools after one generation and before
  the next are that generation's calls, so a parallel turn stays one step; each takes the id
  of the first unused requested call of its name.
- the first user message of the trace's ``input`` (else of the first generation's input) is
  the ``user`` step; the text of the last generation that requested no call is the final
  response (else the trace's ``output`` text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._genout import decode_json as _decode
from ._genout import first_user_text, model_output
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    mark_last_reply,
    parse_args,
    sum_usage,
    to_float,
    to_int,
    to_unix_seconds,
    usage_or_none,
)

FORMAT = "langfuse"
_OBS_KEYS = ("traceId", "startTime", "type")


def _is_obs(x: Any) -> bool:
    return isinstance(x, Mapping) and all(k in x for k in _OBS_KEYS)


def is_export(obj: Any) -> bool:
    """True for ``{"trace", "observations"}`` or a trace whose ``observations`` are objects."""
    if not isinstance(obj, Mapping):
        return False
    if isinstance(obj.get("trace"), Mapping) and is_seq(obj.get("observations")):
        return all(_is_obs(o) for o in obj["observations"])
    obs = obj.get("observations")
    return is_seq(obs) and bool(obs) and all(_is_obs(o) for o in obs) and "id" in obj


def usage_of(o: Mapping[str, Any]) -> Usage | None:
    """Usage of one generation observation (``usageDetails``, else the older names)."""
    ud = mapping(_decode(o.get("usageDetails")))
    if ud:
        cache = next((ud[k] for k in ("input_cached_tokens", "cache_read_input_tokens", "prompt_details.cache_read",
                                      "input_cache_read") if k in ud), None)
        reasoning = next((ud[k] for k in ("output_reasoning_tokens", "completion_details.reasoning",
                                          "reasoning_tokens") if k in ud), None)
        return usage_or_none(Usage(input_tokens=to_int(ud.get("input")), output_tokens=to_int(ud.get("output")),
                                   total_tokens=to_int(ud.get("total")), cache_read_tokens=to_int(cache),
                                   reasoning_tokens=to_int(reasoning)))
    u = mapping(o.get("usage"))
    return usage_or_none(Usage(
        input_tokens=to_int(u.get("input") if "input" in u else o.get("promptTokens")),
        output_tokens=to_int(u.get("output") if "output" in u else o.get("completionTokens")),
        total_tokens=to_int(u.get("total") if "total" in u else o.get("totalTokens"))))


def _cost(o: Mapping[str, Any]) -> float | None:
    cd = mapping(_decode(o.get("costDetails")))
    if "total" in cd:
        return to_float(cd["total"])
    for k in ("calculatedTotalCost", "totalCost"):
        if o.get(k) is not None:
            return to_float(o[k])
    return None


def _attrs(o: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(_decode(o.get("metadata"))).get("attributes"))


def _is_tool(o: Mapping[str, Any]) -> bool:
    if o.get("type") == "TOOL":
        return True
    a = _attrs(o)
    return str(a.get("openinference.span.kind", "")).upper() == "TOOL" or a.get("gen_ai.operation.name") == "execute_tool"


def _times(o: Mapping[str, Any]) -> dict[str, Any]:
    a, b = to_unix_seconds(o.get("startTime")), to_unix_seconds(o.get("endTime"))
    out: dict[str, Any] = {"span_id": o.get("id"), "parent_id": o.get("parentObservationId")}
    if a is not None:
        out["start_time"] = a
    if b is not None:
        out["end_time"] = b
    if a is not None and b is not None:
        out["latency_ms"] = (b - a) * 1000.0
    return {k: v for k, v in out.items() if v is not None}


def read(obj: Any) -> Trajectory:
    """One Langfuse trace with its observations. Raises ``TraceFormatError`` when ``obj`` is
    not an export of that shape."""
    d = as_plain(obj)
    if not is_export(d):
        raise TraceFormatError(f"{FORMAT}: expected {{'trace': {{...}}, 'observations': [...]}}")
    trace = mapping(d.get("trace")) if isinstance(d.get("trace"), Mapping) else d
    obs = [(i, as_plain(o)) for i, o in enumerate(d["observations"])]

    def key(p: tuple[int, Mapping[str, Any]]) -> tuple[float, float, int]:
        a, b = to_unix_seconds(p[1].get("startTime")), to_unix_seconds(p[1].get("endTime"))
        return (a if a is not None else float("inf"), b if b is not None else float("inf"), p[0])

    obs.sort(key=key)
    problems: list[str] = []
    turns: list[dict[str, Any]] = []
    for _, o in obs:
        if o.get("type") == "GENERATION":
            turns.append({"gen": o, "tools": []})
        elif _is_tool(o):
            if not turns:
                turns.append({"gen": None, "tools": []})
            turns[-1]["tools"].append(o)
    sl = StepList()
    user = first_user_text(trace.get("input"))
    if user is None and turns and turns[0]["gen"] is not None:
        user = first_user_text(turns[0]["gen"].get("input"))
    if user is not None:
        sl.add("user", content=user)
    for turn in turns:
        g = turn["gen"]
        text, requested = model_output(g.get("output")) if g is not None else (None, [])
        kw: dict[str, Any] = {}
        if g is not None:
            kw = {**_times(g), "usage": usage_of(g), "cost_usd": _cost(g)}
            if isinstance(g.get("model"), str):
                kw["model"] = g["model"]
            if g.get("level") == "ERROR":
                problems.append(f"observation {g.get('id')} ({g.get('name')}): generation failed: {g.get('statusMessage')}")
        used: set[int] = set()
        calls: list[ToolCall] = []
        results: list[tuple[ToolResult, dict[str, Any]]] = []
        for t in turn["tools"]:
            w = f"observation {t.get('id')} ({t.get('name')})"
            a = _attrs(t)
            name = a.get("tool.name") or a.get("gen_ai.tool.name") or t.get("name")
            if not isinstance(name, str) or not name:
                problems.append(f"{w}: field 'name' is missing")
                name = "" if name is None else str(name)
            raw = _decode(t.get("input"))
            err: str | None
            if raw is None:
                problems.append(f"{w}: field 'input' is missing; arguments unknown")
                args, raw_s, err = None, None, "arguments not recorded"
            else:
                args, raw_s, err = parse_args(raw, problems, w)
            cid = a.get("tool_call.id") or a.get("gen_ai.tool.call.id")
            if cid is None:
                k = next((j for j, (n, _) in enumerate(requested) if n == name and j not in used), None)
                if k is not None:
                    used.add(k)
                    cid = requested[k][1]
            cid = str(cid) if cid is not None else None
            calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=err))
            failed = t.get("level") == "ERROR"
            msg = t.get("statusMessage")
            results.append((ToolResult(call_id=cid, name=name, output=t.get("output"), is_error=failed,
                                       error=(str(msg) if msg else "error") if failed else None), _times(t)))
        if calls:
            sl.call(calls, content=text, **kw)
        elif g is not None:
            sl.add("assistant", content=text, **kw)
        for r, tk in results:
            sl.result(r, **tk)
    steps, final = mark_last_reply(list(sl.steps))
    if final is None and trace.get("output") is not None:
        out = _decode(trace["output"])
        final = out if isinstance(out, str) else model_output(out)[0]
    fs = tuple(steps)
    costs = [s.cost_usd for s in fs if s.cost_usd is not None]
    lat = to_float(trace.get("latency"))  # seconds in trace exports
    meta: dict[str, Any] = {}
    if isinstance(trace.get("name"), str):
        meta["name"] = trace["name"]
    if problems:
        meta["problems"] = problems
    tid, sid = trace.get("id"), trace.get("sessionId")
    return Trajectory(steps=fs, final_response=final, total_usage=sum_usage(fs),
                      total_cost_usd=sum(costs) if costs else None,
                      total_latency_ms=lat * 1000.0 if lat is not None else None, source_format=FORMAT,
                      trace_id=str(tid) if tid is not None else None,
                      session_id=str(sid) if sid is not None else None, metadata=meta)


__all__ = ["FORMAT", "is_export", "read", "usage_of"]
