"""Cases kept compact for evaluations over many cases.

A built ``Case`` with a few expected calls takes about 2 KB of memory, and its fast-scoring
plan (``case_plan``) about as much again; a quarter of a million cases (a million runs of
four trials) would take more than the whole evaluation may. A ``CaseStore`` keeps each
validated case in three parts:

- its plan's *shape* (tool names, modes, optional and forbidden tools: ``case_plan.split``),
  kept once for all the cases that share it (a dataset of a quarter of a million generated
  or templated cases has a few hundred shapes);
- one ``bytes`` per case: its definition hash, where its row is, its shape's number, and
  its plan's own part (the expected arguments, the canonical-key plan, the step bounds,
  threshold and category), written by ``marshal`` (exact for every JSON value: integers
  past 64 bits, ``-0.0``, non-ASCII text) and compressed alone, about 70 bytes;
- its dataset row, written by ``marshal`` in frames of ``ROWS_PER_FRAME`` rows compressed
  together. A case in the plan's scope keeps its row without the expected calls: the
  plan's names, arguments and modes give them back (``case_plan.expected_rows``).

- ``plan(cid)`` gives the case's plan without building the ``Case``: one decompression
  of its own part and one ``marshal.loads``, joined to its shape; what a scorer reads per
  run.
- ``store[cid]`` builds the ``Case`` again from its row (``Case.from_dict`` of the same row
  gives an equal case, so every figure is the one the built cases give), with its hash and
  plan attached. The last ``cache_size`` cases built are kept (runs of one case often come
  close together).

Compression: with ``zstandard`` (a core dependency), Zstandard; the plans' parts
with a dictionary trained on the first ``TRAIN_ROWS`` of them (parts of one dataset share
most of their keys and tool names: a part compresses to about a third, and decompresses in
about a microsecond); else zlib with the first parts as preset dictionary. Until
``TRAIN_ROWS`` cases are in, the parts are kept uncompressed (small stores stay plain), and
the first ``RAW_BYTES`` of parts stay so (a plan read per run then costs no decompression:
all of them for some 60,000 cases of a few calls, a quarter of a million cases' taking
~16 MB more than compressed).

Rows ``marshal`` cannot write (YAML dates, for instance) are kept as built cases.
"""

from __future__ import annotations

import marshal
import struct
import sys
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from ..model import Case
from ..score.case_plan import (
    _NO_PLAN,
    _PLAN_ATTR,
    CasePlan,
    case_plan,
    expected_rows,
    join,
    shape_of,
    split,
)

_zstd: Any
try:
    import zstandard as _zstd
except ImportError:  # pragma: no cover - zstandard is a core dependency
    _zstd = None

