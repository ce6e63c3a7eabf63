"""trajcheck's evaluators inside pydantic-evals' own ``Dataset.evaluate`` (offline: pydantic-ai's
``FunctionModel`` replays the refund-desk runs through real pydantic-ai tools).

The example ``examples/pydantic_evals/refund_desk.py`` runs in a subprocess (it sets the global
OpenTelemetry TracerProvider pydantic-evals records span trees under, which must not leak into
the other tests): every metric of README's table and every trajectory mode of every dialect,
read from the case's span tree, and F1 read from the task's output, must print the core's value
(``test_host_table.core_value``); a score that does not apply prints pydantic-evals' label
``not applicable``; the report evaluator's pass^2 / pass@2 / success rate equal the core's.
In-process tests check the output source, a missing reference and strict settings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_host_table import CASES, RUNS, all_cells, core_value, expected, settings  # noqa: E402

pytest.importorskip("pydantic_evals")

from trajcheck.adapters import _catalog  # noqa: E402
from trajcheck.adapters import pydantic_evals as pe  # noqa: E402
from trajcheck.errors import DatasetError, MetricInputError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def printed():
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "pydantic_evals" / "refund_desk.py")],
                       cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    parts = re.split(r"^== (\S+).*$", p.stdout, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _value(block: str, name: str) -> str:
    m = re.search(rf"^  {re.escape(name)}: (.*?) - ", block, flags=re.M)
    assert m is not None, (name, block[:500])
    return m.group(1)


def test_every_cell_in_dataset_evaluate_from_the_span_tree(printed):
    assert set(CASES) <= set(printed)
    n = 0
    for cid in CASES:
        for label, k, mode, dialect in all_cells():
            name = _catalog.default_key(k, mode, dialect)
            want = core_value(k, RUNS[cid], CASES[cid], mode, dialect)
            got = _value(printed[cid], name)
            if want is None:
                assert got == "not applicable", (cid, label, got)
                continue
            assert float(got) == want, (cid, label, got, want)
            n += 1
        assert float(_value(printed[cid], "trajcheck_tool_call_f1__output")) == \
            core_value("tool_call_f1", RUNS[cid], CASES[cid])
    assert n > 300


def test_report_evaluator_suite_figures_equal_core(printed):
    from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate
    from trajcheck.score.suite import run_outcome

    block = printed["suite"]
    trials = {cid: [bool(run_outcome(RUNS[cid], c).passed)] * 2 for cid, c in CASES.items()}
    assert float(_value(block, "pass^2")) == pass_hat_k(trials, 2)
    assert float(_value(block, "pass@2")) == pass_at_k(trials, 2)
    ok = sum(v[0] for v in trials.values()) * 2
    assert float(_value(block, "success rate")) == success_rate(ok, 16).score


def _dataset(cases, evaluators, **kw):
    from pydantic_evals import Dataset

    return Dataset(name="t", cases=cases, evaluators=evaluators, **kw)


def test_output_source_missing_reference_and_not_applicable():
    from pydantic_evals import Case

    outputs = {cid: {"trajectory": RUNS[cid].to_dict()} for cid in CASES}
    cases = [Case(name=cid, inputs=cid, metadata=pe.case_metadata(RUNS[cid], expected(c), **settings(c)))
             for cid, c in CASES.items()]
    cases.append(Case(name="no_reference", inputs="duplicate", metadata={"other": 1}))
    evs = [pe.TrajcheckEvaluator("duplicate_call_rate"), pe.TrajcheckEvaluator("error_recovery"),
           pe.TrajcheckEvaluator("trajectory_match", mode="IN_ORDER", dialect="adk")]
    rep = _dataset(cases, evs).evaluate_sync(lambda cid: outputs[cid], progress=False)
    by = {c.name: c for c in rep.cases}
    assert by["duplicate"].scores["trajcheck_duplicate_call_rate"].value == pytest.approx(1 / 3)
    assert by["order_kept"].labels["trajcheck_error_recovery"].value == "not applicable"
    assert by["retry"].scores["trajcheck_error_recovery"].value == 1.0
    key = _catalog.default_key("trajectory_match", "IN_ORDER", "adk")
    assert by["order_broken"].scores[key].value == core_value("trajectory_match", RUNS["order_broken"],
                                                              CASES["order_broken"], "IN_ORDER", "adk")
    # no expected calls: an evaluator failure naming the field, never a score
    fails = {f.name: f.error_message for f in by["no_reference"].evaluator_failures}
    assert "expected_calls" in fails["trajcheck_duplicate_call_rate"]
    assert "trajcheck_duplicate_call_rate" not in by["no_reference"].scores


def test_strict_settings():
    with pytest.raises(MetricInputError, match="optional_calls"):
        pe.TrajcheckEvaluator("tool_call_f1", settings={"optional_call": ["x"]})
    with pytest.raises(MetricInputError, match="source"):
        pe.TrajcheckEvaluator("tool_call_f1", source="spans")
    with pytest.raises(MetricInputError, match="unknown trajcheck metric"):
        pe.TrajcheckEvaluator("tool_call_f2")
    from pydantic_evals import Case

    case = Case(name="c", inputs="duplicate", metadata={"trajcheck": {"expected_call": []}})
    rep = _dataset([case], [pe.TrajcheckEvaluator("tool_call_f1")]).evaluate_sync(
        lambda _i: {"trajectory": RUNS["duplicate"].to_dict()}, progress=False)
    assert "expected_calls" in rep.cases[0].evaluator_failures[0].error_message
    with pytest.raises(DatasetError):
        pe.case_metadata(RUNS["duplicate"], None, optional_call=["x"])


def test_wrong_typed_settings_fail_at_construction_in_every_new_host():
    from trajcheck.adapters import inspect_ai as ai
    from trajcheck.adapters import mlflow as am

    for make in (lambda **kw: pe.TrajcheckEvaluator("ordering_accuracy", settings=kw),
                 lambda **kw: am.TrajcheckScorer("ordering_accuracy", **kw),
                 lambda **kw: ai.trajcheck_scorer("ordering_accuracy", **kw)):
        with pytest.raises(DatasetError, match="malformed field 'precedence'"):
            make(precedence="issue_refund before send_refund_email")
        with pytest.raises(MetricInputError, match="threshold"):
            make(threshold=2)


@pytest.mark.parametrize("bad", [None, "not json", "[1, 2", 7, {"messages": 3}, {"tool_calls": "x"},
                                 [{"role": "wizard"}], float("nan"), b"\xff\xfe", {"steps": [{"kind": 5}]}])
def test_hostile_outputs_give_trajcheck_errors_only(bad):
    """A run that is not a run: MLflow's scorer and the pydantic-evals evaluator raise a
    trajcheck error (their hosts record it as an error/failure), never crash otherwise, never
    score it as an empty run."""
    from trajcheck.adapters import mlflow as am
    from trajcheck.errors import TrajcheckError

    with pytest.raises(TrajcheckError):
        am.TrajcheckScorer("tool_call_f1", source="outputs").compute(outputs=bad, expectations={"expected_calls": []})

    class Ctx:
        name, output, inputs, metadata = "c", bad, None, {"trajcheck": {"expected_calls": []}}

    with pytest.raises(TrajcheckError):
        pe.TrajcheckEvaluator("tool_call_f1", source="output").compute(Ctx())
    with pytest.raises(DatasetError):
        am.TrajcheckScorer("tool_call_f1").compute(outputs={"tool_calls": []}, expectations=["a"])


def test_final_state_from_a_sandbox_fixture_in_the_example(printed):
    """final state from the sandbox fixture examples/refund_desk/shop.sql (before from the
    fixture, after from the run on the sandbox) equals the core's."""
    from test_host_examples import FIXTURE_WANT, fixture_core_values

    want = fixture_core_values()
    assert want == FIXTURE_WANT
    for cid, w in want.items():
        assert float(_value(printed[cid], "trajcheck_final_state")) == w, (cid, printed.get(cid))
    assert "table orders: 1 row removed" in printed["fixture_deleted"]


