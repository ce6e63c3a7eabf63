"""Public bugs of DeepEval, RAGAS, agentevals/openevals and promptfoo that concern matching,
precision/recall and match modes: trajcheck's value on the same minimal input.

Inputs and the frameworks' observed values are from ../shared/research/deepeval_ragas.md §4,
langsmith_agentevals.md §2.3-2.5/§6 and promptfoo.md §3/§5. trajcheck matches calls whole
(no per-argument partial credit) and one-to-one by maximum matching.
Not here: R6 (an LLM judge's verdict), R9 (an install pin), D10-style reason wording only.
(Ordering-rule bugs may be appended below by the sequences module's owner.)
"""

from __future__ import annotations

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.metrics.calls import (
    argument_accuracy,
    call_exact_correct,
    selection_accuracy,
    tool_call_prf,
)
from trajcheck.metrics.trajectory import BINARY_MODES, trajectory_match
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory

T = ToolCall
E = ExpectedCall


def case(*exp, **kw):
    return Case(id="bug", input="x", expected_calls=tuple(exp), **kw)


def modes(pred, exp, **kw):
    return {m: trajectory_match(pred, exp, m, **kw).passed for m in BINARY_MODES}


# --- DeepEval ToolCorrectnessMetric --------------------------------------------------


def test_d1_identical_duplicates_not_underscored():
    # deepeval 4.3.1 default mode: 0.5. Correct: 1.0; one call against two expected stays 0.5.
    r = tool_call_prf([T("search", {"q": 1})] * 2, case(E("search", {"q": 1}), E("search", {"q": 1})))
    assert (r.recall, r.precision) == (1.0, 1.0)
    r1 = tool_call_prf([T("search", {"q": 1})], case(E("search", {"q": 1}), E("search", {"q": 1})))
    assert r1.recall == 0.5


def test_d2_score_does_not_depend_on_expected_order():
    # deepeval: 0.5 or 0.6667 depending on expected-list order (greedy partial credit).
    e1, e2 = E("book", {"a": 1, "b": 1, "c": 1}), E("book", {"a": 1, "b": 1, "c": 2})
    pred = [T("book", {"a": 1, "b": 1, "c": 2}), T("book", {"a": 1, "b": 5, "c": 5})]
    fwd, rev = tool_call_prf(pred, case(e1, e2)), tool_call_prf(pred, case(e2, e1))
    # whole-call matching: exactly one expected call was made -> recall 0.5 in both orders
    assert fwd.recall == rev.recall == 0.5 and fwd.precision == rev.precision == 0.5
    assert call_exact_correct(pred, case(e1, e2)).score == call_exact_correct(pred, case(e2, e1)).score == 0.5
    # per argument: the best pairing in both orders (e2 <- call 0: 3/3, e1 <- call 1: 1/3)
    assert argument_accuracy(pred, case(e1, e2)).score == argument_accuracy(pred, case(e2, e1)).score == 2 / 3


def test_d3_call_without_parameters_no_crash():
    # deepeval: AttributeError on None parameters. trajcheck: None = no constraint; {} = no
    # expected argument, so extra arguments pass by default (seed 000 §3.2) and fail under
    # exact_keys, where {} means "no arguments".
    assert tool_call_prf([T("f", {"a": 1})], case(E("f", {}))).f1 == 1.0
    assert tool_call_prf([T("f", {"a": 1})], case(E("f", {}), args_mode="exact_keys")).f1 == 0.0
    assert tool_call_prf([T("f", {"a": 1})], case(E("f", None))).f1 == 1.0
    assert tool_call_prf([T("f", {})], case(E("f", {}))).f1 == 1.0


def test_d4_reordering_with_repeat_is_not_in_order():
    # deepeval docs claimed "treated as correct"; code gives 0.667 (LCS). In-order is False.
    exp = [E("WebSearch"), E("ToolQuery"), E("WebSearch")]
    pred = [T("WebSearch", {}), T("WebSearch", {}), T("ToolQuery", {})]
    got = modes(pred, exp)
    assert got == {"exact": False, "in_order": False, "unordered": True, "superset": True, "subset": True}
    r = trajectory_match(pred, exp, "in_order")
    assert r.reason.startswith("no in_order match") and "order" in r.reason


def test_d5_identical_calls_exact_no_bogus_mismatch():
    pred = [T("search", {"q": "a"}, tool_type="function"), T("search", {"q": "a"}, tool_type="mcp")]
    r = trajectory_match(pred, [E("search", {"q": "a"}), E("search", {"q": "a"})], "exact")
    assert r.score == 1.0 and r.reason.startswith("exact match") and r.parts["missing_expected"] == []


