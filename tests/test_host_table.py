"""The metric x host table of README.md, cell by cell, in the real hosts (offline).

Data: the eight refund-desk runs of ``examples/refund_desk`` (an optional call, a duplicate, a
failed-then-retried call, a parallel pair, an order rule broken and kept, a forbidden call, a
no-tool case), read with ``trajcheck.read.traces.load`` and turned into each host's test case by the
adapters' helpers. Every row metric -- and every trajectory mode of every dialect in
``MODE_TABLE`` -- runs in DeepEval ``evaluate``, RAGAS ``evaluate``, LangSmith ``evaluate``
(``upload_results=False``) and the promptfoo assertion (MLflow, Inspect AI and pydantic-evals in
tests/test_adapter_mlflow.py, test_adapter_inspect_ai.py, test_adapter_pydantic_evals.py); each value must equal the core
function's called directly (``core_value``), and a score the core leaves undefined (None) must
be skipped in the host's own way. The suite figures are checked the same way.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.pop("OPENAI_API_KEY", None)
warnings.filterwarnings("ignore", category=DeprecationWarning)

from trajcheck import load_cases  # noqa: E402
from trajcheck.adapters import _catalog, _suite  # noqa: E402
from trajcheck.metrics.trajectory import MODE_TABLE  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "refund_desk"
RUNS = {t.metadata["case_id"]: t for t in load(DATA / "runs.jsonl").trajectories}
CASES = {c.id: c for c in load_cases(DATA / "cases.jsonl")}
KEYS = [m.key for m in _catalog.ROW_METRICS if m.key != "trajectory_match"]
MODES = [(r.dialect, r.name) for r in MODE_TABLE] + [(None, m) for m in
                                                      ("exact", "in_order", "unordered", "superset", "subset")]


def settings(case) -> dict[str, Any]:
    d = case.to_dict()
    for k in ("id", "input", "expected_calls"):
        d.pop(k, None)
    return d


def expected(case) -> list[dict[str, Any]]:
    return [{"name": e.name, "args": e.args} for e in case.expected_calls]


def core_value(key: str, traj, case, mode: str | None = None, dialect: str | None = None) -> float | None:
    """The core function for ``key``, called directly (not through the adapters)."""
    from trajcheck.metrics import calls, composite, outcome, recovery, sequences, trajectory
    from trajcheck.score.suite import run_outcome

    if key in ("tool_call_f1", "tool_call_precision", "tool_call_recall"):
        r = calls.tool_call_prf(traj, case)
        return {"tool_call_f1": r.f1, "tool_call_precision": r.precision, "tool_call_recall": r.recall}[key]
    if key == "tool_selection":
        return calls.selection_accuracy([(traj, case)]).score
    if key == "trajectory_match":
        return trajectory.trajectory_match(traj, case, mode or "superset", dialect=dialect).score
    if key == "argument_accuracy":
        return calls.argument_accuracy(traj, case).score
    if key == "call_exact_correct":
        return calls.call_exact_correct(traj, case).score
    if key == "call_correctness":
        return calls.call_correctness(traj, case).score
    if key == "schema_validity":
        return calls.schema_errors(traj, list(case.tools)).score
    if key == "argument_provenance":
        return calls.argument_provenance(traj, case).score
    if key == "ordering_accuracy":
        return sequences.ordering_accuracy(traj, case.precedence).score
    if key == "forbidden_calls":
        rules = [dict(r) for r in case.forbidden_sequences] + [{"tool": n} for n in case.forbidden_calls]
        return sequences.check_forbidden_sequences(traj, rules).score
    if key in ("unnecessary_call_rate", "duplicate_call_rate"):
        r = sequences.call_rates(traj, case)
        return None if not r.parts["n_counted"] else r.parts[key.replace("_call", "")]
    if key == "error_recovery":
        return sequences.error_recovery(traj).score
    if key == "false_success":
        if not sequences.error_recovery(traj).parts["errors"]:
            return None
        return float(recovery.is_false_success((traj, bool(run_outcome(traj, case).passed))))
    if key == "response_includes":
        return outcome.response_includes(traj, case.response_must_include).score
    if key == "final_state":
        m = traj.metadata
        return outcome.check_final_state(m["state_before"], m["state_after"], case.expected_final_state).score
    if key == "task_success":
        return run_outcome(traj, case).score
    if key == "efficiency":
        return composite.efficiency_score(traj, case)[0]
    assert key == "composite"
    return composite.score_trajectory(traj, case, outcome=run_outcome(traj, case)).score


def all_cells():
    """(label, key, mode, dialect) for every row metric and every trajectory mode."""
    out = [(k, k, None, None) for k in KEYS]
    out += [(f"trajectory_match[{d}:{m}]", "trajectory_match", m, d) for d, m in MODES]
    return out


#: The table's host columns for a row metric ``{k}``: DeepEval, RAGAS, LangSmith, promptfoo,
#: MLflow, Inspect AI, pydantic-evals (each tested cell by cell below and in tests/test_adapter_<host>.py).
HOST_CELLS = ['`TrajcheckMetric("{k}")`', '`TrajcheckRagasMetric(metric="{k}")`', '`TrajcheckEvaluator("{k}")`',
              "`metric: {k}`", '`TrajcheckScorer("{k}")`', '`trajcheck_scorer("{k}")`',
              '`TrajcheckEvaluator("{k}")`']


def test_readme_table_lists_every_metric_and_figure_in_every_host():
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- host-table:start -->")[1].split("<!-- host-table:end -->")[0]
    rows = [ln for ln in table.strip().splitlines()[2:]]
    keys = [re.match(r"\| `([a-z0-9_]+)`", ln).group(1) for ln in rows]  # type: ignore[union-attr]
    assert keys == [m.key for m in _catalog.ROW_METRICS] + list(_suite.SUITE_FIGURES)
    for ln, k in zip(rows, keys):
        cells = [c.strip() for c in ln.strip("|").split("|")]
        assert len(cells) == 3 + len(HOST_CELLS) and all(cells[3:]), ln  # no empty host cell
        if k in _suite.SUITE_FIGURES:
            assert f'"{k}"' in cells[5]
            assert cells[7] == "`suite_figures(rows)` (1)"
            assert cells[8] == {"pass_hat_k": "`Epochs(n, pass_hat_k(k))` reducer",
                                "pass_at_k": "`Epochs(n, pass_at_k(k))` reducer",
                                "success_rate": "`success_rate()` metric",
                                "routing_macro_f1": "`routing_macro_f1()` metric"}[k]
            assert cells[9].startswith("`TrajcheckReportEvaluator()`")
        else:
            assert cells[3:] == [c.format(k=k) for c in HOST_CELLS]
            need = " or ".join(f"`{n}`" for n in _catalog.BY_KEY[k].needs) or "the run"
            assert cells[2] == need


def test_scenario_values_hand_checked():
    # a few cells computed by hand, so the table tests below compare against known numbers
    assert core_value("ordering_accuracy", RUNS["order_broken"], CASES["order_broken"]) == 0.0
    assert core_value("ordering_accuracy", RUNS["order_kept"], CASES["order_kept"]) == 1.0
    # duplicate: refund x2 + email against refund + email: P = 2/3, R = 1, F1 = 0.8
    assert core_value("tool_call_f1", RUNS["duplicate"], CASES["duplicate"]) == pytest.approx(0.8)
    assert core_value("duplicate_call_rate", RUNS["duplicate"], CASES["duplicate"]) == pytest.approx(1 / 3)
    # retry: the 503 is recovered by the retry; no false success
    assert core_value("error_recovery", RUNS["retry"], CASES["retry"]) == 1.0
    assert core_value("false_success", RUNS["retry"], CASES["retry"]) == 0.0
    assert core_value("tool_call_f1", RUNS["retry"], CASES["retry"]) == 1.0
    assert core_value("forbidden_calls", RUNS["forbidden"], CASES["forbidden"]) == 0.0
    # optional search_faq/lookup_order not counted
    assert core_value("tool_call_precision", RUNS["optional"], CASES["optional"]) == 1.0
    assert core_value("tool_call_f1", RUNS["no_tool"], CASES["no_tool"]) == 1.0
    # parallel lookups are one step: 4 agent steps at max_steps 4 -> efficiency 1.0
    assert core_value("efficiency", RUNS["parallel"], CASES["parallel"]) == 1.0
    # the refund e-mail sent before the refund: every weighted part is 1.0 (task done, both
    # calls right, 3 steps of 4), but the composite's rules factor (0 of 1 precedence rule
    # held) makes it 0.0; the same calls in order score 1.0
    assert core_value("composite", RUNS["order_broken"], CASES["order_broken"]) == 0.0
    assert core_value("composite", RUNS["order_kept"], CASES["order_kept"]) == 1.0


#: composite of the order-broken and order-kept runs in every host (the core's, hand-checked above)
REFUND_ORDER = {"order_broken": 0.0, "order_kept": 1.0}


def _same(got: Any, want: float | None) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got == want


# ----------------------------------------------------------------------------- DeepEval


@pytest.mark.parametrize("run_async", [True, False], ids=["async", "sync"])
def test_deepeval_every_cell(run_async, tmp_path, monkeypatch):
    pytest.importorskip("deepeval")
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig

    from trajcheck.adapters import deepeval as ad

    monkeypatch.chdir(tmp_path)
    cells = all_cells()
    metrics = [ad.TrajcheckMetric(k, mode=m, dialect=d) for _l, k, m, d in cells]
    assert len({m.__name__ for m in metrics}) == len(metrics)  # names carry mode and dialect
    tcs = [ad.test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
           for cid, c in CASES.items()]
    res = evaluate(tcs, metrics, async_config=AsyncConfig(run_async=run_async),
                   display_config=DisplayConfig(show_indicator=False, print_results=False))
    n = 0
    for tr in res.test_results:
        got = {md.name: md for md in tr.metrics_data or ()}
        for (label, k, mode, dialect), m in zip(cells, metrics):
            want = core_value(k, RUNS[tr.name], CASES[tr.name], mode, dialect)
            md = got.get(m.__name__)
            if want is None:  # skipped: absent (async) or score None and success None (sync)
                assert md is None or (md.score, md.success) == (None, None), (tr.name, label)
                continue
            assert md is not None and md.score == want, (tr.name, label, md and md.score, want)
            n += 1
        if tr.name in REFUND_ORDER:  # the refund e-mail sent before the refund fails in DeepEval
            comp = got["Trajectory Composite (trajcheck)"]
            assert (comp.score, comp.success) == (REFUND_ORDER[tr.name], tr.name == "order_kept")
            assert tr.name == "order_kept" or "issue_refund before send_refund_email broken" in comp.reason
    assert n > 300


def test_deepeval_suite_figures_equal_core():
    pytest.importorskip("deepeval")
    from trajcheck.adapters import deepeval as ad
    from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate
    from trajcheck.score.suite import run_outcome

    # two trials of each task: the same recorded runs twice, named by task
    tcs = [ad.test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
           for cid, c in CASES.items() for _trial in range(2)]
    figs = ad.suite_figures(tcs)
    trials = {cid: [bool(run_outcome(RUNS[cid], c).passed)] * 2 for cid, c in CASES.items()}
    assert figs["pass_hat_k"].score == pass_hat_k(trials, 2)
    assert figs["pass_at_k"].score == pass_at_k(trials, 2)
    n_ok = sum(v[0] for v in trials.values()) * 2
    assert figs["success_rate"].score == success_rate(n_ok, 16).score
    assert figs["routing_macro_f1"].score is None  # no case has an expected route


def test_compute_figures_unequal_run_counts_are_stated():
    # task a: 5 runs, 3 succeed; task b: 3 runs, all succeed. k defaults to 3, the fewest runs,
    # as the CLI's pass^k curve stops there, and the reason says so (never a silent pass^3).
    recs = ([_suite.RunRecord("a", ok) for ok in (True, True, True, False, False)]
            + [_suite.RunRecord("b", True)] * 3)
    figs = _suite.compute_figures(recs, ("pass_hat_k", "pass_at_k"), n_boot=200)
    ph, pa = figs["pass_hat_k"], figs["pass_at_k"]
    # pass^3: a C(3,3)/C(5,3) = 1/10, b 1 -> 0.55; pass@3: a 1 - C(2,3)/C(5,3) = 1, b 1 -> 1.0
    assert (ph.name, ph.score, pa.name, pa.score) == ("pass^3", 0.55, "pass@3", 1.0)
    note = ("tasks have unequal run counts (3 to 5), so k = 3, the fewest runs of a task ('b' has 3); "
            "pass k=... (at most 3) to choose it")
    assert ph.reason.endswith(note) and pa.reason.endswith(note)
    assert (ph.parts["k"], ph.parts["runs_min"], ph.parts["runs_max"]) == (3, 3, 5)
    # k given: no note; equal counts: no note
    assert "unequal" not in _suite.compute_figures(recs, ("pass_hat_k",), k=2, n_boot=200)["pass_hat_k"].reason
    same = _suite.compute_figures(recs[:3] + recs[5:], ("pass_hat_k",), n_boot=200)["pass_hat_k"]
    assert same.name == "pass^3" and "unequal" not in same.reason
    with pytest.raises(Exception, match="'b'"):  # k above the fewest runs names the task
        _suite.compute_figures(recs, ("pass_hat_k",), k=4, n_boot=200)


def test_deepeval_suite_figures_unequal_runs_agree_with_cli():
    pytest.importorskip("deepeval")
    from trajcheck.adapters import deepeval as ad
    from trajcheck.score.suite import run_outcome, score_runs

    # 'order_kept' run 5 times and 'order_broken' 3 times: the host's default k is 3 and says so;
    # the CLI's scorecard (score_runs, as `trajcheck eval`) has the same pass^3 and pass@3
    counts = {"order_kept": 5, "order_broken": 3}
    tcs = [ad.test_case_from_trace(RUNS[cid], expected_tools=expected(CASES[cid]), name=cid,
                                   **settings(CASES[cid])) for cid, n in counts.items() for _ in range(n)]
    figs = ad.suite_figures(tcs, n_boot=200)
    assert figs["pass_hat_k"].name == "pass^3" and figs["pass_hat_k"].parts["runs_max"] == 5
    assert "unequal run counts (3 to 5), so k = 3" in figs["pass_hat_k"].reason
    assert "'order_broken' has 3" in figs["pass_hat_k"].reason
    card = score_runs([(RUNS[cid], CASES[cid]) for cid, n in counts.items() for _ in range(n)], n_boot=200)
    assert sorted(card.suite.pass_hat_k) == [1, 2, 3]  # the CLI's curve also stops at the fewest runs
    assert figs["pass_hat_k"].score == card.suite.pass_hat_k[3] and figs["pass_at_k"].score == card.suite.pass_at_k[3]
    ok = {cid: bool(run_outcome(RUNS[cid], CASES[cid]).passed) for cid in counts}
    assert figs["pass_hat_k"].score == (ok["order_kept"] + ok["order_broken"]) / 2


# ----------------------------------------------------------------------------- RAGAS


def test_ragas_every_cell():
    pytest.importorskip("ragas")
    from ragas import EvaluationDataset, evaluate

    from trajcheck.adapters import ragas as ar

    cells = all_cells()
    metrics = [ar.TrajcheckRagasMetric(metric=k, match_mode=m, dialect=d) for _l, k, m, d in cells]
    assert len({m.name for m in metrics}) == len(metrics)
    samples = [ar.sample_from_trace(RUNS[cid], reference_tool_calls=expected(c), **settings(c))
               for cid, c in CASES.items()]
    df = evaluate(EvaluationDataset(samples=samples), metrics=metrics, show_progress=False,
                  raise_exceptions=True).to_pandas()
    for i, cid in enumerate(CASES):
        for (label, k, mode, dialect), m in zip(cells, metrics):
            want = core_value(k, RUNS[cid], CASES[cid], mode, dialect)
            assert _same(df[m.name][i], want), (cid, label, df[m.name][i], want)
        if cid in REFUND_ORDER:  # the refund e-mail sent before the refund, in ragas.evaluate
            assert df["trajcheck_composite"][i] == REFUND_ORDER[cid]
    figs = ar.suite_figures(samples, tasks=list(CASES))
    from trajcheck.metrics.reliability import success_rate
    from trajcheck.score.suite import run_outcome

    ok = sum(bool(run_outcome(RUNS[c], CASES[c]).passed) for c in CASES)
    assert figs["success_rate"].score == success_rate(ok, len(CASES)).score


# ----------------------------------------------------------------------------- LangSmith


def test_langsmith_every_cell_and_summaries():
    pytest.importorskip("langsmith")
    from langsmith import Client

    from trajcheck.adapters import langsmith as al
    from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate
    from trajcheck.score.suite import run_outcome

    cells = all_cells()
    evs = [al.TrajcheckEvaluator(k, mode=m, dialect=d) for _l, k, m, d in cells]
    assert len({e.key for e in evs}) == len(evs)
    examples = [al.example_from_trace(RUNS[cid], expected_calls=expected(c), **settings(c))
                for cid, c in CASES.items()]
    outputs = {cid: al.outputs_from_trace(RUNS[cid]) for cid in CASES}
    ts = al.TrajcheckEvaluator("task_success")
    summaries = [al.suite_summary(ts, k=2),
                 al.pass_k_summary(ts, 1, keys={"pass_hat_k": "p1", "pass_at_k": "a1"})]
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    res = client.evaluate(lambda inputs: outputs[inputs["case_id"]], data=examples, evaluators=evs,
                          summary_evaluators=summaries, upload_results=False, num_repetitions=2,
                          max_concurrency=0)
    rows = list(res)
    assert len(rows) == 16
    for row in rows:
        cid = row["example"].inputs["case_id"]
        got = {r.key: r.score for r in row["evaluation_results"]["results"]}
        for (label, k, mode, dialect), e in zip(cells, evs):
            assert _same(got[e.key], core_value(k, RUNS[cid], CASES[cid], mode, dialect)), (cid, label)
        if cid in REFUND_ORDER:  # the refund e-mail sent before the refund, in LangSmith evaluate
            assert got["trajcheck_composite"] == REFUND_ORDER[cid]
    summary = {r.key: r.score for r in res._summary_results["results"]}
    trials = {cid: [bool(run_outcome(RUNS[cid], c).passed)] * 2 for cid, c in CASES.items()}
    ok = sum(v[0] for v in trials.values()) * 2
    assert summary == {"trajcheck_task_success_pass^2": pass_hat_k(trials, 2),
                       "trajcheck_task_success_pass@2": pass_at_k(trials, 2),
                       "trajcheck_task_success_success_rate": success_rate(ok, 16).score,
                       "trajcheck_task_success_routing_macro_f1": None,
                       "p1": pass_hat_k(trials, 1), "a1": pass_at_k(trials, 1)}


# ----------------------------------------------------------------------------- promptfoo


def test_promptfoo_assertion_every_cell_and_negation():
    from trajcheck.promptfoo.assertion import get_assert

    for cid, c in CASES.items():
        meta = {"trajectory": RUNS[cid].to_dict()}  # what trajcheck's provider returns
        for label, k, mode, dialect in all_cells():
            cfg: dict[str, Any] = {"metric": k, "expected_calls": expected(c), **settings(c)}
            if mode is not None:
                cfg["mode"] = mode
                if dialect is not None:
                    cfg["dialect"] = dialect
            want = core_value(k, RUNS[cid], c, mode, dialect)
            for typ in ("python", "not-python"):
                ctx = {"prompt": c.input, "vars": {}, "config": cfg, "metadata": meta,
                       "test": {"assert": [{"type": typ, "value": "file://assertion.py", "config": cfg}]}}
                r = get_assert("", ctx)
                if want is None:  # not applicable: passes after promptfoo's flip, flagged
                    assert r["score"] == 1.0 and r["pass"] is (typ == "python"), (cid, label)
                    assert r["metadata"]["trajcheck"]["not_applicable"] is True
                    continue
                row = _catalog.BY_KEY[k]
                good = 1.0 - want if row.lower_is_better else want  # promptfoo: higher is better
                score = good if typ == "python" else 1.0 - good
                assert r["score"] == pytest.approx(score, abs=1e-15), (cid, label, typ, r["reason"])
                raw = want <= row.threshold if row.lower_is_better else want >= row.threshold
                if k == "forbidden_calls":
                    raw = want == 1.0
                assert r["pass"] is raw, (cid, label, typ)  # promptfoo flips a not-python verdict


# ----------------------------------------------------------------------------- routing, real values

#: expected route per case (the router's target is the first tool called, ``suite.run_route``).
#: Taken: optional search_faq, duplicate/retry/order_kept issue_refund, parallel/forbidden
#: lookup_order, order_broken send_refund_email, no_tool (none).
ROUTES = {"optional": "issue_refund", "duplicate": "issue_refund", "retry": "issue_refund",
          "parallel": "lookup_order", "order_broken": "issue_refund", "order_kept": "issue_refund",
          "forbidden": "lookup_order", "no_tool": "search_faq"}
# By hand over labels {issue_refund, lookup_order, search_faq, send_refund_email, (none)}:
# issue_refund P 3/3, R 3/5, F1 0.75; lookup_order P = R = F1 = 1; search_faq, send_refund_email
# and (none) F1 0 -> macro-F1 (0.75 + 1) / 5 = 0.35; accuracy 5/8.
MACRO_F1 = 0.35


def test_routing_macro_f1_real_values_in_deepeval_ragas_langsmith():
    pytest.importorskip("deepeval")
    pytest.importorskip("ragas")
    pytest.importorskip("langsmith")
    from langsmith import Client

    from trajcheck.adapters import deepeval as ad
    from trajcheck.adapters import langsmith as al
    from trajcheck.adapters import ragas as ar

    tcs = [ad.test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid,
                                   **{**settings(c), "expected_route": ROUTES[cid]}) for cid, c in CASES.items()]
    r = ad.suite_figures(tcs, figures=["routing_macro_f1"])["routing_macro_f1"]
    assert r.score == pytest.approx(MACRO_F1) and r.parts["accuracy"] == 5 / 8 and r.parts["n"] == 8
    samples = [ar.sample_from_trace(RUNS[cid], reference_tool_calls=expected(c),
                                    **{**settings(c), "expected_route": ROUTES[cid]}) for cid, c in CASES.items()]
    r = ar.suite_figures(samples, tasks=list(CASES), figures=["routing_macro_f1"])["routing_macro_f1"]
    assert r.score == pytest.approx(MACRO_F1) and r.parts["accuracy"] == 5 / 8
    examples = [al.example_from_trace(RUNS[cid], expected_calls=expected(c),
                                      **{**settings(c), "expected_route": ROUTES[cid]}) for cid, c in CASES.items()]
    outputs = {cid: al.outputs_from_trace(RUNS[cid]) for cid in CASES}
    ts = al.TrajcheckEvaluator("task_success")
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    res = client.evaluate(lambda inputs: outputs[inputs["case_id"]], data=examples, evaluators=[ts],
                          summary_evaluators=[al.suite_summary(ts, ["routing_macro_f1"], keys={"routing_macro_f1": "rf1"})],
                          upload_results=False, max_concurrency=0)
    list(res)
    summary = {s.key: s.score for s in res._summary_results["results"]}
    assert summary["rf1"] == pytest.approx(MACRO_F1)


# ----------------------------------------------------------------------------- final state from a fixture

FIXTURE = ROOT / "tests" / "data" / "hosts_fixture" / "refunds.sql"  # refunds: one row, order 900
#: the database after the run, as the user's own sandbox snapshot gives it: order 981 refunded
#: (1.0), or order 981 refunded and order 900's refund deleted (0.0: a row removed)
AFTER = {"fixture_ok": {"refunds": [{"id": 1, "order_id": "900", "amount": 15.0},
                                    {"id": 2, "order_id": "981", "amount": 40.0}]},
         "fixture_bad": {"refunds": [{"id": 2, "order_id": "981", "amount": 40.0}]}}
FIXTURE_WANT = {"fixture_ok": 1.0, "fixture_bad": 0.0}


def _fixture_run(cid: str = "order_kept"):
    """The order-kept run with no database snapshots recorded (the before state must come
    from the case's fixture), named ``cid``."""
    from dataclasses import replace

    t = RUNS["order_kept"]
    return replace(t, metadata={"case_id": cid})


def _fixture_settings(cid: str) -> dict[str, Any]:
    return {"initial_state": str(FIXTURE), "expected_final_state": {"refunds": [{"order_id": "981"}]},
            "after_state": AFTER[cid]}


def test_fixture_final_state_core_value():
    from trajcheck.adapters._catalog import fixture_snapshot
    from trajcheck.metrics.outcome import check_final_state

    before = fixture_snapshot(str(FIXTURE))
    assert before == {"refunds": [{"id": 1, "order_id": "900", "amount": 15.0}]}
    for cid, want in FIXTURE_WANT.items():
        assert check_final_state(before, AFTER[cid], {"refunds": [{"order_id": "981"}]}).score == want


def test_fixture_final_state_in_deepeval_ragas_langsmith(tmp_path, monkeypatch):
    pytest.importorskip("deepeval")
    pytest.importorskip("ragas")
    pytest.importorskip("langsmith")
    from deepeval import evaluate as de_evaluate
    from deepeval.evaluate.configs import DisplayConfig
    from langsmith import Client
    from ragas import EvaluationDataset
    from ragas import evaluate as ragas_evaluate

    from trajcheck.adapters import deepeval as ad
    from trajcheck.adapters import langsmith as al
    from trajcheck.adapters import ragas as ar

    monkeypatch.chdir(tmp_path)
    run = _fixture_run()
    exp = expected(CASES["order_kept"])
    # DeepEval evaluate
    tcs = [ad.test_case_from_trace(run, expected_tools=exp, name=cid, **_fixture_settings(cid)) for cid in AFTER]
    res = de_evaluate(tcs, [ad.TrajcheckMetric("final_state")],
                      display_config=DisplayConfig(show_indicator=False, print_results=False))
    got = {tr.name: tr.metrics_data[0] for tr in res.test_results}
    assert {k: (v.score, v.success) for k, v in got.items()} == {
        "fixture_ok": (1.0, True), "fixture_bad": (0.0, False)}
    assert "1 row removed" in got["fixture_bad"].reason
    # RAGAS evaluate
    samples = [ar.sample_from_trace(run, reference_tool_calls=exp, **_fixture_settings(cid)) for cid in AFTER]
    df = ragas_evaluate(EvaluationDataset(samples=samples), metrics=[ar.TrajcheckRagasMetric(metric="final_state")],
                        show_progress=False, raise_exceptions=True).to_pandas()
    assert list(df["trajcheck_final_state"]) == [FIXTURE_WANT[c] for c in AFTER]
    # LangSmith evaluate
    examples = [al.example_from_trace(_fixture_run(cid), expected_calls=exp, **_fixture_settings(cid))
                for cid in AFTER]
    out = al.outputs_from_trace(run)
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    rows = list(client.evaluate(lambda inputs: out, data=examples, evaluators=[al.TrajcheckEvaluator("final_state")],
                                upload_results=False, max_concurrency=0))
    by_case = {r["example"].inputs["case_id"]: r["evaluation_results"]["results"][0].score for r in rows}
    assert by_case == FIXTURE_WANT
    # without the after state the metric cannot run: DeepEval's missing-parameter error
    from deepeval.errors import MissingTestCaseParamsError

    with pytest.raises(MissingTestCaseParamsError, match="initial_state"):
        ad.TrajcheckMetric("final_state").measure(ad.test_case_from_trace(
            run, expected_tools=exp, initial_state=str(FIXTURE),
            expected_final_state={"refunds": [{"order_id": "981"}]}))
