"""What an engine's worker does with a file of runs: score line-aligned byte ranges
(``files.ranges``, or as a ``range_server`` hands them out) into one partial aggregate that
it keeps across ranges.

A partial costs about the same to serialise, ship and merge whatever number of runs it
holds (its size follows the cases it has seen, and runs of a case lie anywhere in the
file), so the engines keep one partial per worker process rather than one per task: the
driver then unpacks and merges as many partials as there are workers, and the workers do
not serialise a partial for every range they score.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from . import files
from .batch import BatchPartial, BatchScorer, result_schema


def score_range(scorer: BatchScorer, part: BatchPartial, path: str, start: int, end: int,
                index: int, rows: bool) -> Any:
    """Score the lines of byte range ``[start, end)`` of ``path`` (range number ``index``,
    ``files.read_range``) into ``part``; their per-run results as a ``pyarrow.Table``
    (``batch.result_schema()``) with ``rows``, else None."""
    import pyarrow as pa

    out = []
    for seqs, texts in files.read_range(path, start, end, index):
        res = scorer.score_texts(seqs, texts, part, rows=rows)
        if res is not None:
            out.append(res)
    return pa.Table.from_batches(out, schema=result_schema()) if rows else None


def score_ranges(scorer: BatchScorer, path: str, todo: Iterable[tuple[int, int, int]],
                 rows: bool) -> Iterator[tuple[str, bytes]]:
    """Score ranges ``(start, end, index)`` of ``path`` into one partial: with ``rows``,
    each range's results first, as ``("rows", Arrow IPC stream bytes)``; then
    ``("partial", the partial's bytes)`` (``BatchPartial.to_bytes``)."""
    part = scorer.new_partial()
    for start, end, index in todo:
        t = score_range(scorer, part, path, start, end, index, rows)
        if t is not None:
            yield "rows", table_bytes(t)
    yield "partial", part.to_bytes()


def score_pulled(scorer: BatchScorer, path: str, client: Any) -> int:
    """Score the ranges of ``path`` that ``client`` (a ``range_server.RangeClient``) is
    given, as it asks for them, into one partial, and send that back over it; the number
    of ranges scored."""
    part = scorer.new_partial()
    n = 0
    for start, end, index in client.ranges():
        score_range(scorer, part, path, start, end, index, False)
        n += 1
    client.send_partial(part.to_bytes())
    return n


def table_bytes(t: Any) -> bytes:
    """A pyarrow Table as Arrow IPC stream bytes (what ``table_of`` reads back)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return bytes(sink.getvalue())


def table_of(b: bytes) -> Any:
    """The pyarrow Table of Arrow IPC stream bytes (``table_bytes``)."""
    import pyarrow as pa

    return pa.ipc.open_stream(b).read_all()


def partials_of(blobs: Iterable[bytes], sizes: list[int]) -> Iterator[BatchPartial]:
    """Partials unpacked one at a time as ``blobs`` come (the driver holds the merge so far
    and one more, not every partial at once); each blob's size appended to ``sizes``."""
    for b in blobs:
        sizes.append(len(b))
        p = BatchPartial.from_bytes(b)
        del b
        yield p


__all__ = ["partials_of", "score_pulled", "score_range", "score_ranges", "table_bytes", "table_of"]
