"""Ray Data driver: score a Dataset of runs with ``map_batches`` and the batch API.

``score_dataset(ds, cases)`` maps Arrow batches through a ``batch.BatchScorer``; each mapped
batch returns its per-run results plus one extra row holding that batch's partial (column
``partial``). Only the partials come to the driver, which merges them into the suite
scorecard; the results stay a Dataset without that column. Datasets without a ``seq``
column are numbered by zipping them with ``ray.data.range``.

``eval_file`` (``trajcheck eval --engine ray``) does not read the file through Ray Data: it
cuts it into line-aligned byte ranges (``files``) and starts one actor per worker, which
reads and scores the ranges it is given, numbered in input order, into one partial it keeps
(``tasks``) -- nothing per run crosses to the driver unless ``on_rows`` asks for the result
rows (they then come back in input order), and the driver only waits (Ray Data's executor
would poll on it, and start its own actors), then merges one partial per worker. The cases
go to the workers once (``ray.put``) and are unpacked once per actor.

Needs ray[data] (extra ``ray``). ``init`` starts a local Ray (loopback only, no dashboard)
unless one is running.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from ..errors import EngineError
from ..model import Case
from ..report.scorecard import Scorecard
from . import files, tasks
from .batch import (
    DEFAULT_KEEP_RUNS,
    BatchPartial,
    BatchScorer,
    ShippedScorer,
    finalize,
    group_spans,
)

PARTIAL = "partial"
BATCH_ROWS = 16384  # rows per map_batches call of score_dataset: one partial each
RANGE_BYTES = 16 * 1024 * 1024  # eval_file's ranges: small, so the workers finish together


def init(workers: int = 2) -> Any:
    """Start a local Ray with ``workers`` CPUs (or reuse the running one) and return the
    ``ray`` module. Raises ``EngineError`` without ray."""
    try:
        import ray
    except ImportError as e:
        raise EngineError("--engine ray needs ray: pip install 'trajcheck[ray]'") from e
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # Ray runs its workers at nice 15 by default; here they do the whole evaluation, and
        # on a shared machine niced workers get almost no CPU (measured: 1/10 of Spark's)
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, _node_ip_address="127.0.0.1")
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.execution_options.preserve_order = True
    return ray


def _get(ref: Any) -> Any:
    import ray

    return ray.get(ref)


def ship(scorer: BatchScorer) -> ShippedScorer:
    """``scorer`` with its cases put in Ray's object store once (``ray.put``), fetched and
    unpacked once per worker process."""
    import ray

    return ShippedScorer(scorer, partial(_get, ray.put(scorer.case_map)))


def _partial_row(part: BatchPartial, schema: Any) -> Any:
    import pyarrow as pa

    row: dict[str, Any] = dict.fromkeys(schema.names)
    row[PARTIAL] = part.to_bytes()
    return pa.RecordBatch.from_pylist([row], schema=schema)


class _Mapper:
    """The per-batch function of ``score_dataset`` (a plain callable so Ray ships it)."""

    def __init__(self, shipped: ShippedScorer, results: bool) -> None:
        self.shipped, self.results = shipped, results

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from .batch import result_schema

        scorer = self.shipped.get()
        part = scorer.new_partial()
        res = scorer.score(batch, part, rows=self.results)
        schema = (result_schema() if self.results else pa.schema([])).append(
            pa.field(PARTIAL, pa.binary()))
        out = [] if res is None else [res.append_column(PARTIAL, pa.nulls(res.num_rows, pa.binary()))]
        return pa.Table.from_batches(out + [_partial_row(part, schema)], schema=schema)


def _only_partials(batch: Any) -> Any:
    import pyarrow.compute as pc

    return batch.filter(pc.invert(pc.is_null(batch.column(PARTIAL)))).select([PARTIAL])


def _drop_partials(batch: Any) -> Any:
    import pyarrow.compute as pc

    keep = pc.is_null(batch.column(PARTIAL))
    return batch.filter(keep).drop_columns([PARTIAL])


def _numbered(ds: Any) -> Any:
    import ray

    n = ds.count()
    return ds.zip(ray.data.range(n).rename_columns({"id": "seq"}))


def _finalize(blobs: list[bytes], cases: Any, stats: dict[str, Any] | None = None,
              **kw: Any) -> Scorecard:
    sc = finalize([BatchPartial.from_bytes(b) for b in blobs], cases, stats=stats, **kw)
    if stats is not None:
        stats["partial_bytes"] = sum(map(len, blobs))
    return sc


def score_dataset(ds: Any, cases: Mapping[str, Case] | Sequence[Case], *,
                  trace_column: str = "trace", seq_column: str | None = None,
                  keep_runs: int | None = DEFAULT_KEEP_RUNS, format: str = "auto",
                  error_pattern: str | None = None, ks: Sequence[int] | None = None,
                  seed: int = 0, n_boot: int = 2000, confidence: float = 0.95,
                  source: str | None = None, grouped: bool = False,
                  case_column: str | None = None,
                  stats: dict[str, Any] | None = None) -> tuple[Any, Scorecard]:
    """Score a Ray Dataset with one run's JSON per row in ``trace_column`` (module
    docstring). Returns ``(results, scorecard)``: ``results`` a Dataset of per-run results
    (``batch.RESULT_FIELDS``) over the scored rows, which are held materialised in the
    object store. ``grouped`` and ``case_column`` as in ``batch.BatchScorer``; ``stats`` as
    in ``batch.finalize``, plus ``partial_bytes``. Raises what ``batch.finalize`` raises."""
    if seq_column is None:
        ds = _numbered(ds)
        seq_column = "seq"
    scorer = BatchScorer(cases, trace_column=trace_column, seq_column=seq_column,
                         keep_runs=keep_runs, format=format, error_pattern=error_pattern,
                         grouped=grouped, case_column=case_column, defer_full=True)
    out = ds.map_batches(_Mapper(ship(scorer), True), batch_format="pyarrow",
                         batch_size=BATCH_ROWS, zero_copy_batch=True).materialize()
    blobs = [x for b in out.map_batches(_only_partials, batch_format="pyarrow")
             .iter_batches(batch_format="pyarrow", batch_size=None)
             for x in b.column(PARTIAL).to_pylist()]
    sc = _finalize(blobs, scorer.case_map, ks=ks, seed=seed, n_boot=n_boot,
                   confidence=confidence, source=source, stats=stats)
    return out.map_batches(_drop_partials, batch_format="pyarrow"), sc


class _TraceOfSpans:
    """One trace id's span rows (a pyarrow Table) -> one run row (``batch.group_spans``)."""

    def __init__(self, span_column: str, seq_column: str, case_column: str | None) -> None:
        self.span_column, self.seq_column, self.case_column = span_column, seq_column, case_column

    def __call__(self, t: Any) -> Any:
        import pyarrow as pa

        seqs = t.column(self.seq_column).to_pylist()
        row: dict[str, Any] = {"trace": group_spans(zip(seqs, t.column(self.span_column).to_pylist())),
                               "seq": min(seqs)}
        if self.case_column is not None:
            ids = [str(c) for c in t.column(self.case_column).to_pylist() if c is not None]
            row["case_id"] = min(ids) if ids else None
        return pa.Table.from_pylist([row])


