"""What an agent returns: ``AgentRun`` (a final response with usage, cost, route and
metadata), ``parse_agent_return`` reading any allowed return value into its parts (or an
error naming what was wrong), and ``describe_error``, the one-line text of an exception
raised by the agent's untrusted code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import Usage
from ..read import limits

__all__ = ["AgentRun", "describe_error", "parse_agent_return"]


@dataclass(frozen=True)
class AgentRun:
    """What an agent may return instead of a bare string: the ``final_response`` text (None
    for none), token ``usage``, ``cost_usd`` (US dollars), the ``route`` it took (for
    routing metrics) and free-form ``metadata`` (kept under the trace's
    ``metadata["agent_metadata"]``)."""

    final_response: str | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    route: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)



def describe_error(e: BaseException) -> str:
    """``"<Type>: <message>"`` of an exception from untrusted code, whose ``__str__`` may
    itself raise or hold text JSON cannot write."""
    try:
        msg = str(e)
    except BaseException:
        msg = "<unprintable>"
    return limits.clean_text(f"{type(e).__name__}: {msg}".rstrip(": "))


def parse_agent_return(ret: Any) -> tuple[str | None, Usage | None, float | None, Any, dict[str, Any],
                                          str | None]:
    """``(final_response, usage, cost_usd, route, agent metadata, error)`` from an agent's
    return value: a str or None (the final response), an ``AgentRun``, or a dict with only
    the keys ``final_response``, ``usage`` (dict or ``Usage``), ``cost_usd``, ``route``,
    ``metadata``. Anything else gives ``error`` (a one-line message; the other fields empty)
    instead of raising, so the caller records a failed run. Used by ``run_suite`` and by
    ``trajcheck.run.simulated_user`` for each agent turn."""
    try:
        return _parse_return(ret)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # an odd object (a raising __eq__, __iter__, ...) fails the run
        return None, None, None, None, {}, f"agent returned an unreadable {type(ret).__name__} ({describe_error(e)})"


def _text(v: Any) -> str:
    """A plain ``str`` (not a subclass with its own methods), lone surrogates repaired."""
    return limits.clean_text(str.__str__(v) if isinstance(v, str) else str(limits.scrub(v)))


def _parse_return(ret: Any) -> tuple[str | None, Usage | None, float | None, Any, dict[str, Any], str | None]:
    if ret is None or isinstance(ret, str):
        return (None if ret is None else _text(ret)), None, None, None, {}, None
    if isinstance(ret, AgentRun):
        fr = ret.final_response
        return (None if fr is None else _text(fr)), ret.usage if isinstance(ret.usage, Usage) else None, \
            ret.cost_usd, ret.route, dict(ret.metadata) if isinstance(ret.metadata, Mapping) else {}, None
    if isinstance(ret, Mapping) and set(ret) <= {"final_response", "usage", "cost_usd", "route", "metadata"}:
        u = ret.get("usage")
        usage = Usage.from_dict(u) if isinstance(u, Mapping) else u if isinstance(u, Usage) else None
        fr = ret.get("final_response")
        md = ret.get("metadata")
        return (None if fr is None else _text(fr)), usage, ret.get("cost_usd"), ret.get("route"), \
            dict(md) if isinstance(md, Mapping) else {}, None
    return None, None, None, None, {}, (f"agent returned {type(ret).__name__}; expected str, None, "
                                        "AgentRun or a dict with final_response")

