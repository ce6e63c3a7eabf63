"""Efficiency of agent runs: steps, tool calls, tokens, cost and latency; step efficiency.

Pure standard library. Policies from ../shared/DESIGN.md:

- Efficiency figures (steps, tool calls, tokens, cost, latency; mean, p50/p95/p99) are computed
  over SUCCESSFUL runs only -- a run that failed fast is not "efficient".
- Cost per successful task = cost of ALL runs (failed ones included) / number of successful
  runs: failures are paid for.
- Percentiles use linear interpolation between closest ranks (numpy's default "linear"
  method, Hyndman & Fan 1996 definition 7).
- Step efficiency (the composite's efficiency part) = optimal_steps / actual_steps capped at
  1 when the case gives the optimum, else 1 - excess / max_steps floored at 0, else 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from ..model import Trajectory
from .calls import require_trajectory
from .formulas import AGENT_KINDS, run_figures
from .reliability import exact_mean, percentile
from .result import MetricResult

__all__ = [
    "AGENT_STEP_KINDS",
    "agent_steps",
    "RunStats",
    "run_stats",
    "quantile",
    "Distribution",
    "describe",
    "EfficiencyResult",
    "efficiency_summary",
    "summary_from_values",
    "efficiency_by_task",
    "cost_per_success",
    "cost_per_success_from_total",
    "step_efficiency",
]

#: Step kinds that count as one agent step: each is one model turn that produced output.
AGENT_STEP_KINDS = AGENT_KINDS  # formulas.AGENT_KINDS: the step kinds that are agent turns

_FIELDS = ("steps", "tool_calls", "tokens", "cost_usd", "latency_ms")


@dataclass(frozen=True)
class RunStats:
    """The efficiency figures of one run.

    ``success``: the run's task outcome; ``steps``: agent steps (see ``run_stats``);
    ``tool_calls``: number of tool calls; ``tokens``: total tokens; ``cost_usd``: US dollars;
    ``latency_ms``: wall-clock milliseconds. Any figure may be None when the source lacks it.
    ``run_id`` / ``task_id`` only label the run in messages.
    """

    success: bool
    steps: int | None = None
    tool_calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    run_id: str | None = None
    task_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of all fields."""
        return {"success": self.success, "steps": self.steps, "tool_calls": self.tool_calls,
                "tokens": self.tokens, "cost_usd": self.cost_usd, "latency_ms": self.latency_ms,
                "run_id": self.run_id, "task_id": self.task_id}


def agent_steps(traj: Trajectory) -> int:
    """The number of agent turns in ``traj``: steps whose kind is in ``AGENT_STEP_KINDS``.

    One assistant turn is one step however many parallel calls it holds; tool results,
    user/system messages and reasoning are not steps. This is trajcheck's one definition of
    "steps", used by the efficiency figures, ``step_efficiency`` in the composite score and
    a case's ``max_steps`` / ``optimal_steps``. Failed-and-retried attempts count (the agent
    took those turns). Raises MetricInputError for a non-Trajectory (a list of ToolCall has
    no turns).
    Source: seed 000 §5.1 (steps per task: LLM turns).
    """
    require_trajectory(traj, what="agent_steps", needs="the agent's steps")
    return sum(1 for s in traj.steps if s.kind in AGENT_STEP_KINDS)


