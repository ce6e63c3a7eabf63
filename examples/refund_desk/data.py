"""The refund-desk data every host example reads: the recorded runs (runs.jsonl, through
``trajcheck.traces.load``), their cases (cases.jsonl, through ``trajcheck.load_cases``), and
the table's cells (every row metric, every trajectory mode of every dialect)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajcheck import load_cases
from trajcheck.adapters._catalog import ROW_METRICS
from trajcheck.metrics.trajectory import MODE_TABLE, NEUTRAL_MODES
from trajcheck.traces import load

HERE = Path(__file__).resolve().parent
RUNS = {t.metadata["case_id"]: t for t in load(HERE / "runs.jsonl").trajectories}
CASES = {c.id: c for c in load_cases(HERE / "cases.jsonl")}
METRICS = [m.key for m in ROW_METRICS if m.key != "trajectory_match"]
MODES = [(r.dialect, r.name) for r in MODE_TABLE] + [(None, m) for m in NEUTRAL_MODES]


def settings(case: Any) -> dict[str, Any]:
    """The case's fields other than id, input and expected calls (the host's settings)."""
    d = case.to_dict()
    for k in ("id", "input", "expected_calls"):
        d.pop(k, None)
    return d


def expected(case: Any) -> list[dict[str, Any]]:
    """The expected calls as ``{"name", "args"}`` dicts."""
    return [{"name": e.name, "args": e.args} for e in case.expected_calls]
