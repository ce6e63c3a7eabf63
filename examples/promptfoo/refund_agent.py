"""A stand-in refund-desk agent for the promptfoo example: it replays the recorded run of the
test's ``case_id`` (no model, no network). A real agent would call its model and tools here
and return its messages or a trajcheck Trajectory."""

from __future__ import annotations

from typing import Any

from recorded import RUNS  # a sibling module: the agent's folder is importable


def run(prompt: str, vars: dict[str, Any]) -> Any:
    """The recorded ``trajcheck.Trajectory`` for ``vars["case_id"]``."""
    return RUNS[vars["case_id"]]
