"""Score a suite of agent runs (cases x trials) into one ``Scorecard``.

``score_runs`` takes ``(Trajectory, Case)`` pairs -- recorded traces matched to their
cases, or the runs ``trajcheck run`` just made -- and returns a frozen ``Scorecard`` with

- one ``RunResult`` per run: outcome (success and why), tool-call P/R/F1, call rates,
  forbidden sequences, ordering, error recovery, composite score, efficiency figures and a
  one-line failure reason;
- one ``CaseResult`` per case: trials and successes;
- ``SuiteMetrics``: task success rate (Wilson interval), pass^k and pass@k for
  k = 1..min trials (seeded percentile bootstrap over tasks), mean F1, forbidden and
  duplicate call rates, false-success rate over fault-injected runs, efficiency over
  successful runs, routing quality, per-tool confusion;
- ``RecordedReward`` where the source records its own reward (tau-bench): that reward's
  pass^k and a 2x2 agreement matrix between trajcheck's outcome and the recorded reward,
  with every disagreement listed.

``evaluate`` keys trajectories to cases by ``Trajectory.metadata["case_id"]`` and reports
traces for unknown cases and cases without traces as problems (the rest is still scored).

Every figure is reported rounded to 4 decimals (money in US dollars to 8, so that a
fraction-of-a-cent per-run cost is not rounded to 0), and a scorecard's JSON round-trips
exactly (``Scorecard.load(p).to_dict() == json.load(p)``). The JSON layout is fixed by
``trajcheck/schemas/scorecard.schema.json`` (``SCHEMA_VERSION``).

The data model (``Scorecard``, ``SuiteMetrics``, ``RunResult``, ``CaseResult``,
``Estimate``, ``RecordedReward``, ``Disagreement``), its JSON form and the schema check
(``validate_scorecard_json``) live in ``trajcheck.scorecard``; they are re-exported here
so ``from trajcheck.suite import Scorecard`` keeps working. This module holds the scoring.

Definitions follow ../shared/DESIGN.md ("Semantics", "Policies"); each policy this
module applies is documented in the function that applies it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MetricInputError
from .model import Case, Trajectory
from .scorecard import (  # re-exported: the data model's old home
    AGREEMENT_CELLS,
    COST_DIGITS,
    DIGITS,
    SCHEMA_VERSION,
    CaseResult,
    Disagreement,
    Estimate,
    RecordedReward,
    RunResult,
    Scorecard,
    SuiteMetrics,
    _r,
    _usd,
    fmt_num,
    scorecard_schema,
    validate_scorecard_json,
)

if TYPE_CHECKING:  # pragma: no cover
    from .matchers import MatchContext
    from .metrics.result import MetricResult

DEFAULT_SEED = 0
DEFAULT_BOOTSTRAP = 2000
SUCCESS_TOL = 1e-6  # a recorded reward counts as success when within this of 1 (tau-bench rule)


# --------------------------------------------------------------------------- scoring

TRANSCRIPT_CHARS = 2000
NONE_LABEL = "(none)"


def _cut(x: Any, n: int = TRANSCRIPT_CHARS) -> Any:
    if x is None:
        return None
    s = x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, default=str)
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
    d = m.to_dict()
    return json.loads(json.dumps(d, default=str))  # type: ignore[no-any-return]


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
    3. A run the source marks as unfinished (``metadata["terminated"] is False``: it hit the
       step limit or was cut off before the conversation ended) is not a success, whatever
       its calls: the source never reached its end state (tau-bench gives such runs reward 0
       without a reward check).

    Returns a ``MetricResult`` named ``outcome`` (score 1.0/0.0, ``passed`` = success) whose
    reason is one line. Errors from the outcome metrics propagate (``TrajcheckError``).
    """
    from .metrics.outcome import outcome_from_calls

    snaps = _snapshots(traj)
    res: MetricResult
    if snaps is not None and case.expected_final_state is not None:
        from .metrics.outcome import check_final_state, response_includes, task_success

        fs = check_final_state(snaps[0], snaps[1], case.expected_final_state)
        resp = response_includes(traj, case.response_must_include)
        res = task_success(fs, resp)
    else:
        res = outcome_from_calls(traj, case, context=context)
    if traj.metadata.get("terminated") is False and res.passed:
        why = traj.metadata.get("termination") or "the run ended before the conversation did"
        from .metrics.result import MetricResult as _MR

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
       agent returns (``runner.AgentRun.route``), and a trace author or reader may set it
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
    from .matching import match_calls, retried_failures

    calls = traj.tool_calls()
    skip = retried_failures(traj)
    pred = [c for i, c in enumerate(calls) if i not in skip]
    exp = list(case.expected_calls)
    m = match_calls(pred, exp, args_mode=case.args_mode, context=context)
    matched = tuple((exp[j].name, pred[i].name) for i, j in m.pairs)
    return tuple(e.name for e in exp), tuple(c.name for c in pred), matched


