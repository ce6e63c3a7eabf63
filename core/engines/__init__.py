"""Scoring where the data is: an engine-neutral batch API over Arrow record batches, and
drivers for Apache Spark and Ray Data built on it.

- ``trajcheck.engines.batch``: ``BatchScorer`` scores a ``pyarrow.RecordBatch`` of runs (one
  run's JSON per row, with its position in the input) into a record batch of per-run
  results and folds the runs into a ``BatchPartial`` (a ``aggregate.SuitePartial`` plus the
  problems met); partials merge associatively, and ``finalize`` turns any merge of them
  into the scorecard a local ``trajcheck eval`` gives on the same input.
- ``trajcheck.engines.spark``: ``score_dataframe`` (``mapInArrow``) and ``eval_file``.
- ``trajcheck.engines.ray``: ``score_dataset`` (``map_batches``) and ``eval_file``.

pyarrow, pyspark and ray are imported only here (extras ``arrow``, ``spark``, ``ray``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..model import Case
from ..report.scorecard import Scorecard
from .case_load import CaseFile, start_while_loading

ENGINES = ("spark", "ray")
Cases = Mapping[str, Case] | Sequence[Case]
CasesArg = Cases | Callable[[], Cases]


def eval_files(path: str, cases: CasesArg, *, engine: str, workers: int = 2,
               stats: dict[str, Any] | None = None, **kw: Any) -> Scorecard:
    """``trajcheck eval --engine``: score a JSONL file (one run per line) on ``engine``
    (``"spark"``: local[workers]; ``"ray"``: a local Ray with ``workers`` CPUs) and return
    the scorecard (equal to the local eval's). ``cases``: the cases (a mapping by id or a
    sequence) or a function of no arguments loading them (e.g. ``functools.partial(
    dataset.load_case_store, path)``), which then runs in a thread while the engine and
    its Python workers start (the JVM, Ray's processes), and whose errors are raised here. ``kw``: ``ks``, ``seed``,
    ``n_boot``, ``confidence``, ``keep_runs``, ``format``, ``error_pattern``, ``on_rows``
    (the per-run result rows in input order, e.g. for the evaluation events); for Spark
    also ``spark`` (a session to use). ``stats`` (optional, the caller's dict; bench/engines.py
    reads it) gets when the evaluation began and when cases and engine were ready
    (``started_at``, ``ready_at``, ``time.monotonic``), the case load's CPU seconds and
    bytes, and what ``batch.finalize`` and the engine put there. Raises ``EngineError``
    when the engine is not installed or unknown."""
    from ..errors import EngineError

    stats = {} if stats is None else stats
    stats["started_at"] = time.monotonic()
    if engine == "spark":
        from .spark import eval_file as spark_eval
        from .spark import load_case_parts as spark_parts
        from .spark import session, warm

        given = kw.pop("spark", None)

        def start_spark() -> Any:
            s = given or session(workers, lean=True)
            if callable(cases):  # the Python workers start while the cases load
                warm(s)
            return s

        if isinstance(cases, CaseFile) and cases.split():
            cf = cases

            def spark_rest(s: Any, todo: list[tuple[int, int]], codec: str, d: bytes | None) -> list[bytes]:
                return spark_parts(s, cf.path, todo, codec, d)

            n = int(given.sparkContext.defaultParallelism) if given is not None else workers
            loaded: Cases
            loaded, s = start_while_loading(cf, start_spark, spark_rest, n, stats)
        else:
            loaded, s = _while_starting(cases, start_spark, stats)
        stats["ready_at"] = time.monotonic()
        return spark_eval(path, loaded, workers=workers, spark=s, stats=stats, **kw)
    if engine == "ray":
        from .ray import eval_file as ray_eval
        from .ray import init, prestart, release
        from .ray import load_case_parts as ray_parts

        def start_ray() -> None:
            init(workers)
            prestart(workers)  # the actors start while the cases load

        try:
            if isinstance(cases, CaseFile) and cases.split():
                cf = cases

                def ray_rest(_: Any, todo: list[tuple[int, int]], codec: str, d: bytes | None) -> list[bytes]:
                    return ray_parts(todo, cf.path, codec, d)

                loaded, _ = start_while_loading(cf, start_ray, ray_rest, workers, stats)
            else:
                loaded, _ = _while_starting(cases, start_ray, stats)
            stats["ready_at"] = time.monotonic()
            return ray_eval(path, loaded, workers=workers, stats=stats, **kw)
        finally:
            release()  # actors left unused (the cases failed to load): their CPUs back
    raise EngineError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


def _while_starting(cases: CasesArg, start: Callable[[], Any],
                    stats: dict[str, Any]) -> tuple[Cases, Any]:
    """``(cases, start())``, a loader of ``cases`` run in a thread meanwhile: the engine
    starts in this thread (Ray's ``init`` sets signal handlers, which only the main thread
    may), the loading waits on nothing and mostly needs the interpreter while the start
    mostly waits on the engine's own processes."""
    if not callable(cases):
        return cases, start()

    def load() -> Cases:
        t0 = time.thread_time()
        try:
            return cases()
        finally:  # all of it on the driver (bench/engines.py reads this)
            stats.update(cases_driver_cpu_s=time.thread_time() - t0, cases_front_bytes=1,
                         cases_bytes=1)

    with ThreadPoolExecutor(1, thread_name_prefix="trajcheck-cases") as ex:
        fut = ex.submit(load)
        handle = start()
        return fut.result(), handle


__all__ = ["ENGINES", "eval_files"]