def run_stats(traj: Trajectory, success: bool) -> RunStats:
    """Read one run's efficiency figures from a ``Trajectory``.

    Args:
        traj: the run.
        success: the task outcome, e.g. ``task_success(...).passed``.

    Returns:
        ``RunStats`` with ``steps``, ``tool_calls``, ``tokens``, ``cost_usd``, ``latency_ms``
        (each None when the source lacks it), ``run_id``/``task_id`` from
        ``traj.metadata["run_id"]`` / ``["case_id"]``.

    Raises:
        MetricInputError: ``success`` is not a bool, or ``traj`` is not a Trajectory (a list of
            ToolCall has no steps, usage, cost or timing).

    Examples:
        Two agent turns (a user step does not count), three calls, cost from the steps:

        >>> from trajcheck.model import Trajectory
        >>> run = Trajectory.from_dict({"steps": [
        ...     {"index": 0, "kind": "user", "content": "refund order 7"},
        ...     {"index": 1, "kind": "tool_call", "cost_usd": 0.25,
        ...      "tool_calls": [{"name": "get_order"}, {"name": "get_customer"}]},
        ...     {"index": 2, "kind": "tool_call", "cost_usd": 0.5, "tool_calls": [{"name": "refund"}]}]})
        >>> s = run_stats(run, True)
        >>> s.steps, s.tool_calls, s.cost_usd, s.tokens
        (2, 3, 0.75, None)

    - ``steps``: steps whose kind is in ``AGENT_STEP_KINDS`` (assistant, tool_call,
      final_response) -- the agent's own turns. User, system, tool_result and reasoning steps
      are not counted (reasoning belongs to the turn it precedes; counting it would make the
      same run longer in formats that split reasoning out).
    - ``tool_calls``: ``len(traj.tool_calls())`` (parallel calls each count).
    - ``tokens``: ``traj.total_usage.total`` if given, else the sum of the steps'
      ``usage.total`` (each: total_tokens, else input + output), else None.
    - ``cost_usd``: ``traj.total_cost_usd`` if given, else the sum of known step costs.
    - ``latency_ms``: ``traj.total_latency_ms`` if given, else (last step end_time - first step
      start_time) * 1000 when step times exist, else the sum of step latencies.

    Source: seed 000 §5.1 (steps, tool calls, tokens, cost and latency per task).
    """
    if not isinstance(success, bool):
        raise MetricInputError(f"run_stats: success must be a bool, got {success!r}")
    require_trajectory(traj, what="run_stats", needs="the agent's steps, usage, cost and timing")
    steps = agent_steps(traj)
    st = traj.steps
    tu = traj.total_usage
    tokens, cost, latency = run_figures(
        tu.total if tu is not None else None,
        [t for s in st if s.usage is not None and (t := s.usage.total) is not None],
        traj.total_cost_usd, [s.cost_usd for s in st if s.cost_usd is not None],
        traj.total_latency_ms, [s.start_time for s in st if s.start_time is not None],
        [s.end_time for s in st if s.end_time is not None],
        [s.latency_ms for s in st if s.latency_ms is not None])
    md = traj.metadata or {}
    run_id = md.get("run_id")
    task_id = md.get("case_id")
    return RunStats(success=success, steps=steps, tool_calls=len(traj.tool_calls()),
                    tokens=int(tokens) if tokens is not None else None, cost_usd=cost,
                    latency_ms=latency,
                    run_id=str(run_id) if run_id is not None else None,
                    task_id=str(task_id) if task_id is not None else None)


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of ``values`` in any order: ``reliability.percentile`` of them sorted.

    Args:
        values: a non-empty sequence of numbers, any order.
        q: the quantile, 0 <= q <= 1.

    Returns:
        Sorted x, h = (N - 1) q: x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]),
        ``numpy.quantile(values, q)`` with the default ``method="linear"`` (Hyndman & Fan
        1996, definition 7) -- the one interpolation rule, ``reliability.percentile``'s.

    Raises:
        MetricInputError: on empty input or q outside [0, 1].
    """
    if not len(values):
        raise MetricInputError("quantile of an empty sequence")
    return percentile(sorted(values), q)


@dataclass(frozen=True)
class Distribution:
    """Summary of one figure over runs: count ``n``, ``mean``, ``p50``, ``p95``, ``p99``,
    ``min``, ``max`` (same unit as the figure)."""

    n: int
    mean: float
    p50: float
    p95: float
    p99: float
    min: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"n": self.n, "mean": self.mean, "p50": self.p50, "p95": self.p95,
                "p99": self.p99, "min": self.min, "max": self.max}


def describe(values: Sequence[float]) -> Distribution | None:
    """``Distribution`` of the values (linear-interpolation percentiles), or None when empty.

    Raises ``MetricInputError`` for a non-finite value (NaN or infinity).
    Source: seed 000 §5.1 (p50/p95, and p99 to catch runaway loops).
    """
    if not len(values):
        return None
    if not all(map(math.isfinite, values)):
        for i, v in enumerate(values):
            if not math.isfinite(v):
                raise MetricInputError(f"value {i} is not finite: {v!r}")
    xs = sorted(values)  # once for the three percentiles (``quantile`` sorts on each call)
    return Distribution(n=len(values), mean=exact_mean(values),
                        p50=percentile(xs, 0.50), p95=percentile(xs, 0.95),
                        p99=percentile(xs, 0.99), min=float(min(values)),
                        max=float(max(values)))


def _label(i: int, r: RunStats) -> str:
    extra = []
    if r.run_id is not None:
        extra.append(f"id {r.run_id!r}")
    if r.task_id is not None:
        extra.append(f"task {r.task_id!r}")
    return f"run {i}" + (f" ({', '.join(extra)})" if extra else "")


def _validate(runs: Sequence[RunStats]) -> None:
    if not runs:
        raise MetricInputError("empty suite: no runs given")
    for i, r in enumerate(runs):
        if not isinstance(r, RunStats):
            raise MetricInputError(f"run {i}: expected RunStats, got {type(r).__name__}")
        if not isinstance(r.success, bool):
            raise MetricInputError(f"{_label(i, r)}: success must be a bool, got {r.success!r}")
        for f in _FIELDS:
            v = getattr(r, f)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MetricInputError(f"{_label(i, r)}: {f} must be a number, got {v!r}")
            if math.isnan(v):
                raise MetricInputError(f"{_label(i, r)}: {f} is NaN")
            if not math.isfinite(v) or v < 0:
                raise MetricInputError(
                    f"{_label(i, r)}: {f} must be finite and >= 0, got {v!r}")


def cost_per_success(runs: Sequence[RunStats]) -> float | None:
    """Cost per successful task = total cost of ALL runs / number of successful runs (USD).

    Args:
        runs: a non-empty sequence of ``RunStats``.

    Returns:
        The cost, or None (not inf, not 0) when it is undefined: no run succeeded (a gate
        must treat None as failing), or some run has no cost figure (the total would be
        understated).

    Raises:
        MetricInputError: an empty list or a NaN / negative / infinite cost (naming the run).

    Examples:
        Failed runs are paid for, so they are in the numerator: (0.25 + 0.5 + 0.25) / 2.

        >>> cost_per_success([RunStats(True, cost_usd=0.25), RunStats(True, cost_usd=0.5),
        ...                   RunStats(False, cost_usd=0.25)])
        0.5
        >>> cost_per_success([RunStats(False, cost_usd=0.25)]) is None
        True
    """
    _validate(runs)
    return cost_per_success_from_total(_total_cost(runs), sum(r.success for r in runs))


def _total_cost(runs: Sequence[RunStats]) -> float | None:
    """The exact total cost of ALL runs, correctly rounded; None when a run has no cost."""
    if any(r.cost_usd is None for r in runs):
        return None
    return math.fsum(r.cost_usd for r in runs if r.cost_usd is not None)


def cost_per_success_from_total(total_cost_usd: float | None, n_success: int) -> float | None:
    """Cost per successful task from its parts: the one definition of the figure
    (``cost_per_success``, ``efficiency_summary`` and ``summary_from_values`` call it).

    Args:
        total_cost_usd: the exact total cost of ALL runs (failed ones are paid for), or None
            when some run has no cost.
        n_success: the number of successful runs.

    Returns:
        ``total_cost_usd / n_success``; None when no run succeeded or the total is None.

    Raises:
        Nothing.
    """
    if n_success == 0 or total_cost_usd is None:
        return None
    return total_cost_usd / n_success


@dataclass(frozen=True)
class EfficiencyResult(MetricResult):
    """Efficiency over a suite of runs.

    ``distributions[figure]`` is a ``Distribution`` over the successful runs that report the
    figure (None when none does); figures: steps, tool_calls, tokens, cost_usd, latency_ms.
    ``total_cost_usd`` sums all runs (None if any run lacks a cost); ``cost_per_success`` as
    ``cost_per_success()``. ``score`` is None: these are measurements, not a [0, 1] score.
    """

    n_runs: int = 0
    n_success: int = 0
    success_rate: float = 0.0
    distributions: dict[str, Distribution | None] | None = None
    total_cost_usd: float | None = None
    cost_per_success: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones (distributions as dicts)."""
        d = super().to_dict()
        d.update(n_runs=self.n_runs, n_success=self.n_success, success_rate=self.success_rate,
                 distributions={k: (v.to_dict() if v else None)
                                for k, v in (self.distributions or {}).items()},
                 total_cost_usd=self.total_cost_usd, cost_per_success=self.cost_per_success)
        return d


