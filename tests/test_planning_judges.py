"""Plan judges (seed 000 §5.2): plan quality's "adapts when tool outputs change" check, and plan
adherence counting explicitly revised steps, with scripted judge models.

The scripted judge reads the prompt it is sent, as a model would: it passes "adapts" only
when the prompt shows the plan revised after the tool output that broke it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from judge_server import unfenced

from trajcheck.judges import (
    PLAN_QUALITY_CHECKS,
    ScriptedModel,
    ajudge_plan_quality,
    judge_plan_adherence,
    judge_plan_quality,
)
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory

TASK = "Book the cheapest flight from SFO to Paris on 2026-07-18 and email me the confirmation."
PLAN = ["search flights SFO to CDG on 2026-07-18", "book the cheapest flight",
        "email the confirmation"]
REVISED = ["search flights SFO to CDG on 2026-07-19", "book the cheapest flight",
           "email the confirmation"]


def _run(*, adapts: bool) -> Trajectory:
    day2 = "2026-07-19" if adapts else "2026-07-18"
    return Trajectory(steps=(
        Step(0, "user", TASK),
        Step(1, "tool_call", tool_calls=(ToolCall("search_flights", {"origin": "SFO", "dest": "CDG",
                                                                     "date": "2026-07-18"}, "c1"),)),
        Step(2, "tool_result", tool_result=ToolResult("c1", "search_flights", "[]", False)),
        *((Step(3, "assistant", "No flights on the 18th; I will search the 19th instead."),)
          if adapts else ()),
        Step(4, "tool_call", tool_calls=(ToolCall("book_flight", {"date": day2}, "c2"),)),
        Step(5, "tool_result", tool_result=ToolResult("c2", "book_flight", "BK-1", False)),
    ), final_response="Booked BK-1.")


def _judge(messages: list[dict[str, str]]) -> str:
    prompt = unfenced(messages[1]["content"])
    checks: dict[str, Any] = {n: {"pass": True, "reason": f"{n} holds"} for n, _ in PLAN_QUALITY_CHECKS
                              if n != "adapts"}
    if '"adapts"' in prompt:
        shown = "RESULT search_flights (id c1): []" in prompt
        revised = "revision 1" in prompt
        checks["adapts"] = ({"pass": "n/a", "reason": ""} if not shown else
                            {"pass": True, "reason": "searched the 19th after the empty result"}
                            if revised else
                            {"pass": False, "reason": "booked the 18th after no flights were found"})
    return json.dumps({"checks": checks})


def test_adapts_passes_when_the_plan_is_revised_after_the_empty_result() -> None:
    m = ScriptedModel(_judge)
    v = judge_plan_quality(m, PLAN, task=TASK, traj=_run(adapts=True), revisions=[REVISED],
                           tools=["search_flights", "book_flight", "send_email"])
    assert v.passed is True and v.score == 1.0 and len(v.items) == 5
    assert v.item("adapts").passed is True
    prompt = unfenced(m.calls[0][1]["content"])
    assert "RESULT search_flights (id c1): []" in prompt
    assert "revision 1 (emitted later, during execution):\n1. search flights SFO to CDG on 2026-07-19" in prompt
    assert "Available tools: search_flights, book_flight, send_email" in prompt


def test_adapts_fails_when_the_agent_carries_on_as_written() -> None:
    v = judge_plan_quality(ScriptedModel(_judge), PLAN, task=TASK, traj=_run(adapts=False))
    assert v.passed is False and v.score == pytest.approx(4 / 5)
    assert v.item("adapts").passed is False
    assert v.item("adapts").reason == "booked the 18th after no flights were found"
    assert v.reason == "1 of 5 failed: adapts"


def test_adapts_is_na_without_an_execution_or_a_changed_output() -> None:
    m = ScriptedModel(_judge)
    v = judge_plan_quality(m, PLAN, task=TASK)
    # not asked at all: the four plan-only checks decide
    assert '"adapts"' not in m.calls[0][1]["content"]
    assert v.item("adapts").passed is None and v.item("adapts").reason.startswith("n/a: no execution")
    assert v.passed is True and v.score == 1.0
    # an execution where no output contradicted the plan: the judge says n/a
    calm = Trajectory(steps=(Step(0, "user", TASK),), final_response="Booked.")
    v2 = judge_plan_quality(ScriptedModel(_judge), PLAN, traj=calm)  # task from the trajectory
    assert v2.item("adapts").passed is None and v2.score == 1.0
    # the async twin asks the same
    v3 = asyncio.run(ajudge_plan_quality(ScriptedModel(_judge), PLAN, task=TASK,
                                         traj=_run(adapts=False)))
    assert v3.item("adapts").passed is False


def test_adapts_na_is_only_for_adapts() -> None:
    bad = json.dumps({"checks": {n: {"pass": "n/a", "reason": "x"} for n, _ in PLAN_QUALITY_CHECKS}})
    v = judge_plan_quality(ScriptedModel([bad] * 3), PLAN, task=TASK, traj=_run(adapts=True))
    assert v.passed is None and 'check "complete"' in (v.error or "")


def test_adherence_counts_explicitly_revised_steps() -> None:
    reply = json.dumps({"steps": [
        {"step": PLAN[0], "status": "revised", "evidence": "said it would search the 19th instead"},
        {"step": PLAN[1], "status": "executed", "evidence": "book_flight BK-1"},
        {"step": PLAN[2], "status": "not_followed", "evidence": "no email was sent"}],
        "unplanned_actions": []})
    m = ScriptedModel([reply])
    v = judge_plan_adherence(m, PLAN, _run(adapts=True), revisions=[REVISED])
    # executed or revised: 2 of 3 steps (seed 000 §5.2)
    assert v.extra == {"steps_followed": 2, "steps_revised": [PLAN[0]], "n_steps": 3,
                       "unplanned_actions": []}
    assert v.score == pytest.approx(2 / 3) and v.passed is False
    assert v.item(PLAN[0]).reason == "revised: said it would search the 19th instead"
    prompt = m.calls[0][1]["content"]
    assert '"revised" (the agent explicitly changed or dropped the step' in prompt
    assert "revision 1 (emitted later" in prompt
    # an unknown status is re-asked, then an error verdict
    odd = json.dumps({"steps": [{"step": s, "status": "partly", "evidence": "e"} for s in PLAN]})
    v2 = judge_plan_adherence(ScriptedModel([odd] * 3), PLAN, _run(adapts=True))
    assert v2.passed is None and "must be one of executed, revised, not_followed" in (v2.error or "")
