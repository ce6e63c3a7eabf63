"""Matching by canonical arguments, for expected calls whose arguments all compare ``exact``.

When every expected call of a tool is compared with the ``exact`` matcher on the same set
of argument names (or on none: mode ``ignore``, or ``args`` None), "predicted call i
matches expected call j" is an equivalence: two calls match exactly when their canonical
keys (the tool name and the canonical values of those arguments, ``matching._exact_key``)
are equal. The compatibility graph is then a disjoint union of complete bipartite blocks,
one per key, and its maximum matching is found by counting: each predicted call, in order,
takes the lowest-numbered free expected call of its block. That is exactly the pairing
``matching.match_calls`` returns on such a graph (its greedy start pairs the same way and
a block that is full in one side leaves no augmenting path), so every figure, pair and
reason built from it is unchanged -- in time linear in the calls instead of comparing each
predicted call with each expected call of its tool.

``exact_plan`` compiles the expected side once (None when the case is outside this scope:
a ``match`` spec, expected calls of one tool keyed on different argument sets or modes, a
value without a canonical key); ``exact_match`` pairs a list of predicted calls with it
(None when a predicted value has no canonical key; the caller then takes the general path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..model import ARGS_MODES, DEFAULT_ARGS_MODE, ExpectedCall, ToolCall
from .matchers import MISSING, exact_equal
from .matching import _exact_key, _hopcroft_karp, _NoKey

# per tool name, when all its expected calls key the same way: (argument names to key on,
# or None for "any call with object arguments"; whether the call may carry no other
# argument (exact_keys) -- with None keys: whether names alone are compared (mode ignore);
# {key: expected indices})
Block = tuple[tuple[str, ...] | None, bool, dict[Any, list[int]]]
# per tool name keyed two ways: (expected index, args or None for any, mode) to compare one
# by one (the rows are the pairwise loop's, the matching Hopcroft-Karp's)
Loose = list[tuple[int, Any, str]]
ExactPlan = dict[str, Block | Loose]
KEYED_FROM = 8  # expected calls of one tool from which one-off matching keys them


def exact_plan(expected: Sequence[ExpectedCall], args_mode: str | None = None,
               default_mode: str | None = None) -> ExactPlan | None:
    """The canonical-key plan of ``expected``, or None when an expected call has a
    ``match`` spec or is not an ``ExpectedCall`` (see the module doc).

    Mode per expected call as in ``matching.compatibility``: ``args_mode``, else the call's
    own, else ``default_mode``, else ``DEFAULT_ARGS_MODE``. An unknown mode gives None
    (the general path raises the error that names it).
    """
    items = []
    for e in expected:
        if type(e) is not ExpectedCall or e.match:
            return None
        items.append((e.name, e.args, e.args_mode))
    return plan_of(items, args_mode, default_mode)


def plan_of(items: Sequence[tuple[str, Any, str | None]], args_mode: str | None = None,
            default_mode: str | None = None, *, keyed_from: int | None = None) -> ExactPlan | None:
    """:func:`exact_plan` of expected calls given as ``(name, args, args_mode)``, every
    argument compared with ``exact``. A tool with at least ``keyed_from`` expected calls
    is keyed when all of them key the same way; the others are compared one by one
    (cheaper for a few calls, unless the plan is reused for many runs)."""
    if keyed_from is None:
        keyed_from = KEYED_FROM
    by_name: dict[str, Loose] = {}
    for j, (name, args, own_mode) in enumerate(items):
        mode = args_mode or own_mode or default_mode or DEFAULT_ARGS_MODE
        if mode not in ARGS_MODES:
            return None
        if args is not None and type(args) is not dict:
            return None
        by_name.setdefault(name, []).append((j, None if mode == "ignore" else args, mode))
    plan: ExactPlan = {}
    for name, loose in by_name.items():
        plan[name] = (_block(loose) if len(loose) >= keyed_from else None) or loose
    return plan


def _block(loose: Loose) -> Block | None:
    """The expected calls of one tool as one keyed block, or None when they key two ways
    (different argument sets or modes) or a value has no canonical key."""
    table: dict[Any, list[int]] = {}
    shape: Any = _UNSET
    for j, args, mode in loose:
        if args is None:
            s: Any = "ignore" if mode == "ignore" else None  # names only, or any object arguments
            key: Any = ()
        else:
            try:
                keys = tuple(sorted(args))
                key = tuple([_exact_key(args[k]) for k in keys])
            except (_NoKey, TypeError, RecursionError):
                return None  # NaN, deep nesting, odd objects: compared one by one
            s = (keys, mode == "exact_keys")
        if shape is _UNSET:
            shape = s
        elif s != shape:
            return None
        table.setdefault(key, []).append(j)
    if shape is None or shape == "ignore":
        # keys None; the flag says the tool's calls compare names only (mode ignore), where a
        # call whose arguments were not recorded may match too (the general path decides)
        return (None, shape == "ignore", table)
    return (shape[0], shape[1], table)


_UNSET: Any = object()


def exact_match(plan: ExactPlan, calls: Sequence[ToolCall], n_expected: int) -> list[int] | None:
    """Per predicted call its expected index (or -1): the maximum matching of ``calls``
    against the plan's expected calls, equal to ``match_calls``'s. None when a predicted
    argument value has no canonical key (an object of another type: the general path
    compares it)."""
    return match_items(plan, [(c.name, c.args) for c in calls], n_expected)


def match_items(plan: ExactPlan, calls: Sequence[tuple[str, Any]], n_expected: int) -> list[int] | None:
    """:func:`exact_match` of predicted calls given as ``(name, args)`` against a plan of
    ``n_expected`` expected calls."""
    got = rows_of(plan, calls)
    if got is None:
        return None
    rows, loose = got
    if loose:
        return _hopcroft_karp(rows, n_expected)
    # blocks only: a predicted call takes the lowest free expected call of its block
    out: list[int] = []
    taken: dict[int, int] = {}  # id(block row) -> how many of it are paired
    for row in rows:
        n = taken.get(id(row), 0)
        if n < len(row):
            taken[id(row)] = n + 1
            out.append(row[n])
        else:
            out.append(-1)
    return out


def rows_of(plan: ExactPlan, calls: Iterable[tuple[str, Any]]) -> tuple[list[list[int]], bool] | None:
    """Per predicted call ``(name, args)`` the expected indices it matches, increasing
    (``matching.compatibility``'s rows; rows of one keyed block are the same list object,
    not to be changed), and whether any tool was compared one by one. None when a predicted
    value has no canonical key."""
    rows: list[list[int]] = []
    loose = False
    for name, pargs in calls:
        block = plan.get(name)
        if block is None:
            rows.append(_EMPTY)  # no expected call of the tool
            continue
        if type(pargs) is not dict and not isinstance(pargs, Mapping):
            if pargs is None and (any(m == "ignore" for _, _, m in block) if isinstance(block, list)
                                  else block[0] is None and block[1]):
                return None  # unrecorded arguments may match by name: the general path decides
            rows.append(_EMPTY)  # unparsed arguments never match
            continue
        if isinstance(block, list):
            loose = True
            row = []
            for j, eargs, mode in block:  # _exact_args_ok, inlined: the hot loop of a run
                if eargs is not None:
                    if mode == "exact_keys" and len(pargs) != len(eargs):
                        continue
                    for k, ev in eargs.items():
                        pv = pargs.get(k, MISSING)
                        t = type(ev)
                        if t is type(pv) and (t is str or t is int or t is float or t is bool):
                            if ev != pv:
                                break
                        elif not exact_equal(ev, pv):
                            break
                    else:
                        row.append(j)
                    continue
                row.append(j)
            rows.append(row)
            continue
        keys, only, table = block
        if keys is None:
            rows.append(table[()])
        elif only and len(pargs) != len(keys):
            rows.append(_EMPTY)
        else:
            vals: list[Any] = []
            for k in keys:
                v = pargs.get(k, MISSING)
                t = type(v)
                if t is str:
                    vals.append(v)
                elif v is MISSING or (t is float and v != v):
                    break  # an absent argument, or NaN (equal to nothing)
                else:
                    try:
                        vals.append(_exact_key(v))
                    except (_NoKey, RecursionError):
                        return None
            rows.append(table.get(tuple(vals), _EMPTY) if len(vals) == len(keys) else _EMPTY)
    return rows, loose


_EMPTY: list[int] = []

__all__ = ["ExactPlan", "exact_match", "exact_plan", "match_items", "plan_of", "rows_of"]
