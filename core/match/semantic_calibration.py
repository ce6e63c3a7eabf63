"""Calibrating the ``semantic`` matcher's threshold against labelled argument pairs.

Seed 000 §2.2: "Validate semantic argument matchers against human labels before gating
releases." A labelled file holds pairs of argument values and whether a person judged them
to mean the same (``{"a": ..., "b": ..., "label": true}`` per JSONL line). Each pair is
decided as the matcher decides it (``trajcheck.match.matchers.SemanticMatcher``): values that look
like IDs, numbers or dates are equal after trimming and case-folding or not at all, whatever
the threshold; any other pair matches when its similarity score is >= the threshold.

At each threshold, with the human label as the truth and "same meaning" as the positive
class: precision = tp / (tp + fp) (None when nothing matched), recall = tp / (tp + fn)
(None when no pair is labelled true), F1 = 2PR / (P + R) (None when either is None, 0 when
both are 0). The recommended threshold is the lowest one whose precision reaches the target
(lowest, so recall is as high as that precision allows); None when no threshold does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..metrics.formulas import prf_counts
from ..read.limits import object_lines
from .matchers import _as_text, _exact_kind


@dataclass(frozen=True)
class LabelledPair:
    """One labelled pair: the two values, the human label, and where it was read (``line``)."""

    a: Any
    b: Any
    label: bool
    line: int


@dataclass(frozen=True)
class ScoredPair:
    """A pair with its ``score`` (None for ID-like values, decided by ``exact``)."""

    pair: LabelledPair
    score: float | None
    exact: bool | None

    def matches(self, threshold: float) -> bool:
        """The matcher's decision at ``threshold``."""
        if self.score is None:
            return bool(self.exact)
        return self.score >= threshold

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (full precision)."""
        return {"line": self.pair.line, "a": self.pair.a, "b": self.pair.b,
                "label": self.pair.label, "score": self.score,
                "decided_by": "exact" if self.score is None else "similarity",
                "exact_match": self.exact}


@dataclass(frozen=True)
class ThresholdRow:
    """Figures at one threshold (see the module doc)."""

    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float | None:
        """tp / (tp + fp); None when no pair matched."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """tp / (tp + fn); None when no pair is labelled true."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        """2PR / (P + R) (``formulas.prf_counts``' F1, 2 tp / (2 tp + fp + fn) in one
        division); None when P or R is None, 0.0 when both are 0."""
        if not (self.tp + self.fp and self.tp + self.fn):
            return None
        return prf_counts(self.tp, self.tp + self.fp, self.tp + self.fn)[2]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"threshold": self.threshold, "precision": self.precision, "recall": self.recall,
                "f1": self.f1, "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`: one row per threshold (ascending), the target
    precision and the lowest threshold reaching it (None when none does), and the pairs."""

    rows: tuple[ThresholdRow, ...]
    target_precision: float
    recommended: float | None
    pairs: tuple[ScoredPair, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"target_precision": self.target_precision, "recommended_threshold": self.recommended,
                "n_pairs": len(self.pairs), "n_positive": sum(p.pair.label for p in self.pairs),
                "n_exact": sum(p.score is None for p in self.pairs),
                "thresholds": [r.to_dict() for r in self.rows],
                "pairs": [p.to_dict() for p in self.pairs]}


def load_pairs(path: str | Path) -> tuple[list[LabelledPair], list[str]]:
    """The labelled pairs of a JSONL file (``{"a", "b", "label"}`` per line; blank lines
    skipped) and the problems of lines that could not be used (``"<file>:<line>: ..."``): a
    line that is not a JSON object, lacks ``a``/``b``, or whose ``label`` is not true/false
    is left out; the others are kept. Raises DatasetError when the file cannot be read."""
    pairs: list[LabelledPair] = []
    problems: list[str] = []
    for where, n, d, problem in object_lines(path, "labelled pairs"):
        if d is None:
            problems.append(f"{where}: {problem}; expected an object with a, b and label")
            continue
        missing = [k for k in ("a", "b", "label") if k not in d]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        if not isinstance(d["label"], bool):
            problems.append(f"{where}: label must be true or false, got {d['label']!r}")
            continue
        pairs.append(LabelledPair(d["a"], d["b"], d["label"], n))
    return pairs, problems


def default_thresholds(step: float = 0.05) -> list[float]:
    """``step, 2*step, ...`` below 1.0, rounded to 10 decimals (0.05 .. 0.95 by default)."""
    if not 0.0 < step < 1.0:
        raise DatasetError(f"threshold step must be in (0, 1), got {step!r}")
    out, i = [], 1
    while i * step < 1.0 - 1e-9:
        out.append(round(i * step, 10))
        i += 1
    return out


def calibrate(pairs: Sequence[LabelledPair], scorer: Callable[[str, str], float], *,
              thresholds: Sequence[float] | None = None,
              target_precision: float = 0.95) -> Calibration:
    """Precision, recall and F1 of the ``semantic`` matcher at each threshold over ``pairs``.

    ``scorer(a_text, b_text)`` gives a similarity in [0, 1] (``EmbeddingScorer`` in
    practice); values are compared as the matcher compares them (non-strings as JSON text;
    ID-like values by normalized equality, without the scorer). ``thresholds`` default to
    :func:`default_thresholds`. Raises DatasetError for no pairs, a threshold or target
    outside [0, 1], or a score that is not a number in [0, 1].
    """
    if not pairs:
        raise DatasetError("no labelled pairs to calibrate on")
    if not 0.0 <= target_precision <= 1.0:
        raise DatasetError(f"target precision must be in [0, 1], got {target_precision!r}")
    ts = sorted(set(default_thresholds() if thresholds is None else thresholds))
    for t in ts:
        if not 0.0 <= t <= 1.0:
            raise DatasetError(f"threshold must be in [0, 1], got {t!r}")
    scored = []
    for pr in pairs:
        if _exact_kind(pr.a) or _exact_kind(pr.b):
            same = _as_text(pr.a).strip().casefold() == _as_text(pr.b).strip().casefold()
            scored.append(ScoredPair(pr, None, same))
            continue
        s = scorer(_as_text(pr.a), _as_text(pr.b))
        if not isinstance(s, (int, float)) or not 0.0 <= float(s) <= 1.0:
            raise DatasetError(f"line {pr.line}: the scorer gave {s!r}, not a number in [0, 1]")
        scored.append(ScoredPair(pr, float(s), None))
    rows = []
    for t in ts:
        tp = fp = fn = tn = 0
        for sp in scored:
            m = sp.matches(t)
            if m and sp.pair.label:
                tp += 1
            elif m:
                fp += 1
            elif sp.pair.label:
                fn += 1
            else:
                tn += 1
        rows.append(ThresholdRow(t, tp, fp, fn, tn))
    rec = next((r.threshold for r in rows
                if r.precision is not None and r.precision >= target_precision), None)
    return Calibration(tuple(rows), target_precision, rec, tuple(scored))


__all__ = ["Calibration", "LabelledPair", "ScoredPair", "ThresholdRow", "calibrate",
           "default_thresholds", "load_pairs"]
