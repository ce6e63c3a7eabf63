"""pydantic-ai's marks on its OpenTelemetry spans: which tool spans and requested calls are
not calls of the run.

pydantic-ai (instrumentation v2 and v3+) writes one tool span per execution attempt, and also:

- output functions (``output_type=func``, ``ToolOutput(func)``): a span like a tool's
  (``execute_tool final_result``, ``gen_ai.tool.name``) told apart by ``logfire.msg``
  ``"running output function: <name>"`` (v3+) or the span name ``running output function``
  (v2). It computes the run's output: it is the answer, not a call.
- output tools (``output_type=SomeModel``): no span at all; the model's ``final_result`` call is
  in the chat span's output messages, and the chat span's ``model_request_parameters`` lists
  it under ``output_tools``. Not a call either.
- deferred calls (a tool raising ``ApprovalRequired`` / ``CallDeferred``): a tool span with
  ``pydantic_ai.tool.deferral.name``; a tool declared ``requires_approval=True`` gets no span,
  and the run's output (the agent span's ``final_result``) is a ``DeferredToolRequests``
  (``calls`` / ``approvals`` with ``tool_call_id``). The call did not run in this run: not a
  call; its name and id are kept in the trajectory's ``metadata["deferred_calls"]``.

pydantic-evals' span evaluators (``ToolCorrectness``, ``TrajectoryMatch``) count tool calls
the same way (docs/modes.md, pydantic_evals rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ._turns import ModelTurn, ToolRun
from ._util import is_seq
from ._util import json_or_text as _json

DEFERRAL_ATTR = "pydantic_ai.tool.deferral.name"
OUTPUT_FUNCTION_MSG = "running output function:"
V2_OUTPUT_FUNCTION_SPAN = "running output function"


def is_output_function(span: Mapping[str, Any]) -> bool:
    """Whether a tool-like span is a pydantic-ai output function's run (module doc).

    Args:
        span: one span as the ``otel`` reader holds it (``name``, ``attrs``).

    Returns:
        True for the v2 span name ``running output function`` or a ``logfire.msg`` starting
        ``running output function:``.
    """
    msg = span["attrs"].get("logfire.msg")
    return span["name"] == V2_OUTPUT_FUNCTION_SPAN or (isinstance(msg, str) and msg.startswith(OUTPUT_FUNCTION_MSG))


def deferral(attrs: Mapping[str, Any]) -> str | None:
    """The deferral kind of a tool span whose call was deferred.

    Args:
        attrs: the span's attributes.

    Returns:
        ``pydantic_ai.tool.deferral.name`` (``ApprovalRequired`` / ``CallDeferred``), else None.
    """
    v = attrs.get(DEFERRAL_ATTR)
    return None if v is None else str(v)


def output_tools(attrs: Mapping[str, Any]) -> frozenset[str]:
    """The output tool names a pydantic-ai chat span offered the model.

    Args:
        attrs: the span's attributes.

    Returns:
        The names in ``model_request_parameters.output_tools``; empty for other spans.
    """
    mrp = _json(attrs.get("model_request_parameters"))
    tools = mrp.get("output_tools") if isinstance(mrp, Mapping) else None
    return frozenset(str(t["name"]) for t in (tools if is_seq(tools) else ())
                     if isinstance(t, Mapping) and t.get("name") is not None)


def deferred_requests(attrs: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The calls a pydantic-ai agent span's output defers.

    Args:
        attrs: the agent span's attributes.

    Returns:
        ``(name, call id)`` of each of ``calls`` and ``approvals`` when its ``final_result`` is a
        ``DeferredToolRequests``; [] otherwise.
    """
    out = _json(attrs.get("final_result"))
    if not (isinstance(out, Mapping) and set(out) >= {"calls", "approvals"}):
        return []
    got = []
    for part in [*(out["calls"] if is_seq(out["calls"]) else ()), *(out["approvals"] if is_seq(out["approvals"]) else ())]:
        if isinstance(part, Mapping) and isinstance(part.get("tool_name"), str):
            cid = part.get("tool_call_id")
            got.append((part["tool_name"], None if cid is None else str(cid)))
    return got


def tool_span_is_call(s: dict[str, Any], problems: list[str], w: str, deferred: list[dict[str, Any]],
                      answers: list[str]) -> bool:
    """Whether a tool span of the ``otel`` reader is a call of the run.

    Args:
        s: the span (``name``, ``attrs``).
        problems: receives a message when its tool name is not a string.
        w: the span's location for that message.
        deferred: receives ``{name, call_id, deferral}`` when its call was deferred.
        answers: receives an output function's result text.

    Returns:
        False for a tool name that is not a string, a pydantic-ai output function's run or a
        deferred call; True otherwise.
    """
    a = s["attrs"]
    raw = a.get("gen_ai.tool.name")
    if raw is None:
        raw = a.get("tool.name")
        if raw is None:
            raw = a.get("ai.toolCall.name")
    if raw is not None and not isinstance(raw, str):
        problems.append(f"{w}: tool name is not a string ({type(raw).__name__} {raw!r}); not read as a call")
        return False
    if ("logfire.msg" in a or s["name"] == V2_OUTPUT_FUNCTION_SPAN) and is_output_function(s):
        out = a.get("gen_ai.tool.call.result", a.get("tool_response"))
        if isinstance(out, str) and out:
            answers.append(out)
        return False
    kind = deferral(a) if DEFERRAL_ATTR in a else None
    if kind is not None:
        cid = a.get("gen_ai.tool.call.id", a.get("tool_call_id"))
        deferred.append({"name": raw, "call_id": None if cid is None else str(cid), "deferral": kind})
        return False
    return True


def drop_deferred(events: list[ModelTurn | ToolRun], deferred: list[dict[str, Any]]) -> list[ModelTurn | ToolRun]:
    """The model turns without the requested calls that were deferred.

    Args:
        events: model turns and tool runs in execution order.
        deferred: the deferred calls (``name``, ``call_id``).

    Returns:
        ``events`` with each turn's deferred requests (by call id, else by name) removed.
    """
    ids = {d["call_id"] for d in deferred if d["call_id"] is not None}
    names = {d["name"] for d in deferred if d["call_id"] is None}
    out: list[ModelTurn | ToolRun] = []
    for ev in events:
        if isinstance(ev, ModelTurn) and any(c.call_id in ids or c.name in names for c in ev.requested):
            rest = [c for c in ev.requested if not (c.call_id in ids or c.name in names)]
            ev = replace(ev, requested=rest, requested_any=bool(rest))
        out.append(ev)
    return out


def unique_deferred(deferred: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deferred calls once each (a call deferred by its tool span and listed in the run's
    output is one call).

    Args:
        deferred: the records in the order found.

    Returns:
        The first record per call id (records without an id all kept).
    """
    seen: set[Any] = set()
    out: list[dict[str, Any]] = []
    for d in deferred:
        key = d["call_id"] if d["call_id"] is not None else (d["name"], len(out))
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


__all__ = ["DEFERRAL_ATTR", "deferral", "deferred_requests", "drop_deferred", "is_output_function", "output_tools",
           "tool_span_is_call", "unique_deferred"]