def score_run(traj: Trajectory, case: Case, *, context: MatchContext | None = None,
              keep_transcript: bool | None = None) -> RunResult:
    """Score one run against its case (every per-run metric; see ``RunResult``).

    ``keep_transcript`` None keeps the compact transcript for failing runs only -- task
    failures and composite-gate failures (the HTML report renders them); True/False forces
    it. Steps, calls, tokens, cost and latency are ``metrics.efficiency.run_stats``' figures
    (steps = agent turns); the route is ``run_route``'s. The run id is
    ``metadata["run_id"]``, else ``f"{case.id}-{trial}"``. The failure reason is the
    outcome's one-line reason for a failed run, else the first critical forbidden-sequence
    violation, else None (reports list composite-gate failures with the composite's reason).
    Raises ``TrajcheckError`` subclasses from the metrics on malformed cases.
    """
    from .metrics.calls import tool_call_prf
    from .metrics.composite import score_trajectory
    from .metrics.efficiency import run_stats
    from .metrics.sequences import (
        call_rates,
        check_forbidden_sequences,
        error_recovery,
        ordering_accuracy,
    )

    if context is not None:  # give every metric the case's input/user (semantic relevance checks)
        from .metrics.calls import context_for

        context = context_for(case, context)
    meta = traj.metadata
    trial = meta.get("trial")
    run_id = str(meta.get("run_id") or f"{case.id}-{trial if trial is not None else 0}")
    outcome = run_outcome(traj, case, context=context)
    success = bool(outcome.passed)
    prf = tool_call_prf(traj, case, context=context)
    rates = call_rates(traj, case, context=context)
    forb = check_forbidden_sequences(traj, case.forbidden_sequences) if case.forbidden_sequences else None
    order = ordering_accuracy(traj, case.precedence) if case.precedence else None
    rec = error_recovery(traj)
    comp = score_trajectory(traj, case, outcome=outcome, context=context)
    fault_run = bool(case.faults) or bool(meta.get("faults"))
    false_success: bool | None = None
    if fault_run:
        # DESIGN.md "Error recovery": SANDBOX's definition (claim of success while the task
        # failed), applied to this one run; the suite rate is the share over fault runs.
        from .metrics.recovery import false_success_rate

        fsr = false_success_rate([(traj, success)])
        false_success = bool(fsr.parts.get("n_false_success"))
    exp_tools, called, matched = _matched_tools(traj, case, context)
    stats = run_stats(traj, success)
    metrics = {k: v for k, v in {
        "outcome": _md(outcome), "tool_call_prf": _md(prf), "call_rates": _md(rates),
        "forbidden_sequences": _md(forb), "ordering": _md(order), "error_recovery": _md(rec),
        "composite": _md(comp)}.items() if v is not None}
    failure = None
    if not success:
        failure = outcome.reason
    elif forb is not None and forb.passed is False:
        failure = forb.reason
    if keep_transcript is None:
        keep_transcript = not success or comp.passed is False
    return RunResult(
        run_id=run_id, case_id=case.id, trial=trial if isinstance(trial, int) else None,
        success=success, outcome_reason=outcome.reason, failure_reason=failure,
        precision=_r(getattr(prf, "precision", None)), recall=_r(getattr(prf, "recall", None)),
        f1=_r(getattr(prf, "f1", prf.score)), composite=_r(comp.score),
        composite_passed=comp.passed, steps=stats.steps or 0, n_calls=stats.tool_calls or 0,
        tokens=stats.tokens, cost_usd=_usd(stats.cost_usd), latency_ms=_r(stats.latency_ms),
        route=run_route(traj, case), expected_route=case.expected_route,
        recorded_reward=_r(meta["reward"]) if isinstance(meta.get("reward"), (int, float)) else None,
        fault_run=fault_run, false_success=false_success, expected_tools=exp_tools,
        called_tools=called, matched=matched, metrics=metrics,
        transcript=transcript(traj) if keep_transcript else None,
        forbidden_checked=bool(case.forbidden_calls or case.forbidden_sequences),
    )


def _rate(events: int, n: int, confidence: float) -> Estimate | None:
    """A rate with its Wilson interval (DESIGN.md "Intervals"). With zero events in n the
    upper bound is the rule-of-three 3/n (method ``rule_of_three``, hi = min(1, 3/n)); with
    events in all n runs (zero of the other outcome: no failures in a success rate) the
    lower bound is 1 - 3/n."""
    if n == 0:
        return None
    from .metrics.reliability import rule_of_three, wilson_interval

    lo, hi = wilson_interval(events, n, confidence)
    if events == 0:
        return Estimate(0.0, 0.0, _r(min(1.0, rule_of_three(n))), "rule_of_three", n)
    if events == n:  # zero of the other outcome: the same bound from the other side
        return Estimate(1.0, _r(max(0.0, 1.0 - rule_of_three(n))), 1.0, "rule_of_three", n)
    return Estimate(_r(events / n), _r(lo), _r(hi), "wilson", n)


