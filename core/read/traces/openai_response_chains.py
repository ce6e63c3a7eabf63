"""OpenAI Responses API calls logged one record per call, linked into runs by
``previous_response_id``.

A record is a ``Response`` as the SDK dumps it (``response.model_dump()``: ``object:
"response"``, ``id``, ``previous_response_id``, ``output`` items, ``usage``), optionally with
the request's ``input`` items beside it (what a logging wrapper around ``responses.create``
keeps: the user message, then the ``function_call_output`` items of each continuation). A
chained call sends only its new items and names the response it continues, so no record is a
run: the records of one chain -- a root and every record that continues it, directly or
through others -- are one run, read in chain order as one item list by the
``openai_responses`` reader (each record's ``input`` items, then its ``output`` items). Usage
is the sum of the chain's responses' usage (each call's own); ``metadata.case_id`` is taken
from the root response's ``metadata`` (the Responses API's own request metadata).

What cannot be known: a response holds no tool output, so a log of responses alone reads the
calls, usage and answer with no results; ``function_call_output`` has no error field (a
failure is text: ``--error-pattern``). A response continuing one that is not among the
records is read alone, with a problem naming the missing id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...model import Trajectory, Usage
from . import openai_responses
from ._util import as_plain, is_seq, mapping
from .openai_chat import parse_usage

FORMAT = openai_responses.FORMAT
GROUPED_BY = "previous_response_id"


def is_chained(x: Any) -> bool:
    """True for a logged ``Response`` that can be part of a chain: ``object: "response"``, a
    string ``id`` and a ``previous_response_id`` key (null for a chain's first call)."""
    x = as_plain(x)
    return (isinstance(x, Mapping) and x.get("object") == "response" and isinstance(x.get("id"), str)
            and "previous_response_id" in x and is_seq(x.get("output")))


def continues(x: Any) -> bool:
    """True for a logged ``Response`` that continues another (cannot be read alone)."""
    return is_chained(x) and isinstance(as_plain(x).get("previous_response_id"), str)


def _chains(recs: list[Mapping[str, Any]]) -> list[list[int]]:
    """Indices of ``recs`` per chain, each chain in order from its root (record order among
    continuations of one response), chains in the order of their roots."""
    by_id = {r["id"]: i for i, r in enumerate(recs)}
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, r in enumerate(recs):
        parent = by_id.get(r.get("previous_response_id"))
        if parent is None or parent == i:
            roots.append(i)
        else:
            kids.setdefault(parent, []).append(i)
    out: list[list[int]] = []
    seen: set[int] = set()
    for root in roots:
        chain: list[int] = []
        todo = [root]
        while todo:  # depth first, continuations in record order
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            chain.append(i)
            todo.extend(reversed(kids.get(i, [])))
        out.append(chain)
    return out


def read_chain(recs: list[Any]) -> Trajectory:
    """One run from the records of one chain, in chain order (module docstring)."""
    items: list[Any] = []
    starts: set[int] = set()  # where each response's output begins: one model call each
    usage: Usage | None = None
    for r in recs:
        r = as_plain(r)
        inp = r.get("input")
        items += [{"role": "user", "content": inp}] if isinstance(inp, str) else list(inp or [])
        starts.add(len(items))
        items += list(r.get("output") or [])
        u = parse_usage(r.get("usage"))
        if u is not None:
            usage = u if usage is None else usage + u
    t = openai_responses.read(items, turn_starts=starts)
    root = as_plain(recs[0])
    meta = dict(t.metadata)
    meta["response_ids"] = [as_plain(r)["id"] for r in recs]
    meta["grouped_by"] = GROUPED_BY
    if isinstance(root.get("model"), str):
        meta["model"] = root["model"]
    cid = mapping(root.get("metadata")).get("case_id")
    if cid is not None:
        meta["case_id"] = cid
    return replace(t, total_usage=usage or t.total_usage, metadata=meta)


def take_chains(items: list[tuple[Any, str]], acc: Any, label: str) -> list[tuple[Any, str]]:
    """Read the records of ``items`` (``(record, where)`` of the ``openai_responses`` format)
    that form chains into one run per chain, add them to ``acc`` (a loader's accumulator:
    ``add``, ``check_batch``, ``source``, ``problems``), and return the other items, to be
    read one by one as before. A lone response (no record continues it, it continues none
    among them) is left to the one-by-one reading; one continuing a response that is not
    among the records gets a problem."""
    recs = [(as_plain(o), o, w) for o, w in items if is_chained(o)]
    ids = {r["id"] for r, _, _ in recs}
    parents = {r.get("previous_response_id") for r, _, _ in recs}
    linked = [(r, o, w) for r, o, w in recs if r["id"] in parents or r.get("previous_response_id") in ids]
    for r, _, w in recs:
        prev = r.get("previous_response_id")
        if isinstance(prev, str) and prev not in ids:
            acc.problems.append(f"{w}: response {r['id']!r} continues {prev!r}, which is not among the "
                                "records; read without the calls before it")
    if not linked:
        return items
    taken = {id(o) for _, o, _ in linked}
    chains = _chains([r for r, _, _ in linked])
    for chain in chains:
        objs = [linked[i][1] for i in chain]
        where = linked[chain[0]][2]
        t = read_chain(objs)
        acc.add(t, FORMAT, where, label)
        acc.check_batch(objs, [t], FORMAT, where)
    acc.source(label).grouped[FORMAT] = (f"{len(linked)} responses grouped into {len(chains)} runs by "
                                         f"{GROUPED_BY}")
    return [(o, w) for o, w in items if id(o) not in taken]


__all__ = ["continues", "is_chained", "read_chain", "take_chains"]
