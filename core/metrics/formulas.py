"""Count-to-figure formulas: every step from counts or facts to a per-run figure, defined
once and called by every scoring path.

The metrics (``calls``, ``trajectory_scores``, ``composite``, ``steps``, ``efficiency``,
``match.matching``) gather their facts from ``Trajectory`` and ``Case`` objects; the fast
scorer (``score.fast_scoring``) and the fused route gather the same facts from a run read
once or from a JSONL line. Both hand the facts to these functions, so a figure can only
differ between the paths if the facts do. Pure functions of their arguments: no module
state, nothing imported beyond the standard library (``nearest_simple`` keeps a
functools cache of its pure results).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Container, Iterable, Mapping, Sequence, Sized
from fractions import Fraction
from typing import Any

#: the step kinds that are the agent's own turns (``efficiency.agent_steps``: one step each)
AGENT_KINDS: tuple[str, ...] = ("assistant", "tool_call", "final_response")
#: a recorded reward counts as success when within this of 1 (tau-bench's rule; ``reward_success``)
SUCCESS_TOL = 1e-6


def prf_counts(tp: int, n_counted: int, n_expected: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts, with DESIGN.md's empty-case rules.

    Args:
        tp: matched calls.
        n_counted: counted predicted calls (``n_counted``).
        n_expected: expected calls.

    Returns:
        ``(precision, recall, f1)``, each in [0, 1]: no counted call gives precision 1.0
        when nothing is expected (else 0.0), nothing expected gives recall 1.0; F1 is 1.0
        when nothing was expected and nothing counted was called.

    Raises:
        Nothing for non-negative counts.

    F1 = 2PR / (P + R) (seed 000 §2.3) is computed as 2 tp / (n_counted + n_expected), the
    same value in one division, so it is the float nearest the exact fraction: P = 1, R = 1/9
    gives 0.2, where 2PR / (P + R) in floats gives 0.19999999999999998.
    """
    if n_counted:
        p = tp / n_counted
    else:
        p = 1.0 if n_expected == 0 else 0.0
    r = tp / n_expected if n_expected else 1.0
    if tp:
        f = 2 * tp / (n_counted + n_expected)
    else:
        f = 1.0 if p + r == 2.0 else 0.0  # nothing expected and nothing counted: 1, else 0
    return p, r, f


def n_counted(n_matched: int, n_nonoptional: int, n_matched_nonoptional: int) -> int:
    """The counted calls of a matching (DESIGN.md "optional calls").

    Args:
        n_matched: kept calls the matching (or alignment) pairs.
        n_nonoptional: kept calls of tools not in ``optional_calls``.
        n_matched_nonoptional: those of them it pairs.

    Returns:
        Every paired call plus every unpaired call of a non-optional tool (an unpaired call
        of an optional tool is not counted).

    Raises:
        Nothing.
    """
    return n_matched + (n_nonoptional - n_matched_nonoptional)


def retried_indices(names: Sequence[str], failed: Sequence[bool]) -> set[int]:
    """The failed-and-retried calls (DESIGN.md policy), set aside before matching.

    Args:
        names: every call's tool name, in run order.
        failed: per call, whether its result failed (``matching.is_failed``).

    Returns:
        The indices of failed calls whose tool is called again later.

    Raises:
        Nothing for sequences of one length.
    """
    out: set[int] = set()
    seen_later: set[str] = set()
    for i in range(len(names) - 1, -1, -1):
        if failed[i] and names[i] in seen_later:
            out.add(i)
        seen_later.add(names[i])
    return out


def result_failed(is_error: Any, error: Any) -> bool:
    """Whether a tool result failed (DESIGN.md, "The neutral model"): the one test every
    path applies to a result (``matching.is_failed`` on a ``ToolResult``, the fast readers
    on its fields).

    Args:
        is_error: the result's ``is_error`` flag (True, False or None: the source has no
            error channel).
        error: the result's error text (None or empty: none).

    Returns:
        True when ``is_error`` is True or ``error`` is non-empty; a missing flag with no
        error text is not a failure.

    Raises:
        Nothing.
    """
    return is_error is True or bool(error)


def usage_total(total_tokens: int | None, input_tokens: int | None,
                output_tokens: int | None) -> int | None:
    """A usage's token total (``model.Usage.total``).

    Args:
        total_tokens: the stated total, or None.
        input_tokens: input tokens, or None.
        output_tokens: output tokens, or None.

    Returns:
        ``total_tokens`` when given, else input + output (an unknown side counts 0), else
        None when both are unknown.

    Raises:
        Nothing for integers or None.
    """
    if total_tokens is not None:
        return total_tokens
    if input_tokens is None and output_tokens is None:
        return None
    return (input_tokens or 0) + (output_tokens or 0)