def _tool_confusion(runs: Sequence[RunResult]) -> dict[str, Any]:
    """Expected-vs-called tool counts over all runs: matched pairs on the diagonal, missed
    expected calls in the ``(none)`` column, extra (unmatched) calls in the ``(none)`` row."""
    from collections import Counter

    cells: Counter[tuple[str, str]] = Counter()
    tools: set[str] = set()
    for r in runs:
        exp_left = Counter(r.expected_tools)
        called_left = Counter(r.called_tools)
        for e, c in r.matched:
            cells[(e, c)] += 1
            exp_left[e] -= 1
            called_left[c] -= 1
        for e, n in exp_left.items():
            if n > 0:
                cells[(e, NONE_LABEL)] += n
        for c, n in called_left.items():
            if n > 0:
                cells[(NONE_LABEL, c)] += n
        tools.update(r.expected_tools)
        tools.update(r.called_tools)
    labels = sorted(tools) + [NONE_LABEL]
    idx = {t: i for i, t in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for (e, c), n in cells.items():
        matrix[idx[e]][idx[c]] = n
    return {"labels": labels, "matrix": matrix,
            "rows": "expected tool ((none) = extra call)",
            "columns": "called tool ((none) = missed expected call)"}


def _kcurves(results: Mapping[str, list[bool]], ks: Sequence[int], *, seed: int, n_boot: int,
             confidence: float) -> tuple[dict[int, float], dict[int, Any], dict[int, float], dict[int, Any]]:
    from .metrics.reliability import bootstrap_ci, pass_at_k, pass_hat_k

    ph: dict[int, float] = {}
    phc: dict[int, Any] = {}
    pa: dict[int, float] = {}
    pac: dict[int, Any] = {}
    counts: dict[Any, Any] = {t: (len(v), sum(v)) for t, v in results.items()}
    for k in ks:
        ph[k] = float(pass_hat_k(counts, k))
        pa[k] = float(pass_at_k(counts, k))
        ph[k], pa[k] = _r(ph[k]) or 0.0, _r(pa[k]) or 0.0
        # pass^k and pass@k are means over tasks of a per-task value, so the bootstrap over
        # tasks resamples those per-task values (same replicates as resampling the tasks).
        per_hat = [pass_hat_k({t: nc}, k) for t, nc in counts.items()]
        per_at = [pass_at_k({t: nc}, k) for t, nc in counts.items()]
        b1 = bootstrap_ci(per_hat, n_boot=n_boot, seed=seed, confidence=confidence)
        b2 = bootstrap_ci(per_at, n_boot=n_boot, seed=seed, confidence=confidence)
        phc[k] = (_r(b1.lo), _r(b1.hi))
        pac[k] = (_r(b2.lo), _r(b2.hi))
    return ph, phc, pa, pac


class KTooLargeError(MetricInputError):
    """A k of pass^k / pass@k above the number of runs of some case (DESIGN: both need
    n >= k for every task). ``k``: the largest k asked for; ``case_id``: a case with the
    fewest runs; ``n``: its number of runs (the largest k possible)."""

    def __init__(self, k: int, case_id: str, n: int) -> None:
        self.k, self.case_id, self.n = k, case_id, n
        super().__init__(f"pass^k needs n >= k for every case: k={k} asked, but case {case_id!r} "
                         f"has {n} run(s) (the largest k possible is {n})")


def _ks(results: Mapping[str, list[bool]], ks: Sequence[int] | None) -> list[int]:
    """k = 1..min trials by default; explicit ks beyond the minimum raise ``KTooLargeError``
    naming the largest k asked for (the k the user typed, e.g. 5 for ``--k 5``), and k < 1
    raises ``MetricInputError``."""
    if not results:
        return []
    kmax = min(len(v) for v in results.values())
    if ks is None:
        return list(range(1, kmax + 1))
    low = [k for k in ks if not isinstance(k, int) or isinstance(k, bool) or k < 1]
    if low:
        raise MetricInputError(f"k must be an integer >= 1, got {low[0]!r}")
    if max(ks) > kmax:
        short = min(results, key=lambda t: len(results[t]))
        raise KTooLargeError(max(ks), short, len(results[short]))
    return sorted(set(ks))


def _recorded(runs: Sequence[RunResult], ks: Sequence[int], *, seed: int, n_boot: int,
              confidence: float) -> RecordedReward | None:
    """Summarise the source's own rewards (success = reward within 1e-6 of 1, tau-bench's
    rule) and their 2x2 agreement with trajcheck's outcome; None when no run has one."""
    with_r = [r for r in runs if r.recorded_reward is not None]
    if not with_r:
        return None
    by_case: dict[str, list[bool]] = {}
    for r in with_r:
        by_case.setdefault(r.case_id, []).append(abs(float(r.recorded_reward or 0) - 1.0) <= SUCCESS_TOL)
    kk = [k for k in ks if all(len(v) >= k for v in by_case.values())]
    ph, phc, _, _ = _kcurves(by_case, kk, seed=seed, n_boot=n_boot, confidence=confidence)
    matrix = dict.fromkeys(AGREEMENT_CELLS, 0)
    dis: list[Disagreement] = []
    for r in with_r:
        rec = abs(float(r.recorded_reward or 0) - 1.0) <= SUCCESS_TOL
        key = f"ours_{'pass' if r.success else 'fail'}_recorded_{'pass' if rec else 'fail'}"
        matrix[key] += 1
        if rec != r.success:
            why = r.outcome_reason if r.success else (r.failure_reason or r.outcome_reason)
            reason = (f"trajcheck {'pass' if r.success else 'fail'}: {why or '(no reason given)'}"
                      f"; recorded reward {fmt_num(r.recorded_reward)}")
            dis.append(Disagreement(r.run_id, r.case_id, r.trial, r.success, rec, reason))
    n = len(with_r)
    mean = _r(math.fsum(float(r.recorded_reward or 0) for r in with_r) / n)
    return RecordedReward(n=n, mean=mean, pass_hat_k=ph, pass_hat_k_ci=phc, matrix=matrix,
                          agree=matrix["ours_pass_recorded_pass"] + matrix["ours_fail_recorded_fail"],
                          disagreements=tuple(dis))


def _boot_mean(per_case: Mapping[str, list[float]], *, seed: int, n_boot: int,
               confidence: float) -> Estimate | None:
    from .metrics.reliability import bootstrap_ci

    vals = [math.fsum(v) / len(v) for v in per_case.values() if v]
    if not vals:
        return None
    b = bootstrap_ci(vals, n_boot=n_boot, seed=seed, confidence=confidence)
    return Estimate(_r(b.estimate), _r(b.lo), _r(b.hi), "bootstrap", len(vals))


def _dist_json(d: Any, money: bool) -> dict[str, Any] | None:
    if d is None:
        return None
    rnd = _usd if money else _r
    return {"n": d.n, "mean": rnd(d.mean), "p50": rnd(d.p50), "p95": rnd(d.p95),
            "p99": rnd(d.p99), "min": rnd(d.min), "max": rnd(d.max)}


def _efficiency(runs: Sequence[RunResult]) -> dict[str, Any]:
    """The scorecard's efficiency block, from ``metrics.efficiency.efficiency_summary``.

    DESIGN.md policy (applied there, in one place): steps, tool calls, tokens, cost and
    latency -- mean, min, max and p50/p95/p99 by linear interpolation -- over SUCCESSFUL runs
    only; cost per successful task = cost of ALL runs / number of successful runs (None when
    no run succeeded or some run has no cost). Each run's figures are its ``RunResult``'s
    (``metrics.efficiency.run_stats``: steps are agent turns). ``missing`` counts the
    successful runs without a figure. JSON form (rounded like every scorecard figure)::

        {"n_runs", "n_success", "success_rate", "steps", "tool_calls", "tokens",
         "cost_usd", "latency_ms", "missing", "total_cost_usd", "cost_per_success", "reason"}

    where each figure is ``{"n", "mean", "p50", "p95", "p99", "min", "max"}`` or None.
    Raises ``MetricInputError`` naming the run for a negative or non-finite figure.
    """
    from .metrics.efficiency import RunStats, efficiency_summary

    res = efficiency_summary([
        RunStats(success=r.success, steps=r.steps, tool_calls=r.n_calls, tokens=r.tokens,
                 cost_usd=r.cost_usd, latency_ms=r.latency_ms, run_id=r.run_id,
                 task_id=r.case_id)
        for r in runs])
    dists = res.distributions or {}
    out: dict[str, Any] = {"n_runs": res.n_runs, "n_success": res.n_success,
                           "success_rate": _r(res.success_rate)}
    for f in ("steps", "tool_calls", "tokens", "cost_usd", "latency_ms"):
        out[f] = _dist_json(dists.get(f), money=(f == "cost_usd"))
    out.update(missing=dict(res.parts.get("missing") or {}),
               total_cost_usd=_usd(res.total_cost_usd), cost_per_success=_usd(res.cost_per_success),
               reason=res.reason)
    return out


ROUTE_NONE = "(none)"


def _scores_json(per: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): {"precision": _r(v.precision), "recall": _r(v.recall), "f1": _r(v.f1),
                     "support": v.support, "tp": v.tp, "fp": v.fp, "fn": v.fn}
            for k, v in per.items()}


