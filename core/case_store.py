"""Cases kept compact for evaluations over many cases.

A built ``Case`` with a few expected calls takes about 2 KB of memory; a quarter of a million
cases (a million runs of four trials) would take more than the whole evaluation may. A
``CaseStore`` keeps each validated case as its dataset row, JSON-encoded and
zlib-compressed (a few hundred bytes), with its definition hash, and builds the ``Case``
again from that row when a run asks for it: ``Case.from_dict`` of the same row gives an equal
case, so every figure is the one the built cases give. The last ``cache_size`` cases built
are kept (runs of one case often come close together).

Rows that JSON cannot hold exactly (YAML dates, for instance) are kept as built cases.
"""

from __future__ import annotations

import json
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from .model import Case

CACHE_SIZE = 64  # runs of a case are often far apart in big files: a small cache, small memory


def _encode(row: dict[str, Any]) -> bytes | None:
    """The row as compressed JSON, or None when JSON does not give back the same row."""
    try:
        text = json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    if json.loads(text) != row:
        return None
    return zlib.compress(text.encode("utf-8"), 6)


class CaseStore(Mapping[str, Case]):
    """Case id -> ``Case``, held compressed (module docstring). Iterates ids in the order
    they were added. ``semantic_cases``: the cases that use the ``semantic`` matcher, built
    (the CLI checks them before scoring)."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        self._rows: dict[str, tuple[bytes | Case, str]] = {}
        self._cache: OrderedDict[str, Case] = OrderedDict()
        self._cache_size = cache_size
        self.semantic_cases: list[Case] = []

    def add(self, case: Case, row: dict[str, Any]) -> None:
        """Keep ``case`` (built from ``row``, its dataset row after validation)."""
        from .fingerprint import case_hash
        from .semantic import semantic_uses

        packed = _encode(row)
        self._rows[case.id] = (case if packed is None else packed, case_hash(case))
        if semantic_uses([case]):
            self.semantic_cases.append(case)

    def case_hash(self, cid: str) -> str:
        """The definition hash (``fingerprint.case_hash``) of case ``cid``."""
        return self._rows[cid][1]

    def __getitem__(self, cid: str) -> Case:
        c = self._cache.get(cid)
        if c is not None:
            self._cache.move_to_end(cid)
            return c
        packed, h = self._rows[cid]
        if isinstance(packed, Case):
            return packed
        c = Case.from_dict(json.loads(zlib.decompress(packed)))
        object.__setattr__(c, "_case_hash", h)  # read by fingerprint.case_hash
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
