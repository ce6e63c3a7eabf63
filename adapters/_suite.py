"""Suite figures for the hosts: pass^k, pass@k, the success rate and routing macro-F1 over a
set of scored runs, computed by the core's ``metrics.reliability`` and ``metrics.routing``.

A host hands over one record per run: the task (case) id, whether the run succeeded (the
row metric's verdict the user chose, ``task_success`` by default) and, for routing, the
expected and the taken route. Nothing is recomputed here beyond grouping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trajcheck.errors import MetricInputError
from trajcheck.metrics.result import MetricResult

#: The suite figures every host exposes (see README "metric x host table").
SUITE_FIGURES: tuple[str, ...] = ("pass_hat_k", "pass_at_k", "success_rate", "routing_macro_f1")


@dataclass(frozen=True)
class RunRecord:
    """One scored run: ``task`` (case id), ``success`` (None: the row metric was skipped or
    errored; counted as a failure, never a success), ``route``/``expected_route`` (routing)."""

    task: str
    success: bool | None
    route: Any = None
    expected_route: Any = None


def default_keys(prefix: str, k: int) -> dict[str, str]:
    """Keys of the figures: ``<prefix>_pass^<k>``, ``<prefix>_pass@<k>``,
    ``<prefix>_success_rate``, ``<prefix>_routing_macro_f1`` -- the prefix keeps two summaries
    (say for two row metrics) from overwriting each other."""
    return {"pass_hat_k": f"{prefix}_pass^{k}", "pass_at_k": f"{prefix}_pass@{k}",
            "success_rate": f"{prefix}_success_rate", "routing_macro_f1": f"{prefix}_routing_macro_f1"}


def check_figures(figures: Sequence[str], where: str) -> tuple[str, ...]:
    """``figures`` as a tuple, every name one of :data:`SUITE_FIGURES` (else
    ``MetricInputError`` naming the closest)."""
    from trajcheck.model import did_you_mean

    if isinstance(figures, str):
        figures = (figures,)
    for f in figures:
        if f not in SUITE_FIGURES:
            raise MetricInputError(f"{where}: unknown suite figure {f!r}{did_you_mean(str(f), SUITE_FIGURES)}; "
                                   f"known: {', '.join(SUITE_FIGURES)}")
    return tuple(figures)


def compute_figures(records: Sequence[RunRecord], figures: Sequence[str] = SUITE_FIGURES, *,
                    k: int | None = None, confidence: float = 0.95, n_boot: int = 2000,
                    seed: int = 0) -> dict[str, MetricResult]:
    """The requested suite figures over ``records``.

    ``pass_hat_k``/``pass_at_k``: ``metrics.reliability.pass_hat_k``/``pass_at_k`` over the
    runs grouped by task, with the seeded percentile bootstrap interval over tasks in the
    reason and parts (``lo``, ``hi``). ``k`` defaults to the fewest runs of a task, as the
    CLI's pass^k curve stops there (``--k`` default 1..fewest runs); when tasks have unequal
    run counts the reason says so, naming the task with the fewest runs, and parts carry
    ``runs_min``/``runs_max`` (see :func:`default_k`). n < k for some task raises
    ``MetricInputError`` naming it. ``success_rate``:
    ``metrics.reliability.success_rate`` over all runs (Wilson interval; rule of three at 0
    failures). ``routing_macro_f1``: ``metrics.routing.routing_metrics(...).macro_f1`` over the
    runs with an expected route (a list route is joined as ``a+b``); skipped (score None) when
    no run has one. Returns ``{figure: MetricResult}``; score in [0, 1].
    """
    if not records:
        raise MetricInputError("suite figures need at least one scored run")
    figs = check_figures(figures, "suite figures")
    trials: dict[str, list[bool]] = {}
    for r in records:
        trials.setdefault(r.task, []).append(r.success is True)
    kk, note = (k, "") if k is not None else default_k(trials)
    unscored = unscored_note(records)
    lo_n, hi_n = min(map(len, trials.values())), max(map(len, trials.values()))
    out: dict[str, MetricResult] = {}
    from trajcheck.metrics.reliability import bootstrap_ci, pass_at_k, pass_hat_k, success_rate

    for fig, fn, sym in (("pass_hat_k", pass_hat_k, "^"), ("pass_at_k", pass_at_k, "@")):
        if fig not in figs:
            continue
        est = fn(trials, kk)
        ci = bootstrap_ci(trials, lambda rs, fn=fn: fn(rs, kk), n_boot=n_boot, seed=seed,
                          confidence=confidence, name=f"pass{sym}{kk}")
        out[fig] = MetricResult(
            f"pass{sym}{kk}", est,
            f"pass{sym}{kk} = {est:.4f} over {len(trials)} tasks; {confidence:.0%} bootstrap CI "
            f"[{ci.lo:.4f}, {ci.hi:.4f}] (seed {seed}, {n_boot} resamples of tasks){note}{unscored}",
            {"k": kk, "n_tasks": len(trials), "lo": ci.lo, "hi": ci.hi, "runs_min": lo_n,
             "runs_max": hi_n}, None)
    if "success_rate" in figs:
        n_ok = sum(r.success is True for r in records)
        rate = success_rate(n_ok, len(records), confidence)
        out["success_rate"] = replace(rate, reason=rate.reason + unscored) if unscored else rate
    if "routing_macro_f1" in figs:
        routed = [r for r in records if r.expected_route is not None]
        if not routed:
            out["routing_macro_f1"] = MetricResult("routing_macro_f1", None,
                                                   "not applicable: no run has an expected route")
        else:
            from trajcheck.metrics.routing import routing_metrics

            def lab(v: Any) -> Any:
                return "+".join(map(str, v)) if isinstance(v, (list, tuple)) else ("(none)" if v is None else v)

            rm = routing_metrics([lab(r.expected_route) for r in routed], [lab(r.route) for r in routed])
            out["routing_macro_f1"] = MetricResult("routing_macro_f1", rm.macro_f1, rm.reason,
                                                   {"accuracy": rm.accuracy, "n": len(routed)}, None)
    return out


def unscored_note(records: Sequence[RunRecord]) -> str:
    """What a figure's reason says about runs with no verdict (the row metric raised, say on a
    misspelled reference, or did not apply): they count as failures, and the reason says how
    many and of which task, so a figure lowered by them is never silent ("" when none)."""
    none = [r.task for r in records if r.success is None]
    if not none:
        return ""
    return (f"; {len(none)} of {len(records)} runs have no verdict (the row metric raised or did "
            f"not apply; first: task {none[0]!r}) and count as failures")


def default_k(trials: Mapping[str, Sequence[Any]]) -> tuple[int, str]:
    """The k used when none is given, and what the reason says about it.

    Args:
        trials: ``{task: runs}`` (at least one task).

    Returns:
        ``(k, note)``: k = the fewest runs of a task (the CLI's default pass^k curve ends
        there); ``note`` is "" when every task has k runs, else a sentence for the figure's
        reason naming the task with the fewest runs, the run counts and ``k=...`` as the way
        to choose, so a lowered k is never silent.
    """
    counts = {t: len(v) for t, v in trials.items()}
    kk = min(counts.values())
    if kk == max(counts.values()):
        return kk, ""
    short = min(counts, key=counts.__getitem__)
    return kk, (f"; tasks have unequal run counts ({kk} to {max(counts.values())}), so k = {kk}, the "
                f"fewest runs of a task ({short!r} has {kk}); pass k=... (at most {kk}) to choose it")


def records_from(rows: Sequence[tuple[str, Any, Any, MetricResult | None]]) -> list[RunRecord]:
    """``RunRecord`` per ``(task, trajectory, case, row result)``: success = the row
    result's ``passed`` (None result or None passed: not a success); routes by
    ``suite.run_route``."""
    from trajcheck.score.suite import run_route

    out = []
    for task, traj, case, res in rows:
        route = run_route(traj, case) if case is not None and traj is not None else None
        out.append(RunRecord(str(task), None if res is None else res.passed, route,
                             getattr(case, "expected_route", None)))
    return out


def figures_json(figs: Mapping[str, MetricResult], keys: Mapping[str, str]) -> list[dict[str, Any]]:
    """``[{"key", "score", "comment"}]`` for the figures, under ``keys``."""
    return [{"key": keys[f], "score": r.score, "comment": r.reason} for f, r in figs.items()]
