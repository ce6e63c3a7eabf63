"""Judges see and count tool failures by the metrics' own test (seed 000 §3.3: keep every
error message intact; a judge's false is never overridden)."""

from __future__ import annotations

import json

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.judges import ScriptedModel, judge_trajectory, render_trajectory
from trajcheck.judges.fencing import request_nonce
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory
from trajcheck.read.traces import read

CHECKS = ("tool_results_used", "no_unnecessary_calls", "no_unrequested_actions", "failure_handled",
          "response_faithful")


def _reply(**over: object) -> str:
    base: dict[str, object] = {n: {"pass": True, "reason": f"{n} ok"} for n in CHECKS}
    base.update(over)
    return json.dumps({"checks": base})


def _openai_trace(output: str) -> dict:
    # OpenAI chat messages carry no error flag for tool results.
    return {"messages": [
        {"role": "user", "content": "Delete the old report"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "delete_file", "arguments": '{"path": "/r/old.pdf"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": "Done, the report is deleted."},
    ]}


def test_openai_trace_judges_false_failure_handled_stays_false() -> None:
    traj = read(_openai_trace("Error: permission denied"), "openai")
    assert traj.tool_results()[0].is_error is None  # no error channel in the source
    reply = _reply(failure_handled={"pass": False, "reason": "delete failed; agent claimed success"})
    v = judge_trajectory(ScriptedModel([reply]), traj)
    assert v.item("failure_handled").passed is False
    assert v.item("failure_handled").reason == "delete failed; agent claimed success"
    assert v.passed is False and v.score == pytest.approx(4 / 5)
    assert v.reason == "1 of 5 failed: failure_handled"


def test_no_failure_and_judge_true_or_na_is_na() -> None:
    traj = read(_openai_trace("deleted"), "openai")
    for ans in (True, "n/a"):
        v = judge_trajectory(ScriptedModel([_reply(failure_handled={"pass": ans, "reason": "x"})]), traj)
        assert v.item("failure_handled").passed is None
        assert v.passed is True and v.reason == "all 4 checks passed"


def test_error_pattern_marks_the_failure_like_the_metrics() -> None:
    traj = read(_openai_trace("Error: permission denied"), "openai")
    # with the run's error convention the call failed: "n/a" is then unusable and re-asked
    m = ScriptedModel([_reply(failure_handled={"pass": "n/a", "reason": "none"}),
                       _reply(failure_handled={"pass": True, "reason": "told the user"})])
    v = judge_trajectory(m, traj, error_pattern=r"^Error:")
    assert v.attempts == 2 and v.item("failure_handled").passed is True
    n = request_nonce(m.calls[0])
    assert (f"RESULT <data-{n}>delete_file</data-{n}> (id <data-{n}>c1</data-{n}>) ERROR: "
            f"<data-{n}>Error: permission denied</data-{n}>") in m.calls[0][1]["content"]
    with pytest.raises(MetricInputError, match="not a valid regular expression"):
        judge_trajectory(ScriptedModel([_reply()]), traj, error_pattern="(")


def test_error_past_the_truncation_point_is_kept_whole() -> None:
    out = "row " * 263 + "ERROR: permission denied on /r/old.pdf"  # 1,052 + 38 chars
    traj = read(_openai_trace(out), "openai")
    text = render_trajectory(traj, max_output_chars=600)
    assert "ERROR: permission denied on /r/old.pdf" in text
    # the head is kept, the middle cut with a count, the error line kept whole
    line = next(ln for ln in text.splitlines() if ln.startswith("[2] RESULT"))
    # head = 600 chars; the error line from 150 chars (600 // 4) before "ERROR" to its end
    assert line == ("[2] RESULT delete_file (id c1): " + out[:600] + "... [302 chars cut] ..."
                    + out[902:])
    assert out[902:].endswith("ERROR: permission denied on /r/old.pdf")


def test_cut_never_ends_inside_an_error_and_keeps_every_error() -> None:
    lines = [f"item {i}: ok" for i in range(200)]
    lines[3] = "item 3: failed to parse " + "P" * 40
    lines[120] = "item 120: Timeout talking to ledger"
    lines[190] = "item 190: quota exceeded XQ-9"
    out = "\n".join(lines)
    # the source says the call succeeded (is_error False), so the pattern never marks it
    # failed, but its matches are still kept when the output is cut
    traj = Trajectory(steps=(
        Step(0, "tool_call", tool_calls=(ToolCall("list_items", {}, "c1"),)),
        Step(1, "tool_result", tool_result=ToolResult("c1", "list_items", out, False))))
    text = render_trajectory(traj, max_output_chars=40, error_pattern=r"quota exceeded")
    for i in (3, 120, 190):
        assert lines[i] in text  # every error line whole, including the pattern's match
    assert "item 150: ok" not in text
    assert text.count("chars cut] ...") == 2
    total = len(out)
    kept = len(text.split("[1] RESULT", 1)[1])
    assert f"of {total} chars]" in text and kept < total
