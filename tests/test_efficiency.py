"""Tests for trajcheck.metrics.efficiency: percentiles, successful-runs-only policy, cost per
successful task, step efficiency, reading figures from a Trajectory, bad input."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.metrics.efficiency import (
    RunStats,
    cost_per_success,
    describe,
    efficiency_by_task,
    efficiency_summary,
    quantile,
    run_stats,
    step_efficiency,
)
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory, Usage


def test_quantile_linear_interpolation_by_hand():
    xs = [10, 1, 3, 2, 4]  # sorted 1 2 3 4 10
    assert quantile(xs, 0.5) == 3.0
    assert quantile(xs, 0.95) == pytest.approx(8.8)  # h = 3.8 -> 4 + 0.8 * 6
    assert quantile(xs, 0.99) == pytest.approx(9.76)  # h = 3.96 -> 4 + 0.96 * 6
    assert quantile(xs, 0.25) == 2.0 and quantile(xs, 0) == 1 and quantile(xs, 1) == 10
    assert quantile([7], 0.99) == 7.0


def test_quantile_against_numpy_if_installed():
    np = pytest.importorskip("numpy")
    rng = random.Random(2)
    for _ in range(50):
        xs = [rng.uniform(0, 100) for _ in range(rng.randint(1, 40))]
        for q in (0.0, 0.5, 0.95, 0.99, 1.0, rng.random()):
            assert quantile(xs, q) == pytest.approx(float(np.quantile(xs, q)), abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=30), st.floats(0, 1))
def test_quantile_properties(xs, q):
    v = quantile(xs, q)
    assert min(xs) <= v <= max(xs)
    assert quantile(xs, 0.5) <= quantile(xs, 0.95) + 1e-9 <= quantile(xs, 0.99) + 2e-9


def _runs() -> list[RunStats]:
    return [
        RunStats(True, steps=4, tool_calls=2, tokens=1000, cost_usd=0.02, latency_ms=1000.0),
        RunStats(True, steps=6, tool_calls=3, tokens=2000, cost_usd=0.04, latency_ms=3000.0),
        RunStats(False, steps=30, tool_calls=25, tokens=9000, cost_usd=0.30, latency_ms=90000.0),
        RunStats(True, steps=5, tool_calls=2, tokens=1500, cost_usd=0.03, latency_ms=2000.0),
        RunStats(False, steps=2, tool_calls=1, tokens=300, cost_usd=0.01, latency_ms=500.0),
    ]


def test_summary_over_successful_runs_only():
    r = efficiency_summary(_runs())
    assert (r.n_runs, r.n_success, r.success_rate) == (5, 3, 0.6)
    d = r.distributions
    assert d is not None
    steps = d["steps"]
    assert steps is not None
    # successful steps 4, 6, 5 -> mean 5, p50 5, p95: h = 1.9 -> 5 + 0.9 = 5.9, p99 5.98
    assert (steps.n, steps.mean, steps.p50) == (3, 5.0, 5.0)
    assert steps.p95 == pytest.approx(5.9) and steps.p99 == pytest.approx(5.98)
    lat = d["latency_ms"]
    assert lat is not None and lat.max == 3000.0  # the failed 90 s run is not in it
    assert lat.p95 == pytest.approx(2900.0)
    # cost per successful task: ALL runs' cost (0.40) / 3 successes
    assert r.total_cost_usd == pytest.approx(0.40)
    assert r.cost_per_success == pytest.approx(0.40 / 3)
    assert cost_per_success(_runs()) == pytest.approx(0.40 / 3)
    assert r.score is None and "3/5 runs succeeded" in r.reason
    assert r.to_dict()["distributions"]["tokens"]["mean"] == pytest.approx(1500.0)


def test_no_success_and_missing_cost():
    fails = [RunStats(False, steps=3, cost_usd=0.1), RunStats(False, steps=4, cost_usd=0.2)]
    r = efficiency_summary(fails)
    assert r.n_success == 0 and r.cost_per_success is None
    assert r.distributions is not None and r.distributions["steps"] is None
    assert r.total_cost_usd == pytest.approx(0.3) and "undefined" in r.reason
    partial = [RunStats(True, steps=3, cost_usd=0.1), RunStats(False, steps=4)]
    assert cost_per_success(partial) is None  # an unknown cost would understate the total
    p = efficiency_summary(partial)
    assert p.total_cost_usd is None and p.parts["missing"]["cost_usd"] == 0
    q = efficiency_summary([RunStats(True, steps=3), RunStats(True, steps=5, tokens=10)])
    assert q.parts["missing"]["tokens"] == 1 and q.parts["tokens"]["n"] == 1


@pytest.mark.parametrize("field", ["cost_usd", "latency_ms", "tokens", "steps"])
def test_nan_figures_name_the_run(field):
    kw = {"steps": 1, field: float("nan")}
    bad = RunStats(True, run_id="r-7", task_id="42", **kw)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match=rf"run 2 \(id 'r-7', task '42'\): {field} is NaN"):
        efficiency_summary(_runs()[:2] + [bad])
    with pytest.raises(MetricInputError, match="run 2"):
        cost_per_success(_runs()[:2] + [bad])


def test_other_bad_input():
    with pytest.raises(MetricInputError, match="empty suite"):
        efficiency_summary([])
    with pytest.raises(MetricInputError, match="cost_usd must be finite"):
        efficiency_summary([RunStats(True, cost_usd=-1.0)])
    with pytest.raises(MetricInputError, match="cost_usd must be finite"):
        efficiency_summary([RunStats(True, cost_usd=float("inf"))])
    with pytest.raises(MetricInputError, match="success must be a bool"):
        efficiency_summary([RunStats(1, steps=2)])  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="run 0: expected RunStats"):
        efficiency_summary([{"success": True}])  # type: ignore[list-item]
    with pytest.raises(MetricInputError, match="not finite"):
        describe([1.0, float("nan")])
    with pytest.raises(MetricInputError):
        quantile([], 0.5)


def test_step_efficiency_policy():
    # optimum known: optimal / actual capped at 1
    assert step_efficiency(8, optimal=4) == 0.5
    assert step_efficiency(3, optimal=4) == 1.0
    assert step_efficiency(4, optimal=4, max_steps=2) == 1.0  # the optimum decides
    assert step_efficiency(0, optimal=4) == 1.0
    # only a budget: 1 - max(0, actual - max_steps) / max_steps, floored at 0
    assert step_efficiency(6, max_steps=6) == 1.0
    assert step_efficiency(3, max_steps=6) == 1.0
    assert step_efficiency(9, max_steps=6) == 0.5
    assert step_efficiency(12, max_steps=6) == 0.0
    assert step_efficiency(40, max_steps=6) == 0.0
    # neither: 1
    assert step_efficiency(99) == 1.0
    # a zero budget (the case schema allows max_steps 0): no step is within it
    assert step_efficiency(0, max_steps=0) == 1.0
    assert step_efficiency(1, max_steps=0) == 0.0
    for bad in [dict(actual=-1), dict(actual=2.5), dict(actual=3, max_steps=-1),
                dict(actual=3, optimal=-2), dict(actual=True), dict(actual=3, max_steps=1.5)]:
        with pytest.raises(MetricInputError):
            step_efficiency(**bad)  # type: ignore[arg-type]


def test_run_stats_from_trajectory():
    steps = (
        Step(0, "user", content="book it"),
        Step(1, "reasoning", content="thinking"),
        Step(2, "tool_call", tool_calls=(ToolCall("search", {"q": "x"}, "c1"),
                                         ToolCall("lookup", {"id": 1}, "c2")),
             usage=Usage(input_tokens=100, output_tokens=20), cost_usd=0.01,
             start_time=100.0, end_time=101.0),
        Step(3, "tool_result", tool_result=ToolResult("c1", "search", "ok")),
        Step(4, "tool_result", tool_result=ToolResult("c2", "lookup", "ok")),
        Step(5, "tool_call", tool_calls=(ToolCall("book", {"id": 1}, "c3"),),
             usage=Usage(input_tokens=200, output_tokens=30), cost_usd=0.02,
             start_time=101.5, end_time=102.25),
        Step(6, "tool_result", tool_result=ToolResult("c3", "book", "done")),
        Step(7, "final_response", content="booked", usage=Usage(total_tokens=50),
             cost_usd=0.005),
    )
    t = Trajectory(steps=steps, final_response="booked", metadata={"run_id": "r1", "case_id": 7})
    rs = run_stats(t, True)
    assert (rs.steps, rs.tool_calls, rs.tokens) == (3, 3, 400)  # 120 + 230 + 50
    assert rs.cost_usd == pytest.approx(0.035)
    assert rs.latency_ms == pytest.approx(2250.0)  # 102.25 - 100.0 s
    assert (rs.run_id, rs.task_id, rs.success) == ("r1", "7", True)
    # trajectory totals win over step sums
    t2 = Trajectory(steps=steps, total_usage=Usage(total_tokens=999), total_cost_usd=1.5,
                    total_latency_ms=42.0)
    rs2 = run_stats(t2, False)
    assert (rs2.tokens, rs2.cost_usd, rs2.latency_ms, rs2.success) == (999, 1.5, 42.0, False)
    # nothing known -> None
    rs3 = run_stats(Trajectory(steps=(Step(0, "user", content="hi"),)), False)
    assert (rs3.steps, rs3.tokens, rs3.cost_usd, rs3.latency_ms) == (0, None, None, None)
    with pytest.raises(MetricInputError):
        run_stats(t, "yes")  # type: ignore[arg-type]


def test_efficiency_by_task():
    runs = [RunStats(True, steps=4, cost_usd=0.1, task_id="a"),
            RunStats(False, steps=9, cost_usd=0.3, task_id="b"),
            RunStats(True, steps=6, cost_usd=0.1, task_id="a"),
            RunStats(False, steps=2, cost_usd=0.2, task_id="a")]
    by = efficiency_by_task(runs)
    assert list(by) == ["a", "b"]
    a = by["a"].distributions
    assert a is not None and a["steps"] is not None and a["steps"].mean == 5.0
    assert by["a"].cost_per_success == pytest.approx(0.4 / 2)
    assert by["b"].cost_per_success is None and by["b"].n_success == 0
    with pytest.raises(MetricInputError, match="run 1: no task_id"):
        efficiency_by_task([runs[0], RunStats(True, steps=1)])
