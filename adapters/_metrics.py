"""The one place adapters call trajcheck's metrics: ``compute(kind, traj, case, ...)``.

Every adapter (DeepEval, RAGAS, LangSmith) names the metric it exposes by a *kind* and gets
back the core's ``MetricResult`` unchanged; adapters copy ``score``, ``reason`` and
``passed`` into their framework's result and never recompute anything. Kinds:

==================== ====================================================================
``tool_call_f1``     ``metrics.calls.tool_call_prf`` (score = F1; precision/recall in the
                     result): maximum one-to-one matching, duplicates counted, optional
                     calls and retried failures not counted (DESIGN.md "Semantics").
``trajectory_match`` ``metrics.trajectory.trajectory_match`` with ``mode``/``dialect``.
``argument_correctness`` ``metrics.calls.argument_accuracy``.
``schema_validity``  ``metrics.calls.schema_errors`` (the case's ``tools`` definitions).
``forbidden``        ``metrics.sequences.check_forbidden_sequences`` over the case's
                     ``forbidden_sequences`` plus one never-allowed rule per
                     ``forbidden_calls`` entry (``{"tool": name}``, severity critical).
``final_state``      ``metrics.outcome.check_final_state(before, after, expected)``.
``composite``        ``metrics.composite.score_trajectory``; when before/after states are
                     given the outcome is ``metrics.outcome.task_success`` of the final
                     state (and ``response_includes`` when the case requires text).
==================== ====================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trajcheck.errors import DatasetError, MetricInputError
from trajcheck.matchers import MatchContext
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.metrics.result import MetricResult
from trajcheck.metrics.trajectory import trajectory_match
from trajcheck.model import Case, Trajectory

KINDS: tuple[str, ...] = (
    "tool_call_f1", "trajectory_match", "argument_correctness", "schema_validity",
    "forbidden", "final_state", "composite",
)


def match_context(case: Case, semantic_scorer: Callable[[str, str], float] | None = None,
                  judge: Callable[[str, Any, Any], bool] | None = None) -> Any:
    """A ``matchers.MatchContext`` for ``case`` (its input and user) and the given backends."""
    inp = case.input if isinstance(case.input, str) else None
    return MatchContext(case_input=inp, user=case.user, semantic_scorer=semantic_scorer, judge=judge)


def forbidden_rules(case: Case) -> list[dict[str, Any]]:
    """The case's ``forbidden_sequences`` followed by ``{"tool": name}`` (never allowed,
    critical) for each ``forbidden_calls`` entry, in the rule dict form
    ``metrics.sequences.check_forbidden_sequences`` reads."""
    rules = [dict(r) for r in case.forbidden_sequences]
    rules += [{"tool": name, "name": f"forbidden_calls[{i}]"} for i, name in enumerate(case.forbidden_calls)]
    return rules


def final_state_result(case: Case, before: Any, after: Any,
                       ignore: Sequence[str] | None = None) -> MetricResult:
    """``check_final_state(before, after, case.expected_final_state)``; raises
    ``DatasetError`` naming the case when a state or the expectation is missing."""
    from trajcheck.metrics.outcome import check_final_state

    if case.expected_final_state is None:
        raise DatasetError(f"case {case.id!r}: no expected_final_state to check")
    for label, st in (("before_state", before), ("after_state", after)):
        if not isinstance(st, Mapping):
            raise DatasetError(f"case {case.id!r}: {label} must be a dict of table -> rows, "
                               f"got {type(st).__name__}")
    if ignore is None:
        return check_final_state(before, after, case.expected_final_state)
    return check_final_state(before, after, case.expected_final_state, ignore=tuple(ignore))


def compute(kind: str, traj: Trajectory, case: Case, *, mode: str | None = None,
            dialect: str | None = None, args_mode: str | None = None,
            semantic_scorer: Callable[[str, str], float] | None = None,
            judge: Callable[[str, Any, Any], bool] | None = None,
            weights: Mapping[str, float] | None = None,
            before_state: Any = None, after_state: Any = None,
            ignore: Sequence[str] | None = None) -> MetricResult:
    """Run the core metric ``kind`` (see the module table) on ``(traj, case)``.

    ``mode``/``dialect`` apply to ``trajectory_match`` (default mode ``superset``; a
    framework's mode name with its dialect is normalized by ``trajectory_match`` itself);
    ``args_mode`` to every matching metric (None: the case's, then ``exact_keys``);
    ``before_state``/``after_state`` to ``final_state`` and ``composite``.
    Raises ``MetricInputError`` for an unknown kind; the core's own errors pass through.
    """
    ctx = match_context(case, semantic_scorer, judge)
    am = args_mode if args_mode is not None else case.args_mode
    if kind == "tool_call_f1":
        return tool_call_prf(traj, case, args_mode=am, context=ctx)
    if kind == "trajectory_match":
        return trajectory_match(traj, case, mode or "superset", dialect=dialect,
                                args_mode=args_mode, context=ctx)
    if kind == "argument_correctness":
        from trajcheck.metrics.calls import argument_accuracy

        return argument_accuracy(traj, case, args_mode=am, context=ctx)
    if kind == "schema_validity":
        from trajcheck.metrics.calls import schema_errors

        if not case.tools:
            raise DatasetError(f"case {case.id!r}: schema validity needs tool definitions ('tools')")
        return schema_errors(traj, list(case.tools))
    if kind == "forbidden":
        from trajcheck.metrics.sequences import check_forbidden_sequences

        return check_forbidden_sequences(traj, forbidden_rules(case))
    if kind == "final_state":
        return final_state_result(case, before_state, after_state, ignore)
    if kind == "composite":
        from trajcheck.metrics.composite import score_trajectory

        outcome = None
        if before_state is not None or after_state is not None:
            from trajcheck.metrics.outcome import response_includes, task_success

            resp = (response_includes(traj, case.response_must_include)
                    if case.response_must_include else None)
            outcome = task_success(final_state_result(case, before_state, after_state, ignore), resp)
        return score_trajectory(traj, case, outcome=outcome, context=ctx, args_mode=args_mode,
                                weights=dict(weights) if weights is not None else None)
    raise MetricInputError(f"unknown trajcheck metric kind {kind!r} (known: {', '.join(KINDS)})")
