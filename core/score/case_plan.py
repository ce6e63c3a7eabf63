"""A case compiled once for fast per-run scoring (``fast_scoring``).

``case_plan(case)`` holds what every run of the case needs and does not depend on the run:
the expected calls keyed by canonical arguments (``exact_match.plan_of``), the
state-changing (non-optional) expected calls, names, modes, the step bounds, threshold and
definition hash. It is kept on the case object itself (as ``case_store`` keeps the hash),
so memory is bounded by the cases alive, and a case built again gets a new plan.

A plan also carries what a compact result reads off the case (its id, category, case-level
``args_mode``, each expected call's own mode) and gives back the case itself (``case()``)
or one expected call (``expected_call(j)``) when a reason needs them, so a scorer holding
only a plan never builds the case for a run that passes. ``case_store.CaseStore.plan(cid)``
keeps each case's plan split in two (``split`` / ``join``): the fields every case of one
shape shares (tool names, modes, optional and forbidden tools), kept once, and the case's
own (its arguments); it gives the plan by case id without building the ``Case``; ``plan_for(cases, cid)`` does that for any mapping of cases.

A case outside the fast path's scope gets ``None`` and is scored by the general path
(``scoring.score_run``): a case outside ``fast_scope.case_in_scope`` (the whitelist of
``Case`` fields and metadata keys), any expected call with a ``match`` spec or non-dict
arguments, a case-level ``args_mode`` that disagrees with a call's own, or tool definitions
annotated ``readOnlyHint: true``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from ..match.exact_match import ExactPlan, plan_of
from ..metrics.composite import _case_int, checked_threshold
from ..model import DEFAULT_ARGS_MODE, Case, ExpectedCall, read_only_tools
from .fast_scope import case_in_scope

_PLAN_ATTR = "_fast_plan"
_NO_PLAN: Any = ()  # marker kept on a case outside the scope
_GLOB = frozenset("*?[")  # a pattern without these matches only its own text


@dataclass
class CasePlan:
    """The run-independent part of scoring one case (see the module doc)."""

    exp_names: tuple[str, ...]
    exp_modes: tuple[str, ...]           # effective args mode per expected call
    exp_args: tuple[Any, ...]            # args dict or None per expected call
    plan: ExactPlan                      # all expected calls, keyed where possible
    writes: tuple[int, ...]              # expected calls of state-changing (non-optional) tools
    write_pos: dict[int, int]            # expected index -> position among ``writes``
    optional: frozenset[str]
    forbidden: tuple[str, ...]
    by_name: dict[str, list[int]]        # tool name -> its expected calls, in order
    optimal_steps: int | None
    max_steps: int | None
    threshold: float
    forbidden_pattern: dict[str, bool]   # tool name -> matches a forbidden pattern (filled lazily)
    case_hash: str | None = None         # fingerprint.case_hash, computed on first use
    case_id: str = ""
    category: str | None = None          # case.metadata["category"] when it is a string
    args_mode: str | None = None         # the case-level args_mode (None: each call's own)
    own_modes: tuple[str | None, ...] = ()  # each expected call's own args_mode, as given
    # the case: the Case itself, or a (mapping, id) pair to take it from (a case store)
    source: Any = field(default=None, repr=False, compare=False)

    def hash_of(self, case: Case | None = None) -> str:
        """``fingerprint.case_hash`` of the case this plan was built from, once (``case``
        may be given to spare building it)."""
        if self.case_hash is None:
            from .fingerprint import case_hash

            self.case_hash = case_hash(case if case is not None else self.case())
        return self.case_hash

    def case(self) -> Case:
        """The ``Case`` this plan was built from (built again from a case store's row when
        the plan came by id: costs a decode, so only for reasons a failing run needs)."""
        src = self.source
        return src if type(src) is Case else src[0][src[1]]  # type: ignore[no-any-return]

    def expected_call(self, j: int) -> ExpectedCall:
        """An ``ExpectedCall`` equal to ``case().expected_calls[j]``, without the case (every
        call in a plan's scope has no ``match`` spec)."""
        args = self.exp_args[j]
        mode = self.own_modes[j]
        return ExpectedCall(self.exp_names[j], dict(args) if args is not None else None, {}, mode)

    def __getstate__(self) -> dict[str, Any]:
        # a store's (mapping, id) source is not shipped with the plan (nor the store with
        # it): ``case_plan(case)`` sets the case again on a plan that comes without one
        d = dict(self.__dict__)
        if type(d["source"]) is not Case:
            d["source"] = None
        return d

    def is_forbidden(self, name: str) -> bool:
        """Whether ``name`` matches a ``forbidden_calls`` pattern (``fnmatchcase``)."""
        hit = self.forbidden_pattern.get(name)
        if hit is None:
            hit = self.forbidden_pattern[name] = forbidden_match(self.forbidden, name)
        return hit


@functools.lru_cache(maxsize=65536)
def forbidden_match(patterns: tuple[str, ...], name: str) -> bool:
    """Whether tool ``name`` matches one of the ``forbidden_calls`` ``patterns``
    (``fnmatchcase``; a pattern without ``*?[`` matches only its own text). Remembered in
    functools' cache (thread-safe, holding bools) across plans, which are built per case
    object or decoded per run."""
    return any(fnmatchcase(name, p) if _GLOB.intersection(p) else name == p for p in patterns)


def case_plan(case: Case) -> CasePlan | None:
    """The case's plan (built on first use and kept on the case), or None when the case is
    outside the fast path's scope (module doc). Never raises: a case the general path
    would reject (bad step bounds or threshold) is outside the scope, so the general path
    raises its own error."""
    got = case.__dict__.get(_PLAN_ATTR)
    if got is None:
        try:
            got = _build(case)
        except Exception:  # the general path reports what is wrong with the case
            got = None
        object.__setattr__(case, _PLAN_ATTR, _NO_PLAN if got is None else got)
    if got is None or got is _NO_PLAN:
        return None
    if got.source is None:  # unpickled without its store
        got.source = case
    return got  # type: ignore[no-any-return]


def _build(case: Case) -> CasePlan | None:
    if not case_in_scope(case):
        return None
    if case.tools and read_only_tools(case):  # tools annotated readOnlyHint: general path
        return None
    items = []
    names: list[str] = []
    args: list[Any] = []
    own_modes: list[str | None] = []
    case_mode = case.args_mode
    for e in case.expected_calls:
        a = e.args
        if type(e) is not ExpectedCall or e.match or (a is not None and type(a) is not dict):
            return None
        own = e.args_mode
        if case_mode is not None and own is not None and own != case_mode:
            return None  # the matchings differ in which mode wins: general path
        name = e.name
        items.append((name, a, own))
        names.append(name)
        args.append(a)
        own_modes.append(own)
    plan = plan_of(items, None, case_mode)
    if plan is None:
        return None
    thr = checked_threshold(case.threshold)
    if thr is None:
        return None  # score_trajectory raises its error
    cat = case.metadata.get("category") if case.metadata else None
    shape = shape_of(tuple(names), tuple(own_modes), case_mode, frozenset(case.optional_calls),
                     tuple(case.forbidden_calls))
    part = (tuple(args), plan,
            _case_int(case, "optimal_steps") if case.optimal_steps is not None else None,
            _case_int(case, "max_steps") if case.max_steps is not None else None,
            float(thr), cat if isinstance(cat, str) else None)
    return join(shape, part, case.id, None, case)


#: the fields a plan shares with every case of the same shape (names, modes, optional and
#: forbidden tools): a case store keeps each shape once (``shape_of`` / ``join``)
_SHAPE = ("exp_names", "exp_modes", "writes", "write_pos", "optional", "forbidden", "by_name",
          "args_mode", "own_modes")
#: the fields of one case's own (its arguments and figures), beside its shape
_PART = ("exp_args", "plan", "optimal_steps", "max_steps", "threshold", "category")


def shape_key(names: tuple[str, ...], own_modes: tuple[str | None, ...], args_mode: str | None,
              optional: frozenset[str], forbidden: tuple[str, ...]) -> tuple[Any, ...]:
    """What decides a plan's shape fields (``_SHAPE``): equal keys, equal shapes."""
    return (names, own_modes, args_mode, optional, forbidden)


def shape_of(names: tuple[str, ...], own_modes: tuple[str | None, ...], args_mode: str | None,
             optional: frozenset[str], forbidden: tuple[str, ...]) -> tuple[Any, ...]:
    """The shape fields (``_SHAPE``, in that order) of a plan with these expected tool
    names, their own args modes, the case-level mode, optional and forbidden tools, as
    ``_build`` derives them."""
    default = args_mode or DEFAULT_ARGS_MODE
    by_name: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        got = by_name.get(name)
        if got is None:
            by_name[name] = [j]
        else:
            got.append(j)
    writes = tuple([j for j, n in enumerate(names) if n not in optional])
    return (names, tuple([m or default for m in own_modes]), writes,
            {j: k for k, j in enumerate(writes)}, optional, forbidden, by_name, args_mode, own_modes)


def split(plan: CasePlan) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
    """``(shape key, shape, part)`` of ``plan``: its shape fields (``_SHAPE``, shared by the
    cases of one shape) and its own (``_PART``), each a tuple of plain values (strings,
    numbers, tuples, lists, dicts, frozensets: ``marshal`` writes them) for ``join``.
    Leaves out the id, the hash, the lazily filled caches and the case."""
    d = plan.__dict__
    return (shape_key(plan.exp_names, plan.own_modes, plan.args_mode, plan.optional, plan.forbidden),
            tuple([d[k] for k in _SHAPE]), tuple([d[k] for k in _PART]))


def join(shape: tuple[Any, ...], part: Sequence[Any], cid: str, case_hash: str | None,
         source: Any) -> CasePlan:
    """The plan ``split`` gave ``shape`` and ``part`` for (``part`` may hold more items
    after ``_PART``'s), with its case id, the definition hash when known and ``source``
    (the case, or a ``(mapping, id)`` pair holding it). The shape's containers are shared
    by every plan joined from it: read-only."""
    obj: CasePlan = object.__new__(CasePlan)
    obj.__dict__ = {  # no __init__: every field is set, in field order
        "exp_names": shape[0], "exp_modes": shape[1], "exp_args": part[0], "plan": part[1],
        "writes": shape[2], "write_pos": shape[3], "optional": shape[4], "forbidden": shape[5],
        "by_name": shape[6], "optimal_steps": part[2], "max_steps": part[3],
        "threshold": part[4], "forbidden_pattern": {}, "case_hash": case_hash, "case_id": cid,
        "category": part[5], "args_mode": shape[7], "own_modes": shape[8], "source": source}
    return obj


def expected_rows(names: Sequence[str], args: Sequence[Any],
                  own_modes: Sequence[str | None]) -> list[dict[str, Any]]:
    """The dataset-row form of a plan's expected calls (names, arguments and own modes):
    ``Case.from_dict`` of a row with these gives the same ``ExpectedCall`` objects (a plan
    has no ``match`` specs)."""
    return [{"name": n, "args": a} if m is None else {"name": n, "args": a, "args_mode": m}
            for n, a, m in zip(names, args, own_modes)]


def plan_for(cases: Mapping[str, Case], cid: str) -> CasePlan | None:
    """``case_plan(cases[cid])``, without building the case when ``cases`` is a
    ``case_store.CaseStore`` (``CaseStore.plan``). Raises ``KeyError`` for an unknown id."""
    if isinstance(cases, _case_store.CaseStore):
        return cases.plan(cid)
    return case_plan(cases[cid])


# case_store imports this module, so it is imported after this module's names exist (bound
# at import, never filled while scoring: hosts score from threads)
from ..read import case_store as _case_store  # noqa: E402

__all__ = ["CasePlan", "case_plan", "expected_rows", "join", "plan_for", "shape_key", "shape_of", "split"]
