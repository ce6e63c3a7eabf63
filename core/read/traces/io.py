"""File input: which files a directory holds (``SUFFIXES``), a file's bytes (gzip
decompressed) and text (a line that is not UTF-8 reported and left out), JSON parsed as
untrusted input (``limits``), and a file split into its units -- one JSON document, JSON
Lines (a malformed line reported with its number and skipped), or concatenated JSON
values -- each with its location."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputLimitError, TraceFormatError
from .. import limits
from . import _json_list, inspect_ai
from ._util import is_seq
from .formats import EXPECTED
from .load_result import Accumulator
from .units import split_units

SUFFIXES = (".json", ".jsonl", ".ndjson", ".eval")
GZ_SUFFIXES = tuple(x + ".gz" for x in (".json", ".jsonl", ".ndjson"))


def bad_json_line(where: str, e: ValueError) -> str:
    """The problem for a JSONL line at ``where`` that did not parse (``e`` from the JSON
    decoder: its message and column when it gives them)."""
    msg = getattr(e, "msg", None) or str(e)
    col = f" (column {e.colno})" if hasattr(e, "colno") else ""
    return f"{where}: not valid JSON: {msg}{col}; line skipped"


def not_utf8_line(where: str, e: UnicodeDecodeError) -> str:
    """The problem for a line at ``where`` that is not UTF-8 (``e`` from decoding the line
    alone: its reason and byte offset within the line)."""
    return f"{where}: not UTF-8 text ({e.reason} at byte {e.start} of the line); line skipped"


def _decode_lines(data: bytes, path: Path, acc: Accumulator) -> str:
    """The text of a file that is not UTF-8 as a whole: each line decoded on its own, a line
    that is not UTF-8 reported (with its line number) and left out, the others kept."""
    lines = data.split(b"\n")
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    out: list[str] = []
    for n, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            acc.skip(not_utf8_line(f"{path}:{n}", e))
            out.append("")
    return "\n".join(out)


def parse_json(text: str, where: str, acc: Accumulator, *, check_depth: bool = True) -> Any:
    """One JSON value of untrusted text (``limits.loads``); normalisations become faults."""
    notes: list[str] = []
    val = limits.loads(text, notes, max_depth=limits.MAX_DEPTH if check_depth else None)
    acc.problems.extend(f"{where}: {n}" for n in notes)
    return val


def parse_file(path: Path, acc: Accumulator) -> list[tuple[Any, str]] | None:
    """Parsed trace objects of one file with their locations; None when the file is empty."""
    if path.suffix.lower() == ".eval" or inspect_ai.is_eval_zip(path):
        return [(inspect_ai.load_eval_zip(path), str(path))]
    try:
        data = _read_bytes(path)
    except OSError as e:
        raise TraceFormatError(f"{path}: cannot be read ({e.strerror})") from e
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if b"\n" not in data.strip():
            raise TraceFormatError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start}); "
                                   f"expected {EXPECTED}") from e
        text = _decode_lines(data, path, acc)
    if not text.strip():
        if not acc.skipped or not acc.skipped[-1].startswith(f"{path}:"):
            acc.skip(f"{path}: empty file; no traces")
        return None
    whole_err: str | None = None
    if _inner_suffix(path) not in (".jsonl", ".ndjson"):
        try:
            doc = parse_json(text, str(path), acc, check_depth=False)
        except InputLimitError as e:
            whole_err = str(e)
            doc = _list_apart(text, path, acc)
            if doc is not None:
                return _list_units(doc, path, acc)
        except ValueError as e:
            whole_err = str(e)
        else:
            if is_seq(doc) and not doc:
                acc.skip(f"{path}: an empty list; no traces")
                return None
            return _list_units(doc, path, acc)
    units: list[tuple[Any, str]] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, f"{path}:{n}", acc)
        except ValueError as e:
            bad.append(bad_json_line(f"{path}:{n}", e))
            continue
        for o, w in split_units(obj, acc, str(path), f"{path}:{n}"):
            units.append((o, f"{path}:{n}" + (f" {w}" if w else "")))
    if not units:
        stream = _raw_stream(text)
        if stream:
            return [(o, f"{path} object {i}") for i, o in enumerate(stream)]
        reason = whole_err or (bad[0] if bad else "no JSON")
        raise TraceFormatError(f"{path}: not JSON or JSON Lines ({reason}); expected {EXPECTED}")
    for b in bad:
        acc.skip(b)
    return units


_LOST = object()  # the place of a JSON list's item that could not be parsed (``_list_apart``)


def _list_units(doc: Any, path: Path, acc: Accumulator) -> list[tuple[Any, str]]:
    """The trace objects of a parsed JSON document (``units.split_units``), each nested too deep
    reported and left out."""
    out: list[tuple[Any, str]] = []
    for o, w in split_units(doc, acc, str(path), str(path)):
        if o is _LOST:
            continue
        if w is None and is_seq(o) and any(x is _LOST for x in o):
            o = [x for x in o if x is not _LOST]
        where = f"{path} {w}" if w else str(path)
        if limits.depth_exceeds(o):
            if not w:
                raise TraceFormatError(f"{path}: JSON nested deeper than {limits.MAX_DEPTH} levels")
            acc.skip(f"{where}: JSON nested deeper than {limits.MAX_DEPTH} levels; skipped")
            continue
        out.append((o, where))
    return out


def _list_apart(text: str, path: Path, acc: Accumulator) -> list[Any] | None:
    """A JSON array whose whole parse was refused for its depth, parsed item by item: an item
    nested too deep for the parser is reported (``<file> record <i>``) and left out, as a JSON
    Lines line would be; the others are kept in order, a lost item's place held by ``_LOST``
    (so the others keep their record numbers; ``_list_units`` drops it). None when ``text`` is
    not an array, or when no item parses (the file is then refused as before)."""
    texts = _json_list.split_array(text)
    if texts is None:
        return None
    items: list[Any] = []
    lost: list[str] = []
    for i, t in enumerate(texts):
        try:
            items.append(parse_json(t, f"{path} record {i}", acc, check_depth=False))
        except ValueError as e:
            lost.append(f"{path} record {i}: {e}; skipped")
            items.append(_LOST)
    if len(lost) == len(items):
        return None
    for msg in lost:
        acc.skip(msg)
    return items


def _inner_suffix(path: Path) -> str:
    """The suffix that says what a file holds: ``.jsonl`` for both ``a.jsonl`` and ``a.jsonl.gz``."""
    sfx = [s.lower() for s in path.suffixes]
    if len(sfx) >= 2 and sfx[-1] == ".gz":
        return sfx[-2]
    return sfx[-1] if sfx else ""


def _read_bytes(path: Path) -> bytes:
    """A file's bytes; a ``.gz`` file is decompressed first (benchmarks publish their result
    files gzipped). Raises OSError as reading does; a corrupt gzip stream raises OSError
    naming the fault."""
    data = path.read_bytes()
    if path.suffix.lower() != ".gz":
        return data
    import gzip

    try:
        return gzip.decompress(data)
    except EOFError as e:
        raise OSError(0, f"truncated gzip file ({e})") from e
    except gzip.BadGzipFile as e:
        raise OSError(0, f"not a gzip file ({e})") from e


def _raw_stream(text: str) -> list[Any]:
    """Concatenated JSON values (e.g. the OTel SDK console exporter); [] when the text is not that."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            val, i = dec.raw_decode(text, i)
        except (ValueError, RecursionError):
            return []
        if limits.depth_exceeds(val):
            return []
        out.append(val)
    return out if len(out) > 1 else []