def _routing(runs: Sequence[RunResult],
             floors: Mapping[Any, float] | None = None) -> dict[str, Any] | None:
    """The scorecard's routing block, from ``metrics.routing``; None when no run's case carries
    an ``expected_route``.

    Every run whose case has an ``expected_route`` is scored against the route it took
    (``run_route``); a run that took none counts as the label ``(none)`` (single-label) or the
    empty set (multi-label), so a router that never routes is not left out.

    - Single-label (every expected route and taken route a string or number):
      ``metrics.routing.routing_metrics`` -- accuracy, macro precision / recall / F1,
      ``per_class`` scores, and the confusion matrix (``labels``, ``matrix``: rows expected,
      columns taken, scikit-learn's layout). With ``floors`` ({route: minimum recall}) the
      block also holds ``recall_floor_gate`` (``metrics.routing.recall_floor_gate``).
    - Multi-label (some expected or taken route is a list): ``metrics.routing.
      multilabel_routing`` -- ``accuracy`` = exact-set accuracy, Jaccard, Hamming loss, micro
      and macro F1, ``per_label`` scores; no matrix. ``floors`` then raise
      ``MetricInputError`` (recall floors are defined for single-label routing).

    Raises ``MetricInputError`` (naming the case) for an unusable route.
    """
    rs = [r for r in runs if r.expected_route is not None]
    if not rs:
        return None
    from .metrics.routing import multilabel_routing, recall_floor_gate, routing_metrics

    exp = [_route_label(r.expected_route, f"case {r.case_id!r}: expected_route") for r in rs]
    got = [_route_label(r.route, f"case {r.case_id!r}, run {r.run_id!r}: route") for r in rs]
    n_none = sum(g is None or g == [] for g in got)
    out: dict[str, Any] = {"n": len(rs), "n_no_route": n_none, "route_source": ROUTE_SOURCE}
    if any(isinstance(x, list) for x in exp + got):
        if floors:
            raise MetricInputError("route floors apply to single-label routing; this suite has "
                                   "list-valued (multi-label) routes")
        m = multilabel_routing([x if isinstance(x, list) else [x] for x in exp],
                               [[] if x is None else (x if isinstance(x, list) else [x])
                                for x in got])
        labels = sorted({str(k) for k in (m.per_label or {})})
        out.update(kind="multi_label", accuracy=_r(m.exact_set_accuracy),
                   exact_set_accuracy=_r(m.exact_set_accuracy), jaccard=_r(m.jaccard),
                   hamming_loss=_r(m.hamming_loss), micro_precision=_r(m.micro_precision),
                   micro_recall=_r(m.micro_recall), micro_f1=_r(m.micro_f1),
                   macro_f1=_r(m.macro_f1), per_label=_scores_json(m.per_label or {}),
                   labels=labels, matrix=None, recall_floor_gate=None, reason=m.reason)
        return out
    pred = [ROUTE_NONE if g is None else g for g in got]
    res = routing_metrics(exp, pred)
    cm = res.confusion
    gate = None
    if floors:
        g = recall_floor_gate(exp, pred, floors)
        gate = {"passed": g.passed, "reason": g.reason,
                "recalls": {str(k): _r(v) for k, v in (g.recalls or {}).items()},
                "floors": {str(k): float(v) for k, v in floors.items()},
                "failed": sorted(str(k) for k in (g.failed or {}))}
    out.update(kind="single_label", accuracy=_r(res.accuracy),
               macro_precision=_r(res.macro_precision), macro_recall=_r(res.macro_recall),
               macro_f1=_r(res.macro_f1), per_class=_scores_json(res.per_class or {}),
               labels=[str(x) for x in cm.labels] if cm else [],
               matrix=[list(row) for row in cm.matrix] if cm else None,
               recall_floor_gate=gate, reason=res.reason)
    return out


