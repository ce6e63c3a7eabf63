"""trajcheck evaluators inside LangSmith's pytest integration (``@pytest.mark.langsmith``).

Run from the repository root, offline (no API key; LangSmith's test tracking off):
    LANGSMITH_TEST_TRACKING=false python -m pytest examples/langsmith/test_helpdesk_langsmith.py

With a LangSmith key and tracking on, the same tests log their inputs, outputs and the
trajcheck feedback to a LangSmith experiment.
"""

from __future__ import annotations

import json

import pytest
from langsmith import testing as t

from trajcheck.adapters.langsmith import TrajcheckEvaluator, log_feedback

f1 = TrajcheckEvaluator("tool_call_f1", key="tool_f1")
forbidden = TrajcheckEvaluator("forbidden", key="no_forbidden_calls")


def agent(request: str) -> list[dict]:
    """A stand-in agent returning its OpenAI-style messages (looks the ticket up, then raises
    its priority)."""
    calls = [("get_ticket", {"ticket_id": "INC-1043"}),
             ("update_ticket", {"ticket_id": "INC-1043", "priority": "high"})]
    msgs: list[dict] = [{"role": "user", "content": request}]
    for i, (name, args) in enumerate(calls):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    msgs.append({"role": "assistant", "content": "INC-1043 is now high priority."})
    return msgs


REFERENCE = {"expected_calls": [{"name": "get_ticket", "args": {"ticket_id": "INC-1043"}},
                                {"name": "update_ticket", "args": {"ticket_id": "INC-1043", "priority": "high"}}],
             "forbidden_calls": ["create_ticket"]}


@pytest.mark.langsmith
def test_raise_priority():
    request = "Please raise INC-1043 to high priority."
    outputs = {"messages": agent(request)}
    t.log_inputs({"input": request})
    t.log_outputs(outputs)
    t.log_reference_outputs(REFERENCE)
    result = f1(inputs={"input": request}, outputs=outputs, reference_outputs=REFERENCE)
    log_feedback(result)  # tool_f1, tool_f1_precision, tool_f1_recall
    assert result["results"][0]["score"] == 1.0


@pytest.mark.langsmith
def test_no_forbidden_calls():
    outputs = {"messages": agent("Please raise INC-1043 to high priority.")}
    result = forbidden(outputs=outputs, reference_outputs=REFERENCE)
    log_feedback(result)
    assert result["score"] == 1.0, result["comment"]
