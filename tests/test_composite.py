"""Tests for trajcheck.metrics.composite.score_trajectory, with the arithmetic written out."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trajbuild import run

from trajcheck.errors import DatasetError, MetricInputError
from trajcheck.metrics.composite import count_steps, efficiency_score, score_trajectory
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, ExpectedCall, ToolCall

PASS = MetricResult("task_success", 1.0, "ok", {}, True)
FAIL = MetricResult("task_success", 0.0, "state differs", {}, False)


def worked(**kw):
    case = Case("w", "open a high ticket about INC 7",
                expected_calls=(ExpectedCall("get_ticket", {"id": 7}),
                                ExpectedCall("create_ticket", {"priority": "high"})), **kw)
    t = run([("get_ticket", {"id": 7})], [("search_docs", {"q": "x"})],
            [("create_ticket", {"priority": "medium"})], final="Created.")
    return t, case


def test_worked_example_by_hand():
    t, case = worked(max_steps=3)
    r = score_trajectory(t, case, outcome=PASS)
    # tool selection (names): 3 counted calls, 2 name matches -> P = 2/3, R = 2/2 = 1,
    #   F1 = 2 * (2/3) * 1 / (2/3 + 1) = (4/3) / (5/3) = 0.8
    # argument correctness: 2 expected calls name-matched, 1 (get_ticket) with args -> 0.5
    # efficiency: 4 agent turns (3 tool-call turns + the final response), max 3, excess 1
    #   -> 1 - 1/3 = 2/3
    # outcome: passed -> 1
    # composite = 0.50*1 + 0.25*0.8 + 0.15*0.5 + 0.10*(2/3) = 0.5 + 0.2 + 0.075 + 0.0667 = 0.841667
    assert r.parts["tool_selection"] == pytest.approx(0.8)
    assert r.parts["argument_correctness"] == 0.5
    assert r.parts["efficiency"] == pytest.approx(2 / 3)
    assert r.parts["outcome"] == 1.0
    assert r.score == pytest.approx(0.775 + 0.2 / 3)
    assert r.passed is True  # 0.841667 >= 0.80
    # weakest: argument correctness 0.5
    assert "weakest: argument correctness 0.500" in r.reason


def test_worked_example_threshold_and_optimal_steps():
    t, case = worked(max_steps=3)
    r = score_trajectory(t, case, outcome=PASS, threshold=0.9)
    assert r.score == pytest.approx(0.775 + 0.2 / 3) and r.passed is False
    t, case = worked(max_steps=3, threshold=0.85)
    assert score_trajectory(t, case, outcome=PASS).passed is False
    # optimal 2 of 4 actual steps -> efficiency 1/2 (the optimum wins over max_steps);
    # composite = 0.5 + 0.2 + 0.075 + 0.1*0.5 = 0.825
    t, case = worked(optimal_steps=2, max_steps=3)
    r = score_trajectory(t, case, outcome=PASS)
    assert r.parts["efficiency"] == pytest.approx(0.5)
    assert r.score == pytest.approx(0.825)


def test_outcome_failed_and_renormalised_away():
    t, case = worked(max_steps=3)
    # outcome 0: 0 + 0.2 + 0.075 + 0.1*(2/3) = 0.341667
    assert score_trajectory(t, case, outcome=FAIL).score == pytest.approx(0.275 + 0.2 / 3)
    # no outcome given, but the case expects calls: the outcome is judged from the calls;
    # create_ticket(medium) does not match create_ticket(high), so it is 0 -> 0.341667
    r = score_trajectory(t, case)
    assert r.parts["outcome_source"] == "outcome_from_calls" and r.parts["outcome"] == 0.0
    assert r.score == pytest.approx(0.275 + 0.2 / 3)
    # a case that states nothing to check the outcome by (no expected calls, final state or
    # response): the outcome weight is dropped and the rest renormalised. Nothing expected
    # but 3 calls made: selection F1 0 (precision 0, recall 1), arguments n/a, efficiency
    # 2/3 -> (0.25*0 + 0.10*(2/3)) / (0.25 + 0.10) = 0.190476
    bare = Case("b", "x", max_steps=3)
    r = score_trajectory(t, bare)
    assert r.parts["outcome"] is None
    assert r.score == pytest.approx((0.1 * 2 / 3) / 0.35)
    assert r.parts["effective_weights"]["tool_selection"] == pytest.approx(0.25 / 0.35)
    assert "not applicable: outcome" in r.reason


def test_outcome_from_calls_used_when_case_has_requirements():
    t, case = worked(max_steps=3, response_must_include=("Created",))
    r = score_trajectory(t, case)
    assert r.parts["outcome_source"] == "outcome_from_calls"
    # create_ticket(medium) does not match create_ticket(high): outcome 0 -> 0.341667
    assert r.parts["outcome"] == 0.0 and r.score == pytest.approx(0.275 + 0.2 / 3)


def test_critical_violation_zeroes_and_warning_does_not():
    t, case = worked(max_steps=3, forbidden_calls=("search_*",))
    r = score_trajectory(t, case, outcome=PASS)
    assert r.score == 0.0 and r.passed is False
    assert r.parts["forbidden"]["critical"] == 1 and "forbidden_calls[0]" in r.reason
    assert r.parts["raw_score"] == pytest.approx(0.775 + 0.2 / 3)
    t, case = worked(max_steps=3, forbidden_sequences=(
        {"tool": "create_ticket", "requires_prior": "search_docs", "severity": "critical"},
        {"tool": "search_docs", "severity": "warning"}))
    r = score_trajectory(t, case, outcome=PASS)
    assert r.score == pytest.approx(0.775 + 0.2 / 3) and r.parts["forbidden"]["warning"] == 1
    assert "1 warning" in r.reason


def test_bad_forbidden_rule_names_case():
    t, case = worked(forbidden_sequences=({"tool": "x", "severity": "high"},))
    with pytest.raises(DatasetError, match="case 'w'.*forbidden_sequences\\[0\\].severity"):
        score_trajectory(t, case)


@pytest.mark.parametrize("weights", [
    {"outcome": 0.5, "tool_selection": 0.5, "efficiency": 0.1},
    {"outcome": 1.1, "efficiency": -0.1},
    {"outcome": 0.5, "speed": 0.5},
    {"outcome": float("nan"), "efficiency": 1.0},
    [0.5, 0.5],
])
def test_bad_weights(weights):
    t, case = worked()
    with pytest.raises(MetricInputError):
        score_trajectory(t, case, weights=weights)


def test_custom_weights_missing_keys_are_zero():
    t, case = worked(max_steps=2)
    # 0.6*1 + 0.4*0.8 = 0.92
    r = score_trajectory(t, case, outcome=PASS, weights={"outcome": 0.6, "tool_selection": 0.4})
    assert r.score == pytest.approx(0.92)


@pytest.mark.parametrize("kw", [{"threshold": 1.5}, {"threshold": True}])
def test_bad_threshold(kw):
    t, case = worked()
    with pytest.raises(MetricInputError):
        score_trajectory(t, case, **kw)


def test_bad_inputs():
    t, case = worked()
    with pytest.raises(MetricInputError):
        score_trajectory([ToolCall("f")], case)
    with pytest.raises(MetricInputError):
        score_trajectory(t, {"id": "w"})
    with pytest.raises(MetricInputError):
        score_trajectory(t, case, outcome=True)
    with pytest.raises(MetricInputError):
        score_trajectory(t, Case("w", "x", max_steps=-1))


def test_efficiency_rules():
    three = run(["a", "b"], ["c"], ["d"])  # parallel a,b is one step -> 3 steps
    assert count_steps(three) == 3
    assert efficiency_score(three, Case("c", "x", optimal_steps=6))[0] == 1.0
    assert efficiency_score(three, Case("c", "x", optimal_steps=1))[0] == pytest.approx(1 / 3)
    assert efficiency_score(three, Case("c", "x", max_steps=3))[0] == 1.0
    # excess 3 - 2 = 1 -> 1 - 1/2
    assert efficiency_score(three, Case("c", "x", max_steps=2))[0] == 0.5
    # excess 3 - 1 = 2 -> 1 - 2/1 < 0 -> floored at 0
    assert efficiency_score(three, Case("c", "x", max_steps=1))[0] == 0.0
    assert efficiency_score(three, Case("c", "x", max_steps=0))[0] == 0.0
    assert efficiency_score(run(), Case("c", "x", max_steps=0))[0] == 1.0
    assert efficiency_score(three, Case("c", "x"))[0] == 1.0


call_st = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([{}, {"x": 1}, {"x": 2}]),
                    st.sampled_from(["ok", "err", None]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(call_st, min_size=1, max_size=3), max_size=6),
       st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from([None, {"x": 1}])), max_size=3),
       st.sampled_from([None, PASS, FAIL]), st.sampled_from([None, 0, 2, 5]),
       st.sampled_from([None, 1, 3]), st.sampled_from([(), ("c",)]))
def test_composite_in_unit_interval(steps, exp, outcome, max_steps, optimal, forbidden):
    t = run(*steps)
    case = Case("c", "x", expected_calls=tuple(ExpectedCall(n, a) for n, a in exp),
                max_steps=max_steps, optimal_steps=optimal, forbidden_calls=forbidden)
    r = score_trajectory(t, case, outcome=outcome)
    assert r.score is None or 0.0 <= r.score <= 1.0
    for k in ("outcome", "tool_selection", "argument_correctness", "efficiency"):
        assert r.parts[k] is None or 0.0 <= r.parts[k] <= 1.0
    if forbidden and any(n == "c" for s in steps for n, _a, _st in s):
        assert r.score == 0.0


def refund_case(**kw):
    return Case("refund", "refund order 7 and tell me by e-mail",
                expected_calls=(ExpectedCall("issue_refund", {"order_id": 7}),
                                ExpectedCall("send_email", None)),
                precedence=(("issue_refund", "send_email"),), **kw)


def test_rules_factor_refund_email_before_refund():
    case = refund_case()
    # every weighted part is 1.0 either way (same calls, same arguments, no step budget);
    # only the order differs
    kept = run([("issue_refund", {"order_id": 7})], [("send_email", {"to": "a@b"})], final="Done.")
    broken = run([("send_email", {"to": "a@b"})], [("issue_refund", {"order_id": 7})], final="Done.")
    ok = score_trajectory(kept, case, outcome=PASS)
    assert ok.score == 1.0 and ok.passed and ok.parts["rules"] == 1.0
    bad = score_trajectory(broken, case, outcome=PASS)
    # weighted sum 0.5 + 0.25 + 0.15 + 0.1 = 1.0, times rules 0/1 held = 0.0
    assert bad.parts["raw_score"] == 1.0 and bad.parts["rules"] == 0.0
    assert bad.score == 0.0 and bad.passed is False
    assert bad.parts["precedence"]["violated"] == 1
    assert "issue_refund before send_email broken" in bad.reason
    assert "weighted parts 1.000 x rules 0.000" in bad.reason


def test_rules_factor_share_of_applicable_rules():
    # four rules: a<b held, a<c held, b<d broken (d first), e<f not applicable (f never ran)
    case = Case("r", "x", expected_calls=tuple(ExpectedCall(n, None) for n in "abcd"),
                precedence=(("a", "b"), ("a", "c"), ("b", "d"), ("e", "f")))
    t = run(["d"], ["a"], ["b", "c"], final="ok")
    r = score_trajectory(t, case, outcome=PASS)
    # weighted sum 1.0 (all four expected calls made, no args, no budget) x 2/3 held
    assert r.parts["rules"] == pytest.approx(2 / 3)
    assert r.score == pytest.approx(2 / 3) and r.passed is False
    # with a threshold of 0.6 the factored score passes
    assert score_trajectory(t, case, outcome=PASS, threshold=0.6).passed is True
    # no applicable rule: factor None, the score is the weighted sum
    only_e = Case("r2", "x", expected_calls=(ExpectedCall("a", None),), precedence=(("e", "f"),))
    r2 = score_trajectory(run(["a"], final="ok"), only_e, outcome=PASS)
    assert r2.parts["rules"] is None and r2.score == 1.0


def test_rules_factor_critical_forbidden_is_zero():
    case = refund_case(forbidden_calls=("delete_account",))
    t = run([("issue_refund", {"order_id": 7})], ["delete_account"], [("send_email", {})], final="x")
    r = score_trajectory(t, case, outcome=PASS)
    assert r.parts["rules"] == 0.0 and r.score == 0.0 and r.passed is False


def test_composite_unrounded_and_exact_at_threshold():
    # outcome 1, selection F1 2/3 (one expected call made, one extra: P 1/2, R 1), arguments
    # 1, efficiency 1: 0.5 + 0.25*(2/3) + 0.15 + 0.1 = 11/12, stored as the float nearest
    # to it (0.9166666666666666), not rounded to 12 decimals
    case = Case("p", "t", expected_calls=(ExpectedCall("a", {"x": 1}),))
    r = score_trajectory(run([("a", {"x": 1})], [("b", {})], final="ok"), case, outcome=PASS)
    assert r.parts["tool_selection"] == 2 / 3 and r.parts["argument_correctness"] == 1.0
    assert r.parts["efficiency"] == 1.0
    assert r.score == 11 / 12 == 0.9166666666666666
    # exactly the threshold in exact arithmetic reaches it: selection F1 2/3 again,
    # arguments 2 of 3 right, efficiency 1 optimal / 3 turns: 0.5 + 0.25*(2/3) + 0.15*(2/3)
    # + 0.1*(1/3) = 0.8; the float sum of the products is 0.7999999999999999
    assert math.fsum([0.5, 0.25 * (2 / 3), 0.15 * (2 / 3), 0.1 * (1 / 3)]) < 0.8
    case = Case("q", "t", expected_calls=(ExpectedCall("a", {"x": 1, "y": 2, "z": 3}),),
                optimal_steps=1)
    t = run([("a", {"x": 1, "y": 2, "z": 0})], [("b", {})], final="ok")
    r = score_trajectory(t, case, outcome=PASS)
    assert r.parts["tool_selection"] == 2 / 3 and r.parts["argument_correctness"] == 2 / 3
    assert r.parts["efficiency"] == 1 / 3
    assert r.score == 0.8 and r.passed is True