def test_d6_both_empty_is_one_and_calls_when_none_expected_is_zero():
    r = tool_call_prf([], case())
    assert r.f1 == 1.0 and all(modes([], []).values())
    r2 = tool_call_prf([T("f", {})], case())
    assert r2.precision == 0.0 and r2.f1 == 0.0


def test_d7_list_parameters_compare_by_value():
    p = [T("t", {"list": ["a", "b"], "o": {"x": [1, {"y": 2}]}})]
    assert tool_call_prf(p, case(E("t", {"list": ["a", "b"], "o": {"x": [1, {"y": 2}]}}))).f1 == 1.0
    assert tool_call_prf(p, case(E("t", {"list": ["b", "a"], "o": {"x": [1, {"y": 2}]}}))).f1 == 0.0


def test_d8_no_calls_argument_accuracy_not_applicable():
    # deepeval ArgumentCorrectness: 1.0 by vacuous truth. trajcheck: explicit None.
    r = argument_accuracy([], case(E("search", {"q": "x"})))
    assert r.score is None and "not applicable" in r.reason


def test_d9_no_tool_needed_none_called_scores_one():
    r = selection_accuracy([([], Case(id="chat", input="hello there"))])
    assert r.score == 1.0
    assert tool_call_prf([], Case(id="chat", input="hello")).f1 == 1.0


def test_d10_exact_failure_names_the_extra_call():
    r = trajectory_match([T("WebSearch", {}), T("ToolQuery", {})], [E("WebSearch")], "exact")
    assert r.score == 0.0 and "ToolQuery" in r.reason


# --- RAGAS ToolCallAccuracy / ToolCallF1 ---------------------------------------------


def test_r1_retries_bounded_and_scored_by_prf():
    pred = [T("weather_check", {"location": "Shanghai", "time": f"t{i}"}) for i in range(3)]
    r = tool_call_prf(pred, case(E("weather_check", {"location": "Shanghai"})), args_mode="expected_keys")
    assert (r.precision, r.recall) == (pytest.approx(1 / 3), 1.0) and r.f1 == pytest.approx(0.5)


def test_r2_extra_call_modes_explicit():
    pred = [T("weather_check", {"location": "NY"}), T("temperature_conversion", {"f": 75})]
    exp = [E("weather_check", {"location": "NY"})]
    assert trajectory_match(pred, exp, "superset").score == 1.0
    assert trajectory_match(pred, exp, "exact").score == 0.0
    assert trajectory_match(pred, exp, "f1").score == pytest.approx(2 / 3)


def test_r3_parallel_reorder_and_duplicates_multiset():
    exp = [E("w", {"c": "NY"}), E("w", {"c": "SH"})]
    assert modes([T("w", {"c": "SH"}), T("w", {"c": "NY"})], exp)["unordered"] is True
    r = tool_call_prf([T("w", {"c": "SH"}), T("w", {"c": "SH"})], case(*exp))
    assert (r.precision, r.recall, r.f1) == (0.5, 0.5, 0.5)  # set-based F1 says 0.667


def test_r4_no_argument_calls():
    assert tool_call_prf([T("transfer_to_sales_agent", {})], case(E("transfer_to_sales_agent", {}))).f1 == 1.0
    # an unexpected argument on a no-argument call: allowed by default, a mismatch under exact_keys
    assert tool_call_prf([T("transfer_to_sales_agent", {"x": 1})], case(E("transfer_to_sales_agent", {}))).f1 == 1.0
    assert tool_call_prf([T("transfer_to_sales_agent", {"x": 1})],
                         case(E("transfer_to_sales_agent", {}), args_mode="exact_keys")).f1 == 0.0


def test_r5_nested_args_hashable_comparison():
    assert tool_call_prf([T("f", {"o": {"a": 1}})], case(E("f", {"o": {"a": 1}}))).f1 == 1.0


def test_r7_unordered_uses_one_to_one_matching_not_sorted_zip():
    pred = [T("w", {"city": "C"}), T("w", {"city": "Z"})]
    exp = [E("w", {"city": "B"}), E("w", {"city": "C"})]
    r = tool_call_prf(pred, case(*exp))
    assert (r.recall, r.precision) == (0.5, 0.5)  # ragas strict_order=False: 0.0
    assert trajectory_match(pred, exp, "unordered").score == 0.0


