"""Haystack's own OpenTelemetry spans, as the OTel reader's GenAI keys.

Haystack (``haystack-ai`` >= 2.x; the tracer itself is ``opentelemetry-haystack``'s
``OpenTelemetryTracer`` since 3.x) names its spans and tags after itself rather than after the
GenAI conventions; with content tracing on (``HAYSTACK_CONTENT_TRACING_ENABLED=true``) the
tags hold the calls, their results and the model's messages as JSON text:

=================================  =============================================================
span                               what is read
=================================  =============================================================
``haystack.agent.step.tool``       one tool call: ``haystack.tool.name``, arguments
                                   ``haystack.agent.step.tool.input``, result
                                   ``haystack.agent.step.tool.output``; ``haystack.tool.error``
                                   true -> failed, the output's ``{"error": text}`` the error.
                                   No call id is recorded: the call takes the id of the model's
                                   requested call it matches (name, then arguments).
``haystack.agent.step.llm``        one model call: ``...llm.output`` ``{"replies": [ChatMessage]}``
                                   (``tool_call`` parts with ids, text, ``meta.usage``,
                                   ``meta.model``), ``...llm.input`` ``{"messages": [...]}`` (the
                                   user's text, ``tool_call_result`` parts)
``haystack.component.run``         a chat generator run in a pipeline (an output with assistant
                                   ``replies``): read as a model call from
                                   ``haystack.component.input`` / ``.output``
``haystack.component.run`` of a    the calls it ran (``invoker_runs``; Haystack 2.x opens no span
``ToolInvoker``                    per tool call, the Agent runs its ``ToolInvoker`` as a
                                   component): ``haystack.component.output``'s ``tool_messages``,
                                   each ``tool_call_result`` one call (its ``origin``: name,
                                   arguments, id) and its result (``result``; ``error`` true ->
                                   failed, the result text the error); without an output, the
                                   calls of ``haystack.component.input``'s ``messages`` and a
                                   problem (results unknown; one call in a span with the error
                                   status, the invoker raised: that call failed with the span's
                                   message); without either, a problem
``haystack.agent.run``             the agent: ``haystack.agent.output``'s last assistant text
                                   is its answer when no model span carries one
=================================  =============================================================

``lift(span)`` lays these as ``gen_ai.*`` attributes over the span (the span's own ``gen_ai.*``
attributes win), so ``otel`` reads them with its one mapping of keys; ``component_runs(span)``
gives a ``ToolInvoker``'s calls (one span, many calls) and names a chat generator's or tool
invoker's span that records no content. The ChatMessage dicts are read by the one message
normaliser (``messages.normalise``). A component span that holds a tool or model span of its
own (another instrumentation, or a Haystack that opens them) is not read: ``otel`` reads the
inner spans, so no call or turn is counted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...model import ToolCall, ToolResult
from . import messages as msgs
from ._turns import ToolRun
from ._util import is_seq, mapping
from ._util import json_or_text as _json

TOOL_SPAN = "haystack.agent.step.tool"
LLM_SPAN = "haystack.agent.step.llm"
AGENT_SPAN = "haystack.agent.run"
COMPONENT_SPAN = "haystack.component.run"
PREFIX = "haystack."
#: added to the problem of a Haystack tool span without arguments
CONTENT_HINT = " (Haystack records them only with HAYSTACK_CONTENT_TRACING_ENABLED=true)"


def _flag(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def _error_text(out: Any) -> str:
    """A failed tool's error text: Haystack writes ``{"error": text}`` as the output."""
    val = _json(out)
    if isinstance(val, Mapping) and isinstance(val.get("error"), str):
        return val["error"]
    if isinstance(val, str) and val:
        return val
    return "haystack.tool.error"


def _normalised(raw: Any, key: str) -> list[msgs.Message]:
    """The ChatMessage dicts under ``key`` of a JSON tag, in the common form."""
    val = _json(raw)
    items = val.get(key) if isinstance(val, Mapping) else None
    out: list[msgs.Message] = []
    for i, m in enumerate(items if is_seq(items) else ()):
        got = msgs.normalise(m, [], f"{key}[{i}]")  # not a message: nothing to read from it here
        if got is not None:
            out.append(got)
    return out


def _output_messages(replies: list[msgs.Message]) -> list[dict[str, Any]]:
    out = []
    for m in replies:
        parts: list[dict[str, Any]] = [{"type": "text", "content": t} for t in m.texts]
        parts += [{"type": "tool_call", "id": c.call_id, "name": c.name,
                   "arguments": c.args if c.args is not None else c.raw_args} for c in m.calls]
        out.append({"role": m.role, "parts": parts})
    return out


