"""Formulas both scoring paths call (issue 31): the failed-result test, the token total, the
unrecovered failures of a false success, the run id and recorded group (metrics.formulas),
and the outcome verdict, its reason lines and the closest-call ranking (metrics.outcome).
Values are hand-computed."""

from __future__ import annotations

from trajcheck.match.matching import is_failed
from trajcheck.metrics.formulas import (
    recorded_group,
    result_failed,
    run_id_of,
    unrecovered_failures,
    usage_total,
)
from trajcheck.metrics.outcome import (
    call_closeness,
    closest_call_note,
    outcome_problems,
    outcome_verdict,
)
from trajcheck.metrics.recovery import is_false_success
from trajcheck.metrics.sequences import error_recovery
from trajcheck.model import ToolResult, Trajectory, Usage
from trajcheck.read.traces.native_facts import line_run


def test_result_failed() -> None:
    assert result_failed(True, None) is True
    assert result_failed(False, "boom") is True  # error text wins over the flag
    assert result_failed(None, "") is False  # no error channel, no text: not a failure
    assert result_failed(False, None) is False
    assert result_failed("true", None) is False  # only the flag True counts
    assert is_failed(ToolResult(call_id="a", name="t", is_error=None, error="x")) is True
    assert is_failed(None) is False


def test_usage_total() -> None:
    assert usage_total(None, 100, 20) == 120
    assert usage_total(7, 100, 20) == 7  # a stated total is the total
    assert usage_total(None, None, 4) == 4
    assert usage_total(None, None, None) is None
    assert Usage(input_tokens=3).total == 3
    assert Usage().total is None


def test_native_line_tokens_use_usage_total() -> None:
    # step totals 100 + 20 = 120 and the stated 50; no run total: 120 + 50 = 170
    line = {"steps": [
        {"index": 0, "kind": "tool_call", "usage": {"input_tokens": 100, "output_tokens": 20},
         "tool_calls": [{"name": "t", "args": {}, "call_id": "a"}]},
        {"index": 1, "kind": "tool_result", "usage": {"total_tokens": 50, "input_tokens": 1},
         "tool_result": {"call_id": "a", "name": "t", "output": "ok", "is_error": False,
                         "error": "refused"}}]}
    r = line_run(line)
    assert r is not None
    assert r.tokens == 170
    assert r.failed == [True]  # error text with is_error False: failed (result_failed)
    line["total_usage"] = {"input_tokens": 9, "output_tokens": 1}
    r = line_run(line)
    assert r is not None and r.tokens == 10


def test_unrecovered_failures() -> None:
    assert unrecovered_failures(["a", "b", "a", "c"], [True, True, False, False]) == ["b"]
    assert unrecovered_failures(["b", "a", "b", "a"], [True, True, True, True]) == ["a", "b"]
    assert unrecovered_failures([], []) == []
    # a tool name is a name, not an fnmatch pattern: "get[x]" succeeded after failing
    assert unrecovered_failures(["get[x]", "get[x]"], [True, False]) == []


def _run(name: str, reply: str) -> Trajectory:
    return Trajectory.from_dict({"final_response": reply, "steps": [
        {"index": 0, "kind": "tool_call", "tool_calls": [{"name": name, "call_id": "a"}]},
        {"index": 1, "kind": "tool_result",
         "tool_result": {"call_id": "a", "name": name, "is_error": True}},
        {"index": 2, "kind": "tool_call", "tool_calls": [{"name": name, "call_id": "b"}]},
        {"index": 3, "kind": "tool_result",
         "tool_result": {"call_id": "b", "name": name, "is_error": False}}]})