def unrecovered_failures(names: Sequence[str], failed: Sequence[bool]) -> list[str]:
    """The tools that failed and never succeeded in the run: the "action's successful call
    is missing" of a false success (``sequences.error_recovery``'s
    ``unsatisfied_actions`` when no action tools are given, ``recovery.is_false_success``,
    the fast scorer's false-success check).

    Args:
        names: every call's tool name, in run order.
        failed: per call, whether its result failed (``result_failed``).

    Returns:
        The sorted names of tools with a failed call and no call whose result did not fail
        (an unknown status counts as not failed); empty when every failed tool succeeded
        somewhere in the run.

    Raises:
        Nothing for sequences of one length.
    """
    ok = {nm for nm, bad in zip(names, failed) if not bad}
    return sorted({nm for nm, bad in zip(names, failed) if bad and nm not in ok})


def run_id_of(run_id: Any, case_id: str, trial: Any) -> str:
    """A scored run's id (``RunResult.run_id``).

    Args:
        run_id: the run's ``metadata["run_id"]`` (None or empty: none).
        case_id: the case's id.
        trial: the run's ``metadata["trial"]`` (None: none).

    Returns:
        ``str(run_id)`` when given, else ``f"{case_id}-{trial}"`` with trial 0 when unknown.

    Raises:
        Nothing.
    """
    return str(run_id or f"{case_id}-{trial if trial is not None else 0}")


def recorded_group(task_id: Any, case_id: str) -> str | None:
    """The source's own task id of a run when it differs from its case id
    (``RunResult.recorded_group``, what pass^k groups by when given).

    Args:
        task_id: the run's ``metadata["recorded_task_id"]`` (None: none).
        case_id: the case's id.

    Returns:
        ``str(task_id)``, or None when it is None or equals ``case_id``.

    Raises:
        Nothing.
    """
    if task_id is None:
        return None
    g = str(task_id)
    return g if g != case_id else None


def name_counts(n_kept: Mapping[str, int], n_parsed: Mapping[str, int],
                expected: Mapping[str, Sized], optional: Container[str]) -> tuple[int, int]:
    """``(tp, counted)`` of tool-name matching (``multiset_prf`` with ``args_mode="ignore"``,
    the composite's tool selection): per tool, min(calls whose arguments parsed, expected
    calls) are matched (any such pair is compatible; a call whose arguments did not parse
    never matches); unmatched calls of optional tools do not count.

    Args:
        n_kept: per tool, its kept (non-retried) calls.
        n_parsed: per tool, those whose arguments parsed to an object.
        expected: per tool, its expected calls (anything with a length).
        optional: the optional tool names.

    Returns:
        ``(tp, counted)`` for ``prf_counts``.

    Raises:
        Nothing.
    """
    tp = counted = 0
    for nm, n_all in n_kept.items():  # sums: the order does not matter
        exps = expected.get(nm)
        m = 0 if exps is None else min(n_parsed.get(nm, 0), len(exps))
        tp += m
        counted += m if nm in optional else n_all
    return tp, counted


def argument_weight(passed: int, total: int, call_ok: bool, ignore: bool) -> float:
    """One pair's argument accuracy (seed 000 §2.2 ``arg_accuracy``).

    Args:
        passed: argument checks the predicted call passes.
        total: argument checks of the expected call (0: no argument constraint).
        call_ok: whether the whole call matches (read only when ``total`` is 0).
        ignore: the expected call's mode is ``ignore``.

    Returns:
        1.0 under ``ignore``; else ``passed / total``; with no constraint 1.0 when the
        whole call matches, else 0.0.

    Raises:
        Nothing.
    """
    if ignore:
        return 1.0
    if total:
        return passed / total
    return 1.0 if call_ok else 0.0


def mean_accuracy(values: Sequence[float]) -> float | None:
    """The argument-accuracy score: the mean of the paired calls' weights.

    Args:
        values: each assigned pair's ``argument_weight``.

    Returns:
        ``math.fsum(values) / len(values)``; None for no pair (no expected tool called).

    Raises:
        Nothing.
    """
    return math.fsum(values) / len(values) if values else None


def duplicates_from(n_paired: int) -> int:
    """Where duplicates start in a class of identical counted calls (same tool and
    arguments, in run order; ``steps.step_eval``'s "duplicate" flag).

    Args:
        n_paired: members of the class the matching pairs.

    Returns:
        The position in the class from which members are duplicates: as many members as
        are paired (at least one) are not; a class longer than this holds a duplicate.

    Raises:
        Nothing.
    """
    return max(n_paired, 1)


