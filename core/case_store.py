"""Cases kept compact for evaluations over many cases.

A built ``Case`` with a few expected calls takes about 2 KB of memory, and its fast-scoring
plan (``case_plan``) about as much again; a quarter of a million cases (a million runs of
four trials) would take more than the whole evaluation may. A ``CaseStore`` keeps each
validated case as one ``bytes`` of about 140 (for a row of a few calls): its definition
hash, the length of its packed plan, then its plan packed (``case_plan.pack``) and its
dataset row, each written by ``marshal`` (exact for every JSON value: integers past 64
bits, ``-0.0``, non-ASCII text), compressed together. A case in the plan's scope keeps its row without the expected calls: the
plan's names, arguments and modes give them back (``case_plan.expected_rows``).

- ``plan(cid)`` gives the case's plan without building the ``Case``: one decompression
  and one ``marshal.loads`` of the plan alone; what a scorer reads per run.
- ``store[cid]`` builds the ``Case`` again from its row (``Case.from_dict`` of the same row
  gives an equal case, so every figure is the one the built cases give), with its hash and
  plan attached. The last ``cache_size`` cases built are kept (runs of one case often come
  close together).

Compression: with ``zstandard`` installed (extra ``scale``), Zstandard with a dictionary
trained on the first ``TRAIN_ROWS`` rows (rows of one dataset share most of their keys,
tool names and words: a row compresses to about a fifth, and decompresses in under a
microsecond); else zlib with the first rows as preset dictionary. Until ``TRAIN_ROWS`` rows
are in, rows are kept uncompressed (small stores stay plain).

Rows ``marshal`` cannot write (YAML dates, for instance) are kept as built cases.
"""

from __future__ import annotations

import marshal
import sys
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from .case_plan import _NO_PLAN, _PLAN_ATTR, CasePlan, case_plan, expected_rows, pack, unpack
from .model import Case

_zstd: Any
try:
    import zstandard as _zstd
except ImportError:  # pragma: no cover - zstandard is optional (extra "scale")
    _zstd = None

CACHE_SIZE = 64  # runs of a case are often far apart in big files: a small cache, small memory
PLAN_CACHE_SIZE = 64  # plans given by id, kept until this many (then the cache starts over)
TRAIN_ROWS = 1024  # rows kept plain until the compression dictionary is made from them
DICT_BYTES = 4096  # Zstandard dictionary size; a zlib preset dictionary is at most this long
_HASH_BYTES = 8  # fingerprint.case_hash: 16 hex characters
_HEAD = _HASH_BYTES + 2  # the hash, then the packed plan's length (2 bytes, little-endian)
_NONE = marshal.dumps(None)  # the packed plan of a case outside the fast path's scope
_ZLIB_WBITS, _ZLIB_MEMLEVEL = 12, 4  # a 4 KB window holds the whole preset dictionary


def _codec_default() -> str:
    return "zstd" if _zstd is not None else "zlib"


