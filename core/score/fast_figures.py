"""Facts of fast per-run scoring (``fast_scoring``) for the composite: the argument-accuracy
weights of the one matching of a run and the composite score with the default weights,
each computed by the formulas of ``metrics.formulas`` (``argument_weight``,
``mean_accuracy``, ``composite_from``) for a case inside the fast path's scope (every
expected call ``exact``)."""

from __future__ import annotations

import functools
from typing import Any

from ..match.matchers import exact_equal
from ..match.matching import _exact_args_ok, max_weight_assignment
from ..metrics.composite import COMPONENTS, DEFAULT_WEIGHTS
from ..metrics.efficiency import step_efficiency
from ..metrics.formulas import argument_weight, composite_from, mean_accuracy
from .case_plan import CasePlan

_WEIGHTS = tuple(DEFAULT_WEIGHTS[k] for k in COMPONENTS)


def composite_score(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
                    plan: CasePlan) -> float | None:
    """``metrics.composite.score_trajectory``'s raw score with the default weights: the
    weighted mean of outcome, tool selection (name F1), argument accuracy and step
    efficiency over the applicable components, snapped by ``formulas.nearest_simple`` and clipped
    to [0, 1]; None when no component applies. Raises what ``step_efficiency`` raises."""
    return _composite(success, name_f1, arg_acc, n_agent, plan.optimal_steps, plan.max_steps)


# runs repeat a few combinations, and the score is a function of them alone: remembered in
# functools' cache (thread-safe; it holds floats, nothing a caller can change)
@functools.lru_cache(maxsize=65536)
def _composite(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
               optimal_steps: int | None, max_steps: int | None) -> float | None:
    return composite_from((1.0 if success else 0.0, name_f1, arg_acc,
                           step_efficiency(n_agent, optimal_steps, max_steps)), _WEIGHTS)[0]


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
    return mean_accuracy(acc)


def _weight(eargs: Any, mode: str, pargs: dict[str, Any]) -> float:
    """One cell of ``argument_accuracy``'s weights: the facts of ``matching.argument_checks``
    for exact expected arguments (each expected argument present and ``exact_equal``; with
    no argument constraint, whether the whole call matches), weighed by
    ``formulas.argument_weight``."""
    if mode == "ignore":
        return argument_weight(0, 0, True, True)
    if not eargs:  # no argument constraint: the whole call decides
        return argument_weight(0, 0, eargs is None or _exact_args_ok(pargs, eargs, mode), False)
    ok = 0
    for k, ev in eargs.items():
        if k in pargs and exact_equal(ev, pargs[k]):
            ok += 1
    return argument_weight(ok, len(eargs), False, False)


__all__ = ["argument_accuracy", "composite_score"]
