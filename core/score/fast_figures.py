"""Facts of fast per-run scoring (``fast_scoring``) for the composite: the argument-accuracy
weights of the one matching of a run and the composite score with the default weights,
each computed by the formulas of ``metrics.formulas`` (``argument_weight``,
``mean_accuracy``, ``composite_from``, ``composite_verdict``) and argument accuracy's pairing
(``matching.assign_per_tool``) for a case inside the fast path's scope (every
expected call ``exact``)."""

from __future__ import annotations

import functools
from typing import Any

from ..match.matchers import exact_equal
from ..match.matching import _exact_args_ok, assign_per_tool
from ..metrics.composite import COMPONENTS, DEFAULT_WEIGHTS
from ..metrics.efficiency import step_efficiency
from ..metrics.formulas import argument_weight, composite_from, composite_verdict, mean_accuracy
from .case_plan import CasePlan

_WEIGHTS = tuple(DEFAULT_WEIGHTS[k] for k in COMPONENTS)


def composite_score(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
                    plan: CasePlan, critical: bool) -> tuple[float | None, bool | None]:
    """``metrics.composite.score_trajectory``'s score and verdict with the default weights.

    Args:
        success: the run's outcome.
        name_f1: tool selection (the F1 of tool names).
        arg_acc: argument accuracy (None: no expected tool called; unread when critical).
        n_agent: the run's agent turns (``efficiency.step_efficiency``).
        plan: the case's plan (step bounds and threshold).
        critical: whether the run made a forbidden call.

    Returns:
        ``formulas.composite_verdict`` of ``formulas.composite_from``'s score (the weighted
        mean of outcome, tool selection, argument accuracy and step efficiency over the
        applicable components, snapped and clipped): ``(score, passed)``, ``(0.0, False)``
        on a forbidden call, ``(None, None)`` when no component applies.

    Raises:
        MetricInputError: what ``step_efficiency`` raises.
    """
    if critical:
        return composite_verdict(None, plan.threshold, True)
    return _composite(success, name_f1, arg_acc, n_agent, plan.optimal_steps, plan.max_steps,
                      plan.threshold)


# runs repeat a few combinations, and the result is a function of them alone: remembered in
# functools' cache (thread-safe; it holds floats and bools, nothing a caller can change)
@functools.lru_cache(maxsize=65536)
def _composite(success: bool, name_f1: float, arg_acc: float | None, n_agent: int,
               optimal_steps: int | None, max_steps: int | None, threshold: float
               ) -> tuple[float | None, bool | None]:
    raw = composite_from((1.0 if success else 0.0, name_f1, arg_acc,
                          step_efficiency(n_agent, optimal_steps, max_steps)), _WEIGHTS)[0]
    return composite_verdict(raw, threshold, False)


def argument_accuracy(plan: CasePlan, knames: list[str], kargs: list[Any], ml: list[int],
                      parsed: dict[str, int], paired: dict[str, int]) -> float | None:
    """The score of ``metrics.calls.argument_accuracy`` for exact expected calls.

    Args:
        plan: the case's plan (its expected calls per tool, their arguments and modes).
        knames: the kept calls' tool names.
        kargs: their arguments (None: not an object).
        ml: their matching (the expected index of each, -1 unpaired).
        parsed: per tool, its kept calls with object arguments.
        paired: per tool, those the matching paired.

    Returns:
        ``formulas.mean_accuracy`` of the pairs ``matching.assign_per_tool`` gives, weighed
        by ``_weight``; None when no expected tool was called. A matched pair weighs 1 (its
        arguments match), so a tool whose calls and expected calls the matching pairs as far
        as they go adds only ones (the assignment of all ones is the maximum, and any
        maximum one is all ones): its pairs are counted, not weighed again.

    Raises:
        Nothing for a plan of the fast scope.
    """
    by_name = plan.by_name
    n_ones = 0
    loose: list[str] = []
    for nm, exps in by_name.items():
        n_ps = parsed.get(nm, 0)
        if not n_ps:
            continue
        n_pairs = min(n_ps, len(exps))
        if paired.get(nm, 0) == n_pairs:
            n_ones += n_pairs
        else:
            loose.append(nm)
    if not loose:
        return mean_accuracy([1.0] * n_ones)
    exp_args, exp_modes = plan.exp_args, plan.exp_modes
    pairs = assign_per_tool(
        [(by_name[nm], [a for k, a in zip(knames, kargs) if k == nm and a is not None])
         for nm in loose],
        lambda j, ps: [_weight(exp_args[j], exp_modes[j], pargs) for pargs in ps])
    # fsum is exactly rounded: the ones and the weights may be summed in any order
    return mean_accuracy([1.0] * n_ones + [w for _, _, w in pairs])


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
