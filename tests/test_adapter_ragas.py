"""trajcheck.adapters.ragas against the real RAGAS 0.4.3 (offline, no API key)."""

from __future__ import annotations

import asyncio
import math
import os
import warnings

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.pop("OPENAI_API_KEY", None)
warnings.filterwarnings("ignore", category=DeprecationWarning)

ragas = pytest.importorskip("ragas")

from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.dataset_schema import MultiTurnSample  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from ragas.messages import ToolCall as RTC  # noqa: E402

from trajcheck.adapters import ragas as ar  # noqa: E402
from trajcheck.metrics.calls import tool_call_prf  # noqa: E402
from trajcheck.metrics.composite import score_trajectory  # noqa: E402
from trajcheck.metrics.trajectory import trajectory_match  # noqa: E402
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory  # noqa: E402


def sample(pred, ref, text="weather?"):
    msgs = [HumanMessage(content=text)]
    if pred:
        msgs.append(AIMessage(content="", tool_calls=[RTC(name=n, args=a) for n, a in pred]))
        msgs += [ToolMessage(content="ok") for _ in pred]
    msgs.append(AIMessage(content="done"))
    return MultiTurnSample(user_input=msgs, reference_tool_calls=[RTC(name=n, args=a) for n, a in ref])


def core_pair(pred, ref, text="weather?", **case_kw):
    steps = [Step(0, "user", content=text)]
    if pred:
        steps.append(Step(1, "tool_call", tool_calls=tuple(ToolCall(n, dict(a)) for n, a in pred)))
    traj = Trajectory(steps=tuple(steps), final_response="done")
    return traj, Case(id="ragas", input=text, expected_calls=tuple(ExpectedCall(n, dict(a)) for n, a in ref),
                      **case_kw)


SH, NY = {"city": "SH"}, {"city": "NY"}
ROWS = [
    # R3: duplicates count -> 1 TP, 1 FP, 1 FN: F1 = 0.5 (RAGAS's set-based F1 says 0.6667)
    ([("w", SH), ("w", SH)], [("w", NY), ("w", SH)]),
    # reordered parallel calls (one model turn): no order among them, so unordered and exact
    # both hold (DESIGN: parallel steps in ordered modes); F1 1.0
    ([("book", {"id": 1}), ("search", {"q": "x"})], [("search", {"q": "x"}), ("book", {"id": 1})]),
    # R2: an extra call: F1 = 2 * (1/2 * 1) / 1.5 = 0.6667
    ([("w", NY), ("t", {"f": 75})], [("w", NY)]),
]


def test_evaluate_on_multiturn_dataset_equals_core():
    metrics = [ar.TrajcheckToolCallF1(), ar.TrajcheckToolCallAccuracy(),
               ar.TrajcheckToolCallAccuracy(name="acc_any_order", strict_order=False),
               ar.TrajcheckTrajectoryMatch(name="superset", match_mode="superset", dialect="agentevals"),
               ar.TrajcheckComposite()]
    ds = EvaluationDataset(samples=[sample(p, r) for p, r in ROWS])
    df = evaluate(ds, metrics=metrics, show_progress=False, raise_exceptions=True).to_pandas()
    for i, (p, r) in enumerate(ROWS):
        traj, case = core_pair(p, r)
        row = df.iloc[i]
        assert row["trajcheck_tool_call_f1"] == tool_call_prf(traj, case).f1
        assert row["trajcheck_tool_call_accuracy_exact"] == trajectory_match(traj, case, "exact").score
        assert row["acc_any_order"] == trajectory_match(traj, case, "unordered").score
        assert row["superset"] == trajectory_match(traj, case, "superset").score
        assert row["trajcheck_composite"] == score_trajectory(traj, case).score
    # hand-computed
    assert list(df["trajcheck_tool_call_f1"].round(12)) == [0.5, 1.0, round(2 / 3, 12)]
    assert list(df["trajcheck_tool_call_accuracy_exact"]) == [0.0, 1.0, 0.0]
    assert list(df["acc_any_order"]) == [0.0, 1.0, 0.0]
    assert list(df["superset"]) == [0.0, 1.0, 1.0]


