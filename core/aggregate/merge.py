"""Merging one ``SuitePartial`` into another (``merge``): case rows mapped by case id, the
per-case columns added in whole columns (numpy) or row by row, the exact sums merged
(``case_sums``), run rows appended, tallies and kept runs joined.

The functions here are ``SuitePartial``'s methods (bound in its class body, ``partials``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

from ..report.scorecard import AGREEMENT_CELLS
from .accumulate import EFFICIENCY_FIELDS
from .case_sums import _numpy

if TYPE_CHECKING:
    from .partials import SuitePartial

_NO_RUN = (1 << 63) - 1  # a new row's first-run position before its runs are merged in


def _grow(self: SuitePartial, ids: list[str]) -> None:
    """Rows for new cases ``ids`` (their keys already in ``cases``), with no runs yet:
    ``merge`` then adds the other partial's values into them."""
    k = len(ids)
    self.ids.extend(ids)
    self.first.extend(array("q", [_NO_RUN]) * k)
    zeros = array("i", [0]) * k
    for col in (self.n_runs, self.n_succ, self.rec_n, self.rec_succ):
        col.extend(zeros)
    self.rec_first.extend(array("q", [-1]) * k)
    self.hashes.extend(array("Q", [0]) * k)
    for s in (self.f1, self.comp, self.ords, self.lf, self.nf):
        s.grow(k)


def _merge_columns(self: SuitePartial, np: Any, other: SuitePartial, rows: array[int]) -> None:
    """``merge``'s per-case columns in whole columns: other's row j into row rows[j]
    (distinct rows): first run, runs, successes, recorded counts, 16-hex hashes."""
    r = np.frombuffer(rows, dtype=np.int32).astype(np.intp)
    first = np.frombuffer(self.first, dtype=np.int64)
    first[r] = np.minimum(first[r], np.frombuffer(other.first, dtype=np.int64))
    for mine, theirs in ((self.n_runs, other.n_runs), (self.n_succ, other.n_succ)):
        np.frombuffer(mine, dtype=np.int32)[r] += np.frombuffer(theirs, dtype=np.int32)
    orn = np.frombuffer(other.rec_n, dtype=np.int32)
    m = orn != 0
    if m.any():
        rr = r[m]
        rec_n = np.frombuffer(self.rec_n, dtype=np.int32)
        rec_first = np.frombuffer(self.rec_first, dtype=np.int64)
        of = np.frombuffer(other.rec_first, dtype=np.int64)[m]
        take = (rec_n[rr] == 0) | (of < rec_first[rr])
        rec_first[rr[take]] = of[take]
        rec_n[rr] += orn[m]
        np.frombuffer(self.rec_succ, dtype=np.int32)[rr] += np.frombuffer(
            other.rec_succ, dtype=np.int32)[m]
    hashes = np.frombuffer(self.hashes, dtype=np.uint64)
    oh = np.frombuffer(other.hashes, dtype=np.uint64)
    cand = (hashes[r] == 0) & (oh != 0)  # the first hash given is kept (as x or y)
    idx, val = r[cand], oh[cand]
    if self.hash_odd and idx.size:
        keep = ~np.isin(idx, np.fromiter(self.hash_odd, dtype=np.intp))
        idx, val = idx[keep], val[keep]
    hashes[idx] = val


def merge(self: SuitePartial, other: SuitePartial) -> SuitePartial:
    """Fold ``other`` into this partial (in place) and return it. Associative and
    commutative up to the scorecard it finalizes to."""
    self._sync()
    other._sync()
    self.n += other.n
    self.succ += other.succ
    self.forbidden += other.forbidden
    self.dup += other.dup
    self.forbidden_applies = self.forbidden_applies or other.forbidden_applies
    self.gated += other.gated
    self.gated_pass += other.gated_pass
    self.fault += other.fault
    self.false_success += other.false_success
    # other's case rows -> this partial's rows (new cases appended, empty)
    got: list[Any] = list(map(self.cases.get, other.ids))  # one C loop; new cases below
    new: list[str] = []
    if None in got:
        n0 = len(self.ids)
        for j, i in enumerate(got):
            if i is None:
                cid = other.ids[j]
                got[j] = self.cases[cid] = n0 + len(new)
                new.append(cid)
    rows = array("i", got)
    del got
    if new:
        _grow(self, new)
    np = _numpy()
    if np is not None:
        _merge_columns(self, np, other, rows)
    else:
        for j, i in enumerate(rows):
            of = other.first[j]
            if of < self.first[i]:
                self.first[i] = of
            self.n_runs[i] += other.n_runs[j]
            self.n_succ[i] += other.n_succ[j]
            on = other.rec_n[j]
            if on:
                if not self.rec_n[i] or other.rec_first[j] < self.rec_first[i]:
                    self.rec_first[i] = other.rec_first[j]
                self.rec_n[i] += on
                self.rec_succ[i] += other.rec_succ[j]
            if other.hashes[j]:
                self._set_hash(i, other.case_hash(j))
    for j, h in other.hash_odd.items():
        self._set_hash(rows[j], h)
    for mine, theirs in ((self.f1, other.f1), (self.comp, other.comp), (self.ords, other.ords),
                         (self.lf, other.lf), (self.nf, other.nf)):
        mine.merge(theirs, rows)
    base = len(self.run_case)
    if np is not None:
        self.run_case.frombytes(np.frombuffer(rows, dtype=np.int32)[
            np.frombuffer(other.run_case, dtype=np.int32)].tobytes())
    else:
        self.run_case.extend(array("i", [rows[k] for k in other.run_case]))
    self.run_seq.extend(other.run_seq)
    self.run_trial.extend(other.run_trial)
    for j, rid in other.run_odd.items():
        self.run_odd[base + j] = rid
    for f in EFFICIENCY_FIELDS:
        self.eff_values[f].extend(other.eff_values[f])
    self.n_eff_success += other.n_eff_success
    if self.cost is not None and other.cost is not None:
        self.cost.merge(other.cost)
    else:
        self.cost = None
    cells = self.confusion
    for pair, v in other.confusion.items():
        cells[pair] = cells.get(pair, 0) + v
    for tally, otally in ((self.n_expected, other.n_expected), (self.n_called, other.n_called)):
        for name, v in otally.items():
            tally[name] = tally.get(name, 0) + v
    self.routes.extend(other.routes)
    self.rec_count += other.rec_count
    for k, v in other.rec_matrix.items():
        self.rec_matrix[k] += v
    self.rec_sum.merge(other.rec_sum)
    self.disagreements.extend(other.disagreements)
    for gk, (first, n, succ) in other.rec_groups.items():
        g = self.rec_groups.get(gk)
        if g is None:
            self.rec_groups[gk] = [first, n, succ]
        else:
            g[0], g[1], g[2] = min(g[0], first), g[1] + n, g[2] + succ
    for ck, (first, n, succ) in other.categories.items():
        g = self.categories.setdefault(ck, [first, 0, 0])
        g[0], g[1], g[2] = min(g[0], first), g[1] + n, g[2] + succ
    for name, (om, od) in other.checks.items():
        matrix, dis = self.checks.setdefault(name, (dict.fromkeys(AGREEMENT_CELLS, 0), []))
        for k, v in om.items():
            matrix[k] += v
        dis.extend(od)
    if self.keep_runs is None or other.keep_runs is None:
        self.keep_runs = None if (self.keep_runs is None and other.keep_runs is None) else (
            self.keep_runs if other.keep_runs is None else other.keep_runs)
        self._bar = None
    self.kept.extend(other.kept)
    self.n_kept_shown += other.n_kept_shown
    self._trim()
    return self
