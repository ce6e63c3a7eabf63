"""Judge validation on files: human labels of recorded runs against the judge's verdicts.

Seed 000 §3.3: "validate judge verdicts against human-reviewed traces". A labels file
(JSONL) names a run and what a person answered for each check::

    {"run_id": "hd_009_monitor_503-0", "labels": {"response_faithful": false, "failure_handled": false}}
    {"case_id": "hd_003_vpn_reset", "trial": 0, "labels": {"response_faithful": true}}

A run is found by ``run_id`` (the trace's ``metadata.run_id``) or by ``case_id`` and
``trial``. Check names are the trajectory judge's five (``TRAJECTORY_CHECKS``) and ``task_completed`` (the task-completion judge, all criteria met;
asked only where a label names it and the case has success criteria). A label is true
(pass), false or null (not applicable). The agreement figures are
:func:`~trajcheck.judges.validation.judge_agreement`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MetricInputError
from ..model import Case, Trajectory
from ..read.limits import object_lines
from .rubrics import TRAJECTORY_CHECKS, Verdict, judge_task_completion, judge_trajectory
from .validation import AgreementReport, judge_agreement

TASK_COMPLETED = "task_completed"
"""The label name of the task-completion judge's verdict (every criterion met)."""

KNOWN_CHECKS = tuple(n for n, _ in TRAJECTORY_CHECKS) + (TASK_COMPLETED,)


@dataclass(frozen=True)
class LabelRow:
    """One labelled run: how it is named (``run_id`` or ``case_id`` + ``trial``), the human
    ``labels`` (check -> True/False/None) and the ``line`` it was read from."""

    run_id: str | None
    case_id: str | None
    trial: int | None
    labels: dict[str, bool | None]
    line: int

    def key(self) -> str:
        """How the row names its run, for messages."""
        return (f"run {self.run_id!r}" if self.run_id is not None
                else f"case {self.case_id!r} trial {self.trial}")


def load_labels(path: str | Path) -> tuple[list[LabelRow], list[str]]:
    """The rows of a labels JSONL file and the problems of lines left out
    (``"<file>:<line>: ..."``): not a JSON object, no ``run_id`` nor ``case_id``+``trial``,
    ``labels`` not an object, an unknown check name (the known ones are listed), or a label
    that is not true/false/null. Raises DatasetError when the file cannot be read."""
    rows: list[LabelRow] = []
    problems: list[str] = []
    for where, n, d, problem in object_lines(path, "labels"):
        if d is None:
            problems.append(f"{where}: {problem}; expected an object with run_id (or case_id and "
                            "trial) and labels")
            continue
        rid, cid, trial = d.get("run_id"), d.get("case_id"), d.get("trial")
        if rid is None and (cid is None or not isinstance(trial, int) or isinstance(trial, bool)):
            problems.append(f"{where}: name the run by run_id, or by case_id and an integer trial")
            continue
        labels = d.get("labels")
        if not isinstance(labels, dict) or not labels:
            problems.append(f"{where}: labels must be a non-empty object of check -> true/false/null")
            continue
        unknown = [k for k in labels if k not in KNOWN_CHECKS]
        if unknown:
            problems.append(f"{where}: unknown check {unknown[0]!r} (known: {', '.join(KNOWN_CHECKS)})")
            continue
        bad = [k for k, v in labels.items() if v is not None and not isinstance(v, bool)]
        if bad:
            problems.append(f"{where}: label {bad[0]!r} must be true, false or null, got "
                            f"{labels[bad[0]]!r}")
            continue
        rows.append(LabelRow(None if rid is None else str(rid), None if cid is None else str(cid),
                             trial if rid is None else None, dict(labels), n))
    return rows, problems


@dataclass(frozen=True)
class ValidationRun:
    """The result of :func:`validate_judge`: the ``report`` (agreement per check and
    overall), one ``item`` per labelled run found (``{"line", "run_id", "human", "judge",
    "errors"}``) and the ``problems`` (label rows whose run is not among the traces)."""

    report: AgreementReport
    items: tuple[dict[str, Any], ...]
    problems: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**self.report.to_dict(), "items": list(self.items), "problems": list(self.problems)}


def _judge_labels(verdicts: Sequence[Verdict]) -> tuple[dict[str, bool | None], list[str]]:
    out: dict[str, bool | None] = {}
    errors = []
    for v in verdicts:
        if v.error is not None:
            errors.append(f"{v.judge}: {v.error}")
        if v.judge == "trajectory":
            for it in v.items:
                out[it.name] = None if v.error is not None else it.passed
        elif v.judge == "task_completion":
            out[TASK_COMPLETED] = None if v.error is not None else v.passed
    return out, errors


def validate_judge(model: Any, runs: Sequence[Trajectory], cases: Mapping[str, Case],
                   rows: Sequence[LabelRow], *, error_pattern: Any = None) -> ValidationRun:
    """Judge each labelled run with ``model`` (trajectory judge; task-completion judge where a
    label names ``task_completed``) and compare with the human labels
    (:func:`~trajcheck.judges.validation.judge_agreement`). A row whose run is not among
    ``runs`` is a problem, not an error; a judge error leaves that run's checks unlabelled
    (counted in ``n_skipped``). Raises MetricInputError when no labelled run was found."""
    by_id = {str(t.metadata.get("run_id")): t for t in runs if t.metadata.get("run_id") is not None}
    by_case = {(str(t.metadata.get("case_id")), t.metadata.get("trial")): t for t in runs
               if t.metadata.get("case_id") is not None}
    human: list[dict[str, bool | None]] = []
    judged: list[dict[str, bool | None]] = []
    items: list[dict[str, Any]] = []
    problems: list[str] = []
    for row in rows:
        t = by_id.get(row.run_id) if row.run_id is not None else by_case.get((str(row.case_id), row.trial))
        if t is None:
            problems.append(f"labels line {row.line}: {row.key()} is not among the traces")
            continue
        cid = t.metadata.get("case_id")
        case = cases.get(str(cid)) if cid is not None else None
        vs = [judge_trajectory(model, t, case, error_pattern=error_pattern)]
        if TASK_COMPLETED in row.labels:
            if case is None or not case.metadata.get("success_criteria"):
                problems.append(f"labels line {row.line}: {row.key()}: task_completed is labelled but the "
                                "case has no success_criteria; that label is left out")
            else:
                vs.append(judge_task_completion(model, t, case))
        jl, errs = _judge_labels(vs)
        hl = {k: v for k, v in row.labels.items() if k in jl}
        if not hl:
            continue
        human.append(hl)
        judged.append({k: jl[k] for k in hl})
        items.append({"line": row.line, "run_id": t.metadata.get("run_id"), "case_id": cid,
                      "trial": t.metadata.get("trial"), "human": hl,
                      "judge": {k: jl[k] for k in hl}, "errors": errs})
    if not human:
        raise MetricInputError("none of the labelled runs is among the traces: "
                               + "; ".join(problems[:3]))
    report = judge_agreement(judged, human)
    return ValidationRun(report, tuple(items), tuple(problems))


__all__ = ["KNOWN_CHECKS", "TASK_COMPLETED", "LabelRow", "ValidationRun", "load_labels",
           "validate_judge"]