def test_ordering_flag_means_what_it_says():
    assert ar.ragas_mode(True) == "exact" and ar.ragas_mode(False) == "unordered"
    same = sample([("a", {}), ("b", {})], [("a", {}), ("b", {})])
    # b then a in two model turns: the order is real
    swapped = MultiTurnSample(user_input=[
        HumanMessage(content="weather?"),
        AIMessage(content="", tool_calls=[RTC(name="b", args={})]), ToolMessage(content="ok"),
        AIMessage(content="", tool_calls=[RTC(name="a", args={})]), ToolMessage(content="ok"),
        AIMessage(content="done")], reference_tool_calls=[RTC(name="a", args={}), RTC(name="b", args={})])
    strict, loose = ar.TrajcheckToolCallAccuracy(), ar.TrajcheckToolCallAccuracy(strict_order=False)
    assert strict.multi_turn_score(same) == 1.0 and strict.multi_turn_score(swapped) == 0.0
    assert loose.multi_turn_score(swapped) == 1.0
    # b and a issued together in one turn have no order: strict holds
    assert strict.multi_turn_score(sample([("b", {}), ("a", {})], [("a", {}), ("b", {})])) == 1.0


def test_optional_calls_and_matchers_on_instance():
    s = sample([("search_docs", {"q": "x"}), ("w", {"city": " sh "})], [("w", {"city": "SH"})])
    assert ar.TrajcheckToolCallF1().multi_turn_score(s) == 0.0
    m = ar.TrajcheckToolCallF1(optional_calls=["search_docs"], match={"w": {"city": "normalized"}})
    assert m.multi_turn_score(s) == 1.0
    traj, case = core_pair([("search_docs", {"q": "x"}), ("w", {"city": " sh "})], [("w", {"city": "SH"})],
                           optional_calls=("search_docs",))
    from dataclasses import replace

    case = replace(case, expected_calls=(ExpectedCall("w", {"city": "SH"}, match={"city": "normalized"}),))
    assert m.last_result is not None and m.last_result.reason == tool_call_prf(traj, case).reason


def test_collections_form_same_numbers_and_reason():
    for p, r in ROWS:
        s = sample(p, r)
        traj, case = core_pair(p, r)
        core = tool_call_prf(traj, case)
        res = asyncio.run(ar.TrajcheckToolCallF1().as_collections().ascore(
            user_input=s.user_input, reference_tool_calls=s.reference_tool_calls))
        assert (res.value, res.reason) == (core.f1, core.reason)
        direct = ar.TrajcheckCollectionsMetric("trajectory_match", mode="ToolCallAccuracy(strict_order=False)",
                                               dialect="ragas").score(
            user_input=s.user_input, reference_tool_calls=s.reference_tool_calls)
        assert direct.value == trajectory_match(traj, case, "unordered").score


def test_forbidden_and_not_applicable():
    s = sample([("delete", {"id": 1})], [])
    m = ar.TrajcheckForbiddenCalls(forbidden_calls=["delete"])
    assert m.multi_turn_score(s) == 0.0
    # argument correctness with no expected tool called is not applicable -> NaN in RAGAS
    s2 = sample([("x", {})], [("w", SH)])
    assert math.isnan(ar.TrajcheckArgumentAccuracy().multi_turn_score(s2))


def test_missing_reference_is_an_error():
    s = MultiTurnSample(user_input=[HumanMessage(content="hi"), AIMessage(content="x")])
    from trajcheck.errors import DatasetError

    with pytest.raises(DatasetError, match="reference_tool_calls"):
        ar.TrajcheckToolCallF1().compute(s.user_input, None)


def _helpdesk_tool_defs():
    from pathlib import Path

    from trajcheck.run.runner import load_agent

    agents = Path(__file__).resolve().parent.parent / "examples" / "helpdesk" / "agents.py"
    return load_agent(f"{agents}:good_agent").tools.definitions("openai")


def test_schema_validity_and_argument_correctness_in_evaluate():
    # get_ticket's ticket_id must be a string "INC-<n>" (1043 is a type error); update_ticket's
    # priority must be low/medium/high/critical ("urgent" is not); search_docs is valid:
    # schema validity 1/3. Per-argument accuracy (seed 000 §2.2): get_ticket 0/1, update_ticket
    # 1/2 -> 0.25; the fixed run scores 1.0 on both.
    bad = [("get_ticket", {"ticket_id": 1043}), ("update_ticket", {"ticket_id": "INC-1043", "priority": "urgent"}),
           ("search_docs", {"query": "priority policy"})]
    fixed = [("get_ticket", {"ticket_id": "INC-1043"}), ("update_ticket", {"ticket_id": "INC-1043", "priority": "high"})]
    ref = fixed
    defs = _helpdesk_tool_defs()
    metrics = [ar.TrajcheckSchemaValidity(tools=defs), ar.TrajcheckArgumentAccuracy()]
    df = evaluate(EvaluationDataset(samples=[sample(bad, ref), sample(fixed, ref)]), metrics=metrics,
                  show_progress=False, raise_exceptions=True).to_pandas()
    assert list(df["trajcheck_schema_validity"]) == [pytest.approx(1 / 3), 1.0]
    assert list(df["trajcheck_argument_accuracy"]) == [0.25, 1.0]
    from trajcheck.metrics.calls import argument_accuracy, schema_errors

    for i, p in enumerate((bad, fixed)):
        traj, case = core_pair(p, ref)
        assert df["trajcheck_schema_validity"][i] == schema_errors(traj, defs).score
        assert df["trajcheck_argument_accuracy"][i] == argument_accuracy(traj, case).score
    res = metrics[0].as_collections().score(user_input=sample(bad, ref).user_input)
    assert res.value == pytest.approx(1 / 3) and res.reason == schema_errors(core_pair(bad, ref)[0], defs).reason


