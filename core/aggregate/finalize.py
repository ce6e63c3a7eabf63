"""A ``SuitePartial`` finalized into a ``Scorecard`` (``finalize``): pass^k / pass@k curves over
the cases' (successes, runs) counts (``metrics.reliability.pass_k_grouped``), rates with Wilson
intervals, every bootstrap interval from one set of resampling indices, the source's recorded
rewards; the efficiency, routing and tool-confusion blocks come from ``suite_blocks``.

``finalize``, ``case_order`` and ``_recorded_columns`` are ``SuitePartial``'s methods (bound in
its class body, ``partials``); the figures' definitions are those of
``trajcheck.score.suite.score_runs`` (DESIGN.md "Semantics", "Policies", "Intervals").
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import MetricInputError
from ..metrics.reliability import mean_from_sum
from ..report.scorecard import (
    CheckAgreement,
    Estimate,
    RecordedReward,
    Scorecard,
    SuiteMetrics,
    _r,
)
from .case_rows import CaseRows
from .case_sums import _numpy
from .suite_blocks import efficiency_block, routing_block, tool_confusion_block

if TYPE_CHECKING:
    from .partials import SuitePartial

DEFAULT_SEED = 0
DEFAULT_BOOTSTRAP = 2000


def case_order(self: SuitePartial) -> list[int]:
    """Case rows in the order of their first run in the input."""
    return sorted(range(len(self.ids)), key=self.first.__getitem__)


def finalize(self: SuitePartial, *, ks: Sequence[int] | None = None, seed: int = DEFAULT_SEED,
             n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
             problems: Iterable[str] = (), meta: Mapping[str, Any] | None = None,
             route_floors: Mapping[Any, float] | None = None) -> Scorecard:
    """The ``Scorecard`` of every run folded in (definitions: ``suite.score_runs``).
    Raises ``MetricInputError`` for an empty partial, ``KTooLargeError`` for a k above
    some case's runs, and ``MetricInputError`` for an unusable route."""
    if not self.n:
        raise MetricInputError("empty suite: no runs to score")
    self._sync()
    order = case_order(self)
    ns = array("i", [self.n_runs[i] for i in order])
    cs = array("i", [self.n_succ[i] for i in order])
    kk = _ks(ns, lambda t: self.ids[order[t]], ks)
    # every bootstrap figure is asked for first, then all are computed from one set of
    # resampling indices per replicate (metrics.resample; identical to one draw each)
    iv = _Intervals()
    kcurve = _kcurves(ns, cs, kk, iv)
    del ns, cs
    means = [iv.add(s.means(order)) for s in (self.f1, self.comp, self.ords, self.lf, self.nf)]
    recorded = _recorded_columns(self, kk, iv)
    iv.compute(n_boot=n_boot, seed=seed, confidence=confidence)
    ph, phc, pa, pac = kcurve()
    n = self.n
    cases = CaseRows(self, order)
    suite = SuiteMetrics(
        n_runs=n, n_cases=len(order), n_successes=self.succ,
        task_success_rate=_rate(self.succ, n, confidence) or Estimate(None),
        pass_hat_k=ph, pass_hat_k_ci=phc, pass_at_k=pa, pass_at_k_ci=pac,
        mean_f1=iv.estimate(means[0]), mean_composite=iv.estimate(means[1]),
        ordering_accuracy=iv.estimate(means[2]),
        mean_lcs_f1=iv.estimate(means[3]), mean_name_f1=iv.estimate(means[4]),
        forbidden_rate=_rate(self.forbidden, n, confidence) if self.forbidden_applies else None,
        composite_pass_rate=_rate(self.gated_pass, self.gated, confidence),
        duplicate_rate=_rate(self.dup, n, confidence),
        false_success_rate=_rate(self.false_success, self.fault, confidence),
        n_fault_runs=self.fault,
        efficiency=efficiency_block(self),
        routing=routing_block(self, route_floors),
        tool_confusion=tool_confusion_block(self),
    )
    from .. import __version__

    m = {"trajcheck_version": __version__, "seed": seed, "n_bootstrap": n_boot,
         "confidence": confidence}
    m.update(meta or {})
    if self.categories:  # success per case category (trajcheck.aggregate.categories)
        from .categories import category_table

        cats = sorted(self.categories.items(), key=lambda kv: kv[1][0])
        m["by_category"] = category_table({k: (g[1], g[2]) for k, g in cats})
    self._trim()
    runs = tuple(r for _, r in sorted(self.kept, key=lambda sr: sr[0]))
    return Scorecard(suite=suite, cases=cases, runs=runs,  # type: ignore[arg-type]
                     recorded_reward=recorded(),
                     problems=tuple(problems), meta=m)


