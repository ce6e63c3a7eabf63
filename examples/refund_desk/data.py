"""The refund-desk data every host example reads: the recorded runs (runs.jsonl, through
``trajcheck.read.traces.load``), their cases (cases.jsonl, through ``trajcheck.load_cases``), and
the table's cells (every row metric, every trajectory mode of every dialect); and the final-state
cases that start from a sandbox fixture (``fixture_cases.jsonl`` on ``shop.sql``, their runs
replayed on a real sandbox by ``sandbox_replay.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_replay import FIXTURE, REPLAYS, replay  # noqa: E402,F401  (a sibling module)

from trajcheck import load_cases
from trajcheck.adapters._catalog import ROW_METRICS
from trajcheck.metrics.trajectory import MODE_TABLE, NEUTRAL_MODES
from trajcheck.read.traces import load

HERE = Path(__file__).resolve().parent
RUNS = {t.metadata["case_id"]: t for t in load(HERE / "runs.jsonl").trajectories}
CASES = {c.id: c for c in load_cases(HERE / "cases.jsonl")}
METRICS = [m.key for m in ROW_METRICS if m.key != "trajectory_match"]
#: the final-state cases on the sandbox fixture, and their runs replayed on it (state_after only)
FIXTURE_CASES = {c.id: c for c in load_cases(HERE / "fixture_cases.jsonl")}
FIXTURE_RUNS = {cid: replay(RUNS[REPLAYS[cid]], cid) for cid in FIXTURE_CASES}
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


def fixture_settings(case: Any) -> dict[str, Any]:
    """A fixture case's settings (``initial_state`` the fixture's path) plus ``after_state``: the
    sandbox's database after its run (the state before comes from the fixture)."""
    return {**settings(case), "after_state": FIXTURE_RUNS[case.id].metadata["state_after"]}
