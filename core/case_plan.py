"""A case compiled once for fast per-run scoring (``fast_scoring``).

``case_plan(case)`` holds what every run of the case needs and does not depend on the run:
the expected calls keyed by canonical arguments (``exact_match.plan_of``), the
state-changing (non-optional) expected calls, names, modes, the step bounds, threshold and
definition hash. It is kept on the case object itself (as ``case_store`` keeps the hash),
so memory is bounded by the cases alive, and a case built again gets a new plan.

A case outside the fast path's scope gets ``None`` and is scored by the general path
(``scoring.score_run``): any expected call with a ``match`` spec or non-dict arguments, a
case-level ``args_mode`` that disagrees with a call's own, forbidden sequences, precedence
rules, faults, required response items, an expected route, or case metadata other than
``category`` (composite weights, expected behaviour, replay and outcome-check settings).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .exact_match import ExactPlan, plan_of
from .metrics.composite import DEFAULT_THRESHOLD, _case_int, _is_num
from .model import DEFAULT_ARGS_MODE, Case, ExpectedCall

_PLAN_ATTR = "_fast_plan"
_NO_PLAN: Any = ()  # marker kept on a case outside the scope
_CASE_META = frozenset({"category"})


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

    def hash_of(self, case: Case) -> str:
        """``fingerprint.case_hash(case)`` (the case this plan was built from), once."""
        if self.case_hash is None:
            from .fingerprint import case_hash

            self.case_hash = case_hash(case)
        return self.case_hash

    def is_forbidden(self, name: str) -> bool:
        """Whether ``name`` matches a ``forbidden_calls`` pattern (``fnmatchcase``)."""
        hit = self.forbidden_pattern.get(name)
        if hit is None:
            hit = self.forbidden_pattern[name] = any(fnmatchcase(name, p) for p in self.forbidden)
        return hit


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
    return None if got is _NO_PLAN else got  # type: ignore[no-any-return]


def _build(case: Case) -> CasePlan | None:
    if (type(case) is not Case or case.forbidden_sequences or case.precedence or case.faults
            or case.response_must_include or case.expected_route is not None
            or (case.metadata and not case.metadata.keys() <= _CASE_META)):
        return None
    items = []
    names: list[str] = []
    modes: list[str] = []
    by_name: dict[str, list[int]] = {}
    case_mode = case.args_mode
    default = case_mode or DEFAULT_ARGS_MODE
    for j, e in enumerate(case.expected_calls):
        if type(e) is not ExpectedCall or e.match or (e.args is not None and type(e.args) is not dict):
            return None
        own = e.args_mode
        if case_mode is not None and own is not None and own != case_mode:
            return None  # the matchings differ in which mode wins: general path
        items.append((e.name, e.args, own))
        names.append(e.name)
        modes.append(own or default)
        by_name.setdefault(e.name, []).append(j)
    plan = plan_of(items, None, case_mode)
    if plan is None:
        return None
    thr = case.threshold if case.threshold is not None else DEFAULT_THRESHOLD
    if not _is_num(thr) or not 0.0 <= thr <= 1.0:
        return None
    optional = frozenset(case.optional_calls)
    writes = tuple(j for j, n in enumerate(names) if n not in optional)
    return CasePlan(tuple(names), tuple(modes), tuple(a for _, a, _ in items), plan, writes,
                    {j: k for k, j in enumerate(writes)}, optional, tuple(case.forbidden_calls),
                    by_name, _case_int(case, "optimal_steps"), _case_int(case, "max_steps"),
                    float(thr), {})

__all__ = ["CasePlan", "case_plan"]
