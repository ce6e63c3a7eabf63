"""Reader for OpenAI Agents SDK traces (``openai-agents`` tracing, ``agents.tracing``).

Accepted: the body the SDK's own exporter POSTs to ``/v1/traces/ingest`` (``{"data": [...]}``
holding ``{"object": "trace", "id", "workflow_name", ...}`` and ``{"object": "trace.span",
"id", "trace_id", "parent_id", "started_at", "ended_at", "span_data", "error"}`` items), a list
of such items or of such bodies (the exporter's batches saved as one JSON list), or one per
JSONL line (what a custom ``TracingProcessor`` writes with
``span.export()`` / ``trace.export()``). Items are grouped into one run per ``trace_id``.

Span mapping (field names from ``agents/tracing/span_data.py``), spans ordered by
``started_at``, then ``ended_at``, then file order:

- ``response`` / ``generation`` span: one model call. Its ``usage`` (``input_tokens``,
  ``output_tokens``, ``total_tokens``, ``input_tokens_details.cached_tokens``,
  ``output_tokens_details.reasoning_tokens``; chat-style ``prompt_tokens`` /
  ``completion_tokens`` too) is the step's usage. A ``generation`` span's ``output`` messages
  give the text and the requested calls' ids (each function span takes the id of the first
  unused requested call of its tool).
- ``function`` span: one tool call (``name``, ``input`` = JSON arguments, ``output``) and its
  result; ``error`` (``{"message", "data"}``) makes the result failed, else it succeeded.
  Function spans after one model span and before the next are that model call's calls, so
  calls the SDK ran in parallel for one model turn stay in one step.
- the SDK repeats usage on ``task`` / ``turn`` custom spans (per run / per turn aggregates)
  and in span ``metadata.usage``; those are used only when no model span carries usage, so
  usage is counted once per model call.
- ``agent`` spans name the agent of the spans under them; ``handoff``, ``guardrail``,
  ``mcp_tools`` and other spans are not steps (handoffs are kept in ``metadata``).

Response spans carry only the response id, not its text: a run traced with the Responses
API has no final response text in its trace (``final_response`` None).
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
    parse_args,
    text_of,
    to_int,
    to_unix_seconds,
    usage_or_none,
)

FORMAT = "openai_agents"
_MODEL_SPANS = ("response", "generation")


def is_item(obj: Any) -> bool:
    """True for one exported SDK trace or span (``object`` = ``trace`` / ``trace.span``)."""
    if not isinstance(obj, Mapping):
        return False
    o = obj.get("object")
    if o == "trace.span":
        return isinstance(obj.get("span_data"), Mapping)
    return o == "trace" and isinstance(obj.get("id"), str)


def _is_body(obj: Any) -> bool:
    """True for an ingest body: a mapping with a ``data`` list and no ``object``."""
    return isinstance(obj, Mapping) and "object" not in obj and is_seq(obj.get("data"))


def _flat(obj: Any) -> list[Any]:
    """The items of an ingest body, of a list of items and bodies (a JSON list of the
    exporter's bodies), or the object itself as its only item."""
    obj = as_plain(obj)
    if _is_body(obj):
        return list(obj["data"])
    if is_seq(obj):
        out: list[Any] = []
        for x in obj:
            x = as_plain(x)
            out.extend(x["data"] if _is_body(x) else [x])
        return out
    return [obj]


def is_payload(obj: Any) -> bool:
    """True for an ingest body ``{"data": [items]}``, a list of items or of such bodies, or one
    item, where at least one item is a span."""
    obj = as_plain(obj)
    if isinstance(obj, Mapping) and not _is_body(obj):
        return is_item(obj) and obj.get("object") == "trace.span"
    items = [as_plain(x) for x in _flat(obj)]
    if not items:
        return False
    return all(is_item(x) for x in items) and any(x.get("object") == "trace.span" for x in items)


def _items(objs: list[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for o in objs:
        for x in _flat(o):
            x = as_plain(x)
            if not is_item(x):
                raise TraceFormatError(f"{FORMAT}: expected exported traces and spans "
                                       f"({{'object': 'trace.span', 'span_data': ...}}), got {type(x).__name__}")
            out.append(x)
    return out


def usage_of(u: Any) -> Usage | None:
    """A ``Usage`` from the SDK's usage dict (Responses or Chat Completions names); None when empty."""
    u = mapping(u)
    if not u:
        return None
    ind = mapping(u.get("input_tokens_details") or u.get("prompt_tokens_details"))
    outd = mapping(u.get("output_tokens_details") or u.get("completion_tokens_details"))
    cached = to_int(ind.get("cached_tokens"))
    if cached is None:
        cached = to_int(u.get("cached_input_tokens"))
    return usage_or_none(Usage(
        input_tokens=to_int(u["input_tokens"] if "input_tokens" in u else u.get("prompt_tokens")),
        output_tokens=to_int(u["output_tokens"] if "output_tokens" in u else u.get("completion_tokens")),
        total_tokens=to_int(u.get("total_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=to_int(u.get("cache_write_input_tokens")),
        reasoning_tokens=to_int(outd.get("reasoning_tokens")),
    ))


def _custom(sd: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """``(sdk_span_type, data)`` of a ``custom`` span (``task`` / ``turn`` spans are custom)."""
    data = mapping(sd.get("data"))
    return (data.get("sdk_span_type") or sd.get("name")), data


def _gen_output(sd: Mapping[str, Any]) -> tuple[str | None, list[tuple[str | None, str | None]]]:
    """Text and requested ``(tool name, call id)`` calls of a generation span's output messages."""
    texts: list[str] = []
    calls: list[tuple[str | None, str | None]] = []
    for m in sd.get("output") or ():
        m = mapping(m)
        t = text_of(m.get("content"))
        if t:
            texts.append(t)
        for tc in m.get("tool_calls") or ():
            tc = mapping(tc)
            cid, fn = tc.get("id"), mapping(tc.get("function"))
            calls.append((fn.get("name"), str(cid) if cid is not None else None))
    return ("\n".join(texts) if texts else None), calls


def _error_text(err: Any) -> str:
    e = mapping(err)
    msg = e.get("message")
    data = mapping(e.get("data"))
    detail = data.get("error")
    if isinstance(msg, str) and detail is not None:
        return f"{msg}: {detail}"
    return msg if isinstance(msg, str) and msg else str(err)


def _trajectory(trace: Mapping[str, Any] | None, spans: list[tuple[int, Mapping[str, Any]]]) -> Trajectory:
    problems: list[str] = []

    def key(p: tuple[int, Mapping[str, Any]]) -> tuple[float, float, int]:
        s = p[1]
        a, b = to_unix_seconds(s.get("started_at")), to_unix_seconds(s.get("ended_at"))
        return (a if a is not None else float("inf"), b if b is not None else float("inf"), p[0])

    spans = sorted(spans, key=key)
    by_id = {str(s.get("id")): s for _, s in spans}

    def agent_of(s: Mapping[str, Any]) -> str | None:
        seen: set[str] = set()
        p = s.get("parent_id")
        while isinstance(p, str) and p in by_id and p not in seen:
            seen.add(p)
            sd = mapping(by_id[p].get("span_data"))
            if sd.get("type") == "agent" and isinstance(sd.get("name"), str):
                return str(sd["name"])
            p = by_id[p].get("parent_id")
        return None

    # one turn per model span; function spans join the latest model span before them
    turns: list[dict[str, Any]] = []
    turn_usage: list[Usage] = []
    task_usage: list[Usage] = []
    handoffs: list[dict[str, Any]] = []
    for _, s in spans:
        sd = mapping(s.get("span_data"))
        typ = sd.get("type")
        if typ in _MODEL_SPANS:
            turns.append({"model": s, "calls": []})
        elif typ == "function":
            if not turns:
                turns.append({"model": None, "calls": []})
            turns[-1]["calls"].append(s)
        elif typ == "custom":
            kind, data = _custom(sd)
            u = usage_of(data.get("usage"))
            if u is not None and kind == "turn":
                turn_usage.append(u)
            elif u is not None and kind == "task":
                task_usage.append(u)
        elif typ == "handoff":
            handoffs.append({"from_agent": sd.get("from_agent"), "to_agent": sd.get("to_agent")})

    sl = StepList()
    any_model_usage = False
    for turn in turns:
        m = turn["model"]
        common: dict[str, Any] = {}
        content = None
        usage = None
        requested: list[tuple[str | None, str | None]] = []
        model_name = None
        if m is not None:
            sd = mapping(m.get("span_data"))
            usage = usage_of(sd.get("usage"))
            any_model_usage = any_model_usage or usage is not None
            if sd.get("type") == "generation":
                content, requested = _gen_output(sd)
                model_name = sd.get("model") if isinstance(sd.get("model"), str) else None
            common = _times(m)
            agent = agent_of(m)
            if agent:
                common["agent_name"] = agent
            if m.get("error") is not None:
                problems.append(f"span {m.get('id')} ({sd.get('type')}): model call failed: {_error_text(m['error'])}")
        calls: list[ToolCall] = []
        results: list[tuple[ToolResult, dict[str, Any]]] = []
        used: set[int] = set()
        for f in turn["calls"]:
            sd = mapping(f.get("span_data"))
            w = f"span {f.get('id')} (function)"
            name = sd.get("name")
            if not isinstance(name, str) or not name:
                problems.append(f"{w}: field 'span_data.name' is missing")
                name = "" if name is None else str(name)
            raw = sd.get("input")
            err: str | None
            if raw is None:
                problems.append(f"{w}: the span has no 'span_data.input'; arguments unknown")
                args, raw_s, err = None, None, "arguments not recorded"
            else:
                args, raw_s, err = parse_args(raw, problems, w)
            # the id of the first unused requested call of this tool (a handoff is requested too,
            # but runs no function span, so positions alone would shift)
            k = next((j for j, (n, _) in enumerate(requested) if n == name and j not in used), None)
            cid = None
            if k is not None:
                used.add(k)
                cid = requested[k][1]
            calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=err,
                                  tool_type="mcp" if sd.get("mcp_data") else None))
            failed = f.get("error") is not None
            results.append((ToolResult(call_id=cid, name=name, output=sd.get("output"), is_error=failed,
                                       error=_error_text(f["error"]) if failed else None),
                            {**_times(f), "span_id": f.get("id"), "parent_id": f.get("parent_id")}))
        model = {"model": model_name} if model_name else {}
        if calls:
            sl.call(calls, content=content, usage=usage, **model, **common)
        elif m is not None:
            sl.add("assistant", content=content, usage=usage, **model, **common)
        for r, kw in results:
            sl.result(r, **{k: v for k, v in kw.items() if v is not None})

    steps, final = mark_last_reply(list(sl.steps))
    if any_model_usage:
        total = _sum(s.usage for s in steps)
    elif turn_usage:
        total = _sum(turn_usage)
    else:
        total = _sum(task_usage)
    starts = [to_unix_seconds(s.get("started_at")) for _, s in spans]
    ends = [to_unix_seconds(s.get("ended_at")) for _, s in spans]
    st = [x for x in starts if x is not None]
    en = [x for x in ends if x is not None]
    meta: dict[str, Any] = {}
    tr = mapping(trace)
    if isinstance(tr.get("workflow_name"), str):
        meta["workflow_name"] = tr["workflow_name"]
    if isinstance(tr.get("metadata"), Mapping):
        meta.update({str(k): v for k, v in tr["metadata"].items() if k != "problems"})
    if handoffs:
        meta["handoffs"] = handoffs
    if problems:
        meta["problems"] = problems
    tid = tr.get("id") or (spans[0][1].get("trace_id") if spans else None)
    gid = tr.get("group_id")
    return Trajectory(steps=tuple(steps), final_response=final, total_usage=total,
                      total_latency_ms=(max(en) - min(st)) * 1000.0 if st and en else None,
                      source_format=FORMAT, trace_id=str(tid) if tid is not None else None,
                      session_id=str(gid) if gid is not None else None, metadata=meta)


def _times(s: Mapping[str, Any]) -> dict[str, Any]:
    a, b = to_unix_seconds(s.get("started_at")), to_unix_seconds(s.get("ended_at"))
    out: dict[str, Any] = {"start_time": a, "end_time": b, "span_id": s.get("id"), "parent_id": s.get("parent_id")}
    if a is not None and b is not None:
        out["latency_ms"] = (b - a) * 1000.0
    return {k: v for k, v in out.items() if v is not None}


def _sum(us: Any) -> Usage | None:
    total: Usage | None = None
    for u in us:
        if u is not None:
            total = u if total is None else total + u
    return total


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per ``trace_id`` over every item in ``objs`` (ingest bodies, item lists or
    single items), in order of first appearance. Raises ``TraceFormatError`` when an item is not
    an exported trace or span."""
    traces: dict[str, Mapping[str, Any]] = {}
    groups: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    for i, x in enumerate(_items(objs)):
        if x.get("object") == "trace":
            traces[str(x["id"])] = x
            groups.setdefault(str(x["id"]), [])
        else:
            groups.setdefault(str(x.get("trace_id")), []).append((i, x))
    return [_trajectory(traces.get(tid), spans) for tid, spans in groups.items() if spans]


def read(obj: Any) -> Trajectory:
    """The spans of ``obj`` as one trajectory; raises ``TraceFormatError`` when ``obj`` holds no
    span or the spans of more than one trace (use ``trajcheck.read.traces.load`` for those)."""
    trajs = read_all([obj])
    if len(trajs) != 1:
        raise TraceFormatError(f"{FORMAT}: expected the spans of one trace, found {len(trajs)} traces")
    return trajs[0]


__all__ = ["FORMAT", "is_item", "is_payload", "read", "read_all", "usage_of"]
