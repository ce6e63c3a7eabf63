"""Recovery metrics over fault-injected runs: recovery rate, false success, retry budget.

DESIGN.md policy ("Error recovery"): rates are over fault-injected runs only. A false
success is a final response that claims the action happened while the task failed (the
final state or the action's successful call is missing); a truthful claim after a
recovered retry is not. The retry budget is checked against the longest run of same-tool
calls after an error. A recovered error does not fail the outcome.

A run is a ``RecoveryRun(trajectory, task_success, fault_injected=True)``; plain
``(trajectory, task_success)`` pairs are accepted and count as fault-injected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from ..model import ToolCall, Trajectory
from .calls import require_trajectory
from .formulas import unrecovered_failures
from .result import MetricResult

__all__ = [
    "ClaimDetector",
    "RecoveryRun",
    "false_success_rate",
    "is_false_success",
    "longest_retry_run",
    "max_retries_exceeded",
    "recovery_rate",
]


@dataclass(frozen=True)
class ClaimDetector:
    """Detects a final response that claims an action happened.

    A thin, configurable front for ``trajcheck.metrics.sequences.claims_success`` (the one
    claim heuristic trajcheck has): a response claims success when some sentence matches a
    ``claim`` pattern and no ``negation`` pattern ("the ticket could not be created" is not
    a claim). Patterns are regular expressions searched case-insensitively; empty tuples
    mean the defaults ``CLAIM_PATTERN`` / ``NEGATION_PATTERN`` of that module.
    ``extra_claims`` / ``extra_negations`` are added to those (regexes from data, on RE2:
    a case's ``claim_patterns`` / ``negation_patterns``, see ``for_case``).
    """

    claim: tuple[str, ...] = ()
    negation: tuple[str, ...] = ()
    extra_claims: tuple[str, ...] = ()
    extra_negations: tuple[str, ...] = ()

    @classmethod
    def for_case(cls, case: Any) -> ClaimDetector:
        """The default cues plus the case's ``claim_patterns`` and ``negation_patterns``
        (regexes from data, matched on RE2; docs/false-success.md).

        Args:
            case: a ``Case`` (or None: the defaults alone).

        Returns:
            The detector scoring uses for that case's runs.
        """
        if case is None:
            return cls()
        return cls(extra_claims=tuple(case.claim_patterns), extra_negations=tuple(case.negation_patterns))

    def __call__(self, text: str | None) -> bool:
        """True when ``text`` claims an action happened; None or empty text claims nothing."""
        from .sequences import claims_success

        return claims_success(
            text,
            pattern="|".join(f"(?:{p})" for p in self.claim) or None,
            negation="|".join(f"(?:{p})" for p in self.negation) or None,
            extra_claims=self.extra_claims, extra_negations=self.extra_negations,
        )


@dataclass(frozen=True)
class RecoveryRun:
    """One run for the recovery metrics: its trajectory, whether the task succeeded (from
    ``task_success``/``check_final_state``/``outcome_from_calls``), and whether faults were
    injected into it (runs with ``fault_injected`` False are left out of every rate), and
    ``state_missing``: True when the expected final-state rows are missing (None: unknown)."""

    trajectory: Trajectory
    task_success: bool
    fault_injected: bool = True
    state_missing: bool | None = None


def _runs(runs: Iterable[Any]) -> list[RecoveryRun]:
    out: list[RecoveryRun] = []
    for i, r in enumerate(runs):
        if isinstance(r, RecoveryRun):
            run = r
        elif isinstance(r, (tuple, list)) and len(r) in (2, 3, 4):
            run = RecoveryRun(*r)
        else:
            raise MetricInputError(f"run {i}: expected a RecoveryRun or (trajectory, task_success), "
                                   f"got {type(r).__name__}")
        require_trajectory(run.trajectory, what=f"run {i}",
                           needs="the tool results and the final response")
        if not isinstance(run.task_success, bool):
            raise MetricInputError(f"run {i}: task_success must be a bool, got {run.task_success!r}")
        out.append(run)
    return out


def _errors(traj: Trajectory) -> list[int]:
    from ..match.matching import is_failed

    return [i for i, (_, r) in enumerate(traj.pairs()) if is_failed(r)]


def _final_text(traj: Trajectory) -> str | None:
    if traj.final_response:
        return traj.final_response
    for s in reversed(traj.steps):
        if s.kind in ("final_response", "assistant") and s.content:
            return s.content
        if s.kind in ("tool_call", "tool_result", "user"):
            return None
    return None


def recovery_rate(runs: Iterable[RecoveryRun | tuple[Trajectory, bool]]) -> MetricResult:
    """Share of fault-injected runs that hit a tool error and still completed the task.

    Args:
        runs: ``RecoveryRun`` items or ``(trajectory, task_success)`` pairs.

    Returns:
        ``MetricResult`` named ``recovery_rate``: ``score`` in [0, 1], None when no run hit an
        error; parts ``n_fault_runs``, ``n_hit_error``, ``n_recovered``.

    Raises:
        MetricInputError: a malformed run.

    Examples:
        Two runs hit a failed refund; one retried and completed the task:

        >>> from trajcheck.model import Trajectory
        >>> def run(*errors):
        ...     return Trajectory.from_dict({"steps": [s for i, e in enumerate(errors) for s in (
        ...         {"index": 2 * i, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": i}]},
        ...         {"index": 2 * i + 1, "kind": "tool_result",
        ...          "tool_result": {"call_id": i, "name": "refund", "is_error": e}})]})
        >>> recovery_rate([(run(True, False), True), (run(True), False)]).score
        0.5

    Denominator: fault-injected runs in which at least one tool call failed
    (``matching.is_failed``) -- a fault that never fired tests nothing. Numerator: those with
    ``task_success`` True. Source: DESIGN.md "Error recovery" policy.
    """
    rs = [r for r in _runs(runs) if r.fault_injected]
    hit = [r for r in rs if _errors(r.trajectory)]
    rec = sum(1 for r in hit if r.task_success)
    parts = {"n_fault_runs": len(rs), "n_hit_error": len(hit), "n_recovered": rec}
    if not hit:
        return MetricResult("recovery_rate", None,
                            f"no tool error occurred in {len(rs)} fault-injected run(s)", parts, None)
    return MetricResult("recovery_rate", rec / len(hit),
                        f"{rec} of {len(hit)} runs that hit a tool error completed the task", parts)


def _unsatisfied_actions(traj: Trajectory) -> list[str]:
    """Tools that failed in ``traj`` and never succeeded (the action's successful call is
    missing): ``formulas.unrecovered_failures``, as ``sequences.error_recovery`` and the
    fast scorer decide it."""
    from ..match.matching import is_failed

    pairs = traj.pairs()
    return unrecovered_failures([c.name for c, _ in pairs], [is_failed(r) for _, r in pairs])


def is_false_success(run: RecoveryRun | tuple[Trajectory, bool], *,
                     detector: ClaimDetector | None = None) -> bool:
    """Whether one run is a false success (DESIGN.md "Policies: Error recovery").

    Args:
        run: a ``RecoveryRun`` or a ``(trajectory, task_success)`` pair.
        detector: the claim detector; default ``ClaimDetector()``.

    Returns:
        True when the final response claims the action happened while the task failed
        because the final state or the action's successful call is missing.

    Raises:
        MetricInputError: a malformed run.

    Examples:
        The refund failed and was never retried, yet the reply says it was done:

        >>> from trajcheck.model import Trajectory
        >>> run = Trajectory.from_dict({"final_response": "Your refund has been processed.", "steps": [
        ...     {"index": 0, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": "a"}]},
        ...     {"index": 1, "kind": "tool_result",
        ...      "tool_result": {"call_id": "a", "name": "refund", "is_error": True}}]})
        >>> is_false_success((run, False))
        True

    "Missing" means ``run.state_missing`` is True, or some tool that failed in the run has
    no successful call anywhere in it (``formulas.unrecovered_failures``). A truthful claim
    after a recovered retry is not a false success, and neither is a claim in a run that
    failed for another reason (a duplicate write, say): the action did happen.
    """
    (r,) = _runs([run])
    if r.task_success:
        return False
    if not (detector or ClaimDetector())(_final_text(r.trajectory)):
        return False
    return bool(r.state_missing) or bool(_unsatisfied_actions(r.trajectory))


def false_success_rate(runs: Iterable[RecoveryRun | tuple[Trajectory, bool]], *,
                       detector: ClaimDetector | None = None) -> MetricResult:
    """Share of fault-injected runs that are false successes (see ``is_false_success``).

    Args:
        runs: ``RecoveryRun`` items or ``(trajectory, task_success)`` pairs.
        detector: the claim detector; default ``ClaimDetector()``.

    Returns:
        ``MetricResult`` named ``false_success_rate`` (lower is better; 0.0 is the target):
        score None when there is no fault-injected run; parts ``n_fault_runs``, ``n_failed``,
        ``n_false_success`` and ``false_success_runs`` (indices among the fault-injected
        runs); ``passed`` is True when there is none.

    Raises:
        MetricInputError: a malformed run.

    Examples:
        One truthful and one false claim after a failed refund:

        >>> from trajcheck.model import Trajectory
        >>> def run(final, *errors):
        ...     return Trajectory.from_dict({"final_response": final, "steps": [
        ...         s for i, e in enumerate(errors) for s in (
        ...         {"index": 2 * i, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": i}]},
        ...         {"index": 2 * i + 1, "kind": "tool_result",
        ...          "tool_result": {"call_id": i, "name": "refund", "is_error": e}})]})
        >>> false_success_rate([(run("Refund issued.", True, False), True),
        ...                     (run("Your refund has been processed.", True), False)]).score
        0.5

    Denominator: all fault-injected runs. Source: seed 000 §2.6 (false_success_rate = fault
    runs where the agent claims success / fault runs, "worst failure"); DESIGN.md "Policies:
    Error recovery".
    """
    rs = [r for r in _runs(runs) if r.fault_injected]
    failed = [i for i, r in enumerate(rs) if not r.task_success]
    false = [i for i in failed if is_false_success(rs[i], detector=detector)]
    parts = {"n_fault_runs": len(rs), "n_failed": len(failed), "n_false_success": len(false),
             "false_success_runs": false}
    if not rs:
        return MetricResult("false_success_rate", None, "no fault-injected run", parts, None)
    return MetricResult("false_success_rate", len(false) / len(rs),
                        f"{len(false)} of {len(rs)} fault-injected runs claimed success while the task failed",
                        parts, not false)


def longest_retry_run(traj: Trajectory) -> int:
    """The longest run of same-tool calls after a failed call (the retries), 0 if none failed.

    DESIGN.md: "A retry is a later call of the same tool after a call whose result was an
    error"; so for each failed call of tool T the run counts the later calls of T up to and
    including the first that succeeds, whatever other tools are called in between. This is
    ``sequences.error_recovery``'s ``longest_retry_run``, the one definition trajcheck has.
    """
    from .sequences import error_recovery

    require_trajectory(traj, what="longest_retry_run", needs="the tool results")
    return int(error_recovery(traj).parts["longest_retry_run"])


def max_retries_exceeded(runs: Trajectory | Iterable[RecoveryRun | tuple[Trajectory, bool]], *,
                         retry_budget: int = 2) -> MetricResult:
    """Whether agents retried a failing tool more than ``retry_budget`` times in a row.

    Args:
        runs: one Trajectory, or ``RecoveryRun`` items / ``(trajectory, task_success)`` pairs.
        retry_budget: the retries allowed after an error (>= 0).

    Returns:
        ``MetricResult``. For one Trajectory: score 1.0 when exceeded else 0.0, ``passed`` =
        not exceeded. For runs: score = share of fault-injected runs that exceeded it (None
        when there are none), ``passed`` when none did. Parts: the budget, ``longest`` per
        run, ``exceeded`` indices.

    Raises:
        MetricInputError: a negative budget, or a list of ToolCall (no results).

    Examples:
        One retry after an error, against a budget of none:

        >>> from trajcheck.model import Trajectory
        >>> run = Trajectory.from_dict({"steps": [
        ...     {"index": 0, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": "a"}]},
        ...     {"index": 1, "kind": "tool_result",
        ...      "tool_result": {"call_id": "a", "name": "refund", "is_error": True}},
        ...     {"index": 2, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": "b"}]}]})
        >>> r = max_retries_exceeded(run, retry_budget=0)
        >>> r.score, r.parts["longest"]
        (1.0, [1])
        >>> max_retries_exceeded(run, retry_budget=1).score
        0.0

    DESIGN.md policy: the budget is checked against ``longest_retry_run`` (the longest run of
    same-tool calls after an error).
    """
    if isinstance(retry_budget, bool) or not isinstance(retry_budget, int) or retry_budget < 0:
        raise MetricInputError(f"retry_budget must be an integer >= 0, got {retry_budget!r}")
    if isinstance(runs, Trajectory):
        n = longest_retry_run(runs)
        ex = n > retry_budget
        return MetricResult("max_retries_exceeded", 1.0 if ex else 0.0,
                            f"longest retry run {n} {'exceeds' if ex else 'is within'} the budget of {retry_budget}",
                            {"retry_budget": retry_budget, "longest": [n], "exceeded": [0] if ex else []},
                            not ex)
    if isinstance(runs, (list, tuple)) and runs and all(isinstance(c, ToolCall) for c in runs):
        require_trajectory(runs, what="max_retries_exceeded", needs="the tool results")
    rs = [r for r in _runs(runs) if r.fault_injected]
    longest = [longest_retry_run(r.trajectory) for r in rs]
    exceeded = [i for i, n in enumerate(longest) if n > retry_budget]
    parts = {"retry_budget": retry_budget, "longest": longest, "exceeded": exceeded}
    if not rs:
        return MetricResult("max_retries_exceeded", None, "no fault-injected run", parts, None)
    return MetricResult("max_retries_exceeded", len(exceeded) / len(rs),
                        f"{len(exceeded)} of {len(rs)} fault-injected runs retried beyond the budget of {retry_budget}",
                        parts, not exceeded)

