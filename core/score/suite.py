"""Score a suite of agent runs (cases x trials) into one ``Scorecard``.

A suite evaluation has four stages, one module each; this module ties them together and
keeps every name they had here importable from ``trajcheck.score.suite``:

1. reading -- ``trajcheck.read.traces`` (files to ``Trajectory``) and ``trajcheck.read.intake``
   (each trajectory keyed to its ``Case``; problems for the rest);
2. per-run scoring -- ``trajcheck.score.scoring`` (``score_run``: one ``RunResult`` per run);
3. mergeable aggregation -- ``trajcheck.aggregate.partials`` (``SuitePartial``: runs folded into
   partials that merge in any grouping, then finalized into the suite figures);
4. reporting -- ``trajcheck.report.scorecard`` (the data model and its JSON), ``trajcheck.report``
   and ``trajcheck.aggregate.paired``.

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

Every figure keeps full float precision in the results and the JSON (2/3 is stored as
0.6666666666666666; only the terminal, Markdown and HTML reports round), and a scorecard's JSON round-trips
exactly (``Scorecard.load(p).to_dict() == json.load(p)``). The JSON layout is fixed by
``trajcheck/schemas/scorecard.schema.json`` (``SCHEMA_VERSION``).

Definitions follow ../shared/DESIGN.md ("Semantics", "Policies"); each policy is
documented in the function that applies it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..aggregate.paired import Comparison, MetricDelta, compare_scorecards
from ..aggregate.partials import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    NONE_LABEL,
    ROUTE_NONE,
    SUCCESS_TOL,
    KTooLargeError,
    SuitePartial,
)
from ..aggregate.partials import _rate as _rate  # kept importable from here (older code imports it)
from ..model import Case, Trajectory
from ..read.intake import PROBLEMS_SHOWN, case_map_of, pair_runs, problem_lines
from ..report.scorecard import (  # re-exported: the data model's old home
    AGREEMENT_CELLS,
    SCHEMA_VERSION,
    CaseResult,
    CheckAgreement,
    Disagreement,
    Estimate,
    RecordedReward,
    RunResult,
    Scorecard,
    SuiteMetrics,
    fmt_num,
    scorecard_schema,
    validate_scorecard_json,
)
from .scoring import ROUTE_SOURCE, TRANSCRIPT_CHARS, run_outcome, run_route, score_run, transcript

if TYPE_CHECKING:  # pragma: no cover
    from ..match.matchers import MatchContext


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
    (single-label routing only; see ``SuitePartial._routing``).

    Suite definitions: task success rate = successful runs / runs (Wilson); pass^k and
    pass@k per DESIGN (tasks as the bootstrap unit); mean F1 and mean composite = mean over
    cases of the case's mean (bootstrap over cases); forbidden rate = share of runs with a
    forbidden call or a failed forbidden-sequence check; duplicate rate = share of runs with a
    duplicate call (forbidden rate None when no case defines forbidden calls or sequences);
    composite pass rate = share of runs (with a composite score) whose composite passes its
    threshold (Wilson); false-success rate over fault-injected runs only; efficiency over
    successful runs with cost per successful task = cost of all runs / successful runs
    (``metrics.efficiency``); routing when cases carry ``expected_route``
    (``metrics.routing``; the taken route per ``run_route``). Raises ``MetricInputError``
    for an empty suite.
    """
    part = SuitePartial()
    results: Iterable[RunResult] = (scored if scored is not None
                                    else (score_run(t, c, context=context) for t, c in runs))
    for r in results:
        part.add(r)
    return part.finalize(ks=ks, seed=seed, n_boot=n_boot, confidence=confidence,
                         problems=problems, meta=meta, route_floors=route_floors)


def evaluate(traces: Any, cases: Mapping[str, Case] | Sequence[Case] | None = None, *,
             ks: Sequence[int] | None = None, context: MatchContext | None = None,
             seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
             source: str | None = None,
             route_floors: Mapping[Any, float] | None = None) -> Scorecard:
    """Score recorded traces against their cases.

    ``traces``: a ``traces.LoadResult`` (its ``.problems`` are carried over and, when
    ``cases`` is None, its ``.cases`` are used -- tau-bench files carry their own) or a
    sequence of ``Trajectory``. ``cases``: a mapping case id -> ``Case`` or a sequence of
    cases. Each trajectory is keyed to its case by ``metadata["case_id"]``
    (``intake.RunKeyer``).

    When cases name a category (``Case.metadata["category"]``), the scorecard's
    ``meta["by_category"]`` holds the success rate per category
    (``trajcheck.aggregate.categories``, counted by ``aggregate.SuitePartial``).

    Problems (reported in ``Scorecard.problems``, the rest still scored): a trajectory with
    no ``case_id``, a trajectory whose case id is not among the cases, a case with no
    trajectory. ``route_floors`` as in ``score_runs``. Raises ``MetricInputError`` when no
    trajectory could be matched to a case; its message leads with the cause (runs without
    ``metadata.case_id``, no cases at all, or case ids not among the cases), then lists the
    problems one per line (the first ``PROBLEMS_SHOWN``, then "... and N more").
    """
    if cases is None:
        cases = getattr(traces, "cases", None) or {}
    runs, problems = pair_runs(getattr(traces, "trajectories", traces), case_map_of(cases),
                               getattr(traces, "problems", None) or ())
    return score_runs(runs, ks=ks, context=context, seed=seed, n_boot=n_boot,
                      confidence=confidence, problems=problems,
                      meta={"source": source} if source else None, route_floors=route_floors)


__all__ = [
    # the stages, tied together (this module)
    "evaluate",
    "score_runs",
    # per-run scoring, re-exported from trajcheck.score.scoring
    "ROUTE_SOURCE",
    "TRANSCRIPT_CHARS",
    "run_outcome",
    "run_route",
    "score_run",
    "transcript",
    # aggregation, re-exported from trajcheck.aggregate.partials
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SEED",
    "NONE_LABEL",
    "ROUTE_NONE",
    "SUCCESS_TOL",
    "KTooLargeError",
    "SuitePartial",
    # reading, re-exported from trajcheck.read.intake
    "PROBLEMS_SHOWN",
    "problem_lines",
    # comparison, re-exported from trajcheck.aggregate.paired
    "Comparison",
    "MetricDelta",
    "compare_scorecards",
    # the data model, re-exported from trajcheck.report.scorecard
    "AGREEMENT_CELLS",
    "SCHEMA_VERSION",
    "CaseResult",
    "CheckAgreement",
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
