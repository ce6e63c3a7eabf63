"""Adding scored runs to a ``SuitePartial`` (``add``), and which runs it keeps for the report
(``wants``, ``_keep``, ``_trim``).

The functions here are ``SuitePartial``'s methods (bound in its class body, ``partials``):
``add`` is the one per-run step of aggregation, so the per-case sums are queued and added in
whole columns every 8,192 runs (``_sync``), and the usual figures are checked inline.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import MetricInputError
from ..metrics.formulas import SUCCESS_TOL as SUCCESS_TOL  # partials and suite export it
from ..metrics.formulas import reward_success
from ..report.scorecard import AGREEMENT_CELLS, Disagreement, RunResult, fmt_num

if TYPE_CHECKING:
    from .partials import SuitePartial

EFFICIENCY_FIELDS = ("steps", "tool_calls", "tokens", "cost_usd", "latency_ms")
_MAX_FLOAT = 1.7976931348623157e308
_RUN_FIELD = {"steps": "steps", "tool_calls": "n_calls", "tokens": "tokens",
              "cost_usd": "cost_usd", "latency_ms": "latency_ms"}
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


def _new_case(self: SuitePartial, cid: str, first: int) -> int:
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


def add(self: SuitePartial, r: RunResult, seq: int | None = None) -> None:
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
        _figure_error(self, r, seq)
    success = r.success
    self.n += 1
    self.succ += success
    cid = r.case_id
    i = self.cases.get(cid)
    if i is None:
        i = _new_case(self, cid, seq)
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
        _add_sums(self, i, r)
    if not self.n & _FLUSH_MASK:
        _sync(self)
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
        _add_recorded(self, r, i, seq)
    if r.recorded_checks:
        _add_checks(self, r, seq)
    if r.category is not None:
        g = self.categories.setdefault(r.category, [seq, 0, 0])
        g[0], g[1], g[2] = min(g[0], seq), g[1] + 1, g[2] + success
    # _keep(self, r, seq), the test for a run never shown inlined
    bar = self._bar
    if bar is not None and self.keep_runs is not None and (
            (not (not success or r.composite_passed is False), seq) > bar):
        return
    _keep(self, r, seq)


def _add_sums(self: SuitePartial, i: int, r: RunResult) -> None:
    """Queue run ``r``'s figures for the per-case sums of row ``i`` figure by figure
    (a figure may be None or not a float), after the runs queued together before it."""
    _spread_q4(self)
    for s, x in ((self.f1, r.f1), (self.comp, r.composite), (self.lf, r.lcs_f1),
                 (self.nf, r.name_f1)):
        if x is not None:
            s.pend_rows.append(i)
            s.pend_x.append(x if type(x) is float else float(x))


def _spread_q4(self: SuitePartial) -> None:
    """Move the runs queued with all four figures into each figure's queue, in order."""
    rows, xs = self._q4_rows, self._q4_x
    if rows:
        for k, s in enumerate((self.f1, self.comp, self.lf, self.nf)):
            s.pend_rows.extend(rows)
            s.pend_x.extend(xs[k::4])
        self._q4_rows, self._q4_x = array("i"), array("d")


def _sync(self: SuitePartial) -> None:
    """Bring the per-case sums ``add`` defers up to date: their rows for new cases and
    their queued values (``CaseSums.flush``). Called every 8,192 runs and before
    anything reads or merges them."""
    _spread_q4(self)
    n_cases = len(self.ids)
    for s in (self.f1, self.comp, self.ords, self.lf, self.nf):
        k = n_cases - len(s.count)
        if k:
            s.grow(k)
        s.flush()


def _figure_error(self: SuitePartial, r: RunResult, seq: int) -> None:
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


def _add_recorded(self: SuitePartial, r: RunResult, i: int, seq: int) -> None:
    rec = reward_success(float(r.recorded_reward or 0))
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


def _add_checks(self: SuitePartial, r: RunResult, seq: int) -> None:
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


def _shown_first(r: RunResult) -> bool:
    return not r.success or r.composite_passed is False


def wants(self: SuitePartial, r: RunResult) -> bool:
    """Whether the next run added in a single pass (positions increasing) would be kept
    for reports: scorers then give it in full (transcript, call table), others compact."""
    cap = self.keep_runs
    if cap is None or len(self.kept) < cap:
        return True
    return _shown_first(r) and self.n_kept_shown < cap


def _keep(self: SuitePartial, r: RunResult, seq: int) -> None:
    shown = not r.success or r.composite_passed is False
    cap = self.keep_runs
    if cap is not None:
        bar = self._bar
        if bar is not None and (not shown, seq) > bar:
            return  # behind keep_runs runs already kept: never shown
    self.n_kept_shown += shown
    self.kept.append((seq, r))
    if cap is not None and len(self.kept) > max(2 * cap, 64):
        _trim(self)  # amortised: at most ~2x the cap is ever held


def _trim(self: SuitePartial) -> None:
    """Keep the ``keep_runs`` runs a report shows first: failing before passing, each
    group by input position."""
    cap = self.keep_runs
    if cap is None or len(self.kept) < cap:
        return
    if len(self.kept) > cap:
        self.kept.sort(key=lambda sr: (not _shown_first(sr[1]), sr[0]))
        del self.kept[cap:]
        self.n_kept_shown = sum(_shown_first(r) for _, r in self.kept)
    if cap:
        seq, r = self.kept[-1]
        self._bar = (not _shown_first(r), seq)
    else:
        self._bar = (False, -_I64 - 1)  # below every run's key: none is held