def spans_to_runs(ds: Any, *, trace_id_column: str = "trace_id", span_column: str = "span",
                  case_column: str | None = None, seq_column: str | None = None) -> Any:
    """A Dataset of span rows as one row per trace (``trace``, ``seq`` and, with
    ``case_column``, ``case_id``), as ``engines.spark.spans_to_runs`` builds them;
    positions come from ``seq_column`` or the rows' order."""
    if seq_column is None:
        ds = _numbered(ds)
        seq_column = "seq"
    one = _TraceOfSpans(span_column, seq_column, case_column)

    def trace_of_spans(t: Any) -> Any:  # map_groups wants a named function, not a callable object
        return one(t)

    return ds.groupby(trace_id_column).map_groups(trace_of_spans, batch_format="pyarrow")


def score_span_dataset(ds: Any, cases: Mapping[str, Case] | Sequence[Case], *,
                       trace_id_column: str = "trace_id", span_column: str = "span",
                       case_column: str | None = None, seq_column: str | None = None,
                       **kw: Any) -> tuple[Any, Scorecard]:
    """Score a Dataset of OTel span rows grouped by trace id, one run per trace
    (``spans_to_runs``; ``kw`` as in ``score_dataset``): the local eval's scorecard."""
    runs = spans_to_runs(ds, trace_id_column=trace_id_column, span_column=span_column,
                         case_column=case_column, seq_column=seq_column)
    return score_dataset(runs, cases, trace_column="trace", seq_column="seq", grouped=True,
                         case_column="case_id" if case_column is not None else None, **kw)


