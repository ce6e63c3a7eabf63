"""Judges of plan-then-execute agents: plan quality, plan adherence, sub-goal matching.

Seed 000 §5.2 ("Planning quality") asks whether the explicit plan covers all sub-goals,
orders steps validly, uses real tools and adapts when tool outputs change, by binary judge
checks on the plan artefact, and compares planned with executed steps:

- :func:`judge_plan_quality`: the :data:`PLAN_QUALITY_CHECKS` on the plan; ``adapts`` reads
  the execution and the plan's later versions (n/a without an execution);
- :func:`judge_plan_adherence`: per plan step, executed, explicitly revised, or not
  followed (plan_adherence = |plan steps executed (or explicitly revised)| / |plan steps|);
- :func:`subgoal_matches`: which plan steps address each labelled sub-goal, for
  ``trajcheck.metrics.planning.plan_coverage(match="judge")``.

The deterministic counterparts (no model) are in ``trajcheck.metrics.planning``. Every
judge here returns a :class:`~trajcheck.judges.rubrics.Verdict` (or raises JudgeError for
:func:`subgoal_matches`, whose answer feeds a metric) and records the same audit fields as
the other judges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import JudgeError, MetricInputError
from ..model import Trajectory
from .fencing import fence, new_nonce
from .fencing import messages as request_messages
from .models import as_model
from .parsing import as_bool, ask_json
from .rubrics import (
    _SYSTEM,
    DEFAULT_MAX_OUTPUT_CHARS,
    Verdict,
    VerdictItem,
    _arun,
    _reason,
    _run,
    render_trajectory,
)

PLAN_QUALITY_CHECKS: tuple[tuple[str, str], ...] = (
    ("complete", "Carried out as written, the plan would achieve the whole task: it addresses "
                 "every sub-goal of the request."),
    ("feasible", "Every step can be done with the available tools, in the order given "
                 "(each step's inputs exist by the time it runs)."),
    ("efficient", "The plan has no unnecessary, repeated or risky steps."),
    ("grounded", "The plan assumes no fact the user did not give and no tool could look up."),
    ("adapts", "When a tool output changed what the plan assumed (a failure, an empty or "
               "unexpected result), the agent revised the plan or its next steps to fit it, "
               "instead of carrying on as written. Answer \"n/a\" when no tool output "
               "contradicted the plan."),
)
"""The plan-quality rubric (name, question); seed 000 §5.2's four properties: covers all
sub-goals (``complete``), orders steps validly and uses real tools (``feasible``), adapts
when tool outputs change (``adapts``); plus ``efficient`` and ``grounded``."""

_ADAPTS_NA = "n/a: no execution given, so adapting to tool outputs cannot be judged"


def _plan_text(plan: str | Sequence[Any]) -> str:
    if isinstance(plan, str):
        return plan
    return "\n".join(f"{i + 1}. {s}" for i, s in enumerate(plan))


def _revisions_text(revisions: Sequence[str | Sequence[Any]], nonce: str) -> str:
    return "".join(f"\n\nThe agent's plan, revision {k + 1} (emitted later, during execution):\n"
                   f"{fence(_plan_text(r), nonce)}" for k, r in enumerate(revisions))


def plan_quality_messages(plan: str | Sequence[Any], task: str, tools: Sequence[str] = (), *,
                          traj: Trajectory | None = None,
                          revisions: Sequence[str | Sequence[Any]] = (),
                          max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                          nonce: str | None = None) -> list[dict[str, str]]:
    """The chat messages the plan-quality judge sends: the task, the tools, the plan, and,
    when ``traj`` is given, the later plan ``revisions`` and the execution (rendered as for
    the trajectory judge, errors never cut); ``adapts`` is asked only with an execution.
    The task, tool names, plans and execution are fenced as data under ``nonce`` (fresh
    when None)."""
    nonce = nonce or new_nonce()
    checks = [(n, q) for n, q in PLAN_QUALITY_CHECKS if traj is not None or n != "adapts"]
    listed = "\n".join(f'- "{n}": {q}' for n, q in checks)
    tool_line = (f"Available tools: {', '.join(fence(t, nonce) for t in tools)}\n"
                 if tools else "")
    run = ""
    if traj is not None:
        run = (f"{_revisions_text(revisions, nonce)}\n\nWhat the agent then did:\n"
               f"{render_trajectory(traj, max_output_chars=max_output_chars, nonce=nonce)}")
        scope = ('Judge the first plan on each check; for "adapts", read the execution and '
                 "the revisions")
    else:
        scope = "Judge the plan (not any execution) on each check"
    user = (f"The user's task: {fence(task, nonce)}\n{tool_line}\nThe agent's plan:\n"
            f"{fence(_plan_text(plan), nonce)}{run}\n\n"
            f"{scope}:\n{listed}\n\n"
            'Reply as JSON: {"checks": {"<name>": {"pass": true|false'
            + (' (or "n/a" for adapts)' if traj is not None else "")
            + ', "reason": "<one line>"}, ...}}')
    return request_messages(_SYSTEM, user, nonce)


def _quality_validator(with_run: bool) -> Callable[[dict[str, Any]], list[VerdictItem]]:
    def validate(obj: dict[str, Any]) -> list[VerdictItem]:
        checks = obj.get("checks", obj)
        if not isinstance(checks, Mapping):
            raise JudgeError('"checks" must be an object keyed by check name')
        items = []
        for n, _ in PLAN_QUALITY_CHECKS:
            if n == "adapts" and not with_run:
                items.append(VerdictItem(n, None, _ADAPTS_NA))
                continue
            if n not in checks:
                raise JudgeError(f'check "{n}" is missing')
            v = checks[n]
            if not isinstance(v, Mapping):
                raise JudgeError(f'check "{n}" must be an object {{"pass": ..., "reason": ...}}')
            ok = as_bool(v.get("pass", v.get("passed")), f'check "{n}"', allow_na=n == "adapts")
            items.append(VerdictItem(n, ok, _reason(v, "reason", f'check "{n}"', ok)
                                     or "n/a: no tool output contradicted the plan"))
        return items

    return validate


def _plan_task(task: str | None, traj: Trajectory | None) -> str:
    t = task if task is not None else (traj.user_input if traj is not None else None)
    if not t:
        raise MetricInputError("plan judge: no task text (pass task=...)")
    return t


def judge_plan_quality(model: Any, plan: str | Sequence[Any], *, task: str | None = None,
                       tools: Sequence[str] = (), traj: Trajectory | None = None,
                       revisions: Sequence[str | Sequence[Any]] = (), retries: int = 2,
                       max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                       raise_on_error: bool = False) -> Verdict:
    """Plan quality (seed 000 §5.2): the :data:`PLAN_QUALITY_CHECKS` on ``plan`` (a text or a
    list of steps) for ``task`` (default: ``traj``'s user input), with ``tools`` the
    available tool names.

    ``adapts`` needs the execution: with ``traj`` (and the plan's later versions,
    ``revisions``, oldest first) the judge reads what the agent did and answers true (it
    revised the plan when a tool output changed what the plan assumed), false (it carried on
    as written), or n/a (no tool output contradicted the plan); without ``traj`` it is n/a
    and not asked. ``passed`` = every applicable check passes; ``score`` = share of
    applicable checks passed, in [0, 1]. Raises MetricInputError with no task text; a judge
    that cannot answer gives an error verdict (or raises JudgeError with
    ``raise_on_error``)."""
    msgs = plan_quality_messages(plan, _plan_task(task, traj), tools, traj=traj,
                                 revisions=revisions, max_output_chars=max_output_chars)
    return _run(model, "plan_quality", msgs, _quality_validator(traj is not None), retries,
                raise_on_error, lambda items: {})


async def ajudge_plan_quality(model: Any, plan: str | Sequence[Any], *, task: str | None = None,
                              tools: Sequence[str] = (), traj: Trajectory | None = None,
                              revisions: Sequence[str | Sequence[Any]] = (), retries: int = 2,
                              max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                              raise_on_error: bool = False) -> Verdict:
    """Async :func:`judge_plan_quality`."""
    msgs = plan_quality_messages(plan, _plan_task(task, traj), tools, traj=traj,
                                 revisions=revisions, max_output_chars=max_output_chars)
    return await _arun(model, "plan_quality", msgs, _quality_validator(traj is not None), retries,
                       raise_on_error, lambda items: {})


# --------------------------------------------------------------------------- adherence

STEP_STATUSES = ("executed", "revised", "not_followed")
"""What the adherence judge says of each plan step: ``executed`` (done as planned),
``revised`` (the agent explicitly changed or dropped it: said so, or emitted a new plan
without it), ``not_followed`` (skipped or done differently without saying so)."""


def _plan_steps(plan: str | Sequence[Any]) -> list[str]:
    if isinstance(plan, str):
        steps = [ln.strip() for ln in plan.splitlines() if ln.strip()]
    else:
        steps = [str(s) for s in plan]
    if not steps:
        raise MetricInputError("plan adherence: the plan has no steps")
    return steps


def plan_adherence_messages(plan: Sequence[str], traj: Trajectory, *,
                            revisions: Sequence[str | Sequence[Any]] = (),
                            max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                            nonce: str | None = None) -> list[dict[str, str]]:
    """The chat messages the plan-adherence judge sends (plans and execution fenced as
    data under ``nonce``, fresh when None)."""
    nonce = nonce or new_nonce()
    user = (f"The agent's plan:\n{fence(_plan_text(plan), nonce)}"
            f"{_revisions_text(revisions, nonce)}\n\nWhat it then did:\n"
            f"{render_trajectory(traj, max_output_chars=max_output_chars, nonce=nonce)}\n\n"
            "For each step of the first plan, in order, give its status: \"executed\" (done "
            "as planned), \"revised\" (the agent explicitly changed or dropped the step: it "
            "said so, or a later revision of the plan changes or omits it) or "
            "\"not_followed\" (skipped or done differently without saying so), with the "
            "evidence. Then list actions taken that no plan step or revision called for. "
            'Reply as JSON: {"steps": [{"step": "<text>", "status": "executed"|"revised"|'
            '"not_followed", "evidence": "<one line>"}, ...], "unplanned_actions": '
            '["<action>", ...]}')
    return request_messages(_SYSTEM, user, nonce)


def _status(g: Mapping[str, Any], i: int) -> str:
    st = g.get("status")
    if st is None and "followed" in g:  # a plain yes/no: followed = executed
        return "executed" if as_bool(g.get("followed"), f'plan step {i + 1} "followed"') else "not_followed"
    s = str(st).strip().lower().replace(" ", "_").replace("-", "_")
    if s not in STEP_STATUSES:
        raise JudgeError(f'plan step {i + 1}: "status" must be one of '
                         f'{", ".join(STEP_STATUSES)}, got {st!r}')
    return s


def _adherence_validator(steps: Sequence[str]) -> Callable[[dict[str, Any]], list[VerdictItem]]:
    def validate(obj: dict[str, Any]) -> list[VerdictItem]:
        got = obj.get("steps")
        if not isinstance(got, list) or len(got) != len(steps):
            raise JudgeError(f'"steps" must be a list of {len(steps)} entries, one per plan step')
        extra = obj.get("unplanned_actions", [])
        if not isinstance(extra, list):
            raise JudgeError('"unplanned_actions" must be a list')
        items = []
        for i, (s, g) in enumerate(zip(steps, got)):
            if not isinstance(g, Mapping):
                raise JudgeError(f"plan step {i + 1} must be an object")
            st = _status(g, i)
            ok = st != "not_followed"
            why = _reason(g, "evidence", f"plan step {i + 1}", ok)
            items.append(VerdictItem(s, ok, f"revised: {why}" if st == "revised" else why))
        items.extend(VerdictItem(f"unplanned: {a}", False, "action not in the plan")
                     for a in (str(x) for x in extra))
        return items

    return validate


def _adherence_extra(items: list[VerdictItem]) -> dict[str, Any]:
    steps = [i for i in items if not i.name.startswith("unplanned: ")]
    revised = [i.name for i in steps if i.passed and i.reason.startswith("revised: ")]
    return {"steps_followed": sum(bool(i.passed) for i in steps), "steps_revised": revised,
            "n_steps": len(steps),
            "unplanned_actions": [i.name[len("unplanned: "):] for i in items
                                  if i.name.startswith("unplanned: ")]}


def judge_plan_adherence(model: Any, plan: str | Sequence[Any], traj: Trajectory, *,
                         revisions: Sequence[str | Sequence[Any]] = (), retries: int = 2,
                         max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                         raise_on_error: bool = False) -> Verdict:
    """Plan adherence (seed 000 §5.2: |plan steps executed (or explicitly revised)| / |plan
    steps|): did the execution follow the plan?

    ``plan`` is a list of steps (or a text, one step per non-empty line); ``revisions`` the
    plan's later versions, oldest first. One item per plan step, passed when the judge says
    ``executed`` or ``revised`` (:data:`STEP_STATUSES`; a revised step's reason starts with
    ``revised:``), plus one failed item per unplanned action the judge lists. ``passed`` =
    every step executed or revised and no unplanned action; ``score`` = items passed /
    items. ``extra``: steps_followed (executed + revised), steps_revised (their texts),
    n_steps, unplanned_actions. Raises MetricInputError for a plan without steps."""
    steps = _plan_steps(plan)
    return _run(model, "plan_adherence",
                plan_adherence_messages(steps, traj, revisions=revisions,
                                        max_output_chars=max_output_chars),
                _adherence_validator(steps), retries, raise_on_error, _adherence_extra)


async def ajudge_plan_adherence(model: Any, plan: str | Sequence[Any], traj: Trajectory, *,
                                revisions: Sequence[str | Sequence[Any]] = (), retries: int = 2,
                                max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                                raise_on_error: bool = False) -> Verdict:
    """Async :func:`judge_plan_adherence`."""
    steps = _plan_steps(plan)
    return await _arun(model, "plan_adherence",
                       plan_adherence_messages(steps, traj, revisions=revisions,
                                               max_output_chars=max_output_chars),
                       _adherence_validator(steps), retries, raise_on_error, _adherence_extra)


# --------------------------------------------------------------------------- sub-goals


def subgoal_messages(steps: Sequence[str], subgoals: Sequence[str],
                     nonce: str | None = None) -> list[dict[str, str]]:
    """The chat messages :func:`subgoal_matches` sends (the plan and each sub-goal fenced as
    data under ``nonce``, fresh when None)."""
    nonce = nonce or new_nonce()
    user = ("The agent's plan:\n" + fence(_plan_text(steps), nonce) + "\n\nThe user's sub-goals:\n"
            + "\n".join(f"{i + 1}. {fence(g, nonce)}" for i, g in enumerate(subgoals))
            + "\n\nFor each sub-goal, in order, list the numbers of the plan steps that address "
              "it (carried out, they would achieve that sub-goal; a step about a different "
              "object, place or action does not), or an empty list, with a one-line reason. "
              'Reply as JSON: {"subgoals": [{"subgoal": <number>, "steps": [<step number>, '
              '...], "reason": "<one line>"}, ...]}')
    return request_messages(_SYSTEM, user, nonce)


def subgoal_matches(model: Any, steps: Sequence[str], subgoals: Sequence[str], *,
                    retries: int = 2) -> tuple[list[list[int]], list[str]]:
    """Ask ``model`` once which plan ``steps`` (texts) address each of ``subgoals`` (texts).

    Returns ``(adjacency, reasons)``: ``adjacency[i]`` the 0-based indices of the steps the
    judge says address sub-goal ``i``, ``reasons[i]`` its one-line reason. The one-to-one
    count is left to the caller (``plan_coverage(match="judge")``, seed 000 §5.2). A reply
    with a wrong number of entries, a step number outside the plan or an empty reason is
    asked again (``retries`` times); then JudgeError: an unanswered question is never a
    cover."""
    n = len(steps)

    def validate(obj: dict[str, Any]) -> tuple[list[list[int]], list[str]]:
        got = obj.get("subgoals")
        if not isinstance(got, list) or len(got) != len(subgoals):
            raise JudgeError(f'"subgoals" must be a list of {len(subgoals)} entries, one per sub-goal')
        adj, reasons = [], []
        for i, g in enumerate(got):
            if not isinstance(g, Mapping) or not isinstance(g.get("steps"), list):
                raise JudgeError(f'sub-goal {i + 1} must be an object with a "steps" list')
            row = []
            for k in g["steps"]:
                if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:
                    raise JudgeError(f"sub-goal {i + 1}: step {k!r} is not a plan step number 1..{n}")
                row.append(k - 1)
            adj.append(sorted(set(row)))
            reasons.append(_reason(g, "reason", f"sub-goal {i + 1}", True))
        return adj, reasons

    if not subgoals:
        return [], []
    result, _, _ = ask_json(as_model(model), subgoal_messages(steps, subgoals), validate,
                            retries=retries)
    return result


__all__ = [
    "PLAN_QUALITY_CHECKS",
    "STEP_STATUSES",
    "ajudge_plan_adherence",
    "ajudge_plan_quality",
    "judge_plan_adherence",
    "judge_plan_quality",
    "plan_adherence_messages",
    "plan_quality_messages",
    "subgoal_matches",
    "subgoal_messages",
]