def score_runs(runs: Sequence[tuple[Trajectory, Case]], *, ks: Sequence[int] | None = None,
               context: MatchContext | None = None, seed: int = DEFAULT_SEED,
               n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
               problems: Iterable[str] = (), meta: Mapping[str, Any] | None = None,
               scored: Sequence[RunResult] | None = None,
               route_floors: Mapping[Any, float] | None = None) -> Scorecard:
    """Score ``(trajectory, case)`` runs into a ``Scorecard``.

    ``runs``: one pair per run (a case normally appears once per trial). ``ks``: the k of
    pass^k / pass@k, default 1..min trials over the cases; a k above some case's trial count
    raises ``MetricInputError`` naming the case (DESIGN: both need n >= k for every task).
    ``seed``/``n_boot``/``confidence``: the percentile bootstrap over tasks (cases) and the
    Wilson intervals. ``problems`` are carried into the scorecard. ``scored``: already
    computed ``RunResult``s to use instead of re-scoring ``runs`` (``trajcheck run`` scores as
    runs finish). ``route_floors``: {route: minimum recall} for the routing recall gate
    (single-label routing only; see ``_routing``).

    Suite definitions: task success rate = successful runs / runs (Wilson); pass^k and
    pass@k per DESIGN (tasks as the bootstrap unit); mean F1 and mean composite = mean over
    cases of the case's mean (bootstrap over cases); forbidden rate = share of runs with a
    forbidden call or a failed forbidden-sequence check; duplicate rate = share of runs with a
    duplicate call (forbidden rate None when no case defines forbidden calls or sequences);
    composite pass rate = share of runs (with a composite score) whose composite passes its
    threshold (Wilson); false-success rate over fault-injected runs only; efficiency over
    successful runs with cost per successful task = cost of all runs / successful runs
    (``_efficiency``, ``metrics.efficiency``); routing when cases carry ``expected_route``
    (``_routing``, ``metrics.routing``; the taken route per ``run_route``). Raises
    ``MetricInputError`` for an empty suite.
    """
    if scored is None:
        results = [score_run(t, c, context=context) for t, c in runs]
    else:
        results = list(scored)
    if not results:
        raise MetricInputError("empty suite: no runs to score")
    by_case: dict[str, list[RunResult]] = {}
    for r in results:
        by_case.setdefault(r.case_id, []).append(r)
    outcomes = {c: [r.success for r in rs] for c, rs in by_case.items()}
    kk = _ks(outcomes, ks)
    ph, phc, pa, pac = _kcurves(outcomes, kk, seed=seed, n_boot=n_boot, confidence=confidence)
    n = len(results)
    succ = sum(r.success for r in results)
    # every rate through _rate (DESIGN.md "Intervals"): all-successes gets the rule of three
    tsr = _rate(succ, n, confidence)
    f1s = {c: [r.f1 for r in rs if r.f1 is not None] for c, rs in by_case.items()}
    comps = {c: [r.composite for r in rs if r.composite is not None] for c, rs in by_case.items()}
    # ordering_accuracy is None for runs whose case has no applicable precedence rule
    ords = {c: [float(v) for r in rs
                if isinstance(v := (r.metrics.get("ordering") or {}).get("score"), (int, float))]
            for c, rs in by_case.items()}

    def flag(r: RunResult, metric: str, key: str) -> bool:
        parts = (r.metrics.get(metric) or {}).get("parts") or {}
        return bool(parts.get(key))

    forbidden = sum(flag(r, "call_rates", "forbidden")
                    or (r.metrics.get("forbidden_sequences") or {}).get("passed") is False
                    for r in results)
    dup = sum(flag(r, "call_rates", "duplicate") for r in results)
    # no case defines forbidden calls/sequences: the rate would be a vacuous 0 -> None
    forbidden_applies = any(r.forbidden_checked is not False for r in results)
    gated = [r for r in results if r.composite_passed is not None]
    fault = [r for r in results if r.fault_run]
    cases = tuple(
        CaseResult(case_id=c, trials=len(rs), successes=sum(r.success for r in rs),
                   mean_f1=_r(math.fsum(f1s[c]) / len(f1s[c])) if f1s[c] else None,
                   recorded_successes=(sum(abs(float(r.recorded_reward) - 1.0) <= SUCCESS_TOL
                                           for r in rs if r.recorded_reward is not None)
                                       if any(r.recorded_reward is not None for r in rs) else None),
                   run_ids=tuple(r.run_id for r in rs))
        for c, rs in by_case.items())
    suite = SuiteMetrics(
        n_runs=n, n_cases=len(by_case), n_successes=succ,
        task_success_rate=tsr or Estimate(None),
        pass_hat_k=ph, pass_hat_k_ci=phc, pass_at_k=pa, pass_at_k_ci=pac,
        mean_f1=_boot_mean(f1s, seed=seed, n_boot=n_boot, confidence=confidence),
        mean_composite=_boot_mean(comps, seed=seed, n_boot=n_boot, confidence=confidence),
        ordering_accuracy=_boot_mean(ords, seed=seed, n_boot=n_boot, confidence=confidence),
        forbidden_rate=_rate(forbidden, n, confidence) if forbidden_applies else None,
        composite_pass_rate=_rate(sum(bool(r.composite_passed) for r in gated), len(gated),
                                  confidence),
        duplicate_rate=_rate(dup, n, confidence),
        false_success_rate=_rate(sum(bool(r.false_success) for r in fault), len(fault), confidence),
        n_fault_runs=len(fault),
        efficiency=_efficiency(results),
        routing=_routing(results, route_floors),
        tool_confusion=_tool_confusion(results),
    )
    from . import __version__

    m = {"trajcheck_version": __version__, "seed": seed, "n_bootstrap": n_boot,
         "confidence": confidence}
    m.update(meta or {})
    return Scorecard(suite=suite, cases=cases, runs=tuple(results),
                     recorded_reward=_recorded(results, kk, seed=seed, n_boot=n_boot,
                                               confidence=confidence),
                     problems=tuple(problems), meta=m)


