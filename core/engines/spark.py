"""Apache Spark driver: score a DataFrame of runs with ``mapInArrow`` and the batch API.

``score_dataframe(df, cases)`` maps each partition's Arrow batches through a
``batch.BatchScorer`` and returns the per-run results as a DataFrame (lazy: each action
on it scores again -- cache it when it is used more than once) and the suite scorecard
(one action: the partitions' partials are collected, then unpacked and merged one at a
time on the driver). The
partial of a partition travels as one extra row whose ``partial`` column holds its bytes.
``eval_file`` (``trajcheck eval --engine spark``) scores a JSONL file of runs: one task per
core reads line-aligned byte ranges of the file itself, as the driver hands them out
(``range_server``), and keeps one partial (``tasks``).
In ``score_dataframe``, input positions come from ``seq_column`` or, when None,
``monotonically_increasing_id()`` -- increasing in input order, so the cases keep the order
a local eval gives them and every figure equals the local eval's.

Needs pyspark (extra ``spark``) and a Java runtime (``java`` on PATH or ``JAVA_HOME``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import EngineError
from ..model import Case
from ..report.scorecard import Scorecard
from . import files, tasks
from .batch import (
    DEFAULT_KEEP_RUNS,
    RESULT_FIELDS,
    BatchScorer,
    ShippedScorer,
    finalize,
)

PARTIAL = "partial"


def _spark_schema(results: bool = True) -> Any:
    from pyspark.sql import types as T

    kinds = {"int64": T.LongType(), "string": T.StringType(), "bool": T.BooleanType(),
             "float64": T.DoubleType()}
    fields = [T.StructField(n, kinds[t]) for n, t in RESULT_FIELDS] if results else []
    return T.StructType(fields + [T.StructField(PARTIAL, T.BinaryType())])


#: the driver JVM's options for a session that only schedules trajcheck's own tasks
#: (``eval_file``: the Python workers read the file, score and send back one partial each):
#: the client compiler alone and one GC thread -- started in about half the CPU (C2's
#: compiler threads compete with the case load and the workers on a small machine)
LEAN_JVM = "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"


def builder(workers: int = 2, app: str = "trajcheck", *, lean: bool = False) -> tuple[Any, Any]:
    """``(SparkSession builder, jvm_archive.Plan)`` of ``session``: with ``lean``, the JVM
    options ``LEAN_JVM`` and the driver's class-data archive (``jvm_archive.plan``; an
    empty plan without ``lean``). Raises ``EngineError`` without pyspark or Java."""
    from .jvm_archive import Plan, plan

    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise EngineError("--engine spark needs pyspark: pip install 'trajcheck[spark]'") from e
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise EngineError("--engine spark needs a Java runtime (java on PATH or JAVA_HOME); "
                          "on Debian: apt-get install openjdk-17-jre-headless")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = SparkSession.builder
    p = Plan()
    if lean:
        p = plan(LEAN_JVM)
        b = b.config("spark.driver.extraJavaOptions", f"{LEAN_JVM} {p.extra}".strip())
    return (b.master(f"local[{workers}]").appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")), p


def session(workers: int = 2, app: str = "trajcheck", *, lean: bool = False) -> Any:
    """A local Spark session with ``workers`` cores (``local[workers]``), Python workers
    running this interpreter; ``lean``: its JVM started with ``LEAN_JVM`` and the driver's
    class-data archive (``jvm_archive``: written when this process exits if the machine
    has none yet; set aside if the JVM fails to start with it), when this call starts it.
    Raises ``EngineError`` without pyspark or Java."""
    from pyspark import SparkContext

    from . import jvm_archive

    b, p = builder(workers, app, lean=lean)
    fresh = SparkContext._gateway is None  # this call starts the JVM: its options apply
    if fresh:
        jvm_archive.warn(p)  # an unsafe cache, or an archive that failed its check
    try:
        s = b.getOrCreate()
    except Exception:
        if not (fresh and p.maps is not None and SparkContext._gateway is None):
            raise
        jvm_archive.discard(p.maps)  # a damaged archive: the JVM exited; start without it
        b, p = builder(workers, app, lean=lean)
        s = b.getOrCreate()
    if fresh and p.writes is not None:
        jvm_archive.finish_at_exit(s, p.writes)
    return s


def _mapper(shipped: ShippedScorer, results: bool) -> Any:
    """The mapInArrow function: one partition's batches -> its per-run results (with
    ``results``) and one last row holding the partition's partial."""
    import pyarrow as pa

    from .batch import result_schema

    schema = (result_schema() if results else pa.schema([])).append(pa.field(PARTIAL, pa.binary()))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        scorer = shipped.get()
        part = scorer.new_partial()
        for b in batches:
            res = scorer.score(b, part, rows=results)
            if res is not None:
                yield res.append_column(PARTIAL, pa.nulls(res.num_rows, pa.binary()))
        row: dict[str, Any] = dict.fromkeys(schema.names)
        row[PARTIAL] = part.to_bytes()
        yield pa.RecordBatch.from_pylist([row], schema=schema)
    return run


