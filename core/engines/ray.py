"""Ray Data driver: score a Dataset of runs with ``map_batches`` and the batch API.

``score_dataset(ds, cases)`` maps Arrow batches through a ``batch.BatchScorer``; each mapped
batch returns its per-run results plus one extra row holding that batch's partial (column
``partial``). The partials are merged on the driver into the suite scorecard; the results
come back as a materialised Dataset without that column. ``eval_file`` reads a JSONL file
with ``ray.data.read_text`` and numbers the lines in input order by zipping the dataset
with ``ray.data.range`` (``trajcheck eval --engine ray``), so every figure equals the local
eval's. Datasets without a ``seq`` column are numbered the same way.

Needs ray[data] (extra ``ray``). ``init`` starts a local Ray (loopback only, no dashboard)
unless one is running.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import EngineError
from ..model import Case
from ..scorecard import Scorecard
from .batch import DEFAULT_KEEP_RUNS, BatchPartial, BatchScorer, finalize, group_spans

PARTIAL = "partial"
BATCH_ROWS = 4096


def init(workers: int = 2) -> Any:
    """Start a local Ray with ``workers`` CPUs (or reuse the running one) and return the
    ``ray`` module. Raises ``EngineError`` without ray."""
    try:
        import ray
    except ImportError as e:
        raise EngineError("--engine ray needs ray: pip install 'trajcheck[ray]'") from e
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 configure_logging=False, _node_ip_address="127.0.0.1")
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.execution_options.preserve_order = True
    return ray


class _Mapper:
    """The per-batch function (a plain callable so Ray ships it to the workers)."""

    def __init__(self, scorer: BatchScorer) -> None:
        self.scorer = scorer

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        part = self.scorer.new_partial()
        res = self.scorer.score(batch, part)
        res = res.append_column(PARTIAL, pa.nulls(res.num_rows, pa.binary()))
        row: dict[str, Any] = dict.fromkeys(res.schema.names)
        row[PARTIAL] = part.to_bytes()
        return pa.Table.from_batches([res, pa.RecordBatch.from_pylist([row], schema=res.schema)])


def _drop_partials(batch: Any) -> Any:
    import pyarrow.compute as pc

    keep = pc.is_null(batch.column(PARTIAL))
    return batch.filter(keep).drop_columns([PARTIAL])


def _numbered(ds: Any) -> Any:
    import ray

    n = ds.count()
    return ds.zip(ray.data.range(n).rename_columns({"id": "seq"}))


def score_dataset(ds: Any, cases: Mapping[str, Case] | Sequence[Case], *,
                  trace_column: str = "trace", seq_column: str | None = None,
                  keep_runs: int | None = DEFAULT_KEEP_RUNS, format: str = "auto",
                  error_pattern: str | None = None, ks: Sequence[int] | None = None,
                  seed: int = 0, n_boot: int = 2000, confidence: float = 0.95,
                  source: str | None = None, grouped: bool = False,
                  case_column: str | None = None) -> tuple[Any, Scorecard]:
    """Score a Ray Dataset with one run's JSON per row in ``trace_column`` (module
    docstring). Returns ``(results, scorecard)``: ``results`` a materialised Dataset of
    per-run results (``batch.RESULT_FIELDS``). ``grouped`` and ``case_column`` as in
    ``batch.BatchScorer``. Raises what ``batch.finalize`` raises."""
    if seq_column is None:
        ds = _numbered(ds)
        seq_column = "seq"
    scorer = BatchScorer(cases, trace_column=trace_column, seq_column=seq_column,
                         keep_runs=keep_runs, format=format, error_pattern=error_pattern,
                         grouped=grouped, case_column=case_column)
    out = ds.map_batches(_Mapper(scorer), batch_format="pyarrow", batch_size=BATCH_ROWS,
                         zero_copy_batch=True).materialize()
    parts: list[BatchPartial] = []
    for b in out.iter_batches(batch_format="pyarrow", batch_size=None):
        for x in b.column(PARTIAL).to_pylist():
            if x is not None:
                parts.append(BatchPartial.from_bytes(x))
    sc = finalize(parts, cases, ks=ks, seed=seed, n_boot=n_boot, confidence=confidence,
                  source=source)
    results = out.map_batches(_drop_partials, batch_format="pyarrow").materialize()
    return results, sc


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


def eval_file(path: str, cases: Mapping[str, Case] | Sequence[Case], *, workers: int = 2,
              on_rows: Callable[[Iterator[Any]], None] | None = None, **kw: Any) -> Scorecard:
    """Score a JSONL file of runs on a local Ray (``workers`` CPUs) and return the
    scorecard. ``on_rows`` (optional) gets the per-run result rows in input order (e.g.
    ``EvaluationEmitter.emit_rows``). ``kw`` as in ``score_dataset``."""
    ray = init(workers)
    ds = ray.data.read_text(str(path)).rename_columns({"text": "trace"})
    results, sc = score_dataset(ds, cases, source=str(path), **kw)
    if on_rows is not None:
        on_rows(iter(results.sort("seq").iter_rows()))
    return sc


__all__ = ["eval_file", "init", "score_dataset", "score_span_dataset", "spans_to_runs"]