PROBLEMS_SHOWN = 10


def problem_lines(problems: Sequence[str], limit: int = PROBLEMS_SHOWN) -> list[str]:
    """``problems`` as list items (``"  - ..."``), the first ``limit`` of them, then
    ``"  ... and N more"`` when some are left out."""
    out = [f"  - {p}" for p in problems[:limit]]
    if len(problems) > limit:
        out.append(f"  ... and {len(problems) - limit} more")
    return out


def _unmatched_message(n_traces: int, no_cid: Sequence[int], unknown: Sequence[str],
                       case_map: Mapping[str, Case], problems: Sequence[str]) -> str:
    """The error when no trace matched a case: the cause first, then the problems as a list."""
    def runs(n: int) -> str:
        return f"{n} run{'' if n == 1 else 's'}"

    causes: list[str] = []
    if n_traces == 0:
        causes.append("no traces were read")
    if not case_map:
        causes.append("no cases were given and these traces carry none: pass the cases "
                      "(--cases); only tau-bench result files carry their own")
    if no_cid:
        causes.append(f"{runs(len(no_cid))} {'has' if len(no_cid) == 1 else 'have'} no case_id in "
                      "their metadata: traces must carry metadata.case_id (trajcheck run writes "
                      "it; tau-bench files carry their own cases)")
    if unknown and case_map:
        ids = list(dict.fromkeys(unknown))
        known = list(case_map)
        causes.append(f"{runs(len(unknown))} {'names' if len(unknown) == 1 else 'name'} a case id that is not among the {len(known)} "
                      f"case(s) (e.g. {ids[0]!r}; the cases' ids are "
                      f"{', '.join(repr(c) for c in known[:5])}{', ...' if len(known) > 5 else ''})")
    lines = ["no trace could be matched to a case: " + (causes[0] if causes else "see the problems")]
    lines += [f"also: {c}" for c in causes[1:]]
    if problems:
        lines.append(f"{len(problems)} problem(s):")
        lines += problem_lines(problems)
    return "\n".join(lines)


