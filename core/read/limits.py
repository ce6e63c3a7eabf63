"""Safety limits for input trajcheck did not write: nesting depth, numbers, text JSON cannot hold.

Traces, tool outputs and agent return values are untrusted (README "Security model"). These
helpers keep hostile values from crashing the code that walks them or the JSON writers that
record them:

- ``MAX_DEPTH`` (100): JSON nested deeper is refused before any recursive code walks it
  (Python's recursion limit is about 1,000 frames, and validators spend several per level);
- ``loads``: ``json.loads`` that refuses over-deep nesting with ``InputLimitError`` and turns
  the non-standard literals ``NaN`` / ``Infinity`` into null, saying so (orjson parses when
  installed and the text holds nothing it reads differently; the values are json's);
- ``scrub``: lone UTF-16 surrogates (from ``"\\ud800"`` escapes) replaced by U+FFFD, cycles
  and non-JSON leaves replaced by text, non-finite floats by null -- so every value can be
  written as standard JSON in UTF-8;
- ``finite``: a number as a finite float, or None (bools, text, NaN, infinities, overflow).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import DatasetError, InputLimitError

try:  # a faster parser (orjson, a core dependency); every value it returns is json's
    from orjson import JSONDecodeError as _OrjsonError
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - orjson is a core dependency
    _orjson_loads = None  # type: ignore[assignment]

MAX_DEPTH = 100
"""Deepest JSON nesting (containers inside containers) read from untrusted input."""

_SURR = re.compile("[\ud800-\udfff]")
_SURR_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NOT_PARSED = object()
# digits read as 9: a translate and two finds are ~15x cheaper than a regex
_DIGITS_AS_9 = bytes.maketrans(b"0123456789", b"9" * 10)
_DIGIT_RUN = b"9" * 20
_NEG_DIGIT_RUN = b"-" + b"9" * 19
_19_DIGITS = b"9" * 19


def _int_beyond_orjson(t: bytes) -> bool:
    """Whether text whose digits read as 9 (``t``) may hold an integer orjson reads as a float:
    orjson keeps integers from -2**63 to 2**64-1 (every 19-digit one, not every negative one),
    so a run of 20 digits or a minus and 19 digits (in a string too: a cheap, safe test).
    Nanosecond timestamps, 19 digits, pass (OTLP documents are full of them)."""
    # both runs hold 19 digits: text without 19 in a row (most) is scanned once, not twice
    return _19_DIGITS in t and (_DIGIT_RUN in t or _NEG_DIGIT_RUN in t)


_CONTAINERS = (Mapping, list, tuple)
# types that are never containers (checked by identity first: an ABC ``isinstance`` costs ~10x more)
_LEAVES = frozenset({str, int, float, bool, type(None), bytes})
_PLAIN_CONTAINERS = frozenset({dict, list, tuple})
_refcount = sys.getrefcount


def depth_exceeds(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``obj`` nests lists/tuples/mappings more than ``limit`` levels deep.

    Walked one level at a time (iterative, so the check itself cannot overflow the stack, and
    linear in the containers and leaves of ``obj``); a container that holds itself counts as
    nesting without end. A container met twice in one level (shared or cyclic references,
    which parsed JSON never has) is walked once, so no level holds more than the distinct
    containers of ``obj``."""
    level = [obj] if type(obj) in _PLAIN_CONTAINERS or isinstance(obj, _CONTAINERS) else []
    d = 0
    while level:
        if d >= limit:
            return True
        # one comprehension per level (parsed JSON holds only leaves and plain containers);
        # anything else that is not a leaf is then kept only when it is a container
        nxt: list[Any] = [k for node in level
                          for k in (node.values() if type(node) is dict or isinstance(node, Mapping) else node)
                          if type(k) not in _LEAVES]
        if not _PLAIN_CONTAINERS.issuperset(map(type, nxt)):
            nxt = [k for k in nxt if type(k) in _PLAIN_CONTAINERS or isinstance(k, _CONTAINERS)]
        # a container listed twice holds two references from ``nxt`` and two from its parents:
        # when none has more than one parent's, ``nxt``'s and getrefcount's own, none is
        # listed twice (the id set is then not built: parsed JSON shares nothing)
        if len(nxt) > 1 and max(map(_refcount, nxt)) > 3 and len(set(map(id, nxt))) < len(nxt):
            nxt = list({id(k): k for k in nxt}.values())
        level = nxt
        d += 1
    return False