def efficiency_summary(runs: Sequence[RunStats], name: str = "efficiency") -> EfficiencyResult:
    """Steps, tool calls, tokens, cost and latency over SUCCESSFUL runs, with mean and
    p50/p95/p99 (linear interpolation), plus cost per successful task over ALL runs.

    Args:
        runs: a non-empty sequence of ``RunStats`` (build them with ``run_stats``).
        name: the result's name.

    Returns:
        ``EfficiencyResult`` (score None): ``distributions`` per figure (None when no
        successful run reports it), ``success_rate``, ``total_cost_usd``,
        ``cost_per_success``; ``parts["missing"]`` counts the successful runs without each
        figure, so a partial figure is visible, not hidden.

    Raises:
        MetricInputError: an empty list, a non-RunStats item, a non-bool success, or a NaN /
            infinite / negative figure (the message names the run: index, run id, task).

    Examples:
        The failed 9-step run is out of the step figures but its cost is paid:

        >>> runs = [RunStats(True, steps=4, cost_usd=0.25), RunStats(True, steps=6, cost_usd=0.5),
        ...         RunStats(False, steps=9, cost_usd=0.25)]
        >>> e = efficiency_summary(runs)
        >>> e.distributions["steps"].mean, e.distributions["steps"].p95, e.cost_per_success
        (5.0, 5.9, 0.5)

    DESIGN.md: "Efficiency ... is computed over successful runs only; cost per successful
    task = total cost / successful tasks" (cost of all runs).
    """
    _validate(runs)
    ok = [r for r in runs if r.success]
    values = {f: [float(getattr(r, f)) for r in ok if getattr(r, f) is not None]
              for f in _FIELDS}
    return summary_from_values(len(runs), len(ok), values, _total_cost(runs), name=name)


