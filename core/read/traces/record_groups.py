"""Records that are one model call or one event each, never a run, grouped into runs before
the loaders read the rest of a format's records one by one: OpenAI Responses logs by
``previous_response_id`` (``openai_response_chains``) and Google ADK events by
``invocation_id`` (``adk_events``). ``traces.load`` calls ``take_grouped``; the stream defers
such records to the end of their file (``defers``); an engine row cannot read them alone
(``needs_others``).
"""

from __future__ import annotations

from typing import Any

from . import adk_events, openai_response_chains, vertex
from ._util import as_plain

_TAKERS = {openai_response_chains.FORMAT: openai_response_chains.take_chains,
           adk_events.FORMAT: adk_events.take_invocations}


def take_grouped(batches: dict[str, list[tuple[Any, str]]], acc: Any, label: str) -> None:
    """Replace each format's records in ``batches`` by those left after its grouped runs were
    read into ``acc`` (a loader's accumulator)."""
    for fmt, take in _TAKERS.items():
        if fmt in batches:
            batches[fmt] = take(batches[fmt], acc, label)


def defers(fmt: str | None, obj: Any) -> bool:
    """True when a record of ``fmt`` may join others of its file into one run (read at the
    end of the file by the stream)."""
    if fmt == openai_response_chains.FORMAT:
        return openai_response_chains.is_chained(obj)
    return fmt == adk_events.FORMAT and vertex.is_event(as_plain(obj))


def needs_others(fmt: str | None, obj: Any) -> bool:
    """True when a record of ``fmt`` cannot be read alone (a response continuing another, an
    ADK event)."""
    if fmt == openai_response_chains.FORMAT:
        return openai_response_chains.continues(obj)
    return fmt == adk_events.FORMAT and vertex.is_event(as_plain(obj))


__all__ = ["defers", "needs_others", "take_grouped"]
