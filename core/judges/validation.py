"""Judge validation: how well a judge agrees with human labels, per check and overall.

A team labels a sample of trajectories by hand, runs the judge on the same sample, and
checks the agreement before letting the judge gate a release. Definitions:

- accuracy = share of items where judge and human agree;
- Cohen's kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the
  agreement expected by chance from each rater's own pass rate (Cohen 1960,
  "A coefficient of agreement for nominal scales"); None when p_e = 1 (both raters gave
  one and the same label to every item: kappa is undefined there);
- the confusion matrix takes the human label as the truth and "pass" as the positive class:
  tp (both pass), fp (judge pass, human fail), fn (judge fail, human pass), tn (both fail).

The kappa interval is the large-sample 95% interval kappa +- z * SE, with the standard error
of Fleiss, Cohen & Everitt (1969, "Large sample standard errors of kappa and weighted
kappa"), clipped to [-1, 1]; None when kappa is undefined. With few items it is wide, and
only approximate.

Policy: an item where either label is None (not applicable, or a judge error) is left out
of that check's figures and counted in ``n_skipped``. ``overall`` pools every check's
counted items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MetricInputError


@dataclass(frozen=True)
class Agreement:
    """Agreement on one check: ``n`` items counted, ``n_skipped`` left out, ``accuracy`` and
    ``kappa`` (None when undefined or n = 0), and the confusion counts ``tp, fp, fn, tn``."""

    name: str
    n: int
    n_skipped: int
    accuracy: float | None
    kappa: float | None
    tp: int
    fp: int
    fn: int
    tn: int
    kappa_interval: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        ci = list(self.kappa_interval) if self.kappa_interval is not None else None
        return {"name": self.name, "n": self.n, "n_skipped": self.n_skipped,
                "accuracy": self.accuracy, "kappa": self.kappa, "kappa_interval": ci,
                "confusion": {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}}


@dataclass(frozen=True)
class AgreementReport:
    """``per_check`` agreements (by check name, in first-seen order) and ``overall``."""

    overall: Agreement
    per_check: dict[str, Agreement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"overall": self.overall.to_dict(),
                "per_check": {k: v.to_dict() for k, v in self.per_check.items()}}


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' binary labels ``(judge, human)``; None when p_e = 1 or
    there are no pairs (see the module doc)."""
    n = len(pairs)
    if n == 0:
        return None
    po = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    if pe >= 1.0:
        return None
    return (po - pe) / (1 - pe)


def kappa_interval(pairs: Sequence[tuple[bool, bool]], z: float = 1.959963984540054
                   ) -> tuple[float, float] | None:
    """The large-sample interval kappa +- z * SE of two raters' binary labels ``(judge,
    human)``: SE from Fleiss, Cohen & Everitt (1969), clipped to [-1, 1]; None when kappa is
    undefined (see :func:`cohen_kappa`). Default z: the 95% two-sided normal quantile."""
    k = cohen_kappa(pairs)
    if k is None:
        return None
    n = len(pairs)
    # p[i][j]: share of items the judge labelled i and the human j (1 = pass, 0 = fail)
    p = [[sum(1 for a, b in pairs if int(a) == i and int(b) == j) / n for j in (0, 1)] for i in (0, 1)]
    row = [p[i][0] + p[i][1] for i in (0, 1)]   # the judge's marginal shares
    col = [p[0][j] + p[1][j] for j in (0, 1)]   # the human's marginal shares
    pe = row[0] * col[0] + row[1] * col[1]
    a = sum(p[i][i] * (1 - (row[i] + col[i]) * (1 - k)) ** 2 for i in (0, 1))
    b = (1 - k) ** 2 * sum(p[i][j] * (col[i] + row[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j)
    c = (k - pe * (1 - k)) ** 2
    var = max(0.0, (a + b - c) / (n * (1 - pe) ** 2))
    half = z * var ** 0.5
    return max(-1.0, k - half), min(1.0, k + half)


def _agreement(name: str, pairs: list[tuple[bool, bool]], skipped: int) -> Agreement:
    tp = sum(a and b for a, b in pairs)
    fp = sum(a and not b for a, b in pairs)
    fn = sum(b and not a for a, b in pairs)
    tn = sum(not a and not b for a, b in pairs)
    acc = (tp + tn) / len(pairs) if pairs else None
    return Agreement(name, len(pairs), skipped, acc, cohen_kappa(pairs), tp, fp, fn, tn,
                     kappa_interval(pairs))


def _label_map(x: Any, i: int, who: str) -> Mapping[str, Any]:
    if hasattr(x, "items") and hasattr(x, "judge") and not isinstance(x, Mapping):  # a Verdict
        if x.error is not None:
            return {it.name: None for it in x.items}
        return {it.name: it.passed for it in x.items}
    if isinstance(x, Mapping):
        return x
    if x is None or isinstance(x, bool):
        return {"label": x}
    raise MetricInputError(f"{who} label {i}: expected a bool, None, a dict check -> bool or a "
                           f"Verdict, got {type(x).__name__}")


def judge_agreement(judge_labels: Sequence[Any], human_labels: Sequence[Any]) -> AgreementReport:
    """Agreement of a judge with human labels.

    ``judge_labels[i]`` and ``human_labels[i]`` label the same item: each a bool, None, a
    dict ``check name -> bool | None``, or (judge side) a :class:`~trajcheck.judges.Verdict`
    (its items; a verdict with ``error`` set counts as None for every check). Checks present
    on only one side for an item are skipped for that item. Raises MetricInputError when the
    two lists differ in length, are empty, or hold a non-bool label.
    """
    if len(judge_labels) != len(human_labels):
        raise MetricInputError(f"judge_labels has {len(judge_labels)} items but human_labels has "
                               f"{len(human_labels)}; they must label the same items")
    if not judge_labels:
        raise MetricInputError("no labels to compare")
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    skipped: dict[str, int] = {}
    for i, (j, h) in enumerate(zip(judge_labels, human_labels)):
        jm, hm = _label_map(j, i, "judge"), _label_map(h, i, "human")
        for name in list(hm) + [k for k in jm if k not in hm]:
            pairs.setdefault(name, [])
            skipped.setdefault(name, 0)
            a, b = jm.get(name), hm.get(name)
            for who, v in (("judge", a), ("human", b)):
                if v is not None and not isinstance(v, bool):
                    raise MetricInputError(f"{who} label {i}, check {name!r}: expected true, false "
                                           f"or null, got {v!r}")
            if a is None or b is None:
                skipped[name] += 1
            else:
                pairs[name].append((a, b))
    per = {k: _agreement(k, v, skipped[k]) for k, v in pairs.items()}
    pooled = [p for v in pairs.values() for p in v]
    overall = _agreement("overall", pooled, sum(skipped.values()))
    return AgreementReport(overall, per)