def evaluate(traces: Any, cases: Mapping[str, Case] | Sequence[Case] | None = None, *,
             ks: Sequence[int] | None = None, context: MatchContext | None = None,
             seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
             source: str | None = None,
             route_floors: Mapping[Any, float] | None = None) -> Scorecard:
    """Score recorded traces against their cases.

    ``traces``: a ``traces.LoadResult`` (its ``.problems`` are carried over and, when
    ``cases`` is None, its ``.cases`` are used -- tau-bench files carry their own) or a
    sequence of ``Trajectory``. ``cases``: a mapping case id -> ``Case`` or a sequence of
    cases. Each trajectory is keyed to its case by ``metadata["case_id"]``.

    Problems (reported in ``Scorecard.problems``, the rest still scored): a trajectory with
    no ``case_id``, a trajectory whose case id is not among the cases, a case with no
    trajectory. ``route_floors`` as in ``score_runs``. Raises ``MetricInputError`` when no
    trajectory could be matched to a case; its message leads with the cause (runs without
    ``metadata.case_id``, no cases at all, or case ids not among the cases), then lists the
    problems one per line (the first ``PROBLEMS_SHOWN``, then "... and N more").
    """
    problems: list[str] = list(getattr(traces, "problems", None) or ())
    trajs = list(getattr(traces, "trajectories", traces))
    if cases is None:
        cases = getattr(traces, "cases", None) or {}
    case_map: dict[str, Case] = (dict(cases) if isinstance(cases, Mapping)
                                 else {c.id: c for c in cases})
    runs: list[tuple[Trajectory, Case]] = []
    seen: set[str] = set()
    no_cid: list[int] = []
    unknown: list[str] = []
    for i, t in enumerate(trajs):
        cid = t.metadata.get("case_id")
        rid = t.metadata.get("run_id") or f"#{i}"
        if cid is None:
            no_cid.append(i)
            problems.append(f"trace {i} (run {rid}): no case_id in its metadata; not scored")
            continue
        c = case_map.get(str(cid))
        if c is None:
            unknown.append(str(cid))
            problems.append(f"trace {i} (run {rid}): case id {cid!r} is not among the cases; not scored")
            continue
        seen.add(c.id)
        runs.append((t, c))
    for cid in case_map:
        if cid not in seen:
            problems.append(f"case {cid!r}: no traces; not scored")
    if not runs:
        raise MetricInputError(_unmatched_message(len(trajs), no_cid, unknown, case_map, problems))
    return score_runs(runs, ks=ks, context=context, seed=seed, n_boot=n_boot,
                      confidence=confidence, problems=problems,
                      meta={"source": source} if source else None, route_floors=route_floors)


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class MetricDelta:
    """B minus A for one metric over the shared cases: ``a``/``b`` the two suite values,
    ``delta`` = b - a with its paired percentile bootstrap interval over cases (``lo``,
    ``hi``; None when not computable), and ``p_value`` of the paired test where one applies
    (exact McNemar / sign test from ``metrics.reliability.paired_compare``), kept exact
    (not rounded: a p of 2e-9 must not read as 0; reports print it as "<0.0001"); ``unit``
    the unit of that test, ``"run"`` (trial i of A paired with trial i of B) or ``"task"``
    (one pair per case), None when there is no test."""

    metric: str
    a: float | None
    b: float | None
    delta: float | None
    lo: float | None = None
    hi: float | None = None
    p_value: float | None = None
    test: str | None = None
    unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"metric": self.metric, "a": self.a, "b": self.b, "delta": self.delta,
                "lo": self.lo, "hi": self.hi, "p_value": self.p_value, "test": self.test,
                "unit": self.unit}


@dataclass(frozen=True)
class Comparison:
    """``compare_scorecards`` result: deltas on the ``n_cases`` shared cases, and the cases
    only one side has (left out of every delta)."""

    n_cases: int
    deltas: tuple[MetricDelta, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"n_cases": self.n_cases, "deltas": [d.to_dict() for d in self.deltas],
                "only_a": list(self.only_a), "only_b": list(self.only_b), "meta": self.meta}


def _case_outcomes(sc: Scorecard) -> dict[str, list[bool]]:
    out: dict[str, list[tuple[int, bool]]] = {}
    for i, r in enumerate(sc.runs):
        out.setdefault(r.case_id, []).append((r.trial if r.trial is not None else i, r.success))
    return {c: [s for _, s in sorted(v, key=lambda x: x[0])] for c, v in out.items()}


def _case_means(sc: Scorecard, attr: str) -> dict[str, float]:
    acc: dict[str, list[float]] = {}
    for r in sc.runs:
        v = getattr(r, attr)
        if v is not None:
            acc.setdefault(r.case_id, []).append(float(v))
    return {c: math.fsum(v) / len(v) for c, v in acc.items() if v}


