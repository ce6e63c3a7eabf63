"""Reliability statistics over repeated trials: pass^k, pass@k, intervals, the bootstrap
(the paired comparison of two agents is in :mod:`trajcheck.metrics.comparison`).

Everything here is pure standard library (``math``, ``random.Random`` with an explicit seed,
``fractions``) and deterministic given its seed. Definitions follow ../shared/DESIGN.md
("Semantics that must be exactly right" and "Policies: Intervals"):

- pass^k = mean over tasks of C(c, k) / C(n, k)   (tau-bench, Yao et al. 2024, arXiv 2406.12045;
  the estimator of tau-bench's and tau2-bench's own code);
- pass@k = mean over tasks of 1 - C(n - c, k) / C(n, k)   (unbiased estimator of Chen et al.
  2021, "Evaluating Large Language Models Trained on Code", arXiv 2107.03374, eq. 1);
- both need n >= k for every task; otherwise ``MetricInputError`` naming the task;
- the bootstrap resamples tasks (never trials), is seeded and uses percentile intervals;
- a plain rate gets a Wilson score interval with the exact normal quantile (1.959964 at 95%);
  zero failures (or zero successes) in n trials also report the rule-of-three bound 3/n.

Task results may be given in any of these shapes (``TaskResults``):

- a mapping ``{task_id: [bool, ...]}`` (one bool per trial),
- a mapping ``{task_id: (c, n)}`` (c successes in n trials, successes first, as seed 000
  §4.3's ``successes_per_task``; two non-bool ints),
- a sequence of either of those values, task ids being the positions 0, 1, ...

Trial outcomes must be real ``bool`` values: a pair of plain ints is always read as
``(c, n)``, so ``[1, 0]`` is never silently taken for two trial outcomes. A pair with more
successes than trials (most often counts written trials-first) raises, naming the task.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import MetricInputError
from .result import MetricResult

TaskValue = Sequence[bool] | tuple[int, int]
TaskResults = Mapping[Hashable, TaskValue] | Sequence[TaskValue]

__all__ = [
    "TaskCounts",
    "task_counts",
    "pass_hat_k",
    "pass_at_k",
    "pass_k_grouped",
    "pass_hat_k_curve",
    "pass_at_k_curve",
    "normal_quantile",
    "wilson_interval",
    "rule_of_three",
    "RateResult",
    "success_rate",
    "percentile",
    "percentile_interval",
    "mean_from_sum",
    "exact_mean",
    "draw_tasks",
    "BootstrapCI",
    "bootstrap_ci",
]


# --------------------------------------------------------------------------------------------
# Input normalisation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskCounts:
    """One task's trial record: ``n`` trials, ``c`` successes, and the per-trial outcomes
    (``trials``) when they were given as bools (else None)."""

    task_id: Hashable
    n: int
    c: int
    trials: tuple[bool, ...] | None = None

    @property
    def rate(self) -> float:
        """The task's success rate c / n (n >= 1 is guaranteed by ``task_counts``)."""
        return self.c / self.n


def _is_plain_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _one_task(task_id: Hashable, value: Any) -> TaskCounts:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise MetricInputError(
            f"task {task_id!r}: expected a list of bool trial outcomes or a (c, n) pair "
            f"(successes, trials), got {type(value).__name__}"
        )
    if len(value) == 2 and _is_plain_int(value[0]) and _is_plain_int(value[1]):
        c, n = int(value[0]), int(value[1])
        if n < 1:
            raise MetricInputError(f"task {task_id!r}: (c, n) = ({c}, {n}): n = {n} trials; "
                                   "need n >= 1")
        if c < 0:
            raise MetricInputError(f"task {task_id!r}: (c, n) = ({c}, {n}): c = {c} successes "
                                   "is negative")
        if c > n:
            raise MetricInputError(
                f"task {task_id!r}: (c, n) = ({c}, {n}): c = {c} successes is more than n = {n} "
                "trials; pairs are (successes, trials), successes first, as in seed 000 §4.3")
        return TaskCounts(task_id, n, c)
    trials = tuple(value)
    for j, t in enumerate(trials):
        if not isinstance(t, bool):
            raise MetricInputError(
                f"task {task_id!r}, trial {j}: trial outcomes must be bool, got {t!r} "
                f"({type(t).__name__}); give counts as a (c, n) pair of ints (successes, trials)"
            )
    if not trials:
        raise MetricInputError(f"task {task_id!r}: no trials")
    return TaskCounts(task_id, len(trials), sum(trials), trials)