def _input_messages(prompt: list[msgs.Message]) -> list[dict[str, Any]]:
    out = []
    for m in prompt:
        parts: list[dict[str, Any]] = [{"type": "text", "content": t} for t in m.texts]
        parts += [{"type": "tool_call_response", "id": r.call_id, "response": r.output} for r in m.results]
        out.append({"role": m.role, "parts": parts})
    return out


def _lift_model(a: dict[str, Any], in_key: str, out_key: str) -> bool:
    """Model-call attributes from a span whose ``out_key`` holds assistant ``replies``; False
    (nothing set) when it holds none."""
    replies = [m for m in _normalised(a.get(out_key), "replies") if m.role == "assistant"]
    if not replies:
        return False
    a.setdefault("gen_ai.operation.name", "chat")
    a.setdefault("gen_ai.output.messages", _output_messages(replies))
    a.setdefault("gen_ai.input.messages", _input_messages(_normalised(a.get(in_key), "messages")))
    used = [m.usage for m in replies if m.usage is not None]
    if used:
        a.setdefault("gen_ai.usage.input_tokens", sum(u.input_tokens or 0 for u in used))
        a.setdefault("gen_ai.usage.output_tokens", sum(u.output_tokens or 0 for u in used))
    model = next((m.model for m in replies if m.model), None)
    if model is None:
        meta = next((x.get("meta") for x in (_json(a.get(out_key)) or {}).get("replies") or ()
                     if isinstance(x, Mapping) and isinstance(x.get("meta"), Mapping)), None)
        model = meta.get("model") if isinstance(meta, Mapping) else None
    if isinstance(model, str):
        a.setdefault("gen_ai.response.model", model)
    return True


def _component_type(a: Mapping[str, Any]) -> str:
    t = a.get("haystack.component.fully_qualified_type") or a.get("haystack.component.type")
    return t.rsplit(".", 1)[-1] if isinstance(t, str) else ""


def component_runs(span: dict[str, Any], problems: list[str], where: str,
                   times: dict[str, Any]) -> list[ToolRun] | None:
    """The tool calls a ``ToolInvoker``'s ``haystack.component.run`` span ran (module table), in
    the order of its ``tool_messages``, each with its result; the span's times are each run's.
    A ToolInvoker or chat generator span that records no content adds a problem naming it.

    Args:
        span: a ``haystack.component.run`` span as ``otel`` holds it, already ``lift``-ed and
            not read as a model call.
        problems: where problems are appended.
        where: the span as problems name it.
        times: the step fields of the span (start, end, latency_ms, span_id, parent_id,
            agent_name), given to each run.

    Returns:
        The runs (maybe none, with a problem), or None for a span that is neither a
        ToolInvoker nor a chat generator (nothing to read from it here).
    """
    a = span["attrs"]
    ctype = _component_type(a)
    out = _json(a.get("haystack.component.output"))
    tool_msgs = out.get("tool_messages") if isinstance(out, Mapping) else None
    if ctype.endswith("ChatGenerator") and tool_msgs is None:
        if a.get("haystack.component.output") is None:
            problems.append(f"{where}: {ctype} span records no output (haystack.component.output): the model "
                            "call's replies, requested calls and usage are unknown" + CONTENT_HINT)
        return None
    if ctype != "ToolInvoker" and tool_msgs is None:
        return None
    if is_seq(tool_msgs):
        return [_run(part, problems, f"{where}: tool_messages[{i}]", times)
                for i, m in enumerate(tool_msgs) for part in mapping(m).get("content") or ()
                if isinstance(mapping(part).get("tool_call_result"), Mapping)]
    calls = [c for m in _normalised(a.get("haystack.component.input"), "messages") for c in m.calls]
    if a.get("haystack.component.input") is None and a.get("haystack.component.output") is None:
        problems.append(f"{where}: ToolInvoker span records no content (haystack.component.input / .output): "
                        "the tool calls it ran are unknown" + CONTENT_HINT)
        return []
    msg = span.get("status_message") or "error status"
    if span.get("status_error") and len(calls) == 1:
        # the invoker raised (raise_on_failure=True) running its one call: that call failed
        problems.append(f"{where}: ToolInvoker span records no tool_messages in haystack.component.output (it "
                        f"raised: {msg}): its one call is read as failed with that error, its output unknown")
        c = calls[0]
        return [ToolRun(c, ToolResult(call_id=c.call_id, name=c.name, output=None, is_error=True, error=msg),
                        **times)]
    why = f" (it raised: {msg}; which call failed is unknown)" if span.get("status_error") else ""
    problems.append(f"{where}: ToolInvoker span records no tool_messages in haystack.component.output{why}: the "
                    f"{len(calls)} call(s) of its input are read without results")
    return [ToolRun(c, None, **times) for c in calls]