CACHE_SIZE = 64  # runs of a case are often far apart in big files: a small cache, small memory
PLAN_CACHE_SIZE = 64  # plans given by id, kept until this many (then the cache starts over)
TRAIN_ROWS = 1024  # plan parts kept plain until the compression dictionary is made from them
DICT_BYTES = 4096  # Zstandard dictionary size; a zlib preset dictionary is at most this long
ROWS_PER_FRAME = 32  # dataset rows compressed together (read back only to build a case)
RAW_BYTES = 16 << 20  # plan parts kept uncompressed (read faster) until they take this much
MAX_SHAPES = 8192  # plan shapes kept once; a case of a further shape keeps its shape inline
_HASH_BYTES = 8  # fingerprint.case_hash: 16 hex characters
_SLOT = _HASH_BYTES + 4  # after the hash, the row's frame (4 bytes), its place in it (1 byte,
_PACKED = 0x80  # with this bit set when the plan part is compressed)
_HEAD = _SLOT + 3  # then the shape's number (2 bytes, little-endian; _INLINE: in the part)
_INLINE = 0xFFFF
_pack_head = struct.Struct("<8sIBH").pack  # the hash, frame, slot and shape number: _HEAD bytes
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
        # id -> hash, row place and plan part (bytes; no part: outside the plan's scope),
        # or (built case, hash) for a row marshal cannot write
        self._rows: dict[str, bytes | tuple[Case, str]] = {}
        self._cache: OrderedDict[str, Case] = OrderedDict()
        self._cache_size = cache_size
        self._plans: dict[str, CasePlan | None] = {}
        self._codec = codec
        # None: parts kept plain (fewer than TRAIN_ROWS so far); given: another store's
        # (``dictionary``), so this one's cases can join it (``extend``)
        self._dict: bytes | None = dictionary
        self._n_plain = 0
        self._raw_bytes = 0  # of the plan parts kept uncompressed (RAW_BYTES)
        self._tools: Any = None  # (compress, decompress) functions, made from _dict on use
        self._ftools: Any = None  # the same for the row frames (no dictionary)
        self._shapes: list[tuple[Any, ...]] = []
        self._shape_ix: dict[tuple[Any, ...], int] = {}
        self._frames: list[bytes] = []  # compressed frames of ROWS_PER_FRAME marshalled rows
        self._open: list[bytes] = []  # the marshalled rows of the frame being filled
        self.semantic_cases: list[Case] = []

    # --- building

    def add(self, case: Case, row: dict[str, Any], *, plain: bool = False) -> None:
        """Keep ``case`` (built from ``row``, its dataset row after validation). ``plain``:
        the row holds JSON values only, with finite numbers (``fingerprint.case_hash``)."""
        from ..score.fingerprint import case_hash

        h = case_hash(case, plain=plain)
        plan = case_plan(case)
        kept = False
        if len(h) == 2 * _HASH_BYTES:
            if plan is None:
                kept = self._put(case.id, bytes.fromhex(h), None, None, None, row)
            else:
                key, shape, part = split(plan)
                kept = self._put(case.id, bytes.fromhex(h), key, shape, part,
                                 {k: v for k, v in row.items() if k != "expected_calls"})
        if not kept:
            self._rows[sys.intern(case.id)] = (case, h)
        if any(e.match for e in case.expected_calls):
            from ..match.semantic import semantic_uses

            if semantic_uses([case]):
                self.semantic_cases.append(case)

    def add_plan(self, cid: str, case_hash: str | bytes, key: tuple[Any, ...], part: tuple[Any, ...],
                 row: dict[str, Any], shape: int | None = None) -> bool:
        """Keep case ``cid`` given by its parts instead of built (``row_plan.direct``): its
        hash (``fingerprint.case_hash``, or the bytes its hex digits stand for), its plan's
        shape key and own part
        (``case_plan.split``), and its dataset row without the expected calls. What
        ``add`` keeps for the case built from the row. ``shape``: ``key``'s number in this
        store when the caller knows it. False when ``marshal`` cannot write them (nothing
        kept: add the built case)."""
        if isinstance(case_hash, bytes):
            h = case_hash
        elif len(case_hash) == 2 * _HASH_BYTES:
            h = bytes.fromhex(case_hash)
        else:
            return False
        if len(h) != _HASH_BYTES:
            return False
        ix = self._shape_ix.get(key) if shape is None else shape
        return self._put(cid, h, key, shape_of(*key) if ix is None else None, part, row, ix)

    def _put(self, cid: str, h: bytes, key: Any, shape: Any, part: Any, row: Any,
             known: int | None = None) -> bool:
        """Keep case ``cid``: its 8-byte hash ``h``, its plan's shape (``key``, ``shape``;
        None: outside the plan's scope; ``known``: its number when the caller looked it
        up) and own ``part`` (``case_plan.split``), and ``row`` (without the expected calls
        when a plan gives them back). False when ``marshal`` cannot write them (nothing
        kept)."""
        try:
            rb = marshal.dumps(row)
            ix = _INLINE
            if key is None:
                pb = b""
            else:
                got = known if known is not None else self._shape_ix.get(key)
                if got is not None:
                    ix = got
                elif len(self._shapes) < MAX_SHAPES:
                    marshal.dumps(shape)  # a shape marshal cannot write: kept inline (fails below)
                    ix = self._shape_ix[key] = len(self._shapes)
                    self._shapes.append(shape)
                pb = marshal.dumps(part if ix != _INLINE else (shape, *part))
        except ValueError:  # a value marshal cannot write: kept as the built case
            return False
        slot = len(self._open)
        if pb:
            if self._dict is None or self._raw_bytes + len(pb) <= RAW_BYTES:
                self._raw_bytes += len(pb)
            else:
                pb = (self._tools or self._codec_tools())[0](pb)
                slot |= _PACKED
        opened = self._open
        self._rows[sys.intern(cid)] = _pack_head(h, len(self._frames), slot, ix) + pb
        opened.append(rb)
        if len(opened) >= ROWS_PER_FRAME:
            self._close_frame()
        if pb and self._dict is None:
            self._n_plain += 1
            if self._n_plain >= TRAIN_ROWS:
                self._seal()
        return True

    def _frame_tools(self) -> Any:
        if self._ftools is None:
            if self._codec == "zstd":
                self._ftools = (_zstd.ZstdCompressor(level=3).compress,
                                _zstd.ZstdDecompressor().decompress)
            else:
                self._ftools = (lambda b: zlib.compress(b, 6), zlib.decompress)
        return self._ftools

    def _close_frame(self) -> None:
        self._frames.append(self._frame(self._open))
        self._open = []

    def _frame(self, rows: list[bytes]) -> bytes:
        """``rows`` compressed as one frame, in a ``bytes`` of its own size: the codec's
        output is cut down from a buffer for the worst case, and kept as it is, each such
        cut leaves a hole the next frame's buffers do not fit (250k cases: ~40 MB more)."""
        return bytes(bytearray(self._frame_tools()[0](marshal.dumps(rows))))

    def _row(self, packed: bytes) -> Any:
        """The marshalled row of the case stored as ``packed``."""
        f = int.from_bytes(packed[_HASH_BYTES:_SLOT], "little")
        if f == len(self._frames):
            rows = self._open
        else:
            rows = marshal.loads(self._frame_tools()[1](self._frames[f]))
        return marshal.loads(rows[packed[_SLOT] & ~_PACKED])

    def _seal(self) -> None:
        """Make the compression dictionary from the plan parts so far, and compress those
        past ``RAW_BYTES``."""
        plain = [(k, v) for k, v in self._rows.items() if isinstance(v, bytes) and len(v) > _HEAD]
        bodies: list[Any] = [v[_HEAD:] for _, v in plain]
        d = b""
        if self._codec == "zstd" and len(bodies) >= 16:
            try:
                d = _zstd.train_dictionary(DICT_BYTES, bodies).as_bytes()
            except Exception:  # too little material to train on: the parts themselves serve
                d = b""
        if not d:
            for b in bodies:  # the first parts, as a preset (raw content) dictionary
                if len(d) + len(b) > DICT_BYTES:
                    break
                d += b
        self._dict = d
        self._tools = None
        raw = 0
        for k, v in plain:
            raw += len(v) - _HEAD
            if raw > RAW_BYTES:
                raw -= len(v) - _HEAD
                self._rows[k] = (v[:_SLOT] + bytes((v[_SLOT] | _PACKED,)) + v[_SLOT + 1:_HEAD]
                                 + self._compress(v[_HEAD:]))
        self._raw_bytes = raw

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

    def _part(self, packed: bytes) -> tuple[Any, ...] | None:
        """The plan part (``_put``) of the case stored as ``packed``: ``case_plan.split``'s
        part, after the shape itself when the shape is inline; None outside the plan's
        scope."""
        if len(packed) == _HEAD:
            return None
        if not packed[_SLOT] & _PACKED:
            return marshal.loads(packed[_HEAD:])  # type: ignore[no-any-return]
        return marshal.loads((self._tools or self._codec_tools())[1](packed[_HEAD:]))  # type: ignore[no-any-return]

    def _join(self, packed: bytes, t: tuple[Any, ...], cid: str) -> CasePlan:
        """The plan of case ``cid`` stored as ``packed``, of part ``t`` (``_part``)."""
        ix = packed[_SLOT + 1] | packed[_SLOT + 2] << 8
        h = packed[:_HASH_BYTES].hex()
        if ix == _INLINE:
            return join(t[0], t[1:], cid, h, (self, cid))
        return join(self._shapes[ix], t, cid, h, (self, cid))

    @property
    def dictionary(self) -> bytes | None:
        """The compression dictionary of the plan parts, once made (None while they are
        kept plain): give it to ``CaseStore(codec=, dictionary=)`` for stores whose cases
        ``extend`` joins here."""
        return self._dict

    @property
    def codec(self) -> str:
        """``"zstd"`` or ``"zlib"``."""
        return self._codec

    def extend(self, other: CaseStore) -> None:
        """Add ``other``'s cases after this store's, in ``other``'s order (a dataset loaded
        in consecutive parts: ``dataset.load_case_store_range``). ``other`` must compress
        with this store's codec and dictionary (made with ``codec=self.codec,
        dictionary=self.dictionary``), so its plan parts are taken as they are (only the
        numbers of their shapes and row frames change). ``other`` is left unchanged.
        Two stores without a dictionary yet (their parts plain) join too; this one then
        makes its dictionary once it holds ``TRAIN_ROWS`` plan parts, as ``add`` does.
        Raises ``ValueError`` when it does not, or when the stores share a case id
        (nothing is added then)."""
        if other._dict != self._dict or other._codec != self._codec:
            raise ValueError("the stores do not share a compression dictionary and codec")
        if not self._rows.keys().isdisjoint(other._rows.keys()):
            raise ValueError("the stores share a case id")
        if self._open:
            self._close_frame()
        base = len(self._frames)
        self._frames.extend(other._frames)
        if other._open:
            self._frames.append(self._frame(other._open))
        ixs: list[int] = []  # other's shape number -> this store's (_INLINE: past the cap)
        for key, shape in zip(other._shape_ix, other._shapes):
            got = self._shape_ix.get(key)
            if got is None and len(self._shapes) < MAX_SHAPES:
                got = self._shape_ix[key] = len(self._shapes)
                self._shapes.append(shape)
            ixs.append(_INLINE if got is None else got)
        rows = self._rows
        intern = sys.intern
        for k, v in other._rows.items():
            if isinstance(v, bytes):
                ix = v[_SLOT + 1] | v[_SLOT + 2] << 8
                body = v[_HEAD:]
                slot = v[_SLOT]
                if ix != _INLINE:
                    shape, ix = other._shapes[ix], ixs[ix]
                    if ix == _INLINE:  # a shape past this store's cap: kept in the part
                        t = other._part(v)
                        assert t is not None  # a shape number comes with a part
                        body = marshal.dumps((shape, *t))
                        if self._dict is not None:
                            body = self._compress(body)
                            slot |= _PACKED
                if body and not slot & _PACKED:  # raw in ``other``: raw here within RAW_BYTES
                    if self._dict is None or self._raw_bytes + len(body) <= RAW_BYTES:
                        self._raw_bytes += len(body)
                    else:
                        body = self._compress(body)
                        slot |= _PACKED
                f = int.from_bytes(v[_HASH_BYTES:_SLOT], "little") + base
                v = (v[:_HASH_BYTES] + f.to_bytes(4, "little") + bytes((slot,))
                     + ix.to_bytes(2, "little") + body)
            rows[intern(k)] = v
        self._n_plain += other._n_plain
        self.semantic_cases.extend(other.semantic_cases)
        if self._dict is None and self._n_plain >= TRAIN_ROWS:
            self._seal()

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
        if len(packed) == _HEAD:
            got = None
        else:
            body = packed[_HEAD:]
            t = marshal.loads((self._tools or self._codec_tools())[1](body)
                              if packed[_SLOT] & _PACKED else body)
            ix = packed[_SLOT + 1] | packed[_SLOT + 2] << 8
            if ix == _INLINE:
                got = join(t[0], t[1:], cid, packed[:_HASH_BYTES].hex(), (self, cid))
            else:
                got = join(self._shapes[ix], t, cid, packed[:_HASH_BYTES].hex(), (self, cid))
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
        row = self._row(packed)
        t = self._part(packed)
        h = packed[:_HASH_BYTES].hex()
        plan = None
        if t is not None:  # the expected calls, from the plan (``add``)
            plan = self._join(packed, t, cid)
            row = dict(row, expected_calls=expected_rows(plan.exp_names, plan.exp_args,
                                                         plan.own_modes))
        c = Case.from_dict(row)
        object.__setattr__(c, "_case_hash", h)  # read by fingerprint.case_hash
        object.__setattr__(c, _PLAN_ATTR, _NO_PLAN if plan is None else plan)
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
        return {**self.__dict__, "_tools": None, "_ftools": None, "_cache": OrderedDict(),
                "_plans": {}}


__all__ = ["CACHE_SIZE", "RAW_BYTES", "TRAIN_ROWS", "CaseStore"]
