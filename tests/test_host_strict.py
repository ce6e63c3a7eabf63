"""Strict settings and precedence in every host, in the real runners (offline).

A refund agent that emails the customer before issuing the refund breaks the rule
``issue_refund before send_refund_email``; ordering accuracy must be 0.0 there and 1.0 when the
order is kept, in DeepEval, RAGAS, LangSmith and the promptfoo assertion alike (the core's
``ordering_accuracy`` is the reference). Misspelled, unknown and wrong-typed settings are
errors naming the closest key; a missing reference is an error or a skipped score in each
host's own convention, never a pass.
"""

from __future__ import annotations

import json
import math
import os
import uuid
import warnings

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.pop("OPENAI_API_KEY", None)
warnings.filterwarnings("ignore", category=DeprecationWarning)

from trajcheck.errors import DatasetError, MetricInputError, TraceFormatError  # noqa: E402
from trajcheck.metrics.sequences import ordering_accuracy  # noqa: E402
from trajcheck.model import Step, Trajectory  # noqa: E402
from trajcheck.model import ToolCall as TC  # noqa: E402

INPUT = "Refund order 981 and let the customer know."
PRECEDENCE = [["issue_refund", "send_refund_email"]]
BROKEN = [("send_refund_email", {"order_id": "981"}), ("issue_refund", {"order_id": "981"})]
KEPT = [("issue_refund", {"order_id": "981"}), ("send_refund_email", {"order_id": "981"})]
EXPECTED = [("issue_refund", {"order_id": "981"}), ("send_refund_email", {"order_id": "981"})]


def core_traj(calls, user: bool = True) -> Trajectory:
    steps = [Step(0, "user", content=INPUT)] if user else []
    steps += [Step(len(steps) + i, "tool_call", tool_calls=(TC(n, dict(a)),)) for i, (n, a) in enumerate(calls)]
    steps.append(Step(len(steps), "final_response", content="Done."))
    return Trajectory(steps=tuple(steps), final_response="Done.")


def test_core_reference_values():
    # hand-computed: broken -> the one applicable rule is violated (0/1); kept -> 1/1
    assert ordering_accuracy(core_traj(BROKEN), PRECEDENCE).score == 0.0
    assert ordering_accuracy(core_traj(KEPT), PRECEDENCE).score == 1.0


# ----------------------------------------------------------------------------- DeepEval


@pytest.fixture
def _deepeval_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # evaluate() writes .deepeval/ here
    monkeypatch.setenv("DEEPEVAL_RESULTS_FOLDER", str(tmp_path / "results"))


def _de_case(calls, meta, name="refund"):
    from deepeval.test_case import LLMTestCase, ToolCall

    return LLMTestCase(input=INPUT, actual_output="Done.", name=name,
                       tools_called=[ToolCall(name=n, input_parameters=a) for n, a in calls],
                       expected_tools=[ToolCall(name=n, input_parameters=a) for n, a in EXPECTED],
                       metadata=meta)


