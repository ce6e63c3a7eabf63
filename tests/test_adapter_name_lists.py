"""A list-of-names setting given the wrong type is a DatasetError naming the field, in every
adapter (DeepEval, RAGAS, LangSmith) and in the promptfoo assertion -- never a string split
into one-letter tool names that lets a forbidden call pass."""

from __future__ import annotations

import warnings

import pytest

from trajcheck.errors import DatasetError

pytest.importorskip("deepeval")
pytest.importorskip("ragas")
pytest.importorskip("langsmith")

FIELD_MSG = r"case '.*': malformed field '{f}' \(must be a list of tool names, got str 'cancel_booking'\)"


@pytest.mark.parametrize("field", ["forbidden_calls", "optional_calls"])
def test_deepeval_metric_setting(field: str) -> None:
    from deepeval.test_case import LLMTestCase
    from deepeval.test_case import ToolCall as DTC

    from trajcheck.adapters.deepeval import ForbiddenCallsMetric

    tc = LLMTestCase(input="cancel my trip", actual_output="done",
                     tools_called=[DTC(name="cancel_booking", input_parameters={"id": "B1"})],
                     expected_tools=[])
    with pytest.raises(DatasetError, match=FIELD_MSG.format(f=field)):
        ForbiddenCallsMetric(**{field: "cancel_booking"}).measure(tc)
    # the same name in a list is read as one tool: the forbidden call is caught
    m = ForbiddenCallsMetric(forbidden_calls=["cancel_booking"])
    m.measure(tc)
    assert m.score == 0.0


def test_ragas_metric_setting() -> None:
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage
    from ragas.messages import ToolCall as RTC

    from trajcheck.adapters import ragas as ar

    s = MultiTurnSample(user_input=[HumanMessage(content="cancel my trip"),
                                    AIMessage(content="", tool_calls=[RTC(name="cancel_booking", args={})])],
                        reference_tool_calls=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DatasetError, match=FIELD_MSG.format(f="forbidden_calls")):
            ar.TrajcheckForbiddenCalls(forbidden_calls="cancel_booking").multi_turn_score(s)
        assert ar.TrajcheckForbiddenCalls(forbidden_calls=["cancel_booking"]).multi_turn_score(s) == 0.0


def test_langsmith_evaluator_setting() -> None:
    from trajcheck.adapters.langsmith import TrajcheckEvaluator

    out = {"messages": [{"role": "user", "content": "cancel my trip"},
                        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {
                            "name": "cancel_booking", "arguments": "{}"}}]}]}
    with pytest.raises(DatasetError, match=FIELD_MSG.format(f="forbidden_calls")):
        TrajcheckEvaluator("forbidden", forbidden_calls="cancel_booking").compute(outputs=out)
    assert TrajcheckEvaluator("forbidden", forbidden_calls=["cancel_booking"]).compute(outputs=out).score == 0.0


def test_promptfoo_assertion_setting() -> None:
    # promptfoo YAML allows one name written as a string (read as a one-item list, said in its
    # docs); a non-string item is an error naming the field
    from promptfoo_provider.assertion import get_assert

    out = {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "cancel_booking", "arguments": "{}"}}]}
    ctx = {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
           "config": {"metric": "forbidden", "forbidden_calls": ["cancel_booking", 7]}}
    r = get_assert(out, ctx)
    assert r["pass"] is False
    assert "forbidden_calls" in r["reason"] and "item 1 must be a non-empty string" in r["reason"]
    ctx["config"]["forbidden_calls"] = "cancel_booking"
    r = get_assert(out, ctx)
    assert r["pass"] is False and r["score"] == 0.0 and "cancel_booking" in r["reason"]
