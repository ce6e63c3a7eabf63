"""Mergeable aggregation: per-run results into partial aggregates, partials into a scorecard.

This is the third stage of a suite evaluation (reading -> per-run scoring -> mergeable
aggregation -> reporting). It never scores a run: it takes ``RunResult``s (from
``trajcheck.score.scoring``) and keeps only what the suite figures need, in a ``SuitePartial``
that merges associatively and commutatively with another partial:

- per case: runs, successes (pass^k / pass@k need only these (n, c) pairs), exact sums and
  counts of F1, composite and ordering accuracy (a per-case mean needs nothing else), the
  source's recorded successes, the run ids;
- per suite: counts for every rate, the successful runs' efficiency figures (exact
  percentiles need the values: 8 bytes per successful run and figure), the exact total
  cost, tool-confusion cell counts, routing pairs, recorded-reward agreement counts and
  the disagreeing runs;
- the runs a report shows: every run (``keep_runs=None``), or up to ``keep_runs`` of them,
  failing runs first, in input order.

Every run carries a sequence number (its position in the input); a merged partial orders
cases by their first run and runs by their number, so any split of the input into batches,
merged in any grouping, gives the same scorecard as one pass over it (the bootstrap over
cases depends on the case order). Sums are exact (``case_sums``: two floats a case, or
Shewchuk's non-overlapping partials when two cannot hold it), so a merged sum rounds to
``math.fsum`` over all values.

Cases are rows of columns (``array``), not objects: a quarter of a million cases cost about
130 bytes each, and a partial pickles as a few flat buffers.

``finalize`` turns a partial into a ``Scorecard``; its figures are defined in
``trajcheck.score.suite.score_runs`` (DESIGN.md "Semantics", "Policies", "Intervals").
"""

from __future__ import annotations

import math
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import chain, repeat
from typing import Any

from ..errors import MetricInputError
from ..report.scorecard import (
    AGREEMENT_CELLS,
    CaseResult,
    CheckAgreement,
    Disagreement,
    Estimate,
    RecordedReward,
    RunResult,
    Scorecard,
    SuiteMetrics,
    _r,
    _usd,
    fmt_num,
)
from .case_sums import CaseSums, RunningSum, _numpy, exact_add

DEFAULT_SEED = 0
DEFAULT_BOOTSTRAP = 2000
SUCCESS_TOL = 1e-6  # a recorded reward counts as success when within this of 1 (tau-bench rule)
NONE_LABEL = "(none)"
ROUTE_NONE = "(none)"
EFFICIENCY_FIELDS = ("steps", "tool_calls", "tokens", "cost_usd", "latency_ms")
_MAX_FLOAT = 1.7976931348623157e308
_RUN_FIELD = {"steps": "steps", "tool_calls": "n_calls", "tokens": "tokens",
              "cost_usd": "cost_usd", "latency_ms": "latency_ms"}
_NO_RUN = (1 << 63) - 1  # a new row's first-run position before its runs are merged in
_I64 = 1 << 63  # trial numbers in [-2**63, 2**63) fit the run columns
_FLUSH_MASK = (1 << 13) - 1  # queued per-case values are added every 8,192 runs
_EMPTY: dict[str, Any] = {}


def _count_py(tally: dict[Any, int], items: Iterable[Any]) -> None:
    for x in items:
        tally[x] = tally.get(x, 0) + 1


try:  # the C helper behind Counter.update: tally[x] = tally.get(x, 0) + 1 for each x
    from collections import _count_elements as _count  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python implementation
    _count = _count_py


# --------------------------------------------------------------------------- partials


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
                          mean_f1=_r(p.f1.total(i) / n_f1) if n_f1 else None,
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
        with np.errstate(all="ignore"):
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
        count, total = p.f1.count, p.f1.total
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
                        "mean_f1": _r(total(i) / n) if n else None,
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


