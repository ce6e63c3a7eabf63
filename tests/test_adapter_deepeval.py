"""trajcheck.adapters.deepeval against the real DeepEval 4.3 (offline, no API key).

Each metric's score and reason are compared with the core function called directly on the
same (Trajectory, Case) built by hand, plus hand-computed numbers.
"""

from __future__ import annotations

import os
import warnings

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.pop("OPENAI_API_KEY", None)

deepeval = pytest.importorskip("deepeval")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.errors import MissingTestCaseParamsError  # noqa: E402
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig  # noqa: E402
from deepeval.test_case import ConversationalTestCase, LLMTestCase, ToolCall, Turn  # noqa: E402

from trajcheck.adapters import deepeval as ad  # noqa: E402
from trajcheck.errors import DatasetError  # noqa: E402
from trajcheck.metrics.calls import argument_accuracy, tool_call_prf  # noqa: E402
from trajcheck.metrics.composite import score_trajectory  # noqa: E402
from trajcheck.metrics.outcome import check_final_state, task_success  # noqa: E402
from trajcheck.metrics.sequences import check_forbidden_sequences  # noqa: E402
from trajcheck.metrics.trajectory import trajectory_match  # noqa: E402
from trajcheck.model import Case, ExpectedCall, Step, Trajectory  # noqa: E402
from trajcheck.model import ToolCall as TC  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # evaluate() writes .deepeval/ into the working directory
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEPEVAL_RESULTS_FOLDER", str(tmp_path / "results"))


QUIET = DisplayConfig(show_indicator=False, print_results=False)

# A helpdesk case: look up the ticket, then open a new high-priority one; the agent also
# searched the docs (optional) and, in the bad run, closed the old ticket (forbidden).
INPUT = "My laptop still won't boot after INC-1042 was closed. Open a new high-priority ticket."
GOOD = [ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"}),
        ToolCall(name="search_docs", input_parameters={"q": "laptop boot"}),
        ToolCall(name="create_ticket", input_parameters={"priority": "high", "group": "IT"})]
BAD = [ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"}),
       ToolCall(name="create_ticket", input_parameters={"priority": "low", "group": "IT"}),
       ToolCall(name="update_ticket", input_parameters={"id": "INC-1042", "status": "closed"})]
EXPECTED = [ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"}),
            ToolCall(name="create_ticket", input_parameters={"priority": "high", "group": "IT"})]
META = {"optional_calls": ["search_docs"], "forbidden_calls": ["update_ticket"]}


def tcase(calls, name="helpdesk_1", meta=META):
    return LLMTestCase(input=INPUT, actual_output="Opened INC-2001.", tools_called=list(calls),
                       expected_tools=list(EXPECTED), metadata=dict(meta), name=name)


def core_pair(calls, name="helpdesk_1") -> tuple[Trajectory, Case]:
    """The (Trajectory, Case) built by hand, independently of the adapter."""
    steps = [Step(index=0, kind="user", content=INPUT)]
    for i, c in enumerate(calls):
        steps.append(Step(index=i + 1, kind="tool_call",
                          tool_calls=(TC(name=c.name, args=dict(c.input_parameters or {})),)))
    steps.append(Step(index=len(steps), kind="final_response", content="Opened INC-2001."))
    traj = Trajectory(steps=tuple(steps), final_response="Opened INC-2001.")
    case = Case(id=name, input=INPUT,
                expected_calls=tuple(ExpectedCall(e.name, dict(e.input_parameters)) for e in EXPECTED),
                optional_calls=("search_docs",), forbidden_calls=("update_ticket",))
    return traj, case