def _warm_task(it: Iterator[Any]) -> Iterator[int]:
    from ..read.traces import stream  # noqa: F401
    from . import tasks  # noqa: F401

    return iter([os.getpid()])


def warm(spark: Any) -> None:
    """Start the session's Python workers and import trajcheck in them now, with one
    small job (one task per core): Spark reuses these processes for the evaluation's
    tasks, which then do not wait for them (``engines.eval_files`` runs this while the
    cases load)."""
    n = int(spark.sparkContext.defaultParallelism)
    spark.sparkContext.parallelize(range(n), n).mapPartitions(_warm_task).collect()


def _case_task(path: str, codec: str, dictionary: bytes | None) -> Any:
    def run(todo: Iterator[tuple[int, int]]) -> Iterator[bytes]:
        from .case_load import load_part

        return iter([load_part(path, a, b, codec, dictionary) for a, b in todo])
    return run


def load_case_parts(spark: Any, path: str, todo: list[tuple[int, int]], codec: str,
                    dictionary: bytes | None) -> list[bytes]:
    """The cases of each byte range of ``todo`` loaded by one task (``case_load.load_part``'s
    bytes, in ``todo``'s order): the workers' part of the case file
    (``case_load.start_while_loading``)."""
    sc = spark.sparkContext
    rdd = sc.parallelize(todo, len(todo)).mapPartitions(_case_task(path, codec, dictionary))
    return list(rdd.collect())


def ship(spark: Any, scorer: BatchScorer) -> ShippedScorer:
    """``scorer`` with its cases in a Spark broadcast: sent to each executor once and
    unpacked once per Python worker process (workers are reused across tasks)."""
    bc = spark.sparkContext.broadcast(scorer.case_map)
    return ShippedScorer(scorer, lambda: bc.value)


def score_dataframe(df: Any, cases: Mapping[str, Case] | Sequence[Case], *,
                    trace_column: str = "trace", seq_column: str | None = None,
                    keep_runs: int | None = DEFAULT_KEEP_RUNS, format: str = "auto",
                    error_pattern: str | None = None, ks: Sequence[int] | None = None,
                    seed: int = 0, n_boot: int = 2000, confidence: float = 0.95,
                    source: str | None = None, grouped: bool = False,
                    case_column: str | None = None,
                    stats: dict[str, Any] | None = None) -> tuple[Any, Scorecard]:
    """Score a Spark DataFrame with one run's JSON per row in ``trace_column`` (module
    docstring). Returns ``(results, scorecard)``: ``results`` a DataFrame of per-run results
    (``batch.RESULT_FIELDS``), ``scorecard`` the suite's. ``grouped`` and ``case_column`` as
    in ``batch.BatchScorer``; ``stats`` as in ``batch.finalize``, plus ``partial_bytes``.
    Raises what ``batch.finalize`` raises."""
    from pyspark.sql import functions as F

    if seq_column is None:
        df = df.withColumn("seq", F.monotonically_increasing_id())
        seq_column = "seq"
    cols = [F.col(trace_column).alias("trace"), F.col(seq_column).cast("long").alias("seq")]
    if case_column is not None:
        cols.append(F.col(case_column).cast("string").alias("case_id"))
    df = df.select(*cols)
    scorer = BatchScorer(cases, trace_column="trace", seq_column="seq", keep_runs=keep_runs,
                         format=format, error_pattern=error_pattern, grouped=grouped,
                         case_column="case_id" if case_column is not None else None,
                         defer_full=True)
    shipped = ship(df.sparkSession, scorer)
    # the scorecard's action builds no result rows: only each partition's partial comes back
    rows = df.mapInArrow(_mapper(shipped, False), _spark_schema(False)).collect()
    sizes: list[int] = []
    sc = finalize(tasks.partials_of((bytes(r[PARTIAL]) for r in rows), sizes), scorer.case_map,
                  ks=ks, seed=seed, n_boot=n_boot, confidence=confidence, source=source,
                  stats=stats)
    if stats is not None:
        stats["partial_bytes"] = sum(sizes)
    out = df.mapInArrow(_mapper(shipped, True), _spark_schema())
    results = out.where(F.col(PARTIAL).isNull()).drop(PARTIAL)
    return results, sc