def loads(text: str | bytes, notes: list[str] | None = None, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """Parse JSON text from an untrusted source.

    ``notes`` (optional): receives one message per normalisation made (``NaN``/``Infinity``
    literals read as null; lone surrogates replaced by U+FFFD). Raises ``InputLimitError``
    (a ``ValueError``) when the value nests deeper than ``MAX_DEPTH``, and
    ``json.JSONDecodeError`` (a ``ValueError``) for text that is not JSON. ``max_depth``
    None leaves the depth check to the caller (e.g. per record of a list), though nesting
    Python's parser cannot follow (about 1,000 levels) is still refused.
    """
    s = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    kw: dict[str, Any] = {}
    seen: list[str] = []
    val: Any = _NOT_PARSED
    if "NaN" in s or "Infinity" in s:  # the only non-standard literals json.loads takes
        def const(c: str) -> None:
            seen.append(c)
            return None
        kw["parse_constant"] = const
    elif _orjson_loads is not None and not _int_beyond_orjson(s.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_9)):
        # orjson reads standard JSON to the same values as json.loads, except integers
        # beyond 64 bits (it makes them floats): text that may hold one goes to
        # json.loads, and so does whatever orjson refuses (surrogate escapes, deep nesting,
        # bad text), which then gives the value or the error it always gave
        try:
            val = _orjson_loads(s)
        except _OrjsonError:
            pass
    if val is _NOT_PARSED:
        try:
            val = json.loads(s, **kw)
        except RecursionError as e:
            raise InputLimitError(f"JSON nested deeper than {MAX_DEPTH} levels") from e
    # nesting deeper than the limit needs more opening brackets than the limit: count first
    if (max_depth is not None and s.count("{") + s.count("[") > max_depth
            and depth_exceeds(val, max_depth)):
        raise InputLimitError(f"JSON nested deeper than {MAX_DEPTH} levels")
    if seen and notes is not None:
        notes.append(f"non-standard JSON number {seen[0]} read as null")
    if "\\u" in s and _SURR_ESCAPE.search(s):
        fixed = scrub(val)
        if fixed != val and notes is not None:
            notes.append("lone UTF-16 surrogate escapes replaced by U+FFFD")
        val = fixed
    return val


_DIGIT_RUN_TEXT = re.compile("[0-9]{20}|-[0-9]{19}")  # _int_beyond_orjson's test as a pattern


def json_loads(s: str) -> Any:
    """``json.loads(s)``: the same value, or the same error (``ValueError`` /
    ``RecursionError``), parsed by orjson when installed and ``s`` holds no integer orjson
    reads as a float (``_int_beyond_orjson``; whatever it refuses goes to ``json.loads``).
    For the many small JSON texts inside a trace (one per tool call)."""
    if _orjson_loads is not None and not _DIGIT_RUN_TEXT.search(s):
        try:
            return _orjson_loads(s)
        except _OrjsonError:
            pass
    return json.loads(s)


NOT_PLAIN = _NOT_PARSED
"""What ``plain_loads`` returns for text it leaves to ``loads``."""
# digits as 9 (``_int_beyond_orjson``) and "[" as "{" (one count of opening brackets)
_DIGITS_9_OPEN = bytes.maketrans(b"0123456789[", b"9999999999{")


