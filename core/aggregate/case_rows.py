"""A scorecard's case rows read from a ``SuitePartial``'s columns (``CaseRows``): each
``CaseResult`` built when it is read, and the scorecard JSON's row dicts built straight from
the columns (``CaseRows.json_rows``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

from ..report.scorecard import CaseResult, _r
from .case_sums import _numpy

if TYPE_CHECKING:
    from .partials import SuitePartial


class CaseRows(Sequence[CaseResult]):
    """A scorecard's case rows (``CaseResult``), each built when it is read from the
    partial's columns: a quarter of a million rows with their run ids would otherwise be
    held at once (about 1 KB a case) while the scorecard is written a row at a time.
    Behaves as the tuple of those rows: indexing, slices (tuples), ``len``, iteration,
    equality with any sequence of the same rows, hashing and pickling (as a tuple)."""

    __slots__ = ("_order", "_part", "_runs", "_start")

    def __init__(self, part: SuitePartial, order: Sequence[int]) -> None:
        self._part = part
        self._order = order  # case rows, in the order of their first run
        self._runs, self._start = part.runs_by_case()

    def _row(self, i: int) -> CaseResult:
        p = self._part
        cid = p.ids[i]
        n_f1 = p.f1.count[i]
        rec = p.rec_n[i]
        return CaseResult(case_id=cid, trials=p.n_runs[i], successes=p.n_succ[i],
                          mean_f1=_r(p.f1.mean(i)) if n_f1 else None,
                          recorded_successes=p.rec_succ[i] if rec else None,
                          run_ids=self._run_ids(i, cid), case_hash=p.case_hash(i))

    def _run_ids(self, i: int, cid: str) -> tuple[str, ...]:
        p = self._part
        trial, odd = p.run_trial, p.run_odd
        out = []
        for j in self._runs[self._start[i]:self._start[i + 1]]:
            s = odd.get(j) if odd else None
            out.append(f"{cid}-{trial[j]}" if s is None else s)
        return tuple(out)

    def json_rows(self, start: int, stop: int) -> list[dict[str, Any]]:
        """``[row.to_dict() for row in self[start:stop]]``, the same dicts, built straight
        from the partial's columns (no ``CaseResult`` in between): the scorecard JSON is
        written from these. With numpy, the batch's columns are gathered in whole arrays
        and its run ids made in one pass; ``_json_rows_py`` is the plain route."""
        np = _numpy()
        order = self._order[start:stop]
        if np is None or not order:
            return self._json_rows_py(start, stop)
        p = self._part
        o = np.asarray(order, dtype=np.intp)
        first = np.frombuffer(self._start, dtype=np.int64)
        a = first[o]
        lens = first[o + 1] - a
        ends = np.cumsum(lens)
        # the batch's run rows, case by case: each case's range of ``runs`` in turn
        rr = np.frombuffer(self._runs, dtype=np.int64)[np.repeat(a - (ends - lens), lens)
                                                       + np.arange(int(ends[-1]))]
        ids = p.ids
        cids = [ids[i] for i in order]
        trials = np.frombuffer(p.run_trial, dtype=np.int64)[rr].tolist()
        run_ids = [f"{c}-{t}" for c, t in zip(chain.from_iterable(map(repeat, cids, lens.tolist())),
                                              trials)]
        odd = p.run_odd
        if odd:
            for k in np.flatnonzero(np.isin(rr, np.fromiter(odd, dtype=np.int64))).tolist():
                run_ids[k] = odd[int(rr[k])]
        n = np.frombuffer(p.f1.count, dtype=np.int32)[o]
        with np.errstate(all="ignore"):  # CaseSums.mean, elementwise
            mean = p.f1.totals(np, o) / np.where(n != 0, n, 1)
            mean = np.where((n != 0) & np.isfinite(mean), mean + 0.0, np.nan).tolist()  # as _r
        rec = np.frombuffer(p.rec_n, dtype=np.int32)[o].tolist()
        col = np.frombuffer
        hash_odd = p.hash_odd
        out = []
        s = 0
        for i, cid, nr, ns, mf, rn, rs, h, e in zip(
                order, cids, col(p.n_runs, dtype=np.int32)[o].tolist(),
                col(p.n_succ, dtype=np.int32)[o].tolist(), mean, rec,
                col(p.rec_succ, dtype=np.int32)[o].tolist(),
                col(p.hashes, dtype=np.uint64)[o].tolist(), ends.tolist()):
            out.append({"case_id": cid, "trials": nr, "successes": ns,
                        "mean_f1": mf if mf == mf else None,
                        "recorded_successes": rs if rn else None,
                        "run_ids": run_ids[s:e],
                        "case_hash": f"{h:016x}" if h else hash_odd.get(i)})
            s = e
        return out

    def _json_rows_py(self, start: int, stop: int) -> list[dict[str, Any]]:
        """``json_rows`` row by row (without numpy)."""
        p = self._part
        ids, n_runs, n_succ, rec_n, rec_succ = p.ids, p.n_runs, p.n_succ, p.rec_n, p.rec_succ
        count, mean = p.f1.count, p.f1.mean
        hashes, hash_odd = p.hashes, p.hash_odd
        runs, first = self._runs, self._start
        trial, odd = p.run_trial, p.run_odd
        out = []
        for i in self._order[start:stop]:
            cid = ids[i]
            n = count[i]
            if odd:
                run_ids = [f"{cid}-{trial[j]}" if (x := odd.get(j)) is None else x
                           for j in runs[first[i]:first[i + 1]]]
            else:
                run_ids = [f"{cid}-{trial[j]}" for j in runs[first[i]:first[i + 1]]]
            h = hashes[i]
            out.append({"case_id": cid, "trials": n_runs[i], "successes": n_succ[i],
                        "mean_f1": _r(mean(i)) if n else None,
                        "recorded_successes": rec_succ[i] if rec_n[i] else None,
                        "run_ids": run_ids,
                        "case_hash": f"{h:016x}" if h else hash_odd.get(i)})
        return out

    def json_float_keys(self) -> tuple[str, ...] | None:
        """The keys under which ``json_rows``' dicts may hold a float (``("mean_f1",)``) when
        every other value they hold is an exact ``str`` or ``int``, None or a list of exact
        ``str`` -- their keys are exact ``str`` -- so that a JSON writer need only check how
        those floats are spelled (``scorecard._indented_rows``); None when some case id, odd
        run id or odd case hash is not an exact ``str`` (counts are ints from the columns,
        run ids and hashes of the usual forms are formatted strings)."""
        p = self._part
        plain = all(set(map(type, vals)) <= {str}
                    for vals in (p.ids, p.run_odd.values(), p.hash_odd.values()))
        return ("mean_f1",) if plain else None

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(map(self._row, self._order[i]))
        return self._row(self._order[i])

    def __iter__(self) -> Iterator[CaseResult]:
        return map(self._row, self._order)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (CaseRows, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))