def test_tool_call_f1_hand_computed_and_equal_to_core():
    m = ad.ToolCallF1Metric(threshold=0.5)
    # good run: search_docs is an optional call -> not counted; 2/2 matched -> F1 1.0
    assert m.measure(tcase(GOOD)) == 1.0
    # bad run: get_ticket matches, create_ticket has the wrong priority, update_ticket extra:
    # P = 1/3, R = 1/2, F1 = 2PR/(P+R) = 0.4
    score = m.measure(tcase(BAD))
    assert score == pytest.approx(0.4, abs=1e-12)
    core = tool_call_prf(*core_pair(BAD))
    assert score == core.f1 and m.reason == core.reason
    assert m.score_breakdown == core.parts
    assert m.is_successful() is False


@pytest.mark.parametrize("kwargs,expected_neutral", [
    ({}, "recall"),  # no mode: DeepEval's defaults (both flags False)
    ({"should_exact_match": True}, "exact"),
    ({"should_consider_ordering": True}, "in_order"),
    ({"should_consider_ordering": False, "should_exact_match": False}, "recall"),
    ({"mode": "strict", "dialect": "agentevals"}, "exact"),
    ({"mode": "trajectory_any_order_match", "dialect": "vertex"}, "superset"),
])
def test_trajectory_match_modes_equal_core(kwargs, expected_neutral):
    m = ad.TrajectoryMatchMetric(**kwargs)
    traj, case = core_pair(GOOD)
    score = m.measure(tcase(GOOD))
    assert m.result is not None and m.result.parts["mode"] == expected_neutral
    mode = m._mode_name
    core = trajectory_match(traj, case, mode, dialect=m._mode_dialect)
    assert (score, m.reason) == (core.score, core.reason)


def test_deepeval_flags_map_through_mode_table():
    assert ad.deepeval_mode(should_exact_match=True) == "exact"
    assert ad.deepeval_mode(should_consider_ordering=True) == "in_order"
    assert ad.deepeval_mode(should_exact_match=True, should_consider_ordering=True) == "exact"
    assert ad.deepeval_mode() == "recall"
    from trajcheck.errors import MetricInputError

    with pytest.raises(MetricInputError):
        ad.TrajectoryMatchMetric(mode="exact", should_exact_match=True)
    with pytest.raises(MetricInputError):
        ad.TrajectoryMatchMetric(mode="nonsense")


def test_in_order_and_exact_hand_values():
    # GOOD = get_ticket, search_docs(optional), create_ticket: in order holds; exact holds
    # because the unmatched optional call may be skipped (trajectory module doc)
    assert ad.TrajectoryMatchMetric(mode="in_order").measure(tcase(GOOD)) == 1.0
    assert ad.TrajectoryMatchMetric(mode="exact").measure(tcase(GOOD)) == 1.0
    rev = [GOOD[2], GOOD[0]]
    assert ad.TrajectoryMatchMetric(mode="in_order").measure(tcase(rev)) == 0.0
    assert ad.TrajectoryMatchMetric(mode="unordered").measure(tcase(rev)) == 1.0


def test_argument_forbidden_composite_equal_core():
    traj, case = core_pair(BAD)
    m = ad.ArgumentAccuracyMetric()
    core = argument_accuracy(traj, case)
    # per argument (seed 000 §2.2): get_ticket 1/1, create_ticket 1/2 (priority wrong) -> 0.75
    assert m.measure(tcase(BAD)) == core.score == 0.75
    assert m.reason == core.reason
    f = ad.ForbiddenCallsMetric()
    core_f = check_forbidden_sequences(traj, [{"tool": "update_ticket", "name": "forbidden_calls[0]"}])
    assert (f.measure(tcase(BAD)), f.reason) == (core_f.score, core_f.reason) == (0.0, core_f.reason)
    assert f.measure(tcase(GOOD)) == 1.0
    c = ad.CompositeMetric()
    core_c = score_trajectory(traj, case)
    assert (c.measure(tcase(BAD)), c.reason) == (core_c.score, core_c.reason)
    assert c.score == 0.0  # critical forbidden call zeroes the composite