class SuitePartial:
    """A mergeable partial aggregate of scored runs (module docstring).

    ``keep_runs``: None keeps every ``RunResult`` (the scorecard lists every run, as
    ``score_runs`` always did); an int keeps at most that many, failing runs (task failures
    and composite-gate failures) before passing ones, each group in input order -- a bounded
    memory for any number of runs. ``add`` takes runs in any order, each with its position
    in the input (``seq``; default: the number of runs added so far, right for one pass);
    ``merge`` folds another partial in. Picklable (engines ship partials between workers).

    Layout: cases are rows of columns (``array``s), not objects: ``cases`` maps a case id
    to its row and ``ids`` a row to its id; per row the first run's position, runs,
    successes, the exact sums of five run figures (``case_sums.CaseSums``), the recorded
    successes and the case hash. Each run adds a row to the run columns (its case row,
    position and trial number; a run id not of the usual ``"<case id>-<trial>"`` form is
    kept in ``run_odd``). About 130 bytes a case and 20 a run.
    """

    def __init__(self, keep_runs: int | None = None) -> None:
        if keep_runs is not None and (isinstance(keep_runs, bool) or not isinstance(keep_runs, int)
                                      or keep_runs < 0):
            raise MetricInputError(f"keep_runs must be None or an int >= 0, got {keep_runs!r}")
        self.keep_runs = keep_runs
        self.n = 0
        self.succ = 0
        self.forbidden = 0
        self.dup = 0
        self.forbidden_applies = False
        self.gated = 0
        self.gated_pass = 0
        self.fault = 0
        self.false_success = 0
        # per case (row i): see the class docstring
        self.cases: dict[str, int] = {}
        self.ids: list[str] = []
        self.first = array("q")
        self.n_runs = array("i")
        self.n_succ = array("i")
        # exact sums of F1, composite, ordering accuracy, lcs_f1 and name_f1
        # (metrics.trajectory_scores), with their counts
        self.f1, self.comp, self.ords, self.lf, self.nf = (CaseSums() for _ in range(5))
        # runs whose F1, composite, lcs_f1 and name_f1 are all floats: the case row and the
        # four values, queued together and spread into the sums' queues by _sync
        self._q4_rows = array("i")
        self._q4_x = array("d")
        self.rec_first = array("q")
        self.rec_n = array("i")
        self.rec_succ = array("i")
        # the case definition's hash (fingerprint.case_hash: 16 hex digits) as its 64-bit
        # value, 0 while unknown; a hash of another form (or all zeros) in ``hash_odd``
        self.hashes = array("Q")
        self.hash_odd: dict[int, str] = {}
        # per run (row j): its case row, input position and trial; other run ids by row
        self.run_case = array("i")
        self.run_seq = array("q")
        self.run_trial = array("q")
        self.run_odd: dict[int, str] = {}
        # efficiency: successful runs' figures; exact total cost of all runs (None: some run has none)
        self.eff_values: dict[str, array[float]] = {f: array("d") for f in EFFICIENCY_FIELDS}
        self.n_eff_success = 0
        self.cost: RunningSum | None = RunningSum()
        # tool confusion: matched (expected, called) pairs, and every expected and called
        # tool name counted; a tool's missed calls are its expected ones less its matched
        # ones (RunResult.matched pairs are drawn from the run's own expected and called
        # tools), its extra calls likewise
        self.confusion: dict[tuple[str, str], int] = {}
        self.n_expected: dict[str, int] = {}
        self.n_called: dict[str, int] = {}
        self.routes: list[tuple[int, str, str, Any, Any]] = []  # (seq, case, run, expected, taken)
        self.rec_count = 0
        self.rec_matrix: dict[str, int] = dict.fromkeys(AGREEMENT_CELLS, 0)
        self.rec_sum = RunningSum()
        self.disagreements: list[tuple[int, Disagreement]] = []
        # the source's own pass^k groups: group -> [first seq, runs, successes]
        self.rec_groups: dict[str, list[int]] = {}
        # recorded checks (db_match, r_actions): name -> (matrix, [(seq, Disagreement)])
        self.checks: dict[str, tuple[dict[str, int], list[tuple[int, Disagreement]]]] = {}
        # runs and successes per case category: category -> [first seq, runs, successes]
        self.categories: dict[str, list[int]] = {}
        self.kept: list[tuple[int, RunResult]] = []
        self.n_kept_shown = 0  # failing runs among the kept ones
        # after a trim to exactly keep_runs runs: the sort key of the last one kept; a run
        # whose key is above it can never be shown, so it is not held at all
        self._bar: tuple[bool, int] | None = None

    # ----------------------------------------------------------------- cases

    def _new_case(self, cid: str, first: int) -> int:
        i = len(self.ids)
        cid = sys.intern(cid) if type(cid) is str else cid  # the case store's key, not a copy
        self.cases[cid] = i
        self.ids.append(cid)
        self.first.append(first)
        self.n_runs.append(0)
        self.n_succ.append(0)
        # the per-case sums get their rows when the queued values are added (_sync)
        self.rec_first.append(-1)
        self.rec_n.append(0)
        self.rec_succ.append(0)
        self.hashes.append(0)
        return i

    def _grow(self, ids: list[str]) -> None:
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

    def _merge_columns(self, np: Any, other: SuitePartial, rows: array[int]) -> None:
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

    def _set_hash(self, i: int, h: Any) -> None:
        """Case row ``i``'s hash, when it has none yet and ``h`` is one (as ``x or h``)."""
        if not h or self.hashes[i] or i in self.hash_odd:
            return
        if type(h) is str and len(h) == 16:
            try:
                v = int(h, 16)
            except ValueError:
                v = 0
            if v and f"{v:016x}" == h:
                self.hashes[i] = v
                return
        self.hash_odd[i] = h

    def case_hash(self, i: int) -> str | None:
        """Case row ``i``'s definition hash (None when no run gave one)."""
        v = self.hashes[i]
        return f"{v:016x}" if v else self.hash_odd.get(i)

    def runs_by_case(self) -> tuple[Sequence[int], Sequence[int]]:
        """Run rows grouped by case row, each group in input order, and where each group
        starts: case row ``i``'s runs are ``runs[start[i]:start[i + 1]]``."""
        n_cases = len(self.ids)
        np: Any = None
        try:
            import numpy as np
        except ImportError:  # pragma: no cover - the 'scale' extra installs numpy
            pass
        if np is not None and len(self.run_case):
            seq = np.frombuffer(self.run_seq, dtype=np.int64)
            case = np.frombuffer(self.run_case, dtype=np.int32)
            if bool((seq[1:] >= seq[:-1]).all()):  # added in input order (one pass): as is
                runs = np.argsort(case, kind="stable")
            else:
                by_seq = np.argsort(seq, kind="stable")
                runs = by_seq[np.argsort(case[by_seq], kind="stable")]
            start = np.zeros(n_cases + 1, dtype=np.int64)
            np.cumsum(np.bincount(case, minlength=n_cases), out=start[1:])
            return array("q", runs.tobytes()), array("q", start.tobytes())
        groups: list[list[int]] = [[] for _ in range(n_cases)]
        seqs, case_of = self.run_seq, self.run_case
        for j in sorted(range(len(seqs)), key=seqs.__getitem__):
            groups[case_of[j]].append(j)
        start_l = [0]
        for g in groups:
            start_l.append(start_l[-1] + len(g))
        return array("q", [j for g in groups for j in g]), array("q", start_l)

    # ----------------------------------------------------------------- adding runs

    def add(self, r: RunResult, seq: int | None = None) -> None:
        """Fold one scored run in. Raises ``MetricInputError`` naming the run for a negative
        or non-finite efficiency figure (as ``metrics.efficiency.efficiency_summary``)."""
        if seq is None:
            seq = self.n
        steps, n_calls, tokens, cost, latency = r.steps, r.n_calls, r.tokens, r.cost_usd, r.latency_ms
        # the usual figures: None, or an int / float in [0, max float] (NaN fails the test)
        if not ((steps is None or ((type(steps) is int or type(steps) is float) and 0 <= steps <= _MAX_FLOAT))
                and (n_calls is None or ((type(n_calls) is int or type(n_calls) is float)
                                         and 0 <= n_calls <= _MAX_FLOAT))
                and (tokens is None or ((type(tokens) is int or type(tokens) is float)
                                        and 0 <= tokens <= _MAX_FLOAT))
                and (cost is None or ((type(cost) is float or type(cost) is int) and 0 <= cost <= _MAX_FLOAT))
                and (latency is None or ((type(latency) is float or type(latency) is int)
                                         and 0 <= latency <= _MAX_FLOAT))):
            self._figure_error(r, seq)
        success = r.success
        self.n += 1
        self.succ += success
        cid = r.case_id
        i = self.cases.get(cid)
        if i is None:
            i = self._new_case(cid, seq)
        elif seq < self.first[i]:
            self.first[i] = seq
        self.n_runs[i] += 1
        if success:
            self.n_succ[i] += 1
        # the run's row: trial number alone for the usual id "<case id>-<trial>"
        rid, trial = r.run_id, r.trial
        j = len(self.run_case)
        self.run_case.append(i)
        self.run_seq.append(seq)
        if type(trial) is int and -_I64 <= trial < _I64 and rid == f"{cid}-{trial}":
            self.run_trial.append(trial)
        else:
            self.run_trial.append(0)
            self.run_odd[j] = rid
        if not self.hashes[i]:
            self._set_hash(i, r.case_hash)
        # per-case sums: queued, added in whole columns every _FLUSH runs (case_sums.flush);
        # the usual run's four floats queued together, the rest figure by figure (in order)
        f1, x, lf, nf = r.f1, r.composite, r.lcs_f1, r.name_f1
        if type(f1) is float and type(x) is float and type(lf) is float and type(nf) is float:
            self._q4_rows.append(i)
            self._q4_x.extend((f1, x, lf, nf))
        else:
            self._add_sums(i, r)
        if not self.n & _FLUSH_MASK:
            self._sync()
        # flags from the metric dicts (a compact RunResult keeps just these keys)
        m = r.metrics
        o = m.get("ordering")
        if o:
            x = o.get("score")
            if isinstance(x, (int, float)):
                s = self.ords
                s.pend_rows.append(i)
                s.pend_x.append(float(x))
        o = m.get("call_rates")
        parts = o.get("parts") if o else None
        if ((parts and parts.get("forbidden"))
                or (m.get("forbidden_sequences") or _EMPTY).get("passed") is False):
            self.forbidden += 1
        if parts and parts.get("duplicate"):
            self.dup += 1
        if r.forbidden_checked is not False:
            self.forbidden_applies = True
        x = r.composite_passed
        if x is not None:
            self.gated += 1
            self.gated_pass += bool(x)
        if r.fault_run:
            self.fault += 1
            self.false_success += bool(r.false_success)
        # efficiency (DESIGN: over successful runs; total cost over all)
        if success:
            self.n_eff_success += 1
            ev = self.eff_values
            if steps is not None:
                ev["steps"].append(steps)
            if n_calls is not None:
                ev["tool_calls"].append(n_calls)
            if tokens is not None:
                ev["tokens"].append(tokens)
            if cost is not None:
                ev["cost_usd"].append(cost)
            if latency is not None:
                ev["latency_ms"].append(latency)
        c = self.cost
        if c is not None:
            if cost is None:
                self.cost = None
            else:  # c.add(cost), inlined
                c.buf.append(cost)
                if len(c.buf) >= c.BUFFER:
                    c._fold()
        _count(self.confusion, r.matched)
        _count(self.n_expected, r.expected_tools)
        _count(self.n_called, r.called_tools)
        if r.expected_route is not None:
            self.routes.append((seq, cid, rid, r.expected_route, r.route))
        if r.recorded_reward is not None:
            self._add_recorded(r, i, seq)
        if r.recorded_checks:
            self._add_checks(r, seq)
        if r.category is not None:
            g = self.categories.setdefault(r.category, [seq, 0, 0])
            g[0], g[1], g[2] = min(g[0], seq), g[1] + 1, g[2] + success
        # self._keep(r, seq), the test for a run never shown inlined
        bar = self._bar
        if bar is not None and self.keep_runs is not None and (
                (not (not success or r.composite_passed is False), seq) > bar):
            return
        self._keep(r, seq)

    def _add_sums(self, i: int, r: RunResult) -> None:
        """Queue run ``r``'s figures for the per-case sums of row ``i`` figure by figure
        (a figure may be None or not a float), after the runs queued together before it."""
        self._spread_q4()
        for s, x in ((self.f1, r.f1), (self.comp, r.composite), (self.lf, r.lcs_f1),
                     (self.nf, r.name_f1)):
            if x is not None:
                s.pend_rows.append(i)
                s.pend_x.append(x if type(x) is float else float(x))

    def _spread_q4(self) -> None:
        """Move the runs queued with all four figures into each figure's queue, in order."""
        rows, xs = self._q4_rows, self._q4_x
        if rows:
            for k, s in enumerate((self.f1, self.comp, self.lf, self.nf)):
                s.pend_rows.extend(rows)
                s.pend_x.extend(xs[k::4])
            self._q4_rows, self._q4_x = array("i"), array("d")

    def _sync(self) -> None:
        """Bring the per-case sums ``add`` defers up to date: their rows for new cases and
        their queued values (``CaseSums.flush``). Called every 8,192 runs and before
        anything reads or merges them."""
        self._spread_q4()
        n_cases = len(self.ids)
        for s in (self.f1, self.comp, self.ords, self.lf, self.nf):
            k = n_cases - len(s.count)
            if k:
                s.grow(k)
            s.flush()

    def _figure_error(self, r: RunResult, seq: int) -> None:
        for f, attr in _RUN_FIELD.items():
            v = getattr(r, attr)
            if v is None:
                continue
            where = f"run {seq} (id {r.run_id!r}, task {r.case_id!r})"
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MetricInputError(f"{where}: {f} must be a number, got {v!r}")
            if math.isnan(v):
                raise MetricInputError(f"{where}: {f} is NaN")
            if not math.isfinite(v) or v < 0:
                raise MetricInputError(f"{where}: {f} must be finite and >= 0, got {v!r}")

    def _add_recorded(self, r: RunResult, i: int, seq: int) -> None:
        rec = abs(float(r.recorded_reward or 0) - 1.0) <= SUCCESS_TOL
        if not self.rec_n[i] or seq < self.rec_first[i]:
            self.rec_first[i] = seq
        self.rec_n[i] += 1
        self.rec_succ[i] += rec
        self.rec_count += 1
        self.rec_sum.add(float(r.recorded_reward or 0))
        g = self.rec_groups.get(r.recorded_group or r.case_id)
        if g is None:
            self.rec_groups[r.recorded_group or r.case_id] = [seq, 1, int(rec)]
        else:
            g[0], g[1], g[2] = min(g[0], seq), g[1] + 1, g[2] + rec
        key = f"ours_{'pass' if r.success else 'fail'}_recorded_{'pass' if rec else 'fail'}"
        self.rec_matrix[key] += 1
        if rec != r.success:
            why = r.outcome_reason if r.success else (r.failure_reason or r.outcome_reason)
            reason = (f"trajcheck {'pass' if r.success else 'fail'}: {why or '(no reason given)'}"
                      f"; recorded reward {fmt_num(r.recorded_reward)}")
            self.disagreements.append(
                (seq, Disagreement(r.run_id, r.case_id, r.trial, r.success, rec, reason)))

    def _add_checks(self, r: RunResult, seq: int) -> None:
        """Agreement of trajcheck's verdict on the writes with each verdict the source records
        (``RunResult.recorded_checks``), with every disagreement and both sides' verdicts."""
        for name, v in (r.recorded_checks or {}).items():
            matrix, dis = self.checks.setdefault(name, (dict.fromkeys(AGREEMENT_CELLS, 0), []))
            ours, rec = bool(v.get("ours")), bool(v.get("recorded"))
            matrix[f"ours_{'pass' if ours else 'fail'}_recorded_{'pass' if rec else 'fail'}"] += 1
            if ours != rec:
                reason = (f"trajcheck writes {'right' if ours else 'wrong'}: "
                          f"{v.get('reason') or '(no reason given)'}; recorded {name} {rec}")
                dis.append((seq, Disagreement(r.run_id, r.case_id, r.trial, ours, rec, reason)))

    @staticmethod
    def _shown_first(r: RunResult) -> bool:
        return not r.success or r.composite_passed is False

    def wants(self, r: RunResult) -> bool:
        """Whether the next run added in a single pass (positions increasing) would be kept
        for reports: scorers then give it in full (transcript, call table), others compact."""
        cap = self.keep_runs
        if cap is None or len(self.kept) < cap:
            return True
        return self._shown_first(r) and self.n_kept_shown < cap

    def _keep(self, r: RunResult, seq: int) -> None:
        shown = not r.success or r.composite_passed is False
        cap = self.keep_runs
        if cap is not None:
            bar = self._bar
            if bar is not None and (not shown, seq) > bar:
                return  # behind keep_runs runs already kept: never shown
        self.n_kept_shown += shown
        self.kept.append((seq, r))
        if cap is not None and len(self.kept) > max(2 * cap, 64):
            self._trim()  # amortised: at most ~2x the cap is ever held

    def _trim(self) -> None:
        """Keep the ``keep_runs`` runs a report shows first: failing before passing, each
        group by input position."""
        cap = self.keep_runs
        if cap is None or len(self.kept) < cap:
            return
        if len(self.kept) > cap:
            self.kept.sort(key=lambda sr: (not self._shown_first(sr[1]), sr[0]))
            del self.kept[cap:]
            self.n_kept_shown = sum(self._shown_first(r) for _, r in self.kept)
        if cap:
            seq, r = self.kept[-1]
            self._bar = (not self._shown_first(r), seq)
        else:
            self._bar = (False, -_I64 - 1)  # below every run's key: none is held

    # ----------------------------------------------------------------- merging

    def merge(self, other: SuitePartial) -> SuitePartial:
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
            self._grow(new)
        np = _numpy()
        if np is not None:
            self._merge_columns(np, other, rows)
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

    def __getstate__(self) -> dict[str, Any]:
        self._sync()
        st = dict(self.__dict__)
        st.pop("cases", None)  # rebuilt from ``ids``
        return st

    def __setstate__(self, st: dict[str, Any]) -> None:
        self.__dict__.update(st)
        ids = self.ids
        self.ids = (list(map(sys.intern, ids)) if set(map(type, ids)) <= {str}
                    else [sys.intern(c) if type(c) is str else c for c in ids])
        # ``cases`` is built when first read (__getattr__): a partial unpickled to be
        # merged into another never reads its own

    def __getattr__(self, name: str) -> Any:
        if name != "cases" or "ids" not in self.__dict__:
            raise AttributeError(name)
        self.cases = dict(zip(self.ids, range(len(self.ids))))
        return self.cases

    # ----------------------------------------------------------------- finalizing

    def case_order(self) -> list[int]:
        """Case rows in the order of their first run in the input."""
        return sorted(range(len(self.ids)), key=self.first.__getitem__)

    def finalize(self, *, ks: Sequence[int] | None = None, seed: int = DEFAULT_SEED,
                 n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
                 problems: Iterable[str] = (), meta: Mapping[str, Any] | None = None,
                 route_floors: Mapping[Any, float] | None = None) -> Scorecard:
        """The ``Scorecard`` of every run folded in (definitions: ``suite.score_runs``).
        Raises ``MetricInputError`` for an empty partial, ``KTooLargeError`` for a k above
        some case's runs, and ``MetricInputError`` for an unusable route."""
        if not self.n:
            raise MetricInputError("empty suite: no runs to score")
        self._sync()
        order = self.case_order()
        ns = array("i", [self.n_runs[i] for i in order])
        cs = array("i", [self.n_succ[i] for i in order])
        kk = _ks(ns, lambda t: self.ids[order[t]], ks)
        # every bootstrap figure is asked for first, then all are computed from one set of
        # resampling indices per replicate (metrics.resample; identical to one draw each)
        iv = _Intervals()
        kcurve = _kcurves(ns, cs, kk, iv)
        del ns, cs
        means = [iv.add(s.means(order)) for s in (self.f1, self.comp, self.ords, self.lf, self.nf)]
        recorded = self._recorded_columns(kk, iv)
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
            efficiency=self._efficiency(),
            routing=self._routing(route_floors),
            tool_confusion=self._tool_confusion(),
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

    def _tool_confusion(self) -> dict[str, Any]:
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

    def _recorded_columns(self, ks: Sequence[int], iv: _Intervals) -> Callable[[], RecordedReward | None]:
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
                n=self.rec_count, mean=_r(self.rec_sum.total() / self.rec_count), pass_hat_k=ph,
                pass_hat_k_ci=phc, matrix=matrix,
                agree=matrix["ours_pass_recorded_pass"] + matrix["ours_fail_recorded_fail"],
                disagreements=dis, checks=checks)
        return done

    def _efficiency(self) -> dict[str, Any]:
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

    def _routing(self, floors: Mapping[Any, float] | None = None) -> dict[str, Any] | None:
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


