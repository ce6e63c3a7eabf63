"""trajcheck's scorers inside MLflow 3's own ``mlflow.genai.evaluate`` (offline: a local file
store under tmp_path, no server, no model), on the eight refund-desk runs of
``examples/refund_desk`` -- every metric of README's table and every trajectory mode of every
dialect, each value equal to the core function's called directly (``test_host_table.core_value``).
The runs are scored twice: as evaluate rows whose outputs hold the trajectory, and as real MLflow
traces (``log_trace`` replays each recorded run with ``mlflow.start_span``) read back by
trajcheck's MLflow trace reader."""

from __future__ import annotations

import math
import os
import warnings

import pytest
from test_host_table import CASES, RUNS, all_cells, core_value, expected, settings  # noqa: E402

pytest.importorskip("mlflow")
warnings.filterwarnings("ignore", category=DeprecationWarning)

import mlflow  # noqa: E402

from trajcheck.adapters import _catalog  # noqa: E402
from trajcheck.adapters import mlflow as am  # noqa: E402
from trajcheck.errors import DatasetError, MetricInputError  # noqa: E402


@pytest.fixture()
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    before = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    mlflow.set_experiment("trajcheck")
    try:
        yield tmp_path
    finally:
        mlflow.set_tracking_uri(before)


def _same(got, want) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got == want


def _scorers():
    cells = all_cells()
    scs = [am.TrajcheckScorer(k, mode=m, dialect=d) for _l, k, m, d in cells]
    assert len({s.name for s in scs}) == len(scs)  # names carry mode and dialect
    return cells, scs


def _check(df, case_ids, cells, scs) -> int:
    n = 0
    for i, cid in enumerate(case_ids):
        for (label, k, mode, dialect), s in zip(cells, scs):
            want = core_value(k, RUNS[cid], CASES[cid], mode, dialect)
            got = df[f"{s.name}/value"].iloc[i]
            assert _same(got, want), (cid, label, got, want, df[f"{s.name}/rationale"].iloc[i])
            n += want is not None
        # tool_call_f1 also shows precision and recall
        got_p = df["trajcheck_tool_call_f1_precision/value"].iloc[i]
        assert got_p == core_value("tool_call_precision", RUNS[cid], CASES[cid]), cid
    return n


def test_every_cell_in_mlflow_evaluate_rows(store):
    cells, scs = _scorers()
    rows = [am.row_from_trace(RUNS[cid], expected_calls=expected(c), **settings(c)) for cid, c in CASES.items()]
    res = mlflow.genai.evaluate(data=rows, scorers=scs)
    df = res.result_df
    order = [r["case_id"] for r in df["request"]]
    assert sorted(order) == sorted(CASES)
    assert _check(df, order, cells, scs) > 300
    # the rationale MLflow shows is the core's reason
    i = order.index("order_broken")
    want = _catalog.compute("ordering_accuracy", RUNS["order_broken"], CASES["order_broken"]).reason
    assert df["trajcheck_ordering_accuracy/rationale"].iloc[i] == want
    # MLflow's aggregate is the mean over rows of the core values
    vals = [core_value("tool_call_f1", RUNS[c], CASES[c]) for c in CASES]
    assert res.metrics["trajcheck_tool_call_f1/mean"] == pytest.approx(sum(vals) / len(vals), abs=1e-12)


def test_every_cell_on_mlflow_traces(store):
    cells, scs = _scorers()
    ids = {cid: am.log_trace(RUNS[cid]) for cid in CASES}
    rows = [{"trace": mlflow.get_trace(ids[cid]),
             "expectations": {"trajcheck": {"expected_calls": expected(c), **settings(c),
                                            "before_state": RUNS[cid].metadata.get("state_before"),
                                            "after_state": RUNS[cid].metadata.get("state_after")}}}
            for cid, c in CASES.items()]
    df = mlflow.genai.evaluate(data=rows, scorers=scs).result_df
    order = [r["case_id"] for r in df["request"]]  # the root span's inputs (MLflow copies the trace)
    assert sorted(order) == sorted(CASES)
    assert _check(df, order, cells, scs) > 300
    # the reader saw the failed call and the parallel pair in the trace
    from trajcheck.read.traces import mlflow as reader

    retry = reader.read(mlflow.get_trace(ids["retry"]))
    assert [r.is_error for _c, r in retry.pairs()] == [r.is_error for _c, r in RUNS["retry"].pairs()]
    par = reader.read(mlflow.get_trace(ids["parallel"]))
    assert [len(s.tool_calls) for s in par.steps if s.tool_calls] == \
        [len(s.tool_calls) for s in RUNS["parallel"].steps if s.tool_calls]


