"""Outcome checks read from the run itself, with no database: the fields of the last tool
observation and the step budget.

Seed 001 ("Agent Trajectory Evals", Outcome-Level Evaluation, ``outcome_eval``) checks its
``expected_outcome`` this way: ``final_state`` compares keys of the last observation, and
``max_steps`` bounds the run's step count. Its suite shape (``trajcheck.read.eval_case``) keeps
both in ``Case.metadata`` (``expected_last_observation``, ``outcome_max_steps``);
:func:`case_outcome_checks` scores whichever of them a case gives, and
:func:`with_case_outcome_checks` joins that verdict to trajcheck's own outcome, so a run
succeeds only when every check holds.

Where trajcheck differs from the seed's code: values compare with the exact matcher's
type-aware equality (``True`` does not equal ``1``, as everywhere in trajcheck); a tool
output given as JSON text (as most traces record it) is read as the object it encodes; the
step count is trajcheck's (agent turns, ``metrics.efficiency.agent_steps``), the same count
the efficiency budget ``max_steps`` uses, since the seed's ``total_steps`` is a recorded
field it does not define.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import DatasetError
from ..model import Case, Trajectory
from .result import MetricResult

#: ``Case.metadata`` keys this module reads (written by ``trajcheck.read.eval_case``).
LAST_OBSERVATION_KEY = "expected_last_observation"
STEP_BUDGET_KEY = "outcome_max_steps"
_MISSING = object()


def last_observation(traj: Trajectory) -> Any:
    """The output of the run's last tool result (failed or not), JSON text read as the value
    it encodes; ``_MISSING`` (module sentinel) when the run has no tool result."""
    results = traj.tool_results()
    if not results:
        return _MISSING
    out = results[-1].output
    if isinstance(out, str):
        try:
            return json.loads(out)
        except ValueError:
            return out
    return out


def check_last_observation(traj: Trajectory, expected: Mapping[str, Any]) -> MetricResult:
    """Whether the last tool observation holds every ``{key: value}`` of ``expected``.

    ``expected``: a mapping of field names to values (seed 001 ``expected_outcome.final_state``).
    A key the observation lacks reads as None, as the seed's ``dict.get`` does, so
    ``{"booking_status": None}`` holds when no booking status was returned. A run with no
    tool result, or whose last result is not an object, fails every key. Values compare with
    ``matchers.exact_equal``. Returns MetricResult ``last_observation`` (score = fraction of
    keys that hold, 1.0 for an empty ``expected``; ``passed`` = all hold; ``parts``:
    ``checks`` {key: bool}). Raises ``DatasetError`` when ``expected`` is not a mapping with
    string keys. Source: seed 001, Outcome-Level Evaluation (``state_<key>`` checks).
    """
    from ..match.matchers import exact_equal

    if not isinstance(expected, Mapping) or not all(isinstance(k, str) for k in expected):
        raise DatasetError(f"final_state must be an object with string keys, got {expected!r}")
    obs = last_observation(traj)
    keys = list(expected)
    if obs is _MISSING or not isinstance(obs, Mapping):
        why = "the run has no tool observation" if obs is _MISSING else (
            f"the last tool observation is not an object ({type(obs).__name__})")
        checks = {k: False for k in keys}
        return MetricResult("last_observation", 0.0 if keys else 1.0,
                            why if keys else "no final-state field expected",
                            {"checks": checks}, not keys)
    checks = {k: exact_equal(obs.get(k), v) for k, v in expected.items()}
    bad = [k for k, ok in checks.items() if not ok]
    score = (len(keys) - len(bad)) / len(keys) if keys else 1.0
    if bad:
        k = bad[0]
        reason = f"last tool observation: {k!r} is {obs.get(k)!r}, expected {expected[k]!r}"
        if len(bad) > 1:
            reason += f" (and {len(bad) - 1} more)"
    else:
        reason = f"last tool observation holds all {len(keys)} expected field(s)"
    return MetricResult("last_observation", score, reason, {"checks": checks}, not bad)


def check_step_budget(traj: Trajectory, max_steps: int) -> MetricResult:
    """Whether the run took at most ``max_steps`` steps (agent turns, see
    ``metrics.efficiency.agent_steps``). ``max_steps``: int >= 0. Returns MetricResult
    ``step_budget`` (1.0/0.0, ``parts``: ``steps``, ``max_steps``). Raises ``DatasetError``
    for a bound that is not a non-negative int. Source: seed 001, Outcome-Level Evaluation
    (``within_step_budget``)."""
    from .efficiency import agent_steps

    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise DatasetError(f"expected_outcome.max_steps must be an int >= 0, got {max_steps!r}")
    n = agent_steps(traj)
    ok = n <= max_steps
    reason = f"{n} steps, within the budget of {max_steps}" if ok else f"{n} steps, over the budget of {max_steps}"
    return MetricResult("step_budget", 1.0 if ok else 0.0, reason, {"steps": n, "max_steps": max_steps}, ok)


def case_outcome_checks(traj: Trajectory, case: Case) -> list[MetricResult]:
    """The checks ``case`` asks for in its metadata (``expected_last_observation`` ->
    :func:`check_last_observation`, ``outcome_max_steps`` -> :func:`check_step_budget`), in
    that order; [] when it asks for neither. Errors name the case."""
    meta = case.metadata or {}
    out: list[MetricResult] = []
    try:
        if meta.get(LAST_OBSERVATION_KEY) is not None:
            out.append(check_last_observation(traj, meta[LAST_OBSERVATION_KEY]))
        if meta.get(STEP_BUDGET_KEY) is not None:
            out.append(check_step_budget(traj, meta[STEP_BUDGET_KEY]))
    except DatasetError as e:
        raise DatasetError(f"case {case.id!r}: {e}") from None
    return out


def with_case_outcome_checks(res: MetricResult, traj: Trajectory, case: Case) -> MetricResult:
    """``res`` (trajcheck's outcome verdict for the run) joined with
    :func:`case_outcome_checks`: unchanged when the case asks for none; else passed only when
    ``res`` passed (or did not apply) and every check holds, score 1.0/0.0, the reason of the
    first failure, and each check's verdict in ``parts`` (``last_observation``,
    ``step_budget``)."""
    checks = case_outcome_checks(traj, case)
    if not checks:
        return res
    parts = dict(res.parts or {})
    parts.update({c.name: bool(c.passed) for c in checks})
    failed = [c for c in checks if not c.passed]
    if res.passed is False:
        return MetricResult(res.name, 0.0, res.reason, parts, False)
    if failed:
        return MetricResult(res.name, 0.0, f"task failed: {failed[0].reason}", parts, False)
    reason = "; ".join(([res.reason] if res.passed else []) + [c.reason for c in checks])
    return MetricResult(res.name, 1.0, reason, parts, True)


__all__ = ["check_last_observation", "check_step_budget", "case_outcome_checks",
           "last_observation", "with_case_outcome_checks"]
