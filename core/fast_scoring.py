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
general path). Anything else returns None and ``score_run`` takes the general path;
``FALLBACKS`` counts why.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .case_plan import CasePlan, case_plan
from .exact_match import _NoKey, rows_of
from .explain import explain_mismatch, value_diff
from .matchers import MatchContext, exact_equal
from .matching import _exact_args_ok, _exact_key, _hopcroft_karp, max_weight_assignment
from .metrics.calls import prf_counts
from .metrics.composite import COMPONENTS, DEFAULT_WEIGHTS, _nearest_simple
from .metrics.efficiency import step_efficiency
from .metrics.outcome import _closest_call_note, unchanged_note, unchanged_writes, writes_made
from .metrics.trajectory_scores import _lcs_groups
from .model import Case, Trajectory
from .runmemo import per_run
from .scorecard import RunResult, _r, _usd

#: run metadata the fast path knows to have no effect on the scores (anything else: general path)
RUN_META = frozenset({"case_id", "trial", "run_id", "reward", "recorded_task_id", "problems"})
_AGENT_KINDS = frozenset({"assistant", "tool_call", "final_response"})  # efficiency.AGENT_STEP_KINDS

#: how many runs took the general path, by reason ("case", "run", "args")
FALLBACKS: Counter[str] = Counter()
FAST: Counter[str] = Counter()  # runs scored here ("runs")

_WEIGHTS = tuple(DEFAULT_WEIGHTS[k] for k in COMPONENTS)
_NEAREST: dict[float, float] = {}  # composite._nearest_simple memo (few distinct sums)


def _nearest(x: float) -> float:
    got = _NEAREST.get(x)
    if got is None:
        if len(_NEAREST) > 65536:
            _NEAREST.clear()
        got = _NEAREST[x] = _nearest_simple(x)
    return got


def fast_compact(traj: Trajectory, case: Case, context: Any = None) -> RunResult | None:
    """``score_run(traj, case, context=context, compact=True)`` for a run and case inside the fast path's
    scope (module doc), else None (counted in ``FALLBACKS``). Raises nothing the general
    path would not raise on the same input: a case or run it cannot vouch for falls back."""
    plan = case_plan(case)  # every matcher exact: a context (semantic, judge) is never read
    if plan is None:
        FALLBACKS["case"] += 1
        return None
    meta = traj.metadata
    if type(traj) is not Trajectory or not meta.keys() <= RUN_META:
        FALLBACKS["run"] += 1
        return None
    with per_run():  # the result join (Trajectory.pairs) once, shared with the notes' helpers
        r = _score(traj, case, plan, meta)
    if r is None:
        FALLBACKS["args"] += 1
    else:
        FAST["runs"] += 1
    return r