def test_per_sample_settings_and_failed_results_from_message_metadata():
    # hd_009-like run: create_ticket fails with a 503, is retried, and succeeds; the agent also
    # searched the docs. Reference: one create_ticket.
    call = {"title": "Monitor flickers", "priority": "medium"}
    msgs = [HumanMessage(content="My monitor flickers; open a ticket.",
                         metadata={"trajcheck": {"optional_calls": ["search_docs"]}}),
            AIMessage(content="", tool_calls=[RTC(name="search_docs", args={"query": "monitor"})]),
            ToolMessage(content="[]"),
            AIMessage(content="", tool_calls=[RTC(name="create_ticket", args=call)]),
            ToolMessage(content="503", metadata={"is_error": True, "error": "HTTP 503"}),
            AIMessage(content="", tool_calls=[RTC(name="create_ticket", args=call)]),
            ToolMessage(content='{"ticket_id": "INC-1052"}'),
            AIMessage(content="Opened INC-1052.")]
    s = MultiTurnSample(user_input=msgs, reference_tool_calls=[RTC(name="create_ticket", args=call)])
    # optional search_docs not counted, failed-and-retried create_ticket set aside: F1 = 1.0
    assert ar.TrajcheckToolCallF1().multi_turn_score(s) == 1.0
    # lists are joined (instance + sample): an empty instance list removes nothing ...
    assert ar.TrajcheckToolCallF1(optional_calls=[]).multi_turn_score(s) == 1.0
    # ... and without the sample's optional_calls search_docs counts -> P = 1/2, R = 1, F1 = 2/3
    msgs[0] = HumanMessage(content="My monitor flickers; open a ticket.")
    s1 = MultiTurnSample(user_input=msgs, reference_tool_calls=s.reference_tool_calls)
    assert ar.TrajcheckToolCallF1().multi_turn_score(s1) == pytest.approx(2 / 3)
    # without the error flag the failed attempt is an extra call too: P = 1/3, R = 1 -> 0.5
    msgs[4] = ToolMessage(content="503")
    s2 = MultiTurnSample(user_input=msgs, reference_tool_calls=s.reference_tool_calls)
    assert ar.TrajcheckToolCallF1().multi_turn_score(s2) == pytest.approx(0.5)
    # per-sample expected calls in dataset-row form carry matchers RAGAS's ToolCall cannot
    msgs[0] = HumanMessage(content="x", metadata={"trajcheck": {"expected_calls": [
        {"name": "create_ticket", "args": {"title": "monitor"}, "match": {"title": "contains"},
         "args_mode": "expected_keys"}], "optional_calls": ["search_docs"]}})
    s3 = MultiTurnSample(user_input=msgs, reference_tool_calls=[RTC(name="create_ticket", args={})])
    # the unflagged failed attempt and the retry both match the one expected call: 1 TP, 1 FP
    assert ar.TrajcheckToolCallF1().multi_turn_score(s3) == pytest.approx(2 / 3)
    from trajcheck.errors import DatasetError

    msgs[0] = HumanMessage(content="x", metadata={"trajcheck": ["optional_calls"]})
    with pytest.raises(DatasetError, match=r"metadata\['trajcheck'\] must be a dict"):
        ar.TrajcheckToolCallF1().compute(msgs, [])


