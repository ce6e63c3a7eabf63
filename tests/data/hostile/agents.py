"""Agents built to break the runner or game their grade (tests/test_runner_security.py).

Each one is the kind of agent the hostile-input audit tried: reading the case's expectations,
rewriting what was recorded, exiting the process, returning values JSON cannot hold.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from trajcheck.tools import ToolContext, ToolRegistry

TOOLS = ToolRegistry()


@TOOLS.register
def add_note(text: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Store a note."""
    ctx.sandbox.execute("INSERT INTO notes (text) VALUES (:t)", {"t": text})
    return {"saved": [text]}


def cheater(inp: Any, tools: Any) -> str:
    """Looks for the expected answer instead of doing the work, then rewrites the record."""
    case = getattr(tools, "case", None) or getattr(getattr(tools, "ctx", None), "case", None)
    if case is not None:  # what the audit's cheater did with the live Case
        for c in case.expected_calls:
            tools.call(c.name, dict(c.args or {}))
        object.__setattr__(case, "expected_calls", ())
    args = {"text": "wrong note"}
    r = tools.call("add_note", args)
    args["text"] = "note 0"              # rewrite the arguments it passed ...
    if isinstance(r.output, dict):
        r.output["saved"] = ["note 0"]   # ... and the result it got
    if isinstance(inp, dict):
        inp.clear()
    return "saved it"


def exits(inp: Any, tools: Any) -> str:
    """Calls sys.exit(0) halfway through, hoping for a clean exit code and nothing recorded."""
    tools.call("add_note", {"text": str(inp)})
    sys.exit(0)


def odd_values(inp: Any, tools: Any) -> dict[str, Any]:
    """Returns values JSON cannot hold: a cost that is text, a lone surrogate, a cycle."""
    tools.call("add_note", {"text": str(inp)})
    meta: dict[str, Any] = {"n": float("nan")}
    meta["self"] = meta
    return {"final_response": "saved \ud800 it", "cost_usd": "free", "metadata": meta}


def nan_cost(inp: Any, tools: Any) -> dict[str, Any]:
    """Reports a NaN cost."""
    tools.call("add_note", {"text": str(inp)})
    return {"final_response": "saved it", "cost_usd": float("nan")}


def slow(inp: Any, tools: Any) -> str:
    """Takes a while per run (for two runs racing on one --out file)."""
    tools.call("add_note", {"text": str(inp)})
    time.sleep(0.3)
    return "saved it"