class CaseStore(Mapping[str, Case]):
    """Case id -> ``Case``, held compressed (module docstring); iterates ids in the order
    they were added. ``semantic_cases``: the cases that use the ``semantic``
    matcher, built (the CLI checks them before scoring). ``codec``: ``"zstd"`` or
    ``"zlib"`` (default: zstd when installed). Case ids are interned, so a partial
    aggregate keyed by the same ids shares the strings."""

    def __init__(self, cache_size: int = CACHE_SIZE, codec: str | None = None,
                 dictionary: bytes | None = None) -> None:
        codec = codec or _codec_default()
        if codec not in ("zstd", "zlib") or (codec == "zstd" and _zstd is None):
            raise ValueError(f"codec must be 'zstd' (needs zstandard) or 'zlib', got {codec!r}")
        self._rows: dict[str, bytes | tuple[Case, str]] = {}
        self._cache: OrderedDict[str, Case] = OrderedDict()
        self._cache_size = cache_size
        self._plans: dict[str, CasePlan | None] = {}
        self._codec = codec
        # None: rows kept plain (fewer than TRAIN_ROWS so far); given: another store's
        # (``dictionary``), so this one's rows can join it (``extend``)
        self._dict: bytes | None = dictionary
        self._n_plain = 0
        self._tools: Any = None  # (compress, decompress) functions, made from _dict on use
        self.semantic_cases: list[Case] = []

    # --- building

    def add(self, case: Case, row: dict[str, Any], *, plain: bool = False) -> None:
        """Keep ``case`` (built from ``row``, its dataset row after validation). ``plain``:
        the row holds JSON values only, with finite numbers (``fingerprint.case_hash``)."""
        from .fingerprint import case_hash

        h = case_hash(case, plain=plain)
        key = sys.intern(case.id)
        plan = case_plan(case)
        first = body = b""
        if len(h) == 2 * _HASH_BYTES:
            try:  # a plan's expected calls stand for the row's: written once
                if plan is None:
                    first, body = _NONE, marshal.dumps(row)
                else:
                    first = marshal.dumps(pack(plan))
                    body = marshal.dumps({k: v for k, v in row.items() if k != "expected_calls"})
            except ValueError:  # a value marshal cannot write: kept as the built case
                first = b""
        if not first or len(first) > 0xFFFF:
            self._rows[key] = (case, h)
        else:
            head = bytes.fromhex(h) + len(first).to_bytes(2, "little")
            body = first + body
            self._rows[key] = head + (body if self._dict is None else self._compress(body))
            self._n_plain += 1
            if self._dict is None and self._n_plain >= TRAIN_ROWS:
                self._seal()
        if any(e.match for e in case.expected_calls):
            from .semantic import semantic_uses

            if semantic_uses([case]):
                self.semantic_cases.append(case)

    def _seal(self) -> None:
        """Make the compression dictionary from the rows so far and compress them."""
        plain = [(k, v) for k, v in self._rows.items() if isinstance(v, bytes)]
        bodies: list[Any] = [v[_HEAD:] for _, v in plain]
        d = b""
        if self._codec == "zstd" and len(bodies) >= 16:
            try:
                d = _zstd.train_dictionary(DICT_BYTES, bodies).as_bytes()
            except Exception:  # too little material to train on: the rows themselves serve
                d = b""
        if not d:
            for b in bodies:  # the first rows, as a preset (raw content) dictionary
                if len(d) + len(b) > DICT_BYTES:
                    break
                d += b
        self._dict = d
        self._tools = None
        for k, v in plain:
            self._rows[k] = v[:_HEAD] + self._compress(v[_HEAD:])

    def _codec_tools(self) -> Any:
        d = self._dict
        assert d is not None  # only once the dictionary is made
        if self._codec == "zstd":
            zd = _zstd.ZstdCompressionDict(d, dict_type=_zstd.DICT_TYPE_AUTO)
            comp = _zstd.ZstdCompressor(level=3, dict_data=zd, write_checksum=False,
                                        write_content_size=True, write_dict_id=False)
            dec = _zstd.ZstdDecompressor(dict_data=zd)
            self._tools = (comp.compress, dec.decompress)
        else:
            def compress(b: bytes) -> bytes:
                z = zlib.compressobj(6, zlib.DEFLATED, _ZLIB_WBITS, _ZLIB_MEMLEVEL, zdict=d)
                return z.compress(b) + z.flush()

            def decompress(b: bytes) -> bytes:
                z = zlib.decompressobj(_ZLIB_WBITS, zdict=d)
                return z.decompress(b) + z.flush()

            self._tools = (compress, decompress)
        return self._tools

    def _compress(self, body: bytes) -> bytes:
        return (self._tools or self._codec_tools())[0](body)  # type: ignore[no-any-return]

    def _body(self, packed: bytes) -> bytes:
        if self._dict is None:
            return packed[_HEAD:]
        return (self._tools or self._codec_tools())[1](packed[_HEAD:])  # type: ignore[no-any-return]

    @property
    def dictionary(self) -> bytes | None:
        """The compression dictionary, once made (None while rows are kept plain): give it
        to ``CaseStore(codec=, dictionary=)`` for stores whose rows ``extend`` joins here."""
        return self._dict

    @property
    def codec(self) -> str:
        """``"zstd"`` or ``"zlib"``."""
        return self._codec

    def extend(self, other: CaseStore) -> None:
        """Add ``other``'s cases after this store's, in ``other``'s order (a dataset loaded
        in consecutive parts: ``dataset.load_case_store_range``). ``other`` must compress
        with this store's codec and dictionary (made with ``codec=self.codec,
        dictionary=self.dictionary``), so its rows are taken as they are. Raises
        ``ValueError`` when it does not, or when the stores share a case id (nothing is
        added then)."""
        if self._dict is None or other._dict != self._dict or other._codec != self._codec:
            raise ValueError("the stores do not share a compression dictionary and codec")
        if not self._rows.keys().isdisjoint(other._rows.keys()):
            raise ValueError("the stores share a case id")
        rows = self._rows
        intern = sys.intern
        for k, v in other._rows.items():
            rows[intern(k)] = v
        self._n_plain += other._n_plain
        self.semantic_cases.extend(other.semantic_cases)

    # --- reading

    def plan(self, cid: str) -> CasePlan | None:
        """``case_plan.case_plan(self[cid])`` without building the case: the plan of case
        ``cid`` (its ``case()`` builds the case when a reason needs it), or None when the
        case is outside the fast path's scope. Raises ``KeyError`` for an unknown id."""
        plans = self._plans
        got = plans.get(cid, _NO_PLAN)
        if got is not _NO_PLAN:
            return got  # type: ignore[no-any-return]
        packed = self._rows[cid]
        if isinstance(packed, tuple):
            return case_plan(packed[0])
        t = marshal.loads(self._body(packed))  # the packed plan: marshal stops after it
        got = None if t is None else unpack(t, (self, cid), packed[:_HASH_BYTES].hex())
        if len(plans) >= PLAN_CACHE_SIZE:
            plans.clear()
        plans[cid] = got
        return got

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
        body = self._body(packed)
        t = marshal.loads(body)
        row = marshal.loads(body[int.from_bytes(packed[_HASH_BYTES:_HEAD], "little"):])
        if t is not None:  # the expected calls, from the plan (``add``)
            row = dict(row, expected_calls=expected_rows(t))
        c = Case.from_dict(row)
        h = packed[:_HASH_BYTES].hex()
        object.__setattr__(c, "_case_hash", h)  # read by fingerprint.case_hash
        object.__setattr__(c, _PLAN_ATTR, _NO_PLAN if t is None
                           else unpack(t, (self, cid), h))
        self._cache[cid] = c
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return c

    def keys(self) -> Any:
        """The ids, as a set-like view (its membership test is the dict's own)."""
        return self._rows.keys()

    def __contains__(self, cid: object) -> bool:
        return cid in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __getstate__(self) -> dict[str, Any]:
        # codec objects are made again on use; built cases and plans are not shipped
        return {**self.__dict__, "_tools": None, "_cache": OrderedDict(), "_plans": {}}


__all__ = ["CACHE_SIZE", "TRAIN_ROWS", "CaseStore"]