def _recorded_columns(self: SuitePartial, ks: Sequence[int], iv: _Intervals) -> Callable[[], RecordedReward | None]:
    """The source's own rewards (success = reward within 1e-6 of 1, tau-bench's rule) and
    their 2x2 agreement with trajcheck's outcome, as a callable to call once ``iv`` is
    computed; it returns None when no run has a reward."""
    if not self.rec_count:
        return lambda: None
    # grouped as the source groups them (RunResult.recorded_group), else by case
    groups = sorted(self.rec_groups.items(), key=lambda kv: kv[1][0])
    ns = array("i", [g[1] for _, g in groups])
    cs = array("i", [g[2] for _, g in groups])
    kk = [k for k in ks if all(n >= k for n in ns)]
    kcurve = _kcurves(ns, cs, kk, iv)

    def done() -> RecordedReward:
        ph, phc, _, _ = kcurve()
        matrix = dict(self.rec_matrix)
        dis = tuple(d for _, d in sorted(self.disagreements, key=lambda sd: sd[0]))
        checks = {}
        for name, (cm, cd) in sorted(self.checks.items()):
            checks[name] = CheckAgreement(
                name, sum(cm.values()), dict(cm),
                cm["ours_pass_recorded_pass"] + cm["ours_fail_recorded_fail"],
                tuple(d for _, d in sorted(cd, key=lambda sd: sd[0])))
        return RecordedReward(
            n=self.rec_count, mean=_r(mean_from_sum(self.rec_sum.total(), self.rec_count)), pass_hat_k=ph,
            pass_hat_k_ci=phc, matrix=matrix,
            agree=matrix["ours_pass_recorded_pass"] + matrix["ours_fail_recorded_fail"],
            disagreements=dis, checks=checks)
    return done


def _rate(events: int, n: int, confidence: float) -> Estimate | None:
    """A rate with its Wilson interval (DESIGN.md "Intervals"). With zero events in n the
    upper bound is the rule-of-three 3/n (method ``rule_of_three``, hi = min(1, 3/n)); with
    events in all n runs (zero of the other outcome: no failures in a success rate) the
    lower bound is 1 - 3/n."""
    if n == 0:
        return None
    from ..metrics.reliability import rule_of_three, wilson_interval

    lo, hi = wilson_interval(events, n, confidence)
    if events == 0:
        return Estimate(0.0, 0.0, _r(min(1.0, rule_of_three(n))), "rule_of_three", n)
    if events == n:  # zero of the other outcome: the same bound from the other side
        return Estimate(1.0, _r(max(0.0, 1.0 - rule_of_three(n))), 1.0, "rule_of_three", n)
    return Estimate(_r(events / n), _r(lo), _r(hi), "wilson", n)


class _Intervals:
    """Bootstrap figures asked for first (``add``: a column of per-task values), then all
    computed together (``compute``: ``metrics.resample.bootstrap_means``, one set of
    resampling indices per replicate for every column of the same length)."""

    def __init__(self) -> None:
        self.cols: list[Sequence[float]] = []
        self.res: list[tuple[float, float, float]] = []

    def add(self, col: Sequence[float]) -> int | None:
        if not col:
            return None
        self.cols.append(col)
        return len(self.cols) - 1

    def compute(self, *, n_boot: int, seed: int, confidence: float) -> None:
        from ..metrics.resample import bootstrap_means

        self.res = bootstrap_means(self.cols, n_boot=n_boot, seed=seed, confidence=confidence)

    def estimate(self, i: int | None) -> Estimate | None:
        if i is None:
            return None
        est, lo, hi = self.res[i]
        return Estimate(_r(est), _r(lo), _r(hi), "bootstrap", len(self.cols[i]))


