"""Reader for DeepEval tool calls and trace payloads (research notes traces.md §6.1; deepeval 4.3).

Accepted: a list of ``ToolCall`` objects or dicts ``{name, input_parameters | inputParameters,
output?, description?, reasoning?}``, or an ``LLMTestCase``-like object/dict with ``input``,
``actual_output``, ``tools_called`` and optionally ``input_token_count``,
``output_token_count``, ``token_cost`` (USD) and ``completion_time`` (seconds). There each
call is its own ``tool_call`` step, followed by a ``tool_result`` when ``output`` is present;
such calls have no id and no error flag: ``call_id`` and ``is_error`` are None.

A trace payload, as DeepEval's tracer sends it to Confident AI (``{uuid, input, output,
llmSpans, toolSpans, agentSpans, baseSpans, ...}``, camelCase), is read from its spans
(``_turns``): each LLM span is a model turn (``inputTokenCount`` / ``outputTokenCount``,
``costPerInputToken`` / ``costPerOutputToken`` in USD, ``model``; the calls it requested
from its ``output`` with their ids: ``{content: {type: tool_call}}`` messages, or ``tool_calls``
in LangChain form ``{name, args, id}`` or OpenAI form ``{id, function: {name, arguments}}``),
each tool span an executed call (``input`` = args,
``output``, a LangChain ``ToolMessage`` dict unwrapped to its content, status and call id;
``status`` ``ERRORED`` = failed, else succeeded). The trace's ``input`` gives the user's
message, its ``output`` the final answer when no LLM span has one; latency is the trace's
``endTime - startTime``. ``toolsCalled`` is used only when there are no tool spans. Spans are
ordered by start time; a tool span that starts in the same millisecond as a model span comes
before it (the model call that requested the tool ended before it started), unless that model
span itself requested the tool's call id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._turns import ModelTurn, ToolRun, build, mark_final
from ._util import (
    StepList,
    as_plain,
    finalize,
    get,
    is_seq,
    parse_args,
    result_content,
    sum_usage,
    text_of,
    to_float,
    to_int,
    to_unix_seconds,
    tool_name,
    usage_or_none,
)

FORMAT = "deepeval"


def is_tool_call(c: Any) -> bool:
    """True for a DeepEval ToolCall object or dict (a ``name`` and an ``input_parameters`` / ``inputParameters`` key)."""
    if isinstance(c, Mapping):
        return isinstance(c.get("name"), str) and ("input_parameters" in c or "inputParameters" in c) \
            and "role" not in c
    return type(c).__module__.startswith("deepeval") and hasattr(c, "name")


_SPAN_KEYS = ("llmSpans", "toolSpans", "agentSpans", "baseSpans", "retrieverSpans")


def is_trace_payload(obj: Any) -> bool:
    """True for a DeepEval trace payload: a mapping with a list under one of the span keys
    (``llmSpans``, ``toolSpans``, ``agentSpans``, ``baseSpans``, ``retrieverSpans``) and a
    non-empty LLM or tool span list."""
    return isinstance(obj, Mapping) and any(is_seq(obj.get(k)) for k in _SPAN_KEYS) and (
        bool(obj.get("llmSpans")) or bool(obj.get("toolSpans")))


def _first_user(x: Any) -> str | None:
    """The first user message's text in a trace ``input``: a string, a list of ``{role,
    content}``, or a LangChain state ``{messages: [...]}``."""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping) and is_seq(x.get("messages")):
        x = x["messages"]
    if is_seq(x):
        for m in x:
            if isinstance(m, Mapping) and (m.get("role") in ("user", "human") or m.get("type") == "human"):
                t = text_of(m.get("content"))
                if t:
                    return t
    return None


def _tool_message(out: Any) -> tuple[Any, str | None, str | None]:
    """``(content, status, tool_call_id)`` of a LangChain ``ToolMessage`` dict, else ``(out, None, None)``."""
    if isinstance(out, Mapping) and out.get("type") == "tool" and "content" in out:
        c = out["content"]
        return result_content(c), out.get("status"), out.get("tool_call_id")
    return out, None, None


def _llm_output(out: Any, problems: list[str], w: str) -> tuple[str | None, list[ToolCall], bool]:
    """Text, requested calls and whether tools were requested, from an LLM span's ``output``."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    msgs = out if is_seq(out) else [out]
    for k, m in enumerate(msgs):
        if isinstance(m, str):
            texts.append(m)
            continue
        if not isinstance(m, Mapping):
            continue
        c = m.get("content")
        if isinstance(c, Mapping) and c.get("type") == "tool_call":
            name = tool_name(c.get("name"), problems, f"{w}.output[{k}]")
            args, raw, err = parse_args(c.get("arguments"), problems, f"{w}.output[{k}] ({name})")
            calls.append(ToolCall(name=name, args=args, call_id=None if c.get("id") is None else str(c["id"]),
                                  raw_args=raw, args_parse_error=err))
        else:
            t = text_of(c)
            if t:
                texts.append(t)
        for j, tc in enumerate(m.get("tool_calls") or ()):
            if not isinstance(tc, Mapping):
                continue
            if isinstance(tc.get("function"), Mapping):  # OpenAI chat: {id, type, function: {name, arguments}}
                tc = {**tc["function"], "id": tc.get("id")}
            name = tool_name(tc.get("name"), problems, f"{w}.output.tool_calls[{j}]")
            args, raw, err = parse_args(tc.get("args", tc.get("arguments")), problems,
                                        f"{w}.output.tool_calls[{j}] ({name})")
            calls.append(ToolCall(name=name, args=args, call_id=None if tc.get("id") is None else str(tc["id"]),
                                  raw_args=raw, args_parse_error=err))
    return ("\n".join(texts) if texts else None), calls, bool(calls)


