"""tau2-bench result files, read and scored with no flags (tests/data/tau2/trajectories).

The files are real leaderboard submissions of sierra-research/tau2-bench (MIT), see
tests/data/README.md. Expected figures were counted from the files (recorded reward,
``db_check.db_match``) and from tau2-bench's own metric code (``metrics/agent_metrics.py``).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import detect, load
from trajcheck.read.traces import tau2 as t2
from trajcheck.score.suite import evaluate

DATA = Path(__file__).parent / "data" / "tau2" / "trajectories"
GPT_OSS = DATA / "0620dda__gpt-oss-120b_openai_2025-11-26__langchain_agent_airline_2025-11-26_00-37-06.json.gz"
ORCH_RETAIL = DATA / "09c941e__toolorchestra_nvidia_2025-12-02__toolorchestra_retail_gpt-5_1trial.json.gz"
SMALL = DATA / "c063de0__ironshell-ironforge_ironshell-ui_2026-03-09__ironshell_ironforge_v3_deepseek.json.gz"


def _raw(p: Path) -> dict:
    return json.loads(gzip.decompress(p.read_bytes()))


def test_detects_a_results_file_and_reads_one_run_per_simulation() -> None:
    raw = _raw(GPT_OSS)
    assert detect(raw) == "tau2"
    lr = load(GPT_OSS)  # .json.gz read as is
    assert lr.formats == {"tau2": 50} and len(lr.cases) == 50
    t = next(x for x in lr if x.metadata["run_id"] == "12-0")
    m = t.metadata
    assert m["case_id"] == "12" and m["trial"] == 0 and m["domain"] == "airline"
    assert m["reward"] == 1.0 and m["reward_info"]["db_match"] is True
    assert m["termination_reason"] == "user_stop" and m["terminated"] is True
    sim = next(s for s in raw["simulations"] if s["task_id"] == "12")
    assert sim["agent_cost"] is None and t.total_cost_usd is None  # this submission priced nothing
    small = load(SMALL)[0]
    sim0 = _raw(SMALL)["simulations"][0]
    assert small.total_cost_usd == sim0["agent_cost"] > 0 and small.metadata["user_cost_usd"] == sim0["user_cost"]
    assert t.total_latency_ms == pytest.approx(sim["duration"] * 1000)
    # every assistant tool call becomes a call, in order; results joined by id
    n_calls = sum(len(x["tool_calls"] or ()) for x in sim["messages"] if x["role"] == "assistant")
    assert len(t.tool_calls()) == n_calls
    assert all(r is not None for _c, r in t.pairs())


def test_errors_come_from_the_error_field_or_the_error_text() -> None:
    raw = _raw(GPT_OSS)
    flagged = sum(1 for s in raw["simulations"] for x in s["messages"] if x["role"] == "tool" and x.get("error"))
    lr = load(GPT_OSS)
    assert sum(1 for t in lr for r in t.tool_results() if r.is_error) == flagged == 16
    # the ToolOrchestra files predate the 'error' field: tau2's "Error: ..." text decides
    raw2 = _raw(ORCH_RETAIL)
    assert not any("error" in x for s in raw2["simulations"] for x in s["messages"] if x["role"] == "tool")
    lr2 = load(ORCH_RETAIL)
    assert sum(1 for t in lr2 for r in t.tool_results() if r.is_error) == 14


def test_unfinished_runs_are_marked_and_fail() -> None:
    sc = evaluate(load(GPT_OSS), n_boot=20)
    ends = {t.metadata["run_id"]: t.metadata["termination_reason"] for t in load(GPT_OSS)}
    cut = sorted(r for r, e in ends.items() if e != "user_stop")
    assert len(cut) == 6  # max_steps x5, too_many_errors x1
    for r in sc.runs:
        if r.run_id in cut:
            assert r.success is False and r.recorded_reward == 0.0


def test_cases_carry_tool_knowledge_as_matchers() -> None:
    lr = load(ORCH_RETAIL)
    c = lr.cases["0"]
    assert "get_item_details" in c.optional_calls and "calculate" in c.optional_calls
    assert c.args_mode == "exact_keys" and c.metadata["expected_state_is_replay"] is True
    ex = next(e for e in c.expected_calls if e.name == "exchange_delivered_order_items")
    assert ex.match == {"item_ids": "unordered", "new_item_ids": "unordered"}
    air = load(GPT_OSS).cases
    upd = next(e for cs in air.values() for e in cs.expected_calls if e.name == "update_reservation_flights")
    assert upd.match == {"flights": {"type": "fields", "keys": ["flight_number", "date"]}}
    assert "get_flight_status" in air["0"].optional_calls


def test_data_defect_rekeys_to_the_task_the_checks_name_and_says_so() -> None:
    lr = load(ORCH_RETAIL)
    defects = [p for p in lr.problems if "data defect" in p]
    # 111 simulations ran another task than their task_id says (SOURCES.md); 2 more name a
    # task whose checks (no action, same communicate info) several tasks share
    assert len(defects) >= 111
    assert f"{ORCH_RETAIL} simulation 0: data defect: task_id 0, but its recorded checks are task 89's, " \
        "not task 0's; scored as task 89" in defects
    t0 = next(t for t in lr if t.metadata.get("recorded_task_id") == "0")
    assert t0.metadata["case_id"] == "89"


def test_agreement_with_recorded_reward_and_db_match() -> None:
    for path, n, agree in ((GPT_OSS, 50, 50), (ORCH_RETAIL, 114, 114), (SMALL, 4, 4)):
        sc = evaluate(load(path), n_boot=20)
        rr = sc.recorded_reward
        assert rr is not None and (rr.n, rr.agree) == (n, agree), [d.reason for d in rr.disagreements]


def test_writes_that_change_nothing() -> None:
    lr = load(GPT_OSS)
    sc = evaluate(lr, n_boot=20)
    # 12-0: the agent repeated update_reservation_baggages; the second result is the first's
    r12 = next(r for r in sc.runs if r.run_id == "12-0")
    assert r12.success is True
    assert "changed nothing: its result equals call 4's" in r12.outcome_reason
    # ToolOrchestra retail task 64: the expected exchange is of an order the run read as
    # pending, which tau2's tool rejects (the case's precondition)
    lr2 = load(ORCH_RETAIL)
    runs = {r.case_id: r for r in evaluate(lr2, n_boot=20).runs}
    assert runs["64"].success is True
    assert "first read of order_id '#W7464385' shows status 'pending'" in runs["64"].outcome_reason
    # task 12: the expected return to PayPal is one the tool rejects (not the original payment
    # method); nothing in the run shows it, but tau2 recorded the action check unmet while the
    # DB matched
    t12 = next(t for t in lr2 if t.metadata["case_id"] == "12")
    assert t12.metadata["no_effect_calls"][0]["name"] == "return_delivered_order_items"
    assert runs["12"].success is True
    assert "not required: tau2 recorded its action check unmet" in runs["12"].outcome_reason


def test_bad_simulation_is_skipped_and_the_rest_read() -> None:
    raw = _raw(SMALL)
    raw["simulations"][1] = {"task_id": None}
    lr = load(raw)
    assert len(lr) == 3
    assert any("simulation 1: no 'task_id'" in p or "simulation 1: field 'task_id'" in p for p in lr.skipped)
    with pytest.raises(TraceFormatError, match="with 3 readable simulations is many runs"):
        t2.read(raw)


def tau2_pass_hat_k(raw: dict) -> dict[int, float]:
    """pass^k as tau2-bench computes it from a Results file (src/tau2/metrics/agent_metrics.py
    ``get_metrics_df``, ``get_tasks_pass_hat_k``, ``compute_metrics``; commit a2c0247):
    simulations ending in ``infrastructure_error`` are left out; success = reward within 1e-6
    of 1 (a missing reward is no success); runs are grouped by the simulation's recorded
    ``task_id``; k runs from 1 to min(info.num_trials, fewest runs of a task); pass^k is the
    mean over tasks of C(c, k) / C(n, k)."""
    by: dict[str, list[bool]] = {}
    for s in raw["simulations"]:
        if s["termination_reason"] == "infrastructure_error":
            continue
        r = (s.get("reward_info") or {}).get("reward")
        by.setdefault(s["task_id"], []).append(r is not None and 1 - 1e-6 <= r <= 1 + 1e-6)
    max_k = min(raw["info"]["num_trials"], min(len(v) for v in by.values()))
    return {k: sum(math.comb(sum(v), k) / math.comb(len(v), k) for v in by.values()) / len(by)
            for k in range(1, max_k + 1)}


@pytest.mark.parametrize("path", [GPT_OSS, ORCH_RETAIL, SMALL], ids=["gpt-oss", "orch-retail", "small"])
def test_recorded_passk_equals_tau2s_own(path: Path) -> None:
    want = tau2_pass_hat_k(_raw(path))
    sc = evaluate(load(path), n_boot=20)
    assert sc.recorded_reward is not None
    got = sc.recorded_reward.pass_hat_k
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=5e-5)  # scorecards keep 4 decimals
    if path == ORCH_RETAIL:
        # re-keyed runs still count under the task_id the file records, as tau2 counts them
        assert want[1] == pytest.approx(96 / 114) and any(r.recorded_group for r in sc.runs)


def test_db_match_agreement_is_reported_and_round_trips(tmp_path: Path) -> None:
    from trajcheck.report.scorecard import Scorecard, validate_scorecard_json

    for path, n in ((GPT_OSS, 44), (ORCH_RETAIL, 114), (SMALL, 4)):  # gpt-oss: 6 cut off, no DB check
        sc = evaluate(load(path), n_boot=20)
        ca = sc.recorded_reward.checks["db_match"]  # type: ignore[union-attr]
        assert (ca.n, ca.agree, ca.disagreements) == (n, n, ())
    out = tmp_path / "sc.json"
    sc.to_json(out)
    d = json.loads(out.read_text())
    validate_scorecard_json(d)
    assert d["recorded_reward"]["checks"]["db_match"]["agree"] == 4
    assert Scorecard.load(out).to_dict() == d


def test_a_folder_of_airline_and_retail_files_keeps_each_files_tasks() -> None:
    """Two domains in one folder: the retail file's task ids clash with the airline tasks, so
    its cases and runs are keyed by its file name; every run is scored against its own task,
    in the whole-folder read and in the streamed eval alike."""
    from trajcheck.read.traces.stream import stream
    from trajcheck.score.pipeline import evaluate_stream

    lr = load(DATA)
    assert len(lr) == 168 and len(lr.cases) == 50 + 114
    pre = ORCH_RETAIL.name.removesuffix(".json.gz") + "/"
    assert any(p.endswith(f"keyed '{pre}<task id>'") for p in lr.problems)
    retail = [t for t in lr if t.metadata["case_id"].startswith(pre)]
    assert len(retail) == 114 and lr.cases[pre + "89"].metadata["domain"] == "retail"
    for sc in (evaluate(lr, n_boot=20), evaluate_stream(stream(DATA), n_boot=20)):
        rr = sc.recorded_reward
        assert rr is not None and (rr.agree, rr.n) == (168, 168)
        assert (rr.checks["db_match"].agree, rr.checks["db_match"].n) == (162, 162)


def test_infrastructure_errors_are_left_out_of_the_recorded_reward_as_tau2_does() -> None:
    raw = _raw(SMALL)
    raw["simulations"][0]["termination_reason"] = "infrastructure_error"
    raw["simulations"][0]["reward_info"] = None
    lr = load(raw)
    t0 = next(t for t in lr if t.metadata["recorded_task_id"] == raw["simulations"][0]["task_id"])
    assert t0.metadata["reward"] is None and t0.metadata["terminated"] is False
    assert any("infrastructure error" in p for p in t0.metadata["problems"])
    sc = evaluate(lr, n_boot=20)
    rr = sc.recorded_reward
    assert rr is not None and rr.n == 3  # tau2 counts 3 simulations too
    want = tau2_pass_hat_k(raw)
    assert rr.pass_hat_k[1] == pytest.approx(want[1], abs=5e-5)