def _kcurves(ns: Sequence[int], cs: Sequence[int], ks: Sequence[int], iv: _Intervals
             ) -> Callable[[], tuple[dict[int, float], dict[int, Any], dict[int, float], dict[int, Any]]]:
    """pass^k and pass@k with their bootstrap intervals over tasks, from per-task runs
    ``ns[t]`` and successes ``cs[t]``: the columns are added to ``iv``; the returned
    callable reads them once ``iv`` is computed."""
    from ..metrics.reliability import pass_at_k, pass_hat_k, pass_k_grouped

    ph: dict[int, float] = {}
    pa: dict[int, float] = {}
    cols: dict[int, tuple[int | None, int | None]] = {}
    groups = Counter(zip(cs, ns))  # tasks with the same (c, n): same values
    column = _group_columns(cs, ns, list(groups))
    for k in ks:
        ph[k] = _r(pass_k_grouped(groups, k, hat=True)) or 0.0
        pa[k] = _r(pass_k_grouped(groups, k, hat=False)) or 0.0
        # pass^k and pass@k are means over tasks of a per-task value, so the bootstrap over
        # tasks resamples those per-task values (same replicates as resampling the tasks);
        # tasks with the same (c, n) share their value
        hat = {cn: pass_hat_k({0: cn}, k) for cn in groups}
        at = {cn: pass_at_k({0: cn}, k) for cn in groups}
        cols[k] = (iv.add(column(hat)), iv.add(column(at)))

    def done() -> tuple[dict[int, float], dict[int, Any], dict[int, float], dict[int, Any]]:
        phc: dict[int, Any] = {}
        pac: dict[int, Any] = {}
        for k, (i1, i2) in cols.items():
            e1, e2 = iv.estimate(i1), iv.estimate(i2)
            phc[k] = (e1.lo, e1.hi) if e1 else None
            pac[k] = (e2.lo, e2.hi) if e2 else None
        return ph, phc, pa, pac
    return done


def _group_columns(cs: Sequence[int], ns: Sequence[int], groups: list[tuple[int, int]]
                   ) -> Callable[[Mapping[tuple[int, int], float]], array[float]]:
    """A maker of per-task columns from per-group values: ``column(value)`` is
    ``array("d", [value[(cs[t], ns[t])] for t in tasks])`` (``groups``: every distinct
    ``(c, n)``), with numpy by each task's group number (found once, by a search in the
    groups' sorted ``c * (max n + 1) + n`` keys)."""
    np = _numpy()
    if np is None or not groups:
        return lambda value: array("d", map(value.__getitem__, zip(cs, ns)))
    width = max(n for _, n in groups) + 1
    order = sorted(range(len(groups)), key=lambda g: groups[g][0] * width + groups[g][1])
    keys = np.array([groups[g][0] * width + groups[g][1] for g in order], dtype=np.int64)
    task_keys = np.asarray(cs, dtype=np.int64) * width + np.asarray(ns, dtype=np.int64)
    gid = np.searchsorted(keys, task_keys)  # every task's key is one of the groups'
    ordered = [groups[g] for g in order]

    def column(value: Mapping[tuple[int, int], float]) -> array[float]:
        per = np.array([value[cn] for cn in ordered], dtype=np.float64)
        return array("d", per[gid].tobytes())
    return column


class KTooLargeError(MetricInputError):
    """A k of pass^k / pass@k above the number of runs of some case (DESIGN: both need
    n >= k for every task). ``k``: the largest k asked for; ``case_id``: a case with the
    fewest runs; ``n``: its number of runs (the largest k possible)."""

    def __init__(self, k: int, case_id: str, n: int) -> None:
        self.k, self.case_id, self.n = k, case_id, n
        super().__init__(f"pass^k needs n >= k for every case: k={k} asked, but case {case_id!r} "
                         f"has {n} run(s) (the largest k possible is {n})")


def _ks(ns: Sequence[int], name: Callable[[int], str], ks: Sequence[int] | None) -> list[int]:
    """k = 1..min trials by default (``ns[t]``: task t's runs); explicit ks beyond the
    minimum raise ``KTooLargeError`` naming the largest k asked for (the k the user typed,
    e.g. 5 for ``--k 5``) and the first task with the fewest runs (``name(t)``), and k < 1
    raises ``MetricInputError``."""
    if not ns:
        return []
    kmax = min(ns)
    if ks is None:
        return list(range(1, kmax + 1))
    low = [k for k in ks if not isinstance(k, int) or isinstance(k, bool) or k < 1]
    if low:
        raise MetricInputError(f"k must be an integer >= 1, got {low[0]!r}")
    if max(ks) > kmax:
        short = min(range(len(ns)), key=ns.__getitem__)
        raise KTooLargeError(max(ks), name(short), ns[short])
    return sorted(set(ks))
