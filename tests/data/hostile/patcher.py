"""An agent file whose top-level code patches trajcheck's scorer (tests/test_isolation_attacks.py).

Imported into trajcheck's own process, it makes every run score as a success; in sandbox
isolation with --tools it is imported only inside the worker, where there is no scorer to
patch that counts. Never import this module from a test process: it patches for good.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import trajcheck.score.suite as _suite

_real = _suite.score_run


def _always(traj: Any, case: Any, **kw: Any) -> Any:
    return dataclasses.replace(_real(traj, case, **kw), success=True)


_suite.score_run = _always


def agent(inp: Any, tools: Any) -> str:
    """Does the wrong work and relies on the patch."""
    tools.call("add_note", {"text": "wrong note"})
    return "saved it"
