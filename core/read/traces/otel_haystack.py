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
``haystack.agent.run``             the agent: ``haystack.agent.output``'s last assistant text
                                   is its answer when no model span carries one
=================================  =============================================================

``lift(span)`` lays these as ``gen_ai.*`` attributes over the span (the span's own ``gen_ai.*``
attributes win), so ``otel`` reads them with its one mapping of keys. The ChatMessage dicts
are read by the one message normaliser (``messages.normalise``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import messages as msgs
from ._util import is_seq
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


__all__ = ["AGENT_SPAN", "COMPONENT_SPAN", "CONTENT_HINT", "LLM_SPAN", "PREFIX", "TOOL_SPAN", "lift"]