def task_counts(results: TaskResults) -> list[TaskCounts]:
    """Normalise task results (any ``TaskResults`` shape, see the module doc) to ``TaskCounts``.

    Raises ``MetricInputError`` for an empty suite, a task with no trials, a non-bool trial
    outcome, or a ``(c, n)`` pair with n < 1 or c outside 0..n; the message names the task
    and, for c > n, the expected order (successes first).
    """
    if isinstance(results, Mapping):
        items: list[tuple[Hashable, Any]] = list(results.items())
    elif isinstance(results, Sequence) and not isinstance(results, (str, bytes)):
        items = list(enumerate(results))
    else:
        raise MetricInputError(
            f"task results must be a mapping or a sequence, got {type(results).__name__}"
        )
    if not items:
        raise MetricInputError("empty suite: no tasks given")
    return [_one_task(tid, v) for tid, v in items]


def _check_k(k: Any) -> int:
    if not _is_plain_int(k) or k < 1:
        raise MetricInputError(f"k must be an int >= 1, got {k!r}")
    return int(k)


def _check_n_ge_k(tasks: Sequence[TaskCounts], k: int, what: str) -> None:
    short = [t for t in tasks if t.n < k]
    if short:
        names = ", ".join(f"{t.task_id!r} (n={t.n})" for t in short[:10])
        more = f" and {len(short) - 10} more" if len(short) > 10 else ""
        raise MetricInputError(
            f"{what} needs at least k = {k} trials per task; too few in task {names}{more}"
        )


# --------------------------------------------------------------------------------------------
# pass^k and pass@k
# --------------------------------------------------------------------------------------------


def pass_hat_k(results: TaskResults, k: int) -> float:
    """pass^k: the chance that k independent trials of a task ALL succeed, averaged over tasks.

    Args:
        results: any ``TaskResults`` shape (module doc), e.g. ``[(4, 4), (3, 4), (2, 4)]`` as
            ``(c, n)`` pairs.
        k: int >= 1.

    Returns:
        The mean over tasks of C(c, k) / C(n, k), in [0, 1] (exact fractions, rounded once to
        float).

    Raises:
        MetricInputError: an empty suite, k < 1, or a task with n < k (the message names the
            tasks) -- the estimator is undefined there, and tau2-bench's choice of silently
            lowering k is not followed.

    Examples:
        Task 1 passed 4 of 4 trials (pass^2 = 1), task 2 passed 2 of 4 (C(2,2) / C(4,2) =
        1/6); the mean is 7/12:

        >>> pass_hat_k([(4, 4), (2, 4)], 2)
        0.5833333333333334
        >>> pass_hat_k({"t1": [True, True], "t2": [True, False]}, 1)
        0.75

    Source: seed 000 §4.3; tau-bench (Yao et al. 2024, arXiv 2406.12045, section 5); the same
    estimator as tau-bench's and tau2-bench's ``pass^k`` code. pass^1 is the mean success
    rate.
    """
    k = _check_k(k)
    tasks = task_counts(results)
    _check_n_ge_k(tasks, k, "pass^k")
    return pass_k_grouped(Counter((t.c, t.n) for t in tasks), k, hat=True)


