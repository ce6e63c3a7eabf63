"""Per-run scoring: one run (a ``Trajectory`` of one ``Case``) into one ``RunResult``.

This is the second stage of a suite evaluation (reading -> per-run scoring -> mergeable
aggregation -> reporting). It scores runs and never aggregates them: ``trajcheck.aggregate.partials``
turns ``RunResult``s into suite figures, ``trajcheck.score.suite`` ties the stages together.

- ``score_run``: every per-run metric (outcome, tool-call P/R/F1, call rates, forbidden
  sequences, ordering, error recovery, composite, efficiency figures, route);
- ``run_outcome``: trajcheck's own task-success verdict for one run;
- ``run_route``: the route one run took, for the routing metrics;
- ``transcript``: the compact steps a report shows for a run.

Definitions follow ../shared/DESIGN.md ("Semantics", "Policies"); each policy is documented
in the function that applies it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import MetricInputError
from ..match.matching import match_calls, retried_failures
from ..metrics.calls import tool_call_prf
from ..metrics.composite import score_trajectory
from ..metrics.efficiency import run_stats
from ..metrics.formulas import recorded_group, run_id_of
from ..metrics.outcome import outcome_from_calls
from ..metrics.outcome_checks import with_case_outcome_checks
from ..metrics.sequences import (
    call_rates,
    check_forbidden_sequences,
    error_recovery,
    ordering_accuracy,
)
from ..metrics.trajectory_scores import lcs_prf, multiset_prf
from ..model import Case, Trajectory
from ..report.scorecard import RunResult, _r, _usd, run_result_of
from .case_plan import plan_for
from .fast_scoring import fast_compact, fast_plan
from .fingerprint import case_hash
from .json_copy import json_copy
from .run_detail import call_detail
from .run_matching import same_modes, shared
from .runmemo import per_run

if TYPE_CHECKING:  # pragma: no cover
    from ..match.matchers import MatchContext
    from ..metrics.result import MetricResult

TRANSCRIPT_CHARS = 2000
# json.dumps(x, ensure_ascii=False, default=str) without building an encoder per call
_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _cut(x: Any, n: int = TRANSCRIPT_CHARS) -> Any:
    if x is None:
        return None
    s = x if isinstance(x, str) else _dumps(x)
    return s if len(s) <= n else s[:n] + f" ...[{len(s) - n} more characters]"


def transcript(traj: Trajectory) -> tuple[dict[str, Any], ...]:
    """The steps of ``traj`` in a compact JSON form for reports: ``{index, kind, content?,
    tool_calls?: [{name, args}], tool_result?: {name, output, is_error}}``, each text cut at
    ``TRANSCRIPT_CHARS`` characters (the cut is marked)."""
    out: list[dict[str, Any]] = []
    for s in traj.steps:
        d: dict[str, Any] = {"index": s.index, "kind": s.kind}
        if s.content:
            d["content"] = _cut(s.content)
        if s.tool_calls:
            d["tool_calls"] = [{"name": c.name,
                                "args": _cut(c.args if c.args is not None else c.raw_args)}
                               for c in s.tool_calls]
        if s.tool_result is not None:
            d["tool_result"] = {"name": s.tool_result.name,
                                "output": _cut(s.tool_result.output),
                                "is_error": s.tool_result.is_error}
        out.append(d)
    return tuple(out)


def _md(m: MetricResult | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return json_copy(m.to_dict())  # type: ignore[no-any-return]  # what its JSON reads back


def _snapshots(traj: Trajectory) -> tuple[Any, Any] | None:
    meta = traj.metadata
    before = meta.get("state_before", meta.get("initial_state_snapshot"))
    after = meta.get("state_after", meta.get("final_state_snapshot"))
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return before, after
    return None


def run_outcome(traj: Trajectory, case: Case, *, context: MatchContext | None = None) -> MetricResult:
    """trajcheck's own verdict on whether one run accomplished its case.

    Policy (DESIGN.md "Task success", applied here and documented for ``eval``/``run``):

    1. When the trajectory carries database snapshots (``metadata["state_before"]`` and
       ``metadata["state_after"]``, as ``trajcheck run`` records them) and the case has an
       ``expected_final_state``, success = ``metrics.outcome.task_success`` (the final-state
       assertions hold AND the response contains every ``response_must_include`` item).
    2. Otherwise (recorded traces, no database), success is judged from the calls:
       ``metrics.outcome.outcome_from_calls`` (the state-changing expected calls were made
       and succeeded, no other state-changing call succeeded, and the response contains every
       required item).
    Either way, a case from seed 001's suite shape also needs the last tool observation's
    fields and the step budget of its ``expected_outcome`` to hold
    (``metrics.outcome_checks.with_case_outcome_checks``).
    3. A run the source marks as unfinished (``metadata["terminated"] is False``: it hit the
       step limit or was cut off before the conversation ended) is not a success, whatever
       its calls: the source never reached its end state (tau-bench gives such runs reward 0
       without a reward check).

    Returns a ``MetricResult`` named ``outcome`` (score 1.0/0.0, ``passed`` = success) whose
    reason is one line. Errors from the outcome metrics propagate (``TrajcheckError``).
    """
    snaps = _snapshots(traj)
    res: MetricResult
    if snaps is not None and case.expected_final_state is not None:
        from ..metrics.outcome import check_final_state, response_includes, task_success

        fs = check_final_state(snaps[0], snaps[1], case.expected_final_state)
        resp = response_includes(traj, case.response_must_include)
        res = task_success(fs, resp)
    else:
        res = outcome_from_calls(traj, case, context=context)
    res = with_case_outcome_checks(res, traj, case)
    if traj.metadata.get("terminated") is False and res.passed:
        why = traj.metadata.get("termination") or "the run ended before the conversation did"
        from ..metrics.result import MetricResult as _MR

        return _MR("outcome", 0.0, f"run did not finish ({why}); calls alone would pass: {res.reason}",
                   dict(res.parts, unfinished=True), False)
    return res


ROUTE_SOURCE = ('metadata["route"], else (cases with an expected_route only) the first tool '
                'call\'s name, or the distinct called tool names when the expected route is a list')


def _route_label(v: Any, where: str) -> Any:
    """A route as stored: a JSON scalar (str, int, float, bool), or a list of them for a
    multi-label route (duplicates dropped, first-seen order). Anything else (a dict, an
    object) raises ``MetricInputError`` naming ``where``."""
    if v is None or isinstance(v, (str, int, float)):
        return v
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v)
        for x in items:
            if not isinstance(x, (str, int, float)):
                raise MetricInputError(f"{where}: a route in a list must be a string or number, "
                                       f"got {x!r}")
        return list(dict.fromkeys(items))
    raise MetricInputError(f"{where}: a route must be a string, number or list of them, "
                           f"got {type(v).__name__}")


def run_route(traj: Trajectory, case: Case) -> Any:
    """The route one run took, for the routing metrics (trajcheck policy, ``ROUTE_SOURCE``).

    1. ``traj.metadata["route"]`` when set: ``trajcheck run`` stores there the ``route`` an
       agent returns (``run.agent_return.AgentRun.route``), and a trace author or reader may set it
       (e.g. the sub-agent a supervisor handed off to).
    2. Otherwise, only when the case carries an ``expected_route`` (a case that does not test
       routing gets no invented route): the first tool call's name -- a router that routes by
       calling a tool or a handoff function (``transfer_to_billing``) -- or, when the
       expected route is a list (a compound request routed to several places), the distinct
       names of all calls in first-call order.
    3. Otherwise None (the routing metrics count it as the label ``(none)``: no route taken).

    ``Step.agent_name`` is not used: in a single-agent trace every step carries the same
    name, which would read as a route that is always "taken".

    Returns a string/number, a list of them (multi-label), or None. Raises
    ``MetricInputError`` naming the case for a route that is not a string, number or list.
    """
    where = f"case {case.id!r}, run {traj.metadata.get('run_id', '?')!r}"
    r = traj.metadata.get("route")
    if r is not None:
        return _route_label(r, f"{where}: metadata['route']")
    if case.expected_route is None:
        return None
    calls = traj.tool_calls()
    if not calls:
        return None
    if isinstance(case.expected_route, (list, tuple, set, frozenset)):
        return list(dict.fromkeys(c.name for c in calls))
    return calls[0].name


def _matched_tools(traj: Trajectory, case: Case, context: MatchContext | None
                   ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    sm = shared(traj, case)
    if sm is not None and same_modes(case, case.args_mode):  # the run's one matching
        ecs = case.expected_calls
        called = sm.kept_calls
        matched = tuple((ecs[j].name, called[k].name) for k, j in enumerate(sm.ml) if j != -1)
        return tuple(e.name for e in ecs), tuple(c.name for c in called), matched
    calls = traj.tool_calls()
    skip = retried_failures(traj)
    pred = [c for i, c in enumerate(calls) if i not in skip]
    exp = list(case.expected_calls)
    m = match_calls(pred, exp, args_mode=case.args_mode, context=context)
    matched = tuple((exp[j].name, pred[i].name) for i, j in m.pairs)
    return tuple(e.name for e in exp), tuple(c.name for c in pred), matched


def score_run(traj: Trajectory, case: Case, *, context: MatchContext | None = None,
              keep_transcript: bool | None = None, keep_calls: bool = True,
              compact: bool = False) -> RunResult:
    """Score one run against its case (every per-run metric; see ``RunResult``).

    ``keep_transcript`` None keeps the compact transcript of every run (the HTML report
    opens any run, passing or failing); False drops it. ``keep_calls`` keeps the
    expected-vs-called table (``run_detail.call_detail``). The case's definition hash
    (``fingerprint.case_hash``) is always recorded. Steps, calls, tokens, cost and latency are ``metrics.efficiency.run_stats``' figures
    (steps = agent turns); the route is ``run_route``'s. The run id is
    ``metadata["run_id"]``, else ``f"{case.id}-{trial}"``. The failure reason is the
    outcome's one-line reason for a failed run, else the first critical forbidden-sequence
    violation, else None (reports list composite-gate failures with the composite's reason).
    ``compact`` True returns the compact form a streaming or engine evaluation keeps for a
    run no report shows: every figure and flag, but ``metrics`` holds only what the suite
    figures read (``ordering.score``, ``call_rates.parts.forbidden``/``duplicate``,
    ``forbidden_sequences.passed``) and there is no transcript or call table.
    Raises ``TrajcheckError`` subclasses from the metrics on malformed cases.
    """
    if compact:  # one pass and one matching for cases and runs inside its scope, same result
        fast = fast_compact(traj, case, context)
        if fast is not None:
            return fast
    with per_run():  # one join, one retry scan and one matching per run, shared by the metrics
        return _score_run(traj, case, context, keep_transcript, keep_calls, compact)


def score_compact_by_id(traj: Trajectory, cases: Mapping[str, Case], cid: str, *,
                        context: MatchContext | None = None) -> RunResult:
    """``score_run(traj, cases[cid], context=context, compact=True)``, building the case
    only when the run needs the general path: the fast scorer reads the case's plan by id
    (``case_plan.plan_for``; a ``case_store.CaseStore`` gives it without building the
    case). Raises ``KeyError`` for an id not in ``cases``, else what ``score_run`` raises."""
    fast = fast_plan(traj, plan_for(cases, cid))
    if fast is not None:
        return fast  # type: ignore[no-any-return]
    with per_run():
        return _score_run(traj, cases[cid], context, None, True, True)


def _score_run(traj: Trajectory, case: Case, context: MatchContext | None,
               keep_transcript: bool | None, keep_calls: bool, compact: bool) -> RunResult:
    if context is not None:  # give every metric the case's input/user (semantic relevance checks)
        from ..metrics.calls import context_for

        context = context_for(case, context)
    meta = traj.metadata
    trial = meta.get("trial")
    run_id = run_id_of(meta.get("run_id"), case.id, trial)
    outcome = run_outcome(traj, case, context=context)
    success = bool(outcome.passed)
    prf = tool_call_prf(traj, case, context=context)
    lcs = lcs_prf(traj, case, context=context)
    names = multiset_prf(traj, case, context=context)
    rates = call_rates(traj, case, context=context)
    forb = check_forbidden_sequences(traj, case.forbidden_sequences) if case.forbidden_sequences else None
    order = ordering_accuracy(traj, case.precedence) if case.precedence else None
    rec = error_recovery(traj, case=case)
    comp = score_trajectory(traj, case, outcome=outcome, context=context)
    fault_run = bool(case.faults) or bool(meta.get("faults"))
    false_success: bool | None = None
    if fault_run or rec.parts.get("errors"):
        # DESIGN.md "Error recovery": SANDBOX's definition (claim of success while the task
        # failed), applied to this one run, decided on fault runs and on any run where a call
        # failed (a claim can hide only a failure); the suite rate is the share over fault runs.
        from ..metrics.recovery import ClaimDetector, false_success_rate

        fsr = false_success_rate([(traj, success)], detector=ClaimDetector.for_case(case))
        false_success = bool(fsr.parts.get("n_false_success"))
    exp_tools, called, matched = _matched_tools(traj, case, context)
    stats = run_stats(traj, success)
    metrics: dict[str, Any]
    if compact:
        keep_transcript = keep_calls = False
        metrics = {"call_rates": {"parts": {"forbidden": bool(rates.parts.get("forbidden")),
                                            "duplicate": bool(rates.parts.get("duplicate"))}}}
        if forb is not None:
            metrics["forbidden_sequences"] = {"passed": forb.passed}
        if order is not None:
            metrics["ordering"] = {"score": order.score}
    else:
        metrics = {k: v for k, v in {
            "outcome": _md(outcome), "tool_call_prf": _md(prf), "call_rates": _md(rates),
            "forbidden_sequences": _md(forb), "ordering": _md(order),
            "error_recovery": _md(rec), "composite": _md(comp)}.items() if v is not None}
    failure = None
    if not success:
        failure = outcome.reason
    elif forb is not None and forb.passed is False:
        failure = forb.reason
    if keep_transcript is None:
        keep_transcript = True
    # RunResult's fields in field order, built without the frozen __init__ (same object)
    return run_result_of({
        "run_id": run_id, "case_id": case.id, "trial": trial if isinstance(trial, int) else None,
        "success": success, "outcome_reason": outcome.reason, "failure_reason": failure,
        "precision": _r(getattr(prf, "precision", None)), "recall": _r(getattr(prf, "recall", None)),
        "f1": _r(getattr(prf, "f1", prf.score)), "composite": _r(comp.score),
        "composite_passed": comp.passed, "steps": stats.steps or 0, "n_calls": stats.tool_calls or 0,
        "tokens": stats.tokens, "cost_usd": _usd(stats.cost_usd), "latency_ms": _r(stats.latency_ms),
        "route": run_route(traj, case), "expected_route": case.expected_route,
        "recorded_reward": _r(meta["reward"]) if isinstance(meta.get("reward"), (int, float)) else None,
        "fault_run": fault_run, "false_success": false_success, "expected_tools": exp_tools,
        "called_tools": called, "matched": matched, "metrics": metrics,
        "transcript": transcript(traj) if keep_transcript else None,
        "forbidden_checked": bool(case.forbidden_calls or case.forbidden_sequences),
        "case_hash": case_hash(case),
        "calls": call_detail(traj, case, context=context) if keep_calls else None,
        "recorded_checks": recorded_checks(traj, outcome),
        "recorded_group": recorded_group(meta.get("recorded_task_id"), case.id),
        "category": case.metadata.get("category") if isinstance(case.metadata.get("category"), str) else None,
        "lcs_f1": _r(lcs.f1), "name_f1": _r(names.f1),
    })


def recorded_checks(traj: Trajectory, outcome: MetricResult) -> dict[str, dict[str, Any]] | None:
    """The source's recorded verdicts on the run's writes beside trajcheck's own.

    Readers put a source's verdicts other than its reward in ``metadata["recorded_checks"]``
    as ``{name: bool}`` (tau2: ``db_match``, the final database equals the expected one;
    tau-bench: ``r_actions`` == 1, the same test by hash). Trajcheck's comparable verdict is
    the outcome's judgement of the writes alone, without the response check
    (``outcome_from_calls`` ``parts["writes_ok"]``; with database snapshots, the final-state
    check). Returns ``{name: {"recorded", "ours", "reason"}}``, or None when the source
    records no such verdict or trajcheck gave none.
    """
    rec = traj.metadata.get("recorded_checks")
    if not isinstance(rec, Mapping) or not rec:
        return None
    parts = outcome.parts or {}
    ours = parts.get("writes_ok")
    reason = parts.get("writes_reason")
    if ours is None and isinstance(parts.get("final_state"), bool):
        ours, reason = parts["final_state"], outcome.reason
    if not isinstance(ours, bool):
        return None
    return {str(k): {"recorded": bool(v), "ours": ours, "reason": str(reason or outcome.reason)}
            for k, v in rec.items() if isinstance(v, bool)} or None
