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

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Case
from ..scorecard import Scorecard

ENGINES = ("spark", "ray")


def eval_files(path: str, cases: Mapping[str, Case] | Sequence[Case], *, engine: str,
               workers: int = 2, **kw: Any) -> Scorecard:
    """``trajcheck eval --engine``: score a JSONL file (one run per line) on ``engine``
    (``"spark"``: local[workers]; ``"ray"``: a local Ray with ``workers`` CPUs) and return
    the scorecard (equal to the local eval's). ``kw``: ``ks``, ``seed``, ``n_boot``,
    ``confidence``, ``keep_runs``, ``format``, ``error_pattern``, ``on_rows`` (the per-run
    result rows in input order, e.g. for the evaluation events). Raises ``EngineError`` when
    the engine is not installed or unknown."""
    from ..errors import EngineError

    if engine == "spark":
        from .spark import eval_file as spark_eval
        return spark_eval(path, cases, workers=workers, **kw)
    if engine == "ray":
        from .ray import eval_file as ray_eval
        return ray_eval(path, cases, workers=workers, **kw)
    raise EngineError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


__all__ = ["ENGINES", "eval_files"]