def test_feedback_missing_reference_and_skipped(store):
    f1 = am.TrajcheckScorer("tool_call_f1")
    row = am.row_from_trace(RUNS["duplicate"], expected_calls=expected(CASES["duplicate"]))
    fb = f1(**row)
    assert [f.name for f in fb] == ["trajcheck_tool_call_f1", "trajcheck_tool_call_f1_precision",
                                    "trajcheck_tool_call_f1_recall"]
    assert [f.value for f in fb] == pytest.approx([0.8, 2 / 3, 1.0])
    assert fb[0].metadata["passed"] == "false" and f1.pass_if(0.8) is False and f1.pass_if(1.0) is True
    rate = am.TrajcheckScorer("duplicate_call_rate")
    assert rate.pass_if(0.0) is True and rate.pass_if(1 / 3) is False  # lower is better
    er = am.TrajcheckScorer("error_recovery")(**am.row_from_trace(RUNS["order_kept"]))
    assert er.value is None and er.metadata["passed"] == "skipped" and er.rationale
    # no expected calls: MLflow records the error under the scorer's name, never a pass
    res = mlflow.genai.evaluate(data=[am.row_from_trace(RUNS["duplicate"])],
                                scorers=[am.TrajcheckScorer("tool_call_recall")])
    df = res.result_df
    assert math.isnan(df["trajcheck_tool_call_recall/value"].iloc[0])
    fbs = [a for a in df["assessments"].iloc[0] if a["assessment_name"] == "trajcheck_tool_call_recall"]
    assert "expected_calls" in fbs[0]["feedback"]["error"]["error_message"]


def test_mlflow_expected_tool_calls_and_predict_fn_trace(store):
    # MLflow's own expectation name; arguments compared as trajcheck compares them
    exp = {"expected_tool_calls": [{"name": "issue_refund", "arguments": {"order_id": "981", "amount": 40}},
                                   {"name": "send_refund_email"}], "expected_response": "refunded"}
    run = RUNS["duplicate"]
    sc = am.TrajcheckScorer("tool_call_precision")
    got = sc(outputs={"trajectory": run.to_dict()}, expectations=exp)
    assert got.value == pytest.approx(2 / 3)

    # predict_fn traced by MLflow: the scorer reads the trace the agent wrote
    @mlflow.trace(span_type="TOOL")
    def lookup_order(order_id: str) -> dict:
        return {"order_id": order_id}

    def agent(input: str) -> str:
        lookup_order(order_id="981")
        return "done"

    res = mlflow.genai.evaluate(data=[{"inputs": {"input": "look up 981"},
                                       "expectations": {"expected_calls": [{"name": "lookup_order",
                                                                            "args": {"order_id": "981"}}]}}],
                                predict_fn=agent, scorers=[am.TrajcheckScorer("call_correctness")])
    assert res.result_df["trajcheck_call_correctness/value"].iloc[0] == 1.0


def test_strict_settings():
    with pytest.raises(MetricInputError, match="optional_calls"):
        am.TrajcheckScorer("tool_call_f1", optional_call=["x"])
    with pytest.raises(MetricInputError, match="trajectory_match only"):
        am.TrajcheckScorer("tool_call_f1", mode="exact")
    with pytest.raises(MetricInputError, match="source"):
        am.TrajcheckScorer("tool_call_f1", source="spans")
    with pytest.raises(DatasetError, match="expected_calls"):
        am.TrajcheckScorer("tool_call_f1")(outputs={"tool_calls": []}, expectations={"expected_call": []})


def test_suite_figures_equal_core():
    from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate
    from trajcheck.score.suite import run_outcome

    rows = [am.row_from_trace(RUNS[cid], expected_calls=expected(c), **settings(c))
            for cid, c in CASES.items() for _trial in range(2)]
    figs = am.suite_figures(rows)
    trials = {cid: [bool(run_outcome(RUNS[cid], c).passed)] * 2 for cid, c in CASES.items()}
    assert figs["pass_hat_k"].score == pass_hat_k(trials, 2)
    assert figs["pass_at_k"].score == pass_at_k(trials, 2)
    ok = sum(v[0] for v in trials.values()) * 2
    assert figs["success_rate"].score == success_rate(ok, 16).score
    assert figs["routing_macro_f1"].score is None


os.environ.pop("OPENAI_API_KEY", None)


