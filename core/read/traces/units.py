"""A source's units -- the trace objects of a parsed document, each with its location --
and how they are read: host exports apart, the rest batched by format (detected per unit,
or forced) and each batch handed to its format's ``Reader`` (``registry.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from . import case_keys, host_exports, native, promptfoo, record_groups, tau_bench, vertex, wrappers
from ._util import as_plain, is_seq
from .detection import detect
from .formats import EXPECTED
from .load_result import Accumulator
from .registry import REGISTRY, Batch
from .unread import unread_problem


def _is_record(x: Any) -> bool:
    """One whole trace of a format whose files are lists of such records."""
    return (tau_bench.is_record(x) or native.is_native(x) or promptfoo.is_provider_response(x)
            or host_exports.kind(x) is not None or record_groups.defers("openai_responses", x)
            or (isinstance(x, Mapping) and ("predicted_trajectory" in x or vertex.is_adk(x))))


def _safe_is_record(x: Any) -> bool:
    try:
        return _is_record(x)
    except Exception:
        return False



def split_units(doc: Any, acc: Accumulator | None = None, label: str = "<input>",
           prefix: str = "") -> list[tuple[Any, str | None]]:
    """Split a parsed JSON document into trace objects with a sub-location label.

    A wrapper (``wrappers.unwrap``: an ADK EvalSet, a span dump, a promptfoo output file, ...)
    is cut open first: its units are returned with their labels, the wrapper's name is noted
    for ``label`` in ``acc`` and its entries that hold no trace are reported as skipped
    (``prefix`` is the location the labels hang from, e.g. ``"run.json"``).
    A list is a list of records (labelled ``record <i>``, 0-based) when at least half of its
    items are whole records (tau-bench, trajcheck, promptfoo, Vertex/ADK) -- a chat message
    list holds none -- so that a stray item (a chat message, a typed item, a number) among
    records is reported on its own and the other records read, instead of the whole list
    being "not a trace".
    """
    try:
        un = wrappers.unwrap(doc)
    except Exception:  # an odd document is simply not that wrapper
        un = None
    if un is not None:
        if acc is not None:
            acc.wrapper(label, un.wrapper)
            for w, why in un.skipped:
                acc.skip(f"{prefix} {w}: {why}; skipped".strip())
            if not un.units and not un.skipped:
                acc.skip(f"{prefix}: {un.wrapper} holds no traces".lstrip(": "))
        return list(un.units)
    if is_seq(doc) and doc:
        items = [as_plain(x) for x in doc]
        n_rec = sum(1 for x in items if _safe_is_record(x))
        if n_rec and 2 * n_rec >= len(items):
            return [(x, f"record {i}") for i, x in enumerate(doc)]
        if all(is_seq(x) for x in doc):
            return [(x, f"record {i}") for i, x in enumerate(doc)]
    return [(doc, None)]


def _why_not(obj: Any, formats: Any) -> str:
    """Why a unit of a file already recognised as one of ``formats`` is not a trace."""
    plain = as_plain(obj)
    if "tau_bench" in formats and (tau_bench.looks_like_record(plain) or not isinstance(plain, Mapping)):
        why = tau_bench.record_problem(plain)
        if why is not None:
            return why
    if "trajcheck" in formats and isinstance(plain, Mapping) and "steps" in plain:
        return "not a trajcheck trajectory (needs a 'steps' list of {index, kind} objects)"
    return f"not a trace (expected {EXPECTED})"


def read_units(units: list[tuple[Any, str]], fmt: str, acc: Accumulator, label: str, *, strict: bool) -> None:
    """Read trace objects (``(obj, where)``); batch formats are read together.

    Policy (DESIGN.md, "Bad input"): once some unit is recognised as a format, a unit that is
    not a trace, or that its reader rejects, is reported in ``skipped`` with its location and
    the rest is read; ``TraceFormatError`` is raised (when ``strict``) only when no unit is a
    trace, or when the only unit fails.
    """
    exported: dict[str, list[tuple[Any, str]]] = {}
    if fmt in ("auto", "deepeval", "ragas"):
        rest = []
        for obj, where in units:
            k = host_exports.kind(obj)
            if k is not None and fmt in ("auto", _EXPORT_FORMAT[k]):
                exported.setdefault(k, []).append((obj, where))
            else:
                rest.append((obj, where))
        if exported:
            _read_exports(exported, acc, label)
            if not rest:
                return
            units = rest
    batches: dict[str, list[tuple[Any, str]]] = {}
    undetected: list[tuple[Any, str]] = []
    for obj, where in units:
        f = fmt if fmt != "auto" else detect(obj)
        if f is None:
            undetected.append((obj, where))
            continue
        batches.setdefault(f, []).append((obj, where))
    if not batches and units and strict:
        held = unread_problem(units[0][0], None, None)
        raise TraceFormatError(f"{label}: not a trace; expected {EXPECTED}"
                               + (f"; it {held.removesuffix('; not read')}" if held else ""))
    for obj, where in undetected:
        acc.skip(f"{where}: {_why_not(obj, batches)}; skipped")
        msg = unread_problem(obj, None, None)
        if msg is not None:
            acc.not_read(f"{where}: {msg}", skipped=True)
    record_groups.take_grouped(batches, acc, label)  # per-call / per-event records: runs by their ids
    n_formats = len(batches)
    for f, items in batches.items():  # each format's reader (registry.REGISTRY)
        REGISTRY[f](Batch(f, items, fmt, acc, label, strict, len(units), n_formats))


_EXPORT_FORMAT = {host_exports.DEEPEVAL: "deepeval", host_exports.RAGAS: "ragas"}


def _read_exports(exported: dict[str, list[tuple[Any, str]]], acc: Accumulator, label: str) -> None:
    """Read host exports that carry their own references (``host_exports``): their runs under
    the host's format name, their cases into ``acc.cases`` (re-keyed by file when they clash
    with another file's, as tau-bench's are)."""
    for k, items in exported.items():
        res = host_exports.read_deepeval(items) if k == host_exports.DEEPEVAL else host_exports.read_ragas(items)
        acc.wrapper(label, res.wrapper)
        for msg in res.skipped:
            acc.skip(msg)
        acc.problems.extend(res.problems)
        cases, runs, clash = case_keys.qualify(res.cases, res.runs, acc.cases, label)
        if clash:
            acc.problems.append(clash)
        for cid, c in cases.items():
            acc.cases.setdefault(cid, c)
        for t, w in runs:
            acc.add(t, _EXPORT_FORMAT[k], w, label)
