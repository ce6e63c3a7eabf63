"""The trajectory judge asks seed 000 §3.3's five checks with the tool schemas and the
reference calls in its input, and needs a reason per item."""

from __future__ import annotations

import json

from judge_server import unfenced

from trajcheck.judges import (
    TRAJECTORY_CHECKS,
    ScriptedModel,
    judge_task_completion,
    judge_trajectory,
)
from trajcheck.judges.fencing import request_nonce
from trajcheck.model import Case, Step, ToolCall, ToolResult, Trajectory

NAMES = [n for n, _ in TRAJECTORY_CHECKS]
TOOL = {"name": "create_ticket", "description": "Open a helpdesk ticket",
        "parameters": {"type": "object", "properties": {"priority": {"enum": ["low", "high"]}},
                       "required": ["priority"]}}


def _traj() -> Trajectory:
    return Trajectory(steps=(
        Step(0, "user", "My laptop won't boot"),
        Step(1, "tool_call", tool_calls=(ToolCall("create_ticket", {"priority": "high"}, "c1"),)),
        Step(2, "tool_result", tool_result=ToolResult("c1", "create_ticket", {"id": "INC-7"}, False)),
    ), final_response="Opened INC-7.")


def _reply(reason: str = "ok") -> str:
    return json.dumps({"checks": {n: {"pass": True, "reason": reason} for n in NAMES}})


def test_the_five_checks_are_the_seeds() -> None:
    assert NAMES == ["tool_results_used", "no_unnecessary_calls", "no_unrequested_actions",
                     "failure_handled", "response_faithful"]
    q = dict(TRAJECTORY_CHECKS)
    assert "action the user did not ask for or that needed confirmation" in q["no_unrequested_actions"]
    assert "accurately reflect what actually happened" in q["response_faithful"]


def test_case_gives_request_tools_and_reference_calls() -> None:
    case = Case("c1", "Open a high-priority ticket for my laptop", tools=(TOOL,),
                expected_calls=({"name": "create_ticket", "args": {"priority": "high"}},))
    m = ScriptedModel([_reply()])
    v = judge_trajectory(m, _traj(), case)
    assert v.passed is True and v.reason == "all 4 checks passed"
    prompt = m.calls[0][1]["content"]
    n = request_nonce(m.calls[0])
    assert prompt.startswith(f"USER REQUEST: <data-{n}>Open a high-priority ticket for my laptop"
                             f"</data-{n}>\n\nAVAILABLE TOOLS:\n<data-{n}>" + json.dumps(TOOL)
                             + f"</data-{n}>\n\nREFERENCE CALLS")
    assert f'1. <data-{n}>{{"name": "create_ticket", "args": {{"priority": "high"}}' in prompt
    assert '3. "no_unrequested_actions": Did the agent take any action the user did not ask for' in prompt
    # without a case: no tools, no reference section
    m2 = ScriptedModel([_reply()])
    judge_trajectory(m2, _traj())
    p2 = m2.calls[0][1]["content"]
    assert "AVAILABLE TOOLS:\n(not given)" in p2 and "REFERENCE CALLS" not in p2
    assert unfenced(p2).startswith("USER REQUEST: My laptop won't boot")


def test_empty_reason_is_reasked_and_never_accepted() -> None:
    m = ScriptedModel([_reply(reason="  "), _reply(reason="INC-7 quoted")])
    v = judge_trajectory(m, _traj())
    assert v.attempts == 2 and v.passed is True
    assert 'check "tool_results_used" needs a non-empty one-line "reason"' in m.calls[1][-1]["content"]
    bare = json.dumps({"checks": dict.fromkeys(NAMES, True)})
    v2 = judge_trajectory(ScriptedModel([bare]), _traj(), retries=0)
    assert v2.passed is None and v2.error is not None and "must be an object" in v2.error
    no_evidence = json.dumps({"criteria": [{"criterion": "ticket opened", "met": True, "evidence": ""}]})
    v3 = judge_task_completion(ScriptedModel([no_evidence]), _traj(), criteria=["ticket opened"],
                               retries=0)
    assert v3.passed is None and 'criterion 1 needs a non-empty one-line "evidence"' in (v3.error or "")