def plain_loads(raw: bytes) -> Any:
    """The value of one line of UTF-8 JSON ``raw`` when ``loads`` would give that value and
    note nothing, read in one parse (orjson); ``NOT_PLAIN`` for anything else -- text orjson
    refuses (not JSON, not UTF-8, ``NaN`` literals, lone surrogate escapes, a BOM, blank),
    an integer orjson may read as a float (``_int_beyond_orjson``: beyond 64 bits), or
    nesting deeper than ``MAX_DEPTH`` -- so the caller reads it with ``loads`` and gets its
    value, notes or error. What orjson accepts has no non-standard literal and no lone
    surrogate, so ``loads``' notes and ``scrub`` would change nothing in it. Never raises."""
    if _orjson_loads is None:  # pragma: no cover - orjson is optional
        return _NOT_PARSED
    try:
        val = _orjson_loads(raw)
    except _OrjsonError:
        return _NOT_PARSED
    t = raw.translate(_DIGITS_9_OPEN)
    if _int_beyond_orjson(t) or (t.count(b"{") > MAX_DEPTH and depth_exceeds(val, MAX_DEPTH)):
        return _NOT_PARSED
    return val


def plain_block(block: bytes) -> Any:
    """A parser that is ``plain_loads`` for each line of ``block`` (UTF-8 lines) holding at
    most ``MAX_DEPTH`` opening brackets, or None (then ``plain_loads`` itself): orjson's
    ``loads`` -- raising ``ValueError`` where ``plain_loads`` gives ``NOT_PLAIN`` -- when
    the block holds no integer orjson may read as a float. One scan of the block instead of one per line."""
    if _orjson_loads is None or _int_beyond_orjson(block.translate(_DIGITS_9_OPEN)):  # pragma: no cover
        return None
    return _orjson_loads


