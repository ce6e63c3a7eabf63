"""The scorecard's tool-confusion, efficiency and routing blocks, from a ``SuitePartial``'s
tallies (``tool_confusion_block``, ``efficiency_block``, ``routing_block``; called by
``finalize``)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import MetricInputError
from ..report.scorecard import _r, _usd
from .accumulate import EFFICIENCY_FIELDS
from .case_sums import _numpy

if TYPE_CHECKING:
    from .partials import SuitePartial

NONE_LABEL = "(none)"
ROUTE_NONE = "(none)"


def tool_confusion_block(self: SuitePartial) -> dict[str, Any]:
    """The suite's tool confusion table from a partial's counts.

    Args:
        self: the suite partial: ``confusion`` ((expected, called) -> matched pairs),
            ``n_expected`` and ``n_called`` (tool -> calls).

    Returns:
        ``{"labels", "matrix", "rows", "columns"}``: the tools in name order then ``(none)``;
        ``matrix[e][c]`` counts calls expected as tool ``e`` and made as tool ``c`` (row
        ``(none)``: extra calls, column ``(none)``: expected calls never made).

    Raises:
        MetricInputError: the matched pairs hold more calls of a tool than were expected or
            called (counts merged from inconsistent partials).
    """
    cells: dict[tuple[str, str], int] = dict(self.confusion)
    # missed = expected less matched, extra = called less matched, tool by tool
    missed = dict(self.n_expected)
    extra = dict(self.n_called)
    for (e, c), k in self.confusion.items():
        missed[e] = missed.get(e, 0) - k
        extra[c] = extra.get(c, 0) - k
    for left, what in ((missed, "expected"), (extra, "called")):
        bad = sorted(t for t, k in left.items() if k < 0)
        if bad:
            raise MetricInputError(
                f"tool confusion: the runs' matched pairs hold more calls of {bad[0]!r} than "
                f"their {what} tools (RunResult.matched pairs are drawn from both)")
    for e, k in missed.items():
        if k:
            cells[(e, NONE_LABEL)] = cells.get((e, NONE_LABEL), 0) + k
    for c, k in extra.items():
        if k:
            cells[(NONE_LABEL, c)] = cells.get((NONE_LABEL, c), 0) + k
    labels = sorted(set(missed) | set(extra)) + [NONE_LABEL]
    idx = {t: i for i, t in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for (e, c), k in cells.items():
        matrix[idx[e]][idx[c]] = k
    return {"labels": labels, "matrix": matrix,
            "rows": "expected tool ((none) = extra call)",
            "columns": "called tool ((none) = missed expected call)"}


def efficiency_block(self: SuitePartial) -> dict[str, Any]:
    """The scorecard's efficiency block (``metrics.efficiency.summary_from_values``).

    DESIGN.md policy (applied there, in one place): steps, tool calls, tokens, cost and
    latency -- mean, min, max and p50/p95/p99 by linear interpolation -- over SUCCESSFUL
    runs only; cost per successful task = cost of ALL runs / number of successful runs
    (None when no run succeeded or some run has no cost). ``missing`` counts the
    successful runs without a figure. JSON form (full precision like every scorecard figure)::

        {"n_runs", "n_success", "success_rate", "steps", "tool_calls", "tokens",
         "cost_usd", "latency_ms", "missing", "total_cost_usd", "cost_per_success", "reason"}

    where each figure is ``{"n", "mean", "p50", "p95", "p99", "min", "max"}`` or None.
    """
    from ..metrics.efficiency import summary_from_values

    res = summary_from_values(
        # the arrays as they are (one field's sorted copy at a time, not five lists), or
        # sorted by numpy when all finite: describe's sort then finds one run
        self.n, self.n_eff_success, _sorted_values(self.eff_values),
        None if self.cost is None else self.cost.total())
    dists = res.distributions or {}
    out: dict[str, Any] = {"n_runs": res.n_runs, "n_success": res.n_success,
                           "success_rate": _r(res.success_rate)}
    for f in EFFICIENCY_FIELDS:
        out[f] = _dist_json(dists.get(f), money=(f == "cost_usd"))
    out.update(missing=dict(res.parts.get("missing") or {}),
               total_cost_usd=_usd(res.total_cost_usd),
               cost_per_success=_usd(res.cost_per_success), reason=res.reason)
    return out


def routing_block(self: SuitePartial, floors: Mapping[Any, float] | None = None) -> dict[str, Any] | None:
    """The scorecard's routing block, from ``metrics.routing``; None when no run's case
    carries an ``expected_route``.

    Every run whose case has an ``expected_route`` is scored against the route it took
    (``scoring.run_route``); a run that took none counts as the label ``(none)``
    (single-label) or the empty set (multi-label), so a router that never routes is not
    left out.

    - Single-label (every expected route and taken route a string or number):
      ``metrics.routing.routing_metrics`` -- accuracy, macro precision / recall / F1,
      ``per_class`` scores, and the confusion matrix (``labels``, ``matrix``: rows
      expected, columns taken, scikit-learn's layout). With ``floors`` ({route: minimum
      recall}) the block also holds ``recall_floor_gate``.
    - Multi-label (some expected or taken route is a list): ``metrics.routing.
      multilabel_routing`` -- ``accuracy`` = exact-set accuracy, Jaccard, Hamming loss,
      micro and macro F1, ``per_label`` scores; no matrix. ``floors`` then raise
      ``MetricInputError`` (recall floors are defined for single-label routing).

    Raises ``MetricInputError`` (naming the case) for an unusable route.
    """
    if not self.routes:
        return None
    from ..metrics.routing import multilabel_routing, recall_floor_gate, routing_metrics
    from ..score.scoring import ROUTE_SOURCE, _route_label

    rs = sorted(self.routes, key=lambda x: x[0])
    exp = [_route_label(e, f"case {cid!r}: expected_route") for _, cid, _, e, _ in rs]
    got = [_route_label(g, f"case {cid!r}, run {rid!r}: route") for _, cid, rid, _, g in rs]
    n_none = sum(g is None or g == [] for g in got)
    out: dict[str, Any] = {"n": len(rs), "n_no_route": n_none, "route_source": ROUTE_SOURCE}
    if any(isinstance(x, list) for x in exp + got):
        if floors:
            raise MetricInputError("route floors apply to single-label routing; this suite "
                                   "has list-valued (multi-label) routes")
        m = multilabel_routing([x if isinstance(x, list) else [x] for x in exp],
                               [[] if x is None else (x if isinstance(x, list) else [x])
                                for x in got])
        labels = sorted({str(k) for k in (m.per_label or {})})
        out.update(kind="multi_label", accuracy=_r(m.exact_set_accuracy),
                   exact_set_accuracy=_r(m.exact_set_accuracy), jaccard=_r(m.jaccard),
                   hamming_loss=_r(m.hamming_loss), micro_precision=_r(m.micro_precision),
                   micro_recall=_r(m.micro_recall), micro_f1=_r(m.micro_f1),
                   macro_f1=_r(m.macro_f1), per_label=_scores_json(m.per_label or {}),
                   labels=labels, matrix=None, recall_floor_gate=None, reason=m.reason)
        return out
    pred = [ROUTE_NONE if g is None else g for g in got]
    res = routing_metrics(exp, pred)
    cm = res.confusion
    gate = None
    if floors:
        g = recall_floor_gate(exp, pred, floors)
        gate = {"passed": g.passed, "reason": g.reason,
                "recalls": {str(k): _r(v) for k, v in (g.recalls or {}).items()},
                "floors": {str(k): float(v) for k, v in floors.items()},
                "failed": sorted(str(k) for k in (g.failed or {}))}
    out.update(kind="single_label", accuracy=_r(res.accuracy),
               macro_precision=_r(res.macro_precision), macro_recall=_r(res.macro_recall),
               macro_f1=_r(res.macro_f1), per_class=_scores_json(res.per_class or {}),
               labels=[str(x) for x in cm.labels] if cm else [],
               matrix=[list(row) for row in cm.matrix] if cm else None,
               recall_floor_gate=gate, reason=res.reason)
    return out


def _sorted_values(values: Mapping[str, array[float]]) -> Mapping[str, array[float]]:
    """``values`` with each field's values in ascending order (numpy's sort, ~10x Python's
    on a quarter million floats), sorted when the field is read (one copy at a time) and
    only when they are all finite: a field with a NaN or an infinity is left as it is, so
    that ``describe`` names the same value. The figures do not depend on the order:
    percentiles read the sorted values, the mean is an exact sum, min and max are
    order-free (a -0.0 beside 0.0 is written 0.0 either way, ``_r``)."""
    np = _numpy()
    return values if np is None else _SortedView(np, values)


class _SortedView(Mapping[str, "array[float]"]):
    """``_sorted_values``' mapping: a field's values sorted when read."""

    def __init__(self, np: Any, values: Mapping[str, array[float]]) -> None:
        self._np, self._values = np, values

    def __getitem__(self, f: str) -> array[float]:
        v = self._values[f]
        a = self._np.frombuffer(v, dtype=self._np.float64)
        return array("d", self._np.sort(a).tobytes()) if len(v) > 1 and self._np.isfinite(a).all() else v

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _dist_json(d: Any, money: bool) -> dict[str, Any] | None:
    if d is None:
        return None
    rnd = _usd if money else _r
    return {"n": d.n, "mean": rnd(d.mean), "p50": rnd(d.p50), "p95": rnd(d.p95),
            "p99": rnd(d.p99), "min": rnd(d.min), "max": rnd(d.max)}


def _scores_json(per: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): {"precision": _r(v.precision), "recall": _r(v.recall), "f1": _r(v.f1),
                     "support": v.support, "tp": v.tp, "fp": v.fp, "fn": v.fn}
            for k, v in per.items()}
