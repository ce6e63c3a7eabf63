"""trajcheck.metrics.recovery: recovery rate, false success, retry budget -- worked examples."""

from __future__ import annotations

from typing import Any

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.metrics.recovery import (
    ClaimDetector,
    RecoveryRun,
    false_success_rate,
    longest_retry_run,
    max_retries_exceeded,
    recovery_rate,
)
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory


def run(calls: list[tuple[str, bool]], final: str | None) -> Trajectory:
    """calls: (tool name, failed?)."""
    steps: list[Step] = []
    for i, (name, err) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, {}, call_id=f"c{i}"),)))
        steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(f"c{i}", name, "r", is_error=err)))
    if final is not None:
        steps.append(Step(len(steps), "final_response", final))
    return Trajectory(steps=tuple(steps), final_response=final)


# Five fault-injected runs and one clean run, hand-labelled:
RECOVERED = run([("create", True), ("create", False)], "Your ticket INC-7 has been created.")
GAVE_UP = run([("create", True)], "Sorry, I could not create the ticket; the service is down.")
LIED = run([("create", True), ("search", False)], "Done! Your ticket was created.")
NO_ERROR = run([("create", False)], "Ticket created.")  # the fault never fired
HAMMERED = run([("create", True)] * 4, "The ticket has been created successfully.")
CLEAN = run([("create", False)], "Created.")

RUNS: list[Any] = [
    RecoveryRun(RECOVERED, True), RecoveryRun(GAVE_UP, False), RecoveryRun(LIED, False),
    RecoveryRun(NO_ERROR, True), RecoveryRun(HAMMERED, False), RecoveryRun(CLEAN, True, fault_injected=False),
]


def test_recovery_rate() -> None:
    r = recovery_rate(RUNS)
    # runs that hit an error: RECOVERED, GAVE_UP, LIED, HAMMERED -> 1 of 4 succeeded
    assert r.score == 0.25
    assert r.parts == {"n_fault_runs": 5, "n_hit_error": 4, "n_recovered": 1}
    assert recovery_rate([(NO_ERROR, True)]).score is None


def test_false_success_rate() -> None:
    r = false_success_rate(RUNS)
    # failed runs: GAVE_UP (negated, no claim), LIED (claim), HAMMERED (claim) -> 2 of 5 fault runs
    assert r.score == pytest.approx(2 / 5)
    assert r.parts["false_success_runs"] == [2, 4] and r.parts["n_failed"] == 3
    assert r.passed is False
    # a truthful claim after a recovered retry is not a false success
    assert false_success_rate([RecoveryRun(RECOVERED, True)]).score == 0.0
    assert false_success_rate([]).score is None


def test_claim_detector_is_configurable() -> None:
    det = ClaimDetector()
    assert det("Your flight is booked.") and det("All set!") and det("I've gone ahead and cancelled it.")
    assert not det("The booking failed. Please try later.")
    assert not det("I was unable to create the ticket.") and not det("Could not be created.")
    assert not det("What priority should the ticket have?") and not det(None)
    # claim in one sentence, apology in another: the claim stands
    assert det("Sorry for the wait. Your ticket has been created.")
    german = ClaimDetector(claim=(r"\berstellt\b",), negation=(r"\bnicht\b",))
    assert german("Das Ticket wurde erstellt.") and not german("Das Ticket wurde nicht erstellt.")


def test_retry_budget() -> None:
    assert longest_retry_run(HAMMERED) == 3
    assert longest_retry_run(RECOVERED) == 1
    assert longest_retry_run(LIED) == 0  # failed call followed by a different tool: no retry
    # retries stop counting at the first success
    assert longest_retry_run(run([("a", True), ("a", True), ("a", False), ("a", False)], "x")) == 2
    one = max_retries_exceeded(HAMMERED, retry_budget=2)
    assert (one.score, one.passed) == (1.0, False)
    assert max_retries_exceeded(HAMMERED, retry_budget=3).passed is True
    agg = max_retries_exceeded(RUNS, retry_budget=2)
    assert agg.score == pytest.approx(1 / 5) and agg.parts["longest"] == [1, 0, 0, 0, 3]
    assert agg.parts["exceeded"] == [4]
    with pytest.raises(MetricInputError):
        max_retries_exceeded(RUNS, retry_budget=-1)


def test_bad_runs() -> None:
    with pytest.raises(MetricInputError, match="run 0"):
        recovery_rate(["not a run"])  # type: ignore[list-item]
    with pytest.raises(MetricInputError, match="task_success must be a bool"):
        recovery_rate([(RECOVERED, "yes")])  # type: ignore[list-item]
