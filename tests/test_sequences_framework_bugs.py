"""Public framework bugs and limitations (research notes ../shared/research/*.md) that touch
ordering, forbidden sequences, call rates and the composite: trajcheck's value for the same
input, which is the correct one. (SEQ's part; the lead may move these into
tests/test_framework_bugs.py.)"""

from __future__ import annotations

import pytest
from trajbuild import run

from trajcheck.metrics.composite import score_trajectory
from trajcheck.metrics.result import MetricResult
from trajcheck.metrics.sequences import call_rates, check_forbidden_sequences, ordering_accuracy
from trajcheck.metrics.steps import step_eval
from trajcheck.model import Case, ExpectedCall

PASS = MetricResult("task_success", 1.0, "ok", {}, True)
FAIL = MetricResult("task_success", 0.0, "no ticket", {}, False)


def test_promptfoo_tool_sequence_greedy_subsequence_vs_precedence():
    # promptfoo 0.123.1 trajectory:tool-sequence [book, search] PASSES on [search, book, search]
    # (greedy subsequence: a later search exists). As a precedence constraint "book before
    # search", the first search ran before any book, so the rule is violated.
    r = ordering_accuracy(run(["search"], ["book"], ["search"]), [("book", "search")])
    assert r.score == 0.0 and r.parts["rules"][0]["call_index"] == 0
    assert "search (call 0, step 1) has no book before it" in r.reason


def test_agentevals_66_failures_carry_a_reason():
    # agentevals #66: a failed trajectory match returned comment None. trajcheck names the
    # rule, the call and why.
    r = check_forbidden_sequences(run(["delete_booking"]), [{"tool": "delete_booking",
                                                            "requires_prior": "confirm"}])
    assert r.score == 0.0
    assert "call 0 delete_booking" in r.reason and "no earlier successful confirm" in r.reason


def test_deepeval_tool_permission_has_no_sequence_notion():
    # DeepEval ToolPermissionMetric(allowed_tools=[confirm, delete_booking]) scores 1.0 for
    # delete_booking(9) after confirm(7): both tools are allowed. The linked rule catches it.
    rule = {"tool": "delete_booking", "requires_prior": "confirm", "link": {"arg": "booking_id"}}
    t = run([("confirm", {"booking_id": 7})], [("delete_booking", {"booking_id": 9})])
    assert check_forbidden_sequences(t, [rule]).score == 0.0
    case = Case("b", "cancel booking 9", expected_calls=(ExpectedCall("delete_booking"),),
                forbidden_sequences=(rule,))
    assert score_trajectory(t, case, outcome=PASS).score == 0.0


def test_deepeval_2242_no_calls_is_not_vacuous_argument_success():
    # DeepEval ArgumentCorrectnessMetric gives 1.0 when tools_called == []. Here the argument
    # part is not applicable (None), tool selection is 0 (recall 0, precision 0), so with a
    # failed outcome and no step budget: (0.5*0 + 0.25*0 + 0.10*1) / 0.85 = 0.1176...
    case = Case("a", "book the 9am flight", expected_calls=(ExpectedCall("book_flight"),))
    r = score_trajectory(run(final="Sure!"), case, outcome=FAIL)
    assert r.parts["argument_correctness"] is None
    assert r.parts["tool_selection"] == 0.0
    assert r.score == pytest.approx(0.10 / 0.85)
    assert r.passed is False


def test_deepeval_pr_2968_no_tool_needed_scores_full():
    # DeepEval ToolUseMetric scored 0 for a chat that rightly used no tool (empty argument
    # scores averaged to 0). trajcheck: selection F1 = 1.0 (nothing expected, nothing called),
    # argument part not applicable, efficiency 1.0, outcome 1 -> (0.5 + 0.25 + 0.10) / 0.85 = 1.0
    r = score_trajectory(run(final="Hello!"), Case("n", "hi"), outcome=PASS)
    assert r.score == pytest.approx(1.0) and r.passed is True


def test_deepeval_3141_expected_identical_calls_are_not_duplicates():
    # DeepEval #3141: two identical expected search(q=1) and two identical calls scored 0.5.
    case = Case("d", "x", expected_calls=(ExpectedCall("search", {"q": 1}),) * 2)
    t = run([("search", {"q": 1})], [("search", {"q": 1})])
    assert step_eval(t, case).score == 1.0
    assert call_rates(t, case).parts["duplicate_rate"] == 0.0


def test_ragas_2079_repeated_successful_calls_bounded_rates():
    # RAGAS #2079: three weather_check calls against one reference scored above 1. Here two of
    # the three identical successful calls are duplicates: rate 2/3, score in [0, 1].
    case = Case("r", "x", expected_calls=(ExpectedCall("weather_check", {"location": "Shanghai"}),))
    t = run(*[[("weather_check", {"location": "Shanghai"})]] * 3)
    r = call_rates(t, case)
    assert r.parts["duplicate_rate"] == pytest.approx(2 / 3)
    assert r.score == pytest.approx(1 / 3)
    # failed-and-retried attempts instead are retries, never duplicates
    t2 = run([("weather_check", {"location": "Shanghai"}, "err")],
             [("weather_check", {"location": "Shanghai"}, "err")],
             [("weather_check", {"location": "Shanghai"})])
    assert call_rates(t2, case).parts["duplicate"] == 0