def test_false_success_reads_failed_tools_by_name() -> None:
    # the refund failed, was retried and succeeded: a claim is true, whatever the name holds
    for name in ("refund", "refund[v2]"):
        run = _run(name, "Your refund has been processed.")
        assert error_recovery(run).parts["unsatisfied_actions"] == []
        assert is_false_success((run, False)) is False
    never = Trajectory.from_dict({"final_response": "Your refund has been processed.", "steps": [
        {"index": 0, "kind": "tool_call", "tool_calls": [{"name": "refund[v2]", "call_id": "a"}]},
        {"index": 1, "kind": "tool_result",
         "tool_result": {"call_id": "a", "name": "refund[v2]", "is_error": True}}]})
    assert error_recovery(never).parts["unsatisfied_actions"] == ["refund[v2]"]
    assert is_false_success((never, False)) is True


def test_run_id_and_recorded_group() -> None:
    assert run_id_of("r7", "c", 2) == "r7"
    assert run_id_of(None, "c", None) == "c-0"
    assert run_id_of("", "c", 3) == "c-3"
    assert run_id_of(5, "c", 1) == "5"
    assert recorded_group(None, "c") is None
    assert recorded_group("c", "c") is None
    assert recorded_group(12, "c") == "12"
    assert recorded_group(12, "12") is None  # the same id as text


def test_outcome_verdict_and_problems() -> None:
    assert outcome_verdict(iter(()), 0, "all 2 made") == (True, "all 2 made")
    assert outcome_verdict(["p1"], 1, "m") == (False, "p1")
    assert outcome_verdict(["p1", "p2", "p3"], 3, "m") == (False, "p1 (and 2 more)")
    lines = list(outcome_problems("5", [0], [3], ["book"], lambda j: "the tool was never called",
                                  ["a", "b", "c", "cancel"], [{}, {}, {}, {"id": 1}]))
    assert lines == ["case '5': expected call 0 (book) not matched: the tool was never called",
                     "case '5': unexpected state-changing call 3 of the run: cancel {'id': 1}"]
    # lazy: the verdict reads the first line only, so only the first note is asked for
    asked: list[int] = []

    def why(j: int) -> str:
        asked.append(j)
        return f"note {j}"
    ok, reason = outcome_verdict(outcome_problems("5", [0, 1], [], ["x", "y"], why, [], []), 2, "m")
    assert (ok, reason, asked) == (False, "case '5': expected call 0 (x) not matched: note 0 (and 1 more)", [0])


def test_call_closeness() -> None:
    exp = {"a": 1, "b": "x", "c": [1, 2], "d": True, "e": 5}
    # a: 1 == 1.0 (numbers by value), b, c equal; d: an int is not a bool; e absent
    assert call_closeness(exp, {"a": 1.0, "b": "x", "c": [1, 2], "d": 1}) == 3
    assert call_closeness(exp, {"b": "y", "d": True, "e": 5}) == 2
    assert call_closeness(exp, None) == -1
    assert call_closeness(exp, "not json") == -1


def test_closest_call_note() -> None:
    names = ["book", "book", "get"]
    args = [{"id": 1}, {"id": 2}, {}]

    def note(name, eargs, unmatched, failed, explain=lambda i: f"diff {i}"):  # type: ignore[no-untyped-def]
        return closest_call_note(name, eargs, unmatched, names, args, failed, explain)

    assert note("send", {}, set(), None) == "the tool was never called"
    assert note("book", {"id": 2}, {0}, None) == "closest call 1 of the run differs: diff 1"
    assert note("book", {"id": 3}, {1}, None) == "closest call 1 of the run differs: diff 1"  # tie: unpaired first
    assert note("book", {"id": 3}, set(), None) == "closest call 0 of the run differs: diff 0"  # then earliest
    assert note("book", {"id": 2}, set(), [False, True, False]) == "closest call 0 of the run differs: diff 0"
    assert (note("book", {"id": 2}, set(), [True, True, False])
            == "every call of the tool failed (calls 0, 1 of the run)")
    assert note("get", None, set(), [False, False, True]) == "the call of the tool failed (call 2 of the run)"
    assert (note("book", {"id": 2}, set(), None, lambda i: None)
            == "call 1 of the run matches it but is paired with another expected call")