def _run(part: Mapping[str, Any], problems: list[str], where: str, times: dict[str, Any]) -> ToolRun:
    """One ``{"tool_call_result": ...}`` content part of a ToolInvoker's tool message as a run:
    the call is the result's ``origin`` (a Haystack ``ToolCall``); both read by the message
    normaliser."""
    res = msgs.normalise({"role": "tool", "content": [part]}, problems, where)
    result = res.results[0] if res is not None and res.results else None
    origin = mapping(part["tool_call_result"]).get("origin")
    got = msgs.normalise({"role": "assistant", "content": [{"tool_call": origin}]}, problems, where) \
        if isinstance(origin, Mapping) else None
    if got is not None and got.calls:
        return ToolRun(got.calls[0], result, **times)
    problems.append(f"{where}: tool_call_result has no origin (the call it answers): name and arguments unknown")
    return ToolRun(ToolCall(name="", args=None, args_parse_error="no origin recorded"), result, **times)


def shadowed_components(spans: list[dict[str, Any]], kind: Callable[[Mapping[str, Any]], str | None]) -> frozenset[str]:
    """The ids of the ``haystack.component.run`` spans (already ``lift``-ed) that hold a tool or
    model span of their own below them: those inner spans are read, the component is not, so
    no call or model turn is counted twice.

    Args:
        spans: the trace's spans as ``otel`` holds them.
        kind: ``otel``'s span kind of an attribute mapping (``"tool"``, ``"llm"`` or None).

    Returns:
        The component span ids to skip.
    """
    parent = {s["span_id"]: s["parent_id"] for s in spans if s["span_id"] is not None}
    comps = {s["span_id"] for s in spans if s["name"] == COMPONENT_SPAN}
    above: set[str] = set()
    for s in spans:
        if s["name"] == COMPONENT_SPAN or kind(s["attrs"]) not in ("tool", "llm"):
            continue
        p = s["parent_id"]
        while p is not None and p not in above:  # an ancestor already marked has its own marked
            above.add(p)
            p = parent.get(p)
    return frozenset(above & comps)


def lift(span: dict[str, Any]) -> None:
    """Lay a Haystack span's own tags (module table) as ``gen_ai.*`` attributes over it, in
    place; a failed tool's span gets the error status and message. Other spans are left as
    they are.

    Args:
        span: one span as the ``otel`` reader holds it (``name``, ``attrs``, ``status_error``,
            ``status_message``).
    """
    a = span["attrs"]
    name = span["name"]
    if name == TOOL_SPAN or a.get("haystack.tool.name") is not None:
        if a.get("haystack.tool.name") is None:
            return
        a.setdefault("gen_ai.operation.name", "execute_tool")
        a.setdefault("gen_ai.tool.name", a["haystack.tool.name"])
        if a.get("haystack.agent.step.tool.input") is not None:
            a.setdefault("gen_ai.tool.call.arguments", a["haystack.agent.step.tool.input"])
        out = a.get("haystack.agent.step.tool.output")
        if _flag(a.get("haystack.tool.error")):
            out = _error_text(out)
            span["status_error"] = True
            span["status_message"] = span["status_message"] or out
        if out is not None:
            a.setdefault("gen_ai.tool.call.result", out)
    elif name == LLM_SPAN:
        _lift_model(a, "haystack.agent.step.llm.input", "haystack.agent.step.llm.output")
    elif name == COMPONENT_SPAN:
        _lift_model(a, "haystack.component.input", "haystack.component.output")
    elif name == AGENT_SPAN:
        a.setdefault("gen_ai.operation.name", "invoke_agent")
        said = [m for m in _normalised(a.get("haystack.agent.output"), "messages") if m.role == "assistant"]
        if said and said[-1].texts and not said[-1].calls:
            a.setdefault("gen_ai.output.messages", [{"role": "assistant", "parts": [
                {"type": "text", "content": "\n".join(said[-1].texts)}]}])


__all__ = ["AGENT_SPAN", "COMPONENT_SPAN", "CONTENT_HINT", "LLM_SPAN", "PREFIX", "TOOL_SPAN", "component_runs", "lift",
           "shadowed_components"]
