"""Paired comparison of two scorecards of the same suite ("did this change help?").

Part of the reporting stage: it reads two finished ``Scorecard``s (their per-run results)
and never scores a run. ``compare_scorecards`` is re-exported by ``trajcheck.score.suite``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import MetricInputError
from ..metrics.reliability import exact_mean
from ..report.scorecard import Scorecard, _r
from .partials import DEFAULT_BOOTSTRAP, DEFAULT_SEED


@dataclass(frozen=True)
class MetricDelta:
    """B minus A for one metric over the shared cases: ``a``/``b`` the two suite values,
    ``delta`` = b - a with its paired percentile bootstrap interval over cases (``lo``,
    ``hi``; None when not computable), and ``p_value`` of the paired test where one applies
    (exact McNemar / sign test from ``metrics.comparison.paired_compare``), kept exact
    (not rounded: a p of 2e-9 must not read as 0; reports print it as "<0.0001"); ``unit``
    the unit of that test, ``"run"`` (trial i of A paired with trial i of B) or ``"task"``
    (one pair per case), None when there is no test."""

    metric: str
    a: float | None
    b: float | None
    delta: float | None
    lo: float | None = None
    hi: float | None = None
    p_value: float | None = None
    test: str | None = None
    unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"metric": self.metric, "a": self.a, "b": self.b, "delta": self.delta,
                "lo": self.lo, "hi": self.hi, "p_value": self.p_value, "test": self.test,
                "unit": self.unit}


@dataclass(frozen=True)
class Comparison:
    """``compare_scorecards`` result: deltas on the ``n_cases`` shared cases, and the cases
    only one side has (left out of every delta)."""

    n_cases: int
    deltas: tuple[MetricDelta, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"n_cases": self.n_cases, "deltas": [d.to_dict() for d in self.deltas],
                "only_a": list(self.only_a), "only_b": list(self.only_b), "meta": self.meta}


def _case_outcomes(sc: Scorecard) -> dict[str, list[bool]]:
    out: dict[str, list[tuple[int, bool]]] = {}
    for i, r in enumerate(sc.runs):
        out.setdefault(r.case_id, []).append((r.trial if r.trial is not None else i, r.success))
    return {c: [s for _, s in sorted(v, key=lambda x: x[0])] for c, v in out.items()}


def _case_means(sc: Scorecard, attr: str) -> dict[str, float]:
    acc: dict[str, list[float]] = {}
    for r in sc.runs:
        v = getattr(r, attr)
        if v is not None:
            acc.setdefault(r.case_id, []).append(float(v))
    return {c: exact_mean(v) for c, v in acc.items() if v}


def compare_scorecards(a: Scorecard, b: Scorecard, *, seed: int = DEFAULT_SEED,
                       n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
                       unit: str | None = None) -> Comparison:
    """Paired comparison of two scorecards of the same suite ("did this change help?").

    Cases are paired by id; only cases present in both are compared (the others are
    listed). Deltas are B - A:

    - ``task_success_rate``: ``metrics.comparison.paired_compare`` on per-case trial
      outcomes (mean per-case success rate difference, paired bootstrap over cases, exact
      McNemar test per run when trials line up, else the sign test per case); ``unit``
      ``"run"`` / ``"task"`` forces the test's unit (None: that default). Per-run pairs
      treat a case's trials as independent; per task is the conservative choice. The unit
      used is in the delta's ``unit``;
    - ``pass^k`` for k = 1..min trials on both sides: per-case pass^k differences, paired
      percentile bootstrap over cases (no test);
    - ``mean_f1``, ``mean_composite``: per-case mean differences, paired bootstrap over cases.

    Raises ``MetricInputError`` when the scorecards share no case, when ``unit`` is not
    None/"run"/"task", or when ``unit="run"`` and some shared case has different trial
    counts in A and B.
    """
    from ..metrics.comparison import paired_compare
    from ..metrics.reliability import bootstrap_ci, pass_hat_k

    if unit not in (None, "run", "task"):
        raise MetricInputError(f"unit must be 'run' or 'task', got {unit!r}")

    oa, ob = _case_outcomes(a), _case_outcomes(b)
    shared = [c for c in oa if c in ob]
    if not shared:
        raise MetricInputError("the two scorecards share no case id; nothing to compare")
    only_a = tuple(c for c in oa if c not in ob)
    only_b = tuple(c for c in ob if c not in oa)
    ra: dict[Any, Any] = {c: oa[c] for c in shared}
    rb: dict[Any, Any] = {c: ob[c] for c in shared}
    deltas: list[MetricDelta] = []
    pc = paired_compare(ra, rb, n_boot=n_boot, seed=seed, confidence=confidence,
                        test_unit=unit or "auto")
    # paired_compare reports A - B; a comparison reads naturally as B - A ("after - before")
    deltas.append(MetricDelta("task_success_rate", _r(pc.mean_a), _r(pc.mean_b), _r(-pc.diff),
                              _r(-pc.hi), _r(-pc.lo),
                              None if pc.p_value is None else float(pc.p_value),
                              f"exact McNemar/sign test per {pc.test_unit} "
                              f"({pc.a_only} A-only vs {pc.b_only} B-only successes)",
                              None if pc.p_value is None else pc.test_unit))
    kmax = min(len(v) for v in list(ra.values()) + list(rb.values()))
    ca: dict[Any, Any] = {c: (sum(ra[c]), len(ra[c])) for c in shared}  # (successes, trials)
    cb: dict[Any, Any] = {c: (sum(rb[c]), len(rb[c])) for c in shared}
    for k in range(1, kmax + 1):
        diffs = [pass_hat_k({c: cb[c]}, k) - pass_hat_k({c: ca[c]}, k) for c in shared]
        bci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, confidence=confidence)
        # each side's figure is the scorecard's pass^k over the shared cases (one exact mean)
        deltas.append(MetricDelta(f"pass^{k}", _r(pass_hat_k(ca, k)), _r(pass_hat_k(cb, k)),
                                  _r(bci.estimate), _r(bci.lo), _r(bci.hi)))
    for attr, label in (("f1", "mean_f1"), ("composite", "mean_composite")):
        ma, mb = _case_means(a, attr), _case_means(b, attr)
        both = [c for c in shared if c in ma and c in mb]
        if not both:
            continue
        diffs = [mb[c] - ma[c] for c in both]
        bci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, confidence=confidence)
        deltas.append(MetricDelta(label, _r(exact_mean([ma[c] for c in both])),
                                  _r(exact_mean([mb[c] for c in both])),
                                  _r(bci.estimate), _r(bci.lo), _r(bci.hi)))
    return Comparison(n_cases=len(shared), deltas=tuple(deltas), only_a=only_a, only_b=only_b,
                      meta={"seed": seed, "n_bootstrap": n_boot, "confidence": confidence})


__all__ = ["Comparison", "MetricDelta", "compare_scorecards"]