@pytest.mark.usefixtures("_deepeval_tmp")
def test_deepeval_ordering_in_evaluate_and_strict_settings():
    pytest.importorskip("deepeval")
    from deepeval import evaluate
    from deepeval.errors import MissingTestCaseParamsError
    from deepeval.evaluate.configs import DisplayConfig, ErrorConfig

    from trajcheck.adapters import deepeval as ad

    quiet = DisplayConfig(show_indicator=False, print_results=False)
    meta = {"trajcheck": {"precedence": PRECEDENCE}, "owner": "team-a"}  # own keys beside the block
    m = ad.OrderingAccuracyMetric()
    res = evaluate([_de_case(BROKEN, meta, "broken"), _de_case(KEPT, meta, "kept")], [m],
                   display_config=quiet)
    got = {r.name: r.metrics_data[0] for r in res.test_results}
    for name, calls in (("broken", BROKEN), ("kept", KEPT)):
        want = ordering_accuracy(core_traj(calls), PRECEDENCE)
        assert (got[name].score, got[name].reason) == (want.score, want.reason)
        assert got[name].name == "Ordering Accuracy (trajcheck)"
    assert got["broken"].success is False and got["kept"].success is True
    # the generic form is the same metric
    assert ad.TrajcheckMetric("ordering_accuracy").measure(_de_case(BROKEN, meta)) == 0.0
    # misspelled key (closest suggested), wrong type, unknown metric, wrong-typed option
    with pytest.raises(DatasetError, match="'precedense'.*did you mean 'precedence'"):
        m.measure(_de_case(BROKEN, {"trajcheck": {"precedense": PRECEDENCE}}))
    with pytest.raises(DatasetError, match="'optional_call'.*did you mean 'optional_calls'"):
        m.measure(_de_case(BROKEN, {"precedence": PRECEDENCE, "optional_call": ["x"]}))
    with pytest.raises(DatasetError, match="precedence"):
        m.measure(_de_case(BROKEN, {"trajcheck": {"precedence": "issue_refund,send_refund_email"}}))
    with pytest.raises(MetricInputError, match="did you mean 'ordering_accuracy'"):
        ad.TrajcheckMetric("ordering_acuracy")
    with pytest.raises(MetricInputError, match="threshold must be"):
        ad.OrderingAccuracyMetric(threshold="high")  # type: ignore[arg-type]
    # a missing reference: DeepEval's missing-parameter error; skipped only when asked
    with pytest.raises(MissingTestCaseParamsError, match="precedence"):
        evaluate([_de_case(BROKEN, None)], [ad.OrderingAccuracyMetric()], display_config=quiet)
    res = evaluate([_de_case(BROKEN, None)], [ad.OrderingAccuracyMetric()], display_config=quiet,
                   error_config=ErrorConfig(skip_on_missing_params=True))
    assert not res.test_results[0].metrics_data
    # expected_tools=None is a missing reference too (never scored against "nothing expected")
    tc = _de_case(BROKEN, None)
    tc.expected_tools = None
    with pytest.raises(MissingTestCaseParamsError, match="expected_calls"):
        ad.TrajectoryMatchMetric().measure(tc)


# ----------------------------------------------------------------------------- RAGAS


def _ragas_sample(calls, settings):
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall

    msgs = [HumanMessage(content=INPUT, metadata={"trajcheck": settings} if settings is not None else None)]
    msgs += [AIMessage(content="", tool_calls=[ToolCall(name=n, args=a)]) for n, a in calls]
    msgs.append(AIMessage(content="Done."))
    return MultiTurnSample(user_input=msgs,
                           reference_tool_calls=[ToolCall(name=n, args=a) for n, a in EXPECTED])


def test_ragas_ordering_in_evaluate_and_strict_settings():
    pytest.importorskip("ragas")
    from ragas import EvaluationDataset, evaluate

    from trajcheck.adapters import ragas as ar

    m = ar.TrajcheckOrderingAccuracy()
    ds = EvaluationDataset(samples=[_ragas_sample(BROKEN, {"precedence": PRECEDENCE}),
                                    _ragas_sample(KEPT, {"precedence": PRECEDENCE})])
    df = evaluate(ds, metrics=[m], show_progress=False, raise_exceptions=True).to_pandas()
    want = [ordering_accuracy(core_traj(c), PRECEDENCE).score for c in (BROKEN, KEPT)]
    assert list(df["trajcheck_ordering_accuracy"]) == want == [0.0, 1.0]
    # a misspelled per-sample key is an error, in evaluate() too
    bad = EvaluationDataset(samples=[_ragas_sample(BROKEN, {"precedense": PRECEDENCE})])
    with pytest.raises(DatasetError, match="did you mean 'precedence'"):
        evaluate(bad, metrics=[m], show_progress=False, raise_exceptions=True)
    with pytest.raises(MetricInputError, match="did you mean 'precedence'"):
        ar.TrajcheckCollectionsMetric("ordering_accuracy", precedense=PRECEDENCE)
    # missing reference: raised, or NaN (RAGAS's "no score") when exceptions are not raised
    none = EvaluationDataset(samples=[_ragas_sample(BROKEN, None)])
    with pytest.raises(DatasetError, match="needs 'precedence'"):
        evaluate(none, metrics=[m], show_progress=False, raise_exceptions=True)
    df = evaluate(none, metrics=[m], show_progress=False, raise_exceptions=False).to_pandas()
    assert math.isnan(df["trajcheck_ordering_accuracy"][0])


