"""Routing metrics: which route (tool, sub-agent, index, "out of scope") a router picked.

Pure standard library. Conventions follow scikit-learn's ``sklearn.metrics`` (DESIGN.md
names ``_classification.py`` as the model):

- ``confusion_matrix`` rows are the TRUE labels, columns the PREDICTED labels;
- default label order is the sorted union of the labels seen in y_true and y_pred (first
  appearance order when the labels cannot be sorted together);
- precision = tp / (tp + fp), recall = tp / (tp + fn), F1 = 2 tp / (2 tp + fp + fn); a zero
  denominator gives 0.0 (scikit-learn's ``zero_division=0`` outcome, without the warning);
- macro averages are unweighted means over the labels;
- lengths that differ raise ``MetricInputError`` (scikit-learn raises ValueError).
One deliberate difference: with explicit ``labels``, a y_true / y_pred value outside them is
an error naming the position (scikit-learn silently drops such samples).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from .formulas import prf_counts
from .result import MetricResult

__all__ = [
    "ConfusionMatrix",
    "confusion_matrix",
    "ClassScores",
    "RoutingResult",
    "routing_metrics",
    "accuracy",
    "macro_f1",
    "MultiLabelResult",
    "multilabel_routing",
    "MisrouteCostResult",
    "misroute_cost",
    "RecallGateResult",
    "recall_floor_gate",
]


def _check_pair(y_true: Sequence[Any], y_pred: Sequence[Any]) -> None:
    for nm, y in (("y_true", y_true), ("y_pred", y_pred)):
        if isinstance(y, (str, bytes)) or not isinstance(y, Sequence):
            raise MetricInputError(f"{nm} must be a sequence of labels, got {type(y).__name__}")
    if len(y_true) != len(y_pred):
        raise MetricInputError(
            f"y_true and y_pred have different lengths: {len(y_true)} vs {len(y_pred)}")
    if len(y_true) == 0:
        raise MetricInputError("empty input: no routed queries")


def _label_order(seen: Iterable[Hashable]) -> tuple[Hashable, ...]:
    uniq = list(dict.fromkeys(seen))
    try:
        return tuple(sorted(uniq))  # type: ignore[type-var]
    except TypeError:
        return tuple(uniq)


def _resolve_labels(y_true: Sequence[Any], y_pred: Sequence[Any],
                    labels: Sequence[Hashable] | None) -> tuple[Hashable, ...]:
    if labels is None:
        return _label_order([*y_true, *y_pred])
    labs = tuple(labels)
    if not labs:
        raise MetricInputError("labels is empty")
    if len(set(labs)) != len(labs):
        raise MetricInputError(f"labels has duplicates: {list(labs)!r}")
    known = set(labs)
    for nm, y in (("y_true", y_true), ("y_pred", y_pred)):
        for i, v in enumerate(y):
            if v not in known:
                raise MetricInputError(f"{nm}[{i}] = {v!r} is not one of labels {list(labs)!r}")
    return labs


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts ``matrix[i][j]`` = queries whose true label is ``labels[i]`` and predicted label
    is ``labels[j]`` (rows true, columns predicted, scikit-learn's layout)."""

    labels: tuple[Hashable, ...]
    matrix: tuple[tuple[int, ...], ...]

    def count(self, true: Hashable, pred: Hashable) -> int:
        """The count for one (true, predicted) pair; ``MetricInputError`` for an unknown label."""
        try:
            return self.matrix[self.labels.index(true)][self.labels.index(pred)]
        except ValueError:
            raise MetricInputError(
                f"label {true!r} or {pred!r} is not in {list(self.labels)!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: labels (as given) and the matrix as nested lists."""
        return {"labels": list(self.labels), "matrix": [list(r) for r in self.matrix]}


def confusion_matrix(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable] | None = None) -> ConfusionMatrix:
    """Confusion matrix of single-label routing decisions.

    Args:
        y_true: the true labels, a non-empty sequence of hashables.
        y_pred: the predicted labels, as long as ``y_true``.
        labels: the order of rows/columns (default: sorted union of both).

    Returns:
        ``ConfusionMatrix``: ``labels`` and ``matrix``, rows true labels, columns predicted
        ones (scikit-learn's convention).

    Raises:
        MetricInputError: different lengths, empty input, duplicate labels, or a value outside
            explicit ``labels`` (naming the position).

    Examples:
        >>> confusion_matrix(["billing", "billing", "tech", "tech"],
        ...                  ["billing", "tech", "tech", "tech"]).matrix
        ((1, 1), (0, 2))

    Source: seed 000 §6 (confusion matrix, rows true, columns predicted).
    """
    _check_pair(y_true, y_pred)
    labs = _resolve_labels(y_true, y_pred, labels)
    idx = {lab: i for i, lab in enumerate(labs)}
    m = [[0] * len(labs) for _ in labs]
    for t, p in zip(y_true, y_pred):
        m[idx[t]][idx[p]] += 1
    return ConfusionMatrix(labs, tuple(tuple(r) for r in m))


