"""A compact way for tests to write a trajectory by hand (shared by the metric tests)."""

from __future__ import annotations

from trajcheck.model import Step, ToolCall, ToolResult, Trajectory


def run(*steps, final=None):
    """Build a trajectory. Each step is a list of calls; a call is ``name``,
    ``(name, args)`` or ``(name, args, status)`` with status "ok", "err" or None (no result).
    Calls get ids c0, c1, ...; each step's results follow it in call order."""
    out = [Step(0, "user", "do it")]
    n = 0
    for calls in steps:
        tcs, results = [], []
        for c in calls:
            if isinstance(c, str):
                c = (c, {}, "ok")
            elif len(c) == 2:
                c = (c[0], c[1], "ok")
            name, args, status = c
            cid = f"c{n}"
            n += 1
            tcs.append(ToolCall(name, args, call_id=cid))
            if status is not None:
                results.append(ToolResult(cid, name, "x", is_error=(status == "err")))
        out.append(Step(len(out), "tool_call", tool_calls=tuple(tcs)))
        for r in results:
            out.append(Step(len(out), "tool_result", tool_result=r))
    if final is not None:
        out.append(Step(len(out), "final_response", final))
    return Trajectory(steps=tuple(out), final_response=final)