def test_expectations_logged_on_traces_and_search_traces(store):
    """Traces found by ``mlflow.search_traces()`` with expectations logged on them
    (``mlflow.log_expectation``): MLflow hands both to the scorer."""
    ids = {cid: am.log_trace(RUNS[cid]) for cid in ("duplicate", "order_broken")}
    for cid, tid in ids.items():
        mlflow.log_expectation(trace_id=tid, name="expected_calls", value=expected(CASES[cid]))
        mlflow.log_expectation(trace_id=tid, name="precedence", value=[list(p) for p in CASES[cid].precedence])
    found = mlflow.search_traces(return_type="list")
    assert {t.info.trace_id for t in found} >= set(ids.values())
    scs = [am.TrajcheckScorer("tool_call_f1"), am.TrajcheckScorer("ordering_accuracy")]
    df = mlflow.genai.evaluate(data=[t for t in found if t.info.trace_id in ids.values()], scorers=scs).result_df
    for i, req in enumerate(df["request"]):
        cid = req["case_id"]
        assert df["trajcheck_tool_call_f1/value"].iloc[i] == core_value("tool_call_f1", RUNS[cid], CASES[cid])
        assert df["trajcheck_ordering_accuracy/value"].iloc[i] == core_value("ordering_accuracy", RUNS[cid],
                                                                             CASES[cid])


def test_suite_figures_of_evaluation_result(store):
    """``suite_figures`` on what ``mlflow.genai.evaluate`` returns: three tasks with 3-4 trials
    each, the verdict read from each row's Feedback (tool_call_f1 passes only at 1.0: the
    duplicate and forbidden runs score 0.8), an error Feedback (no expected calls) a failure.

    Per task, successes c of n trials: t1 = optional P, duplicate F, retry P (2 of 3);
    t2 = parallel P, order_kept P, no_tool P, a row without expected calls F (3 of 4);
    t3 = forbidden F, duplicate F, order_broken P (1 of 3).
    pass^2 = mean C(c,2)/C(n,2) = (1/3 + 3/6 + 0)/3 = 5/18; pass@2 = mean 1 - C(n-c,2)/C(n,2)
    = (1 + 1 + (1 - 1/3))/3 = 8/9; pass^3 (k defaults to the fewest trials, 3) = (0 + 1/4 + 0)/3
    = 1/12; success rate 6/10."""
    plan = {"t1": ["optional", "duplicate", "retry"], "t2": ["parallel", "order_kept", "no_tool", None],
            "t3": ["forbidden", "duplicate", "order_broken"]}
    rows = []
    for task, cids in plan.items():
        for cid in cids:
            row = (am.row_from_trace(RUNS["optional"]) if cid is None else
                   am.row_from_trace(RUNS[cid], expected_calls=expected(CASES[cid]), **settings(CASES[cid])))
            row["inputs"]["case_id"] = task
            rows.append(row)
    f1 = am.TrajcheckScorer("tool_call_f1")
    res = mlflow.genai.evaluate(data=rows, scorers=[f1])
    assert len(res.result_df) == 10

    figs2 = am.suite_figures(res, f1, k=2)
    assert figs2["pass_hat_k"].score == pytest.approx(5 / 18)
    assert figs2["pass_at_k"].score == pytest.approx(8 / 9)
    assert figs2["success_rate"].score == pytest.approx(0.6)
    assert figs2["routing_macro_f1"].score is None
    figs = am.suite_figures(res, f1)
    assert figs["pass_hat_k"].parts["k"] == 3 and figs["pass_hat_k"].score == pytest.approx(1 / 12)
    assert figs["pass_at_k"].score == pytest.approx(1.0)
    # the same figures (intervals included) as from the rows given to evaluate
    for got, want in ((figs2, am.suite_figures(rows, f1, k=2)), (figs, am.suite_figures(rows, f1))):
        assert {f: (r.score, r.reason) for f, r in got.items()} == {f: (r.score, r.reason) for f, r in want.items()}

    # the values come from the recorded Feedback, judged by the given scorer's pass mark: at
    # threshold 0.5 the two 0.8 rows pass; a scorer of another metric under the same name reads
    # the recorded F1 values too (recall, computed afresh, is 1.0 on the duplicate run)
    assert am.suite_figures(res, am.TrajcheckScorer("tool_call_f1", threshold=0.5), k=2)["success_rate"].score \
        == pytest.approx(0.9)
    assert am.suite_figures(res, am.TrajcheckScorer("tool_call_recall", name=f1.name), k=2)["success_rate"].score \
        == pytest.approx(0.6)
    # a scorer evaluate did not run is computed from each row's outputs and expectations:
    # task_success holds on the nine runs with a reference; the row without one fails
    ts = am.suite_figures(res, k=2)
    assert ts["success_rate"].score == pytest.approx(0.9)
    assert ts["pass_hat_k"].score == pytest.approx((1 + 3 / 6 + 1) / 3)
    assert ts["pass_hat_k"].score == am.suite_figures(rows, k=2)["pass_hat_k"].score