def finite(v: Any) -> float | None:
    """``v`` as a finite float when it is an int or float (not bool); else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def clean_text(s: str) -> str:
    """``s`` with lone surrogates replaced by U+FFFD (so it encodes as UTF-8)."""
    return _SURR.sub("\ufffd", s) if _SURR.search(s) else s


def scrub(v: Any, _depth: int = 0, _seen: frozenset[int] = frozenset()) -> Any:
    """A copy of ``v`` that standard JSON in UTF-8 can hold: text with lone surrogates
    repaired (``clean_text``), NaN and infinities as None, tuples as lists, mapping keys as
    text, a container that contains itself as ``"<cycle>"``, anything nested deeper than
    ``MAX_DEPTH`` as ``"<too deep>"``, and any other object as its ``repr`` (cleaned)."""
    if v is None or isinstance(v, (bool, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        return clean_text(v)
    if isinstance(v, (Mapping, list, tuple)):
        if id(v) in _seen:
            return "<cycle>"
        if _depth >= MAX_DEPTH:
            return "<too deep>"
        seen = _seen | {id(v)}
        if isinstance(v, Mapping):
            return {clean_text(str(k)): scrub(x, _depth + 1, seen) for k, x in v.items()}
        return [scrub(x, _depth + 1, seen) for x in v]
    try:
        r = repr(v)
    except Exception:
        r = f"<{type(v).__name__}>"
    return clean_text(r)


def _figure(v: Any, what: str, notes: list[str], *, integer: bool = False) -> Any:
    if v is None:
        return None
    f = finite(v)
    if f is None or f < 0 or (integer and not isinstance(v, int)):
        shown = repr(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and len(repr(v)) < 40 \
            else f"a {type(v).__name__}"
        notes.append(f"{what}: {shown} is not a finite non-negative "
                     f"{'integer' if integer else 'number'}; read as unknown")
        return None
    return v


def _usage(u: Any, what: str, notes: list[str]) -> Any:
    from dataclasses import fields, replace

    if u is None:
        return None
    vals = {f.name: _figure(getattr(u, f.name), f"{what}.{f.name}", notes, integer=True) for f in fields(u)}
    return u if all(vals[k] is getattr(u, k) for k in vals) else replace(u, **vals)


_BIG_INT = 1 << 1000  # converts to a finite float
_MAX_FLOAT = 1.7976931348623157e308


def _plain(v: Any, integer: bool) -> bool:
    """True when ``_figure`` would keep ``v`` as it is and note nothing (the common case,
    tested without building the note text)."""
    if v is None:
        return True
    t = type(v)
    if t is int:
        return 0 <= v < _BIG_INT
    return t is float and not integer and 0.0 <= v <= _MAX_FLOAT


def _plain_usage(u: Any) -> bool:
    if u is None:
        return True
    d = getattr(u, "__dict__", None)  # this module's frozen dataclasses keep their fields there
    if d is None:
        return False
    for v in d.values():
        if v is not None and not (type(v) is int and 0 <= v < _BIG_INT):
            return False
    return True


def _all_plain(t: Any) -> bool:
    """True when ``clean_figures`` would return ``t`` unchanged with no notes."""
    for s in t.steps:
        c, lat, u = s.cost_usd, s.latency_ms, s.usage
        # the usual step: float or missing cost and latency (checked inline), plain usage
        if not ((c is None or (type(c) is float and 0.0 <= c <= _MAX_FLOAT) or _plain(c, False))
                and (lat is None or (type(lat) is float and 0.0 <= lat <= _MAX_FLOAT) or _plain(lat, False))
                and (u is None or _plain_usage(u))):
            return False
    return (_plain(t.total_cost_usd, False) and _plain(t.total_latency_ms, False)
            and _plain_usage(t.total_usage))


def clean_figures(t: Any) -> tuple[Any, list[str]]:
    """``(trajectory, notes)``: ``t`` with every cost, latency and token count that is not a
    finite non-negative number (NaN, infinities, numbers too large for a float, text such as
    ``"free"``, bools) set to None, and one note per such value naming its field. A run's
    figures are read once at entry so no later sum, percentile or JSON writer meets them."""
    from dataclasses import replace

    notes: list[str] = []
    if _all_plain(t):
        return t, notes
    steps = list(t.steps)
    changed = False
    for i, s in enumerate(steps):
        cost = _figure(s.cost_usd, f"steps[{i}].cost_usd", notes)
        lat = _figure(s.latency_ms, f"steps[{i}].latency_ms", notes)
        use = _usage(s.usage, f"steps[{i}].usage", notes)
        if cost is not s.cost_usd or lat is not s.latency_ms or use is not s.usage:
            steps[i] = replace(s, cost_usd=cost, latency_ms=lat, usage=use)
            changed = True
    cost = _figure(t.total_cost_usd, "total_cost_usd", notes)
    lat = _figure(t.total_latency_ms, "total_latency_ms", notes)
    use = _usage(t.total_usage, "total_usage", notes)
    if not changed and cost is t.total_cost_usd and lat is t.total_latency_ms and use is t.total_usage:
        return t, notes
    return replace(t, steps=tuple(steps), total_cost_usd=cost, total_latency_ms=lat, total_usage=use), notes


def object_lines(path: str | Path, what: str) -> Iterator[tuple[str, int, dict[str, Any] | None, str | None]]:
    """The non-blank lines of a user's JSONL file (labelled pairs, judge labels), each as
    ``(where, line, obj, None)`` when it is a JSON object, or ``(where, line, None, problem)``
    when it is not JSON, nests too deep (``loads``) or is not an object; ``where`` is
    ``"<file>:<line>"``, ``line`` 1-based.
    ``what`` names the file's content in the error raised (DatasetError) when it cannot be
    read."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"{p}: cannot read {what}: {e}") from e
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            d = loads(line)
        except InputLimitError as e:
            yield where, n, None, str(e)
            continue
        except ValueError as e:
            yield where, n, None, f"not JSON ({getattr(e, 'msg', e)})"
            continue
        yield (where, n, d, None) if isinstance(d, dict) else (where, n, None, "not a JSON object")


__all__ = ["MAX_DEPTH", "NOT_PLAIN", "clean_figures", "InputLimitError", "clean_text", "depth_exceeds", "finite",
           "json_loads",
           "loads", "object_lines", "plain_loads", "scrub"]
