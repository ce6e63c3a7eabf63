"""A dataset file's rows with their line numbers: JSON Lines read as bytes in blocks (memory
does not grow with the file), a JSON list or ``{"cases": [...]}`` object, YAML through the
safe loader with an alias-expansion bound. What the rows mean is ``dataset``'s concern.

Lines are numbered as ``str.splitlines`` numbers the file's text; a line that is not JSON or
not UTF-8 is a ``BadJSON`` row naming why, so the loader reports it with its line and reads
the rest.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import DatasetError, InputLimitError
from . import limits

_YAML_SUFFIXES = (".yaml", ".yml")


class BadJSON:
    """A line that is no JSON value: ``msg`` says why (not JSON, not UTF-8)."""

    def __init__(self, msg: str) -> None:
        self.msg = msg


def _rows_json_list(text: str, start: int) -> list[tuple[Any, int]]:
    """Elements of the JSON array starting at ``text[start] == '['`` with their 1-based line numbers."""
    dec = json.JSONDecoder()
    rows: list[tuple[Any, int]] = []
    i = start + 1
    n = len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n or text[i] == "]":
            break
        val, j = dec.raw_decode(text, i)
        rows.append((val, text.count("\n", 0, i) + 1))
        i = j
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i < n and text[i] == ",":
            i += 1
    return rows


def _top_level_value_at(text: str, key: str) -> int | None:
    """Where the value of ``key`` of the top-level JSON object in ``text`` starts (so a
    ``"cases"`` key nested deeper, earlier in the file, is never taken for it); None when
    the top level has no such key."""
    dec = json.JSONDecoder()
    ws = " \t\r\n"
    i = 0
    n = len(text)
    while i < n and text[i] in ws:
        i += 1
    if i >= n or text[i] != "{":
        return None
    i += 1
    while i < n:
        while i < n and text[i] in ws + ",":
            i += 1
        if i >= n or text[i] == "}":
            return None
        k, i = dec.raw_decode(text, i)
        while i < n and text[i] in ws:
            i += 1
        i += 1  # the ':'
        while i < n and text[i] in ws:
            i += 1
        if k == key:
            return i
        _, i = dec.raw_decode(text, i)
    return None


MAX_YAML_NODES = 1_000_000
"""Most nodes a YAML dataset may stand for once its aliases (``*name``) are expanded: a
few hundred bytes of aliases of aliases can stand for billions of nodes (the "billion
laughs" bomb), which every later walk over the rows would expand."""


def _expanded_size(node: Any, memo: dict[int, int], limit: int) -> int:
    """Nodes ``node`` stands for with every alias expanded (shared nodes counted each time
    they are used; memoised by identity, so the count itself stays linear)."""
    import yaml

    got = memo.get(id(node))
    if got is not None:
        return got
    n = 1
    if isinstance(node, yaml.SequenceNode):
        for c in node.value:
            n += _expanded_size(c, memo, limit)
            if n > limit:
                break
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            n += _expanded_size(k, memo, limit) + _expanded_size(v, memo, limit)
            if n > limit:
                break
    memo[id(node)] = n
    return n


def _yaml_node(path: Path, text: str) -> Any:
    """The composed YAML node tree of ``text`` (safe loader), refused when its aliases
    expand past ``MAX_YAML_NODES`` nodes; and the constructed data."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}, MAX_YAML_NODES) > MAX_YAML_NODES:
            raise DatasetError(f"{path}: its YAML aliases expand to more than {MAX_YAML_NODES:,} nodes; "
                               "refused (an alias bomb)")
        data = loader.construct_document(node) if node is not None else None
    except DatasetError:
        raise
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as e:
        raise DatasetError(f"{path}: not valid YAML ({e})") from e
    finally:
        loader.dispose()
    return node, data


def _read_yaml(path: Path, text: str) -> list[tuple[Any, int]]:
    import yaml

    node, data = _yaml_node(path, text)
    items_node = node
    if isinstance(data, Mapping) and "cases" in data and isinstance(node, yaml.MappingNode):
        data = data["cases"]
        items_node = next((v for k, v in node.value if getattr(k, "value", None) == "cases"), None)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a YAML list of cases or a mapping with 'cases'")
    lines = [c.start_mark.line + 1 for c in getattr(items_node, "value", [])] \
        if isinstance(items_node, yaml.SequenceNode) else [1] * len(data)
    return list(zip(data, lines + [1] * (len(data) - len(lines))))


def _loads(text: str) -> Any:
    """``json.loads``, with nesting too deep for Python's parser as a ``ValueError``. NaN and
    Infinity are parsed, then refused row by row (``_value_faults``)."""
    try:
        return json.loads(text)
    except RecursionError as e:
        raise InputLimitError(f"nested deeper than Python's JSON parser follows ({e})") from e


def _jsonl_rows(path: Path) -> Iterator[tuple[Any, int, bool]]:
    """``(row, line, plain)`` triples of a JSON Lines dataset, a block at a time (memory
    does not grow with the file); lines split as ``str.splitlines`` splits the whole text
    (the file read as UTF-8, a leading BOM dropped). ``plain``: the line was read by
    ``limits.plain_loads`` -- the value ``json.loads`` gives, made of JSON values only, with
    finite numbers and nesting within ``limits.MAX_DEPTH`` -- so ``_value_faults`` has
    nothing to find in it. A line that is not UTF-8 is a bad row naming its line and column
    (the rest is read); an unreadable file raises ``DatasetError``."""
    try:
        with path.open("rb") as f:
            yield from rows_of_blocks(_file_blocks(f))
    except OSError as e:
        raise DatasetError(f"{path}: cannot read dataset file ({e})") from e


BLOCK_BYTES = 1 << 18  # a JSON Lines file is read in blocks of about this size, cut after a b"\n" (bigger: more peak memory)
BOM = b"\xef\xbb\xbf"
# where str.splitlines breaks a line and bytes.splitlines does not (both break at \n, \r, \r\n)
_ASCII_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_UTF8_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # U+0085, U+2028, U+2029


def _file_blocks(f: Any) -> Iterator[bytes]:
    """The bytes of binary file ``f`` in blocks each ending just after a ``b"\\n"`` (the
    last one: at the end), the file's leading BOM dropped. Splitting each block's lines
    gives the lines of the whole: no line break and no UTF-8 character straddles two."""
    rest = f.read(len(BOM))
    if rest == BOM:
        rest = b""
    while True:
        chunk = f.read(BLOCK_BYTES)
        if not chunk:
            if rest:
                yield rest
            return
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            rest += chunk
            continue
        yield rest + chunk[:cut] if rest else chunk[:cut]
        rest = chunk[cut:]


def rows_of_blocks(blocks: Iterable[bytes]) -> Iterator[tuple[Any, int, bool]]:
    """``_jsonl_rows``' triples of the UTF-8 text made of ``blocks`` (each ending with a
    line break, the last at the end), its lines split as ``str.splitlines`` splits it: a
    block's lines split as bytes where ``bytes.splitlines`` splits them the same way (the
    block holds no other line break), else as text. A block that is not UTF-8 is split at
    ``\n``/``\r`` only (U+2028 and the like break no line there) and its undecodable
    lines are bad rows."""
    max_open = limits.MAX_DEPTH
    n = 0
    for block in blocks:
        try:
            text = None if block.isascii() else block.decode("utf-8")
        except UnicodeDecodeError:
            raw_lines = block.splitlines()
            for i, line in enumerate(raw_lines):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as e:
                    yield BadJSON(f"not UTF-8: {utf8_fault(e)}"), n + i + 1, False
                else:
                    yield from _rows_of_lines((line,), n + i)
            n += len(raw_lines)
            continue
        if any(b in block for b in _ASCII_BREAKS) or (
                text is not None and any(b in block for b in _UTF8_BREAKS)):
            lines: list[Any] = (text if text is not None else block.decode("ascii")).splitlines()
            yield from _rows_of_lines(lines, n)
            n += len(lines)
            continue
        del text
        fast = limits.plain_block(block)
        lines = block.splitlines()
        if fast is None:
            yield from _rows_of_lines(lines, n)
            n += len(lines)
            continue
        for line in lines:
            n += 1
            if line.count(b"{") + line.count(b"[") <= max_open:
                try:
                    val = fast(line)
                except ValueError:
                    pass
                else:
                    yield val, n, True
                    continue
            yield from _rows_of_lines((line,), n - 1)


def utf8_fault(e: UnicodeDecodeError, text: bytes | None = None) -> str:
    """Where and what ``e`` found: the byte, and its line and column (1-based, in bytes)
    within ``text`` when given, else its column within the line ``e`` decoded."""
    bad = e.object[e.start:e.end].hex(" ") if isinstance(e.object, bytes) else "?"
    if text is None:
        return f"byte(s) {bad} at column {e.start + 1} ({e.reason})"
    line = text.count(b"\n", 0, e.start) + 1
    col = e.start - (text.rfind(b"\n", 0, e.start) + 1) + 1
    return f"line {line}, column {col}: byte(s) {bad} ({e.reason})"


def _rows_of_lines(lines: Iterable[bytes | str], n: int = 0) -> Iterator[tuple[Any, int, bool]]:
    """``_jsonl_rows``' triples of ``lines`` (numbered from ``n + 1``, blank lines skipped;
    a line as ``bytes``: UTF-8 text)."""
    plain_loads, not_plain = limits.plain_loads, limits.NOT_PLAIN
    for line in lines:
        n += 1
        if isinstance(line, bytes):
            if not line.strip():  # blank in ASCII: blank (``str.strip`` drops more)
                continue
            val = plain_loads(line)
            if val is not not_plain:
                yield val, n, True  # a JSON value: not blank as text either
                continue
            text = line.decode("utf-8")
            if not text.strip():
                continue
        else:
            text = line
            if not text.strip():
                continue
            val = plain_loads(text.encode("utf-8"))
            if val is not not_plain:
                yield val, n, True
                continue
        try:
            yield _loads(text), n, False
        except ValueError as e:
            yield BadJSON(f"not valid JSON ({e})"), n, False


def read_rows(path: Path) -> Iterable[tuple[Any, int, bool]]:
    """``(row, line, plain)`` triples of a dataset file (``plain``: see ``_jsonl_rows``);
    raises ``DatasetError`` when the file is unreadable."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_rows(path)
    return [(row, line, False) for row, line in _read_whole(path, suffix)]


def _read_whole(path: Path, suffix: str) -> Iterable[tuple[Any, int]]:
    """``(row, line)`` pairs of a JSON or YAML dataset file. Raises ``DatasetError`` when it
    cannot be read or is not UTF-8 (naming the line and column: one document, no row of it
    can be read apart)."""
    try:
        raw = path.read_bytes().removeprefix(BOM)
    except OSError as e:
        raise DatasetError(f"{path}: cannot read dataset file ({e})") from e
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 at {utf8_fault(e, raw)}") from None
    if suffix in _YAML_SUFFIXES:
        return _read_yaml(path, text)
    try:
        data = _loads(text)
    except ValueError as e:
        raise DatasetError(f"{path}: not valid JSON ({e})") from e
    if isinstance(data, list):
        return _rows_json_list(text, text.index("["))
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        at = _top_level_value_at(text, "cases")
        if at is not None:
            try:
                return _rows_json_list(text, at)
            except (ValueError, RecursionError):
                pass
        return [(r, 1) for r in data["cases"]]
    raise DatasetError(f"{path}: expected a JSON list of cases or an object with 'cases'")


__all__ = ["BLOCK_BYTES", "BOM", "BadJSON", "read_rows", "rows_of_blocks", "utf8_fault"]
