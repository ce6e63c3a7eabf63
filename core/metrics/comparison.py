"""Paired comparison of two agents on the same tasks: the mean difference of their success
rates with a paired percentile bootstrap interval (tasks resampled, seeded), and the exact
McNemar (sign) test on the discordant pairs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import MetricInputError
from .reliability import TaskResults, _is_plain_int, bootstrap_ci, exact_mean, task_counts
from .result import MetricResult


def binomial_two_sided_p(x: int, m: int) -> float:
    """Exact two-sided p-value of the sign test: x "wins" out of m discordant pairs under
    Binomial(m, 1/2), p = min(1, 2 * P(X <= min(x, m - x))). p = 1.0 when m = 0.

    This is the exact McNemar test (McNemar 1947; exact binomial form, e.g. Fagerland,
    Lydersen & Laake 2013, BMC Med Res Methodol 13:91). Computed with exact integers.
    Raises ``MetricInputError`` unless 0 <= x <= m.
    """
    if not _is_plain_int(m) or not _is_plain_int(x) or m < 0 or not 0 <= x <= m:
        raise MetricInputError(f"sign test needs 0 <= x <= m, got x={x!r}, m={m!r}")
    if m == 0:
        return 1.0
    t = min(x, m - x)
    tail = Fraction(sum(math.comb(m, i) for i in range(t + 1)), 2 ** m)
    return float(min(Fraction(1), 2 * tail))


@dataclass(frozen=True)
class PairedComparison(MetricResult):
    """Agent A versus agent B on the same tasks.

    ``diff`` = mean over tasks of (rate_A - rate_B), in [-1, 1], with its paired percentile
    bootstrap interval ``lo``/``hi``. ``test_unit`` is "run" or "task"; ``a_only`` / ``b_only``
    count the discordant pairs (A succeeded and B failed / the reverse) and ``p_value`` is the
    exact two-sided McNemar (sign) test on them. ``score`` is None (a difference is not a
    [0, 1] score); ``passed`` is None.
    """

    n_tasks: int = 0
    mean_a: float = 0.0
    mean_b: float = 0.0
    diff: float = 0.0
    lo: float = 0.0
    hi: float = 0.0
    confidence: float = 0.95
    test_unit: str = "task"
    a_only: int = 0
    b_only: int = 0
    p_value: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(n_tasks=self.n_tasks, mean_a=self.mean_a, mean_b=self.mean_b, diff=self.diff,
                 lo=self.lo, hi=self.hi, confidence=self.confidence, test_unit=self.test_unit,
                 a_only=self.a_only, b_only=self.b_only, p_value=self.p_value)
        return d


def paired_compare(
    a: TaskResults,
    b: TaskResults,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    test_unit: str = "auto",
    name: str = "paired_compare",
) -> PairedComparison:
    """Compare two agent versions run on the same tasks.

    Args:
        a: task results of version A (module doc), keyed by task id (for sequences, the
            positions).
        b: task results of version B, on the same tasks.
        n_boot: bootstrap resamples.
        seed: the bootstrap's seed.
        confidence: the interval's two-sided confidence.
        test_unit: ``"run"``, ``"task"`` or ``"auto"`` (below).
        name: the result's name.

    Returns:
        ``PairedComparison`` with ``mean_a``, ``mean_b``, ``diff`` (mean of the per-task
        differences of success rate), its paired bootstrap ``lo``/``hi``, the discordant
        counts ``a_only``/``b_only`` and the exact ``p_value``.

    Raises:
        MetricInputError: the task sets differ (naming the tasks missing from each side),
            either suite is empty or malformed, or ``test_unit="run"`` is impossible (names
            the first task whose trials cannot be paired).

    Examples:
        Two runs succeeded under A only and none under B only; the exact two-sided sign test
        on 2 discordant pairs gives p = 2 * (1/2)^2 = 0.5:

        >>> c = paired_compare({"t1": [True, True], "t2": [True, False]},
        ...                    {"t1": [False, False], "t2": [True, False]})
        >>> c.diff, c.a_only, c.b_only, c.p_value
        (0.5, 2, 0, 0.5)

    Per task, d_i = rate_A,i - rate_B,i; ``diff`` = mean d_i, with a paired percentile
    bootstrap over tasks (the same resampled tasks for both sides; seeded). Significance: an
    exact two-sided McNemar / sign test (binomial, p = 1/2) on discordant outcomes.

    - ``test_unit="run"``: every task must have bool trial lists of equal length on both
      sides; trial j of A is paired with trial j of B (the runs share task and trial index,
      e.g. the same user-simulator seed). Discordant = exactly one of the pair succeeded.
    - ``test_unit="task"``: a sign test on the per-task differences: a task counts for A
      when rate_A > rate_B, for B when rate_B > rate_A; ties are dropped. With one trial
      per task this is exactly McNemar's test on per-task outcomes.
    - ``"auto"`` (default): "run" when possible, else "task".

    Sources: McNemar (1947), Psychometrika 12:153-157 (exact binomial form); paired bootstrap:
    Efron & Tibshirani (1993); DESIGN.md "Tasks, not trials, are the unit of a bootstrap".
    """
    ta = {t.task_id: t for t in task_counts(a)}
    tb = {t.task_id: t for t in task_counts(b)}
    only_a = [k for k in ta if k not in tb]
    only_b = [k for k in tb if k not in ta]
    if only_a or only_b:
        msg = []
        if only_a:
            msg.append(f"missing from B: {', '.join(map(repr, only_a[:20]))}")
        if only_b:
            msg.append(f"missing from A: {', '.join(map(repr, only_b[:20]))}")
        raise MetricInputError("paired comparison needs the same tasks on both sides; "
                               + "; ".join(msg))
    if test_unit not in ("auto", "run", "task"):
        raise MetricInputError(f"test_unit must be 'auto', 'run' or 'task', got {test_unit!r}")
    ids = list(ta)
    unpairable = next((k for k in ids if ta[k].trials is None or tb[k].trials is None
                       or ta[k].n != tb[k].n), None)
    if test_unit == "run" and unpairable is not None:
        raise MetricInputError(
            f"task {unpairable!r}: per-run pairing needs bool trial lists of equal length on "
            f"both sides (A n={ta[unpairable].n}, B n={tb[unpairable].n})")
    unit = ("run" if unpairable is None else "task") if test_unit == "auto" else test_unit
    a_only = b_only = 0
    for k in ids:
        if unit == "run":
            for x, y in zip(ta[k].trials or (), tb[k].trials or ()):
                a_only += x and not y
                b_only += y and not x
        else:
            ra, rb = Fraction(ta[k].c, ta[k].n), Fraction(tb[k].c, tb[k].n)
            a_only += ra > rb
            b_only += rb > ra
    p = binomial_two_sided_p(a_only, a_only + b_only)
    diffs = [ta[k].rate - tb[k].rate for k in ids]
    ci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, confidence=confidence)
    mean_a = exact_mean([ta[k].rate for k in ids])
    mean_b = exact_mean([tb[k].rate for k in ids])
    diff = exact_mean(diffs)
    reason = (f"A {mean_a:.4f} vs B {mean_b:.4f} over {len(ids)} tasks: diff {diff:+.4f} "
              f"[{ci.lo:+.4f}, {ci.hi:+.4f}] ({confidence:.0%} paired bootstrap); exact McNemar "
              f"on {a_only + b_only} discordant {unit}s ({a_only} A-only, {b_only} B-only): "
              f"p = {p:.4g}")
    return PairedComparison(
        name=name, score=None, reason=reason,
        parts={"diff": diff, "lo": ci.lo, "hi": ci.hi, "p_value": p, "a_only": a_only,
               "b_only": b_only, "test_unit": unit, "n_tasks": len(ids)},
        n_tasks=len(ids), mean_a=mean_a, mean_b=mean_b, diff=diff, lo=ci.lo, hi=ci.hi,
        confidence=confidence, test_unit=unit, a_only=a_only, b_only=b_only, p_value=p)