def aggregate(results: Iterable[RunResult], *, keep_runs: int | None = None) -> SuitePartial:
    """A ``SuitePartial`` of ``results`` in the given order (positions 0, 1, ...)."""
    p = SuitePartial(keep_runs=keep_runs)
    for r in results:
        p.add(r)
    return p


def merge_partials(partials: Iterable[SuitePartial]) -> SuitePartial:
    """One partial holding all of ``partials`` (merged left to right into a fresh one).
    Raises ``MetricInputError`` when ``partials`` is empty."""
    out: SuitePartial | None = None
    for p in partials:
        if out is None:
            out = SuitePartial(keep_runs=p.keep_runs)
        out.merge(p)
    if out is None:
        raise MetricInputError("no partial aggregates to merge")
    return out


# --------------------------------------------------------------------------- suite figures


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
    from ..metrics.reliability import pass_at_k, pass_hat_k

    ph: dict[int, float] = {}
    pa: dict[int, float] = {}
    cols: dict[int, tuple[int | None, int | None]] = {}
    groups = Counter(zip(cs, ns))  # tasks with the same (c, n): same values
    n_tasks = len(ns)
    column = _group_columns(cs, ns, list(groups))
    for k in ks:
        ph[k] = _r(_task_mean(groups, n_tasks, k, hat=True)) or 0.0
        pa[k] = _r(_task_mean(groups, n_tasks, k, hat=False)) or 0.0
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


def _task_mean(groups: Mapping[tuple[int, int], int], n_tasks: int, k: int, *, hat: bool) -> float:
    """``metrics.reliability.pass_hat_k`` (``hat``) or ``pass_at_k`` of tasks given as
    ``{(c, n): number of tasks}``: the same exact sum of fractions over the tasks (each
    distinct (c, n) taken once, times its number of tasks), rounded once -- so the very
    float those functions return, in time linear in the distinct (c, n) pairs instead of
    the tasks. ``k`` <= every n (checked by the caller)."""
    total = Fraction(0)
    for (c, n), m in groups.items():
        whole = math.comb(n, k)
        total += Fraction(m * (math.comb(c, k) if hat else whole - math.comb(n - c, k)), whole)
    return float(total / n_tasks)


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


__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SEED",
    "NONE_LABEL",
    "ROUTE_NONE",
    "SUCCESS_TOL",
    "KTooLargeError",
    "SuitePartial",
    "aggregate",
    "exact_add",
    "merge_partials",
]
