"""Google ADK events logged one per record (what ``runner.run_async`` yields, dumped with
``event.model_dump()``), grouped into runs by ``invocation_id``.

An event is ``{id, invocation_id, author, content: {role, parts}, actions, usage_metadata?,
timestamp}``; an invocation is one user turn's agent run, so the events of one
``invocation_id`` are one run, in record order, read as an ADK session's events are
(``vertex``: the function calls of one event are one step, ``function_response`` parts the
results, with ADK's failure marks -- a response with an ``error`` key, ADK's documented
``{"status": "error", "error_message"}``, or the ``ReflectAndRetryToolPlugin``'s
``ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN`` record). ``run_async`` yields the agent's events,
not the user's message: a log of them has no user input unless the user event was logged too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import vertex
from ._util import as_plain, get

FORMAT = vertex.FORMAT
GROUPED_BY = "invocation_id"


def _invocation(x: Any) -> str | None:
    v = get(as_plain(x), "invocation_id", "invocationId")
    return None if v is None else str(v)


def take_invocations(items: list[tuple[Any, str]], acc: Any, label: str) -> list[tuple[Any, str]]:
    """Read the ADK events among ``items`` (``(record, where)`` of the ``vertex`` format) into
    one run per ``invocation_id`` (in order of each invocation's first event), add them to
    ``acc`` (a loader's accumulator) and return the other items, read one by one as before."""
    groups: dict[str, list[tuple[Any, str]]] = {}
    rest: list[tuple[Any, str]] = []
    for o, w in items:
        if vertex.is_event(as_plain(o)):
            groups.setdefault(_invocation(o) or "", []).append((o, w))
        else:
            rest.append((o, w))
    if not groups:
        return items
    for inv, evs in groups.items():
        objs = [o for o, _ in evs]
        t = vertex.read({"events": [as_plain(o) for o in objs]})
        meta = dict(t.metadata)
        meta["grouped_by"] = GROUPED_BY
        if inv:
            meta["invocation_id"] = inv
        t = replace(t, metadata=meta)
        acc.add(t, FORMAT, evs[0][1], label)
        acc.check_batch(objs, [t], FORMAT, evs[0][1])
    n = sum(len(v) for v in groups.values())
    acc.source(label).grouped[FORMAT] = f"{n} ADK events grouped into {len(groups)} runs by {GROUPED_BY}"
    return rest


__all__ = ["take_invocations"]