def test_misspelled_call_keys_and_two_expectation_names_are_errors(store):
    out = {"tool_calls": [{"name": "issue_refund", "arg": {"order_id": "999"}}, {"name": "send_refund_email"}]}
    f1 = am.TrajcheckScorer("tool_call_f1")
    good = {"tool_calls": [{"name": "issue_refund", "args": {"order_id": "981"}}, {"name": "send_refund_email"}]}
    # MLflow's own expected_tool_calls: a misspelled key inside one call names the key
    with pytest.raises(DatasetError, match=r"unknown key 'arg' \(did you mean 'args'\?\)"):
        f1(outputs=good, expectations={"expected_tool_calls": out["tool_calls"]})
    both = {"expected_calls": ["send_refund_email"], "expected_tool_calls": [{"name": "issue_refund"}]}
    with pytest.raises(DatasetError, match="both 'expected_calls' and 'expected_tool_calls'"):
        f1(outputs=good, expectations=both)
    # outputs calls: `arguments` (MLflow's / OpenAI's spelling) is read as args, inside evaluate
    exp = {"expected_calls": [{"name": "issue_refund", "args": {"order_id": "981"}}, "send_refund_email"]}
    rows = [{"inputs": {"input": "refund 981"}, "expectations": exp,
             "outputs": {"tool_calls": [{"name": "issue_refund", "arguments": {"order_id": oid}},
                                        {"name": "send_refund_email"}]}} for oid in ("981", "999")]
    df = mlflow.genai.evaluate(data=rows, scorers=[f1]).result_df
    assert sorted(df["trajcheck_tool_call_f1/value"]) == [0.5, 1.0]  # wrong order_id: 1 of 2 calls right
    # an unknown key in an outputs call is an error in the assessment, never a name-only call
    df = mlflow.genai.evaluate(data=[{"inputs": {"input": "x"}, "expectations": exp, "outputs": out}],
                               scorers=[f1]).result_df
    assert math.isnan(df["trajcheck_tool_call_f1/value"].iloc[0])
    fbs = [a for a in df["assessments"].iloc[0] if a["assessment_name"] == "trajcheck_tool_call_f1"]
    assert "unknown key 'arg'" in fbs[0]["feedback"]["error"]["error_message"]


def test_row_threshold_is_the_pass_mark(store):
    # the duplicate run: tool-call precision 2/3 against its case's expected calls
    run, case = RUNS["duplicate"], CASES["duplicate"]
    exp = {"expected_calls": expected(case), **settings(case)}
    exp.pop("threshold", None)
    sc = am.TrajcheckScorer("tool_call_precision")
    rows = [{"inputs": {"case_id": "lenient"}, "outputs": {"trajectory": run.to_dict()},
             "expectations": {**exp, "threshold": 0.6}},
            {"inputs": {"case_id": "strict"}, "outputs": {"trajectory": run.to_dict()},
             "expectations": {**exp, "threshold": 0.7}},
            {"inputs": {"case_id": "default"}, "outputs": {"trajectory": run.to_dict()}, "expectations": exp}]
    df = mlflow.genai.evaluate(data=rows, scorers=[sc]).result_df
    values = [float(v) for v in df["trajcheck_tool_call_precision/value"]]
    assert values == pytest.approx([2 / 3] * 3)
    fb = [sc(outputs=r["outputs"], expectations=r["expectations"], inputs=r["inputs"]) for r in rows]
    assert [f.metadata["passed"] for f in fb] == ["true", "false", "false"]
    # suite figures count the lenient row as the one success
    figs = am.suite_figures(rows, scorer=sc)
    assert figs["success_rate"].score == pytest.approx(1 / 3)
    # a scorer threshold different from the row's: an error naming both (MLflow's evaluate
    # records it as the row's error Feedback)
    sc5 = am.TrajcheckScorer("tool_call_precision", threshold=0.5)
    with pytest.raises(DatasetError, match="threshold is 0.6 in case 'lenient' reference and 0.5 in the scorer"):
        sc5(outputs=rows[0]["outputs"], expectations=rows[0]["expectations"], inputs=rows[0]["inputs"])


