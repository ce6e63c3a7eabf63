"""The recorded refund-desk runs (../refund_desk/runs.jsonl), read once with trajcheck's trace
reader. A sibling module of refund_agent.py: trajcheck's provider puts the agent's folder on
sys.path, so the agent can import it."""

from __future__ import annotations

from pathlib import Path

from trajcheck.read.traces import load

RUNS_FILE = Path(__file__).resolve().parent.parent / "refund_desk" / "runs.jsonl"
RUNS = {t.metadata["case_id"]: t for t in load(RUNS_FILE).trajectories}