@functools.lru_cache(maxsize=4096)  # a suite's scores take few values; Fraction work is slow
def nearest_simple(x: float) -> float:
    """``x`` snapped to the simple fraction it stands for.

    Args:
        x: a weighted sum (or a sum times the rules factor).

    Returns:
        The float nearest to the fraction of denominator <= 10**6 closest to ``x``, when
        that fraction lies within float noise (1e-12) of ``x``; else ``x`` itself. Binary
        noise in the weights (0.15, 0.1, renormalised weights) must not put a score that is
        exactly the threshold below it. Remembered in functools' cache (thread-safe, floats).

    Raises:
        Nothing for a finite ``x``.
    """
    simple = Fraction(x).limit_denominator(10**6)
    return float(simple) if abs(float(simple) - x) <= 1e-12 else x


def composite_from(values: Sequence[float | None], weights: Sequence[float]
                   ) -> tuple[float | None, list[float]]:
    """The composite's weighted parts (DESIGN.md "Composite score").

    Args:
        values: each component's value in [0, 1], or None when not applicable.
        weights: each component's weight (the same order).

    Returns:
        ``(raw, effective_weights)``: the weighted mean over the applicable components
        (value not None, weight > 0), weights renormalised to sum to 1, snapped by
        ``nearest_simple`` and clipped to [0, 1]; None when no component applies.

    Raises:
        Nothing for weights ``composite.check_weights`` accepts.
    """
    applicable = [i for i, (v, w) in enumerate(zip(values, weights)) if v is not None and w > 0]
    total_w = sum(weights[i] for i in applicable)
    eff = [weights[i] / total_w if i in applicable else 0.0 for i in range(len(weights))]
    if not applicable:
        return None, eff
    raw = math.fsum(eff[i] * float(values[i] or 0.0) for i in applicable)
    return min(1.0, max(0.0, nearest_simple(raw))), eff


def composite_verdict(score: float | None, threshold: float, critical: bool
                      ) -> tuple[float | None, bool | None]:
    """The composite's final score and verdict (DESIGN.md "Policies: Composite").

    Args:
        score: the weighted parts (``composite_from``'s raw score) times the rules factor
            when one applies; None when no weighted component applies.
        threshold: the pass mark in [0, 1] (``composite.checked_threshold``).
        critical: whether the run broke a critical rule (a forbidden call or a critical
            forbidden sequence).

    Returns:
        ``(0.0, False)`` on a critical violation, whatever the parts (seed 001: "any
        forbidden sequence violation -> instant score of 0"); else ``(None, None)`` when no
        component applies; else ``(score, score >= threshold)``.

    Raises:
        Nothing.
    """
    if critical:
        return 0.0, False
    if score is None:
        return None, None
    return score, score >= threshold


def reward_success(reward: float) -> bool:
    """Whether a source's recorded reward counts as a success (tau-bench's rule).

    Args:
        reward: the reward the source recorded for a run (or one part of it).

    Returns:
        True when ``reward`` is within ``SUCCESS_TOL`` (1e-6) of 1.0.

    Raises:
        TypeError: for a value that is not a number.
    """
    return abs(reward - 1.0) <= SUCCESS_TOL


def run_figures(total_tokens: Any, step_tokens: Sequence[int], total_cost: Any,
                step_costs: Sequence[float], total_latency: Any, starts: Sequence[float],
                ends: Sequence[float], step_latencies: Iterable[float]
                ) -> tuple[Any, Any, Any]:
    """A run's tokens, cost and latency (``efficiency.run_stats``).

    Args:
        total_tokens: the run's own total (None: unknown).
        step_tokens: each step's known total.
        total_cost: the run's own cost (None: unknown).
        step_costs: each step's known cost.
        total_latency: the run's own latency in ms (None: unknown).
        starts: the steps' known start times (seconds).
        ends: the steps' known end times (seconds).
        step_latencies: the steps' known latencies in ms.

    Returns:
        ``(tokens, cost, latency)``: a run's own figure when given, else tokens summed over
        the steps, cost ``fsum`` of the steps', latency (last end - first start) * 1000 when
        step times exist, else ``fsum`` of the steps' latencies; None where nothing is known.

    Raises:
        OverflowError: from ``math.fsum`` for sums past the largest float.
    """
    tokens = total_tokens if total_tokens is not None else (sum(step_tokens) if step_tokens else None)
    cost = total_cost
    if cost is None and step_costs:
        cost = math.fsum(step_costs)
    latency = total_latency
    if latency is None:
        if starts and ends:
            latency = (max(ends) - min(starts)) * 1000.0
        else:
            lats = list(step_latencies)
            latency = math.fsum(lats) if lats else None
    return tokens, cost, latency


__all__ = ["AGENT_KINDS", "SUCCESS_TOL", "argument_weight", "composite_from", "composite_verdict",
           "duplicates_from", "mean_accuracy", "n_counted", "name_counts", "nearest_simple",
           "prf_counts", "retried_indices", "reward_success", "run_figures"]