def spans_to_runs(df: Any, *, trace_id_column: str = "trace_id", span_column: str = "span",
                  case_column: str | None = None, seq_column: str | None = None) -> Any:
    """A DataFrame of span rows (one OTel span's JSON per row in ``span_column``, its trace
    id in ``trace_id_column``) as one row per trace: ``trace`` (the JSON list of its spans
    in input order, ``batch.group_spans``' text), ``seq`` (the position of its first span)
    and, with ``case_column``, ``case_id`` (the smallest non-null case id of its spans).
    Positions come from ``seq_column`` or ``monotonically_increasing_id()``."""
    from pyspark.sql import functions as F

    if seq_column is None:
        df = df.withColumn("seq", F.monotonically_increasing_id())
        seq_column = "seq"
    seq = F.col(seq_column).cast("long")
    aggs = [F.min(seq).alias("seq"),
            F.sort_array(F.collect_list(F.struct(seq.alias("s"), F.col(span_column).alias("j"))))
            .alias("xs")]
    if case_column is not None:
        aggs.append(F.min(F.col(case_column).cast("string")).alias("case_id"))
    g = df.groupBy(F.col(trace_id_column)).agg(*aggs)
    trace = F.concat(F.lit("["), F.concat_ws(",", F.col("xs.j")), F.lit("]"))
    return g.select(trace.alias("trace"), "seq", *(["case_id"] if case_column is not None else []))


def score_span_dataframe(df: Any, cases: Mapping[str, Case] | Sequence[Case], *,
                         trace_id_column: str = "trace_id", span_column: str = "span",
                         case_column: str | None = None, seq_column: str | None = None,
                         **kw: Any) -> tuple[Any, Scorecard]:
    """Score a DataFrame of OTel span rows: grouped by trace id into one run each
    (``spans_to_runs``), each run read from all its spans together and scored as
    ``score_dataframe`` scores runs (``kw`` as there). A local eval of the same spans gives
    the same scorecard."""
    runs = spans_to_runs(df, trace_id_column=trace_id_column, span_column=span_column,
                         case_column=case_column, seq_column=seq_column)
    return score_dataframe(runs, cases, trace_column="trace", seq_column="seq", grouped=True,
                           case_column="case_id" if case_column is not None else None, **kw)


def _range_task(shipped: ShippedScorer, path: str) -> Any:
    """The mapPartitions function of ``eval_file`` with result rows: a partition of byte
    ranges -> their result rows and one partial (``tasks.score_ranges``)."""
    def run(todo: Iterator[tuple[int, int, int]]) -> Iterator[tuple[str, bytes]]:
        return tasks.score_ranges(shipped.get(), path, todo, True)
    return run


def _pull_task(shipped: ShippedScorer, path: str, address: tuple[str, int], token: str) -> Any:
    """The mapPartitions function of ``eval_file`` without result rows: score the ranges
    the driver's ``RangeServer`` hands out, then send it the partial (``tasks.score_pulled``)."""
    def run(_: Iterator[int]) -> Iterator[int]:
        from .range_server import RangeClient

        with RangeClient(address, token) as client:
            return iter([tasks.score_pulled(shipped.get(), path, client)])
    return run