def pass_at_k(results: TaskResults, k: int) -> float:
    """pass@k: the chance that at least one of k trials of a task succeeds, averaged over tasks.

    Args:
        results: any ``TaskResults`` shape (module doc; pairs are ``(c, n)``).
        k: int >= 1.

    Returns:
        The mean over tasks of 1 - C(n - c, k) / C(n, k), in [0, 1] (exact fractions, one
        final rounding).

    Raises:
        MetricInputError: an empty suite, k < 1 or a task with n < k.

    Examples:
        Task 2 (2 of 4) misses both of 2 trials in C(2,2) / C(4,2) = 1/6 of the draws, so its
        pass@2 is 5/6 and the mean (1 + 5/6) / 2 = 11/12:

        >>> pass_at_k([(4, 4), (2, 4)], 2)
        0.9166666666666666

    The unbiased estimator of Chen et al. 2021 (arXiv 2107.03374, eq. 1; seed 000 §4.3),
    equal to the fraction of k-subsets of a task's n trials that contain a success.
    """
    k = _check_k(k)
    tasks = task_counts(results)
    _check_n_ge_k(tasks, k, "pass@k")
    return pass_k_grouped(Counter((t.c, t.n) for t in tasks), k, hat=False)


def pass_k_grouped(groups: Mapping[tuple[int, int], int], k: int, *, hat: bool) -> float:
    """pass^k (``hat``) or pass@k over tasks given by their counts: the one place both
    estimators are written (``pass_hat_k``, ``pass_at_k`` and the scorecard's curves call it).

    Args:
        groups: ``{(c, n): number of tasks}`` -- tasks with the same successes ``c`` and
            trials ``n`` share their value, so it is computed once per distinct pair.
        k: an int with 1 <= k <= n for every pair (the callers check it).
        hat: True for pass^k (C(c, k) / C(n, k) per task), False for pass@k
            (1 - C(n - c, k) / C(n, k) per task).

    Returns:
        The mean over all tasks: one exact sum of fractions, rounded once to float (the same
        float whether the tasks are given one by one or grouped).

    Raises:
        ZeroDivisionError: when ``groups`` holds no task (the callers reject an empty suite).
    """
    total = Fraction(0)
    n_tasks = 0
    for (c, n), m in groups.items():
        whole = math.comb(n, k)
        total += Fraction(m * (math.comb(c, k) if hat else whole - math.comb(n - c, k)), whole)
        n_tasks += m
    return float(total / n_tasks)


def _curve(results: TaskResults, ks: Sequence[int] | None,
           fn: Callable[[TaskResults, int], float]) -> dict[int, float]:
    tasks = task_counts(results)
    if ks is None:
        ks = range(1, min(t.n for t in tasks) + 1)
    return {_check_k(k): fn(results, k) for k in ks}


def pass_hat_k_curve(results: TaskResults, ks: Sequence[int] | None = None) -> dict[int, float]:
    """``{k: pass_hat_k(results, k)}`` for each k in ``ks`` (default 1..min trials per task).

    Args:
        results: as ``pass_hat_k``.
        ks: the k values (default 1..min trials per task).

    Returns:
        ``{k: pass^k}``, non-increasing in k.

    Raises:
        MetricInputError: as ``pass_hat_k``.

    Examples:
        >>> pass_hat_k_curve([(4, 4), (2, 4)])
        {1: 0.75, 2: 0.5833333333333334, 3: 0.5, 4: 0.5}
    """
    return _curve(results, ks, pass_hat_k)


def pass_at_k_curve(results: TaskResults, ks: Sequence[int] | None = None) -> dict[int, float]:
    """``{k: pass_at_k(results, k)}`` for each k in ``ks`` (default 1..min trials per task).

    Args:
        results: as ``pass_at_k``.
        ks: the k values (default 1..min trials per task).

    Returns:
        ``{k: pass@k}``, non-decreasing in k.

    Raises:
        MetricInputError: as ``pass_at_k``.

    Examples:
        >>> pass_at_k_curve([(4, 4), (2, 4)], ks=[1, 3])
        {1: 0.75, 3: 1.0}
    """
    return _curve(results, ks, pass_at_k)


# --------------------------------------------------------------------------------------------
# Normal quantile, Wilson interval, rule of three
# --------------------------------------------------------------------------------------------

