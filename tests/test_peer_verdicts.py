"""Each dialect's defaults as the peer's own test suite exercises them, checked against the
peer's real scorer on the same input (agentevals 0.0.9, openevals 0.2.2, DeepEval 4.3.1, all in
the main environment). The cases are written here after the kinds of case the peers' public
tests use (agentevals/openevals ``tests/test_trajectory_match.py``: the four match modes with
the default ``tool_args_match_mode="exact"``; DeepEval ``tests/test_metrics/
test_tool_correctness``: names only by default, FUNCTION vs MCP tool types); no code is copied.

Each test gives the peer's verdict and trajcheck's for the dialect's row *without* an
``args_mode`` (the row's own default is what is under test).
"""

from __future__ import annotations

import json

import pytest

from trajcheck.metrics.trajectory import lookup_mode, trajectory_match
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory


def _traj(calls):
    return Trajectory(steps=(Step(0, "user", content="q"),) + tuple(
        Step(i + 1, "tool_call", tool_calls=(c if isinstance(c, ToolCall) else ToolCall(c[0], dict(c[1])),))
        for i, c in enumerate(calls)))


def _case(ref):
    return Case(id="peer", input="q", expected_calls=tuple(ExpectedCall(n, dict(a)) for n, a in ref))


def _msgs(calls):
    out = [{"role": "user", "content": "q"}]
    for i, (n, a) in enumerate(calls):
        out.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}]})
    return out


# agentevals/openevals: default tool_args_match_mode="exact" -- a call with an extra argument
# is not the reference call; identical arguments in any order of keys are.
WEATHER = ("get_weather", {"city": "SF"})
WEATHER_EXTRA = ("get_weather", {"city": "SF", "units": "metric"})
ALERTS = ("get_alerts", {"region": "CA"})
AE_CASES = [
    # (mode, output calls, reference calls, peer verdict)
    ("strict", [WEATHER], [WEATHER], True),
    ("strict", [WEATHER_EXTRA], [WEATHER], False),          # extra argument: not equal
    ("unordered", [ALERTS, WEATHER], [WEATHER, ALERTS], True),
    ("unordered", [ALERTS, WEATHER_EXTRA], [WEATHER, ALERTS], False),
    ("superset", [WEATHER, ALERTS], [WEATHER], True),
    ("superset", [WEATHER_EXTRA, ALERTS], [WEATHER], False),
    ("subset", [WEATHER], [WEATHER, ALERTS], True),
    ("subset", [WEATHER_EXTRA], [WEATHER, ALERTS], False),
]


@pytest.mark.parametrize("pkg", ["agentevals", "openevals"])
@pytest.mark.parametrize("mode,out,ref,want", AE_CASES)
def test_agentevals_openevals_default_is_exact_argument_equality(pkg, mode, out, ref, want):
    import importlib

    ev = importlib.import_module(f"{pkg}.trajectory.match").create_trajectory_match_evaluator(
        trajectory_match_mode=mode)
    theirs = ev(outputs=_msgs(out), reference_outputs=_msgs(ref))["score"]
    assert theirs is want  # the peer's own verdict
    assert lookup_mode(mode, pkg).args_mode == "exact_keys"
    ours = trajectory_match(_traj(out), _case(ref), mode, dialect=pkg)
    assert ours.passed is want, ours.reason


# ------------------------------------------------------------------------------- DeepEval


@pytest.fixture()
def dummy_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline-dummy")  # ToolCorrectnessMetric builds a model object


def _de(called, expected, **flags):
    """(DeepEval ToolCorrectnessMetric score, trajcheck's DeepEval adapter TrajectoryMatchMetric
    score) on one LLMTestCase; calls are (name, args, type) with type FUNCTION/MCP."""
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.test_case import LLMTestCase, ToolCallType
    from deepeval.test_case import ToolCall as DTC

    from trajcheck.adapters.deepeval import TrajectoryMatchMetric

    def tc(calls):
        return [DTC(name=n, input_parameters=a, type=getattr(ToolCallType, t)) for n, a, t in calls]
    case = LLMTestCase(input="q", actual_output="x", tools_called=tc(called), expected_tools=tc(expected))
    theirs = ToolCorrectnessMetric(async_mode=False, include_reason=False, **flags).measure(case)
    ours = TrajectoryMatchMetric(**flags).measure(case)
    return theirs, ours