def test_constructor_settings_override_metadata():
    # without the optional declaration search_docs counts: P = 2/3, R = 1, F1 = 0.8
    m = ad.ToolCallF1Metric(optional_calls=[])
    tc = tcase(GOOD, meta={"trajcheck": {"forbidden_calls": []}})
    assert m.measure(tc) == pytest.approx(0.8)
    # constructor optional_calls wins over metadata's
    m2 = ad.ToolCallF1Metric(optional_calls=["search_docs"])
    assert m2.measure(tcase(GOOD, meta={"optional_calls": []})) == 1.0


def test_matchers_from_constructor():
    calls = [GOOD[0], ToolCall(name="create_ticket", input_parameters={"priority": " HIGH ", "group": "IT"})]
    assert ad.ToolCallF1Metric().measure(tcase(calls)) == pytest.approx(0.5)
    m = ad.ToolCallF1Metric(match={"create_ticket": {"priority": "normalized"}})
    assert m.measure(tcase(calls)) == 1.0


def test_final_state_and_composite_from_metadata():
    before = {"tickets": [{"id": 1, "priority": "low", "title": "old"}]}
    after = {"tickets": [{"id": 1, "priority": "low", "title": "old"},
                         {"id": 2, "priority": "high", "title": "laptop"}]}
    exp_state = {"tickets": [{"priority": "high"}]}
    meta = dict(META, before_state=before, after_state=after, expected_final_state=exp_state)
    m = ad.FinalStateMetric()
    core = check_final_state(before, after, exp_state)
    assert (m.measure(tcase(GOOD, meta=meta)), m.reason) == (core.score, core.reason) == (1.0, core.reason)
    c = ad.CompositeMetric()
    traj, case = core_pair(GOOD)
    from dataclasses import replace

    core_c = score_trajectory(traj, replace(case, expected_final_state=exp_state),
                              outcome=task_success(core, None))
    assert (c.measure(tcase(GOOD, meta=meta)), c.reason) == (core_c.score, core_c.reason)
    # a missing reference is DeepEval's missing-parameter error, never a pass
    with pytest.raises(MissingTestCaseParamsError, match="expected_final_state"):
        ad.FinalStateMetric().measure(tcase(GOOD))
    with pytest.raises(MissingTestCaseParamsError, match="before_state"):
        ad.FinalStateMetric().measure(tcase(GOOD, meta=dict(META, expected_final_state=exp_state)))


def test_missing_tools_called_raises_deepeval_error():
    tc = LLMTestCase(input=INPUT, actual_output="x", expected_tools=list(EXPECTED))
    with pytest.raises(MissingTestCaseParamsError):
        ad.ToolCallF1Metric().measure(tc)


@pytest.mark.parametrize("run_async", [True, False])
def test_evaluate_async_and_sync(run_async):
    # settings must survive DeepEval's per-case re-instantiation in async mode
    metrics = [ad.ToolCallF1Metric(threshold=0.5),
               ad.TrajectoryMatchMetric(should_exact_match=True),
               ad.ToolCallF1Metric(threshold=0.5, optional_calls=[])]
    res = evaluate([tcase(GOOD, "good"), tcase(BAD, "bad")], metrics,
                   async_config=AsyncConfig(run_async=run_async), display_config=QUIET)
    by_name = {r.name: r for r in res.test_results}
    got = {n: [(md.score, md.reason, md.success) for md in by_name[n].metrics_data] for n in ("good", "bad")}
    for n, calls in (("good", GOOD), ("bad", BAD)):
        traj, case = core_pair(calls, n)
        f1 = tool_call_prf(traj, case)
        # DeepEval's exact mode compares names (and tool types) only by default, so the
        # deepeval row does: on "bad" create_ticket with other arguments still matches by name
        ex = trajectory_match(traj, case, "ToolCorrectness(should_exact_match=True)", dialect="deepeval")
        # lists are joined (constructor + metadata): an empty constructor list removes nothing
        assert got[n] == [(f1.f1, f1.reason, f1.f1 >= 0.5), (ex.score, ex.reason, ex.score >= 1.0),
                          (f1.f1, f1.reason, f1.f1 >= 0.5)]
    assert got["good"][0][0] == 1.0 and got["good"][2][0] == 1.0
    assert got["bad"][0][0] == pytest.approx(0.4)


