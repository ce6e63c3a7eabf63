"""Mergeable aggregation: per-run results into partial aggregates, partials into a scorecard.

This is the third stage of a suite evaluation (reading -> per-run scoring -> mergeable
aggregation -> reporting). It never scores a run: it takes ``RunResult``s (from
``trajcheck.scoring``) and keeps only what the suite figures need, in a ``SuitePartial``
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
cases depends on the case order). Sums are exact (Shewchuk's non-overlapping partials,
summed with ``math.fsum``), so a merged sum equals ``math.fsum`` over all values.

``finalize`` turns a partial into a ``Scorecard``; its figures are defined in
``trajcheck.suite.score_runs`` (DESIGN.md "Semantics", "Policies", "Intervals").
"""

from __future__ import annotations

import math
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from .errors import MetricInputError
from .scorecard import (
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

DEFAULT_SEED = 0
DEFAULT_BOOTSTRAP = 2000
SUCCESS_TOL = 1e-6  # a recorded reward counts as success when within this of 1 (tau-bench rule)
NONE_LABEL = "(none)"
ROUTE_NONE = "(none)"
EFFICIENCY_FIELDS = ("steps", "tool_calls", "tokens", "cost_usd", "latency_ms")
_MAX_FLOAT = 1.7976931348623157e308
_RUN_FIELD = {"steps": "steps", "tool_calls": "n_calls", "tokens": "tokens",
              "cost_usd": "cost_usd", "latency_ms": "latency_ms"}


# --------------------------------------------------------------------------- exact sums


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


def _merge_sums(a: list[float], b: Iterable[float]) -> None:
    for x in b:
        exact_add(a, x)


# A per-case exact sum (a "Sum") is kept as None (no value yet), a float (its partials are
# one float: the sum is exact so far) or a tuple of partials (``exact_add``'s list, frozen):
# growable lists were most of a case's memory in a quarter of a million cases.


def _sum_add(cur: Any, x: float) -> Any:
    """``cur`` (a ``Sum``) with ``x`` added exactly."""
    if cur is None:
        return x
    parts = [cur] if type(cur) is float else list(cur)
    exact_add(parts, x)
    return parts[0] if len(parts) == 1 else tuple(parts)  # a tuple: no room kept to grow


def _sum_merge(cur: Any, other: Any) -> Any:
    """``cur`` with every partial of ``other`` (both ``Sum``) added exactly."""
    if other is None:
        return cur
    for x in ([other] if type(other) is float else other):
        cur = _sum_add(cur, x)
    return cur


def _sum_total(cur: Any) -> float:
    """The correctly rounded total of a ``Sum`` (``math.fsum`` of its partials)."""
    if cur is None:
        return 0.0
    return cur if type(cur) is float else math.fsum(cur)


# --------------------------------------------------------------------------- partials


def _run_flags(r: RunResult) -> tuple[float | None, bool, bool]:
    """(ordering accuracy or None, forbidden flag, duplicate flag) of one run, read from its
    metric dicts (a compact ``RunResult`` keeps just these keys)."""
    m = r.metrics
    o = (m.get("ordering") or {}).get("score")
    parts = (m.get("call_rates") or {}).get("parts") or {}
    forb = bool(parts.get("forbidden")) or (m.get("forbidden_sequences") or {}).get("passed") is False
    return (float(o) if isinstance(o, (int, float)) else None), forb, bool(parts.get("duplicate"))


class _Case:
    """One case's share of a partial (see the module docstring)."""

    __slots__ = ("first", "n", "succ", "f1", "n_f1", "comp", "n_comp", "ords", "n_ord", "lf", "n_lf", "nf", "n_nf",
                 "rec_first", "rec_n", "rec_succ", "seqs", "ids", "hash")

    def __init__(self, first: int) -> None:
        self.first = first
        self.n = self.succ = self.n_f1 = self.n_comp = self.n_ord = 0
        self.rec_first = -1
        self.rec_n = self.rec_succ = 0
        # exact sums (``Sum``: None, a float or partials) of F1, composite, ordering
        # accuracy, lcs_f1 and name_f1 (metrics.trajectory_scores), with their counts
        self.f1: Any = None
        self.comp: Any = None
        self.ords: Any = None
        self.lf: Any = None
        self.nf: Any = None
        self.n_lf = self.n_nf = 0
        # the runs' positions and ids; an id of the usual form "<case id>-<trial>" is kept as
        # the trial number alone (``run_ids``): a few bytes a run instead of a string and a tuple
        self.seqs = array("q")
        self.ids: list[str | int] = []
        self.hash: str | None = None  # the case definition's hash (fingerprint.case_hash)

    def merge(self, o: _Case) -> None:
        self.first = min(self.first, o.first)
        self.n += o.n
        self.succ += o.succ
        self.f1 = _sum_merge(self.f1, o.f1)
        self.comp = _sum_merge(self.comp, o.comp)
        self.ords = _sum_merge(self.ords, o.ords)
        self.lf = _sum_merge(self.lf, o.lf)
        self.nf = _sum_merge(self.nf, o.nf)
        self.n_lf += o.n_lf
        self.n_nf += o.n_nf
        self.n_f1 += o.n_f1
        self.n_comp += o.n_comp
        self.n_ord += o.n_ord
        if o.rec_n:
            self.rec_first = o.rec_first if not self.rec_n else min(self.rec_first, o.rec_first)
        self.rec_n += o.rec_n
        self.rec_succ += o.rec_succ
        self.seqs.extend(o.seqs)
        self.ids.extend(o.ids)
        self.hash = self.hash or o.hash

    def add_run(self, seq: int, run_id: str, case_id: str, trial: int | None) -> None:
        self.seqs.append(seq)
        short = type(trial) is int and run_id == f"{case_id}-{trial}"
        self.ids.append(trial if short else run_id)  # type: ignore[arg-type]

    def run_ids(self, case_id: str) -> tuple[str, ...]:
        """The run ids in input order."""
        ids = self.ids
        order = sorted(range(len(ids)), key=self.seqs.__getitem__)
        return tuple(x if type(x) is str else f"{case_id}-{x}" for x in (ids[i] for i in order))

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, st: tuple[Any, ...]) -> None:
        for k, v in zip(self.__slots__, st):
            setattr(self, k, v)


