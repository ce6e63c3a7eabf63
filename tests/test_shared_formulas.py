"""The definitions both scoring paths call (issue 31): the composite's verdict, the pass mark,
the recorded-reward rule and argument accuracy's pairing, with values worked out by hand."""

from __future__ import annotations

import math

import pytest

from trajcheck.match.matching import assign_per_tool
from trajcheck.metrics.composite import DEFAULT_THRESHOLD, checked_threshold
from trajcheck.metrics.formulas import composite_verdict, reward_success
from trajcheck.metrics.steps import step_eval
from trajcheck.model import Case, ExpectedCall, ToolCall


@pytest.mark.parametrize("score,thr,critical,want", [
    (0.8, 0.8, False, (0.8, True)),           # the mark itself passes
    (0.7999999999999999, 0.8, False, (0.7999999999999999, False)),
    (1.0, 0.8, True, (0.0, False)),            # a critical rule zeroes a perfect run
    (None, 0.8, True, (0.0, False)),           # ... even with no applicable component
    (None, 0.8, False, (None, None)),
    (0.0, 0.0, False, (0.0, True)),
])
def test_composite_verdict(score, thr, critical, want):
    assert composite_verdict(score, thr, critical) == want


@pytest.mark.parametrize("thr,want", [
    (None, 0.8), (0.5, 0.5), (0, 0), (1, 1), (1.5, None), (-0.1, None), (True, None),
    (math.nan, None), (math.inf, None), ("0.5", None),
])
def test_checked_threshold(thr, want):
    got = checked_threshold(thr)
    assert got == want and type(got) is type(want)
    assert DEFAULT_THRESHOLD == 0.8


@pytest.mark.parametrize("reward,want", [
    (1.0, True), (1, True), (0.9999995, True), (1.0000005, True),
    (0.999998, False), (1.000002, False), (0.0, False), (0.5, False),
])
def test_reward_success_within_1e6_of_one(reward, want):
    assert reward_success(reward) is want


def test_assign_per_tool_maximum_weight_not_first_fit():
    # tool "a": first-fit gives row 0 column 0 (1.0) and row 1 column 1 (0.0), total 1.0;
    # the maximum pairs row 0 with column 1 (0.9) and row 1 with column 0 (1.0), total 1.9
    # tool "b": one expected, one predicted (paired as they are); tool "c": nothing predicted
    w = {(0, "p0"): 1.0, (0, "p1"): 0.9, (1, "p0"): 1.0, (1, "p1"): 0.0, (2, "q0"): 0.25}
    seen: list[int] = []

    def row(j, preds):
        seen.append(j)
        return [w[(j, p)] for p in preds]

    got = assign_per_tool([([0, 1], ["p0", "p1"]), ([2], ["q0"]), ([3], [])], row)
    assert got == [(0, "p1", 0.9), (1, "p0", 1.0), (2, "q0", 0.25)]
    assert seen == [0, 1, 2]  # one row per expected call; none for a tool not called


def test_assign_per_tool_more_expected_than_predicted():
    # three expected calls, one predicted: one pair, the heaviest row
    got = assign_per_tool([([0, 1, 2], ["p"])], lambda j, ps: [(0.2, 0.7, 0.5)[j]])
    assert got == [(1, "p", 0.7)]


def test_step_eval_score_is_the_matchings_recall():
    # 2 expected; the refund matched, the lookup made with wrong arguments, an optional call
    # unmatched: recall 1/2 (precision would be 1/2 too: the optional call is not counted)
    case = Case("s", "x", expected_calls=(ExpectedCall("lookup", {"id": 1}),
                                          ExpectedCall("refund", {"id": 1})),
                optional_calls=("log",))
    r = step_eval([ToolCall("lookup", {"id": 2}), ToolCall("log", {}),
                   ToolCall("refund", {"id": 1})], case)
    assert r.score == 0.5 and r.parts["matched"] == 1
    assert step_eval([ToolCall("log", {})], Case("n", "x", optional_calls=("log",))).score is None
