"""Reader for promptfoo provider output (``ProviderResponse``; research notes traces.md §6.4).

Shape: ``{output, tokenUsage?: {prompt, completion, total, cached, completionDetails:
{reasoning}}, latencyMs?, cost?, error?, finishReason?, metadata?: {toolCalls: [{id, name,
input, output, is_error}]}}``.

Calls come from ``metadata.toolCalls`` (each a call step plus a result step with its
``is_error``) when present; otherwise from ``output`` when it is what promptfoo's OpenAI
chat provider returns for a tool-calling reply: the raw ``tool_calls`` list (or that list
as a JSON string), a legacy ``function_call`` object, or the whole assistant message
(text and ``tool_calls``). A string ``output`` that is not a call list is the final
response. ``tokenUsage`` -> ``total_usage`` (``cached`` -> ``cache_read_tokens``),
``latencyMs`` -> ``total_latency_ms``, ``cost`` -> ``total_cost_usd`` (USD),
``error`` -> ``metadata["error"]``. A ``prompt`` string (the rendered prompt that a
``promptfoo eval -o`` file records beside each response, see ``wrappers``) -> a ``user`` step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    call_args,
    figure,
    finalize,
    is_seq,
    mapping,
    tool_name,
    usage_or_none,
)
from .messages import openai_calls as _calls_of

FORMAT = "promptfoo"


def is_provider_response(obj: Any) -> bool:
    """True for a dict with ``output`` and a promptfoo-specific key (tokenUsage, latencyMs, cost, metadata.toolCalls, finishReason, cached)."""
    if not isinstance(obj, Mapping) or "output" not in obj:
        return False
    md = obj.get("metadata")
    return any(k in obj for k in ("tokenUsage", "latencyMs", "cost", "finishReason", "cached", "isRefusal")) or (
        isinstance(md, Mapping) and "toolCalls" in md)


def _output_calls(out: Any, problems: list[str]) -> tuple[list[ToolCall], str | None] | None:
    if isinstance(out, str):
        s = out.strip()
        if s.startswith("[") or s.startswith("{"):
            try:
                val = json.loads(s)
            except ValueError:
                return None
            got = _output_calls(val, problems)
            return got if got and got[0] else None
        return None
    if is_seq(out) and out and all(isinstance(x, Mapping) and ("function" in x or "custom" in x) for x in out):
        return _calls_of({"tool_calls": out}, problems, "output"), None
    if isinstance(out, Mapping):
        if "tool_calls" in out or "function_call" in out:
            calls = _calls_of(out, problems, "output")
            content = out.get("content")
            return calls, content if isinstance(content, str) and content else None
        if "name" in out and "arguments" in out:
            return _calls_of({"function_call": out}, problems, "output"), None
    return None


def read(obj: Any) -> Trajectory:
    """Read one promptfoo provider response into a ``Trajectory``; raises ``TraceFormatError`` without ``output``."""
    obj = as_plain(obj)
    if not isinstance(obj, Mapping) or "output" not in obj:
        raise TraceFormatError(f"{FORMAT}: expected a provider response with 'output', got {type(obj).__name__}")
    problems: list[str] = []
    sl = StepList()
    if isinstance(obj.get("prompt"), str) and obj["prompt"]:
        sl.add("user", content=obj["prompt"])
    out = obj.get("output")
    md = mapping(obj.get("metadata"))
    meta: dict[str, Any] = {}
    tcs = md.get("toolCalls")
    if is_seq(tcs):
        for i, tc in enumerate(tcs):
            tc = as_plain(tc)
            w = f"metadata.toolCalls[{i}]"
            if not isinstance(tc, Mapping):
                problems.append(f"{w}: not an object; skipped")
                continue
            name = tool_name(tc.get("name"), problems, w)
            args, raw, err = call_args(tc, ("input", "arguments"), problems, f"{w} ({name})")
            cid = None if tc.get("id") is None else str(tc["id"])
            sl.call([ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err)])
            if "output" in tc or "is_error" in tc:
                ie = tc.get("is_error")
                is_err = ie if isinstance(ie, bool) else None
                o = tc.get("output")
                sl.result(ToolResult(call_id=cid, name=name, output=o, is_error=is_err,
                                     error=o if is_err and isinstance(o, str) else None))
        if isinstance(out, str) and out:
            sl.add("assistant", content=out)
    else:
        got = _output_calls(out, problems)
        if got is not None:
            calls, text = got
            sl.call(calls, content=text)
        elif isinstance(out, str):
            sl.add("assistant", content=out)
        elif out is not None:
            sl.add("assistant", content=json.dumps(out, default=str))
    tu = mapping(obj.get("tokenUsage"))
    cd = mapping(tu.get("completionDetails"))
    usage = usage_or_none(Usage(
        input_tokens=figure(tu.get("prompt"), "tokenUsage.prompt", problems, integer=True),
        output_tokens=figure(tu.get("completion"), "tokenUsage.completion", problems, integer=True),
        total_tokens=figure(tu.get("total"), "tokenUsage.total", problems, integer=True),
        cache_read_tokens=figure(tu.get("cached"), "tokenUsage.cached", problems, integer=True),
        reasoning_tokens=figure(cd.get("reasoning"), "tokenUsage.completionDetails.reasoning", problems,
                                integer=True)))
    # a text cost or latency ("free") is unknown, said so with the run's location (not dropped)
    cost = figure(obj.get("cost"), "cost", problems)
    latency = figure(obj.get("latencyMs"), "latencyMs", problems)
    if obj.get("error"):
        meta["error"] = str(obj["error"])
    for k in ("finishReason", "sessionId"):
        if isinstance(obj.get(k), str):
            meta[k] = obj[k]
    final_steps, final = finalize(sl.steps)
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=final_steps, final_response=final, total_usage=usage,
                      total_cost_usd=cost, total_latency_ms=latency,
                      source_format=FORMAT, metadata=meta)