def test_assert_test_pass_and_fail():
    assert_test(tcase(GOOD), [ad.ToolCallF1Metric(threshold=0.9)], run_async=False)
    with pytest.raises(AssertionError, match="Tool Call F1"):
        assert_test(tcase(BAD), [ad.ToolCallF1Metric(threshold=0.9)], run_async=False)
    with pytest.raises(AssertionError, match="Forbidden Calls"):
        assert_test(tcase(BAD), [ad.ForbiddenCallsMetric()])


def test_strict_mode_zeroes_below_one():
    m = ad.ToolCallF1Metric(strict_mode=True)
    assert m.threshold == 1.0 and m.measure(tcase(BAD)) == 0.0
    assert m.reason == tool_call_prf(*core_pair(BAD)).reason


def test_conversational_metric_in_evaluate():
    conv = ConversationalTestCase(
        name="conv_1",
        turns=[Turn(role="user", content="Is INC-1042 still open?"),
               Turn(role="assistant", content="It is closed.",
                    tools_called=[ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"})]),
               Turn(role="user", content="Open a new high-priority one."),
               Turn(role="assistant", content="Done.",
                    tools_called=[ToolCall(name="create_ticket",
                                           input_parameters={"priority": "high", "group": "IT"}),
                                  ToolCall(name="create_ticket",
                                           input_parameters={"priority": "high", "group": "IT"})])],
        metadata={"expected_calls": [{"name": "get_ticket", "args": {"id": "INC-1042"}},
                                     {"name": "create_ticket", "args": {"priority": "high", "group": "IT"}}]})
    m = ad.ConversationalTrajcheckMetric("tool_call_f1", threshold=0.5)
    # duplicate create_ticket counts: P = 2/3, R = 1, F1 = 0.8
    assert m.measure(conv) == pytest.approx(0.8)
    res = evaluate([conv], [ad.ConversationalTrajcheckMetric("trajectory_match", mode="subset"),
                            ad.ConversationalTrajcheckMetric("tool_call_f1")],
                   display_config=QUIET)
    mds = res.test_results[0].metrics_data
    assert [md.score for md in mds] == [0.0, pytest.approx(0.8)]
    assert mds[1].reason == m.reason


def test_span_metric_under_observe():
    from deepeval.dataset import EvaluationDataset, Golden
    from deepeval.tracing import observe, update_current_span

    m = ad.ToolCallF1Metric(threshold=0.5)

    @observe(type="tool")
    def get_ticket(id):
        return {"id": id, "status": "closed"}

    @observe(metrics=[m], type="agent")
    def agent(inp):
        get_ticket(id="INC-1042")
        get_ticket(id="INC-1042")
        update_current_span(expected_tools=[ToolCall(name="get_ticket")])
        return "It is closed."

    for g in EvaluationDataset(goldens=[Golden(input="status of INC-1042?")]).evals_iterator():
        agent(g.input)
    # two calls auto-filled from the tool spans, one expected (no argument constraint):
    # P = 1/2, R = 1, F1 = 2/3
    assert m.score == pytest.approx(2 / 3)
    assert m.reason.startswith("precision 0.500")


# --------------------------------------------------------------------- schema validity and
# argument correctness through evaluate(), against the helpdesk tools' JSON Schemas


def _helpdesk_tool_defs():
    from pathlib import Path

    from trajcheck.run.runner import load_agent

    agents = Path(__file__).resolve().parent.parent / "examples" / "helpdesk" / "agents.py"
    return load_agent(f"{agents}:good_agent").tools.definitions("openai")


SCHEMA_INPUT = "Raise INC-1043 to high priority."
# get_ticket: ticket_id must be a string "INC-<n>" -> the integer 1043 is a type error;
# update_ticket: priority must be one of low/medium/high/critical -> "urgent" is an enum error;
# search_docs: valid. Two of three calls invalid -> schema validity 1/3.
SCHEMA_CALLS = [ToolCall(name="get_ticket", input_parameters={"ticket_id": 1043}),
                ToolCall(name="update_ticket", input_parameters={"ticket_id": "INC-1043", "priority": "urgent"}),
                ToolCall(name="search_docs", input_parameters={"query": "priority policy"})]
SCHEMA_EXPECTED = [ToolCall(name="get_ticket", input_parameters={"ticket_id": "INC-1043"}),
                   ToolCall(name="update_ticket", input_parameters={"ticket_id": "INC-1043", "priority": "high"})]


def _schema_case(name, calls, meta=None):
    return LLMTestCase(name=name, input=SCHEMA_INPUT, actual_output="Done.", tools_called=list(calls),
                       expected_tools=list(SCHEMA_EXPECTED), metadata=meta)


def _schema_core(calls):
    from trajcheck.metrics.calls import schema_errors

    steps = [Step(index=0, kind="user", content=SCHEMA_INPUT)]
    steps += [Step(index=i + 1, kind="tool_call", tool_calls=(TC(name=c.name, args=dict(c.input_parameters)),))
              for i, c in enumerate(calls)]
    steps.append(Step(index=len(steps), kind="final_response", content="Done."))
    traj = Trajectory(steps=tuple(steps), final_response="Done.")
    case = Case(id="x", input=SCHEMA_INPUT,
                expected_calls=tuple(ExpectedCall(e.name, dict(e.input_parameters)) for e in SCHEMA_EXPECTED))
    return schema_errors(traj, _helpdesk_tool_defs()), argument_accuracy(traj, case)


def test_schema_validity_hand_computed():
    defs = _helpdesk_tool_defs()
    m = ad.SchemaValidityMetric(threshold=1.0, tools=defs)
    assert m.measure(_schema_case("bad", SCHEMA_CALLS)) == pytest.approx(1 / 3)
    errs = m.score_breakdown["errors"]
    assert [(e["index"], e["name"]) for e in errs] == [(0, "get_ticket"), (1, "update_ticket")]
    assert "1043" in errs[0]["error"] and "urgent" in errs[1]["error"]
    assert m.is_successful() is False
    core, _ = _schema_core(SCHEMA_CALLS)
    assert (m.score, m.reason) == (core.score, core.reason)
    # the tools may come from the test case's metadata['trajcheck'] instead of the constructor
    m2 = ad.SchemaValidityMetric()
    assert m2.measure(_schema_case("meta", SCHEMA_CALLS, {"trajcheck": {"tools": defs}})) == pytest.approx(1 / 3)
    ok = [ToolCall(name="get_ticket", input_parameters={"ticket_id": "INC-1043"})]
    assert m2.measure(_schema_case("ok", ok, {"trajcheck": {"tools": defs}})) == 1.0
    # a top-level 'tools' key is the team's own (a name teams use): not read, so the
    # reference is missing and the error says where trajcheck's go
    with pytest.raises(MissingTestCaseParamsError, match=r"metadata\['trajcheck'\]"):
        m2.measure(_schema_case("flat", ok, {"tools": defs}))
    with pytest.raises(MissingTestCaseParamsError, match="'tools'"):
        ad.SchemaValidityMetric().measure(_schema_case("none", SCHEMA_CALLS))


@pytest.mark.parametrize("run_async", [True, False])
def test_schema_validity_and_argument_correctness_in_evaluate(run_async):
    defs = _helpdesk_tool_defs()
    fixed = [ToolCall(name="get_ticket", input_parameters={"ticket_id": "INC-1043"}),
             ToolCall(name="update_ticket", input_parameters={"ticket_id": "INC-1043", "priority": "high"})]
    metrics = [ad.SchemaValidityMetric(threshold=1.0, tools=defs), ad.ArgumentAccuracyMetric(threshold=1.0)]
    res = evaluate([_schema_case("bad", SCHEMA_CALLS), _schema_case("fixed", fixed)], metrics,
                   async_config=AsyncConfig(run_async=run_async), display_config=QUIET)
    got = {r.name: [(md.score, md.reason, md.success) for md in r.metrics_data] for r in res.test_results}
    for name, calls, want_schema, want_args in (("bad", SCHEMA_CALLS, 1 / 3, 0.25), ("fixed", fixed, 1.0, 1.0)):
        sch, arg = _schema_core(calls)
        # hand-computed: "bad" has 1 of 3 calls schema-valid; per-argument accuracy (seed 000
        # §2.2): get_ticket 0/1 (1043 != "INC-1043"), update_ticket 1/2 ("urgent" != "high")
        # -> (0 + 0.5) / 2 = 0.25
        assert sch.score == pytest.approx(want_schema) and arg.score == want_args
        assert got[name] == [(sch.score, sch.reason, sch.score >= 1.0), (arg.score, arg.reason, arg.score >= 1.0)]


@pytest.mark.parametrize("block", ["trajchek", "Trajcheck", "TRAJCHECK", "trajcheck_", "trajcheck."])
def test_misspelled_metadata_block_is_an_error(block):
    m = ad.ForbiddenCallsMetric()
    with pytest.raises(DatasetError, match="did you mean 'trajcheck'"):
        m.measure(tcase(BAD, meta={block: {"forbidden_calls": ["update_ticket"]}, "ticket": "INC-1042"}))
    # the block spelled right beside a team key: update_ticket is forbidden and was called
    assert m.measure(tcase(BAD, meta={"trajcheck": {"forbidden_calls": ["update_ticket"]},
                                      "ticket": "INC-1042"})) == 0.0


@pytest.mark.parametrize("team_key", ["trajcheck_id", "trajcheck-run", "TRAJCHECK_VERSION"])
def test_team_key_that_starts_with_trajcheck_is_not_a_misspelled_block(team_key):
    # a team's own key named after the tool (trajcheck + separator + a word) is its own data:
    # the flat trajcheck keys beside it are read and update_ticket, called in BAD, is forbidden
    m = ad.ForbiddenCallsMetric()
    assert m.measure(tcase(BAD, meta={team_key: "r-17", "forbidden_calls": ["update_ticket"]})) == 0.0
    assert m.measure(tcase(BAD, meta={team_key: "r-17", "forbidden_calls": ["drop_db"]})) == 1.0


def test_flat_forbidden_sequences_names_field_and_shape():
    m = ad.CompositeMetric()
    with pytest.raises(DatasetError, match=r"'forbidden_sequences' \(item 0 is str 'get_ticket', expected a dict per rule"):
        m.measure(tcase(BAD, meta={"trajcheck": {"forbidden_sequences": ["get_ticket", "update_ticket"]}}))


def test_case_threshold_is_the_pass_mark_and_a_conflict_is_an_error():
    # BAD: F1 = 0.4 (hand-computed above). The default pass mark is 1.0: fails.
    m = ad.ToolCallF1Metric()
    assert m.measure(tcase(BAD)) == pytest.approx(0.4) and m.is_successful() is False
    # the test case's own threshold is the pass mark for that test case only
    m = ad.ToolCallF1Metric()
    assert m.measure(tcase(BAD, meta={"trajcheck": {**META, "threshold": 0.4}})) == pytest.approx(0.4)
    assert m.is_successful() is True and m.success is True
    assert m.measure(tcase(BAD, meta={"trajcheck": {**META, "threshold": 0.5}})) == pytest.approx(0.4)
    assert m.is_successful() is False
    m.measure(tcase(BAD))  # and back to the metric's own
    assert m.is_successful() is False
    # the same value in both places is fine; a different one is an error naming both
    m = ad.ToolCallF1Metric(threshold=0.4)
    m.measure(tcase(BAD, meta={"trajcheck": {**META, "threshold": 0.4}}))
    assert m.is_successful() is True
    m = ad.ToolCallF1Metric(threshold=0.5)
    with pytest.raises(Exception, match=r"threshold is 0.3 in test_case.metadata\['trajcheck'\] and "
                                        r"threshold=0.5 on ToolCallF1Metric"):
        m.measure(tcase(BAD, meta={"trajcheck": {**META, "threshold": 0.3}}))
    with pytest.raises(Exception, match="strict_mode=True"):
        ad.ToolCallF1Metric(strict_mode=True).measure(tcase(BAD, meta={"trajcheck": {**META, "threshold": 0.3}}))


def test_case_threshold_in_deepeval_evaluate():
    meta = {"trajcheck": {**META, "threshold": 0.4}}
    res = evaluate([tcase(BAD, "bad_lenient", meta=meta), tcase(BAD, "bad")], [ad.ToolCallF1Metric()],
                   async_config=AsyncConfig(run_async=False), display_config=QUIET)
    by = {r.name: r.metrics_data[0] for r in res.test_results}
    assert by["bad_lenient"].score == pytest.approx(0.4) and by["bad_lenient"].success is True
    assert by["bad"].score == pytest.approx(0.4) and by["bad"].success is False


def test_not_applicable_metric_is_skipped_by_both_runners():
    # precedence get_ticket -> close_ticket: no close_ticket ran, so no rule applies and
    # ordering accuracy is not applicable. It must neither fail nor pass the test case,
    # in the async runner (no row) and in the sync one (a row with DeepEval's "no verdict").
    meta = {**META, "precedence": [["get_ticket", "close_ticket"]]}
    good, bad = tcase(GOOD, "good_na", meta=meta), tcase(BAD, "bad_na", meta=meta)
    outcomes = {}
    for run_async in (True, False):
        res = evaluate([good, bad], [ad.ToolCallF1Metric(threshold=0.5), ad.OrderingAccuracyMetric()],
                       async_config=AsyncConfig(run_async=run_async), display_config=QUIET)
        by = {r.name: r for r in res.test_results}
        outcomes[run_async] = {n: by[n].success for n in by}
        rows = {n: {md.name: (md.score, md.success) for md in by[n].metrics_data} for n in by}
        # F1 decides: good 1.0 passes, bad 0.4 (hand-computed above) fails at 0.5
        assert rows["good_na"]["Tool Call F1 (trajcheck)"] == (1.0, True)
        assert rows["bad_na"]["Tool Call F1 (trajcheck)"] == (pytest.approx(0.4), False)
        na = [r.get("Ordering Accuracy (trajcheck)") for r in rows.values()]
        assert na == ([None, None] if run_async else [(None, None), (None, None)])
    assert outcomes[True] == outcomes[False] == {"good_na": True, "bad_na": False}
    # on its own the skipped metric fails nothing, in either runner and in assert_test
    for run_async in (True, False):
        res = evaluate([good], [ad.OrderingAccuracyMetric()], async_config=AsyncConfig(run_async=run_async),
                       display_config=QUIET)
        assert res.test_results[0].success is True
        assert_test(good, [ad.OrderingAccuracyMetric(), ad.ToolCallF1Metric()], run_async=run_async)
    m = ad.OrderingAccuracyMetric()
    assert m.measure(good) is None and m.skipped is True
    assert m.success is None and m.is_successful() is None
    assert m.reason == "not applicable: no rule applicable (no 'after' tool ran)"