@pytest.mark.parametrize("pa,ea,match", [
    ({"id": "1"}, {"id": 1}, False),
    ({"id": 1.0}, {"id": 1}, True),
    ({"x": True}, {"x": 1}, False),
    ({"o": {"b": 2, "a": 1}}, {"o": {"a": 1, "b": 2}}, True),
    ({}, {}, True),
])
def test_r8_one_type_aware_rule_in_every_metric(pa, ea, match):
    want = 1.0 if match else 0.0
    c = case(E("f", ea))
    assert tool_call_prf([T("f", pa)], c).f1 == want
    assert trajectory_match([T("f", pa)], c, "exact").score == want
    assert trajectory_match([T("f", pa)], c, "unordered").score == want


def test_r8_duplicates_counted_not_collapsed():
    r_i = tool_call_prf([T("f", {"a": 1})] * 2, case(E("f", {"a": 1})))
    r_j = tool_call_prf([T("f", {"a": 1})], case(E("f", {"a": 1}), E("f", {"a": 1})))
    assert (r_i.precision, r_i.recall) == (0.5, 1.0) and (r_j.precision, r_j.recall) == (1.0, 0.5)


# --- agentevals / openevals trajectory match -----------------------------------------


def test_agentevals_case6_greedy_false_negative_fixed():
    # tool_args_match_mode="superset" (predicted args contain the reference's) = expected_keys
    pred = [T("f", {"a": 1, "b": 2}), T("f", {"a": 1})]
    ref = [T("f", {"a": 1}), T("f", {"a": 1, "b": 2})]
    got = modes(pred, ref, args_mode="expected_keys")
    assert got["unordered"] and got["superset"] and got["subset"]  # agentevals/openevals: False


def test_agentevals_row5_args_modes_consistent_across_modes():
    pred, ref = [T("search", {"q": "x", "limit": 5})], [T("search", {"q": "x"})]
    # agentevals' default tool_args_match_mode="exact" is trajcheck's exact_keys: all False
    assert not any(modes(pred, ref, args_mode="exact_keys").values())
    # trajcheck's default allows the extra argument, in every mode (no swapped-argument inversion)
    assert all(modes(pred, ref).values())
    assert all(modes(pred, ref, args_mode="expected_keys").values())


def test_agentevals_duplicate_tables():
    s = T("search", {})
    assert modes([s, s], [s]) == {"exact": False, "in_order": True, "unordered": False,
                                  "superset": True, "subset": False}
    assert modes([s], [s, s]) == {"exact": False, "in_order": False, "unordered": False,
                                  "superset": False, "subset": True}


def test_openevals_pr237_missing_trajectory_is_an_error_not_a_pass():
    with pytest.raises(MetricInputError):
        trajectory_match(None, [T("search", {})], "subset")  # type: ignore[arg-type]


def test_openevals_pr217_named_field_missing_is_a_mismatch():
    exp = [E("f", {"q": "x"}, match={"user": "exact"})]  # compare a field with no expected value
    assert trajectory_match([T("f", {"q": "x"})], exp, "exact").score == 0.0


def test_agentevals_issue66_failure_has_a_reason():
    r = trajectory_match([T("search", {"q": "AI news"})], [T("search", {"q": "AI news 2025"})], "exact")
    assert r.score == 0.0 and "search" in r.reason and "missing" in r.reason


def test_agentevals_strict_vs_neutral_exact_on_message_skeleton():
    # agentevals strict fails when the output has extra user/tool messages; neutral exact
    # compares tool calls only.
    traj = Trajectory(steps=(Step(0, "user", content="hi"),
                             Step(1, "tool_call", tool_calls=(T("search", {"q": "x"}),)),
                             Step(2, "final_response", content="done")))
    assert trajectory_match(traj, [T("search", {"q": "x"})], "strict", dialect="agentevals").passed


# --- promptfoo -----------------------------------------------------------------------


def test_promptfoo_tool_call_f1_duplicates_not_collapsed():
    r = trajectory_match([T("search", {}), T("search", {})], ["search"], "tool-call-f1", dialect="promptfoo")
    assert r.score == pytest.approx(2 / 3)  # promptfoo's set-based F1: 1.0
    r2 = trajectory_match([T("search_flights", {}), T("book_flight", {})], ["search_flights", "cancel_flight"],
                          "tool-call-f1", dialect="promptfoo")
    assert r2.score == 0.5


def test_promptfoo_tool_args_match_types_matter():
    pred = [T("book", {"seats": "1", "flight_id": "F1"})]
    assert trajectory_match(pred, [E("book", {"seats": 1})], "tool-args-match", dialect="promptfoo").score == 0.0
    assert trajectory_match(pred, [E("book", {"seats": "1"})], "tool-args-match", dialect="promptfoo").score == 1.0
