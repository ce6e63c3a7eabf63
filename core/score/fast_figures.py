"""Figures of fast per-run scoring (``fast_scoring``) from the one matching of a run: the
in-order (LCS) alignment count, the composite's argument accuracy and the composite score
itself, each equal to its metric's value for a case inside the fast path's scope (every
expected call ``exact``, the default composite weights)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from ..match.matchers import exact_equal
from ..match.matching import _exact_args_ok, max_weight_assignment
from ..metrics.composite import COMPONENTS, DEFAULT_WEIGHTS, _nearest_simple
from ..metrics.efficiency import step_efficiency
from ..metrics.trajectory_scores import _lcs_groups, matching_in_order
from .case_plan import CasePlan

_WEIGHTS = tuple(DEFAULT_WEIGHTS[k] for k in COMPONENTS)


def composite_score(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
                    plan: CasePlan) -> float | None:
    """``metrics.composite.score_trajectory``'s raw score with the default weights: the
    weighted mean of outcome, tool selection (name F1), argument accuracy and step
    efficiency over the applicable components, snapped by ``_nearest_simple`` and clipped
    to [0, 1]; None when no component applies. Raises what ``step_efficiency`` raises."""
    return _composite(success, name_f1, arg_acc, n_agent, plan.optimal_steps, plan.max_steps)


# runs repeat a few combinations, and the score is a function of them alone: remembered in
# functools' cache (thread-safe; it holds floats, nothing a caller can change)
@functools.lru_cache(maxsize=65536)
def _composite(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
               optimal_steps: int | None, max_steps: int | None) -> float | None:
    values = (1.0 if success else 0.0, name_f1, arg_acc,
              step_efficiency(n_agent, optimal_steps, max_steps))
    applicable = [(w, v) for w, v in zip(_WEIGHTS, values) if v is not None and w > 0]
    if not applicable:
        return None
    total_w = sum(w for w, _ in applicable)
    return min(1.0, max(0.0, _nearest_simple(math.fsum(w / total_w * float(v or 0.0)
                                                      for w, v in applicable))))


def lcs_counts(kept: Sequence[int], call_step: list[int], ml: list[int], rows: list[list[int]],
               n_exp: int, knames: list[str], opt: frozenset[str], tp: int,
               nonopt_tp: int) -> tuple[int, int]:
    """``trajectory_scores.lcs_prf``'s (aligned, aligned non-optional) counts over the
    kept calls (``call_step``: each call's step, ``ml``/``rows`` the kept calls' maximum
    matching and compatibility rows, ``knames`` their tool names, ``opt`` the optional tools;
    ``tp``/``nonopt_tp`` the matching's counts). When the maximum matching already runs in
    order across steps, it is a longest common subsequence: its pairs align, no alignment
    has more (each is a matching), and every maximum matching pairs as many calls of each
    tool, so as many non-optional ones (``trajectory_scores.matching_in_order``)."""
    if matching_in_order(kept, call_step, ml):
        return tp, nonopt_tp
    groups: list[list[int]] = []
    last = None
    for k, i in enumerate(kept):
        st = call_step[i]
        if groups and st == last:
            groups[-1].append(k)
        else:
            groups.append([k])
        last = st
    return _lcs_groups(groups, [set(r) for r in rows], n_exp, [nm not in opt for nm in knames])


def argument_accuracy(plan: CasePlan, knames: list[str], kargs: list[Any], ml: list[int],
                      parsed: dict[str, int], paired: dict[str, int]) -> float | None:
    """The score of ``metrics.calls.argument_accuracy`` for exact expected calls
    (``knames``/``kargs``: the kept calls' tool names and arguments, ``ml`` their matching, ``parsed``/``paired``: per tool, its kept calls
    with object arguments and those the matching paired): per tool, the maximum-weight
    assignment of its expected calls to its parsed calls, the weight being the share of
    expected arguments equal (a call with no argument constraint: whether the whole call
    matches); averaged over the pairs. A matched pair weighs 1 (its arguments match), so a
    tool whose calls and expected calls the matching pairs as far as they go adds only
    ones: the assignment of all ones is the maximum, and any maximum one is all ones."""
    by_name = plan.by_name
    n_ones = 0
    loose: list[str] = []
    for nm, exps in by_name.items():  # in the order of the expected calls, as the metric
        n_ps = parsed.get(nm, 0)
        if not n_ps:
            continue
        n_pairs = min(n_ps, len(exps))
        if paired.get(nm, 0) == n_pairs:
            n_ones += n_pairs
        else:
            loose.append(nm)
    if not loose:
        return 1.0 if n_ones else None  # the mean of ones: fsum([1.0] * n) / n
    acc: list[float] = []
    for nm, exps in by_name.items():
        if nm not in loose:
            n_ps = parsed.get(nm, 0)
            if n_ps:
                acc.extend([1.0] * min(n_ps, len(exps)))
            continue
        ps = [a for k, a in zip(knames, kargs) if k == nm and a is not None]
        weights = [[_weight(plan.exp_args[j], plan.exp_modes[j], pargs) for pargs in ps]
                   for j in exps]
        if len(exps) == 1 and len(ps) == 1:
            acc.append(weights[0][0])
            continue
        acc.extend(weights[r][col] for r, col in enumerate(max_weight_assignment(weights))
                   if col != -1)
    return math.fsum(acc) / len(acc)


def _weight(eargs: Any, mode: str, pargs: dict[str, Any]) -> float:
    """One cell of ``argument_accuracy``'s weights (``matching.argument_checks``)."""
    if mode == "ignore":
        return 1.0
    if not eargs:  # no argument constraint: the whole call decides
        return 1.0 if eargs is None or _exact_args_ok(pargs, eargs, mode) else 0.0
    ok = 0
    for k, ev in eargs.items():
        if k in pargs and exact_equal(ev, pargs[k]):
            ok += 1
    return ok / len(eargs)


__all__ = ["argument_accuracy", "composite_score", "lcs_counts"]
