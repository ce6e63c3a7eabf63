"""The exit-code gates of ``eval``, ``run`` and ``inspect``: ``--fail-under`` (exit 1) and
``--strict`` (exit 2 when input was not wholly used)."""

from __future__ import annotations

from typing import Any

from .output import fail


def gate(sc: Any, fail_under: float | None, err: Any) -> None:
    """``--fail-under``: exit 1 (after printing FAIL on ``err``) when the suite's task success
    rate (None counts as 0) is below ``fail_under``; print OK otherwise; nothing when None."""
    if fail_under is None:
        return
    rate = sc.suite.task_success_rate.value or 0.0
    if rate < fail_under:
        err.print(f"[red]FAIL[/red]: task success rate {rate:.4f} < --fail-under {fail_under}")
        raise SystemExit(1)
    err.print(f"[green]OK[/green]: task success rate {rate:.4f} >= --fail-under {fail_under}")


def strict_findings(loaded: Any, case_ids: set[str] | None = None, *,
                    counts: dict[str, int] | None = None) -> list[str]:
    """What ``--strict`` refuses, as counted phrases: records/lines not read
    (``LoadResult.skipped``), faults inside records that were read (``LoadResult.faults``),
    and, when ``case_ids`` is given, traces without a case id, traces whose case id is not
    among ``case_ids``, and cases with no trace (or those three numbers already counted by a
    streaming evaluation: ``counts`` with keys ``no_case_id``, ``unknown``, ``missing``).
    Empty when everything was used."""
    from ..report import plural

    out: list[str] = []
    if loaded.skipped:
        out.append(f"{plural(len(loaded.skipped), 'record')} or line(s) not read")
    if loaded.faults:
        out.append(f"{plural(len(loaded.faults), 'fault')} inside records that were read")
    if case_ids is not None or counts is not None:
        if counts is not None:
            no_id, unknown, missing = (counts.get(k, 0) for k in ("no_case_id", "unknown", "missing"))
        else:
            cids = [t.metadata.get("case_id") for t in loaded.trajectories]
            no_id = sum(1 for c in cids if c is None)
            unknown = sum(1 for c in cids if c is not None and str(c) not in (case_ids or ()))
            seen = {str(c) for c in cids if c is not None}
            missing = sum(1 for c in (case_ids or ()) if c not in seen)
        if no_id:
            out.append(f"{plural(no_id, 'trace')} without a case_id")
        if unknown:
            out.append(f"{plural(unknown, 'trace')} naming a case id that is not among the cases")
        if missing:
            out.append(f"{plural(missing, 'case')} with no trace")
    return out


def strict_gate(findings: list[str], err: Any) -> None:
    """``--strict``: fail (exit 2) naming every finding; the problems listed above say where."""
    if findings:
        fail("--strict: " + "; ".join(findings) + " (see the problems listed above)", err)
