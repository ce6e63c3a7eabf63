"""Cases kept compact for evaluations over many cases.

A built ``Case`` with a few expected calls takes about 2 KB of memory; a quarter of a million
cases (a million runs of four trials) would take more than the whole evaluation may. A
``CaseStore`` keeps each validated case as its dataset row, JSON-encoded and
zlib-compressed (one ``bytes`` of one or two hundred bytes for a row of a few calls) with
its definition hash, and builds the ``Case``
again from that row when a run asks for it: ``Case.from_dict`` of the same row gives an equal
case, so every figure is the one the built cases give. The last ``cache_size`` cases built
are kept (runs of one case often come close together).

Rows that JSON cannot hold exactly (YAML dates, for instance) are kept as built cases.
"""

from __future__ import annotations

import json
import sys
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from .model import Case

try:
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is optional (extra "scale")
    _fast_loads = None  # type: ignore[assignment]

CACHE_SIZE = 64  # runs of a case are often far apart in big files: a small cache, small memory
_HASH_BYTES = 8  # fingerprint.case_hash: 16 hex characters


def _text(row: dict[str, Any]) -> bytes | None:
    """The row as compact JSON text, or None when JSON does not give back the same row."""
    try:
        text = json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    if json.loads(text) != row:
        return None
    return text.encode("utf-8")


def _loads(data: bytes) -> Any:
    """JSON text written by ``_text``: orjson when installed (the same values for such text;
    json for what orjson refuses, e.g. integers past 64 bits)."""
    if _fast_loads is not None:
        try:
            return _fast_loads(data)
        except ValueError:
            pass
    return json.loads(data)


class CaseStore(Mapping[str, Case]):
    """Case id -> ``Case``, held compressed (module docstring). Iterates ids in the order
    they were added. ``semantic_cases``: the cases that use the ``semantic`` matcher, built
    (the CLI checks them before scoring).

    Each case is one ``bytes``: its definition hash (8 bytes) and its row's JSON text
    compressed with zlib against a preset dictionary, the first row's text (rows of one
    dataset share most of their keys and tool names, so a row of a few hundred characters
    compresses to about half of what it would alone). Case ids are interned, so a
    partial aggregate keyed by the same ids shares the strings."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        self._rows: dict[str, bytes | tuple[Case, str]] = {}
        self._cache: OrderedDict[str, Case] = OrderedDict()
        self._cache_size = cache_size
        self._zdict: bytes | None = None
        self.semantic_cases: list[Case] = []

    def add(self, case: Case, row: dict[str, Any]) -> None:
        """Keep ``case`` (built from ``row``, its dataset row after validation)."""
        from .fingerprint import case_hash
        from .semantic import semantic_uses

        h = case_hash(case)
        text = _text(row)
        key = sys.intern(case.id)
        if text is None or len(h) != 2 * _HASH_BYTES:
            self._rows[key] = (case, h)
        else:
            if self._zdict is None:
                self._zdict = text
            z = zlib.compressobj(6, zdict=self._zdict)
            self._rows[key] = bytes.fromhex(h) + z.compress(text) + z.flush()
        if semantic_uses([case]):
            self.semantic_cases.append(case)

    def case_hash(self, cid: str) -> str:
        """The definition hash (``fingerprint.case_hash``) of case ``cid``."""
        packed = self._rows[cid]
        return packed[1] if isinstance(packed, tuple) else packed[:_HASH_BYTES].hex()

    def __getitem__(self, cid: str) -> Case:
        c = self._cache.get(cid)
        if c is not None:
            self._cache.move_to_end(cid)
            return c
        packed = self._rows[cid]
        if isinstance(packed, tuple):
            return packed[0]
        z = zlib.decompressobj(zdict=self._zdict)  # type: ignore[arg-type]
        c = Case.from_dict(_loads(z.decompress(packed[_HASH_BYTES:]) + z.flush()))
        object.__setattr__(c, "_case_hash", packed[:_HASH_BYTES].hex())  # read by fingerprint.case_hash
        self._cache[cid] = c
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return c

    def __contains__(self, cid: object) -> bool:
        return cid in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


__all__ = ["CACHE_SIZE", "CaseStore"]