@dataclass(frozen=True)
class ClassScores:
    """One label's precision, recall, F1 (0.0 on zero division) and support (true count)."""

    precision: float
    recall: float
    f1: float
    support: int
    tp: int
    fp: int
    fn: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "support": self.support, "tp": self.tp, "fp": self.fp, "fn": self.fn}


def _scores(tp: int, fp: int, fn: int) -> ClassScores:
    p, r, f1 = prf_counts(tp, tp + fp, tp + fn)
    # formulas.prf_counts' figures where their denominators are non-zero; 0.0 elsewhere:
    # routing keeps scikit-learn's zero_division=0, not prf_counts' empty-case rules for
    # calls (1.0 when nothing was expected), so a label never predicted and never true
    # scores 0 in a macro average as in sklearn's f1_score
    return ClassScores(precision=p if tp + fp else 0.0, recall=r if tp + fn else 0.0,
                       f1=f1 if tp else 0.0, support=tp + fn, tp=tp, fp=fp, fn=fn)


def _macro(per: Mapping[Hashable, ClassScores], part: str) -> float:
    """The unweighted mean of one part (precision, recall or f1) over the labels; 0.0 for
    no label."""
    return sum(getattr(s, part) for s in per.values()) / len(per) if per else 0.0


def _per_class(cm: ConfusionMatrix) -> dict[Hashable, ClassScores]:
    out: dict[Hashable, ClassScores] = {}
    k = len(cm.labels)
    for i, lab in enumerate(cm.labels):
        tp = cm.matrix[i][i]
        fn = sum(cm.matrix[i]) - tp
        fp = sum(cm.matrix[r][i] for r in range(k)) - tp
        out[lab] = _scores(tp, fp, fn)
    return out