def _score(traj: Trajectory, case: Case, plan: CasePlan, meta: Any) -> RunResult | None:
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
    for si, s in enumerate(traj.steps):
        if s.kind in _AGENT_KINDS:
            n_agent += 1
        u = s.usage
        if u is not None:
            t = u.total
            if t is not None:
                tokens.append(t)
        if s.cost_usd is not None:
            costs.append(s.cost_usd)
        if s.latency_ms is not None:
            lats.append(s.latency_ms)
        if s.start_time is not None or s.end_time is not None:
            timed = True
        for c in s.tool_calls:
            if c.args is not None and type(c.args) is not dict:
                return None
            calls.append(c)
            call_step.append(si)
        res = s.tool_result
        if res is not None:
            if res.is_error is True or res.error:
                any_fail = True
            out = res.output
            if (out[:1] == "{") if type(out) is str else isinstance(out, Mapping):
                json_like = True
    n = len(calls)
    failed: list[bool] | None = None
    kept: list[int]
    if any_fail:  # matching.retried_failures: a failed call of a tool called again later
        failed = [r is not None and (r.is_error is True or bool(r.error)) for _, r in traj.pairs()]
        retried: set[int] = set()
        seen: set[str] = set()
        for i in range(n - 1, -1, -1):
            if calls[i].name in seen and failed[i]:
                retried.add(i)
            seen.add(calls[i].name)
        kept = [i for i in range(n) if i not in retried]
    else:
        kept = list(range(n))
    kc = [calls[i] for i in kept]
    knames = [c.name for c in kc]

    # --- one set of compatibility rows (kept calls x expected calls), one matching
    got = rows_of(plan.plan, [(c.name, c.args) for c in kc])
    if got is None:
        return None
    rows = got[0]
    n_exp = len(plan.exp_names)
    ml = _max_matching(rows, n_exp)
    opt = plan.optional
    tp = nonopt_tp = counted = n_nonopt = 0
    for nm, j in zip(knames, ml):
        o = nm in opt
        if not o:
            n_nonopt += 1
        if j != -1:
            tp += 1
            counted += 1
            nonopt_tp += not o
        elif not o:
            counted += 1
    precision, recall, f1 = prf_counts(tp, counted, n_exp)

    # --- duplicates (metrics.steps.step_eval): identical counted calls beyond those matched
    duplicate = False
    if len(set(knames)) < len(knames):
        classes: dict[Any, list[int]] = {}
        try:
            for k, c in enumerate(kc):
                if c.args is not None:
                    classes.setdefault((c.name, _exact_key(c.args)), []).append(k)
        except (_NoKey, RecursionError):
            return None  # NaN or foreign values: step_eval's own keys decide
        duplicate = any(len(ks) > max(sum(ml[k] != -1 for k in ks), 1)
                        for ks in classes.values() if len(ks) > 1)
    forbidden_counted = critical = False
    if plan.forbidden:
        bad = {nm for nm in {c.name for c in calls} if plan.is_forbidden(nm)}
        critical = bool(bad)
        forbidden_counted = critical and any(nm in bad for nm in knames)

    success, reason = _outcome(traj, case, plan, calls, failed, kept, rows, ml, json_like)

    # --- name F1 (trajectory_scores.multiset_prf; also the composite's tool selection)
    ok_n: dict[str, int] = {}  # per tool: calls whose arguments parsed, and all calls
    all_n: dict[str, int] = {}
    for c in kc:
        nm = c.name
        all_n[nm] = all_n.get(nm, 0) + 1
        if c.args is not None:
            ok_n[nm] = ok_n.get(nm, 0) + 1
    ntp = ncounted = 0
    by_name = plan.by_name
    for nm, n_all in all_n.items():
        m = min(ok_n.get(nm, 0), len(by_name.get(nm, ())))
        ntp += m
        ncounted += m if nm in opt else n_all
    name_f1 = prf_counts(ntp, ncounted, n_exp)[2]

    # --- LCS F1 (trajectory_scores.lcs_prf) over the same rows. When the maximum matching
    # already runs in order across steps, it is a longest common subsequence: its pairs
    # align, no alignment has more (each is a matching), and every maximum matching pairs
    # as many calls of each tool, so as many non-optional ones.
    n_lcs, n_nonopt_lcs = tp, nonopt_tp
    prev_hi = -1
    last = None
    lo = hi = -1
    for k, i in enumerate(kept):
        j = ml[k]
        st = call_step[i]
        if st != last:  # a new step: its pairs must all come after the previous steps'
            prev_hi = max(prev_hi, hi)
            lo, hi, last = n_exp, -1, st
        if j != -1:
            if j <= prev_hi:
                n_lcs = -1
                break
            lo, hi = min(lo, j), max(hi, j)
    if n_lcs == -1:
        groups: list[list[int]] = []
        last = None
        for k, i in enumerate(kept):
            st = call_step[i]
            if groups and st == last:
                groups[-1].append(k)
            else:
                groups.append([k])
            last = st
        n_lcs, n_nonopt_lcs = _lcs_groups(groups, [set(r) for r in rows], n_exp,
                                          [nm not in opt for nm in knames])
    lcs_f1 = prf_counts(n_lcs, n_lcs + (n_nonopt - n_nonopt_lcs), n_exp)[2]

    # --- composite (metrics.composite.score_trajectory with the outcome given)
    composite: float | None
    comp_passed: bool | None
    if critical:
        composite, comp_passed = 0.0, False
    else:
        values = (1.0 if success else 0.0, name_f1, _argument_accuracy(plan, kc, ml),
                  step_efficiency(n_agent, plan.optimal_steps, plan.max_steps))
        applicable = [(w, v) for w, v in zip(_WEIGHTS, values) if v is not None and w > 0]
        if applicable:
            total_w = sum(w for w, _ in applicable)
            raw = min(1.0, max(0.0, _nearest(math.fsum(w / total_w * float(v or 0.0)
                                                       for w, v in applicable))))
            composite, comp_passed = raw, raw >= plan.threshold
        else:
            composite, comp_passed = None, None

    # --- run figures (metrics.efficiency.run_stats), from the per-step figures read
    tu = traj.total_usage
    total_tokens: Any = (tu.total if tu is not None and tu.total is not None
                         else (sum(tokens) if tokens else None))
    cost = traj.total_cost_usd
    if cost is None:
        cost = math.fsum(costs) if costs else None
    latency = traj.total_latency_ms
    if latency is None:
        steps = traj.steps
        starts = [s.start_time for s in steps if s.start_time is not None] if timed else None
        ends = [s.end_time for s in steps if s.end_time is not None] if timed else None
        latency = ((max(ends) - min(starts)) * 1000.0 if starts and ends
                   else (math.fsum(lats) if lats else None))

    metrics: dict[str, Any] = {"call_rates": {"parts": {"forbidden": forbidden_counted,
                                                        "duplicate": duplicate}}}
    trial = meta.get("trial")
    g = meta.get("recorded_task_id")
    cat = case.metadata.get("category")
    reward = meta.get("reward")
    names = plan.exp_names
    return RunResult(
        run_id=str(meta.get("run_id") or f"{case.id}-{trial if trial is not None else 0}"),
        case_id=case.id, trial=trial if isinstance(trial, int) else None,
        success=success, outcome_reason=reason, failure_reason=None if success else reason,
        precision=_r(precision), recall=_r(recall), f1=_r(f1), composite=_r(composite),
        composite_passed=comp_passed, steps=n_agent, n_calls=n,
        tokens=int(total_tokens) if total_tokens is not None else None, cost_usd=_usd(cost),
        latency_ms=_r(latency), route=None, expected_route=None,
        recorded_reward=_r(reward) if isinstance(reward, (int, float)) else None,
        fault_run=False, false_success=None, expected_tools=names, called_tools=tuple(knames),
        matched=tuple((names[j], nm) for nm, j in zip(knames, ml) if j != -1),
        metrics=metrics, transcript=None, forbidden_checked=bool(case.forbidden_calls),
        case_hash=plan.hash_of(case), calls=None, recorded_checks=None,
        recorded_group=str(g) if g is not None and str(g) != case.id else None,
        category=cat if isinstance(cat, str) else None, lcs_f1=_r(lcs_f1), name_f1=_r(name_f1))


