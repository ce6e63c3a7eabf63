"""A stable hash of a case definition, recorded in scorecards so that two scorecards scored
against different versions of a case are never compared as if they were the same test.

``case_hash(case)`` is the first 16 hex digits of the SHA-256 of the case's dataset-row JSON
(``Case.to_dict()``) with sorted keys and no whitespace. Everything that can change a score
is in it: expected, optional and forbidden calls, matchers, precedence, final state,
required response items, limits and thresholds. A Python callable used as a matcher is
hashed by its qualified name (its memory address would change from one process to the next).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..model import Case

HASH_CHARS = 16


def _stable(o: Any) -> Any:
    """JSON fallback for values the row form leaves as objects (callable matchers, sets)."""
    if callable(o):
        return f"<callable {getattr(o, '__module__', '?')}.{getattr(o, '__qualname__', type(o).__name__)}>"
    if isinstance(o, (set, frozenset)):
        return sorted(map(repr, o))
    return repr(o)


try:
    from orjson import OPT_SORT_KEYS as _SORT
    from orjson import dumps as _orjson_dumps
except ImportError:  # pragma: no cover - orjson is a core dependency
    _orjson_dumps = None  # type: ignore[assignment]

# where orjson may spell a float otherwise than json: json writes an exponent from 1e16 and
# below 1e-4 (``1e-05``), orjson writes ``1e+16`` but ``0.00001``; text holding a digit
# before an ``e`` or ``0.0000`` (in a string too) is written by json instead
_DIGITS_AS_9 = bytes.maketrans(b"0123456789E", b"9999999999e")


def _may_differ(b: bytes) -> bool:
    return b"0.0000" in b or b"9e" in b.translate(_DIGITS_AS_9)


def case_hash(case: Case, *, plain: bool = False) -> str:
    """The hash of ``case``'s definition: 16 lowercase hex characters (64 bits of SHA-256).

    Two cases get the same hash exactly when their ``to_dict()`` rows are equal as JSON (key
    order does not matter; ``2`` and ``2.0`` differ, as JSON text does). Never raises for a
    valid ``Case``. ``plain``: the caller vouches that every value in the case is a JSON
    value with finite numbers (as read from a JSON dataset row), so orjson may write the
    text when it spells it as ``json`` does (the same hash, a few microseconds sooner).
    """
    known = case.__dict__.get("_case_hash")  # set by case_store.CaseStore on the cases it builds
    if known is not None:
        return known  # type: ignore[no-any-return]
    return row_hash(case.to_dict(), plain=plain)


def row_hash(d: dict[str, Any], *, plain: bool = False) -> str:
    """``case_hash`` of the case whose ``to_dict()`` row is ``d`` (``plain``: as there)."""
    if plain and _orjson_dumps is not None:
        try:
            b = _orjson_dumps(d, option=_SORT)
        except TypeError:  # an integer past 64 bits, a key that is not a string
            pass
        else:
            if not _may_differ(b):
                return hashlib.sha256(b).hexdigest()[:HASH_CHARS]
    text = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_stable)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


__all__ = ["HASH_CHARS", "case_hash", "row_hash"]