@dataclass(frozen=True)
class RoutingResult(MetricResult):
    """Single-label routing quality: ``accuracy`` (= score), ``per_class`` scores,
    ``macro_precision``/``macro_recall``/``macro_f1`` and the ``confusion`` matrix."""

    accuracy: float = 0.0
    macro_precision: float = 0.0
    macro_recall: float = 0.0
    macro_f1: float = 0.0
    per_class: dict[Hashable, ClassScores] | None = None
    confusion: ConfusionMatrix | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones (labels as map keys via str())."""
        d = super().to_dict()
        d.update(accuracy=self.accuracy, macro_precision=self.macro_precision,
                 macro_recall=self.macro_recall, macro_f1=self.macro_f1,
                 per_class={str(k): v.to_dict() for k, v in (self.per_class or {}).items()},
                 confusion=self.confusion.to_dict() if self.confusion else None)
        return d


def routing_metrics(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                    labels: Sequence[Hashable] | None = None,
                    name: str = "routing") -> RoutingResult:
    """Accuracy, per-class precision / recall / F1, and macro averages of single-label routing.

    Args:
        y_true: the true labels, a non-empty sequence.
        y_pred: the predicted labels, as long as ``y_true``.
        labels: as in ``confusion_matrix``; macro averages run over exactly these labels, so a
            label given but never seen scores 0.0 in every part (scikit-learn,
            zero_division=0).
        name: the result's name.

    Returns:
        ``RoutingResult`` with ``accuracy`` (trace / total), per-class figures and macro
        averages, all in [0, 1]; ``score`` = accuracy.

    Raises:
        MetricInputError: as ``confusion_matrix``.

    Examples:
        billing: P 1, R 1/2, F1 2/3; tech: P 2/3, R 1, F1 4/5; macro-F1 = 11/15:

        >>> r = routing_metrics(["billing", "billing", "tech", "tech"],
        ...                     ["billing", "tech", "tech", "tech"])
        >>> r.accuracy, round(r.macro_f1, 4)
        (0.75, 0.7333)

    Source: scikit-learn ``accuracy_score``, ``precision_recall_fscore_support``,
    ``f1_score(average="macro")``.
    """
    cm = confusion_matrix(y_true, y_pred, labels)
    per = _per_class(cm)
    total = len(y_true)
    acc = sum(cm.matrix[i][i] for i in range(len(cm.labels))) / total
    mp, mr, mf = (_macro(per, part) for part in ("precision", "recall", "f1"))
    worst = min(per.items(), key=lambda kv: kv[1].recall)
    reason = (f"accuracy {acc:.4f} over {total} queries, macro-F1 {mf:.4f}; lowest recall "
              f"{worst[0]!r} {worst[1].recall:.4f}")
    return RoutingResult(
        name=name, score=acc, reason=reason,
        parts={"accuracy": acc, "macro_precision": mp, "macro_recall": mr, "macro_f1": mf,
               "per_class": {str(lab): s.to_dict() for lab, s in per.items()},
               "confusion": cm.to_dict()},
        accuracy=acc, macro_precision=mp, macro_recall=mr, macro_f1=mf, per_class=per,
        confusion=cm)


def accuracy(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
    """Fraction of positions where ``y_pred`` equals ``y_true`` (scikit-learn ``accuracy_score``).

    Args:
        y_true: the true labels, a non-empty sequence.
        y_pred: the predicted labels, as long as ``y_true``.

    Returns:
        The accuracy in [0, 1].

    Raises:
        MetricInputError: different lengths or empty input.

    Examples:
        >>> accuracy(["a", "a", "b", "b"], ["a", "b", "b", "b"])
        0.75
    """
    _check_pair(y_true, y_pred)
    return sum(t == p for t, p in zip(y_true, y_pred)) / len(y_true)


def macro_f1(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
             labels: Sequence[Hashable] | None = None) -> float:
    """Unweighted mean of per-label F1, zero division giving 0.0 (scikit-learn
    ``f1_score(average="macro", zero_division=0)``).

    Args:
        y_true: the true labels, a non-empty sequence.
        y_pred: the predicted labels, as long as ``y_true``.
        labels: the labels averaged over (default: sorted union of both).

    Returns:
        Macro-F1 in [0, 1].

    Raises:
        MetricInputError: as ``confusion_matrix``.

    Examples:
        F1 of ``a`` is 2/3 and of ``b`` 4/5, so (2/3 + 4/5) / 2 = 11/15:

        >>> round(macro_f1(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)
        0.7333
        >>> round(macro_f1(["a", "a", "b", "b"], ["a", "b", "b", "b"], labels=["a", "b", "c"]), 4)
        0.4889
    """
    return routing_metrics(y_true, y_pred, labels).macro_f1


# --------------------------------------------------------------------------------------------
# Multi-label routing (compound prompts routed to several destinations)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MultiLabelResult(MetricResult):
    """Multi-label routing quality.

    ``exact_set_accuracy`` (= score): fraction of queries whose predicted route set equals the
    true set (scikit-learn's subset accuracy). ``jaccard``: mean over queries of
    |T & P| / |T | P|. ``per_label``: binary P/R/F1 per route. ``micro_*``: from pooled
    tp/fp/fn; ``macro_f1``: unweighted mean of per-label F1. ``hamming_loss``: fraction of
    (query, label) slots that are wrong.
    """

    exact_set_accuracy: float = 0.0
    jaccard: float = 0.0
    hamming_loss: float = 0.0
    micro_precision: float = 0.0
    micro_recall: float = 0.0
    micro_f1: float = 0.0
    macro_f1: float = 0.0
    per_label: dict[Hashable, ClassScores] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(exact_set_accuracy=self.exact_set_accuracy, jaccard=self.jaccard,
                 hamming_loss=self.hamming_loss, micro_precision=self.micro_precision,
                 micro_recall=self.micro_recall, micro_f1=self.micro_f1,
                 macro_f1=self.macro_f1,
                 per_label={str(k): v.to_dict() for k, v in (self.per_label or {}).items()})
        return d


def _as_set(nm: str, i: int, v: Any) -> frozenset[Hashable]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise MetricInputError(
            f"{nm}[{i}] must be a set/list of routes, got {v!r}; wrap a single route in a list")
    try:
        return frozenset(v)
    except TypeError:
        raise MetricInputError(f"{nm}[{i}]: routes must be hashable, got {v!r}") from None


def multilabel_routing(y_true: Sequence[Iterable[Hashable]],
                       y_pred: Sequence[Iterable[Hashable]],
                       labels: Sequence[Hashable] | None = None,
                       name: str = "multilabel_routing") -> MultiLabelResult:
    """Routing quality when one compound prompt goes to SEVERAL routes.

    Args:
        y_true: the true route collections (sets, lists, tuples; duplicates collapse), a
            non-empty sequence.
        y_pred: the predicted route collections, as long as ``y_true``.
        labels: the routes scored per label (default: sorted union of all routes seen); with
            explicit labels a route outside them is an error.
        name: the result's name.

    Returns:
        ``MultiLabelResult``; ``score`` = exact-set accuracy; ``parts`` with ``jaccard``,
        ``hamming_loss``, micro and macro figures and ``per_label``.

    Raises:
        MetricInputError: different lengths, empty input, a bare string instead of a
            collection, or a route outside explicit ``labels`` (naming the position).

    Examples:
        The first prompt's second route was missed: exact sets 1/2, Jaccard (1/2 + 1) / 2,
        one wrong slot of 2 x 2:

        >>> p = multilabel_routing([{"a", "b"}, {"a"}], [{"a"}, {"a"}]).parts
        >>> p["exact_set_accuracy"], p["jaccard"], p["hamming_loss"], p["micro_f1"]
        (0.5, 0.75, 0.25, 0.8)

    Definitions (scikit-learn multilabel conventions, zero division -> 0.0): exact-set
    accuracy = mean [T_i == P_i]; Jaccard = mean_i |T_i & P_i| / |T_i | P_i| where two EMPTY
    sets score 1.0 (they agree exactly; scikit-learn returns its zero_division value there);
    per-label precision / recall / F1 as in the binary case; micro from pooled counts;
    macro-F1 = unweighted mean; Hamming loss = wrong slots / (queries x labels). Sources:
    scikit-learn ``accuracy_score`` (subset accuracy), ``jaccard_score(average="samples")``,
    ``hamming_loss``; Tsoumakas & Katakis (2007), "Multi-label classification: an overview".
    """
    _check_pair(y_true, y_pred)
    ts = [_as_set("y_true", i, v) for i, v in enumerate(y_true)]
    ps = [_as_set("y_pred", i, v) for i, v in enumerate(y_pred)]
    if labels is None:
        labs = _label_order([lab for s in ts + ps for lab in s])
    else:
        labs = tuple(labels)
        if len(set(labs)) != len(labs):
            raise MetricInputError(f"labels has duplicates: {list(labs)!r}")
        known = set(labs)
        for nm, sets in (("y_true", ts), ("y_pred", ps)):
            for i, st in enumerate(sets):
                extra = st - known
                if extra:
                    raise MetricInputError(
                        f"{nm}[{i}] has routes {sorted(map(repr, extra))} not in labels")
    n = len(ts)
    exact = sum(t == p for t, p in zip(ts, ps)) / n
    jac = sum(1.0 if not (t | p) else len(t & p) / len(t | p) for t, p in zip(ts, ps)) / n
    per: dict[Hashable, ClassScores] = {}
    for lab in labs:
        tp = sum(lab in t and lab in p for t, p in zip(ts, ps))
        fp = sum(lab not in t and lab in p for t, p in zip(ts, ps))
        fn = sum(lab in t and lab not in p for t, p in zip(ts, ps))
        per[lab] = _scores(tp, fp, fn)
    TP = sum(s.tp for s in per.values())
    FP = sum(s.fp for s in per.values())
    FN = sum(s.fn for s in per.values())
    micro = _scores(TP, FP, FN)
    mf = _macro(per, "f1")
    ham = (FP + FN) / (n * len(labs)) if labs else 0.0
    reason = (f"exact-set accuracy {exact:.4f} over {n} queries, Jaccard {jac:.4f}, "
              f"micro-F1 {micro.f1:.4f}, macro-F1 {mf:.4f}")
    return MultiLabelResult(
        name=name, score=exact, reason=reason,
        parts={"exact_set_accuracy": exact, "jaccard": jac, "hamming_loss": ham,
               "micro_precision": micro.precision, "micro_recall": micro.recall,
               "micro_f1": micro.f1, "macro_f1": mf,
               "per_label": {str(k): v.to_dict() for k, v in per.items()}},
        exact_set_accuracy=exact, jaccard=jac, hamming_loss=ham,
        micro_precision=micro.precision, micro_recall=micro.recall, micro_f1=micro.f1,
        macro_f1=mf, per_label=per)


# --------------------------------------------------------------------------------------------
# Risk-weighted misroute cost and recall floors
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MisrouteCostResult(MetricResult):
    """Total and mean risk-weighted cost of routing mistakes; ``by_pair`` maps
    "true -> pred" to its summed cost. ``score`` is None (a cost, not a [0, 1] score)."""

    total_cost: float = 0.0
    mean_cost: float = 0.0
    n_misrouted: int = 0
    by_pair: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(total_cost=self.total_cost, mean_cost=self.mean_cost,
                 n_misrouted=self.n_misrouted, by_pair=dict(self.by_pair or {}))
        return d


def _lookup_cost(cost: Mapping[Any, Any], t: Hashable, p: Hashable) -> Any:
    if (t, p) in cost:
        return cost[(t, p)]
    row = cost.get(t)
    if isinstance(row, Mapping) and p in row:
        return row[p]
    return None


def misroute_cost(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                  cost: Mapping[Any, Any], *, default_cost: float | None = None,
                  name: str = "misroute_cost") -> MisrouteCostResult:
    """Risk-weighted cost of routing mistakes: sum over queries of cost[true][pred].

    Args:
        y_true: the true labels, a non-empty sequence.
        y_pred: the predicted labels, as long as ``y_true``.
        cost: ``{(true, pred): cost}`` or nested ``{true: {pred: cost}}`` (both may be mixed;
            the tuple key wins); finite and >= 0.
        default_cost: the cost of a misroute whose pair is not in ``cost``; None makes such a
            misroute an error (a missing entry never silently costs 0).
        name: the result's name.

    Returns:
        ``MisrouteCostResult`` (score None) with parts ``total_cost``, ``mean_cost`` (total /
        queries), ``n_misrouted`` and ``by_pair``.

    Raises:
        MetricInputError: different lengths, empty input, a missing or invalid cost (naming
            the position and the pair).

    Examples:
        >>> p = misroute_cost(["billing", "billing", "tech", "tech"],
        ...                   ["billing", "tech", "tech", "tech"], {"billing": {"tech": 5.0}}).parts
        >>> p["total_cost"], p["mean_cost"]
        (5.0, 1.25)

    A correct route costs 0 unless the matrix gives (t, t) a value. This is the expected-cost
    criterion of cost-sensitive classification (Elkan 2001, "The foundations of
    cost-sensitive learning"). Source: seed 000 §6 pitfalls (misroutes carry asymmetric costs:
    weight by risk).
    """
    _check_pair(y_true, y_pred)
    total = 0.0
    n_mis = 0
    by_pair: dict[str, float] = {}
    for i, (t, p) in enumerate(zip(y_true, y_pred)):
        c = _lookup_cost(cost, t, p)
        if c is None:
            if t == p:
                continue
            if default_cost is None:
                raise MetricInputError(
                    f"query {i}: no cost for misroute {t!r} -> {p!r} and no default_cost")
            c = default_cost
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) \
                or c < 0:
            raise MetricInputError(
                f"query {i}: cost of {t!r} -> {p!r} must be a finite number >= 0, got {c!r}")
        if t != p:
            n_mis += 1
        if c:
            key = f"{t} -> {p}"
            by_pair[key] = by_pair.get(key, 0.0) + float(c)
        total += float(c)
    n = len(y_true)
    reason = (f"{n_mis}/{n} misrouted, risk-weighted cost {total:g} (mean {total / n:.4g} "
              f"per query)")
    return MisrouteCostResult(name=name, score=None, reason=reason,
                              parts={"total_cost": total, "mean_cost": total / n,
                                     "n_misrouted": n_mis, "by_pair": by_pair},
                              total_cost=total, mean_cost=total / n, n_misrouted=n_mis,
                              by_pair=by_pair)


@dataclass(frozen=True)
class RecallGateResult(MetricResult):
    """A per-class recall gate: ``passed`` is True when every floored class meets its floor.

    ``failed`` maps each failing class to ``(recall, floor)`` (recall None when the class has
    no true examples); ``recalls`` holds every floored class's recall. score = 1.0 / 0.0.
    """

    failed: dict[Hashable, tuple[float | None, float]] | None = None
    recalls: dict[Hashable, float | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(failed={str(k): list(v) for k, v in (self.failed or {}).items()},
                 recalls={str(k): v for k, v in (self.recalls or {}).items()})
        return d


def recall_floor_gate(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                      floors: Mapping[Hashable, float],
                      name: str = "recall_floor_gate") -> RecallGateResult:
    """Release gate: every class in ``floors`` must reach recall >= its floor.

    Args:
        y_true: the true labels, a non-empty sequence.
        y_pred: the predicted labels, as long as ``y_true``.
        floors: ``{label: minimum recall in [0, 1]}``, e.g. ``{"out_of_scope": 0.9}`` -- a
            router that sends out-of-scope requests to an action tool is the costly mistake.
        name: the result's name.

    Returns:
        ``RecallGateResult`` with ``passed``, ``score`` (1.0 / 0.0), ``failed`` (``{label:
        (recall, floor)}``) and ``recalls``.

    Raises:
        MetricInputError: different lengths, empty input, empty ``floors`` or a floor outside
            [0, 1].

    Examples:
        >>> g = recall_floor_gate(["billing", "billing", "tech"], ["billing", "tech", "tech"],
        ...                       {"billing": 0.9, "tech": 0.9})
        >>> g.passed, g.failed
        (False, {'billing': (0.5, 0.9)})

    A floored class with NO true examples in ``y_true`` fails (its recall is unmeasured,
    reported as None): a gate must not pass on missing evidence. Recall is tp / (tp + fn).
    Source: seed 000 §6 pitfalls (gate on per-class recall floors).
    """
    _check_pair(y_true, y_pred)
    if not floors:
        raise MetricInputError("recall_floor_gate: no floors given")
    for lab, f in floors.items():
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f <= 1.0:
            raise MetricInputError(f"floor for {lab!r} must be a number in [0, 1], got {f!r}")
    recalls: dict[Hashable, float | None] = {}
    failed: dict[Hashable, tuple[float | None, float]] = {}
    for lab, f in floors.items():
        support = sum(t == lab for t in y_true)
        if support == 0:
            recalls[lab] = None
            failed[lab] = (None, float(f))
            continue
        tp = sum(t == lab and p == lab for t, p in zip(y_true, y_pred))
        fp = sum(t != lab and p == lab for t, p in zip(y_true, y_pred))
        r = _scores(tp, fp, support - tp).recall
        recalls[lab] = r
        if r < f:
            failed[lab] = (r, float(f))
    passed = not failed
    if passed:
        reason = "every class meets its recall floor: " + ", ".join(
            f"{lab!r} {recalls[lab]:.4f} >= {floors[lab]:g}" for lab in floors)
    else:
        reason = "recall below floor: " + ", ".join(
            (f"{lab!r} has no examples" if r is None else f"{lab!r} {r:.4f} < {f:g}")
            for lab, (r, f) in failed.items())
    return RecallGateResult(name=name, score=1.0 if passed else 0.0, reason=reason,
                            parts={"recalls": {str(k): v for k, v in recalls.items()},
                                   "failed": {str(k): list(v) for k, v in failed.items()}},
                            passed=passed, failed=failed, recalls=recalls)
