"""A list-of-names setting given the wrong type is a DatasetError naming the field, in every
host adapter (DeepEval, RAGAS, LangSmith, MLflow, Inspect AI, pydantic-evals) when the
metric or evaluator is MADE, before any test case, and in the promptfoo assertion before the
output is read -- never a string split into one-letter tool names that lets a forbidden call
pass."""

from __future__ import annotations

import warnings

import pytest

from trajcheck.errors import DatasetError

pytest.importorskip("deepeval")
pytest.importorskip("ragas")
pytest.importorskip("langsmith")

#: (settings, the message part naming the field) -- case fields and list-of-names options
BAD = [
    ({"forbidden_calls": "cancel_booking"},
     "malformed field 'forbidden_calls' (must be a list of tool names, got str 'cancel_booking')"),
    ({"optional_calls": "search_docs"},
     "malformed field 'optional_calls' (must be a list of tool names, got str 'search_docs')"),
    ({"optional_calls": ["search_docs", 3]},
     "malformed field 'optional_calls' (item 1 must be a non-empty string (tool names), got int 3)"),
    ({"precedence": [["get_ticket"]]},
     "malformed field 'precedence' (item 0 must be a pair [A, B] of tool names, got list ['get_ticket'])"),
    ({"response_must_include": "ticket ID"},
     "malformed field 'response_must_include' (must be a list of strings, got str 'ticket ID')"),
    ({"ignore": "created_at"}, "ignore must be list or tuple, got str 'created_at'"),
    ({"id_args": ["ticket_id", 7]}, "id_args item 1 must be a non-empty string, got 7"),
]
IDS = ["forbidden_str", "optional_str", "optional_item", "precedence_pair", "response_str",
       "ignore_str", "id_args_item"]


def _raises(where: str, msg: str):  # noqa: ANN202
    return pytest.raises(DatasetError, match=rf"^{where}(?: settings)?: " + _re(msg) + "$")


def _re(s: str) -> str:
    import re

    return re.escape(s)


@pytest.mark.parametrize(("settings", "msg"), BAD, ids=IDS)
def test_deepeval_metrics_check_at_construction(settings: dict, msg: str) -> None:
    from trajcheck.adapters.deepeval import (
        ConversationalTrajcheckMetric,
        ForbiddenCallsMetric,
        TrajcheckMetric,
    )

    with _raises("TrajcheckMetric", msg):
        TrajcheckMetric("tool_call_f1", **settings)
    with _raises("ForbiddenCallsMetric", msg):
        ForbiddenCallsMetric(**settings)
    with _raises("ConversationalTrajcheckMetric", msg):
        ConversationalTrajcheckMetric("tool_call_f1", **settings)


@pytest.mark.parametrize(("settings", "msg"), BAD, ids=IDS)
def test_ragas_metrics_check_at_construction(settings: dict, msg: str) -> None:
    from trajcheck.adapters import ragas as ar

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _raises("TrajcheckForbiddenCalls", msg):
            ar.TrajcheckForbiddenCalls(**settings)
        with _raises("TrajcheckCollectionsMetric", msg):
            ar.TrajcheckCollectionsMetric("forbidden_calls", **settings)


@pytest.mark.parametrize(("settings", "msg"), BAD, ids=IDS)
def test_langsmith_evaluator_checks_at_construction(settings: dict, msg: str) -> None:
    from trajcheck.adapters.langsmith import TrajcheckEvaluator

    with _raises("TrajcheckEvaluator", msg):
        TrajcheckEvaluator("forbidden", **settings)


@pytest.mark.parametrize(("settings", "msg"), BAD, ids=IDS)
def test_make_spec_hosts_check_at_construction(settings: dict, msg: str) -> None:
    # MLflow's TrajcheckScorer, Inspect AI's trajcheck_scorer and pydantic-evals'
    # TrajcheckEvaluator are all built by _spec.make_spec; each real class is checked below
    # when its package is installed
    from trajcheck.adapters import _spec

    with _raises("TrajcheckScorer", msg):
        _spec.make_spec("forbidden_calls", "TrajcheckScorer", **settings)
    try:
        from trajcheck.adapters.mlflow import TrajcheckScorer
    except ImportError:
        pass
    else:
        with _raises("TrajcheckScorer", msg):
            TrajcheckScorer("forbidden_calls", **settings)
    try:
        from trajcheck.adapters.inspect_ai import trajcheck_scorer
    except ImportError:
        pass
    else:
        with _raises("trajcheck_scorer", msg):
            trajcheck_scorer("forbidden_calls", **settings)
    try:
        from trajcheck.adapters.pydantic_evals import TrajcheckEvaluator
    except ImportError:
        pass
    else:
        opts = {k: v for k, v in settings.items() if k in ("ignore", "id_args")}
        with _raises("TrajcheckEvaluator", msg):
            TrajcheckEvaluator(metric="forbidden_calls", settings={k: v for k, v in settings.items()
                                                                   if k not in opts}, **opts)