class CaseRows(Sequence[CaseResult]):
    """A scorecard's case rows (``CaseResult``), each built when it is read from its case's
    share of the partial: a quarter of a million rows with their run ids would otherwise be
    held at once (about 1 KB a case) while the scorecard is written a row at a time.
    Behaves as the tuple of those rows: indexing, slices (tuples), ``len``, iteration,
    equality with any sequence of the same rows, hashing and pickling (as a tuple)."""

    __slots__ = ("_order",)

    def __init__(self, order: Sequence[tuple[str, _Case]]) -> None:
        self._order = order

    @staticmethod
    def _row(item: tuple[str, _Case]) -> CaseResult:
        cid, c = item
        return CaseResult(case_id=cid, trials=c.n, successes=c.succ,
                          mean_f1=_r(_sum_total(c.f1) / c.n_f1) if c.n_f1 else None,
                          recorded_successes=c.rec_succ if c.rec_n else None,
                          run_ids=c.run_ids(cid), case_hash=c.hash)

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
        self.cases: dict[str, _Case] = {}
        # efficiency: successful runs' figures; exact total cost of all runs (None: some run has none)
        self.eff_values: dict[str, array[float]] = {f: array("d") for f in EFFICIENCY_FIELDS}
        self.n_eff_success = 0
        self.cost: list[float] | None = []
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.tools: set[str] = set()
        self.routes: list[tuple[int, str, str, Any, Any]] = []  # (seq, case, run, expected, taken)
        self.rec_n = 0
        self.rec_matrix: dict[str, int] = dict.fromkeys(AGREEMENT_CELLS, 0)
        self.rec_sum: list[float] = []
        self.disagreements: list[tuple[int, Disagreement]] = []
        # the source's own pass^k groups: group -> [first seq, runs, successes]
        self.rec_groups: dict[str, list[int]] = {}
        # recorded checks (db_match, r_actions): name -> (matrix, [(seq, Disagreement)])
        self.checks: dict[str, tuple[dict[str, int], list[tuple[int, Disagreement]]]] = {}
        # runs and successes per case category: category -> [first seq, runs, successes]
        self.categories: dict[str, list[int]] = {}
        self.kept: list[tuple[int, RunResult]] = []
        self.n_kept_shown = 0  # failing runs among the kept ones

    # ----------------------------------------------------------------- adding runs

    def add(self, r: RunResult, seq: int | None = None) -> None:
        """Fold one scored run in. Raises ``MetricInputError`` naming the run for a negative
        or non-finite efficiency figure (as ``metrics.efficiency.efficiency_summary``)."""
        if seq is None:
            seq = self.n
        self._check_figures(r, seq)
        self.n += 1
        self.succ += r.success
        c = self.cases.get(r.case_id)
        if c is None:  # the id interned: the case store's key string, not one more copy a case
            cid = r.case_id
            c = self.cases[sys.intern(cid) if type(cid) is str else cid] = _Case(seq)
        elif seq < c.first:
            c.first = seq
        c.n += 1
        c.succ += r.success
        c.add_run(seq, r.run_id, r.case_id, r.trial)
        c.hash = c.hash or r.case_hash
        if r.f1 is not None:
            c.f1 = _sum_add(c.f1, float(r.f1))
            c.n_f1 += 1
        if r.composite is not None:
            c.comp = _sum_add(c.comp, float(r.composite))
            c.n_comp += 1
        if r.lcs_f1 is not None:
            c.lf = _sum_add(c.lf, float(r.lcs_f1))
            c.n_lf += 1
        if r.name_f1 is not None:
            c.nf = _sum_add(c.nf, float(r.name_f1))
            c.n_nf += 1
        order, forb, dup = _run_flags(r)
        if order is not None:
            c.ords = _sum_add(c.ords, order)
            c.n_ord += 1
        self.forbidden += forb
        self.dup += dup
        if r.forbidden_checked is not False:
            self.forbidden_applies = True
        if r.composite_passed is not None:
            self.gated += 1
            self.gated_pass += bool(r.composite_passed)
        if r.fault_run:
            self.fault += 1
            self.false_success += bool(r.false_success)
        self._add_efficiency(r)
        self._add_confusion(r)
        if r.expected_route is not None:
            self.routes.append((seq, r.case_id, r.run_id, r.expected_route, r.route))
        if r.recorded_reward is not None:
            self._add_recorded(r, c, seq)
        if r.recorded_checks:
            self._add_checks(r, seq)
        if r.category is not None:
            g = self.categories.setdefault(r.category, [seq, 0, 0])
            g[0], g[1], g[2] = min(g[0], seq), g[1] + 1, g[2] + r.success
        self._keep(r, seq)

    def _check_figures(self, r: RunResult, seq: int) -> None:
        for v in (r.steps, r.n_calls, r.tokens, r.cost_usd, r.latency_ms):
            t = type(v)
            # the usual figure: None, or an int / float in [0, max float] (NaN fails the test)
            if v is not None and not ((t is int or t is float) and 0 <= v <= _MAX_FLOAT):
                break
        else:
            return
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

    def _add_efficiency(self, r: RunResult) -> None:
        if r.success:
            self.n_eff_success += 1
            for f, attr in _RUN_FIELD.items():
                v = getattr(r, attr)
                if v is not None:
                    self.eff_values[f].append(float(v))
        if self.cost is not None:
            if r.cost_usd is None:
                self.cost = None
            else:
                exact_add(self.cost, float(r.cost_usd))

    def _add_confusion(self, r: RunResult) -> None:
        """Expected-vs-called tool counts: matched pairs, missed expected calls in the
        ``(none)`` column, extra (unmatched) calls in the ``(none)`` row."""
        exp_left = Counter(r.expected_tools)
        called_left = Counter(r.called_tools)
        cells = self.confusion
        get = cells.get  # dict.get: a missing cell without Counter.__missing__'s Python call
        for e, c in r.matched:
            cells[(e, c)] = get((e, c), 0) + 1
            exp_left[e] -= 1
            called_left[c] -= 1
        for e, n in exp_left.items():
            if n > 0:
                cells[(e, NONE_LABEL)] = get((e, NONE_LABEL), 0) + n
        for c, n in called_left.items():
            if n > 0:
                cells[(NONE_LABEL, c)] = get((NONE_LABEL, c), 0) + n
        self.tools.update(r.expected_tools)
        self.tools.update(r.called_tools)

    def _add_recorded(self, r: RunResult, c: _Case, seq: int) -> None:
        rec = abs(float(r.recorded_reward or 0) - 1.0) <= SUCCESS_TOL
        if not c.rec_n or seq < c.rec_first:
            c.rec_first = seq
        c.rec_n += 1
        c.rec_succ += rec
        self.rec_n += 1
        exact_add(self.rec_sum, float(r.recorded_reward or 0))
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
        self.n_kept_shown += self._shown_first(r)
        self.kept.append((seq, r))
        cap = self.keep_runs
        if cap is not None and len(self.kept) > max(2 * cap, 64):
            self._trim()  # amortised: at most ~2x the cap is ever held

    def _trim(self) -> None:
        """Keep the ``keep_runs`` runs a report shows first: failing before passing, each
        group by input position."""
        cap = self.keep_runs
        if cap is None or len(self.kept) <= cap:
            return
        self.kept.sort(key=lambda sr: (not self._shown_first(sr[1]), sr[0]))
        del self.kept[cap:]
        self.n_kept_shown = sum(self._shown_first(r) for _, r in self.kept)

    # ----------------------------------------------------------------- merging

    def merge(self, other: SuitePartial) -> SuitePartial:
        """Fold ``other`` into this partial (in place) and return it. Associative and
        commutative up to the scorecard it finalizes to."""
        self.n += other.n
        self.succ += other.succ
        self.forbidden += other.forbidden
        self.dup += other.dup
        self.forbidden_applies = self.forbidden_applies or other.forbidden_applies
        self.gated += other.gated
        self.gated_pass += other.gated_pass
        self.fault += other.fault
        self.false_success += other.false_success
        for cid, oc in other.cases.items():
            mine = self.cases.get(cid)
            if mine is None:
                nc = _Case(oc.first)
                nc.merge(oc)
                self.cases[cid] = nc
            else:
                mine.merge(oc)
        for f in EFFICIENCY_FIELDS:
            self.eff_values[f].extend(other.eff_values[f])
        self.n_eff_success += other.n_eff_success
        if self.cost is not None and other.cost is not None:
            _merge_sums(self.cost, other.cost)
        else:
            self.cost = None
        self.confusion.update(other.confusion)
        self.tools |= other.tools
        self.routes.extend(other.routes)
        self.rec_n += other.rec_n
        for k, v in other.rec_matrix.items():
            self.rec_matrix[k] += v
        _merge_sums(self.rec_sum, other.rec_sum)
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
        self.kept.extend(other.kept)
        self.n_kept_shown += other.n_kept_shown
        self._trim()
        return self

    # ----------------------------------------------------------------- finalizing

    def case_order(self) -> list[tuple[str, _Case]]:
        """Cases in the order of their first run in the input."""
        return sorted(self.cases.items(), key=lambda kv: kv[1].first)

    def finalize(self, *, ks: Sequence[int] | None = None, seed: int = DEFAULT_SEED,
                 n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
                 problems: Iterable[str] = (), meta: Mapping[str, Any] | None = None,
                 route_floors: Mapping[Any, float] | None = None) -> Scorecard:
        """The ``Scorecard`` of every run folded in (definitions: ``suite.score_runs``).
        Raises ``MetricInputError`` for an empty partial, ``KTooLargeError`` for a k above
        some case's runs, and ``MetricInputError`` for an unusable route."""
        if not self.n:
            raise MetricInputError("empty suite: no runs to score")
        order = self.case_order()
        counts = {cid: (c.n, c.succ) for cid, c in order}
        kk = _ks(counts, ks)
        # every bootstrap figure is asked for first, then all are computed from one set of
        # resampling indices per replicate (metrics.resample; identical to one draw each)
        iv = _Intervals()
        kcurve = _kcurves(counts, kk, iv)
        means = [iv.add([_sum_total(s) / k for s, k in per if k])
                 for per in ([(c.f1, c.n_f1) for _, c in order],
                             [(c.comp, c.n_comp) for _, c in order],
                             [(c.ords, c.n_ord) for _, c in order],
                             [(c.lf, c.n_lf) for _, c in order],
                             [(c.nf, c.n_nf) for _, c in order])]
        recorded = self._recorded_columns(kk, iv)
        iv.compute(n_boot=n_boot, seed=seed, confidence=confidence)
        ph, phc, pa, pac = kcurve()
        n = self.n
        cases = CaseRows(order)
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
        from . import __version__

        m = {"trajcheck_version": __version__, "seed": seed, "n_bootstrap": n_boot,
             "confidence": confidence}
        m.update(meta or {})
        if self.categories:  # success per case category (trajcheck.categories)
            from .categories import category_table

            cats = sorted(self.categories.items(), key=lambda kv: kv[1][0])
            m["by_category"] = category_table({k: (g[1], g[2]) for k, g in cats})
        self._trim()
        runs = tuple(r for _, r in sorted(self.kept, key=lambda sr: sr[0]))
        return Scorecard(suite=suite, cases=cases, runs=runs,  # type: ignore[arg-type]
                         recorded_reward=recorded(),
                         problems=tuple(problems), meta=m)

    def _tool_confusion(self) -> dict[str, Any]:
        labels = sorted(self.tools) + [NONE_LABEL]
        idx = {t: i for i, t in enumerate(labels)}
        matrix = [[0] * len(labels) for _ in labels]
        for (e, c), k in self.confusion.items():
            matrix[idx[e]][idx[c]] = k
        return {"labels": labels, "matrix": matrix,
                "rows": "expected tool ((none) = extra call)",
                "columns": "called tool ((none) = missed expected call)"}

    def _recorded_columns(self, ks: Sequence[int], iv: _Intervals) -> Callable[[], RecordedReward | None]:
        """The source's own rewards (success = reward within 1e-6 of 1, tau-bench's rule) and
        their 2x2 agreement with trajcheck's outcome, as a callable to call once ``iv`` is
        computed; it returns None when no run has a reward."""
        if not self.rec_n:
            return lambda: None
        # grouped as the source groups them (RunResult.recorded_group), else by case
        groups = sorted(self.rec_groups.items(), key=lambda kv: kv[1][0])
        counts = {gk: (n, succ) for gk, (_first, n, succ) in groups}
        kk = [k for k in ks if all(nc[0] >= k for nc in counts.values())]
        kcurve = _kcurves(counts, kk, iv)

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
                n=self.rec_n, mean=_r(math.fsum(self.rec_sum) / self.rec_n), pass_hat_k=ph,
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
        from .metrics.efficiency import summary_from_values

        res = summary_from_values(
            # the arrays as they are: one field's sorted copy at a time, not five lists
            self.n, self.n_eff_success, self.eff_values,
            None if self.cost is None else math.fsum(self.cost))
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
        from .metrics.routing import multilabel_routing, recall_floor_gate, routing_metrics
        from .scoring import ROUTE_SOURCE, _route_label

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
    from .metrics.reliability import rule_of_three, wilson_interval

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
        self.cols: list[list[float]] = []
        self.res: list[tuple[float, float, float]] = []

    def add(self, col: list[float]) -> int | None:
        if not col:
            return None
        self.cols.append(col)
        return len(self.cols) - 1

    def compute(self, *, n_boot: int, seed: int, confidence: float) -> None:
        from .metrics.resample import bootstrap_means

        self.res = bootstrap_means(self.cols, n_boot=n_boot, seed=seed, confidence=confidence)

    def estimate(self, i: int | None) -> Estimate | None:
        if i is None:
            return None
        est, lo, hi = self.res[i]
        return Estimate(_r(est), _r(lo), _r(hi), "bootstrap", len(self.cols[i]))