# a restart that failed: the same plain call list read by the CLI's plain reader and returned
# as MLflow outputs (a bare list, and {"tool_calls", "final_response"})
RESTART_CALLS = [{"name": "get_status", "args": {"svc": "api"}, "output": "api: down"},
                 {"name": "restart", "args": {"svc": "api"}, "output": "failed: timeout", "is_error": True}]
RESTART_EXP = {"expected_calls": [{"name": "get_status", "args": {"svc": "api"}},
                                  {"name": "restart", "args": {"svc": "api"}}]}
CLAIM = "The api service has been restarted successfully."


def test_outputs_call_results_and_failures_read_as_the_cli_reads_them(store):
    from dataclasses import replace

    from trajcheck.model import Case, ExpectedCall, Step
    from trajcheck.read.traces import load

    keys = ("task_success", "false_success", "tool_call_f1", "error_recovery")
    scs = [am.TrajcheckScorer(k) for k in keys]
    rows = [{"inputs": {"case_id": "bare"}, "outputs": RESTART_CALLS, "expectations": RESTART_EXP},
            {"inputs": {"case_id": "claim"}, "outputs": {"tool_calls": RESTART_CALLS, "final_response": CLAIM},
             "expectations": RESTART_EXP}]
    df = mlflow.genai.evaluate(data=rows, scorers=scs).result_df
    got = {r["case_id"]: {k: df[f"trajcheck_{k}/value"].iloc[i] for k in keys} for i, r in enumerate(df["request"])}
    # the CLI's plain reader (what `trajcheck eval` reads for a JSON list of calls)
    lr = load(RESTART_CALLS)
    assert lr.formats == {"plain": 1} and not lr.problems
    cli = lr.trajectories[0]
    case = Case(id="restart", input="restart api", expected_calls=(ExpectedCall("get_status", {"svc": "api"}),
                                                                   ExpectedCall("restart", {"svc": "api"})))
    claimed = replace(cli, steps=(*cli.steps, Step(len(cli.steps), "final_response", CLAIM)), final_response=CLAIM)
    for cid, traj in (("bare", cli), ("claim", claimed)):
        assert got[cid] == {k: _catalog.compute(k, traj, case).score for k in keys}, cid
    # hand values: both expected calls were made (F1 1.0), but the restart failed and was not
    # retried, so the task failed (0.0) and nothing recovered (0 of 1); the run that claims
    # success after the failed restart is a false success (1.0)
    assert got["bare"] == {"task_success": 0.0, "false_success": 0.0, "tool_call_f1": 1.0, "error_recovery": 0.0}
    assert got["claim"] == {"task_success": 0.0, "false_success": 1.0, "tool_call_f1": 1.0, "error_recovery": 0.0}
    # a non-boolean is_error is an error naming the call (the CLI lists it as a problem)
    bad = [{**RESTART_CALLS[1], "is_error": "yes"}]
    with pytest.raises(Exception, match=r"outputs\[0\]: is_error is 'yes'; write true or false"):
        am.TrajcheckScorer("task_success")(outputs=bad, expectations=RESTART_EXP)
    assert load(bad).trajectories[0].metadata["problems"][0].startswith("calls[0]: is_error is 'yes'")


def test_untraced_predict_fn_is_an_error_naming_the_fix(store):
    # neither the agent nor its tool is decorated: MLflow's trace holds only the root span
    # evaluate() opens, so the calls are unknown; never a quiet 0-call score (which passed
    # forbidden_calls and scored call_correctness 0.0 before)
    def lookup_order(order_id: str) -> dict:
        return {"order_id": order_id}

    def agent(input: str) -> str:
        lookup_order(order_id="981")
        return "done"

    exp = {"expected_calls": [{"name": "lookup_order", "args": {"order_id": "981"}}], "forbidden_calls": ["drop_db"]}
    df = mlflow.genai.evaluate(data=[{"inputs": {"input": "look up 981"}, "expectations": exp}], predict_fn=agent,
                               scorers=[am.TrajcheckScorer("call_correctness"),
                                        am.TrajcheckScorer("forbidden_calls")]).result_df
    for name in ("trajcheck_call_correctness", "trajcheck_forbidden_calls"):
        assert math.isnan(df[f"{name}/value"].iloc[0])
        fbs = [a for a in df["assessments"].iloc[0] if a["assessment_name"] == name]
        msg = fbs[0]["feedback"]["error"]["error_message"]
        assert 'decorate each tool with @mlflow.trace(span_type="TOOL")' in msg and "return the calls in outputs" in msg