DE_CASES = [
    # DeepEval's default compares names only: other arguments still match
    ({}, [("lookup", {"id": 2}, "FUNCTION")], [("lookup", {"id": 1}, "FUNCTION")], 1.0),
    # tool types compared in every mode (DeepEval >= 4.1.9)
    ({}, [("lookup", {}, "MCP")], [("lookup", {}, "FUNCTION")], 0.0),
    ({}, [("lookup", {}, "MCP")], [("lookup", {}, "MCP")], 1.0),
    ({}, [("lookup", {}, "FUNCTION"), ("fetch", {}, "MCP")], [("lookup", {}, "FUNCTION"), ("fetch", {}, "FUNCTION")], 0.5),
    ({"should_exact_match": True}, [("lookup", {}, "MCP")], [("lookup", {}, "FUNCTION")], 0.0),
    ({"should_exact_match": True}, [("lookup", {"id": 2}, "MCP")], [("lookup", {"id": 1}, "MCP")], 1.0),
    ({"should_consider_ordering": True}, [("a", {}, "FUNCTION"), ("b", {}, "MCP")],
     [("a", {}, "FUNCTION"), ("b", {}, "MCP")], 1.0),
    ({"should_consider_ordering": True}, [("a", {}, "FUNCTION"), ("b", {}, "FUNCTION")],
     [("a", {}, "FUNCTION"), ("b", {}, "MCP")], 0.5),
]


@pytest.mark.parametrize("flags,called,expected,want", DE_CASES)
def test_deepeval_names_only_and_tool_types(dummy_key, flags, called, expected, want):
    theirs, ours = _de(called, expected, **flags)
    assert theirs == want  # DeepEval's own score
    if flags.get("should_consider_ordering") and 0 < want < 1:
        # DeepEval's ordering score is a graded weighted LCS; trajcheck's in_order is 0/1 (mode table)
        assert ours == 0.0
    else:
        assert ours == want


def test_deepeval_expected_calls_setting_are_function_tools(dummy_key):
    """Expected calls given as trajcheck's ``expected_calls`` setting (not DeepEval ToolCalls)
    carry no type: they are function tools, as DeepEval's ToolCall defaults to FUNCTION."""
    from deepeval.test_case import LLMTestCase, ToolCallType
    from deepeval.test_case import ToolCall as DTC

    from trajcheck.adapters.deepeval import TrajectoryMatchMetric

    mcp = LLMTestCase(input="q", actual_output="x", tools_called=[DTC(name="lookup", type=ToolCallType.MCP)],
                      metadata={"trajcheck": {"expected_calls": ["lookup"]}})
    fn = LLMTestCase(input="q", actual_output="x", tools_called=[DTC(name="lookup")],
                     metadata={"trajcheck": {"expected_calls": ["lookup"]}})
    assert TrajectoryMatchMetric().measure(mcp) == 0.0
    assert TrajectoryMatchMetric().measure(fn) == 1.0


# ------------------------------------------------------------- unrecorded arguments (args None)


def test_unrecorded_arguments_match_by_name_where_names_are_compared():
    """A call recorded with no arguments (content recording off: args None, no parse error)
    matches by name in a names-only row and never where arguments are compared; a call whose
    arguments did not parse never matches."""
    case = _case([("lookup", {"id": 1})])
    unrecorded = _traj([ToolCall("lookup", None)])
    unparsed = _traj([ToolCall("lookup", None, raw_args="{id:", args_parse_error="not JSON")])
    for mode, dialect in (("ToolCorrectness", "deepeval"), ("in_order_match_scorer", "strands")):
        assert lookup_mode(mode, dialect).args_mode == "ignore"
        assert trajectory_match(unrecorded, case, mode, dialect=dialect).score == 1.0, dialect
        assert trajectory_match(unparsed, case, mode, dialect=dialect).score == 0.0, dialect
    assert trajectory_match(unrecorded, case, "superset", dialect="agentevals").passed is False
    assert trajectory_match(unrecorded, case, "superset").passed is False  # neutral: arguments compared
    assert trajectory_match(unrecorded, case, "superset", args_mode="ignore").passed is True
