"""Compact scoring of a run read by the fused route (``traces.native_facts.LineRun``): the
``RunResult`` ``scoring.score_compact_by_id`` gives for the run's trajectory, computed from
the facts read off its JSONL line, with neither the ``Trajectory`` nor the ``Case`` built.

The facts go to ``fast_scoring.score_facts``, the very computation ``fast_scoring`` runs on
the facts it reads from a ``Trajectory``, so both give the same result
(tests/test_fused_scoring.py checks it on every line of the volume generator, the example
and test files and hostile lines). Where the fast scorer cannot vouch for a run -- a case
outside its scope, metadata it has no say on, arguments its exact rows cannot key -- the
trajectory is built (``LineRun.trajectory``) and scored by ``score_compact_by_id``
unchanged. When a result's detail needs the calls joined to their results beyond what the
ids settle (``Trajectory.pairs``), the trajectory is built for that alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..match.matching import is_failed
from ..model import Case
from ..read.traces.native_facts import LineRun
from ..report.scorecard import RunResult
from .case_plan import plan_for
from .fast_scope import run_in_scope
from .fast_scoring import score_facts
from .scoring import score_compact_by_id

if TYPE_CHECKING:  # pragma: no cover
    from ..match.matchers import MatchContext


def line_compact(run: LineRun, cases: Mapping[str, Case], cid: str, *,
                 context: MatchContext | None = None, reasons: bool = True) -> RunResult:
    """``score_compact_by_id(run.trajectory(), cases, cid, context=context)`` (module
    docstring): the compact result of the run against case ``cid`` of ``cases``. Raises
    ``KeyError`` for an id not in ``cases``, else what ``score_compact_by_id`` raises.
    ``reasons`` as in ``line_fast``."""
    r = line_fast(run, plan_for(cases, cid), reasons)
    if r is not None:
        return r
    return score_compact_by_id(run.trajectory(), cases, cid, context=context)


def line_fast(run: LineRun, plan: Any, reasons: bool = True) -> RunResult | None:
    """The compact result of ``run`` against the case of ``plan`` (``case_plan.plan_for``)
    from the run's facts, or None (nothing counted) when the fast scorer cannot vouch for
    it: ``plan`` None (a case outside its scope), metadata outside ``fast_scope.RUN_META_FAST``, arguments
    the exact rows cannot key. ``reasons`` False: a failing run's reason is left out
    (``fast_scoring.score_facts``)."""
    meta = run.metadata
    if plan is None or not run_in_scope(meta):
        return None
    failed = run.failed
    if failed is None and run.any_fail:  # the ids do not settle the join: Trajectory.pairs does
        failed = [is_failed(r) for _, r in run.trajectory().pairs()]
    return score_facts(plan, meta, run.cnames, run.cargs, run.call_step,  # type: ignore[no-any-return]
                       run.n_agent, failed, run.tokens, run.cost, run.latency,
                       (lambda: run.trajectory().pairs()) if run.json_like else None,
                       reasons=reasons)


__all__ = ["line_compact", "line_fast"]
