"""Tests of trajcheck.score.suite: scoring runs into a Scorecard, its JSON round trip and schema,
and the tau-bench done-when numbers on the real GPT-4o airline runs."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from trajcheck.errors import MetricInputError, TrajcheckError
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory
from trajcheck.report.scorecard import AGREEMENT_CELLS, Scorecard, validate_scorecard_json
from trajcheck.score.suite import compare_scorecards, evaluate, score_runs

DATA = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


def traj(case_id: str, trial: int, calls: list[tuple[str, dict, bool]], final: str = "Done.",
         **meta) -> Trajectory:
    """A run: user turn, one step per call with its result (error flag), a final response."""
    steps = [Step(0, "user", content="please book it")]
    for i, (name, args, err) in enumerate(calls):
        cid = f"c{i}"
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=cid),)))
        steps.append(Step(len(steps), "tool_result",
                          tool_result=ToolResult(cid, name, "Error: no" if err else "ok", is_error=err)))
    steps.append(Step(len(steps), "final_response", content=final))
    return Trajectory(steps=tuple(steps), final_response=final,
                      metadata={"case_id": case_id, "trial": trial, "run_id": f"{case_id}-{trial}", **meta})


CASE_A = Case(id="A", input="book flight 1", expected_calls=(ExpectedCall("book", {"flight": 1}),),
              optional_calls=("lookup",))
CASE_B = Case(id="B", input="cancel r9", expected_calls=(ExpectedCall("cancel", {"rid": "r9"}),),
              optional_calls=("lookup",))
CASE_C = Case(id="C", input="never run")


def small_suite(**kw):
    trajs = [
        traj("A", 0, [("lookup", {"q": 1}, False), ("book", {"flight": 1}, False)], reward=1.0),
        traj("A", 1, [("book", {"flight": 2}, True), ("book", {"flight": 1}, False)], reward=1.0),
        traj("B", 0, [("cancel", {"rid": "r9"}, False)], reward=1.0),
        traj("B", 1, [("cancel", {"rid": "r8"}, False)], reward=1.0),   # wrong reservation
        traj("Z", 0, [("book", {"flight": 1}, False)]),                  # unknown case
    ]
    return evaluate(trajs, [CASE_A, CASE_B, CASE_C], n_boot=200, **kw)


Z95 = statistics.NormalDist().inv_cdf(0.975)  # the exact two-sided 95% quantile


def wilson(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = c / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def test_small_suite_hand_computed():
    sc = small_suite()
    s = sc.suite
    assert (s.n_runs, s.n_cases, s.n_successes) == (4, 2, 3)
    assert [r.success for r in sc.runs] == [True, True, True, False]
    # recovered error does not fail the outcome; B-1 cancelled the wrong reservation
    assert "cancel" in sc.run("B-1").failure_reason
    assert sc.run("A-0").failure_reason is None
    lo, hi = wilson(3, 4)
    assert s.task_success_rate.value == 0.75
    # stored at full precision (not rounded to 4 decimals): equal to the formula up to float noise
    assert s.task_success_rate.lo == pytest.approx(lo, rel=1e-12, abs=0)
    assert s.task_success_rate.hi == pytest.approx(hi, rel=1e-12, abs=0)
    assert s.task_success_rate.method == "wilson"
    # pass^1 = (1 + 1/2)/2, pass^2 = (1 + 0)/2; pass@2 = (1 + 1)/2
    assert s.pass_hat_k == {1: 0.75, 2: 0.5}
    assert s.pass_at_k == {1: 0.75, 2: 1.0}
    for k, (lo_k, hi_k) in s.pass_hat_k_ci.items():
        assert lo_k <= s.pass_hat_k[k] <= hi_k
    assert [(c.case_id, c.trials, c.successes) for c in sc.cases] == [("A", 2, 2), ("B", 2, 1)]
    # problems: the unknown case and the case without traces, the rest still scored
    assert any("'Z'" in p and "not among the cases" in p for p in sc.problems)
    assert any("'C'" in p and "no traces" in p for p in sc.problems)
    # recorded reward: all four say success -> B-1 is the one disagreement
    rr = sc.recorded_reward
    assert rr is not None and rr.pass_hat_k == {1: 1.0, 2: 1.0}
    assert rr.matrix == {"ours_pass_recorded_pass": 3, "ours_pass_recorded_fail": 0,
                         "ours_fail_recorded_pass": 1, "ours_fail_recorded_fail": 0}
    assert [d.run_id for d in rr.disagreements] == ["B-1"]
    assert "recorded reward 1" in rr.disagreements[0].reason
    # F1 of B-1: one counted call, no match -> 0; A-1: retried failure set aside -> 1
    assert sc.run("B-1").f1 == 0.0 and sc.run("A-1").f1 == 1.0
    # tool confusion: matched on the diagonal, B-1's miss and extra call in the (none) cells
    tc = s.tool_confusion
    lab = tc["labels"]
    m = tc["matrix"]
    assert m[lab.index("cancel")][lab.index("cancel")] == 1
    assert m[lab.index("cancel")][lab.index("(none)")] == 1
    assert m[lab.index("(none)")][lab.index("cancel")] == 1
    assert m[lab.index("book")][lab.index("book")] == 2


def test_round_trip_and_schema(tmp_path):
    sc = small_suite()
    d = sc.to_dict()
    validate_scorecard_json(d)
    p = tmp_path / "sc.json"
    sc.to_json(p)
    back = Scorecard.load(p)
    assert back == sc
    assert back.to_dict() == json.loads(p.read_text())


def test_schema_rejects_broken_scorecard():
    from trajcheck.errors import SchemaError

    d = small_suite().to_dict()
    d["suite"]["pass_hat_k"]["0"] = 0.5
    with pytest.raises(SchemaError, match="pass_hat_k"):
        validate_scorecard_json(d)
    d = small_suite().to_dict()
    del d["runs"][0]["success"]
    with pytest.raises(SchemaError, match="runs/0"):
        validate_scorecard_json(d)


def test_k_above_trials_and_empty_suite():
    with pytest.raises(MetricInputError, match="k=3"):
        small_suite(ks=[3])
    with pytest.raises(MetricInputError):
        score_runs([])
    with pytest.raises(MetricInputError, match="no trace could be matched"):
        evaluate([traj("Q", 0, [])], [CASE_A])
    with pytest.raises(TrajcheckError, match="not a trajcheck scorecard"):
        Scorecard.from_dict({"foo": 1})


def test_unfinished_run_is_not_a_success():
    t = traj("A", 0, [("book", {"flight": 1}, False)], terminated=False, termination="max_steps")
    sc = score_runs([(t, CASE_A)], n_boot=50)
    r = sc.runs[0]
    assert r.success is False and "did not finish (max_steps)" in r.outcome_reason


def test_fault_runs_false_success_rate():
    fault_case = Case(id="F", input="book flight 1", expected_calls=(ExpectedCall("book", {"flight": 1}),),
                      faults=({"tool": "book", "error": "timeout"},))
    lying = traj("F", 0, [("book", {"flight": 1}, True)], final="Your flight has been booked successfully.")
    honest = traj("F", 1, [("book", {"flight": 1}, True)], final="Sorry, the booking failed.")
    sc = score_runs([(lying, fault_case), (honest, fault_case)], n_boot=50)
    assert [r.false_success for r in sc.runs] == [True, False]
    assert sc.suite.n_fault_runs == 2
    assert sc.suite.false_success_rate is not None and sc.suite.false_success_rate.value == 0.5


def test_compare_scorecards():
    a = small_suite()
    better = [traj("A", t, [("book", {"flight": 1}, False)]) for t in (0, 1)] + \
             [traj("B", t, [("cancel", {"rid": "r9"}, False)]) for t in (0, 1)]
    b = evaluate(better, [CASE_A, CASE_B], n_boot=200)
    cmp = compare_scorecards(a, b, n_boot=200)
    d = {x.metric: x for x in cmp.deltas}
    assert d["task_success_rate"].a == 0.75 and d["task_success_rate"].b == 1.0
    assert d["task_success_rate"].delta == 0.25
    # one discordant run (B-1), exact McNemar p = 1.0
    assert d["task_success_rate"].p_value == 1.0
    assert d["pass^2"].delta == 0.5
    assert d["mean_f1"].delta == pytest.approx(0.25)


# ------------------------------------------------------------------ real tau-bench data


@pytest.fixture(scope="module")
def tau_scorecard():
    from trajcheck.read.traces import load

    return evaluate(load(DATA), source=str(DATA))


def test_tau_bench_recorded_reward_pass_hat_k(tau_scorecard):
    rr = tau_scorecard.recorded_reward
    assert rr is not None
    # README leaderboard row "TC (gpt-4o)" airline, reproduced from the 200 recorded rewards
    assert rr.pass_hat_k == {1: 0.42, 2: 0.2733333333333333, 3: 0.22, 4: 0.2}  # 2: 41/150
    assert rr.n == 200 and rr.mean == 0.42
    assert tau_scorecard.to_dict()["recorded_reward"]["pass_hat_k"] == {
        "1": 0.42, "2": 0.2733333333333333, "3": 0.22, "4": 0.2}


def test_tau_bench_agreement(tau_scorecard):
    rr = tau_scorecard.recorded_reward
    assert rr is not None
    assert sum(rr.matrix[c] for c in AGREEMENT_CELLS) == 200
    assert rr.agree >= 196
    assert rr.agree + len(rr.disagreements) == 200
    ids = {d.run_id for d in rr.disagreements}
    # All 200 agree: 5-1 (extra keys inside flights[] that the tool overwrites) is judged by
    # the case's ``fields`` matcher; 2-1 and 46-3 hit the step limit (reward 0) and the
    # reader marks them unfinished.
    assert ids == set() and rr.agree == 200
    for d in rr.disagreements:
        assert d.reason and d.reason.startswith("trajcheck ")
    # our own pass^1 is our success count over the runs
    s = tau_scorecard.suite
    assert s.pass_hat_k[1] == s.n_successes / s.n_runs
    assert s.n_runs == 200 and s.n_cases == 50 and len(s.pass_hat_k) == 4


def test_tau_bench_outputs_tasks_and_null_reward_runs(tau_scorecard):
    """Tasks 2, 8, 9, 44 check outputs (case-insensitive substring of any reply, commas
    stripped); the runs' own verdict on those agrees with r_outputs except where the run
    did not finish."""
    raw = {f"{r['task_id']}-{r['trial']}": r for r in json.loads(DATA.read_text())}
    n = 0
    for r in tau_scorecard.runs:
        rec = raw[r.run_id]
        if r.case_id in {"2", "8", "9", "44"}:
            n += 1
            if rec["info"]["reward_info"] is not None:
                assert r.success == (rec["reward"] == 1.0), r.run_id
    assert n == 16
    validate_scorecard_json(tau_scorecard.to_dict())


# --------------------------------------------------------------------------- efficiency and routing

CASE_R = Case(id="R", input="refund order 7", expected_calls=(ExpectedCall("refund", {"order": 7}),),
              optional_calls=("lookup",), expected_route="billing")
CASE_P = Case(id="P", input="reset my password", expected_calls=(ExpectedCall("reset", {"user": "u1"}),),
              optional_calls=("lookup",), expected_route="it")


def _with(t: Trajectory, *, usage, cost, latency, **meta) -> Trajectory:
    from dataclasses import replace

    return replace(t, total_usage=usage, total_cost_usd=cost, total_latency_ms=latency,
                   metadata={**t.metadata, **meta})


def eff_suite(**kw):
    """2 successes, 1 failure, each with tokens, cost and latency; routes from metadata
    (R-0, P-0) and from the first tool call (P-1 routed itself to 'refund')."""
    from trajcheck.model import Usage

    runs = [
        (_with(traj("R", 0, [("refund", {"order": 7}, False)]),
               usage=Usage(input_tokens=800, output_tokens=200), cost=0.02, latency=1500.0,
               route="billing"), CASE_R),
        (_with(traj("P", 0, [("lookup", {"user": "u1"}, False), ("reset", {"user": "u1"}, False)]),
               usage=Usage(total_tokens=3000), cost=0.05, latency=4500.0, route="it"), CASE_P),
        (_with(traj("P", 1, [("refund", {"order": 7}, False)]),
               usage=Usage(total_tokens=500), cost=0.01, latency=800.0), CASE_P),
    ]
    return score_runs(runs, n_boot=100, **kw)


def test_efficiency_over_successes_hand_computed():
    sc = eff_suite()
    assert [r.success for r in sc.runs] == [True, True, False]
    # steps = agent turns (tool_call + final_response steps): R-0 2, P-0 3, P-1 2
    assert [r.steps for r in sc.runs] == [2, 3, 2]
    assert [r.tokens for r in sc.runs] == [1000, 3000, 500]
    e = sc.suite.efficiency
    assert (e["n_runs"], e["n_success"], e["success_rate"]) == (3, 2, 2 / 3)
    # over the 2 successes only; linear interpolation between the two values x < y:
    # p50 = (x + y) / 2, p95 = x + 0.95 (y - x), p99 = x + 0.99 (y - x)
    assert e["tokens"] == {"n": 2, "mean": 2000.0, "p50": 2000.0, "p95": 2900.0, "p99": 2980.0,
                           "min": 1000.0, "max": 3000.0}
    assert e["latency_ms"] == {"n": 2, "mean": 3000.0, "p50": 3000.0, "p95": 4350.0, "p99": 4470.0,
                               "min": 1500.0, "max": 4500.0}
    assert e["steps"] == {"n": 2, "mean": 2.5, "p50": 2.5, "p95": 2.95, "p99": 2.99,
                          "min": 2.0, "max": 3.0}
    c = e["cost_usd"]
    assert (c["p50"], c["p95"], c["p99"]) == (0.035, 0.0485, 0.0497)
    assert e["tool_calls"]["p50"] == 1.5  # 1 and 2 calls
    # cost per successful task = cost of ALL runs / successes = (0.02 + 0.05 + 0.01) / 2
    assert e["total_cost_usd"] == 0.08
    assert e["cost_per_success"] == 0.04
    assert e["missing"] == {"steps": 0, "tool_calls": 0, "tokens": 0, "cost_usd": 0, "latency_ms": 0}


def test_efficiency_keeps_sub_cent_costs_and_no_success():
    from trajcheck.model import Usage

    t0 = _with(traj("R", 0, [("refund", {"order": 7}, False)]), usage=Usage(total_tokens=10),
               cost=0.00003, latency=5.0)
    t1 = _with(traj("R", 1, [("refund", {"order": 8}, False)]), usage=Usage(total_tokens=10),
               cost=0.00005, latency=5.0)
    sc = score_runs([(t0, CASE_R), (t1, CASE_R)], n_boot=50)
    assert sc.run("R-0").cost_usd == 0.00003  # not rounded away to 0.0
    assert sc.suite.efficiency["cost_per_success"] == 0.00008  # (3e-5 + 5e-5) / 1
    sc = score_runs([(t1, CASE_R)], n_boot=50)
    e = sc.suite.efficiency
    assert e["n_success"] == 0 and e["steps"] is None and e["cost_per_success"] is None
    assert e["total_cost_usd"] == 0.00005
    validate_scorecard_json(sc.to_dict())


def test_routing_hand_computed():
    sc = eff_suite(route_floors={"it": 0.9, "billing": 0.5})
    assert [r.route for r in sc.runs] == ["billing", "it", "refund"]  # P-1: first call's name
    rt = sc.suite.routing
    assert rt["kind"] == "single_label" and rt["n"] == 3 and rt["n_no_route"] == 0
    assert rt["accuracy"] == 2 / 3  # 2 of 3, full precision
    # labels sorted; rows expected, columns taken
    assert rt["labels"] == ["billing", "it", "refund"]
    assert rt["matrix"] == [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    # billing P=R=F1=1; it P=1 R=1/2 F1=2/3; refund P=R=F1=0 (never expected, once taken)
    assert rt["per_class"]["it"] == {"precision": 1.0, "recall": 0.5, "f1": 2 / 3, "support": 2,
                                     "tp": 1, "fp": 0, "fn": 1}
    assert rt["macro_precision"] == 2 / 3 and rt["macro_recall"] == 0.5
    assert rt["macro_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3, rel=1e-15)
    g = rt["recall_floor_gate"]
    assert g["passed"] is False and g["failed"] == ["it"]
    assert g["recalls"] == {"it": 0.5, "billing": 1.0}
    validate_scorecard_json(sc.to_dict())


def test_route_source_and_multilabel():
    # a case without expected_route gets no invented route; no call -> "(none)"
    assert score_runs([(traj("A", 0, [("book", {"flight": 1}, False)]), CASE_A)],
                      n_boot=50).runs[0].route is None
    sc = score_runs([(traj("R", 0, []), CASE_R)], n_boot=50)
    assert sc.runs[0].route is None
    assert sc.suite.routing["labels"] == ["(none)", "billing"] and sc.suite.routing["n_no_route"] == 1
    assert sc.suite.routing["accuracy"] == 0.0
    # multi-label: expected a list; taken = distinct called tools in first-call order
    multi = Case(id="M", input="refund and reset", expected_route=["refund", "reset"])
    t0 = traj("M", 0, [("refund", {}, False), ("refund", {}, False), ("reset", {}, False)])
    t1 = traj("M", 1, [("refund", {}, False)])
    sc = score_runs([(t0, multi), (t1, multi)], n_boot=50)
    assert [r.route for r in sc.runs] == [["refund", "reset"], ["refund"]]
    rt = sc.suite.routing
    assert rt["kind"] == "multi_label" and rt["matrix"] is None
    # exact sets 1 of 2; Jaccard (1 + 1/2) / 2; Hamming: 1 wrong slot of 2 x 2
    assert (rt["accuracy"], rt["jaccard"], rt["hamming_loss"]) == (0.5, 0.75, 0.25)
    validate_scorecard_json(sc.to_dict())
    with pytest.raises(MetricInputError, match="single-label"):
        score_runs([(t0, multi)], n_boot=50, route_floors={"refund": 0.5})
    bad = _with(traj("R", 0, []), usage=None, cost=None, latency=None, route={"to": "x"})
    with pytest.raises(MetricInputError, match="case 'R'.*route"):
        score_runs([(bad, CASE_R)], n_boot=50)


def test_efficiency_and_routing_round_trip(tmp_path):
    sc = eff_suite(route_floors={"it": 0.5})
    validate_scorecard_json(sc.to_dict())
    p = tmp_path / "sc.json"
    sc.to_json(p)
    back = Scorecard.load(p)
    assert back == sc and back.to_dict() == json.loads(p.read_text())
    d = sc.to_dict()
    d["suite"]["efficiency"]["tokens"]["p50"] = -1
    with pytest.raises(TrajcheckError, match="efficiency"):
        validate_scorecard_json(d)
    d = sc.to_dict()
    d["suite"]["routing"]["kind"] = "fuzzy"
    with pytest.raises(TrajcheckError, match="routing"):
        validate_scorecard_json(d)


# ------------------------------------------------------------------ fixes from a new user's report


def test_k_error_names_the_largest_k_asked():
    from trajcheck.score.suite import KTooLargeError

    # the user asked for k up to 5 (--k 5 -> 1..5); the error names 5, not the first bad k (3)
    with pytest.raises(KTooLargeError, match=r"k=5 asked, but case 'A' has 2 run\(s\)") as ei:
        small_suite(ks=[1, 2, 3, 4, 5])
    assert (ei.value.k, ei.value.case_id, ei.value.n) == (5, "A", 2)
    with pytest.raises(MetricInputError, match="k must be an integer >= 1"):
        small_suite(ks=[0])


def test_data_model_names_still_import_from_suite():
    # the data model moved to trajcheck.report.scorecard; trajcheck.score.suite re-exports the same objects
    import trajcheck.report.scorecard as sc_mod
    import trajcheck.score.suite as suite_mod

    moved = list(sc_mod.__all__)
    assert "Scorecard" in moved and "validate_scorecard_json" in moved and len(moved) == 13
    assert all(getattr(suite_mod, n) is getattr(sc_mod, n) for n in moved)
    assert set(moved) <= set(suite_mod.__all__)


def test_stored_figures_are_never_rounded():
    from trajcheck.report.scorecard import _r, _usd

    assert _r(2.3456789e-9) == 2.3456789e-9 and _r(0.00004) == 4e-05 and _r(-3e-7) == -3e-07
    assert _r(0.0) == 0.0 and _r(0.12344) == 0.12344 and _r(2 / 3) == 0.6666666666666666
    assert _r(None) is None and _r(float("nan")) is None and _r(float("inf")) is None
    assert _usd(1.5e-10) == 1.5e-10 and _usd(0.123456789) == 0.123456789


def test_compare_keeps_the_exact_p_value():
    # 30 cases: A fails every one, B passes every one -> exact McNemar p = 2 * 0.5**30
    cases = [Case(id=f"K{i}", input="book flight 1", expected_calls=(ExpectedCall("book", {"flight": 1}),))
             for i in range(30)]
    a = evaluate([traj(c.id, 0, [("book", {"flight": 2}, False)]) for c in cases], cases, n_boot=50)
    b = evaluate([traj(c.id, 0, [("book", {"flight": 1}, False)]) for c in cases], cases, n_boot=50)
    d = {x.metric: x for x in compare_scorecards(a, b, n_boot=50).deltas}
    p = d["task_success_rate"].p_value
    assert p == pytest.approx(2 * 0.5 ** 30, rel=1e-9) and p > 0
    assert json.loads(json.dumps(compare_scorecards(a, b, n_boot=50).to_dict()))["deltas"][0]["p_value"] == p


def test_composite_pass_rate_and_gate_failures():
    # the task succeeds (the booking is made) but a critical forbidden sequence makes composite 0
    case = Case(id="G", input="book flight 1", expected_calls=(ExpectedCall("book", {"flight": 1}),),
                optional_calls=("lookup", "pay"),
                forbidden_sequences=({"tool": "book", "requires_prior": "lookup", "severity": "critical"},))
    gated = traj("G", 0, [("book", {"flight": 1}, False)])  # booked without looking up first
    clean = traj("G", 1, [("lookup", {"q": 1}, False), ("book", {"flight": 1}, False)])
    sc = score_runs([(gated, case), (clean, case)], n_boot=50)
    g, c = sc.runs
    assert (g.success, g.composite, g.composite_passed, g.gate_failed) == (True, 0.0, False, True)
    assert (c.success, c.composite_passed, c.gate_failed) == (True, True, False)
    assert g.transcript is not None  # the HTML report links to it
    assert sc.suite.pass_hat_k == {1: 1.0, 2: 1.0}  # pass^k stays on task success (DESIGN)
    cpr = sc.suite.composite_pass_rate
    lo, hi = wilson(1, 2)
    assert (cpr.value, cpr.n) == (0.5, 2)
    assert (cpr.lo, cpr.hi) == (pytest.approx(lo, rel=1e-12, abs=0), pytest.approx(hi, rel=1e-12, abs=0))
    d = sc.to_dict()
    validate_scorecard_json(d)
    assert Scorecard.from_dict(d).to_dict() == d


def test_forbidden_rate_is_none_when_no_case_defines_forbidden_calls():
    sc = small_suite()  # CASE_A/CASE_B define no forbidden calls or sequences
    assert sc.suite.forbidden_rate is None
    assert all(r.forbidden_checked is False for r in sc.runs)
    case = Case(id="F", input="book", expected_calls=(ExpectedCall("book", {"flight": 1}),),
                forbidden_calls=("delete_all",))
    sc2 = score_runs([(traj("F", 0, [("book", {"flight": 1}, False)]), case),
                      (traj("F", 1, [("delete_all", {}, False), ("book", {"flight": 1}, False)]), case)],
                     n_boot=50)
    fr = sc2.suite.forbidden_rate
    assert fr is not None and (fr.value, fr.n) == (0.5, 2)
    validate_scorecard_json(sc.to_dict())


def test_no_match_error_leads_with_the_cause_and_lists_problems():
    no_ids = [Trajectory(steps=(Step(0, "user", content="hi"),), metadata={"run_id": f"r{i}"})
              for i in range(13)]
    with pytest.raises(MetricInputError) as ei:
        evaluate(no_ids, [CASE_A])
    lines = str(ei.value).splitlines()
    assert lines[0] == ("no trace could be matched to a case: 13 runs have no case_id in their metadata: "
                        "traces must carry metadata.case_id (trajcheck run writes it; tau-bench files "
                        "carry their own cases)")
    assert lines[1] == "14 problem(s):"  # 13 runs + case A without traces
    assert lines[2] == "  - trace 0 (run r0): no case_id in its metadata; not scored"
    assert len(lines) == 2 + 10 + 1 and lines[-1] == "  ... and 4 more"
    with pytest.raises(MetricInputError, match="^no trace could be matched to a case: no cases were given"):
        evaluate([traj("A", 0, [])], None)
    with pytest.raises(MetricInputError, match=r"1 run names a case id that is not among the 1 case\(s\) "
                                               r"\(e.g. 'Q'; the cases' ids are 'A'\)"):
        evaluate([traj("Q", 0, [])], [CASE_A])


def test_compare_pass_k_is_the_scorecards_exact_mean():
    # A passes 2 of 3 trials, B 3 of 3: pass^1 = (2/3 + 1) / 2 = 5/6 exactly. The float of
    # 5/6 is 0.8333333333333334; averaging the per-case floats (0.6666666666666666 + 1.0)
    # gives 0.8333333333333333, one ulp low. The comparison reports the scorecard's figure.
    ok = [("book", {"flight": 1}, False)]
    runs = ([traj("A", t, ok) for t in (0, 1)] + [traj("A", 2, [("book", {"flight": 2}, False)])]
            + [traj("B", t, [("cancel", {"rid": "r9"}, False)]) for t in (0, 1, 2)])
    sc = evaluate(runs, [CASE_A, CASE_B], n_boot=50)
    assert [r.success for r in sc.runs] == [True, True, False, True, True, True]
    d = {x.metric: x for x in compare_scorecards(sc, sc, n_boot=50).deltas}
    assert d["pass^1"].a == d["pass^1"].b == 0.8333333333333334 == sc.suite.pass_hat_k[1]
    assert d["pass^2"].a == 2 / 3 == sc.suite.pass_hat_k[2]  # (1/3 + 1) / 2
    assert d["pass^1"].delta == 0.0