def _input_results(inp: Any) -> list[ToolResult]:
    out: list[ToolResult] = []
    for m in inp if is_seq(inp) else ():
        c = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(c, Mapping) and c.get("type") == "tool_call_response":
            out.append(ToolResult(call_id=None if c.get("id") is None else str(c["id"]), name=c.get("name"),
                                  output=c.get("result")))
    return out


def _span_times(sp: Mapping[str, Any]) -> tuple[float | None, float | None, float | None]:
    s, e = to_unix_seconds(sp.get("startTime")), to_unix_seconds(sp.get("endTime"))
    return s, e, (e - s) * 1000.0 if s is not None and e is not None else None


def _event_order(events: list[tuple[float, int, ModelTurn | ToolRun]]) -> Any:
    """The sort key of the spans: start time; at the same start (timestamps are in
    milliseconds, so a quick tool and the model call it feeds can share one) a tool span comes
    before a model span -- the model call that requested it ended before it started -- unless
    that same-start model span requested the tool's call id; then span order."""
    same_start_ids: dict[float, set[str]] = {}
    for s, _, ev in events:
        if isinstance(ev, ModelTurn):
            same_start_ids.setdefault(s, set()).update(c.call_id for c in ev.requested if c.call_id)

    def key(x: tuple[float, int, ModelTurn | ToolRun]) -> tuple[float, int, int]:
        s, i, ev = x
        if isinstance(ev, ModelTurn):
            return (s, 1, i)
        return (s, 2 if ev.call.call_id in same_start_ids.get(s, ()) else 0, i)

    return key


