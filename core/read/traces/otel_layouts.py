"""Argument, result, error and final-answer layouts of OTel span emitters that the plain
attribute keys of ``otel`` do not cover, kept apart so that ``otel`` stays one
mapping of keys:

- ``{"args": [...], "kwargs": {...}}``: how OpenInference and Traceloop (OpenLLMetry)
  instrumentations of plain Python functions record a call's input. The call's arguments are
  the ``kwargs``; positional ones are named from the function's signature where the span
  records it (``tool.parameters``: a JSON schema's ``properties`` or a smolagents ``inputs``
  mapping, in declaration order), else kept under ``"args"`` with a problem.
- arguments and results in span events instead of attributes (Strands Agents' default):
  ``gen_ai.tool.message`` (``content`` = the input JSON) and ``gen_ai.choice`` (``message`` =
  the result), or the current conventions' ``gen_ai.client.inference.operation.details`` event
  carrying ``gen_ai.input.messages`` / ``gen_ai.output.messages``; its attributes are laid over
  the span's (the span's own win), so the newest and the older layouts read alike.
- error flags: Strands' ``tool.status`` ``"error"``, Logfire's level (``logfire.level_num`` 17
  or more is error).
- the final answer carried only on the agent span (Strands ``invoke_agent``, Semantic Kernel
  ``invoke_agent``, smolagents' OpenInference ``AGENT`` span): its ``gen_ai.output.messages``
  text, its ``gen_ai.choice`` event's ``message``, or its ``output.value``; pydantic-ai's
  ``invoke_agent`` span's ``final_result`` (the run's output, unless it deferred calls).
- smolagents' ``final_answer`` tool: the run's answer (its ``answer`` argument), not a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import otel_pydantic_ai as pyd
from ._util import is_seq, text_of
from ._util import json_or_text as _json

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
FINAL_ANSWER_TOOL = "final_answer"
_LOGFIRE_ERROR = 17


def _param_names(spec: Any) -> list[str] | None:
    spec = _json(spec)
    if not isinstance(spec, Mapping):
        return None
    props = spec.get("properties")
    if isinstance(props, Mapping):
        return [str(k) for k in props]
    if spec and all(isinstance(v, Mapping) and "type" in v for v in spec.values()):  # smolagents inputs
        return [str(k) for k in spec]
    return None


def unwrap_call(raw: Any, attrs: Mapping[str, Any], problems: list[str], where: str) -> Any:
    """The arguments of a call recorded as ``{"args": [...], "kwargs": {...}}`` (a JSON string or
    a mapping) as one mapping of names to values; any other ``raw`` is returned unchanged.

    Args:
        raw: the recorded input.
        attrs: the span's attributes (``tool.parameters`` names the positional arguments).
        problems: receives a message when positional arguments cannot be named.
        where: the span's location for that message.

    Returns:
        The kwargs with the positional arguments named, or ``raw`` when it is not that wrapper.
    """
    if isinstance(raw, str) and "kwargs" not in raw and "\\u" not in raw:
        return raw  # JSON text that cannot hold the key (parsing it here would parse it twice)
    val = _json(raw)
    if not (isinstance(val, Mapping) and set(val) == {"args", "kwargs"} and is_seq(val["args"])
            and isinstance(val["kwargs"], Mapping)):
        return raw
    out = dict(val["kwargs"])
    pos = list(val["args"])
    if not pos:
        return out
    names = [n for n in _param_names(attrs.get("tool.parameters")) or () if n not in out and n != "self"]
    if len(names) >= len(pos):
        return {**dict(zip(names, pos)), **out}
    problems.append(f"{where}: {len(pos)} positional argument(s) with no recorded parameter names; "
                    "kept under 'args'")
    out["args"] = pos
    return out


def lift_details(span: dict[str, Any]) -> None:
    """Lay a span's ``gen_ai.client.inference.operation.details`` event attributes over its own
    (the span's attributes win), in place."""
    for ev in span["events"]:
        if ev.get("name") == DETAILS_EVENT:
            for k, v in ev["attributes"].items():
                span["attrs"].setdefault(k, v)


def event_args(span: Mapping[str, Any]) -> Any:
    """A tool span's input kept in a span event (Strands' default ``gen_ai.tool.message``, or
    the details event's ``gen_ai.input.messages`` tool_call part), else None."""
    for ev in span["events"]:
        a = ev["attributes"]
        if ev.get("name") == "gen_ai.tool.message" and a.get("content") is not None:
            return a["content"]
    for m in _seq(span["attrs"].get("gen_ai.input.messages")):
        for p in _seq(m.get("parts") if isinstance(m, Mapping) else None):
            if isinstance(p, Mapping) and p.get("type") == "tool_call" and p.get("arguments") is not None:
                args = p["arguments"]
                if is_seq(args) and len(args) == 1 and isinstance(args[0], Mapping) and "content" in args[0]:
                    return args[0]["content"]  # Strands wraps the input as [{"content": input}]
                return args
    return None


def event_user(span: Mapping[str, Any]) -> str | None:
    """The first user message's text kept in a model span's ``gen_ai.user.message`` event
    (Strands' default layout: ``content`` = the message's content blocks as JSON), else None."""
    for ev in span["events"]:
        if ev.get("name") == "gen_ai.user.message" and ev["attributes"].get("content") is not None:
            val = _json(ev["attributes"]["content"])
            return val or None if isinstance(val, str) else text_of(val)
    return None


def event_result(span: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(found, output)`` of a tool span's result kept in a span event (``gen_ai.choice``
    ``message``, or the details event's ``gen_ai.output.messages`` tool_call_response part)."""
    if not span["events"] and span["attrs"].get("gen_ai.output.messages") is None:
        return False, None  # the usual tool span: neither place holds anything
    for ev in span["events"]:
        a = ev["attributes"]
        if ev.get("name") == "gen_ai.choice" and "message" in a:
            return True, _text_blocks(_json(a["message"]))
    for m in _seq(span["attrs"].get("gen_ai.output.messages")):
        for p in _seq(m.get("parts") if isinstance(m, Mapping) else None):
            if isinstance(p, Mapping) and p.get("type") == "tool_call_response":
                return True, _json(p.get("response", p.get("result")))
    return False, None


def _text_blocks(val: Any) -> Any:
    """Strands' tool result content (``[{"text": ...}, ...]``, Bedrock-style blocks without a
    ``type``) as its joined text; any other value as is."""
    if is_seq(val) and val and all(isinstance(b, Mapping) and set(b) == {"text"} and isinstance(b["text"], str)
                                   for b in val):
        return "\n".join(b["text"] for b in val)
    return val


def flagged_error(attrs: Mapping[str, Any]) -> str | None:
    """The error an emitter's own attribute flags on a span (Strands ``gen_ai.tool.status``,
    older ``tool.status``, Logfire's level), or None."""
    if "gen_ai.tool.status" not in attrs and "tool.status" not in attrs and "logfire.level_num" not in attrs:
        return None  # the usual span: no flag to read
    for k in ("gen_ai.tool.status", "tool.status"):
        if str(attrs.get(k) or "").lower() == "error":
            return f"{k} error"
    lvl = attrs.get("logfire.level_num")
    if isinstance(lvl, (int, float)) and not isinstance(lvl, bool) and lvl >= _LOGFIRE_ERROR:
        return str(attrs.get("logfire.msg") or "logfire level error")
    return None


def is_agent_span(span: Mapping[str, Any]) -> bool:
    """Whether a span is an agent's own span (the one that may carry its final answer).

    Args:
        span: one span as the ``otel`` reader holds it (its attributes under ``"attrs"``).

    Returns:
        True for a GenAI ``invoke_agent`` / ``create_agent`` operation or an OpenInference
        ``AGENT`` span kind, or a Traceloop ``agent`` span kind (the OpenTelemetry GenAI
        agent-span, OpenInference and OpenLLMetry conventions).
    """
    a = span["attrs"]
    return (a.get("gen_ai.operation.name") in ("invoke_agent", "create_agent") or
            str(a.get("openinference.span.kind") or "").upper() == "AGENT" or
            str(a.get("traceloop.span.kind") or "").lower() == "agent")


def agent_answer(span: Mapping[str, Any]) -> str | None:
    """The answer an agent span carries: ``gen_ai.output.messages`` text parts, its
    ``gen_ai.choice`` event's ``message``, ``output.value`` or ``traceloop.entity.output``."""
    a = span["attrs"]
    texts = []
    for m in _seq(a.get("gen_ai.output.messages")):
        for p in _seq(m.get("parts") if isinstance(m, Mapping) else None):
            if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("content"), str):
                texts.append(p["content"])
    if texts:
        return "\n".join(texts)
    for ev in span["events"]:
        if ev.get("name") == "gen_ai.choice" and ev["attributes"].get("message") is not None:
            txt = _text(ev["attributes"]["message"])
            if txt and a.get("gen_ai.system") == "strands-agents" and txt.endswith("\n"):
                # Strands writes str(AgentResult): each text block of the answer followed by "\n"
                txt = txt[:-1] or None
            return txt
    for k in ("output.value", "traceloop.entity.output", "gen_ai.output", "final_result"):
        if a.get(k) is not None:
            if k == "final_result" and pyd.deferred_requests(a):
                return None  # pydantic-ai's DeferredToolRequests: the run ended without an answer
            return _text(a[k])
    return None


def _text(v: Any) -> str | None:
    """A recorded answer as text: a string (a JSON string's own value), content blocks' text."""
    val = _json(v)
    if isinstance(val, str):
        return val or None
    if isinstance(val, Mapping):
        for k in ("content", "text", "answer", "output", "final_output"):
            if isinstance(val.get(k), str):
                return val[k]
    if is_seq(val):
        t = text_of(list(val))
        if t:
            return t
    return v if isinstance(v, str) and v else None


def _seq(v: Any) -> list[Any]:
    v = _json(v)
    return list(v) if is_seq(v) else []


__all__ = ["DETAILS_EVENT", "FINAL_ANSWER_TOOL", "agent_answer", "event_args", "event_result", "event_user", "flagged_error",
           "is_agent_span", "lift_details", "unwrap_call"]
