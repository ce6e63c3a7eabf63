"""plan_adherence with explicitly revised steps (seed 000 §5.2: |plan steps executed (or
explicitly revised)| / |plan steps|), worked by hand."""

from __future__ import annotations

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.metrics.planning import merge_plan_versions, parse_plan_step, plan_adherence
from trajcheck.model import ToolCall


def _calls(*names: str) -> list[ToolCall]:
    return [ToolCall(n) for n in names]


def test_a_replaced_step_counts_as_revised() -> None:
    plan = ["search_flights", "book_flight", "send_email"]
    later = ["search_flights", "book_train", "send_email"]  # book_flight replaced
    # without the revision: 2 of 3 steps executed in order
    assert plan_adherence(plan, _calls("search_flights", "book_train", "send_email")).score == pytest.approx(2 / 3)
    # with it: steps search_flights, book_flight (revised), book_train (added), send_email;
    # executed in order 3 + revised 1 = 4 of 4
    r = plan_adherence(plan, _calls("search_flights", "book_train", "send_email"), revisions=[later])
    assert (r.executed_in_order, r.n_plan_steps, r.revised, r.score) == (3, 4, ("book_flight",), 1.0)
    assert r.reason == "3/4 plan steps executed in order, 1 explicitly revised"
    # the revision's own new step must still be executed: without book_train, 2 + 1 of 4
    r2 = plan_adherence(plan, _calls("search_flights", "send_email"), revisions=[later])
    assert (r2.executed_in_order, r2.score, r2.not_executed) == (2, 0.75, ("book_train",))


def test_a_dropped_step_and_the_insertion_order() -> None:
    v1 = ["a", "b", "c", "d"]
    v2 = ["a", "x", "c"]          # b replaced by x, d dropped
    v3 = ["y", "a", "x", "c"]     # y added in front
    steps, revised = merge_plan_versions([[parse_plan_step(s) for s in v] for v in (v1, v2, v3)])
    # x goes right after a, its predecessor in v2 (so before the replaced b); y to the front
    assert [s.name for s in steps] == ["y", "a", "x", "b", "c", "d"]
    assert revised == [False, False, False, True, False, True]
    # calls y, a, x, c: 4 executed in order + 2 revised = 6 of 6
    assert plan_adherence(v1, _calls("y", "a", "x", "c"), revisions=[v2, v3]).score == 1.0
    # calls a, x, c, y: y comes last, out of order: 3 in order + 2 revised = 5 of 6
    r = plan_adherence(v1, _calls("a", "x", "c", "y"), revisions=[v2, v3])
    assert (r.executed_in_order, r.executed_any_order, r.score) == (3, 4, pytest.approx(5 / 6))


def test_a_step_marked_revised_in_the_artefact() -> None:
    plan = ["lookup", {"name": "refund", "revised": "user withdrew the refund request"}, "notify"]
    r = plan_adherence(plan, _calls("lookup", "notify"))
    assert (r.executed_in_order, r.revised, r.score) == (2, ("refund",), 1.0)
    # a bare true works too; false is no mark
    assert plan_adherence(["a", {"name": "b", "revised": True}], _calls("a")).score == 1.0
    assert plan_adherence(["a", {"name": "b", "revised": False}], _calls("a")).score == 0.5
    # a mark in a later version revises the kept step
    r2 = plan_adherence(["a", "b"], _calls("a"), revisions=[["a", {"name": "b", "revised": "not needed"}]])
    assert (r2.n_plan_steps, r2.revised, r2.score) == (2, ("b",), 1.0)


def test_revised_steps_do_not_take_calls_from_other_steps() -> None:
    # b is revised away; the one call to b is then free for the step b added by the revision
    plan = [{"name": "b", "args": {"x": 1}}]
    later = [{"name": "b", "args": {"x": 2}}]
    r = plan_adherence(plan, [ToolCall("b", {"x": 2})], revisions=[later])
    assert (r.executed_in_order, r.revised, r.n_plan_steps, r.score) == (1, ("b({'x': 1})",), 2, 1.0)
    # args compare type-aware: 1 and 1.0 are the same value, so the step is kept, not revised
    r2 = plan_adherence(plan, [ToolCall("b", {"x": 1})], revisions=[[{"name": "b", "args": {"x": 1.0}}]])
    assert (r2.n_plan_steps, r2.revised, r2.score) == (1, (), 1.0)


def test_no_revisions_is_the_plain_in_order_share() -> None:
    r = plan_adherence(["a", "b", "c"], _calls("a", "c"))
    assert (r.executed_in_order, r.revised, r.score) == (2, (), pytest.approx(2 / 3))
    assert r.to_dict()["revised"] == []


def test_bad_revisions_are_errors() -> None:
    with pytest.raises(MetricInputError, match="revisions must be a list of plans"):
        plan_adherence(["a"], _calls("a"), revisions="a b")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="revision 1 step 0"):
        plan_adherence(["a"], _calls("a"), revisions=[[{"args": {}}]])
    with pytest.raises(MetricInputError, match="revised must be true/false or a non-empty reason"):
        plan_adherence([{"name": "a", "revised": ""}], _calls("a"))
