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

import sys
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import MetricInputError
from ..report.scorecard import AGREEMENT_CELLS, Disagreement, RunResult
from . import accumulate
from . import finalize as finalize_
from . import merge as merge_
from .accumulate import EFFICIENCY_FIELDS, SUCCESS_TOL
from .case_rows import CaseRows
from .case_sums import CaseSums, RunningSum, exact_add
from .finalize import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    KTooLargeError,
    _group_columns,
    _rate,
)
from .suite_blocks import NONE_LABEL, ROUTE_NONE, _sorted_values


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

    # adding runs (accumulate), merging (merge), finalizing (finalize): their functions bound
    # as methods here
    add = accumulate.add
    wants = accumulate.wants
    _sync = accumulate._sync
    _trim = accumulate._trim
    merge = merge_.merge
    case_order = finalize_.case_order
    finalize = finalize_.finalize

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
        except ImportError:  # pragma: no cover - numpy is a core dependency
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

    # ----------------------------------------------------------------- pickling

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

    def __getattr__(self, name: str) -> Any:
        if name != "cases" or "ids" not in self.__dict__:
            raise AttributeError(name)
        self.cases = dict(zip(self.ids, range(len(self.ids))))
        return self.cases


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


__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SEED",
    "EFFICIENCY_FIELDS",
    "NONE_LABEL",
    "ROUTE_NONE",
    "SUCCESS_TOL",
    "CaseRows",
    "KTooLargeError",
    "SuitePartial",
    "_group_columns",
    "_rate",
    "_sorted_values",
    "aggregate",
    "exact_add",
    "merge_partials",
]
