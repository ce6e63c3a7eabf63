"""A JSONL file of runs cut into line-aligned byte ranges for engine tasks.

``ranges`` finds the line starts nearest ``n`` even cuts (a few small reads, no pass over
the file: Ray's ranges, Spark's fixed ranges when the result rows stream back, the case
file's parts; ``range_server`` cuts its own as the tasks ask); ``read_range`` gives a
range's lines in batches, each line numbered as Spark's ``monotonically_increasing_id``
numbers rows (range index in the high bits, line within the range in the low 33), so
positions increase in input order on both engines. A line that is not UTF-8 comes as a
``NotUtf8`` in place of its text, so the scorer reports it as the local reader does (Spark's
own text source would replace the bytes and score a changed run silently).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

ROW_BITS = 33  # as monotonically_increasing_id: the record number's bits


class NotUtf8:
    """A line that is not UTF-8, in place of its text: ``error`` from decoding it."""

    __slots__ = ("error",)

    def __init__(self, error: UnicodeDecodeError) -> None:
        self.error = error


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
               batch_rows: int = 8192) -> Iterator[tuple[list[int], list[str | NotUtf8]]]:
    """The lines starting in ``[start, end)`` (``start`` a line start) as batches of at most
    ``batch_rows``: ``(positions, texts)``, a text without its line break, a line that is
    not UTF-8 as a ``NotUtf8``."""
    base = index << ROW_BITS
    seqs: list[int] = []
    texts: list[str | NotUtf8] = []
    i = 0
    with open(path, "rb") as f:
        f.seek(start)
        at = start
        while at < end:
            line = f.readline()
            if not line:
                break
            at += len(line)
            try:
                texts.append(line.rstrip(b"\r\n").decode("utf-8"))
            except UnicodeDecodeError as e:
                texts.append(NotUtf8(e))
            seqs.append(base + i)
            i += 1
            if len(texts) >= batch_rows:
                yield seqs, texts
                seqs, texts = [], []
    if texts:
        yield seqs, texts


__all__ = ["ROW_BITS", "NotUtf8", "ranges", "read_range"]
