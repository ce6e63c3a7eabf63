"""What a paired comparison of two scorecards needs beyond the deltas
(``suite.compare_scorecards``): whether the two may be compared at all, and which cases
moved.

- ``check_comparable``: the shared cases whose definitions differ (``CaseResult.case_hash``,
  ``fingerprint.case_hash``) and those with different trial counts. A paired test over an
  edited case compares two different tests, and unequal trial counts make per-run pairs
  meaningless; the ``compare`` command refuses both unless told otherwise.
- ``case_shifts``: per shared case, the success count of A and of B, with each side's runs
  (verdict and reason) so a report can put them side by side; ``regressed`` /
  ``improved`` split them by the sign of the change in the case's success rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..report.scorecard import CaseResult, RunResult, Scorecard


@dataclass(frozen=True)
class Comparability:
    """Why two scorecards should not be compared as they are.

    ``changed``: (case id, hash in A, hash in B) for shared cases whose definitions differ;
    ``trials``: (case id, trials in A, trials in B) for shared cases with different trial
    counts; ``unhashed``: "A", "B" or both when that side's scorecard records no case hashes
    (written before they existed), so its definitions cannot be checked.
    """

    changed: tuple[tuple[str, str, str], ...] = ()
    trials: tuple[tuple[str, int, int], ...] = ()
    unhashed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no case changed and every shared case has equal trial counts."""
        return not self.changed and not self.trials

    def messages(self, limit: int = 10) -> list[str]:
        """One line per finding (the first ``limit`` of each kind, then "... and N more")."""
        out: list[str] = []
        for cid, ha, hb in self.changed[:limit]:
            out.append(f"case {cid!r}: scored against different definitions (hash {ha} in A, {hb} in B)")
        if len(self.changed) > limit:
            out.append(f"... and {len(self.changed) - limit} more changed cases")
        for cid, na, nb in self.trials[:limit]:
            out.append(f"case {cid!r}: {na} trial(s) in A, {nb} in B")
        if len(self.trials) > limit:
            out.append(f"... and {len(self.trials) - limit} more cases with different trial counts")
        for side in self.unhashed:
            out.append(f"scorecard {side} records no case hashes (written by an older trajcheck): "
                       "its case definitions cannot be checked")
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"changed": [{"case_id": c, "hash_a": a, "hash_b": b} for c, a, b in self.changed],
                "trials": [{"case_id": c, "trials_a": a, "trials_b": b} for c, a, b in self.trials],
                "unhashed": list(self.unhashed)}


def _cases(sc: Scorecard) -> dict[str, CaseResult]:
    return {c.case_id: c for c in sc.cases}


def check_comparable(a: Scorecard, b: Scorecard) -> Comparability:
    """Compare the case definitions and trial counts of the cases ``a`` and ``b`` share.

    A case whose hash is missing on either side (older scorecard) is not reported as
    changed; the side is named in ``unhashed`` instead. Never raises.
    """
    ca, cb = _cases(a), _cases(b)
    shared = [c for c in ca if c in cb]
    changed = tuple((c, str(ca[c].case_hash), str(cb[c].case_hash)) for c in shared
                    if ca[c].case_hash and cb[c].case_hash and ca[c].case_hash != cb[c].case_hash)
    trials = tuple((c, ca[c].trials, cb[c].trials) for c in shared if ca[c].trials != cb[c].trials)
    unhashed = tuple(side for side, cs in (("A", ca), ("B", cb))
                     if shared and any(not cs[c].case_hash for c in shared))
    return Comparability(changed, trials, unhashed)


def run_reason(r: RunResult) -> str:
    """The one line a report shows for a run: why it failed (``failure_reason``, else the
    composite's reason for a composite-gate failure), or the outcome's reason for a pass."""
    if not r.success:
        return r.failure_reason or r.outcome_reason
    if r.gate_failed:
        return str((r.metrics.get("composite") or {}).get("reason") or r.failure_reason
                   or "composite below its threshold")
    return r.outcome_reason


@dataclass(frozen=True)
class CaseShift:
    """One shared case in both scorecards: successes / trials on each side and the runs,
    in trial order, as ``{run_id, trial, success, gate_failed, reason, reasons}`` dicts
    (``reason``: ``run_reason``'s one line; ``reasons``: the full list behind a failure,
    ``report.runs.reasons``, empty for a pass)."""

    case_id: str
    a_successes: int
    a_trials: int
    b_successes: int
    b_trials: int
    a_runs: tuple[dict[str, Any], ...] = field(default=())
    b_runs: tuple[dict[str, Any], ...] = field(default=())

    @property
    def delta(self) -> float:
        """B's success rate minus A's, in [-1, 1]."""
        ra = self.a_successes / self.a_trials if self.a_trials else 0.0
        rb = self.b_successes / self.b_trials if self.b_trials else 0.0
        return rb - ra

    def to_dict(self) -> dict[str, Any]:
        """JSON form (with ``delta``)."""
        return {"case_id": self.case_id, "a_successes": self.a_successes,
                "a_trials": self.a_trials, "b_successes": self.b_successes,
                "b_trials": self.b_trials, "delta": self.delta,
                "a_runs": list(self.a_runs), "b_runs": list(self.b_runs)}


def _runs_of(sc: Scorecard) -> dict[str, list[RunResult]]:
    out: dict[str, list[RunResult]] = {}
    for r in sc.runs:
        out.setdefault(r.case_id, []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: (r.trial is None, r.trial if r.trial is not None else 0))
    return out


def case_shifts(a: Scorecard, b: Scorecard) -> list[CaseShift]:
    """Every case both scorecards ran, in A's case order, with each side's runs.

    Success counts are over the runs in each scorecard (trajcheck's task outcome). Use
    ``shift.delta`` (< 0 regressed, > 0 improved) to split them. Never raises.
    """
    ra, rb = _runs_of(a), _runs_of(b)

    from ..report.runs import reasons

    def runs(rs: list[RunResult]) -> tuple[dict[str, Any], ...]:
        return tuple({"run_id": r.run_id, "trial": r.trial, "success": r.success,
                      "gate_failed": r.gate_failed, "reason": run_reason(r),
                      "reasons": reasons(r) if not r.success or r.gate_failed else []}
                     for r in rs)

    return [CaseShift(c, sum(r.success for r in ra[c]), len(ra[c]),
                      sum(r.success for r in rb[c]), len(rb[c]), runs(ra[c]), runs(rb[c]))
            for c in ra if c in rb]


def regressed(shifts: list[CaseShift]) -> list[CaseShift]:
    """The cases whose success rate fell from A to B, largest fall first."""
    return sorted((s for s in shifts if s.delta < 0), key=lambda s: (s.delta, s.case_id))


def improved(shifts: list[CaseShift]) -> list[CaseShift]:
    """The cases whose success rate rose from A to B, largest rise first."""
    return sorted((s for s in shifts if s.delta > 0), key=lambda s: (-s.delta, s.case_id))


__all__ = ["CaseShift", "Comparability", "case_shifts", "check_comparable", "improved",
           "regressed", "run_reason"]
