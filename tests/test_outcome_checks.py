"""Seed 001's expected_outcome final_state (last tool observation) and max_steps are scored as
part of the run's outcome: in run_outcome (eval, run, every host's task_success) and in the
composite's own outcome; bad values are DatasetErrors naming the case."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from trajcheck.errors import DatasetError
from trajcheck.metrics.composite import score_trajectory
from trajcheck.metrics.outcome_checks import check_last_observation, check_step_budget
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory
from trajcheck.read.eval_case import case_from_eval_case
from trajcheck.score.suite import evaluate, run_outcome

CASE = {"id": "fl-1", "input": "Book the cheapest economy flight from SFO to NRT next Friday",
        "expected_outcome": {"must_contain": ["confirmed"], "max_steps": 6,
                             "final_state": {"status": "confirmed"}},
        "expected_trajectory": {"required_tools": ["search_flights", "book_flight"],
                                "required_args": {"book_flight": {"flight_id": "UA837"}}}}


def run(status: object = "confirmed", *, extra_turns: int = 0, as_text: bool = False) -> Trajectory:
    booked = {"booking_id": "BK-4421", "status": status}
    calls = [("search_flights", {"origin": "SFO"}, [{"flight_id": "UA837", "price": 750}]),
             ("book_flight", {"flight_id": "UA837"}, booked)]
    steps = [Step(0, "user", CASE["input"])]
    for i, (name, args, out) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=f"c{i}"),)))
        text = json.dumps(out) if as_text else out
        steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(f"c{i}", name, text, is_error=False)))
    for _ in range(extra_turns):
        steps.append(Step(len(steps), "assistant", "still checking"))
    steps.append(Step(len(steps), "final_response", "Booking BK-4421 is confirmed."))
    return Trajectory(steps=tuple(steps), final_response="Booking BK-4421 is confirmed.",
                      metadata={"case_id": "fl-1"})


def test_run_outcome_scores_final_state_and_step_budget() -> None:
    case = case_from_eval_case(CASE)
    ok = run_outcome(run(), case)
    assert ok.passed is True and ok.parts["last_observation"] is True and ok.parts["step_budget"] is True
    # JSON text tool output (as most traces record it) is read as the object it encodes
    assert run_outcome(run(as_text=True), case).passed is True
    bad = run_outcome(run("pending"), case)
    assert bad.passed is False and bad.score == 0.0
    assert bad.reason == "task failed: last tool observation: 'status' is 'pending', expected 'confirmed'"
    # 3 agent turns + 4 more = 7 > 6
    long = run_outcome(run(extra_turns=4), case)
    assert long.passed is False and long.reason == "task failed: 7 steps, over the budget of 6"
    assert run_outcome(run(extra_turns=3), case).passed is True  # 6 steps: within


def test_eval_and_composite_use_the_checks() -> None:
    case = case_from_eval_case(CASE)
    good, bad = run(), replace(run("pending"), metadata={"case_id": "fl-1", "trial": 1})
    sc = evaluate([good, bad], [case], n_boot=50)
    assert [r.success for r in sc.runs] == [True, False]
    assert "'status' is 'pending'" in (sc.runs[1].failure_reason or "")
    # the composite's own outcome (no outcome given) includes them too: 0.5 lost on the outcome
    assert score_trajectory(good, case).parts["outcome"] == 1.0
    assert score_trajectory(bad, case).parts["outcome"] == 0.0


def test_equality_is_typed_and_missing_keys_read_as_none() -> None:
    t = run(True)
    assert check_last_observation(t, {"status": True}).passed is True
    r = check_last_observation(t, {"status": 1})  # True is not 1 (trajcheck's exact matcher)
    assert r.passed is False and r.reason == "last tool observation: 'status' is True, expected 1"
    assert check_last_observation(t, {"refund_id": None}).passed is True  # absent: None, as dict.get
    two = check_last_observation(t, {"status": False, "booking_id": "BK-1", "x": None})
    assert (two.score, two.parts["checks"]) == (1 / 3, {"status": False, "booking_id": False, "x": True})
    assert two.reason.endswith("(and 1 more)")


def test_no_observation_or_non_object_fails_every_key() -> None:
    empty = Trajectory(steps=(Step(0, "final_response", "done"),), final_response="done")
    r = check_last_observation(empty, {"status": None})
    assert r.passed is False and r.reason == "the run has no tool observation"
    listed = Trajectory(steps=(Step(0, "tool_result", tool_result=ToolResult("c", "search", [1, 2])),))
    r = check_last_observation(listed, {"status": "x"})
    assert r.passed is False and r.reason == "the last tool observation is not an object (list)"
    assert check_last_observation(empty, {}).passed is True


def test_bad_values_are_dataset_errors_naming_the_case() -> None:
    t = run()
    with pytest.raises(DatasetError, match="max_steps must be an int >= 0, got '12'"):
        check_step_budget(t, "12")  # type: ignore[arg-type]
    # at load time, from the seed's suite shape
    for bad_outcome, msg in (({"max_steps": -1}, "expected_outcome.max_steps must be an int >= 0, got -1"),
                             ({"max_steps": True}, "expected_outcome.max_steps must be an int >= 0, got True"),
                             ({"final_state": ["status"]}, "expected_outcome.final_state must be an object")):
        with pytest.raises(DatasetError, match=r"case 'fl-1': " + msg.replace(".", r"\.")):
            case_from_eval_case({**CASE, "expected_outcome": bad_outcome})
    # and at scoring time, for metadata written by hand
    case = case_from_eval_case(CASE)
    bad = replace(case, metadata={**case.metadata, "expected_last_observation": ["status"]})
    with pytest.raises(DatasetError, match=r"case 'fl-1': final_state must be an object"):
        run_outcome(t, bad)
    bad = replace(case, metadata={**case.metadata, "outcome_max_steps": 2.5})
    with pytest.raises(DatasetError, match=r"case 'fl-1': expected_outcome.max_steps must be an int >= 0, got 2.5"):
        run_outcome(t, bad)


@pytest.mark.parametrize("key", ["required_tools", "tool_order", "forbidden_tools"])
def test_seed001_name_lists_given_a_string_are_dataset_errors(key: str) -> None:
    row = {**CASE, "expected_trajectory": {**CASE["expected_trajectory"], key: "search_flights"}}
    with pytest.raises(DatasetError, match=rf"case 'fl-1': expected_trajectory.{key} must be a list of "
                                           r"tool names, got str 'search_flights'"):
        case_from_eval_case(row)
    row["expected_trajectory"][key] = ["search_flights", 3]
    with pytest.raises(DatasetError, match=rf"expected_trajectory.{key} must be a list of tool names"):
        case_from_eval_case(row)