# ----------------------------------------------------------------------------- LangSmith


def test_langsmith_missing_or_misspelled_reference_is_never_a_pass():
    pytest.importorskip("langsmith")
    from langsmith import Client
    from langsmith.schemas import Example

    from trajcheck.adapters import langsmith as al

    def target(inputs):
        calls = BROKEN if inputs["which"] == "broken" else KEPT
        return {"tool_calls": [{"name": n, "args": a} for n, a in calls], "final_response": "Done."}

    refs = {"ok": {"expected_calls": [{"name": n, "args": a} for n, a in EXPECTED],
                   "precedence": PRECEDENCE, "forbidden_calls": ["delete_order"]},
            "none": None, "empty": {}, "typo": {"expected_call": [{"name": "issue_refund"}]},
            "tool_calls": {"tool_calls": [{"name": "issue_refund"}]}}
    examples = [Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(),
                        inputs={"input": INPUT, "which": w, "ref": r}, outputs=refs[r])
                for w in ("broken", "kept") for r in refs]
    evs = [al.TrajcheckEvaluator("trajectory_match", mode="superset"),
           al.TrajcheckEvaluator("forbidden_calls"), al.TrajcheckEvaluator("ordering_accuracy")]
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    res = client.evaluate(target, data=examples, evaluators=evs, upload_results=False, max_concurrency=0)
    n = 0
    for row in res:
        ex = row["example"]
        got = {r.key: (r.score, r.comment) for r in row["evaluation_results"]["results"]}
        assert set(got) == {"trajcheck_trajectory_superset", "trajcheck_forbidden_calls",
                            "trajcheck_ordering_accuracy"}
        if ex.inputs["ref"] == "ok":
            calls = BROKEN if ex.inputs["which"] == "broken" else KEPT
            # the target returns bare calls (no user message): steps count from the first call
            want = ordering_accuracy(core_traj(calls, user=False), PRECEDENCE)
            assert got["trajcheck_ordering_accuracy"] == (want.score, want.reason)
            assert got["trajcheck_trajectory_superset"][0] == 1.0
            assert got["trajcheck_forbidden_calls"][0] == 1.0
        else:  # error feedback (score None, the error as comment) for every metric
            for key, (score, comment) in got.items():
                assert score is None, (ex.inputs, key)
                assert "Error" in comment or "needs" in comment, (ex.inputs, key, comment)
            if ex.inputs["ref"] == "typo":
                assert "did you mean 'expected_calls'" in got["trajcheck_trajectory_superset"][1]
        n += 1
    assert n == len(examples)
    # direct calls raise the same errors
    with pytest.raises(DatasetError, match="needs 'expected_calls'"):
        evs[0](outputs=target({"which": "kept"}), reference_outputs={})
    with pytest.raises(MetricInputError, match="did you mean 'forbidden_calls'"):
        al.TrajcheckEvaluator("forbidden_calls", forbiden_calls=["x"])


# ----------------------------------------------------------------------------- promptfoo


def _pf_ctx(config, vars_=None, typ="python"):
    return {"prompt": INPUT, "vars": vars_ or {}, "config": config,
            "test": {"assert": [{"type": typ, "value": "file://assertion.py", "config": config}]}}


def _pf_output(calls):
    return [{"name": n, "args": a} for n, a in calls]