def _read_trace(obj: Mapping[str, Any]) -> Trajectory:
    problems: list[str] = []
    events: list[tuple[float, int, ModelTurn | ToolRun]] = []
    for i, sp in enumerate(obj.get("llmSpans") or ()):
        if not isinstance(sp, Mapping):
            problems.append(f"llmSpans[{i}]: not an object; skipped")
            continue
        w = f"llmSpans[{i}] ({sp.get('uuid')})"
        s, e, lat = _span_times(sp)
        text, req, any_req = _llm_output(sp.get("output"), problems, w)
        tin, tout = to_int(sp.get("inputTokenCount")), to_int(sp.get("outputTokenCount"))
        cpi, cpo = to_float(sp.get("costPerInputToken")), to_float(sp.get("costPerOutputToken"))
        cost = None
        if cpi is not None or cpo is not None:
            cost = (cpi or 0.0) * (tin or 0) + (cpo or 0.0) * (tout or 0)
        model = sp.get("model")
        events.append((s if s is not None else float("inf"), len(events), ModelTurn(
            content=text, requested=req, requested_any=any_req, input_results=_input_results(sp.get("input")),
            usage=usage_or_none(Usage(input_tokens=tin, output_tokens=tout)), cost_usd=cost,
            model=model if isinstance(model, str) else None, start=s, end=e, latency_ms=lat,
            span_id=None if sp.get("uuid") is None else str(sp["uuid"]),
            parent_id=None if sp.get("parentUuid") is None else str(sp["parentUuid"]))))
        if str(sp.get("status", "")).upper() == "ERRORED":
            problems.append(f"{w}: LLM span failed: {str(sp.get('error'))[:200]}")
    for i, sp in enumerate(obj.get("toolSpans") or ()):
        if not isinstance(sp, Mapping):
            problems.append(f"toolSpans[{i}]: not an object; skipped")
            continue
        w = f"toolSpans[{i}] ({sp.get('uuid')})"
        s, e, lat = _span_times(sp)
        name = tool_name(sp.get("name"), problems, w)
        if sp.get("input") is None:
            problems.append(f"{w}: tool span has no 'input'; arguments unknown")
            err: str | None = "no arguments recorded"
            args, raw = None, None
        else:
            args, raw, err = parse_args(sp.get("input"), problems, f"{w} ({name})")
        out, status, cid = _tool_message(sp.get("output"))
        failed = str(sp.get("status", "")).upper() == "ERRORED" or status == "error"
        error = sp.get("error") if isinstance(sp.get("error"), str) else None
        cid = None if cid is None else str(cid)
        events.append((s if s is not None else float("inf"), len(events), ToolRun(
            call=ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err),
            result=ToolResult(call_id=cid, name=name, output=out, is_error=failed,
                              error=error or (str(out) if failed and out is not None else None) if failed else None),
            start=s, end=e, latency_ms=lat, span_id=None if sp.get("uuid") is None else str(sp["uuid"]),
            parent_id=None if sp.get("parentUuid") is None else str(sp["parentUuid"]))))
    events.sort(key=_event_order(events))
    sl = StepList()
    user = _first_user(obj.get("input"))
    if user is not None:
        sl.add("user", content=user)
    if not obj.get("toolSpans") and is_seq(obj.get("toolsCalled")):
        problems.append("no tool spans; calls read from 'toolsCalled' (no ids, no order among model turns)")
        build([ev for _, _, ev in events if isinstance(ev, ModelTurn) and not ev.requested], sl)
        base = read({"toolsCalled": obj["toolsCalled"]})
        for st in base.steps:
            sl.add(st.kind, content=st.content, tool_calls=st.tool_calls, tool_result=st.tool_result)
    else:
        build([ev for _, _, ev in events], sl)
    steps, final = mark_final(sl.steps)
    if final is None:
        fo = obj.get("output")
        if isinstance(fo, str) and fo:
            final = fo
        elif isinstance(fo, Mapping) and is_seq(fo.get("messages")) and fo["messages"]:
            last = fo["messages"][-1]
            if isinstance(last, Mapping) and last.get("type") == "ai" and not last.get("tool_calls"):
                final = text_of(last.get("content"))
    s, e, lat = _span_times(obj)
    costs = [st.cost_usd for st in steps if st.cost_usd is not None]
    meta: dict[str, Any] = {}
    if isinstance(obj.get("name"), str):
        meta["name"] = obj["name"]
    if problems:
        meta["problems"] = problems
    tid = obj.get("uuid")
    thread = obj.get("threadId")
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps),
                      total_cost_usd=sum(costs) if costs else None, total_latency_ms=lat, source_format=FORMAT,
                      trace_id=None if tid is None else str(tid),
                      session_id=None if thread is None else str(thread), metadata=meta)


def read(obj: Any) -> Trajectory:
    """Read DeepEval tool calls, a test case or a trace payload into a ``Trajectory``.

    Raises ``TraceFormatError`` when ``obj`` is neither a list, a trace payload, nor has
    ``tools_called``.
    """
    if not is_seq(obj):
        plain = as_plain(obj)
        if is_trace_payload(plain):
            return _read_trace(plain)
    calls_src: Any = obj
    usage = None
    cost = latency = None
    user = final = None
    if not is_seq(obj):
        calls_src = get(obj, "tools_called", "toolsCalled")
        if calls_src is None and not is_seq(calls_src):
            raise TraceFormatError(f"{FORMAT}: expected a list of ToolCall or a test case with 'tools_called', "
                                   f"got {type(obj).__name__}")
        user = get(obj, "input")
        final = get(obj, "actual_output", "actualOutput")
        usage = usage_or_none(Usage(input_tokens=to_int(get(obj, "input_token_count")),
                                    output_tokens=to_int(get(obj, "output_token_count"))))
        cost = to_float(get(obj, "token_cost"))
        t = to_float(get(obj, "completion_time"))
        latency = t * 1000.0 if t is not None else None
    if not is_seq(calls_src):
        raise TraceFormatError(f"{FORMAT}: 'tools_called' is not a list")
    problems: list[str] = []
    sl = StepList()
    if isinstance(user, str):
        sl.add("user", content=user)
    for i, c in enumerate(calls_src):
        w = f"tools_called[{i}]"
        name = tool_name(get(c, "name"), problems, w)
        params = get(c, "input_parameters", "inputParameters")
        args, raw, err = parse_args(params, problems, f"{w} ({name})")
        sl.call([ToolCall(name=name, args=args, raw_args=raw, args_parse_error=err,
                          tool_type="mcp" if str(get(c, "type", default="")).upper().endswith("MCP") else "function")])
        out = get(c, "output", default=_NONE)
        if out is not _NONE:
            sl.result(ToolResult(call_id=None, name=name, output=as_plain(out)))
    if isinstance(final, str):
        sl.add("assistant", content=final)
    final_steps, final_text = finalize(sl.steps)
    return Trajectory(steps=final_steps, final_response=final_text, total_usage=usage, total_cost_usd=cost,
                      total_latency_ms=latency, source_format=FORMAT,
                      metadata={"problems": problems} if problems else {})


_NONE = object()