def test_calls_only_path_gives_the_trajectory_paths_result():
    # tool-call F1/precision/recall read the calls alone when no tool result failed; the result
    # (score, reason, parts) must be the one the whole trajectory gives, on a workload with
    # duplicates, wrong arguments, missing and extra calls, and on a run with a retried failure
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import workload as W

    from trajcheck.adapters import _catalog, _convert

    samples = [W.to_ragas_sample(it) for it in W.make_workload(120, 3)]
    failed = MultiTurnSample(user_input=[
        HumanMessage(content="x"), AIMessage(content="", tool_calls=[RTC(name="a", args={"q": 1})]),
        ToolMessage(content="503", metadata={"is_error": True}),
        AIMessage(content="", tool_calls=[RTC(name="a", args={"q": 1})]), ToolMessage(content="ok")],
        reference_tool_calls=[RTC(name="a", args={"q": 1})])
    assert _convert.messages_calls(failed.user_input) is None  # retries need the trajectory
    assert _convert.messages_calls(samples[0].user_input) is not None
    # RAGAS's own objects and nothing per sample: scored from plain dicts (ar._plain_sample);
    # a flagged ToolMessage or a per-sample settings block takes the general reader
    assert all(ar._plain_sample(s.user_input, s.reference_tool_calls) is not None for s in samples)
    assert ar._plain_sample(failed.user_input, failed.reference_tool_calls) is None
    per_sample = MultiTurnSample(user_input=[HumanMessage(content="x", metadata={"trajcheck": {"optional_calls": ["b"]}}),
                                             AIMessage(content="", tool_calls=[RTC(name="a", args={})])],
                                 reference_tool_calls=[RTC(name="a", args={})])
    assert ar._plain_sample(per_sample.user_input, per_sample.reference_tool_calls) is None
    assert ar._plain_sample(samples[0].user_input, None) is None
    for kind in ("tool_call_f1", "tool_call_precision", "tool_call_recall", "f1"):
        for am in (None, "exact_keys", "ignore"):
            m = ar.TrajcheckRagasMetric(metric=kind, optional_calls=["calculate"], args_mode=am)
            for s in samples + [failed]:
                traj, case, provided = ar._to_trajcheck(s.user_input, s.reference_tool_calls,
                                                        {"optional_calls": ["calculate"], "args_mode": am}, None)[:3]
                full = _catalog.compute(kind, traj, case, _catalog.Options(args_mode=am), provided)
                got = m.compute(s.user_input, s.reference_tool_calls)
                assert (got.name, got.score, got.reason, got.parts, got.passed) == \
                    (full.name, full.score, full.reason, full.parts, full.passed), (kind, am)
    # the retried failure is set aside: P = R = 1
    assert ar.TrajcheckToolCallF1().compute(failed.user_input, failed.reference_tool_calls).score == 1.0
    # a setting changed on the instance after a score is used by the next score
    m = ar.TrajcheckToolCallF1()
    s = sample([("a", {}), ("b", {})], [("a", {})])
    assert m.compute(s.user_input, s.reference_tool_calls).score == pytest.approx(2 / 3)
    m.optional_calls = ["b"]
    assert m.compute(s.user_input, s.reference_tool_calls).score == 1.0


def test_evaluate_scores_without_the_argument_note_and_last_result_is_the_full_result():
    # inside ragas.evaluate only the score is kept: tool-call F1 leaves out the reason's
    # argument-difference note (tool_call_prf_dicts(arg_note=False)) and last_result builds the
    # full core result when read; figures and parts are the same either way
    from trajcheck.metrics.prf_dicts import tool_call_prf_dicts

    calls = [{"name": "issue_refund", "args": {"order_id": "918"}}, {"name": "send_email", "args": {}}]
    exp = [{"name": "issue_refund", "args": {"order_id": "981"}}, {"name": "send_email", "args": {}}]
    full = tool_call_prf_dicts(calls, exp)
    short = tool_call_prf_dicts(calls, exp, arg_note=False)
    assert (short.score, short.parts, short.precision, short.recall) == (full.score, full.parts, 0.5, 0.5)
    assert full.reason.startswith(short.reason) and "order_id" in full.reason and "order_id" not in short.reason
    s = sample([(c["name"], c["args"]) for c in calls], [(e["name"], e["args"]) for e in exp])
    m = ar.TrajcheckToolCallF1()
    df = evaluate(EvaluationDataset(samples=[s]), metrics=[m], show_progress=False,
                  raise_exceptions=True).to_pandas()
    assert df["trajcheck_tool_call_f1"][0] == full.score == 0.5
    # precision and recall rows inside the runner: the figures alone, equal to the core's
    rows = [ar.TrajcheckRagasMetric(metric="tool_call_precision", optional_calls=["lookup"]),
            ar.TrajcheckRagasMetric(metric="tool_call_recall")]
    s2 = sample([(c["name"], c["args"]) for c in calls] + [("lookup", {})],
                [(e["name"], e["args"]) for e in exp])
    df2 = evaluate(EvaluationDataset(samples=[s2]), metrics=rows, show_progress=False,
                   raise_exceptions=True).to_pandas()
    assert [df2[r.name][0] for r in rows] == [1 / 2, 1 / 2]
    assert [r.last_result.score for r in rows] == [1 / 2, 1 / 2]  # type: ignore[union-attr]
    got = m.last_result
    assert got is not None and (got.score, got.reason, got.parts) == (full.score, full.reason, full.parts)
    assert m.last_result is got  # built once
    assert m.compute(s.user_input, s.reference_tool_calls).reason == full.reason
    m.last_result = None
    assert m.last_result is None
