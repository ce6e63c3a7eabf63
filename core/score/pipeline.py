"""Streaming evaluation: read, score and aggregate recorded runs in one pass.

``evaluate_stream`` takes trajectories one at a time (a ``traces.stream`` or any iterable),
keys each to its case (``intake.RunKeyer``), scores it once (``scoring.score_run``, compact
unless a report will show it) and folds it into a ``aggregate.SuitePartial``; the runs
themselves are dropped as soon as they are scored. Memory grows with the number of cases
(and 8 bytes per successful run and efficiency figure), not with the runs' size; runs of
one case may be anywhere in the input. The scorecard equals ``suite.evaluate``'s on the
same input and seed -- the same figures, cases and problems -- and lists every run when
there are at most ``keep_runs`` of them (else that many, failing runs first, in input
order; ``keep_runs=None`` keeps all).

Garbage-collector policy: scoring allocates many short-lived objects and almost no
reference cycles, so the collector's generation-0 threshold is raised for the loop (cases
and other long-lived objects are frozen first) and restored afterwards: the automatic
collections otherwise spend a third of the CPU finding nothing to free.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from ..aggregate.partials import DEFAULT_BOOTSTRAP, DEFAULT_SEED, SuitePartial
from ..model import Case, Trajectory
from ..read.intake import RunKeyer, case_map_of
from ..read.traces.native_facts import LineRun
from ..report.scorecard import RunResult, Scorecard
from .scoring import score_compact_by_id, score_run

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator

    from ..match.matchers import MatchContext

DEFAULT_KEEP_RUNS = 1000
GC_THRESHOLD0 = 200_000  # allocations between generation-0 collections inside the loop


@contextmanager
def scoring_gc() -> Iterator[None]:
    """Raise the collector's generation-0 threshold (after freezing what exists) for a
    scoring loop, and restore it after (module docstring)."""
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD0, old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def score_into(part: SuitePartial, keyed: Iterable[tuple[int, Trajectory | LineRun, Any]], *,
               cases: Mapping[str, Case] | None = None, context: MatchContext | None = None,
               progress: Callable[[int], None] | None = None,
               on_result: Callable[[RunResult, Trajectory], None] | None = None) -> SuitePartial:
    """Score ``(position, trajectory, case)`` runs into ``part``: compact results, and in
    full (transcript and call table) the runs ``part`` keeps for reports. With ``cases``
    given, ``keyed`` holds ``(position, trajectory, case id)`` of ``cases``, and a case is
    built only for the runs that need it (``scoring.score_compact_by_id``). A run may come
    as a ``traces.native_facts.LineRun`` (``TraceStream.fused_runs``; only with ``cases``
    and without ``on_result``): it is scored from its facts (``fused_scoring.line_compact``)
    and its trajectory built only to score it in full or when the fast scorer falls back.
    ``progress`` (optional) is called with the number of runs scored so far, every 256 runs
    and at the end. ``on_result`` (optional) gets every run's result with its trajectory
    (e.g. ``otel_events.EvaluationEmitter.emit``), in full for the runs kept for reports.

    Without ``on_result`` and with a cap on the kept runs, a run ``part`` wants is added
    compact (its figures and flags are the full result's) and its trajectory held; once
    every run is in, only the runs ``part`` still keeps are scored in full and put in
    place of their compact results (the first ``keep_runs`` runs are all wanted while the
    kept list fills, and most of them give way to failing runs later). A run read to its
    facts then gets no failing reason unless it records a reward: the aggregate reads
    reasons only there (a disagreement names it) and in the runs it shows."""
    defer = on_result is None and part.keep_runs is not None
    held: dict[int, tuple[Trajectory | LineRun, Any]] = {}  # position -> run kept compact for now
    n = 0
    from .fused_scoring import line_compact  # imports the fast scorer (and the metrics)

    t: Any
    for seq, t, c in keyed:
        if type(t) is LineRun:
            # a failing run's reason is read only when the run is shown (then scored again
            # in full) or its verdict disagrees with a recorded reward (the aggregate names it)
            r = line_compact(t, cases, c, context=context,  # type: ignore[arg-type]
                             reasons=not defer or "reward" in t.metadata)
        elif cases is None:
            r = score_run(t, c, context=context, compact=True)
        else:
            r = score_compact_by_id(t, cases, c, context=context)
        if part.wants(r):
            if defer:
                held[seq] = (t, c)
                if len(held) > 2 * len(part.kept) + 64:  # drop the runs no longer kept
                    keep = {q for q, _ in part.kept}
                    held = {q: v for q, v in held.items() if q in keep}
            else:
                t = t.trajectory() if type(t) is LineRun else t
                r = score_run(t, c if cases is None else cases[c], context=context)
        part.add(r, seq)
        if on_result is not None:
            on_result(r, t)
        n += 1
        if progress is not None and not n & 255:
            progress(n)
    if held:
        part._trim()  # the runs the scorecard shows (as engines.batch does for its rows)
        kept = part.kept
        for i, (seq, _r) in enumerate(kept):
            got = held.get(seq)
            if got is not None:
                t, c = got
                if type(t) is LineRun:
                    t = t.trajectory()
                kept[i] = (seq, score_run(t, c if cases is None else cases[c], context=context))
    if progress is not None:
        progress(n)
    return part


def route_runs(traces: Iterable[Trajectory], *, on_result: Callable[..., Any] | None = None,
               keep_runs: int | None = DEFAULT_KEEP_RUNS) -> Iterator[Trajectory | LineRun]:
    """The runs of ``traces`` as the scorer takes them: the one choice of route, for the CLI
    and the library alike. A trace stream (``traces.TraceStream``) gives its usual native
    lines as scoring facts (``native_facts.LineRun``, no ``Trajectory`` built: the fused
    route) when every run's result is all that is needed until the end (no ``on_result``,
    a cap on the kept runs); any other iterable, or a stream otherwise, gives its runs as
    they are. ``score_into`` scores both kinds.

    Args:
        traces: a ``TraceStream`` or any iterable of ``Trajectory``.
        on_result: as in ``score_into`` (given: every run's trajectory is needed).
        keep_runs: as in ``evaluate_stream`` (None or 0: every run kept in full).

    Returns:
        An iterator over the runs, each a ``Trajectory`` or a ``LineRun``.
    """
    fused = getattr(traces, "fused_runs", None)
    if fused is not None and on_result is None and keep_runs:
        return iter(fused())
    return iter(traces)


def evaluate_stream(traces: Iterable[Trajectory], cases: Mapping[str, Case] | Sequence[Case] | None = None,
                    *, ks: Sequence[int] | None = None, context: MatchContext | None = None,
                    seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_BOOTSTRAP,
                    confidence: float = 0.95, source: str | None = None,
                    route_floors: Mapping[Any, float] | None = None,
                    keep_runs: int | None = DEFAULT_KEEP_RUNS,
                    progress: Callable[[int], None] | None = None,
                    stats: dict[str, int] | None = None,
                    on_result: Callable[[RunResult, Trajectory], None] | None = None) -> Scorecard:
    """Score recorded runs in one pass (module docstring); the scorecard of
    ``suite.evaluate`` on the same input.

    ``traces``: a ``traces.TraceStream`` (its ``problems`` and, when ``cases`` is None, its
    ``cases`` are used, as ``evaluate`` uses a ``LoadResult``'s) or any iterable of
    ``Trajectory``. ``cases``: mapping id -> ``Case`` or a sequence of cases. ``keep_runs``:
    how many runs the scorecard lists (None: all). ``progress``: called with the number of
    runs scored so far. ``stats`` (optional) receives ``no_case_id``, ``unknown`` and
    ``missing``: runs without a case id, runs naming an unknown case, cases without runs.
    ``on_result`` as in ``score_into``. Other arguments as in ``suite.evaluate``. Raises what ``evaluate``
    raises (``MetricInputError`` when no trace matched a case, ``KTooLargeError``, reader
    errors as ``TraceFormatError``).
    """
    part = SuitePartial(keep_runs=keep_runs)
    it: Iterator[Trajectory | LineRun] = route_runs(traces, on_result=on_result,
                                                    keep_runs=keep_runs)
    first: list[Trajectory | LineRun] = []
    for t in it:  # a tau-bench stream knows its cases once its first run is read
        first.append(t)
        break
    if cases is None:
        cases = getattr(traces, "cases", None) or {}
    # a dict is used as is, not copied: a stream's own cases (tau-bench, tau2) grow as later
    # files of a folder are read, after the first run
    keyer = RunKeyer(cases if isinstance(cases, Mapping) else case_map_of(cases))

    def runs() -> Iterator[tuple[int, Trajectory | LineRun, str]]:
        i = 0
        for src in (first, it):
            for t in src:
                # the case is built only when a run needs it; a LineRun has the metadata
                cid = keyer.key_id(i, cast(Trajectory, t))
                if cid is not None:
                    yield i, t, cid
                i += 1

    with scoring_gc():
        score_into(part, runs(), cases=keyer.case_map, context=context, progress=progress,
                   on_result=on_result)
    reader = list(getattr(traces, "problems", None) or ())
    keyer.problems[:0] = reader
    if stats is not None:
        stats.update(no_case_id=len(keyer.no_cid), unknown=len(keyer.unknown),
                     missing=sum(1 for c in keyer.case_map if c not in keyer.seen))
    problems = keyer.finish()
    return part.finalize(ks=ks, seed=seed, n_boot=n_boot, confidence=confidence,
                         problems=problems, meta={"source": source} if source else None,
                         route_floors=route_floors)


__all__ = ["DEFAULT_KEEP_RUNS", "evaluate_stream", "route_runs", "score_into", "scoring_gc"]
