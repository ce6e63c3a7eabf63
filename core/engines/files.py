"""A JSONL file of runs cut into line-aligned byte ranges, one per engine task.

Engines score a file in tasks; each task's partial aggregate keeps up to ``keep_runs`` runs
in full (a report's runs; scored twice, compact then in full), so a task should hold many
runs, and the tasks should divide evenly among the workers so that none waits on the
last one. ``plan`` picks the number of ranges: at least ``CHUNK_BYTES`` per range unless
that leaves fewer than ``2 * workers`` (and at least 4) ranges, rounded up to a multiple of
``workers``. ``ranges`` finds the line starts nearest the even cuts (a few small reads, no
pass over the file); ``read_range`` gives a range's lines in batches, each line numbered as
Spark's ``monotonically_increasing_id`` numbers rows (range index in the high bits, line
within the range in the low 33), so positions increase in input order on both engines.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

CHUNK_BYTES = 128 * 1024 * 1024  # Spark's default spark.sql.files.maxPartitionBytes
ROW_BITS = 33  # as monotonically_increasing_id: the record number's bits


def plan(size: int, workers: int) -> int:
    """The number of ranges for a file of ``size`` bytes on ``workers`` workers (module
    docstring). Raises ``ValueError`` for ``workers < 1``."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    n = max(math.ceil(size / CHUNK_BYTES), 2 * workers, 4)
    return math.ceil(n / workers) * workers


def ranges(path: str | os.PathLike[str], n: int, start: int = 0,
           end: int | None = None) -> list[tuple[int, int]]:
    """``[start, end)`` byte ranges of ``path`` cut near ``n`` even points, each starting at
    a line start; empty ranges are dropped (a file of fewer lines than ``n``). ``start``
    (a line start) and ``end`` (default: the file's size) bound the part of the file cut."""
    size = os.path.getsize(path) if end is None else end
    cuts = [start]
    with open(path, "rb") as f:
        for i in range(1, n):
            pos = start + i * (size - start) // n
            if pos <= cuts[-1]:
                continue
            f.seek(pos - 1)
            f.readline()  # to the end of the line holding byte pos - 1: the next line starts >= pos
            at = f.tell()
            if cuts[-1] < at < size:
                cuts.append(at)
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def read_range(path: str | os.PathLike[str], start: int, end: int, index: int,
               batch_rows: int = 8192) -> Iterator[tuple[list[int], list[str]]]:
    """The lines starting in ``[start, end)`` (``start`` a line start) as batches of at most
    ``batch_rows``: ``(positions, texts)``, a text without its line break, bytes that are
    not UTF-8 replaced (as Spark's text source reads them)."""
    base = index << ROW_BITS
    seqs: list[int] = []
    texts: list[str] = []
    i = 0
    with open(path, "rb") as f:
        f.seek(start)
        at = start
        while at < end:
            line = f.readline()
            if not line:
                break
            at += len(line)
            texts.append(line.rstrip(b"\r\n").decode("utf-8", "replace"))
            seqs.append(base + i)
            i += 1
            if len(texts) >= batch_rows:
                yield seqs, texts
                seqs, texts = [], []
    if texts:
        yield seqs, texts


__all__ = ["CHUNK_BYTES", "ROW_BITS", "plan", "ranges", "read_range"]
