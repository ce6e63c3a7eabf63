"""Host exports that carry their own references, scored by ``trajcheck eval FILE`` with no
``--cases``: the figures equal the ones trajcheck's adapter gave inside the real host on the
same data. The artifacts are the hosts' own output (scripts/host_exports.py, ``make
host-exports``): DeepEval 4.3.1 ``evaluate`` wrote the test-run file (each test case carries
the adapter metrics' scores), RAGAS 0.4.3 ``evaluate`` gave the result table next to its
dataset export, Inspect AI 0.3.285 ``eval`` (mockllm) wrote the log with the scorers' values.
The runs are the refund desk's (a duplicate refund, a 503 then a retry, a parallel pair, a
forbidden call, order broken, a no-tool question)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trajcheck.cli import main
from trajcheck.read.traces import load

DATA = Path(__file__).parent / "data" / "host_exports"
DEEPEVAL = DATA / "deepeval_latest_run_full.json"
RAGAS = DATA / "ragas_dataset.jsonl"
INSPECT = DATA / "inspect_refund_desk.eval"


def _figure(run: dict[str, Any], key: str) -> float | None:
    """The eval scorecard's value for an adapter metric key on one run."""
    m = run["metrics"]
    rates = m["call_rates"]
    if key.endswith("_call_rate") and rates["score"] is None:
        return None  # no calls to rate: the core's result is not applicable (hosts skip it)
    return {
        "tool_call_f1": run["f1"], "tool_call_precision": run["precision"],
        "tool_call_recall": run["recall"], "composite": run["composite"],
        "task_success": 1.0 if run["success"] else 0.0,
        "duplicate_call_rate": rates["parts"]["duplicate_rate"],
        "unnecessary_call_rate": rates["parts"]["unnecessary_rate"],
        "ordering_accuracy": m["ordering"]["score"],
    }.get(key)


def _eval(path: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(path), "-q", "--json", str(out)])
    assert r.exit_code in (0, 1), r.output  # 1: a run failed the task (the suite's verdict)
    sc = json.loads(out.read_text(encoding="utf-8"))
    assert sc["problems"] == []
    return sc


KEYS = ("tool_call_f1", "tool_call_precision", "tool_call_recall", "composite", "task_success",
        "duplicate_call_rate", "unnecessary_call_rate", "ordering_accuracy")


def _same(got: float | None, want: float | None) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=0, abs_tol=1e-12)


def test_deepeval_test_run_scores_as_deepeval_did(tmp_path):
    from trajcheck.adapters._catalog import display_name

    doc = json.loads(DEEPEVAL.read_text(encoding="utf-8"))
    sc = _eval(DEEPEVAL, tmp_path)
    runs = {r["case_id"]: r for r in sc["runs"]}
    assert len(runs) == len(doc["testCases"]) == 8
    n = 0
    for tc in doc["testCases"]:
        got = runs[tc["name"]]
        scores = {m["name"]: m.get("score") for m in tc["metricsData"]}
        for k in KEYS:
            want = scores[display_name(k)]
            assert _same(_figure(got, k), want), (tc["name"], k, _figure(got, k), want)
            n += 1
    assert n == 64
    # the suite's mean F1 is the mean of DeepEval's recorded F1 scores
    f1s = [next(m["score"] for m in tc["metricsData"] if m["name"] == display_name("tool_call_f1"))
           for tc in doc["testCases"]]
    assert math.isclose(sc["suite"]["mean_f1"]["value"], sum(f1s) / len(f1s))
    # DeepEval's own metric is in the file too and reads names only: the duplicate refund it
    # passes (1.0) is precision 2/3 here
    dup = next(tc for tc in doc["testCases"] if tc["name"] == "duplicate")
    assert next(m["score"] for m in dup["metricsData"] if m["name"] == "Tool Correctness") == 1.0
    assert runs["duplicate"]["precision"] == pytest.approx(2 / 3)


def test_deepeval_failed_call_and_parallel_pair_are_read():
    res = load(DEEPEVAL)
    by = {t.metadata["case_id"]: t for t in res}
    retry = by["retry"]
    assert [(c.name, r.is_error) for c, r in retry.pairs()] == [
        ("issue_refund", True), ("issue_refund", None), ("send_refund_email", None)]
    par = by["parallel"]
    assert [len(s.tool_calls) for s in par.steps if s.tool_calls][0] == 2
    assert res.sources[str(DEEPEVAL)].describe() == "deepeval (8) in DeepEval test run"
    assert set(res.cases) == set(by)
    assert res.cases["optional"].forbidden_calls == ("delete_order",)


def test_ragas_export_scores_as_ragas_did(tmp_path):
    want_rows = json.loads((DATA / "ragas_scores.json").read_text(encoding="utf-8"))
    sc = _eval(RAGAS, tmp_path)
    runs = {r["case_id"]: r for r in sc["runs"]}
    assert len(runs) == len(want_rows) == 8
    n = 0
    for i, row in enumerate(want_rows):
        got = runs[f"sample {i}"]
        for k in KEYS:
            assert _same(_figure(got, k), row[f"trajcheck_{k}"]), (i, k, _figure(got, k), row[f"trajcheck_{k}"])
            n += 1
    assert n == 64
    # the 503 result is failed (metadata.is_error), so the retried refund is set aside
    retry = next(t for t in load(RAGAS) if any(r is not None and r.is_error for _c, r in t.pairs()))
    assert [r.is_error for _c, r in retry.pairs()][0] is True


def test_inspect_log_scores_as_inspect_did(tmp_path):
    res = load(INSPECT)
    assert len(res) == 16 and len(res.cases) == 8  # 8 samples x 2 epochs
    sc = _eval(INSPECT, tmp_path)
    runs = {(r["case_id"], r["trial"]): r for r in sc["runs"]}
    n = 0
    for t in res:
        got = runs[(t.metadata["case_id"], t.metadata["trial"])]
        for k in KEYS:
            s = t.metadata["scores"][f"trajcheck_{k}"]
            want = s["value"]
            want = None if s.get("metadata", {}).get("passed") is None and isinstance(want, float) \
                and math.isnan(want) else want
            assert _same(_figure(got, k), want), (t.metadata["case_id"], k, _figure(got, k), want)
            n += 1
    assert n == 128
    # the log's pass^2 over its two epochs is the scorecard's
    assert sc["suite"]["n_cases"] == 8


def test_an_unreadable_reference_skips_that_record_only(tmp_path):
    doc = json.loads(DEEPEVAL.read_text(encoding="utf-8"))
    doc["testCases"][0]["metadata"] = {"trajcheck": {"forbiden_calls": ["x"]}}
    p = tmp_path / ".latest_run_full.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    res = load(p)
    assert len(res) == 7 and len(res.cases) == 7
    assert len(res.skipped) == 1
    assert "testCases[0] (optional)" in res.skipped[0] and "forbidden_calls" in res.skipped[0]


def test_eval_without_cases_names_the_sources_that_carry_them(tmp_path):
    p = tmp_path / "calls.json"
    p.write_text(json.dumps([{"name": "get", "args": {"id": 7}}]), encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", str(p), "-q"])
    assert r.exit_code == 2
    assert "DeepEval test run" in r.output and "Inspect AI log" in r.output