def compare_scorecards(a: Scorecard, b: Scorecard, *, seed: int = DEFAULT_SEED,
                       n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
                       unit: str | None = None) -> Comparison:
    """Paired comparison of two scorecards of the same suite ("did this change help?").

    Cases are paired by id; only cases present in both are compared (the others are
    listed). Deltas are B - A:

    - ``task_success_rate``: ``metrics.reliability.paired_compare`` on per-case trial
      outcomes (mean per-case success rate difference, paired bootstrap over cases, exact
      McNemar test per run when trials line up, else the sign test per case); ``unit``
      ``"run"`` / ``"task"`` forces the test's unit (None: that default). Per-run pairs
      treat a case's trials as independent; per task is the conservative choice. The unit
      used is in the delta's ``unit``;
    - ``pass^k`` for k = 1..min trials on both sides: per-case pass^k differences, paired
      percentile bootstrap over cases (no test);
    - ``mean_f1``, ``mean_composite``: per-case mean differences, paired bootstrap over cases.

    Raises ``MetricInputError`` when the scorecards share no case, when ``unit`` is not
    None/"run"/"task", or when ``unit="run"`` and some shared case has different trial
    counts in A and B.
    """
    from .metrics.reliability import bootstrap_ci, paired_compare, pass_hat_k

    if unit not in (None, "run", "task"):
        raise MetricInputError(f"unit must be 'run' or 'task', got {unit!r}")

    oa, ob = _case_outcomes(a), _case_outcomes(b)
    shared = [c for c in oa if c in ob]
    if not shared:
        raise MetricInputError("the two scorecards share no case id; nothing to compare")
    only_a = tuple(c for c in oa if c not in ob)
    only_b = tuple(c for c in ob if c not in oa)
    ra: dict[Any, Any] = {c: oa[c] for c in shared}
    rb: dict[Any, Any] = {c: ob[c] for c in shared}
    deltas: list[MetricDelta] = []
    pc = paired_compare(ra, rb, n_boot=n_boot, seed=seed, confidence=confidence,
                        test_unit=unit or "auto")
    # paired_compare reports A - B; a comparison reads naturally as B - A ("after - before")
    deltas.append(MetricDelta("task_success_rate", _r(pc.mean_a), _r(pc.mean_b), _r(-pc.diff),
                              _r(-pc.hi), _r(-pc.lo),
                              None if pc.p_value is None else float(pc.p_value),
                              f"exact McNemar/sign test per {pc.test_unit} "
                              f"({pc.a_only} A-only vs {pc.b_only} B-only successes)",
                              None if pc.p_value is None else pc.test_unit))
    kmax = min(len(v) for v in list(ra.values()) + list(rb.values()))
    for k in range(1, kmax + 1):
        da = {c: pass_hat_k({c: (len(ra[c]), sum(ra[c]))}, k) for c in shared}
        db = {c: pass_hat_k({c: (len(rb[c]), sum(rb[c]))}, k) for c in shared}
        diffs = [db[c] - da[c] for c in shared]
        bci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, confidence=confidence)
        deltas.append(MetricDelta(f"pass^{k}", _r(math.fsum(da.values()) / len(shared)),
                                  _r(math.fsum(db.values()) / len(shared)), _r(bci.estimate),
                                  _r(bci.lo), _r(bci.hi)))
    for attr, label in (("f1", "mean_f1"), ("composite", "mean_composite")):
        ma, mb = _case_means(a, attr), _case_means(b, attr)
        both = [c for c in shared if c in ma and c in mb]
        if not both:
            continue
        diffs = [mb[c] - ma[c] for c in both]
        bci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, confidence=confidence)
        deltas.append(MetricDelta(label, _r(math.fsum(ma[c] for c in both) / len(both)),
                                  _r(math.fsum(mb[c] for c in both) / len(both)),
                                  _r(bci.estimate), _r(bci.lo), _r(bci.hi)))
    return Comparison(n_cases=len(shared), deltas=tuple(deltas), only_a=only_a, only_b=only_b,
                      meta={"seed": seed, "n_bootstrap": n_boot, "confidence": confidence})


__all__ = [
    # scoring (this module)
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SEED",
    "NONE_LABEL",
    "PROBLEMS_SHOWN",
    "ROUTE_NONE",
    "ROUTE_SOURCE",
    "SUCCESS_TOL",
    "TRANSCRIPT_CHARS",
    "Comparison",
    "KTooLargeError",
    "MetricDelta",
    "compare_scorecards",
    "evaluate",
    "problem_lines",
    "run_outcome",
    "run_route",
    "score_run",
    "score_runs",
    "transcript",
    # the data model, re-exported from trajcheck.scorecard
    "AGREEMENT_CELLS",
    "COST_DIGITS",
    "DIGITS",
    "SCHEMA_VERSION",
    "CaseResult",
    "Disagreement",
    "Estimate",
    "RecordedReward",
    "RunResult",
    "Scorecard",
    "SuiteMetrics",
    "fmt_num",
    "scorecard_schema",
    "validate_scorecard_json",
]
