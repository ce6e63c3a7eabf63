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

from ..metrics.reliability import mean_from_sum

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


def _numpy() -> Any:
    """numpy (a core dependency) when importable, else None: merges then go row by row."""
    try:
        import numpy
    except ImportError:  # pragma: no cover
        return None
    return numpy


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """Knuth's TwoSum, elementwise on numpy arrays: ``(s, e)`` with ``s = a + b`` rounded and
    ``a + b == s + e`` exactly (for finite values; the caller sets ``np.errstate``)."""
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


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

    __slots__ = ("hi", "lo", "count", "over", "pend_rows", "pend_x")

    def __init__(self) -> None:
        self.hi = array("d")
        self.lo = array("d")
        self.count = array("i")
        self.over: dict[int, list[float]] = {}  # row -> partials, for sums two floats cannot hold
        # values queued by a caller (``queue``; an aggregate appends to both arrays itself):
        # added by ``flush``, which every reader calls first
        self.pend_rows = array("i")
        self.pend_x = array("d")

    def grow(self, k: int = 1) -> None:
        """``k`` more cases (rows from ``len`` on), with no values yet."""
        if k == 1:  # the usual call, once a new case
            self.hi.append(0.0)
            self.lo.append(0.0)
            self.count.append(0)
            return
        self.hi.extend(array("d", [0.0]) * k)
        self.lo.extend(array("d", [0.0]) * k)
        self.count.extend(array("i", [0]) * k)

    def queue(self, i: int, x: float) -> None:
        """Add the float ``x`` to row ``i``'s sum at the next ``flush`` (or read)."""
        self.pend_rows.append(i)
        self.pend_x.append(x)

    def flush(self) -> None:
        """Add the queued values, each row's in queue order: the same sums (and the same
        two floats or partials per row) as ``add`` called for each value in turn. With
        numpy, the values are added in rounds -- the first queued value of every row, then
        the second... -- each round a TwoSum over whole columns; a value whose row's sum
        does not stay two floats (or is not finite) is added by ``add`` in its turn."""
        xs = self.pend_x
        if not xs:
            return
        rows = self.pend_rows
        self.pend_rows, self.pend_x = array("i"), array("d")
        np = _numpy()
        if np is None or len(xs) < 64:
            for i, x in zip(rows, xs):
                self._add(i, x)
            return
        for i, x in self._flush_numpy(np, rows, xs):
            self._add(i, x)

    _ROUNDS = 16  # rounds in whole columns; a row's later values go one by one

    def _flush_numpy(self, np: Any, rows: array[int], xs: array[float]) -> Iterable[tuple[int, float]]:
        """``flush`` in rounds (see there); returns the values left for ``add``, in order."""
        r_all = np.frombuffer(rows, dtype=np.int32)
        order = np.argsort(r_all, kind="stable")  # by row, each row's values in queue order
        rs = r_all[order]
        xv = np.frombuffer(xs, dtype=np.float64)[order]
        n = rs.size
        first = np.empty(n, dtype=bool)
        first[0] = True
        np.not_equal(rs[1:], rs[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        occ = np.arange(n) - starts[np.cumsum(first) - 1]  # which value of its row
        by_round = np.argsort(occ, kind="stable")
        bounds = np.searchsorted(occ[by_round], np.arange(self._ROUNDS + 1))
        hi = np.frombuffer(self.hi, dtype=np.float64)
        lo = np.frombuffer(self.lo, dtype=np.float64)
        cnt = np.frombuffer(self.count, dtype=np.int32)
        add = self._add
        for k in range(self._ROUNDS):
            sel = by_round[bounds[k]:bounds[k + 1]]
            if not sel.size:
                break
            r, x = rs[sel], xv[sel]  # distinct rows
            h, low = hi[r], lo[r]
            with np.errstate(all="ignore"):  # infinities give NaN: those values go to ``add``
                s, e = _two_sum(h, x)
                t, e2 = _two_sum(low, e)
            l0 = low == 0
            z = e == 0
            set_lo = (l0 & ~z & (e == e)) | (~l0 & (low == low) & ~z & (e2 == 0))
            ok = (z & (low == low)) | set_lo
            rk = r[ok]
            hi[rk] = s[ok]
            cnt[rk] += 1
            lo[r[set_lo]] = np.where(l0, e, t)[set_lo]
            bad = ~ok
            if bad.any():
                for i, v in zip(r[bad].tolist(), x[bad].tolist()):
                    add(i, v)
        rest = by_round[bounds[self._ROUNDS]:]
        return zip(rs[rest].tolist(), xv[rest].tolist())

    def add(self, i: int, x: float) -> None:
        """Add the float ``x`` to row ``i``'s sum, exactly."""
        if self.pend_x:
            self.flush()
        self._add(i, x)

    def _add(self, i: int, x: float) -> None:
        self.count[i] += 1
        h = self.hi[i]
        s = h + x
        bv = s - h
        e = (h - (s - bv)) + (x - bv)  # TwoSum: h + x == s + e exactly (NaN past an infinity)
        lo = self.lo[i]
        if not lo:  # the sum is h: now s + e
            if not e:
                self.hi[i] = s
                return
            if e == e:
                self.hi[i] = s
                self.lo[i] = e
                return
        elif lo == lo:  # the sum is h + lo: now s + e + lo
            if not e:
                self.hi[i] = s
                return
            t = lo + e
            bv = t - lo
            if not (lo - (t - bv)) + (e - bv):  # lo + e == t exactly
                self.hi[i] = s
                self.lo[i] = t
                return
        else:  # the mark: the sum is in ``over``
            exact_add(self.over[i], x)
            return
        parts: list[float] = []
        for v in (h, lo, x):
            exact_add(parts, v)
        self.over[i] = parts
        self.lo[i] = _NAN

    def parts(self, i: int) -> list[float]:
        """Row ``i``'s sum as floats whose exact sum it is."""
        if self.pend_x:
            self.flush()
        lo = self.lo[i]
        if lo != lo:
            return self.over[i]
        return [self.hi[i], lo] if lo else [self.hi[i]]

    def total(self, i: int) -> float:
        """Row ``i``'s sum correctly rounded (``math.fsum`` of its values; NaN when that
        fails on infinities)."""
        if self.pend_x:
            self.flush()
        lo = self.lo[i]
        if lo == 0.0:
            return self.hi[i]
        if lo != lo:
            return _fsum(self.over[i])
        return self.hi[i] + lo  # one rounding of the exact hi + lo: what fsum gives

    def merge(self, other: CaseSums, rows: Sequence[int]) -> None:
        """Add ``other``'s row ``j`` into this one's row ``rows[j]``, for every ``j``
        (``rows``: distinct rows of this table)."""
        self.flush()
        other.flush()
        todo: Iterable[int] = range(len(rows))
        np = _numpy()
        if np is not None and len(rows) >= 8:
            todo = self._merge_numpy(np, other, rows)
        count = self.count
        for j in todo:
            n = other.count[j]
            if not n:
                continue
            i = rows[j]
            c = count[i]
            for x in other.parts(j):
                self._add(i, x)
            count[i] = c + n  # ``add`` counted the partials, not the values

    def _merge_numpy(self, np: Any, other: CaseSums, rows: Sequence[int]) -> list[int]:
        """``merge`` for every row whose sum stays two floats, in whole columns: hi + lo +
        other's hi + lo as (s, u) with s + u exact (TwoSum, then two exact additions of
        the error terms, checked); returns the rows left for one-by-one ``add``."""
        oc = np.frombuffer(other.count, dtype=np.int32)
        jj = np.flatnonzero(oc)
        if not jj.size:
            return []
        ii = np.asarray(rows, dtype=np.intp)[jj]
        hi = np.frombuffer(self.hi, dtype=np.float64)
        lo = np.frombuffer(self.lo, dtype=np.float64)
        h, low = hi[ii], lo[ii]
        oh = np.frombuffer(other.hi, dtype=np.float64)[jj]
        ol = np.frombuffer(other.lo, dtype=np.float64)[jj]
        with np.errstate(all="ignore"):  # infinities give NaN errors: those rows go one by one
            s, e = _two_sum(h, oh)
            t, e2 = _two_sum(low, e)
            u, e3 = _two_sum(t, ol)
        ok = (low == low) & (ol == ol) & (e == e) & (e2 == 0) & (e3 == 0)
        hi[ii[ok]] = s[ok]
        lo[ii[ok]] = u[ok]
        cnt = np.frombuffer(self.count, dtype=np.int32)
        cnt[ii[ok]] += oc[jj[ok]]
        return jj[~ok].tolist()  # type: ignore[no-any-return]

    def totals(self, np: Any, rows: Any) -> Any:
        """``[total(i) for i in rows]`` as a float64 array (``rows``: an integer array), the
        same floats: hi where lo is 0, hi + lo (one rounding, as ``total``) where it is a
        float, ``math.fsum`` of the parts where the sum is held in ``over``."""
        self.flush()
        hi = np.frombuffer(self.hi, dtype=np.float64)[rows]
        lo = np.frombuffer(self.lo, dtype=np.float64)[rows]
        with np.errstate(all="ignore"):
            out = np.where(lo == 0.0, hi, hi + lo)  # hi kept as is (a -0.0 stays -0.0)
        for k in np.flatnonzero(lo != lo).tolist():
            out[k] = _fsum(self.over[int(rows[k])])
        return out

    def means(self, rows: Iterable[int]) -> array[float]:
        """The mean of each of ``rows`` that has values, in that order (rows without values
        are left out): the per-task column a bootstrap over cases resamples."""
        self.flush()
        count = self.count
        np = _numpy()
        if np is not None:
            idx = np.fromiter(rows, dtype=np.intp)
            n = np.frombuffer(count, dtype=np.int32)[idx]
            idx = idx[n != 0]
            with np.errstate(all="ignore"):
                # mean_from_sum elementwise: float / int as Python divides them
                m = self.totals(np, idx) / n[n != 0]
            return array("d", m.tobytes())
        return array("d", [self.mean(i) for i in rows if count[i]])

    def mean(self, i: int) -> float:
        """Row ``i``'s mean: ``reliability.mean_from_sum`` of its exact total and count.

        Args:
            i: a row with at least one value.

        Returns:
            The mean of the row's values (NaN when their sum is not finite).

        Raises:
            ZeroDivisionError: for a row without values (callers leave those out).
        """
        return mean_from_sum(self.total(i), self.count[i])

    def __getstate__(self) -> tuple[Any, ...]:
        self.flush()
        return self.hi, self.lo, self.count, self.over

    def __setstate__(self, st: tuple[Any, ...]) -> None:
        self.hi, self.lo, self.count, self.over = st
        self.pend_rows, self.pend_x = array("i"), array("d")


class RunningSum:
    """One exact running sum of many floats (a suite's total cost): values are appended to
    a buffer and folded into a few partials every ``BUFFER`` values, by ``math.fsum``'s
    exact sum and its exact remainders -- cheaper per value than ``exact_add``'s loop."""

    BUFFER = 4096
    __slots__ = ("buf", "parts")

    def __init__(self) -> None:
        self.buf = array("d")
        self.parts: list[float] = []

    def add(self, x: float) -> None:
        """Add the float ``x``."""
        self.buf.append(x)
        if len(self.buf) >= self.BUFFER:
            self._fold()

    def _fold(self) -> None:
        vals = [*self.parts, *self.buf]
        self.buf = array("d")
        if not all(map(math.isfinite, vals)):
            self.parts = [_fsum(vals)]  # not finite: no exact remainder to keep
            return
        # parts s0, s1, ... with s_k the rounded remainder of the values less s0..s_k-1:
        # fsum is exact inside, so a zero remainder ends the list and the exact sum of the
        # parts is that of the values
        parts: list[float] = []
        while True:
            try:
                r = math.fsum(vals + [-p for p in parts])
            except OverflowError:  # a sum past the largest float: rounded, as fsum fails
                self.parts = [_NAN]
                return
            if not r:
                break
            parts.append(r)
        self.parts = parts

    def total(self) -> float:
        """The sum of every value added, correctly rounded (``math.fsum`` of them; NaN
        when that fails on infinities)."""
        return _fsum([*self.parts, *self.buf])

    def merge(self, other: RunningSum) -> None:
        """Add every value of ``other``."""
        for x in [*other.parts, *other.buf]:
            self.add(x)

    def __getstate__(self) -> tuple[Any, ...]:
        return self.buf, self.parts

    def __setstate__(self, st: tuple[Any, ...]) -> None:
        self.buf, self.parts = st


__all__ = ["CaseSums", "RunningSum", "exact_add"]