def _kcurves(counts: Mapping[str, tuple[int, int]], ks: Sequence[int], iv: _Intervals
             ) -> Callable[[], tuple[dict[int, float], dict[int, Any], dict[int, float], dict[int, Any]]]:
    """pass^k and pass@k with their bootstrap intervals over tasks, from per-task (n, c): the
    columns are added to ``iv``; the returned callable reads them once ``iv`` is computed."""
    from .metrics.reliability import pass_at_k, pass_hat_k

    ph: dict[int, float] = {}
    pa: dict[int, float] = {}
    cols: dict[int, tuple[int | None, int | None]] = {}
    # reliability takes (c, n); counts hold (n, c). No per-task dict of swapped pairs: a
    # quarter of a million tasks would hold one more tuple and dict entry each
    groups = Counter((c, n) for n, c in counts.values())  # tasks with the same (c, n): same values
    n_tasks = len(counts)
    for k in ks:
        ph[k] = _r(_task_mean(groups, n_tasks, k, hat=True)) or 0.0
        pa[k] = _r(_task_mean(groups, n_tasks, k, hat=False)) or 0.0
        # pass^k and pass@k are means over tasks of a per-task value, so the bootstrap over
        # tasks resamples those per-task values (same replicates as resampling the tasks);
        # tasks with the same (c, n) share their value
        memo = {cn: (pass_hat_k({0: cn}, k), pass_at_k({0: cn}, k)) for cn in groups}
        cols[k] = (iv.add([memo[(c, n)][0] for n, c in counts.values()]),
                   iv.add([memo[(c, n)][1] for n, c in counts.values()]))

    def done() -> tuple[dict[int, float], dict[int, Any], dict[int, float], dict[int, Any]]:
        phc: dict[int, Any] = {}
        pac: dict[int, Any] = {}
        for k, (i1, i2) in cols.items():
            e1, e2 = iv.estimate(i1), iv.estimate(i2)
            phc[k] = (e1.lo, e1.hi) if e1 else None
            pac[k] = (e2.lo, e2.hi) if e2 else None
        return ph, phc, pa, pac
    return done


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


def _ks(counts: Mapping[str, tuple[int, int]], ks: Sequence[int] | None) -> list[int]:
    """k = 1..min trials by default; explicit ks beyond the minimum raise ``KTooLargeError``
    naming the largest k asked for (the k the user typed, e.g. 5 for ``--k 5``), and k < 1
    raises ``MetricInputError``."""
    if not counts:
        return []
    kmax = min(nc[0] for nc in counts.values())
    if ks is None:
        return list(range(1, kmax + 1))
    low = [k for k in ks if not isinstance(k, int) or isinstance(k, bool) or k < 1]
    if low:
        raise MetricInputError(f"k must be an integer >= 1, got {low[0]!r}")
    if max(ks) > kmax:
        short = min(counts, key=lambda t: counts[t][0])
        raise KTooLargeError(max(ks), short, counts[short][0])
    return sorted(set(ks))


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