def summary_from_values(n_runs: int, n_success: int, values: Mapping[str, Sequence[float]],
                        total_cost_usd: float | None,
                        name: str = "efficiency") -> EfficiencyResult:
    """``efficiency_summary`` from what it needs, already gathered: ``n_runs`` runs (>= 1),
    ``n_success`` of them successful, ``values[figure]`` the successful runs' figures (any
    order; figures as in ``RunStats``), ``total_cost_usd`` the exact total of ALL runs' costs
    (None when some run has none). Streaming and engine aggregation gather these without
    keeping runs; the result equals ``efficiency_summary`` over the same runs.

    Raises ``MetricInputError`` for n_runs < 1 or a non-finite value.
    Source: seed 000 §5.1 (efficiency over successful runs only; cost per successful task).
    """
    if n_runs < 1:
        raise MetricInputError("empty suite: no runs given")
    dists: dict[str, Distribution | None] = {}
    missing: dict[str, int] = {}
    for f in _FIELDS:
        vals = values.get(f) or []
        dists[f] = describe(vals)
        missing[f] = n_success - len(vals)
    total_cost = total_cost_usd
    cps = cost_per_success_from_total(total_cost, n_success)
    rate = n_success / n_runs
    if not n_success:
        reason = f"0/{n_runs} runs succeeded: no efficiency figures; cost per success undefined"
    else:
        bits = [f"{n_success}/{n_runs} runs succeeded"]
        st = dists["steps"]
        if st is not None:
            bits.append(f"steps mean {st.mean:.2f} p95 {st.p95:.2f}")
        lat = dists["latency_ms"]
        if lat is not None:
            bits.append(f"latency p50 {lat.p50:.0f} ms p95 {lat.p95:.0f} ms")
        bits.append("cost per success unknown (a run has no cost)" if cps is None
                    else f"cost per success ${cps:.4f}")
        reason = "; ".join(bits)
    parts: dict[str, Any] = {
        "n_runs": n_runs, "n_success": n_success, "success_rate": rate,
        "total_cost_usd": total_cost, "cost_per_success": cps, "missing": missing,
        **{f: (d.to_dict() if d else None) for f, d in dists.items()},
    }
    return EfficiencyResult(name=name, score=None, reason=reason, parts=parts,
                            n_runs=n_runs, n_success=n_success, success_rate=rate,
                            distributions=dists, total_cost_usd=total_cost,
                            cost_per_success=cps)