# P. J. Acklam's rational approximation of the inverse normal CDF (relative error < 1.15e-9),
# refined by one Halley step on math.erfc, which brings it to full double precision.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771972e01, -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
      3.754408661907416e00)
_P_LOW = 0.02425


def normal_quantile(p: float) -> float:
    """The standard normal quantile (inverse CDF) Phi^-1(p) for 0 < p < 1.

    Acklam's rational approximation followed by one Halley refinement step using
    ``math.erfc``; absolute error below 1e-12 over (1e-300, 1 - 1e-16) in practice
    (tests compare with ``statistics.NormalDist().inv_cdf``). ``normal_quantile(0.975)``
    is 1.959963984540054.

    Raises ``MetricInputError`` unless 0 < p < 1.
    """
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 < p < 1.0:
        raise MetricInputError(f"normal quantile needs 0 < p < 1, got {p!r}")
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = ((((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5])
             / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0))
    elif p <= 1.0 - _P_LOW:
        q = p - 0.5
        r = q * q
        x = ((((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q
             / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0))
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -((((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5])
              / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0))
    # One Halley step: e = Phi(x) - p, computed in the tail that keeps precision.
    if x < 0:
        e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    else:
        e = (1.0 - p) - 0.5 * math.erfc(x / math.sqrt(2.0))
    u = e * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
    if math.isfinite(u):
        x = x - u / (1.0 + x * u / 2.0)
    return x


def _check_confidence(confidence: Any) -> float:
    if (not isinstance(confidence, (int, float)) or isinstance(confidence, bool)
            or not 0.0 < confidence < 1.0):
        raise MetricInputError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _check_counts(successes: Any, n: Any) -> tuple[int, int]:
    if not _is_plain_int(n) or n < 1:
        raise MetricInputError(f"n must be an int >= 1, got {n!r}")
    if not _is_plain_int(successes) or not 0 <= successes <= n:
        raise MetricInputError(f"successes must be an int in 0..n = {n}, got {successes!r}")
    return int(successes), int(n)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(lo, hi)`` for a binomial rate successes / n.

    Args:
        successes: int in 0..n.
        n: int >= 1.
        confidence: two-sided, in (0, 1).

    Returns:
        ``(lo, hi)`` within [0, 1]; lo = 0 exactly when successes = 0 and hi = 1 exactly when
        successes = n.

    Raises:
        MetricInputError: n < 1, successes outside 0..n, or confidence outside (0, 1).

    Examples:
        >>> lo, hi = wilson_interval(8, 10)
        >>> round(lo, 4), round(hi, 4)
        (0.4902, 0.9433)
        >>> wilson_interval(0, 5)[0]
        0.0

    With z = Phi^-1(1 - (1 - confidence) / 2) (exact quantile, 1.959964 at 95%) and p = s/n:
    centre = (p + z^2/(2n)) / (1 + z^2/n), half-width = z/(1 + z^2/n) * sqrt(p(1-p)/n +
    z^2/(4n^2)). Source: E. B. Wilson (1927), "Probable inference, the law of succession,
    and statistical inference", JASA 22:209-212; DESIGN.md "Intervals".
    """
    s, n = _check_counts(successes, n)
    confidence = _check_confidence(confidence)
    z = normal_quantile(1.0 - (1.0 - confidence) / 2.0)
    p = s / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    lo = 0.0 if s == 0 else max(0.0, centre - half)
    hi = 1.0 if s == n else min(1.0, centre + half)
    return lo, hi


def rule_of_three(n: int) -> float:
    """The rule-of-three bound 3/n: an approximate 95% upper confidence bound on the rate of
    an event that was observed 0 times in n independent trials.

    Args:
        n: int >= 1 (trials).

    Returns:
        3/n, in (0, 3]; values above 1 (n < 3) mean "no information".

    Raises:
        MetricInputError: n < 1.

    Examples:
        >>> rule_of_three(30)
        0.1

    It approximates the exact bound 1 - 0.05^(1/n) ~ -ln(0.05)/n = 2.996/n. Source: Hanley &
    Lippman-Hand (1983), "If nothing goes wrong, is everything all right?", JAMA
    249:1743-1745; DESIGN.md "zero failures in n gets the rule-of-three bound 3/n".
    """
    if not _is_plain_int(n) or n < 1:
        raise MetricInputError(f"rule of three needs n >= 1 trials, got {n!r}")
    return 3.0 / n


@dataclass(frozen=True)
class RateResult(MetricResult):
    """A plain success rate with its Wilson interval and, at 0 failures or 0 successes, the
    rule-of-three bound.

    ``rate`` = successes / n; ``lo``/``hi`` the Wilson interval; ``failure_rate_upper``:
    3/n when there were no failures (the failure rate is below it at ~95%), else None;
    ``success_rate_upper``: 3/n when there were no successes, else None.
    """

    successes: int = 0
    n: int = 0
    rate: float = 0.0
    lo: float = 0.0
    hi: float = 0.0
    confidence: float = 0.95
    failure_rate_upper: float | None = None
    success_rate_upper: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(successes=self.successes, n=self.n, rate=self.rate, lo=self.lo, hi=self.hi,
                 confidence=self.confidence, failure_rate_upper=self.failure_rate_upper,
                 success_rate_upper=self.success_rate_upper)
        return d


def success_rate(successes: int, n: int, confidence: float = 0.95,
                 name: str = "success_rate") -> RateResult:
    """A plain success rate reported with its Wilson interval (DESIGN.md "Intervals").

    Args:
        successes: int in 0..n.
        n: int >= 1.
        confidence: the Wilson interval's two-sided confidence, in (0, 1).
        name: the result's name.

    Returns:
        ``RateResult`` with ``score`` = ``rate`` in [0, 1], ``lo``/``hi`` (Wilson), and with 0
        failures ``failure_rate_upper`` = 3/n (rule of three; with 0 successes
        ``success_rate_upper``).

    Raises:
        MetricInputError: as ``wilson_interval``.

    Examples:
        >>> r = success_rate(8, 10)
        >>> r.rate, round(r.lo, 4), round(r.hi, 4)
        (0.8, 0.4902, 0.9433)
        >>> success_rate(30, 30).failure_rate_upper
        0.1

    The rule-of-three figure is a 95% bound whatever ``confidence`` is; the reason says
    "failure rate < 3/n at ~95%".
    """
    lo, hi = wilson_interval(successes, n, confidence)
    rate = successes / n
    fail_up = rule_of_three(n) if successes == n else None
    succ_up = rule_of_three(n) if successes == 0 else None
    reason = (f"{successes}/{n} = {rate:.4f}, Wilson {confidence:.0%} interval "
              f"[{lo:.4f}, {hi:.4f}]")
    if fail_up is not None:
        reason += f"; no failures: failure rate < {fail_up:.4g} (rule of three, ~95%)"
    if succ_up is not None:
        reason += f"; no successes: success rate < {succ_up:.4g} (rule of three, ~95%)"
    return RateResult(name=name, score=rate, reason=reason,
                      parts={"successes": successes, "n": n, "lo": lo, "hi": hi},
                      successes=successes, n=n, rate=rate, lo=lo, hi=hi, confidence=confidence,
                      failure_rate_upper=fail_up, success_rate_upper=succ_up)


# --------------------------------------------------------------------------------------------
# Means (one rule for every mean of per-run, per-case or per-task values)
# --------------------------------------------------------------------------------------------


def mean_from_sum(total: float, n: int) -> float:
    """The mean of ``n`` values from their sum: the one division rule of every mean of
    values here (a case's mean of its runs' figures, a suite's mean of case means, a
    bootstrap replicate's mean).

    Args:
        total: the values' exact sum correctly rounded (``math.fsum`` of them, or an exact
            running sum's total such as ``aggregate.case_sums.CaseSums.total``).
        n: how many values (>= 1).

    Returns:
        ``total / n``: one rounding of the exact sum, one of the quotient -- the float
        ``exact_mean`` gives for the same values, whatever order they were added in.

    Raises:
        ZeroDivisionError: when ``n`` is 0 (callers leave out a case without values).

    Vectorised callers (numpy columns in ``aggregate.case_sums`` and ``metrics.resample``)
    gather their exact sums their own way and divide elementwise by this same rule.
    """
    return total / n


def exact_mean(values: Sequence[float]) -> float:
    """The mean of ``values``: ``mean_from_sum(math.fsum(values), len(values))``.

    Args:
        values: a non-empty sequence of finite numbers.

    Returns:
        The exact sum correctly rounded, divided by the count (``mean_from_sum``).

    Raises:
        ZeroDivisionError: for an empty sequence (callers reject an empty suite first).
    """
    return mean_from_sum(math.fsum(values), len(values))


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of already-sorted values by linear interpolation between
    closest ranks -- numpy's default ``method="linear"``: h = (N - 1) q, value =
    x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).

    Raises ``MetricInputError`` on an empty sequence or q outside [0, 1].
    """
    m = len(sorted_values)
    if m == 0:
        raise MetricInputError("percentile of an empty sequence")
    if not 0.0 <= q <= 1.0:
        raise MetricInputError(f"quantile q must be in [0, 1], got {q!r}")
    h = (m - 1) * q
    lo = math.floor(h)
    if lo >= m - 1:
        return float(sorted_values[-1])
    frac = h - lo
    a, b = sorted_values[lo], sorted_values[lo + 1]
    return float(a + frac * (b - a))


@dataclass(frozen=True)
class BootstrapCI(MetricResult):
    """A statistic with its percentile bootstrap interval over tasks.

    ``estimate`` is the statistic on the original suite; ``lo``/``hi`` the percentile
    interval at ``confidence``; ``n_units`` the number of tasks resampled.
    """

    estimate: float = 0.0
    lo: float = 0.0
    hi: float = 0.0
    confidence: float = 0.95
    n_boot: int = 0
    seed: int = 0
    n_units: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(estimate=self.estimate, lo=self.lo, hi=self.hi, confidence=self.confidence,
                 n_boot=self.n_boot, seed=self.seed, n_units=self.n_units)
        return d


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float))  # bools count as 0/1


def draw_tasks(rng: random.Random, population: Sequence[Any]) -> list[Any]:
    """One bootstrap replicate's draw: ``len(population)`` items with replacement.

    Args:
        rng: the replicate stream's ``random.Random`` (seeded once per bootstrap).
        population: the tasks (their values, or ``range(m)`` for their indices).

    Returns:
        ``rng.choices(population, k=len(population))``: item ``floor(rng.random() * m)``
        per draw, so drawing indices (``range(m)``) takes the same tasks as drawing values.

    Raises:
        IndexError: for an empty population (callers reject an empty suite first).
    """
    return rng.choices(population, k=len(population))


def percentile_interval(sorted_reps: Sequence[float], confidence: float) -> tuple[float, float]:
    """The percentile bootstrap interval from the replicates' statistics.

    Args:
        sorted_reps: the ``n_boot`` replicates' values, sorted ascending.
        confidence: two-sided, in (0, 1) (checked by the callers).

    Returns:
        ``(lo, hi)``: the (1 - confidence) / 2 and 1 - (1 - confidence) / 2 quantiles of the
        replicates (``percentile``, linear interpolation).

    Raises:
        MetricInputError: when ``sorted_reps`` is empty.

    Source: Efron & Tibshirani (1993), ch. 13 (percentile interval).
    """
    alpha = 1.0 - confidence
    return percentile(sorted_reps, alpha / 2.0), percentile(sorted_reps, 1.0 - alpha / 2.0)


def bootstrap_ci(
    data: TaskResults | Sequence[float],
    statistic: Callable[[Any], float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    name: str = "bootstrap_ci",
) -> BootstrapCI:
    """Percentile bootstrap interval of a suite-level statistic, resampling TASKS.

    Args:
        data: per-task values (numbers, one per task; bools count as 0/1), or task results
            (any ``TaskResults`` shape, module doc).
        statistic: the figure computed on each resample; default the mean of per-task values,
            or pass^1 for task results. It gets a list of numbers, or a list of the per-task
            values (trial lists or (c, n) pairs), which ``pass_hat_k`` and friends accept,
            e.g. ``statistic=lambda r: pass_hat_k(r, 2)``.
        n_boot: the number of resamples (>= 1).
        seed: the ``random.Random`` seed.
        confidence: two-sided, in (0, 1).
        name: the result's name.

    Returns:
        ``BootstrapCI`` with ``estimate`` (= ``score``), ``lo``, ``hi``.

    Raises:
        MetricInputError: an empty suite, n_boot < 1, confidence outside (0, 1), a malformed
            task, or a non-finite value.

    Examples:
        A suite whose every task passed has nothing to vary:

        >>> b = bootstrap_ci([1.0, 1.0, 1.0])
        >>> b.estimate, b.lo, b.hi
        (1.0, 1.0, 1.0)
        >>> bootstrap_ci({"t1": [True, True], "t2": [True, False]}).estimate
        0.75

    Each of ``n_boot`` replicates draws len(tasks) tasks with replacement with
    ``random.Random(seed)``; the interval is the (1-confidence)/2 and 1-(1-confidence)/2
    percentiles (linear interpolation, numpy's default) of the replicates. Tasks, not trials,
    are the unit (DESIGN.md "Intervals"): trials of one task are correlated, so resampling
    trials would understate the uncertainty. Source: Efron & Tibshirani (1993), "An
    Introduction to the Bootstrap", ch. 13 (percentile interval).
    """
    confidence = _check_confidence(confidence)
    if not _is_plain_int(n_boot) or n_boot < 1:
        raise MetricInputError(f"n_boot must be an int >= 1, got {n_boot!r}")
    units: list[Any]
    stat: Callable[[Any], float]
    if isinstance(data, Mapping):
        values: Sequence[Any] = list(data.values())
        keys: list[Any] = list(data.keys())
    elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        values = data
        keys = list(range(len(data)))
    else:
        raise MetricInputError(
            f"bootstrap data must be a sequence or mapping, got {type(data).__name__}")
    if len(values) == 0:
        raise MetricInputError("empty suite: no tasks to bootstrap")
    if all(_is_number(x) for x in values):
        units = []
        for key, x in zip(keys, values):
            if not math.isfinite(float(x)):
                raise MetricInputError(f"task {key!r}: per-task value {x!r} is not finite")
            units.append(float(x))
        stat = statistic or exact_mean
    else:
        tasks = task_counts(data)  # type: ignore[arg-type]  # validates, naming a bad task
        if statistic is None:
            units = [t.rate for t in tasks]  # pass^1 = mean per-task rate (fast path)
            stat = exact_mean
        else:
            units = list(values)
            stat = statistic
    m = len(units)
    estimate = float(stat(units))
    rng = random.Random(seed)
    reps = sorted(float(stat(draw_tasks(rng, units))) for _ in range(n_boot))
    lo, hi = percentile_interval(reps, confidence)
    reason = (f"{estimate:.4f}, {confidence:.0%} percentile bootstrap over {m} tasks "
              f"[{lo:.4f}, {hi:.4f}] ({n_boot} resamples, seed {seed})")
    return BootstrapCI(name=name, score=estimate, reason=reason,
                       parts={"estimate": estimate, "lo": lo, "hi": hi, "n_units": m},
                       estimate=estimate, lo=lo, hi=hi, confidence=confidence, n_boot=n_boot,
                       seed=seed, n_units=m)


# the paired comparison moved to .comparison (which imports this module): its names are
# resolved from there on first access, so old imports keep working
_MOVED_TO_COMPARISON = frozenset({"PairedComparison", "binomial_two_sided_p", "paired_compare"})


def __getattr__(name: str) -> Any:
    """Names moved to ``.comparison``, resolved from there on first access; any other name
    raises AttributeError."""
    if name in _MOVED_TO_COMPARISON:
        from . import comparison

        return getattr(comparison, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
