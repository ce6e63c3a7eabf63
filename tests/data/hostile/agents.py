"""Agents built to break the runner or game their grade (tests/test_runner_security.py).

Each one is the kind of agent the hostile-input audit tried: reading the case's expectations,
rewriting what was recorded, exiting the process, returning values JSON cannot hold.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from trajcheck.run.tools import ToolContext, ToolRegistry

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


# ---------------------------------------------------------------- against process isolation

def _expected_by_introspection(inp: Any) -> list[Any]:
    """What a cheater inside trajcheck's process could find: a Case (the runner's or the
    grader's copy) whose input is this run's, through the garbage collector, the call
    stack's frames, or the loaded modules' globals."""
    import gc

    def hit(o: Any) -> list[Any] | None:
        try:
            if type(o).__name__ == "Case" and getattr(o, "input", None) == inp:
                return list(o.expected_calls)
        except Exception:
            return None
        return None

    for o in gc.get_objects():
        got = hit(o)
        if got:
            return got
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            for o in (v, *(v.values() if isinstance(v, dict) else ())):
                got = hit(o)
                if got:
                    return got
        f = f.f_back
    for m in list(sys.modules.values()):
        for v in list(getattr(m, "__dict__", {}).values()):
            got = hit(v)
            if got:
                return got
    return []


def introspector(inp: Any, tools: Any) -> dict[str, Any]:
    """Finds the expected calls by introspection and makes exactly those; else a wrong note."""
    found = _expected_by_introspection(inp)
    for c in found:
        tools.call(c.name, dict(c.args or {}))
    if not found:
        tools.call("add_note", {"text": "wrong note"})
    return {"final_response": "saved it", "metadata": {"found": len(found)}}


def hard_exit(inp: Any, tools: Any) -> str:
    """Saves the note, then ends the whole process with os._exit(0) before answering."""
    import os

    tools.call("add_note", {"text": str(inp)})
    os._exit(0)


def hangs_on_first(inp: Any, tools: Any) -> str:
    """Never answers case c0 (sleeps, outside any tool); does case c1 honestly."""
    if inp == "note 0":
        tools.call("add_note", {"text": "started"})
        while True:
            time.sleep(1)
    tools.call("add_note", {"text": str(inp)})
    return "saved it"


def _frame(obj: dict[str, Any]) -> bytes:
    import json

    data = json.dumps(obj).encode()
    return len(data).to_bytes(4, "big") + data


def forger(inp: Any, tools: Any) -> str:
    """Does the wrong work, edits what it got back, then writes its own 'done' message straight
    into the worker's channel claiming the expected call and an answer, and raises."""
    import os

    args = {"text": "wrong note"}
    r = tools.call("add_note", args)
    args["text"] = str(inp)
    r.output["saved"] = [str(inp)]
    fake_step = {"kind": "tool_call", "tool_calls": [{"name": "add_note", "args": {"text": str(inp)}}]}
    os.write(int(sys.argv[-1]), _frame({"op": "done", "final_response": "saved it", "steps": [fake_step],
                                        "trajectory": {"steps": [fake_step]}}))
    raise RuntimeError("forged")


def garbler(inp: Any, tools: Any) -> str:
    """Writes bytes that are not a message into the worker's channel on case c0; honest on c1."""
    import os

    tools.call("add_note", {"text": str(inp)})
    if inp == "note 0":
        os.write(int(sys.argv[-1]), b"\x00\x00\x00\x05hello")
        time.sleep(60)
    return "saved it"


def honest(inp: Any, tools: Any) -> str:
    """Saves the note it was asked to."""
    r = tools.call("add_note", {"text": str(inp)})
    return "saved it" if not r.is_error else "failed"


async def honest_async(inp: Any, tools: Any) -> dict[str, Any]:
    """The async form, with usage and a route."""
    await tools.acall("add_note", {"text": str(inp)})
    tools.say("done")
    return {"final_response": "saved it", "usage": {"input_tokens": 3, "output_tokens": 2},
            "cost_usd": 0.5, "route": ["notes"], "metadata": {"defs": len(tools.definitions("anthropic"))}}


def honest_with_history(inp: Any, tools: Any, history: list[dict[str, str]]) -> str:
    """Saves the note on the first turn; says how many earlier messages it was given."""
    if not history:
        tools.call("add_note", {"text": str(inp)})
        return "saved it"
    return f"saved it ({len(history)} earlier messages)"


def whoami(inp: Any, tools: Any) -> dict[str, Any]:
    """Honest, and says which process it ran in."""
    import os

    tools.call("add_note", {"text": str(inp)})
    return {"final_response": "saved it", "metadata": {"pid": os.getpid()}}
