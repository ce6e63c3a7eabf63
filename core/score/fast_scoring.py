"""Fast per-run scoring: the compact ``RunResult`` of ``scoring.score_run`` from one pass
over the run and one matching shared by every metric.

``score_run(compact=True)`` computes each metric with its own function (outcome, tool-call
P/R/F1, LCS and name F1, call rates, composite with its argument accuracy, run figures),
and each of those walks the run, joins results, sets retries aside and matches calls
again. For a case inside the scope of ``case_plan`` (every expected call ``exact``, no
sequence rules, precedence, faults, required response, route or special metadata: so no
matcher ever reads a ``MatchContext``) and a run with no database snapshots or special
metadata, ``fast_compact`` reads
the run once (calls, their steps, failed and retried calls, agent turns), builds the
compatibility rows once from the case's canonical-key plan (``exact_match.rows_of``, the
very rows ``matching.compatibility`` builds) and derives every field from those facts with
the general path's own formulas; where a reason needs a closer look (the closest call to a
missing write, unchanged writes) it calls the general path's own helper. The result is the
same ``RunResult``, field by field (tests/test_fast_scoring.py checks it against the
general path). Anything else returns None and ``score_run`` takes the general path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..match.exact_match import _NoKey, rows_of
from ..match.matching import _exact_key, _hopcroft_karp, is_failed
from ..metrics.formulas import (
    AGENT_KINDS,
    duplicates_from,
    n_counted,
    name_counts,
    prf_counts,
    recorded_group,
    result_failed,
    retried_indices,
    run_figures,
    run_id_of,
    unrecovered_failures,
)
from ..metrics.recovery import _final_text as final_text
from ..metrics.sequences import claims_success
from ..metrics.trajectory_scores import lcs_counts
from ..model import Case, Trajectory
from ..report.scorecard import _r, run_result_of
from .case_plan import CasePlan, case_plan, forbidden_match
from .fast_figures import argument_accuracy, composite_score
from .fast_outcome import outcome
from .fast_scope import run_in_scope

_AGENT_KINDS = frozenset(AGENT_KINDS)  # for lookups


def fast_compact(traj: Trajectory, case: Case, context: Any = None) -> Any:
    """``score_run(traj, case, context=context, compact=True)`` (a ``RunResult``) for a run
    and case inside the fast path's scope (module doc), else None. Raises nothing the general path would not raise on the same input: a
    case or run it cannot vouch for falls back. ``context`` is never read: every matcher
    in the scope is ``exact``."""
    return fast_plan(traj, case_plan(case))


def fast_plan(traj: Trajectory, plan: CasePlan | None) -> Any:
    """``fast_compact`` of ``traj`` against the case of ``plan`` (``case_plan.case_plan``,
    or ``case_plan.plan_for`` by case id: the case is never built here), or None (for ``plan`` None too: a case outside the scope)."""
    if plan is None:
        return None
    meta = traj.metadata
    if type(traj) is not Trajectory or not run_in_scope(meta):
        return None
    return _score(traj, plan, meta)


def _score(traj: Trajectory, plan: CasePlan, meta: Any) -> Any:
    """The compact result of ``traj`` against the case of ``plan``, or None when a value
    calls for the general path."""
    # --- one pass over the run: calls, their steps, agent turns, failed results, and
    # whether any result is a JSON object (only those can show a write changed nothing)
    calls = []
    call_step: list[int] = []
    n_agent = 0
    any_fail = json_like = False
    tokens: list[int] = []  # per step figures for efficiency.run_stats
    costs: list[Any] = []
    lats: list[Any] = []
    timed = False
    agent_kinds = _AGENT_KINDS
    si = -1
    for s in traj.steps:
        si += 1
        if s.kind in agent_kinds:
            n_agent += 1
        u = s.usage
        if u is not None:
            t = u.total_tokens
            if t is None:
                t = u.total
            if t is not None:
                tokens.append(t)
        if s.cost_usd is not None:
            costs.append(s.cost_usd)
        if s.latency_ms is not None:
            lats.append(s.latency_ms)
        if s.start_time is not None or s.end_time is not None:
            timed = True
        tcs = s.tool_calls
        if tcs:
            for c in tcs:
                a = c.args
                if a is not None and type(a) is not dict:
                    return None
                calls.append(c)
                call_step.append(si)
        res = s.tool_result
        if res is not None:
            if not any_fail and result_failed(res.is_error, res.error):
                any_fail = True
            out = res.output
            if (out[:1] == "{") if type(out) is str else isinstance(out, Mapping):
                json_like = True
    n = len(calls)
    pairs_held: list[Any] = []

    def pairs() -> list[Any]:  # the run's calls joined to results (Trajectory.pairs), once
        if not pairs_held:
            joined = _joined_by_id(traj, n)
            pairs_held.append(traj.pairs() if joined is None else list(zip(calls, joined)))
        return pairs_held[0]  # type: ignore[no-any-return]

    failed = [is_failed(r) for _, r in pairs()] if any_fail else None

    # --- run figures (formulas.run_figures, as efficiency.run_stats), from the per-step
    # figures read
    tu = traj.total_usage
    latency = traj.total_latency_ms
    starts: list[Any] = []
    ends: list[Any] = []
    if latency is None and timed:
        steps = traj.steps
        starts = [s.start_time for s in steps if s.start_time is not None]
        ends = [s.end_time for s in steps if s.end_time is not None]
    total_tokens, cost, latency = run_figures(
        tu.total if tu is not None else None, tokens, traj.total_cost_usd, costs, latency,
        starts, ends, lats)
    return score_facts(plan, meta, [c.name for c in calls], [c.args for c in calls], call_step,
                       n_agent, failed, total_tokens, cost, latency, pairs if json_like else None,
                       final=lambda: final_text(traj))


def score_facts(plan: CasePlan, meta: Any, cnames: list[str], cargs: list[Any],
                call_step: list[int], n_agent: int, failed: list[bool] | None,
                total_tokens: Any, cost: Any, latency: Any,
                pairs: Callable[[], list[Any]] | None,
                final: Callable[[], str | None] | None = None, *, reasons: bool = True) -> Any:
    """The compact ``RunResult`` of a run against the case of ``plan`` from the facts read
    once from it, or None when a value calls for the general path (a call's arguments the
    exact rows cannot key, NaN or foreign values among them).

    ``meta``: the run's metadata (keys inside ``fast_scope.RUN_META_FAST``); ``cnames``/``cargs``: every
    call's tool name and arguments (an object or None), in run order; ``call_step``: each
    call's step position; ``n_agent``: agent turns (``formulas.AGENT_KINDS``);
    ``failed``: whether each call's result failed (None: no result failed); the run
    figures ``total_tokens``, ``cost``, ``latency`` as ``efficiency.run_stats`` reads them
    (None: unknown); ``pairs``: gives ``Trajectory.pairs()`` of the run when some result is
    a JSON object (only those can show a write changed nothing), else None; ``final``:
    gives the run's final response (``recovery._final_text``) when the false-success check
    needs it (None: such a run takes the general path); ``reasons`` False leaves a failing
    run's reason out (``outcome_reason`` and ``failure_reason`` None: for a caller that
    reads none, ``pipeline.score_into``). Both readers
    of a run (``_score`` over a ``Trajectory``, ``fused_scoring`` over a parsed line) give
    their facts here, so both give the same result."""
    n = len(cnames)
    kept: Any = range(n)
    knames, kargs = cnames, cargs
    if failed is not None:  # matching.retried_failures: a failed call of a tool called again later
        retried = retried_indices(cnames, failed)
        if retried:
            kept = [i for i in range(n) if i not in retried]
            knames = [cnames[i] for i in kept]
            kargs = [cargs[i] for i in kept]

    # a call without arguments here did not parse or was not recorded (content recording
    # off), which only the general path can tell apart: name F1 counts the second kind
    if None in cargs and any(a is None and nm in plan.by_name for nm, a in zip(cnames, cargs)):
        return None
    # --- one set of compatibility rows (kept calls x expected calls), one matching
    got = rows_of(plan.plan, zip(knames, kargs))
    if got is None:
        return None
    rows = got[0]
    names = plan.exp_names
    n_exp = len(names)
    ml = _hopcroft_karp(rows, n_exp)

    # --- per call: counts for P/R/F1, name F1 and argument accuracy, the matched pairs
    opt = plan.optional
    tp = nonopt_tp = n_nonopt = 0
    all_n: dict[str, int] = {}  # per tool: kept calls, those with parsed arguments, those paired
    parsed: dict[str, int] = {}
    paired: dict[str, int] = {}
    matched = []
    for nm, a, j in zip(knames, kargs, ml):
        all_n[nm] = all_n.get(nm, 0) + 1
        if a is not None:
            parsed[nm] = parsed.get(nm, 0) + 1
        o = nm in opt
        if not o:
            n_nonopt += 1
        if j != -1:
            tp += 1
            if not o:
                nonopt_tp += 1
            paired[nm] = paired.get(nm, 0) + 1
            matched.append((names[j], nm))
    precision, recall, f1 = prf_counts(tp, n_counted(tp, n_nonopt, nonopt_tp), n_exp)

    # --- duplicates (metrics.steps.step_eval): identical counted calls beyond those matched
    duplicate = False
    if len(all_n) < len(knames):
        classes: dict[Any, list[int]] = {}
        try:
            for k, (nm, a) in enumerate(zip(knames, kargs)):
                if a is not None:
                    classes.setdefault((nm, _exact_key(a)), []).append(k)
        except (_NoKey, RecursionError):
            return None  # NaN or foreign values: step_eval's own keys decide
        duplicate = any(len(ks) > duplicates_from(sum(ml[k] != -1 for k in ks))
                        for ks in classes.values() if len(ks) > 1)
    forbidden_counted = critical = False
    if plan.forbidden:
        bad = _forbidden_names(plan, cnames)
        if bad:
            critical = True
            forbidden_counted = any(nm in bad for nm in all_n)

    cid = plan.case_id
    success, reason = outcome(cid, plan, cnames, cargs, failed, kept, knames, rows, ml,
                              nonopt_tp == n_nonopt == n_exp, pairs, reasons)

    # --- name F1 (trajectory_scores.multiset_prf; also the composite's tool selection)
    ntp, ncounted = name_counts(all_n, parsed, plan.by_name, opt)
    name_f1 = prf_counts(ntp, ncounted, n_exp)[2]

    # --- LCS F1 (trajectory_scores.lcs_prf) over the same rows and matching
    n_lcs, n_nonopt_lcs = lcs_counts(kept, call_step, ml, lambda: rows, n_exp, knames, opt,
                                     (tp, nonopt_tp))
    lcs_f1 = prf_counts(n_lcs, n_counted(n_lcs, n_nonopt, n_nonopt_lcs), n_exp)[2]

    # --- composite (metrics.composite.score_trajectory with the outcome given). Its rules
    # factor is 1 here: precedence and forbidden_sequences are outside the fast scope
    # (fast_scope.CASE_FIELDS_GENERAL), so a forbidden call is the only rule (``critical``)
    composite, comp_passed = composite_score(
        success, name_f1,
        None if critical else argument_accuracy(plan, knames, kargs, ml, parsed, paired),
        n_agent, plan, critical)

    # --- false success (scoring: decided when a call failed; recovery.is_false_success): False
    # unless the task failed and some failed tool never succeeded (formulas.unrecovered_failures);
    # then the final response decides, with the default cues (a case with its own is outside
    # the scope)
    false_success: bool | None = None
    if failed is not None:
        false_success = False
        if not success and unrecovered_failures(cnames, failed):
            if final is None:
                return None
            false_success = claims_success(final())

    trial = meta.get("trial")
    reward = meta.get("reward")
    # RunResult's fields in order (scorecard.run_result_of)
    return run_result_of({
        "run_id": run_id_of(meta.get("run_id"), cid, trial),
        "case_id": cid, "trial": trial if isinstance(trial, int) else None,
        "success": success, "outcome_reason": reason,
        "failure_reason": None if success else reason,
        # prf_counts' figures and the composite are finite and never -0.0: _r gives them back
        "precision": precision, "recall": recall, "f1": f1,
        "composite": composite, "composite_passed": comp_passed,
        "steps": n_agent, "n_calls": n,
        "tokens": int(total_tokens) if total_tokens is not None else None,
        "cost_usd": _r(cost), "latency_ms": _r(latency), "route": None, "expected_route": None,
        "recorded_reward": _r(reward) if isinstance(reward, (int, float)) else None,
        "fault_run": False, "false_success": false_success,
        "expected_tools": names, "called_tools": tuple(knames), "matched": tuple(matched),
        "metrics": {"call_rates": {"parts": {"forbidden": forbidden_counted,
                                             "duplicate": duplicate}}},
        "transcript": None, "forbidden_checked": bool(plan.forbidden),
        "case_hash": plan.hash_of(), "calls": None, "recorded_checks": None,
        "recorded_group": recorded_group(meta.get("recorded_task_id"), cid),
        "category": plan.category,
        "lcs_f1": lcs_f1, "name_f1": name_f1,
    })


def _joined_by_id(traj: Trajectory, n: int) -> list[Any] | None:
    """Each of the run's ``n`` calls' result as ``Trajectory.pairs`` joins them, when every
    call carries an id no open call shares and every result names an earlier open call
    (the join is then by id alone); else None (``pairs`` decides)."""
    joined: list[Any] = [None] * n
    open_ids: dict[Any, int] = {}
    i = 0
    for s in traj.steps:
        for c in s.tool_calls:
            k = c.call_id
            if k is None or k in open_ids:
                return None
            open_ids[k] = i
            i += 1
        r = s.tool_result
        if r is not None:
            j = open_ids.pop(r.call_id, None)
            if j is None:
                return None
            joined[j] = r
    return joined


def _forbidden_names(plan: CasePlan, cnames: list[str]) -> set[str]:
    """The tool names among ``cnames`` that match a ``forbidden_calls`` pattern
    (``case_plan.forbidden_match``, remembered per pattern list and name across plans: plans
    are built per case object or decoded per run, so a plan's own table starts empty on
    most runs)."""
    pats = plan.forbidden
    return {nm for nm in cnames if forbidden_match(pats, nm)}


__all__ = ["fast_compact", "fast_plan", "score_facts"]