def test_promptfoo_assertion_ordering_and_strict_config():
    from trajcheck.promptfoo.assertion import get_assert

    for calls in (BROKEN, KEPT):
        r = get_assert(_pf_output(calls), _pf_ctx({"metric": "ordering_accuracy", "precedence": PRECEDENCE}))
        want = ordering_accuracy(core_traj(calls, user=False), PRECEDENCE)
        assert r["score"] == want.score and want.reason in r["reason"]
        assert r["pass"] is (want.score == 1.0)
    # misspelled config key; negated too (promptfoo flips pass, so it is returned as True)
    r = get_assert(_pf_output(KEPT), _pf_ctx({"metric": "ordering_accuracy", "precedense": PRECEDENCE}))
    assert r["pass"] is False and "did you mean 'precedence'" in r["reason"]
    r = get_assert(_pf_output(KEPT), _pf_ctx({"metric": "ordering_accuracy", "precedense": PRECEDENCE},
                                             typ="not-python"))
    assert r["pass"] is True and r["score"] == 0.0  # after promptfoo's flip: fails
    # a var that is a near miss of a trajcheck key is not silently ignored
    r = get_assert(_pf_output(KEPT), _pf_ctx({"metric": "tool_call_f1"},
                                             {"expected_call": '["issue_refund"]'}))
    assert r["pass"] is False and "did you mean 'expected_calls'" in r["reason"]
    # missing reference fails, negated or not
    for typ in ("python", "not-python"):
        r = get_assert(_pf_output(KEPT), _pf_ctx({"metric": "ordering_accuracy"}, typ=typ))
        assert r["pass"] is (typ == "not-python") and "needs 'precedence'" in r["reason"]
    # tool-sequence compares names only, and says so when expected_calls carry arguments
    cfg = {"metric": "trajectory_match", "mode": "tool-sequence",
           "expected_calls": [{"name": n, "args": {"order_id": "1"}} for n, _a in EXPECTED]}
    r = get_assert(_pf_output(KEPT), _pf_ctx(cfg))
    assert r["score"] == 1.0 and "names only" in r["reason"]
    r = get_assert(_pf_output(KEPT), _pf_ctx(dict(cfg, args_mode="exact_keys")))
    assert r["score"] == 0.0 and "names only" not in r["reason"]


# ----------------------------------------------------------------------------- from traces

# OpenAI Chat messages have no error flag: the 503 is a failed call only under error_pattern
OPENAI_RUN = {"messages": [
    {"role": "user", "content": INPUT},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "issue_refund", "arguments": '{"order_id": "981"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "Error: 503 service unavailable"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "issue_refund", "arguments": '{"order_id": "981"}'}},
        {"id": "c3", "type": "function", "function": {"name": "send_refund_email", "arguments": '{"order_id": "981"}'}}]},
    {"role": "tool", "tool_call_id": "c2", "content": "ok"},
    {"role": "tool", "tool_call_id": "c3", "content": "sent"},
    {"role": "assistant", "content": "Refunded and e-mailed."}]}
EXP = [{"name": n, "args": a} for n, a in EXPECTED]


def test_helpers_build_each_hosts_test_case_from_a_trace_with_failed_calls_marked(tmp_path):
    pytest.importorskip("deepeval")
    pytest.importorskip("ragas")
    pytest.importorskip("langsmith")
    from trajcheck.adapters import deepeval as ad
    from trajcheck.adapters import langsmith as al
    from trajcheck.adapters import ragas as ar
    from trajcheck.metrics.calls import tool_call_prf
    from trajcheck.model import Case
    from trajcheck.read.traces import load

    case = Case(id="r", input=INPUT, expected_calls=tuple(EXP), precedence=(("issue_refund", "send_refund_email"),))
    for pattern, precision in ((None, 2 / 3), ("^Error", 1.0)):
        traj = load(OPENAI_RUN, error_pattern=pattern).trajectories[0]
        assert tool_call_prf(traj, case).precision == pytest.approx(precision)  # the core's figure
        tc = ad.test_case_from_trace(OPENAI_RUN, expected_tools=EXP, error_pattern=pattern,
                                     precedence=PRECEDENCE)
        block = tc.metadata["trajcheck"]
        assert block.get("failed_calls") == ([0] if pattern else None)
        assert block["parallel_calls"] == [[1, 2]]  # the retry and the e-mail were one step
        assert ad.TrajcheckMetric("tool_call_precision").measure(tc) == pytest.approx(precision)
        # with the 503 a failed-and-retried attempt (set aside), the refund's only counted call is
        # in the e-mail's step, and calls of one step are not before each other: violated
        want = ordering_accuracy(traj, PRECEDENCE).score
        assert want == (0.0 if pattern else 1.0)
        assert ad.OrderingAccuracyMetric().measure(tc) == want
        s = ar.sample_from_trace(OPENAI_RUN, reference_tool_calls=EXP, error_pattern=pattern,
                                 precedence=PRECEDENCE)
        assert ar.TrajcheckRagasMetric(metric="tool_call_precision").compute(
            s.user_input, s.reference_tool_calls).score == pytest.approx(precision)
        assert ar.TrajcheckOrderingAccuracy().compute(s.user_input, s.reference_tool_calls).score == want
        ex = al.example_from_trace(OPENAI_RUN, expected_calls=EXP, error_pattern=pattern,
                                   precedence=PRECEDENCE)
        out = ex.metadata["trajcheck_outputs"]
        got = al.TrajcheckEvaluator("tool_call_precision")(inputs=ex.inputs, outputs=out,
                                                            reference_outputs=ex.outputs)
        assert got["score"] == pytest.approx(precision)
    with pytest.raises(DatasetError, match="did you mean 'precedence'"):
        ad.test_case_from_trace(OPENAI_RUN, precedense=PRECEDENCE)
    # what traces.load returned serves as well as the raw trace; several runs name the fix
    loaded = load(OPENAI_RUN)
    assert ad.test_case_from_trace(loaded, expected_tools=EXP).tools_called == \
        ad.test_case_from_trace(OPENAI_RUN, expected_tools=EXP).tools_called
    f = tmp_path / "two.jsonl"
    f.write_text("".join(json.dumps(OPENAI_RUN) + "\n" for _ in range(2)), encoding="utf-8")
    two = load(f)
    assert len(two) == 2
    with pytest.raises(TraceFormatError, match=r"found 2; build one test case per run"):
        ad.test_case_from_trace(two)


