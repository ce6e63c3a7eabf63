"""Tests for trajcheck.metrics.planning: plan coverage and plan adherence, worked by hand,
with brute force for the in-order alignment."""

from __future__ import annotations

import itertools
import random

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.metrics.planning import args_agree, plan_adherence, plan_coverage
from trajcheck.model import Step, ToolCall, Trajectory

PLAN = [
    {"name": "get_reservation", "args": {"reservation_id": "ABC123"}},
    {"name": "search_flights", "description": "find a flight from JFK to SFO on May 20"},
    {"name": "update_reservation_flights", "args": {"reservation_id": "ABC123"}},
    "Confirm the change and tell the user the new total",
]


def _traj(*calls: ToolCall) -> Trajectory:
    return Trajectory(steps=(Step(0, "user", content="change my flight"),
                             *(Step(i + 1, "tool_call", tool_calls=(c,))
                               for i, c in enumerate(calls))))


def test_plan_coverage_by_hand():
    subgoals = [
        "get_reservation",                                  # tool name: covered by step 0
        {"name": "update_reservation_flights", "args": {"reservation_id": "ABC123"}},  # step 2
        "flight from JFK to SFO",                           # text inside step 1's description
        "refund the difference",                            # not in the plan
        "tell the user",                                    # in step 3's text
    ]
    r = plan_coverage(PLAN, subgoals)
    assert (r.covered, r.n_subgoals) == (4, 5) and r.score == pytest.approx(0.8)
    assert r.missing == ("'refund the difference'",)
    assert sorted(r.pairs) == [(0, 0), (1, 2), (2, 1), (4, 3)]
    # wrong args do not cover
    bad = plan_coverage(PLAN, [{"name": "get_reservation", "args": {"reservation_id": "X"}}])
    assert bad.score == 0.0
    # a step covers at most one sub-goal: two identical sub-goals need two steps
    two = plan_coverage(PLAN, ["get_reservation", "get_reservation"])
    assert two.score == 0.5
    # whole words only, case and punctuation ignored
    assert plan_coverage(["Look up the reservation, then search."], ["RESERVATION then"]).score == 1
    assert plan_coverage(["reservations"], ["reservation please"]).score == 0
    # plan given as an artefact dict
    assert plan_coverage({"steps": PLAN}, ["search_flights"]).score == 1.0
    # no sub-goals: not applicable
    none = plan_coverage(PLAN, [])
    assert none.score is None and none.reason == "no labelled sub-goals"


def test_plan_coverage_maximum_matching_not_greedy():
    # step 0 could cover either goal; greedy first-fit would give goal 0 step 0 and leave
    # goal 1 uncovered. Maximum matching covers both.
    plan = ["search flights and book hotel", "search flights"]
    goals = ["book hotel", "search flights"]
    assert plan_coverage(plan, goals).score == 1.0
    goals2 = ["search flights", "book hotel"]
    assert plan_coverage(plan, goals2).score == 1.0


def test_plan_adherence_by_hand():
    t = _traj(
        ToolCall("get_reservation", {"reservation_id": "ABC123"}),
        ToolCall("get_user_details", {"user_id": "u1"}),       # off plan
        ToolCall("search_flights", {"origin": "JFK", "destination": "SFO"}),
        ToolCall("update_reservation_flights", {"reservation_id": "ABC123", "cabin": "economy"}),
    )
    r = plan_adherence(PLAN, t)
    # 3 executable steps executed in order; the text-only step 3 is not executable -> 3/4
    assert (r.executed_in_order, r.executed_any_order, r.n_plan_steps) == (3, 3, 4)
    assert r.score == pytest.approx(0.75)
    assert r.off_plan_calls == (1,)
    assert r.not_executed == ("'Confirm the change and tell the user the new total'",)


def test_plan_adherence_order_and_args():
    plan = ["a", "b", "c"]
    # executed c, a, b: in order only a, b -> 2/3; all three ignoring order
    r = plan_adherence(plan, [ToolCall("c"), ToolCall("a"), ToolCall("b")])
    assert (r.executed_in_order, r.executed_any_order) == (2, 3)
    assert r.score == pytest.approx(2 / 3) and "(3 ignoring order)" in r.reason
    assert r.not_executed == ("c",)
    # argument constraints: exact, type-aware; extra call args allowed
    p2 = [{"name": "pay", "args": {"amount": 20}}]
    assert plan_adherence(p2, [ToolCall("pay", {"amount": 20.0, "currency": "USD"})]).score == 1
    assert plan_adherence(p2, [ToolCall("pay", {"amount": "20"})]).score == 0
    assert plan_adherence(["pay"], [ToolCall("pay", None, raw_args="{bad")]).score == 0
    # each call executes at most one step
    assert plan_adherence(["a", "a"], [ToolCall("a")]).score == 0.5
    assert plan_adherence([], [ToolCall("a")]).score is None


def _brute_lcs(plan: list[str], calls: list[str]) -> int:
    best = 0
    for r in range(min(len(plan), len(calls)), 0, -1):
        for ps in itertools.combinations(range(len(plan)), r):
            for cs in itertools.combinations(range(len(calls)), r):
                if all(plan[p] == calls[c] for p, c in zip(ps, cs)):
                    return r
    return best


def test_plan_adherence_brute_force():
    rng = random.Random(5)
    for _ in range(150):
        plan = [rng.choice("abc") for _ in range(rng.randint(1, 5))]
        calls = [rng.choice("abcd") for _ in range(rng.randint(0, 6))]
        r = plan_adherence(plan, [ToolCall(c) for c in calls])
        assert r.executed_in_order == _brute_lcs(plan, calls), (plan, calls)
        # any-order count: multiset intersection
        exp_any = sum(min(plan.count(x), calls.count(x)) for x in set(plan))
        assert r.executed_any_order == exp_any
        assert len(r.not_executed) == len(plan) - r.executed_in_order


def test_args_agree():
    assert args_agree(None, {"x": 1}) and not args_agree(None, None)
    assert args_agree({"x": 1}, {"x": 1.0, "y": 2})
    assert not args_agree({"x": True}, {"x": 1})
    assert not args_agree({"x": [1, 2]}, {"x": [2, 1]})
    assert args_agree({"x": {"a": 1, "b": 2}}, {"x": {"b": 2, "a": 1}})


def test_bad_plans():
    with pytest.raises(MetricInputError, match="plan step 1: needs a tool name or a description"):
        plan_coverage(["a", {"args": {}}], ["a"])
    with pytest.raises(MetricInputError, match="subgoal 0: empty string"):
        plan_coverage(["a"], ["  "])
    with pytest.raises(MetricInputError, match="plan must be a list"):
        plan_adherence("a, b", [ToolCall("a")])
    with pytest.raises(MetricInputError, match="plan step 0: args must be an object"):
        plan_adherence([{"name": "a", "args": [1]}], [ToolCall("a")])
    with pytest.raises(MetricInputError, match="Trajectory or a list of ToolCall"):
        plan_adherence(["a"], ["a"])  # type: ignore[list-item]
