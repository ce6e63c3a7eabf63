"""The composite trajectory score of DESIGN.md: outcome, tool selection, arguments, efficiency,
times a rules factor.

``score_trajectory`` combines four component scores in [0, 1] with weights (default outcome
0.50, tool selection 0.25, argument correctness 0.15, efficiency 0.10) and multiplies the sum
by the rules factor: 0 on any critical forbidden-sequence violation, else the share of the
case's applicable precedence rules that hold (1 when none applies). It passes at >= 0.80
unless the case or the caller sets another threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import DatasetError, MetricInputError
from ..model import Case, Trajectory
from .calls import argument_accuracy, require_trajectory, tool_call_prf
from .efficiency import agent_steps, step_efficiency
from .formulas import composite_from, composite_verdict, nearest_simple
from .result import MetricResult
from .sequences import check_forbidden_sequences, ordering_accuracy

COMPONENTS: tuple[str, ...] = ("outcome", "tool_selection", "argument_correctness", "efficiency")
DEFAULT_WEIGHTS: dict[str, float] = {"outcome": 0.50, "tool_selection": 0.25,
                                     "argument_correctness": 0.15, "efficiency": 0.10}
DEFAULT_THRESHOLD = 0.80
_nearest_simple = nearest_simple  # the old private name (formulas.nearest_simple)


_LABEL = {"outcome": "outcome", "tool_selection": "tool selection",
          "argument_correctness": "argument correctness", "efficiency": "efficiency"}


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def checked_threshold(thr: Any) -> float | None:
    """A composite pass mark, defaulted and checked: the one rule every path reads.

    Args:
        thr: the threshold given (the caller's, else the case's); None for the default.

    Returns:
        ``DEFAULT_THRESHOLD`` for None; ``thr`` itself (not converted) when it is a finite
        number, not a bool, in [0, 1]; None for anything else (``score_trajectory`` raises,
        a fast route leaves the case to the general path, which raises).

    Raises:
        Nothing.
    """
    if thr is None:
        return DEFAULT_THRESHOLD
    return thr if _is_num(thr) and 0.0 <= thr <= 1.0 else None


def check_weights(weights: Mapping[str, Any] | None) -> dict[str, float]:
    """Validate composite weights; None -> ``DEFAULT_WEIGHTS``.

    Given weights replace the defaults entirely: a component left out has weight 0. Keys
    must be among ``COMPONENTS``, values finite and >= 0, and the sum 1 (within 1e-9).
    Raises MetricInputError naming the offending key or the sum.
    """
    if weights is None:
        return dict(DEFAULT_WEIGHTS)
    if not isinstance(weights, Mapping):
        raise MetricInputError(f"weights must be a mapping of {', '.join(COMPONENTS)}, "
                               f"got {type(weights).__name__}")
    out = dict.fromkeys(COMPONENTS, 0.0)
    for k, v in weights.items():
        if k not in COMPONENTS:
            raise MetricInputError(f"weights: unknown component {k!r} (known: {', '.join(COMPONENTS)})")
        if not _is_num(v) or v < 0:
            raise MetricInputError(f"weights[{k!r}]: must be a finite number >= 0, got {v!r}")
        out[k] = float(v)
    total = sum(out.values())
    if not math.isclose(total, 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise MetricInputError(f"weights must sum to 1, got {total!r}")
    return out


def count_steps(traj: Trajectory) -> int:
    """Agent steps for efficiency: ``metrics.efficiency.agent_steps`` (agent turns)."""
    return agent_steps(traj)


def _case_int(case: Case, field: str) -> int | None:
    v = getattr(case, field)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise MetricInputError(f"case {case.id!r}: {field} must be an int >= 0, got {v!r}")
    return v


def efficiency_score(traj: Trajectory, case: Case) -> tuple[float, str]:
    """Efficiency component in [0, 1] and how it was computed (DESIGN.md "Policies: Composite").

    Args:
        traj: the run (steps per ``count_steps``: agent turns).
        case: its ``optimal_steps`` and ``max_steps``.

    Returns:
        ``(score, how)``: the score of ``metrics.efficiency.step_efficiency``, the one place
        the policy is written, and a short text saying how it was computed.

    Raises:
        MetricInputError: a negative or non-int bound (naming the case).

    Examples:
        >>> from trajcheck.model import Case, ToolCall
        >>> from trajcheck.metrics.calls import as_trajectory
        >>> run = as_trajectory([ToolCall("get_order"), ToolCall("refund")])
        >>> efficiency_score(run, Case(id="c1", input="x", optimal_steps=1))
        (0.5, 'optimal 1 / actual 2 steps')
    """
    actual = count_steps(traj)
    opt = _case_int(case, "optimal_steps")
    mx = _case_int(case, "max_steps")
    val = step_efficiency(actual, opt, mx)
    if opt is not None:
        return val, f"optimal {opt} / actual {actual} steps"
    if mx is not None:
        return val, f"{actual} steps, max {mx} (excess {max(0, actual - mx)})"
    return val, f"{actual} steps, no step budget in the case"


def _outcome_value(r: Any, where: str) -> float | None:
    if not isinstance(r, MetricResult):
        raise MetricInputError(f"{where} must be a MetricResult, got {type(r).__name__}")
    if r.passed is not None:
        return 1.0 if r.passed else 0.0
    if r.score is None:
        return None
    if not _is_num(r.score) or not 0.0 <= r.score <= 1.0:
        raise MetricInputError(f"{where}.score must be in [0, 1], got {r.score!r}")
    return float(r.score)


def _resolve_outcome(traj: Trajectory, case: Case, outcome: MetricResult | None,
                     context: Any) -> tuple[float | None, str, str | None]:
    """(value or None, source, reason of the outcome result)."""
    if outcome is not None:
        return _outcome_value(outcome, "outcome"), "given", outcome.reason
    from .outcome_checks import LAST_OBSERVATION_KEY, STEP_BUDGET_KEY

    if (case.expected_final_state is None and not case.response_must_include
            and not case.expected_calls
            and not any((case.metadata or {}).get(k) is not None for k in (LAST_OBSERVATION_KEY, STEP_BUDGET_KEY))):
        return None, "not applicable: the case states no expected calls, final state or response", None
    from .outcome import outcome_from_calls
    from .outcome_checks import with_case_outcome_checks

    r = with_case_outcome_checks(outcome_from_calls(traj, case, context=context), traj, case)
    return _outcome_value(r, "outcome_from_calls(...)"), "outcome_from_calls", r.reason


def score_trajectory(traj: Trajectory, case: Case, *, outcome: MetricResult | None = None,
                     context: Any = None, weights: Mapping[str, float] | None = None,
                     threshold: float | None = None, args_mode: str | None = None) -> MetricResult:
    """The composite trajectory score (DESIGN.md "Composite score" and "Policies: Composite").

    Args:
        traj: the run.
        case: the dataset row.
        outcome: a task-success result (``metrics.outcome.task_success`` or any
            ``MetricResult``): ``passed`` True/False gives 1/0; with ``passed`` None its
            ``score`` is used.
        context: a ``matchers.MatchContext`` for the matching.
        weights: ``{outcome, tool_selection, argument_correctness, efficiency}`` summing to 1
            (see ``check_weights``); default ``case.metadata["scoring_weights"]`` (seed 001's
            per-case weights, ``eval_case.case_from_eval_case``), else 0.50 / 0.25 / 0.15 / 0.10.
        threshold: pass mark in [0, 1]; default ``case.threshold``, else 0.80.
        args_mode: overrides the argument mode of every expected call.

    Returns:
        ``MetricResult`` named ``composite``: ``score`` in [0, 1] (or None), ``passed`` =
        score >= threshold (False on a critical violation or when a precedence rule is
        broken and the factored score falls under the threshold), ``parts`` with each
        component, ``rules`` (the factor, or None), ``weights``, ``effective_weights``,
        ``threshold``, ``outcome_source``, ``actual_steps``, ``details`` (each component's
        reason and the rules' reason), ``forbidden`` (``critical``, ``warning``,
        ``violations``), ``precedence`` (held, violated, applicable and per-rule rows of
        ordering accuracy) and ``raw_score`` (the weighted sum before the factor); a
        one-line reason naming the broken rule or the weakest part (``"all parts 1.000"``
        when every applicable part is 1.0).

    Raises:
        MetricInputError: not a Trajectory (a list of ToolCall has no steps, results or
            response: the message says so)/Case, bad weights, threshold or step bounds, an
            outcome that is not a MetricResult, a malformed precedence rule (names the case).
        DatasetError: a malformed forbidden rule (names the case).
        MatcherError: from the matching (SchemaError for a bad schema matcher).

    Examples:
        The lookup is optional, so tool selection, arguments and outcome are all 1; two agent
        turns against an optimum of one make efficiency 1/2:
        0.50 + 0.25 + 0.15 + 0.10 * 0.5 = 0.95.

        >>> from trajcheck.model import Case, ToolCall
        >>> from trajcheck.metrics.calls import as_trajectory
        >>> case = Case(id="c1", input="refund order 7", optional_calls=["get_order"],
        ...             optimal_steps=1, expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> run = as_trajectory([ToolCall("get_order", {"order": 7}), ToolCall("refund", {"order": 7})])
        >>> r = score_trajectory(run, case)
        >>> r.score, r.parts["efficiency"], r.passed
        (0.95, 0.5, True)

    Components, each in [0, 1]:
        * outcome: from ``outcome``; when None, judged from the calls by
          ``metrics.outcome.outcome_from_calls`` if the case states any expected call, final
          state or required response (so a run that made the wrong calls cannot pass on
          selection and efficiency alone); otherwise not applicable.
        * tool_selection: F1 of ``metrics.calls.tool_call_prf`` with ``args_mode="ignore"``
          (tool names under maximum one-to-one matching, optional calls and retries as
          DESIGN.md says; 1.0 when nothing was expected and nothing counted was called).
        * argument_correctness: ``metrics.calls.argument_accuracy``: per-argument accuracy
          (seed 000 §2.2: expected arguments matched / expected arguments per called
          expected call, averaged; seed 001's ``arg_correctness`` is the same fraction of
          argument checks); not applicable when no expected tool was called.
        * efficiency: ``efficiency_score`` (steps = ``count_steps``).

    A component that is not applicable is left out and the remaining weights are
    renormalised to sum to 1 (trajcheck policy; ``parts["effective_weights"]`` shows them).
    With no applicable weighted component the score is None. The score is not rounded:
    the parts are ratios of small counts and the weights short decimals, so the exact
    score is a fraction with a small denominator, and the score returned is the float
    nearest to it (``_nearest_simple``), not the binary sum's noise: 0.25*(1/3) + 0.15 +
    0.1*(2/3) = 0.8 reaches a 0.80 threshold (plain float arithmetic gives
    0.7999999999999999), and 11/12 is 0.9166666666666666. A host's own
    ``score >= threshold`` therefore agrees with ``passed``.
    Rules factor (trajcheck policy, DESIGN.md "Policies: Composite"): the weighted sum is
    multiplied by ``parts["rules"]``, the case's rules as one factor in [0, 1]:
        * 0.0 on any critical violation of ``case.forbidden_sequences`` or of
          ``case.forbidden_calls`` (each pattern a critical "never allowed" rule), as seed
          001's "any forbidden sequence violation -> instant score of 0";
        * else ``metrics.sequences.ordering_accuracy`` over ``case.precedence`` (held /
          applicable rules, seed 000 §2.4), so a refund e-mail sent before the refund
          (``[refund, send_email]`` broken) scales the score by 0 and one rule broken of
          four by 0.75;
        * None (factor 1, no effect) when the case has no applicable precedence rule.
    Seed 001 puts its ``tool_order`` checks into tool selection; trajcheck keeps tool
    selection an F1 of names and scores order here instead, so a run that keeps every
    rule scores exactly the seed's weighted sum. Forbidden-sequence warnings are listed in
    ``parts["forbidden"]`` and do not change the score (seed 001 reports them apart).
    """
    require_trajectory(traj, what="score_trajectory",
                       needs="the agent's steps, tool results and final response")
    if not isinstance(case, Case):
        raise MetricInputError(f"score_trajectory: case must be a Case, got {type(case).__name__}")
    if weights is None and (type(case.metadata) is dict or isinstance(case.metadata, Mapping)):
        weights = case.metadata.get("scoring_weights")  # seed 001's per-case weights
    w = check_weights(weights)
    given = threshold if threshold is not None else case.threshold
    thr = checked_threshold(given)
    if thr is None:
        raise MetricInputError(f"case {case.id!r}: threshold must be a number in [0, 1], got {given!r}")

    rules: list[dict[str, Any]] = [dict(r) for r in case.forbidden_sequences]
    for i, pat in enumerate(case.forbidden_calls):
        rules.append({"tool": pat, "severity": "critical", "name": f"forbidden_calls[{i}]"})
    try:
        forb = check_forbidden_sequences(traj, rules)
    except DatasetError as e:
        raise DatasetError(f"case {case.id!r}: {e}") from e
    try:
        order = ordering_accuracy(traj, case.precedence)
    except MetricInputError as e:
        raise MetricInputError(f"case {case.id!r}: {e}") from e

    values: dict[str, float | None] = {}
    details: dict[str, str] = {}
    values["outcome"], source, oreason = _resolve_outcome(traj, case, outcome, context)
    details["outcome"] = oreason or source
    sel = tool_call_prf(traj, case, args_mode="ignore", context=context)
    values["tool_selection"] = sel.f1
    details["tool_selection"] = sel.reason
    arg = argument_accuracy(traj, case, args_mode=args_mode, context=context)
    values["argument_correctness"] = arg.score
    details["argument_correctness"] = arg.reason
    values["efficiency"], details["efficiency"] = efficiency_score(traj, case)

    applicable = [k for k in COMPONENTS if values[k] is not None and w[k] > 0]
    raw, eff = composite_from([values[k] for k in COMPONENTS], [w[k] for k in COMPONENTS])
    eff_w = dict(zip(COMPONENTS, eff))

    # the rules factor: critical forbidden violation -> 0, else the share of applicable
    # precedence rules that hold; None (no effect) when no rule applies
    factor: float | None = 0.0 if forb.parts["critical"] else order.score
    details["rules"] = forb.reason if forb.parts["critical"] else order.reason
    parts: dict[str, Any] = dict(values)
    parts.update({"rules": factor, "weights": w, "effective_weights": eff_w, "threshold": thr,
                  "outcome_source": source, "actual_steps": count_steps(traj),
                  "step_unit": "agent turns", "details": details,
                  "forbidden": {k: forb.parts[k] for k in ("critical", "warning", "violations")},
                  "precedence": {k: order.parts[k] for k in ("held", "violated", "applicable", "rules")},
                  "raw_score": raw})
    warn = forb.parts["warning"]
    warn_txt = f"; {warn} warning{'s' if warn != 1 else ''}" if warn else ""
    critical = bool(forb.parts["critical"])
    score, passed = composite_verdict(
        None if raw is None or critical else raw if factor is None else nearest_simple(raw * factor),
        thr, critical)
    if critical:
        v = next(x for x in forb.parts["violations"] if x["severity"] == "critical")
        reason = (f"composite 0 (fail): critical violation {v['rule']} at call {v['call_index']} "
                  f"{v['tool']} ({v['why']}){warn_txt}")
        return MetricResult("composite", score, reason, parts, passed)
    if score is None or raw is None:
        return MetricResult("composite", None,
                            "not applicable: no weighted component applies" + warn_txt, parts, None)
    if order.parts["violated"]:
        bad = next(x for x in order.parts["rules"] if x["status"] == "violated")
        reason = (f"composite {score:.3f} {'>=' if passed else '<'} {thr:.2f} "
                  f"({'pass' if passed else 'fail'}): weighted parts {raw:.3f} x rules {factor:.3f} "
                  f"({order.parts['held']}/{order.parts['applicable']} precedence rules hold; "
                  f"{bad['before']} before {bad['after']} broken: {bad['why']}){warn_txt}")
        return MetricResult("composite", score, reason, parts, passed)
    weakest = min(applicable, key=lambda k: (float(values[k] or 0.0), COMPONENTS.index(k)))
    dropped = [_LABEL[k] for k in COMPONENTS if w[k] > 0 and values[k] is None]
    drop_txt = f"; not applicable: {', '.join(dropped)}" if dropped else ""
    low = float(values[weakest] or 0.0)
    weak_txt = ("all parts 1.000" if low >= 1.0
                else f"weakest: {_LABEL[weakest]} {low:.3f}")
    reason = (f"composite {score:.3f} {'>=' if passed else '<'} {thr:.2f} "
              f"({'pass' if passed else 'fail'}); {weak_txt}{drop_txt}{warn_txt}")
    return MetricResult("composite", score, reason, parts, passed)


__all__ = ["COMPONENTS", "DEFAULT_THRESHOLD", "DEFAULT_WEIGHTS", "check_weights", "checked_threshold",
           "count_steps", "efficiency_score", "score_trajectory"]