def test_report_evaluator_on_a_result_name_no_case_has_is_an_error():
    """In Dataset.evaluate: a misspelled ``evaluation`` name is the report evaluator's failure
    naming the closest result, with no pass^k (it was pass^2 = 0.0: every run "failed")."""
    from pydantic_evals import Case

    outputs = {cid: {"trajectory": RUNS[cid].to_dict()} for cid in CASES}
    cases = [Case(name=cid, inputs=cid, metadata=pe.case_metadata(RUNS[cid], expected(c), **settings(c)))
             for cid, c in CASES.items()]
    ev = pe.TrajcheckEvaluator("task_success")
    bad = pe.TrajcheckReportEvaluator(evaluation="trajcheck_task_sucess", k=1)
    rep = _dataset(cases, [ev], report_evaluators=[bad]).evaluate_sync(lambda cid: outputs[cid], progress=False)
    assert rep.analyses == []
    (fail,) = rep.report_evaluator_failures
    assert "no case has a result named 'trajcheck_task_sucess'" in fail.error_message
    assert "did you mean 'trajcheck_task_success'" in fail.error_message
    # the right name gives the figures: pass^1 = the share of the 8 runs that succeed
    from trajcheck.score.suite import run_outcome

    good = pe.TrajcheckReportEvaluator(k=1)
    rep = _dataset(cases, [ev], report_evaluators=[good]).evaluate_sync(lambda cid: outputs[cid], progress=False)
    assert rep.report_evaluator_failures == []
    ok = sum(bool(run_outcome(RUNS[cid], c).passed) for cid, c in CASES.items())
    assert {a.title: a.value for a in rep.analyses}["pass^1"] == ok / 8