def _count(x: Any, what: str, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < minimum:
        raise MetricInputError(f"step_efficiency: {what} must be an int >= {minimum}, got {x!r}")
    return x


def step_efficiency(actual: int, optimal: int | None = None,
                    max_steps: int | None = None) -> float:
    """Step efficiency in [0, 1], the composite score's efficiency part (DESIGN.md "Composite").

    Args:
        actual: steps the run took (int >= 0).
        optimal: the case's ``optimal_steps`` (int >= 0) or None.
        max_steps: the case's ``max_steps`` budget (int >= 1) or None.

    Returns:
        The efficiency in [0, 1].

    Raises:
        MetricInputError: a negative / non-int count (actual, optimal, max_steps).

    Examples:
        >>> step_efficiency(5, optimal=4)      # 4 / 5
        0.8
        >>> step_efficiency(15, max_steps=10)  # 5 steps over a budget of 10
        0.5
        >>> step_efficiency(3, max_steps=10)
        1.0

    - optimum given: min(1, optimal / actual) -- "capped at 1"; actual = 0 gives 1.0
      (nothing can be fewer), and fewer steps than the optimum also gives 1.0;
    - else budget given: 1 - excess / max_steps floored at 0, where
      excess = max(0, actual - max_steps) is the number of steps OVER the budget. Within
      budget the score is 1; it falls linearly and reaches 0 at twice the budget. A budget
      of 0 steps (allowed by the case schema) gives 1.0 for a run of 0 steps and 0.0 for
      any step (the limit of the formula as the budget shrinks to 0);
    - else 1.0 (no reference, no penalty).

    When both are given the optimum decides (DESIGN.md's order). This is the one
    implementation of the policy: ``metrics.composite.efficiency_score`` calls it.
    """
    actual = _count(actual, "actual", 0)
    if optimal is not None:
        optimal = _count(optimal, "optimal", 0)
        return 1.0 if actual == 0 else min(1.0, optimal / actual)
    if max_steps is not None:
        max_steps = _count(max_steps, "max_steps", 0)
        excess = max(0, actual - max_steps)
        if max_steps == 0:
            return 1.0 if actual == 0 else 0.0
        return max(0.0, 1.0 - excess / max_steps)
    return 1.0


def efficiency_by_task(runs: Sequence[RunStats]) -> dict[str, EfficiencyResult]:
    """``efficiency_summary`` per task: ``{task_id: EfficiencyResult}`` over that task's
    runs (same successful-runs-only and cost-of-all-runs policies), tasks in first-seen order.

    Args:
        runs: ``RunStats`` that each carry a ``task_id`` (``run_stats`` reads it from
            ``metadata["case_id"]``).

    Returns:
        ``{task_id: EfficiencyResult}``.

    Raises:
        MetricInputError: an empty list, a run without ``task_id`` (naming it), or anything
            ``efficiency_summary`` rejects.

    Examples:
        >>> by_task = efficiency_by_task([RunStats(True, steps=4, task_id="a"),
        ...                               RunStats(True, steps=6, task_id="b"),
        ...                               RunStats(True, steps=8, task_id="b")])
        >>> {t: e.distributions["steps"].mean for t, e in by_task.items()}
        {'a': 4.0, 'b': 7.0}

    Source: seed 000 §5.1.
    """
    _validate(runs)
    groups: dict[str, list[RunStats]] = {}
    for i, r in enumerate(runs):
        if r.task_id is None:
            raise MetricInputError(f"{_label(i, r)}: no task_id to group by")
        groups.setdefault(r.task_id, []).append(r)
    return {tid: efficiency_summary(rs, name=f"efficiency[{tid}]") for tid, rs in groups.items()}