def test_the_same_names_in_a_list_are_one_tool_each() -> None:
    # the right type is read as tool names: the forbidden call is caught in every host
    from deepeval.test_case import LLMTestCase
    from deepeval.test_case import ToolCall as DTC
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage
    from ragas.messages import ToolCall as RTC

    from trajcheck.adapters import ragas as ar
    from trajcheck.adapters.deepeval import ForbiddenCallsMetric
    from trajcheck.adapters.langsmith import TrajcheckEvaluator

    tc = LLMTestCase(input="cancel my trip", actual_output="done",
                     tools_called=[DTC(name="cancel_booking", input_parameters={"id": "B1"})], expected_tools=[])
    m = ForbiddenCallsMetric(forbidden_calls=["cancel_booking"])
    m.measure(tc)
    assert m.score == 0.0
    s = MultiTurnSample(user_input=[HumanMessage(content="cancel my trip"),
                                    AIMessage(content="", tool_calls=[RTC(name="cancel_booking", args={})])],
                        reference_tool_calls=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ar.TrajcheckForbiddenCalls(forbidden_calls=["cancel_booking"]).multi_turn_score(s) == 0.0
    out = {"messages": [{"role": "user", "content": "cancel my trip"},
                        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {
                            "name": "cancel_booking", "arguments": "{}"}}]}]}
    assert TrajcheckEvaluator("forbidden", forbidden_calls=["cancel_booking"]).compute(outputs=out).score == 0.0


def test_per_test_case_settings_are_still_checked_when_scored() -> None:
    # settings in a test case's metadata can only be read with the case: a DatasetError then
    from deepeval.test_case import LLMTestCase
    from deepeval.test_case import ToolCall as DTC

    from trajcheck.adapters.deepeval import ForbiddenCallsMetric

    tc = LLMTestCase(input="cancel my trip", actual_output="done",
                     tools_called=[DTC(name="cancel_booking", input_parameters={})], expected_tools=[],
                     metadata={"trajcheck": {"forbidden_calls": "cancel_booking"}})
    with pytest.raises(DatasetError, match=r"malformed field 'forbidden_calls' \(must be a list of tool names"):
        ForbiddenCallsMetric().measure(tc)


def test_promptfoo_assertion_config_is_checked_before_the_output() -> None:
    # promptfoo YAML allows one name written as a string (read as a one-item list, said in its
    # docs); a non-string item is an error naming the field -- even when the provider
    # returned nothing, so a bad config is found on the first row whatever the agent did
    from promptfoo_provider.assertion import get_assert

    out = {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "cancel_booking", "arguments": "{}"}}]}
    for cfg, words in ((["cancel_booking", 7], "item 1 must be a non-empty string"),):
        for output in (out, None):
            ctx = {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
                   "config": {"metric": "forbidden", "forbidden_calls": cfg}}
            r = get_assert(output, ctx)
            assert r["pass"] is False and r["score"] == 0.0
            assert "forbidden_calls" in r["reason"] and words in r["reason"], r["reason"]
    for key, bad, words in (("ignore", "created_at", "ignore must be list or tuple"),
                            ("id_args", ["x", 1], "id_args item 1 must be a non-empty string"),
                            ("precedence", [["a"]], "must be a pair [A, B] of tool names")):
        ctx = {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
               "config": {"metric": "forbidden", "forbidden_calls": ["cancel_booking"], key: bad}}
        r = get_assert(None, ctx)
        assert r["pass"] is False and words in r["reason"] and key in r["reason"], r["reason"]
    ctx = {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
           "config": {"metric": "forbidden", "forbidden_calls": "cancel_booking"}}
    r = get_assert(out, ctx)
    assert r["pass"] is False and r["score"] == 0.0 and "cancel_booking" in r["reason"]