def _eval_pulled(s: Any, shipped: ShippedScorer, full: str, n: int, sizes: list[int], *,
                 path: str, case_map: Any, stats: dict[str, Any] | None, **kw: Any) -> Scorecard:
    """``eval_file`` without result rows: ``n`` tasks pull ranges from a ``RangeServer`` on
    the driver and send their partials back to it; the driver merges each as it comes,
    while the job runs in a thread (cancelled when the driver fails first)."""
    from concurrent.futures import ThreadPoolExecutor

    from .range_server import RangeServer

    sc_ = s.sparkContext
    host = sc_.getConf().get("spark.driver.host", "127.0.0.1")
    group = f"trajcheck-{os.getpid()}-{id(shipped)}"
    with RangeServer(full, n, host) as srv:
        job = sc_.parallelize(range(n), n).mapPartitions(
            _pull_task(shipped, full, srv.address, srv.token))

        def run_job() -> list[int]:
            sc_.setJobGroup(group, "trajcheck eval", interruptOnCancel=True)
            return list(job.collect())

        with ThreadPoolExecutor(1, thread_name_prefix="trajcheck-job") as ex:
            fut = ex.submit(run_job)
            try:
                return finalize(tasks.partials_of(srv.partials(fut), sizes), case_map,
                                source=str(path), stats=stats, **kw)
            except BaseException:
                sc_.cancelJobGroup(group)
                raise
            finally:
                if stats is not None:
                    stats["partial_bytes"] = sum(sizes)


def eval_file(path: str, cases: Mapping[str, Case] | Sequence[Case], *, workers: int = 2,
              spark: Any = None, on_rows: Callable[[Iterator[Any]], None] | None = None,
              keep_runs: int | None = DEFAULT_KEEP_RUNS, format: str = "auto",
              error_pattern: str | None = None, ks: Sequence[int] | None = None,
              seed: int = 0, n_boot: int = 2000, confidence: float = 0.95,
              stats: dict[str, Any] | None = None) -> Scorecard:
    """Score a JSONL file of runs on Spark (a session of ``workers`` local cores unless
    ``spark`` is given) and return the scorecard (the local eval's). ``on_rows`` (optional)
    gets the per-run result rows (mappings of ``batch.RESULT_FIELDS``) in input order,
    e.g. ``EvaluationEmitter.emit_rows``; ``stats`` (optional) what ``batch.finalize``
    puts there, plus ``partial_bytes`` (the partials' serialised size).

    One task per core of the session scores the file and keeps one partial: no JVM read
    of the text and no Arrow transfer per run, and the driver merges one partial per core.
    Without ``on_rows`` the tasks pull line-aligned byte ranges from a server on the
    driver as they free up (``range_server``: guided sizes, so they finish together) and
    send their partials straight back to it, the first unpacked while the others score;
    with ``on_rows`` each task scores one fixed range (``files.ranges``), read back in
    input order. The executors must see ``path`` (local mode,
    or a file system shared with the cluster); for tables, use ``score_dataframe``."""
    s = spark or session(workers)
    sc_ = s.sparkContext
    scorer = BatchScorer(cases, keep_runs=keep_runs, format=format, error_pattern=error_pattern,
                         defer_full=True)
    full = os.path.abspath(path)
    n = max(int(sc_.defaultParallelism), 1)
    shipped = ship(s, scorer)
    sizes: list[int] = []
    if on_rows is None:
        return _eval_pulled(s, shipped, full, n, sizes, path=path, case_map=scorer.case_map,
                            ks=ks, seed=seed, n_boot=n_boot, confidence=confidence, stats=stats)
    # the result rows go to on_rows in input order: one fixed range per core, the
    # partitions read in order (each next one computed while this one is read)
    cuts = files.ranges(full, n)
    todo = [(a, b, i) for i, (a, b) in enumerate(cuts)]
    rdd = sc_.parallelize(todo, max(len(todo), 1)).mapPartitions(_range_task(shipped, full))

    def blobs() -> Iterator[bytes]:
        got: list[bytes] = []

        def rows() -> Iterator[Any]:
            for kind, b in rdd.toLocalIterator(prefetchPartitions=True):
                if kind == "partial":
                    got.append(b)
                else:
                    yield from tasks.table_of(b).to_pylist()
        it = rows()
        on_rows(it)
        for _ in it:  # what on_rows left unread
            pass
        yield from got

    sc = finalize(tasks.partials_of(blobs(), sizes), scorer.case_map, ks=ks, seed=seed,
                  n_boot=n_boot, confidence=confidence, source=str(path), stats=stats)
    if stats is not None:
        stats["partial_bytes"] = sum(sizes)
    return sc


__all__ = ["builder", "eval_file", "load_case_parts", "score_dataframe", "score_span_dataframe", "session", "spans_to_runs",
           "warm"]
