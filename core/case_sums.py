"""Exact per-case sums of one run figure, kept in columns (an aggregate holds one per figure).

A case's sum is exact whatever the order of the additions or of merging partials, so a
per-case mean is ``math.fsum`` of the case's values divided by their number, in any
grouping. Most sums fit in two floats (``hi + lo`` exactly: values in [0, 1] with 53-bit
mantissas and a few runs a case span far fewer than 106 bits), so a case costs 20 bytes
(``hi``, ``lo``, ``count``) instead of a Python object; a sum needing more is kept as
Shewchuk's non-overlapping partials (``aggregate.exact_add``) in a side dict, its ``lo``
set to NaN as the mark. Adding is TwoSum (Knuth, TAOCP vol. 2, 4.2.2; the error of one
float addition is itself a float): exact, with no rounding anywhere.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

_NAN = float("nan")


def exact_add(partials: list[float], x: float) -> None:
    """Add ``x`` to ``partials``, a list of non-overlapping floats whose exact sum is a
    running total (Shewchuk 1997, "Adaptive precision floating-point arithmetic", the
    grow-expansion step). ``math.fsum(partials)`` is then the correctly rounded total,
    whatever the order of the additions or of merging two such lists."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


def _fsum(parts: Iterable[float]) -> float:
    """``math.fsum``, NaN where it fails (an infinity minus an infinity, an overflow): the
    case's mean is then not finite, reported as such."""
    try:
        return math.fsum(parts)
    except (ValueError, OverflowError):
        return _NAN


class CaseSums:
    """Exact sums and counts of one figure over each case's runs, case ``i`` at row ``i``
    (module docstring). Rows are added with ``grow``; values with ``add``; another
    ``CaseSums`` is folded in with ``merge`` (its rows mapped to this one's)."""

    __slots__ = ("hi", "lo", "count", "over")

    def __init__(self) -> None:
        self.hi = array("d")
        self.lo = array("d")
        self.count = array("i")
        self.over: dict[int, list[float]] = {}  # row -> partials, for sums two floats cannot hold

    def grow(self) -> None:
        """One more case (row ``len``), with no values yet."""
        self.hi.append(0.0)
        self.lo.append(0.0)
        self.count.append(0)

    def add(self, i: int, x: float) -> None:
        """Add the float ``x`` to row ``i``'s sum, exactly."""
        self.count[i] += 1
        h = self.hi[i]
        s = h + x
        bv = s - h
        e = (h - (s - bv)) + (x - bv)  # TwoSum: h + x == s + e exactly
        if e or self.lo[i]:
            self._add_slow(i, h, x, s, e)
        else:
            self.hi[i] = s

    def _add_slow(self, i: int, h: float, x: float, s: float, e: float) -> None:
        lo = self.lo[i]
        if lo != lo:  # the mark: the sum is in ``over``
            exact_add(self.over[i], x)
            return
        if math.isfinite(s) and math.isfinite(e):
            if not lo:
                self.hi[i], self.lo[i] = s, e
                return
            t = lo + e
            bv = t - lo
            if not (lo - (t - bv)) + (e - bv):  # lo + e == t exactly: the sum is s + t
                self.hi[i], self.lo[i] = s, t
                return
        parts: list[float] = []
        for v in (h, lo, x):
            exact_add(parts, v)
        self.over[i] = parts
        self.lo[i] = _NAN

    def parts(self, i: int) -> list[float]:
        """Row ``i``'s sum as floats whose exact sum it is."""
        lo = self.lo[i]
        if lo != lo:
            return self.over[i]
        return [self.hi[i], lo] if lo else [self.hi[i]]

    def total(self, i: int) -> float:
        """Row ``i``'s sum correctly rounded (``math.fsum`` of its values; NaN when that
        fails on infinities)."""
        lo = self.lo[i]
        if lo == 0.0:
            return self.hi[i]
        if lo != lo:
            return _fsum(self.over[i])
        return self.hi[i] + lo  # one rounding of the exact hi + lo: what fsum gives

    def merge(self, other: CaseSums, rows: Sequence[int]) -> None:
        """Add ``other``'s row ``j`` into this one's row ``rows[j]``, for every ``j``."""
        count = self.count
        for j, i in enumerate(rows):
            n = other.count[j]
            if not n:
                continue
            c = count[i]
            for x in other.parts(j):
                self.add(i, x)
            count[i] = c + n  # ``add`` counted the partials, not the values

    def means(self, rows: Iterable[int]) -> array[float]:
        """The mean of each of ``rows`` that has values, in that order (rows without values
        are left out): the per-task column a bootstrap over cases resamples."""
        count = self.count
        total = self.total
        return array("d", [total(i) / count[i] for i in rows if count[i]])

    def __getstate__(self) -> tuple[Any, ...]:
        return self.hi, self.lo, self.count, self.over

    def __setstate__(self, st: tuple[Any, ...]) -> None:
        self.hi, self.lo, self.count, self.over = st


__all__ = ["CaseSums", "exact_add"]