def test_outputs_call_keys_arguments_read_and_misspelling_an_error():
    from pydantic_evals import Case

    meta = {"trajcheck": {"expected_calls": [{"name": "issue_refund", "args": {"order_id": "981"}},
                                             "send_refund_email"]}}
    outs = {oid: {"tool_calls": [{"name": "issue_refund", key: {"order_id": oid}}, {"name": "send_refund_email"}]}
            for oid, key in (("981", "arguments"), ("999", "input"), ("998", "arg"))}
    cases = [Case(name=oid, inputs=oid, metadata=meta) for oid in outs]
    rep = _dataset(cases, [pe.TrajcheckEvaluator("tool_call_f1")]).evaluate_sync(lambda oid: outs[oid],
                                                                               progress=False)
    by = {c.name: c for c in rep.cases}
    assert by["981"].scores["trajcheck_tool_call_f1"].value == 1.0
    assert by["999"].scores["trajcheck_tool_call_f1"].value == 0.5  # wrong order_id read, not dropped
    assert "trajcheck_tool_call_f1" not in by["998"].scores
    assert "unknown key 'arg' (did you mean 'args'?)" in by["998"].evaluator_failures[0].error_message
    # a misspelled metadata block name is an error, a team's own key is not
    bad = Case(name="981", inputs="981", metadata={"Trajcheck": meta["trajcheck"], "ticket": "T-1"})
    rep = _dataset([bad], [pe.TrajcheckEvaluator("tool_call_f1")]).evaluate_sync(lambda oid: outs[oid],
                                                                             progress=False)
    assert "did you mean 'trajcheck'" in rep.cases[0].evaluator_failures[0].error_message
    # the CLI's plain reader reads the same spellings and reports the same misspelling
    from trajcheck.read.traces import plain

    t = plain.read(outs["999"]["tool_calls"])
    assert [c.args for c in t.tool_calls()] == [{"order_id": "999"}, {}]
    assert plain.read(outs["998"]["tool_calls"]).metadata["problems"][0].startswith(
        "calls[0]: unknown key 'arg' (did you mean 'args'?)")


def test_case_threshold_is_the_pass_mark_in_report_figures():
    from pydantic_evals import Case

    # the duplicate run: tool-call precision 2/3 against its case's expected calls
    run, case = RUNS["duplicate"], CASES["duplicate"]
    s = {k: v for k, v in settings(case).items() if k != "threshold"}

    def meta(**extra):
        return pe.case_metadata(run, expected(case), **s, **extra)

    cases = [Case(name="lenient", inputs="duplicate", metadata=meta(threshold=0.6)),
             Case(name="strict", inputs="duplicate", metadata=meta(threshold=0.7)),
             Case(name="default", inputs="duplicate", metadata=meta())]
    ev = pe.TrajcheckEvaluator("tool_call_precision")
    rep_ev = pe.TrajcheckReportEvaluator("tool_call_precision")
    rep = _dataset(cases, [ev], report_evaluators=[rep_ev]).evaluate_sync(
        lambda _i: {"trajectory": run.to_dict()}, progress=False)
    key = ev.get_default_evaluation_name()
    assert [c.scores[key].value for c in rep.cases] == pytest.approx([2 / 3] * 3)
    figs = {a.title: a.value for a in rep.analyses}
    assert figs["success rate"] == pytest.approx(1 / 3)
