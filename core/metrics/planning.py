"""Planning metrics for plan-then-execute agents that emit a plan artefact.

Pure standard library, deterministic. Two metrics:

- ``plan_coverage(plan, subgoals)``: the fraction of the case's labelled sub-goals that the
  plan covers, each plan step covering at most one sub-goal (maximum one-to-one matching);
- ``plan_adherence(plan, traj)``: the fraction of plan steps the agent then executed, in the
  plan's order (longest common subsequence of plan steps and tool calls).

These are trajcheck's deterministic counterparts of the LLM-judged plan metrics of the
field: DeepEval's ``PlanQualityMetric`` (is the plan complete for the task?) and
``PlanAdherenceMetric`` (did execution follow the plan?), and the plan / sub-goal progress
measures of agent benchmarks (e.g. AgentBoard's progress rate over labelled sub-goals, Ma et
al. 2024, arXiv 2401.13178). The labels live in the case, so no judge is needed.

A plan step (and a sub-goal) is one of:

- a string: a tool name (``"search_flights"``), or free text (``"find a flight to Paris"``);
- a mapping ``{"name": tool, "args": {...}}`` (``args`` optional; ``"tool"`` is accepted
  for ``"name"``, and ``"description"``/``"text"``/``"content"`` hold free text).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from ..matchers import exact_equal
from ..matching import max_matching
from ..model import ToolCall, Trajectory
from .result import MetricResult

__all__ = [
    "PlanStep",
    "parse_plan_step",
    "args_agree",
    "PlanCoverageResult",
    "plan_coverage",
    "PlanAdherenceResult",
    "plan_adherence",
]


@dataclass(frozen=True)
class PlanStep:
    """A normalised plan step or sub-goal: a tool ``name`` (or None), an ``args`` constraint
    (None = no constraint) and free ``text`` (or None)."""

    name: str | None = None
    args: dict[str, Any] | None = None
    text: str | None = None

    def label(self) -> str:
        """A short human label."""
        if self.name is not None:
            return self.name if self.args is None else f"{self.name}({self.args})"
        return repr(self.text)


def parse_plan_step(item: Any, where: str = "plan step") -> PlanStep:
    """Normalise a plan step / sub-goal (see the module doc) to a ``PlanStep``.

    A string without whitespace is a tool name (and also its own text); a string with
    whitespace is free text. Raises ``MetricInputError`` (naming ``where``) for other shapes,
    an empty string, a non-string name, or non-mapping ``args``.
    """
    if isinstance(item, PlanStep):
        return item
    if isinstance(item, str):
        s = item.strip()
        if not s:
            raise MetricInputError(f"{where}: empty string")
        if re.search(r"\s", s):
            return PlanStep(text=s)
        return PlanStep(name=s, text=s)
    if isinstance(item, Mapping):
        name = item.get("name", item.get("tool"))
        text = item.get("description", item.get("text", item.get("content")))
        args = item.get("args", item.get("arguments"))
        if name is not None and not isinstance(name, str):
            raise MetricInputError(f"{where}: name must be a string, got {name!r}")
        if text is not None and not isinstance(text, str):
            raise MetricInputError(f"{where}: description must be a string, got {text!r}")
        if args is not None and not isinstance(args, Mapping):
            raise MetricInputError(f"{where}: args must be an object, got {args!r}")
        if name is None and not text:
            raise MetricInputError(f"{where}: needs a tool name or a description, got {item!r}")
        return PlanStep(name=name, args=dict(args) if args is not None else None, text=text)
    raise MetricInputError(
        f"{where}: expected a string or {{name, args}} object, got {type(item).__name__}")


def args_agree(constraint: Mapping[str, Any] | None, args: Mapping[str, Any] | None) -> bool:
    """True when every key of ``constraint`` is in ``args`` with an exactly equal value
    (type-aware, DESIGN.md ``exact``: ``matchers.exact_equal``); extra keys in ``args`` are
    allowed. A None constraint
    agrees with anything except unparsed arguments (``args`` None never matches, DESIGN.md)."""
    if args is None:
        return False
    if constraint is None:
        return True
    return all(k in args and exact_equal(v, args[k]) for k, v in constraint.items())


def _norm_text(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).casefold()
    return " ".join(re.findall(r"\w+", s))


def _contains_words(hay: str, needle: str) -> bool:
    h, n = _norm_text(hay), _norm_text(needle)
    return bool(n) and f" {n} " in f" {h} "


def _step_covers(step: PlanStep, goal: PlanStep) -> bool:
    """Does plan step ``step`` cover sub-goal ``goal``? (definition in ``plan_coverage``)"""
    if goal.name is not None and step.name == goal.name:
        return goal.args is None or (step.args is not None and args_agree(goal.args, step.args))
    if goal.args is not None:
        return False  # a {name, args} sub-goal needs a step naming that tool
    needle = goal.text or goal.name
    if not needle:
        return False
    hay = " ".join(x for x in (step.name, step.text) if x)
    return _contains_words(hay, needle)


@dataclass(frozen=True)
class PlanCoverageResult(MetricResult):
    """Plan coverage: ``covered`` / ``n_subgoals`` (= score, None when no sub-goals);
    ``missing`` lists the uncovered sub-goals' labels; ``pairs`` the (subgoal, plan step)
    index pairs of the matching."""

    covered: int = 0
    n_subgoals: int = 0
    missing: tuple[str, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(covered=self.covered, n_subgoals=self.n_subgoals, missing=list(self.missing),
                 pairs=[list(p) for p in self.pairs])
        return d


def _plan_list(plan: Any, what: str) -> list[Any]:
    if isinstance(plan, Mapping) and isinstance(plan.get("steps"), Sequence):
        plan = plan["steps"]
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence):
        raise MetricInputError(f"{what} must be a list of steps, got {type(plan).__name__}")
    return list(plan)


def plan_coverage(plan: Sequence[Any] | Mapping[str, Any], subgoals: Sequence[Any],
                  *, covers: Callable[[PlanStep, PlanStep], bool] | None = None,
                  name: str = "plan_coverage") -> PlanCoverageResult:
    """Fraction of the case's labelled sub-goals that the plan artefact covers.

    ``plan``: the agent's plan, a list of plan steps (or ``{"steps": [...]}``);
    ``subgoals``: the case's labelled sub-goals (same step shapes, module doc).
    A plan step covers a sub-goal when:
      - the sub-goal names a tool and the step names the same tool: covered when the
        sub-goal has no ``args``, or the step's args contain the sub-goal's args with
        exactly equal values (type-aware, DESIGN.md ``exact``);
      - otherwise, a sub-goal with ``args`` is not covered; one without is covered when its
        text (its description, else its name) occurs as whole words, contiguous and in
        order, in the step's name + description (NFKC, casefolded, punctuation ignored) --
        so the sub-goal "refund" is covered by the step "issue a refund".
    ``covers`` replaces this rule (e.g. an embedding or judge comparison).
    Each plan step covers at most one sub-goal and vice versa; the count is a maximum
    one-to-one matching (``matching.max_matching``), so two identical sub-goals need two
    plan steps.
    Score = covered / len(subgoals) in [0, 1], or None (not applicable) with no sub-goals.
    Source: trajcheck's deterministic form of plan completeness (DeepEval PlanQualityMetric,
    LLM-judged) and of sub-goal progress (AgentBoard, arXiv 2401.13178).

    Raises ``MetricInputError`` for a malformed plan or sub-goal (naming its index).
    """
    steps = [parse_plan_step(s, f"plan step {i}") for i, s in enumerate(_plan_list(plan, "plan"))]
    goals = [parse_plan_step(g, f"subgoal {i}")
             for i, g in enumerate(_plan_list(subgoals, "subgoals"))]
    rule = covers or _step_covers
    if not goals:
        return PlanCoverageResult(name=name, score=None, reason="no labelled sub-goals",
                                  parts={"covered": 0, "n_subgoals": 0})
    adj = [[j for j, s in enumerate(steps) if rule(s, g)] for g in goals]
    match = max_matching(adj, len(steps))
    pairs = tuple((i, j) for i, j in enumerate(match) if j != -1)
    missing = tuple(goals[i].label() for i, j in enumerate(match) if j == -1)
    cov = len(pairs) / len(goals)
    reason = f"plan covers {len(pairs)}/{len(goals)} sub-goals"
    if missing:
        reason += "; missing " + ", ".join(missing)
    return PlanCoverageResult(name=name, score=cov, reason=reason,
                              parts={"covered": len(pairs), "n_subgoals": len(goals),
                                     "missing": list(missing),
                                     "pairs": [list(p) for p in pairs]},
                              covered=len(pairs), n_subgoals=len(goals), missing=missing,
                              pairs=pairs)


@dataclass(frozen=True)
class PlanAdherenceResult(MetricResult):
    """Plan adherence: ``executed_in_order`` / ``n_plan_steps`` (= score, None for an empty
    plan). ``executed_any_order``: steps executed ignoring order (one-to-one);
    ``not_executed``: labels of plan steps with no call in the in-order alignment;
    ``off_plan_calls``: indices of tool calls that matched no plan step at all."""

    executed_in_order: int = 0
    executed_any_order: int = 0
    n_plan_steps: int = 0
    not_executed: tuple[str, ...] = ()
    off_plan_calls: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(executed_in_order=self.executed_in_order,
                 executed_any_order=self.executed_any_order, n_plan_steps=self.n_plan_steps,
                 not_executed=list(self.not_executed), off_plan_calls=list(self.off_plan_calls))
        return d


def _call_executes(step: PlanStep, call: ToolCall) -> bool:
    if step.name is None:
        return False
    return call.name == step.name and args_agree(step.args, call.args)


def plan_adherence(plan: Sequence[Any] | Mapping[str, Any],
                   traj: Trajectory | Sequence[ToolCall],
                   *, name: str = "plan_adherence") -> PlanAdherenceResult:
    """Fraction of plan steps executed, in the plan's order, by the run's tool calls.

    ``plan``: plan steps given as tool names or ``{name, args}`` (free-text-only steps cannot
    be executed by a call and count as not executed); ``traj``: a ``Trajectory`` (its
    ``tool_calls()``) or a list of ``ToolCall``.
    A call executes a step when the names are equal and the call's arguments contain the
    step's ``args`` with exactly equal values (type-aware; extra arguments allowed; unparsed
    arguments never match, DESIGN.md). Every call counts, retries included (they do not
    break the order: extra calls between plan steps are allowed).
    executed_in_order = the length of the longest common subsequence of plan steps and calls
    under that relation (each call executes at most one step, order preserved on both
    sides); score = executed_in_order / len(plan), in [0, 1]; None for an empty plan.
    ``executed_any_order`` (maximum one-to-one matching, order ignored) >= the in-order count
    and separates "skipped" from "reordered". ``off_plan_calls`` lists calls matching no step.
    Source: trajcheck's deterministic form of DeepEval's PlanAdherenceMetric (LLM-judged);
    LCS alignment as in the in-order trajectory match (DESIGN.md ``in_order``).

    Raises ``MetricInputError`` for a malformed plan step (naming its index) or a ``traj``
    that is neither a Trajectory nor a list of ToolCall.
    """
    steps = [parse_plan_step(s, f"plan step {i}") for i, s in enumerate(_plan_list(plan, "plan"))]
    from .calls import calls_and_retries

    calls, _retried = calls_and_retries(traj, what="plan_adherence")  # every call counts
    if not steps:
        return PlanAdherenceResult(name=name, score=None, reason="empty plan",
                                   parts={"n_plan_steps": 0})
    n, m = len(steps), len(calls)
    ok = [[_call_executes(s, c) for c in calls] for s in steps]
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(dp[i + 1][j], dp[i][j + 1])
            if ok[i][j]:
                best = max(best, 1 + dp[i + 1][j + 1])
            dp[i][j] = best
    # recover which plan steps the in-order alignment executed
    i = j = 0
    done = [False] * n
    while i < n and j < m:
        if ok[i][j] and dp[i][j] == 1 + dp[i + 1][j + 1]:
            done[i] = True
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    in_order = dp[0][0]
    any_order = sum(1 for x in max_matching(
        [[j for j in range(m) if ok[i][j]] for i in range(n)], m) if x != -1)
    not_executed = tuple(steps[i].label() for i in range(n) if not done[i])
    off_plan = tuple(j for j in range(m) if not any(ok[i][j] for i in range(n)))
    score = in_order / n
    reason = f"{in_order}/{n} plan steps executed in order"
    if any_order > in_order:
        reason += f" ({any_order} ignoring order)"
    if not_executed:
        reason += "; not executed in order: " + ", ".join(not_executed)
    if off_plan:
        reason += f"; {len(off_plan)} off-plan call(s)"
    return PlanAdherenceResult(
        name=name, score=score, reason=reason,
        parts={"executed_in_order": in_order, "executed_any_order": any_order,
               "n_plan_steps": n, "not_executed": list(not_executed),
               "off_plan_calls": list(off_plan)},
        executed_in_order=in_order, executed_any_order=any_order, n_plan_steps=n,
        not_executed=not_executed, off_plan_calls=off_plan)
