"""A stand-in refund-desk agent working on a real trajcheck sandbox, for ``final_state.yaml``: it
opens the sandbox fixture named in the test's vars (``fixture``, relative to this folder), runs
the recorded run of its fixture case's tool calls there (``../refund_desk/sandbox_replay.py``) and
returns the run with the sandbox's database after it (``metadata.state_after``). The state before
the run comes from the case's ``initial_state`` (the same fixture)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from recorded import RUNS  # a sibling module: the agent's folder is importable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "refund_desk"))

from sandbox_replay import REPLAYS, replay  # noqa: E402


def run(prompt: str, vars: dict[str, Any]) -> Any:
    """The fixture case ``vars["case_id"]``'s recorded run, replayed on ``vars["fixture"]``."""
    cid = vars["case_id"]
    return replay(RUNS[REPLAYS[cid]], cid, HERE / vars["fixture"])