def test_deepeval_conversational_ordering_and_missing_reference():
    pytest.importorskip("deepeval")
    from deepeval.errors import MissingTestCaseParamsError
    from deepeval.test_case import ConversationalTestCase, ToolCall, Turn

    from trajcheck.adapters import deepeval as ad

    def conv(calls, meta):
        return ConversationalTestCase(turns=[
            Turn(role="user", content=INPUT),
            Turn(role="assistant", content="Done.",
                 tools_called=[ToolCall(name=n, input_parameters=a) for n, a in calls])], metadata=meta)

    m = ad.ConversationalTrajcheckMetric("ordering_accuracy")
    assert m.__name__ == "Conversational Ordering Accuracy (trajcheck)"
    for calls in (BROKEN, KEPT):
        want = ordering_accuracy(core_traj(calls), PRECEDENCE)
        assert m.measure(conv(calls, {"trajcheck": {"precedence": PRECEDENCE}})) == want.score
    with pytest.raises(MissingTestCaseParamsError, match="precedence"):
        m.measure(conv(KEPT, None))
    with pytest.raises(DatasetError, match="did you mean 'precedence'"):
        m.measure(conv(KEPT, {"trajcheck": {"precedance": PRECEDENCE}}))


def test_promptfoo_assertion_error_pattern_and_provider_style_output():
    from trajcheck.promptfoo.assertion import get_assert

    cfg = {"metric": "tool_call_precision", "expected_calls": EXP}
    r = get_assert(OPENAI_RUN["messages"], _pf_ctx(cfg))
    assert r["score"] == pytest.approx(2 / 3)  # no error channel: the 503 attempt counts
    r = get_assert(OPENAI_RUN["messages"], _pf_ctx(dict(cfg, error_pattern="^Error")))
    assert r["score"] == 1.0  # marked failed and retried: set aside
    r = get_assert(OPENAI_RUN["messages"], _pf_ctx(dict(cfg, error_pattern="(")))
    assert r["pass"] is False and "error_pattern" in r["reason"]


def test_langsmith_adapter_import_loads_no_langsmith_evaluator_classes():
    import subprocess
    import sys

    code = ("import sys, trajcheck.adapters.langsmith as al; "
            "print('langsmith.evaluation' in sys.modules); "
            "ev = al.TrajcheckEvaluator('ordering_accuracy'); "
            "from langsmith.evaluation import RunEvaluator; print(isinstance(ev, RunEvaluator))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]
