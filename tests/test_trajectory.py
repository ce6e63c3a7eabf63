"""metrics.trajectory: neutral modes, the framework mode table, properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.metrics.trajectory import (
    BINARY_MODES,
    MODE_TABLE,
    NEUTRAL_MODES,
    deepeval_mode,
    normalize_mode,
    ragas_mode,
    trajectory_match,
)
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

T = ToolCall
CASE = Case(id="agent_042", input="Open a new high-priority ticket",
            expected_calls=(ExpectedCall("create_ticket", {"priority": "high"}),),
            optional_calls=("search_docs", "get_ticket"))
WORKED = [T("search_docs", {"q": "boot"}), T("get_ticket", {"id": "INC-1042"}),
          T("create_ticket", {"priority": "medium"}), T("create_ticket", {"priority": "high"})]


def passed(pred, exp, mode, **kw):
    return trajectory_match(pred, exp, mode, **kw).passed


def test_worked_example_modes():
    got = {m: passed(WORKED, CASE, m) for m in BINARY_MODES}
    assert got == {"exact": False, "in_order": True, "unordered": False, "superset": True, "subset": False}
    # without the medium attempt: every mode holds (optional lookups skipped)
    fixed = [WORKED[0], WORKED[1], WORKED[3]]
    assert all(passed(fixed, CASE, m) for m in BINARY_MODES)


def test_vertex_any_order_match_is_superset():
    r = trajectory_match(WORKED, CASE, mode="any_order_match", dialect="vertex")
    assert r.parts["mode"] == "superset" and r.passed is True and r.score == 1.0
    assert normalize_mode("trajectory_any_order_match", "vertex") == "superset"
    # superset, not multiset equality: extras allowed
    assert passed([T("a", {}), T("b", {})], ["a"], "any_order_match", dialect="vertex")
    assert not passed([T("a", {}), T("b", {})], ["a"], "unordered")


def test_definitions_on_small_inputs():
    a, b, c = T("a", {}), T("b", {}), T("c", {})
    ab = ["a", "b"]
    assert passed([a, b], ab, "exact") and not passed([b, a], ab, "exact")
    assert passed([b, a], ab, "unordered") and not passed([b, a], ab, "in_order")
    assert passed([a, c, b], ab, "in_order") and not passed([a, c, b], ab, "exact")
    assert passed([b, a, b], ab, "in_order")  # b after a exists
    assert passed([a], ab, "subset") and not passed([a], ab, "superset")
    assert passed([a, a], ["a"], "superset") and not passed([a, a], ["a"], "subset")  # one-to-one
    assert not passed([a], ["a", "a"], "superset") and passed([a], ["a", "a"], "subset")
    assert passed([], [], "exact") and passed([], ab, "subset") and not passed([], ab, "superset")


def test_args_modes_apply_in_every_mode():
    exp = [ExpectedCall("f", {"a": 1})]
    pred = [T("f", {"a": 1, "extra": 2})]
    for m in BINARY_MODES:
        assert not passed(pred, exp, m, args_mode="exact_keys")
        assert passed(pred, exp, m)  # default: extra arguments allowed (seed 000 §3.2)
        assert passed(pred, exp, m, args_mode="expected_keys")
        assert passed([T("f", {"a": 9})], exp, m, args_mode="ignore")


def test_retries_set_aside_in_modes():
    traj = Trajectory(steps=(
        Step(0, "tool_call", tool_calls=(T("book", {"d": 0}, call_id="1"),)),
        Step(1, "tool_result", tool_result=ToolResult("1", "book", "err", is_error=True)),
        Step(2, "tool_call", tool_calls=(T("book", {"d": 1}, call_id="2"),)),
        Step(3, "tool_result", tool_result=ToolResult("2", "book", "ok")),
    ))
    exp = [ExpectedCall("book", {"d": 1})]
    assert all(passed(traj, exp, m) for m in BINARY_MODES)


def test_reference_forms():
    pred = [T("w", {"city": "NY"})]
    assert passed(pred, [T("w", {"city": "NY"})], "exact")
    assert passed(pred, [{"tool_name": "w", "tool_input": {"city": "NY"}}], "exact")
    assert passed(pred, [{"name": "w", "args": {"city": "ny"}, "match": {"city": "normalized"}}], "exact")
    assert passed(pred, Trajectory(steps=(Step(0, "tool_call", tool_calls=(T("w", {"city": "NY"}),)),)), "exact")
    with pytest.raises(MetricInputError, match="did not parse"):
        trajectory_match(pred, [T("w", None)], "exact")
    with pytest.raises(MetricInputError):
        trajectory_match(pred, 5, "exact")
    with pytest.raises(MetricInputError):
        trajectory_match(None, ["w"], "exact")  # type: ignore[arg-type]


def test_score_modes_equal_prf():
    r = tool_call_prf(WORKED, CASE)
    assert trajectory_match(WORKED, CASE, "trajectory_precision", dialect="vertex").score == r.precision
    assert trajectory_match(WORKED, CASE, "trajectory_recall", dialect="vertex").score == r.recall
    assert trajectory_match(WORKED, CASE, "f1").score == pytest.approx(2 / 3)
    # promptfoo tool-call-f1 is names only
    f = trajectory_match([T("search", {"q": 1})], [ExpectedCall("search", {"q": 2})], "tool-call-f1",
                         dialect="promptfoo")
    assert f.score == 1.0 and f.parts["mode"] == "f1"


def test_mode_table_normalization():
    assert normalize_mode("strict", "agentevals") == "exact"
    assert normalize_mode("strict") == "exact"  # same meaning in agentevals and openevals
    for d in ("agentevals", "openevals"):
        for m in ("unordered", "subset", "superset"):
            assert normalize_mode(m, d) == m
    assert normalize_mode("exact_match", "vertex") == "exact"
    assert normalize_mode("in_order_match", "vertex") == "in_order"
    assert normalize_mode("precision", "vertex") == "precision"
    assert normalize_mode("trajectory:tool-used", "promptfoo") == "superset"
    assert normalize_mode("tool-sequence", "promptfoo") == "in_order"
    assert normalize_mode("tool-args-match", "promptfoo") == "superset"
    assert normalize_mode("tool-call-f1", "promptfoo") == "f1"
    assert normalize_mode(ragas_mode(strict_order=True), "ragas") == "exact"
    assert normalize_mode(ragas_mode(strict_order=False), "ragas") == "unordered"
    assert normalize_mode("ToolCallF1", "ragas") == "f1"
    assert normalize_mode(deepeval_mode(), "deepeval") == "recall"
    assert normalize_mode(deepeval_mode(should_consider_ordering=True), "deepeval") == "in_order"
    assert normalize_mode(deepeval_mode(True, True), "deepeval") == "exact"
    assert normalize_mode("ToolCorrectnessMetric(should_exact_match=True)", "deepeval") == "exact"
    for row in MODE_TABLE:
        assert row.neutral in NEUTRAL_MODES and row.documented and row.source
        assert normalize_mode(row.name, row.dialect) == row.neutral
    # the differs column is filled where the research found a difference
    differs = {(r.dialect, r.name): r.implementation_differs for r in MODE_TABLE}
    assert "greedily" in differs[("agentevals", "superset")]
    assert "str(args)" in differs[("ragas", "ToolCallAccuracy(strict_order=False)")]
    assert "#3141" in differs[("deepeval", "ToolCorrectness")]
    with pytest.raises(MetricInputError, match="known"):
        normalize_mode("in_order", "agentevals")  # agentevals has no in-order mode
    with pytest.raises(MetricInputError, match="unknown dialect"):
        normalize_mode("strict", "langfuse")
    with pytest.raises(MetricInputError, match="neutral modes"):
        trajectory_match([], [], "fuzzy")


names = st.sampled_from(["a", "b", "c"])
calls = st.lists(st.builds(lambda n, v: T(n, {"v": v}), names, st.integers(0, 1)), max_size=6)
exps = st.lists(st.builds(lambda n, v: ExpectedCall(n, {"v": v}), names, st.integers(0, 1)), max_size=5)


@settings(max_examples=200, deadline=None)
@given(calls, exps, st.randoms(use_true_random=False), st.sampled_from(["exact_keys", "ignore"]))
def test_properties(pred, exp, rnd, am):
    opt = ("c",)
    res = {m: trajectory_match(pred, exp, m, args_mode=am, optional=opt) for m in NEUTRAL_MODES}
    for r in res.values():
        assert 0.0 <= r.score <= 1.0
    shuffled = list(pred)
    rnd.shuffle(shuffled)
    for m in ("unordered", "superset", "subset", "precision", "recall", "f1"):
        assert trajectory_match(shuffled, exp, m, args_mode=am, optional=opt).score == res[m].score
    if res["exact"].passed:
        assert all(res[m].passed for m in BINARY_MODES)
    if res["unordered"].passed:
        assert res["superset"].passed and res["subset"].passed
    if res["in_order"].passed:
        assert res["superset"].passed
    assert res["superset"].passed == (res["recall"].score == 1.0)


def test_ten_thousand_call_trajectory_modes():
    rnd = random.Random(1)
    pred = [T(rnd.choice("abcde"), {"i": rnd.randrange(5)}) for _ in range(10_000)]
    exp = [ExpectedCall("a", {"i": 1}), ExpectedCall("b", {"i": 2}), ExpectedCall("a", {"i": 1})]
    assert passed(pred, exp, "superset") and passed(pred, exp, "in_order")
    assert not passed(pred, exp, "exact") and not passed(pred, exp, "subset")


def _steps_traj(groups):
    steps, k = [], 0
    for g in groups:
        tcs = tuple(ToolCall(n, {"v": v}, call_id=f"c{(k := k + 1)}") for n, v in g)
        steps.append(Step(len(steps), "tool_call", tool_calls=tcs))
    return Trajectory(steps=tuple(steps))


def test_parallel_step_has_no_order_in_exact_and_in_order():
    exp = [ExpectedCall("a", {"v": 1}), ExpectedCall("b", {"v": 2}), ExpectedCall("c", {"v": 3})]
    # a and b issued together, in the other order: no order among them
    par = _steps_traj([[("b", 2), ("a", 1)], [("c", 3)]])
    assert passed(par, exp, "exact") and passed(par, exp, "in_order")
    # the same calls one per step, b before a: the order is real
    seq = _steps_traj([[("b", 2)], [("a", 1)], [("c", 3)]])
    assert not passed(seq, exp, "exact") and not passed(seq, exp, "in_order")
    # c issued with a before b ran: c cannot come before b
    early = _steps_traj([[("a", 1), ("c", 3)], [("b", 2)]])
    assert not passed(early, exp, "exact") and not passed(early, exp, "in_order")
    # an optional call inside a parallel step may be skipped in exact
    opt = _steps_traj([[("b", 2), ("search", 0), ("a", 1)], [("c", 3)]])
    assert trajectory_match(opt, exp, "exact", optional=("search",)).passed
    assert not trajectory_match(opt, exp, "exact").passed


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 1)), min_size=1, max_size=3),
                max_size=4),
       st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 1)), max_size=4))
def test_parallel_steps_equal_brute_force_over_orders(groups, expected):
    import itertools

    exp = [ExpectedCall(n, {"v": v}) for n, v in expected]
    traj = _steps_traj(groups)
    for mode in ("exact", "in_order"):
        want = any(
            trajectory_match([ToolCall(n, {"v": v}) for g in order for n, v in g], exp, mode).passed
            for order in itertools.product(*(itertools.permutations(g) for g in groups)))
        assert passed(traj, exp, mode) == want, (mode, groups, expected)