def _max_matching(rows: list[list[int]], n_right: int) -> list[int]:
    """``matching._hopcroft_karp(rows, n_right)``: its greedy start, and the search for
    augmenting paths only when a call left free has a candidate (a path starts there)."""
    taken = [False] * n_right
    out: list[int] = []
    stuck = False
    for row in rows:
        for j in row:
            if not taken[j]:
                taken[j] = True
                out.append(j)
                break
        else:
            out.append(-1)
            stuck = stuck or bool(row)
    return _hopcroft_karp(rows, n_right) if stuck else out


def _outcome(traj: Trajectory, case: Case, plan: CasePlan, calls: list[Any],
             failed: list[bool] | None, kept: list[int], rows: list[list[int]], kml: list[int],
             json_like: bool) -> tuple[bool, str]:
    """``metrics.outcome.outcome_from_calls`` (no snapshots, no replay or no-effect
    metadata, no required response): the verdict and its one-line reason."""
    opt = plan.optional
    pos = plan.write_pos
    writes = plan.writes
    pred_idx: list[int] = []
    out_rows: list[list[int]] = []
    for k, i in enumerate(kept):  # retried calls failed, so every write candidate is kept
        if calls[i].name in opt or (failed is not None and failed[i]):
            continue
        pred_idx.append(i)
        out_rows.append([pos[j] for j in rows[k]])  # a row holds calls of its own (write) tool
    if failed is None and len(writes) == len(plan.exp_names):
        # every expected call is a write and no call failed: the calls set aside are the
        # optional ones, whose rows are empty, so the matching is the run's own one
        ml = [kml[k] for k, i in enumerate(kept) if calls[i].name not in opt]
    else:
        ml = _max_matching(out_rows, len(writes))
    matched_w = {b for b in ml if b != -1}
    missing = [writes[b] for b in range(len(writes)) if b not in matched_w]
    extra = [pred_idx[a] for a, b in enumerate(ml) if b == -1]
    same: dict[int, int] = {}
    if extra and json_like:  # only a JSON-object result can show a write changed nothing
        same = unchanged_writes(traj, extra)
        extra = [i for i in extra if i not in same]
    n_problems = len(missing) + len(extra)
    if n_problems:
        if missing:
            j = missing[0]
            e = case.expected_calls[j]
            why = _closest(traj, case, e, set(extra), calls, failed)
            first = f"case {case.id!r}: expected call {j} ({e.name}) not matched: {why}"
        else:
            c = calls[extra[0]]
            first = (f"case {case.id!r}: unexpected state-changing call {extra[0]} of the run: "
                     f"{c.name} {c.args!r}")
        return False, first + (f" (and {n_problems - 1} more)" if n_problems > 1 else "")
    return True, writes_made(len(writes)) + unchanged_note(same, calls)