class _RangeWorker:
    """One worker of ``eval_file`` (a Ray actor holding one CPU): started ahead of the
    evaluation (``prestart``: its process and imports while the driver loads the cases),
    it unpacks the cases once (``begin``), scores the byte ranges it is given into one
    partial and hands that over at the end."""

    def __init__(self) -> None:
        from ..read.traces import stream  # noqa: F401  (imported now, not on the first range)

    def load_cases(self, path: str, start: int, end: int, codec: str,
                   dictionary: bytes | None) -> bytes:
        """The cases of byte range ``[start, end)`` of the case file (``case_load.load_part``)."""
        from .case_load import load_part

        return load_part(path, start, end, codec, dictionary)

    def begin(self, shipped: ShippedScorer, path: str) -> None:
        self.scorer = shipped.get()
        self.part = self.scorer.new_partial()
        self.path = path

    def score(self, start: int, end: int, index: int, rows: bool) -> Any:
        """Score range ``index``; its result rows (a pyarrow Table) with ``rows``, else None."""
        return tasks.score_range(self.scorer, self.part, self.path, start, end, index, rows)

    def partial(self) -> bytes:
        """The partial of every range scored here."""
        return self.part.to_bytes()


#: actors started by ``prestart`` that no evaluation has taken yet (the driver's, kept
#: between ``prestart`` and ``eval_file``)
_SPARE: list[Any] = []
# every read-and-change of ``_SPARE`` holds this lock: two evaluations started from two
# threads never both take (or both top up) the same actors
_SPARE_LOCK = threading.Lock()


def prestart(workers: int = 2) -> None:
    """Start the ``workers`` actors of the next ``eval_file`` now (Ray must be running):
    their processes start and import trajcheck while the caller does other work (loading
    the cases: ``engines.eval_files``)."""
    import ray

    actor = ray.remote(num_cpus=1)(_RangeWorker)
    with _SPARE_LOCK:
        while len(_SPARE) < workers:
            _SPARE.append(actor.remote())


def load_case_parts(todo: list[tuple[int, int]], path: str, codec: str,
                    dictionary: bytes | None) -> list[bytes]:
    """The cases of each byte range of ``todo``, one range per actor of the next
    ``eval_file`` (``prestart``; ``case_load.load_part``'s bytes, in ``todo``'s order)."""
    import ray

    prestart(len(todo))
    with _SPARE_LOCK:
        actors = list(_SPARE)
    return list(ray.get([a.load_cases.remote(path, s, e, codec, dictionary)
                         for a, (s, e) in zip(actors, todo)]))


def release() -> None:
    """Stop the actors ``prestart`` started that no evaluation took (each holds a CPU)."""
    import ray

    with _SPARE_LOCK:
        spare = _SPARE[:]
        _SPARE.clear()
    for a in spare:
        ray.kill(a)


def _pool(workers: int) -> list[Any]:
    prestart(workers)
    with _SPARE_LOCK:
        pool = _SPARE[:workers]
        del _SPARE[:workers]
    return pool