def _closest(traj: Trajectory, case: Case, e: Any, unmatched: set[int], calls: list[Any],
             failed: list[bool] | None) -> str:
    """``metrics.outcome._closest_call_note`` for expected call ``e``. With no failed result
    in the run every call of the tool is a candidate, so the join of results to calls is
    not needed: the same choice (most expected arguments equal, unpaired calls first, then
    the earliest) and the same explanation, from the calls read."""
    ctx = MatchContext(case_input=case.input if isinstance(case.input, str) else None,
                       user=case.user)
    if failed is not None:
        return _closest_call_note(traj, e, unmatched, case.args_mode, ctx)
    same = [i for i, c in enumerate(calls) if c.name == e.name]
    if not same:
        return "the tool was never called"
    eargs = e.args or {}

    def closeness(i: int) -> tuple[int, int, int]:
        a = calls[i].args
        n_eq = (sum(1 for k, v in eargs.items() if k in a and value_diff(v, a[k]) is None)
                if a is not None else -1)
        return (-n_eq, 0 if i in unmatched else 1, i)

    best = min(same, key=closeness)
    why = explain_mismatch(calls[best], e, args_mode=case.args_mode, context=ctx)
    if why is None:
        return f"call {best} of the run matches it but is paired with another expected call"
    return f"closest call {best} of the run differs: {why}"


def _argument_accuracy(plan: CasePlan, kc: list[Any], ml: list[int]) -> float | None:
    """The score of ``metrics.calls.argument_accuracy`` for exact expected calls (``kc``:
    the kept calls, ``ml`` their matching): per tool, the maximum-weight assignment of its
    expected calls to its parsed calls, the weight being the share of expected arguments
    equal (a call with no argument constraint: whether the whole call matches); averaged
    over the pairs. A matched pair weighs 1 (its arguments match), so a tool whose calls
    and expected calls the matching pairs as far as they go adds only ones: the assignment
    of all ones is the maximum, and any maximum one is all ones."""
    preds: dict[str, list[dict[str, Any]]] = {}
    paired: dict[str, int] = {}
    by_name = plan.by_name
    for c, j in zip(kc, ml):
        if c.args is not None and c.name in by_name:
            preds.setdefault(c.name, []).append(c.args)
            if j != -1:
                paired[c.name] = paired.get(c.name, 0) + 1
    if not preds:
        return None
    acc: list[float] = []
    for nm, exps in by_name.items():  # in the order of the expected calls, as the metric
        ps = preds.get(nm)
        if not ps:
            continue
        n_pairs = min(len(ps), len(exps))
        if paired.get(nm, 0) == n_pairs:
            acc.extend([1.0] * n_pairs)
            continue
        weights = [[_weight(plan.exp_args[j], plan.exp_modes[j], pargs) for pargs in ps]
                   for j in exps]
        if len(exps) == 1 and len(ps) == 1:
            acc.append(weights[0][0])
            continue
        acc.extend(weights[r][col] for r, col in enumerate(max_weight_assignment(weights))
                   if col != -1)
    return math.fsum(acc) / len(acc)


def _weight(eargs: Any, mode: str, pargs: dict[str, Any]) -> float:
    """One cell of ``argument_accuracy``'s weights (``matching.argument_checks``)."""
    if mode == "ignore":
        return 1.0
    if not eargs:  # no argument constraint: the whole call decides
        return 1.0 if eargs is None or _exact_args_ok(pargs, eargs, mode) else 0.0
    ok = 0
    for k, ev in eargs.items():
        if k in pargs and exact_equal(ev, pargs[k]):
            ok += 1
    return ok / len(eargs)


__all__ = ["FALLBACKS", "FAST", "RUN_META", "fast_compact"]