def eval_file(path: str, cases: Mapping[str, Case] | Sequence[Case], *, workers: int = 2,
              on_rows: Callable[[Iterator[Any]], None] | None = None,
              keep_runs: int | None = DEFAULT_KEEP_RUNS, format: str = "auto",
              error_pattern: str | None = None, ks: Sequence[int] | None = None,
              seed: int = 0, n_boot: int = 2000, confidence: float = 0.95,
              stats: dict[str, Any] | None = None) -> Scorecard:
    """Score a JSONL file of runs (one per line) on a local Ray (``workers`` CPUs) and
    return the scorecard (the local eval's); ``stats`` (optional) gets what
    ``batch.finalize`` puts there, plus ``partial_bytes``. ``workers`` actors each keep one partial; the
    file's byte ranges (``files.ranges``, about ``RANGE_BYTES`` each) go to whichever actor
    is free, so a slow worker holds back at most one small range. ``on_rows`` (optional)
    gets the per-run result rows in input order (e.g. ``EvaluationEmitter.emit_rows``),
    streamed as the ranges finish."""
    ray = init(workers)
    scorer = BatchScorer(cases, keep_runs=keep_runs, format=format, error_pattern=error_pattern,
                         defer_full=True)
    full = os.path.abspath(path)
    size = os.path.getsize(full)
    cuts = files.ranges(full, max(-(-size // RANGE_BYTES), 2 * workers))
    shipped = ray.put(ship(scorer))
    pool = _pool(workers)
    for a in pool:
        a.begin.remote(shipped, full)
    want = on_rows is not None
    todo = list(enumerate(cuts))[::-1]
    busy: dict[Any, tuple[int, int]] = {}  # result ref -> (range index, its actor's index)
    owed = [0] * len(pool)  # ranges given to each actor and not returned yet
    asked: dict[Any, int] = {}  # partial ref -> its actor's index
    closed: set[int] = set()  # actors whose partial was asked for

    def give(j: int) -> None:
        if todo:
            i, (s0, e0) = todo.pop()
            busy[pool[j].score.remote(s0, e0, i, want)] = (i, j)
            owed[j] += 1
        elif not owed[j] and j not in closed:  # its partial now, while the others finish
            closed.add(j)
            asked[pool[j].partial.remote()] = j

    for j in range(len(pool)):  # two ranges queued per actor: no idle gap between ranges
        give(j)
        give(j)

    def drive() -> Iterator[tuple[str, Any]]:
        """("rows", a row) in input order (with ``want``) and ("partial", bytes) as each
        actor has scored its last range."""
        done: dict[int, Any] = {}
        nxt = 0
        while busy or asked:
            ready, _ = ray.wait([*busy, *asked], num_returns=1)
            ref = ready[0]
            if ref in asked:
                blob = ray.get(ref)
                ray.kill(pool[asked.pop(ref)])  # its cases and partial go now
                yield "partial", blob
                continue
            i, j = busy.pop(ref)
            table = ray.get(ref)  # raises a task's error here
            owed[j] -= 1
            give(j)
            if want:
                done[i] = table
                while nxt in done:  # in input order
                    for row in done.pop(nxt).to_pylist():
                        yield "row", row
                    nxt += 1

    sizes: list[int] = []
    try:
        if on_rows is None:  # the first partial is unpacked while the other actors score
            blobs: Iterator[bytes] = (b for _, b in drive())
        else:
            got: list[bytes] = []

            def rows() -> Iterator[Any]:
                for kind, x in drive():
                    if kind == "row":
                        yield x
                    else:
                        got.append(x)

            it = rows()
            on_rows(it)
            for _ in it:  # what on_rows left unread
                pass
            blobs = iter(got)
        sc = finalize(tasks.partials_of(blobs, sizes), scorer.case_map, ks=ks, seed=seed,
                      n_boot=n_boot, confidence=confidence, source=str(path), stats=stats)
    finally:
        for a in pool:  # (an error on the way: the actors still running)
            ray.kill(a)
    if stats is not None:
        stats["partial_bytes"] = sum(sizes)
    return sc


__all__ = ["eval_file", "init", "load_case_parts", "prestart", "release", "score_dataset", "score_span_dataset", "spans_to_runs"]
