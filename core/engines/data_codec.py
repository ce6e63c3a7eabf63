"""A data-only binary form of engine partials: what crosses the network is decoded into
plain values and a fixed set of trajcheck classes, never into code.

``pickle.loads`` on bytes from a socket runs whatever the sender chose (a ``__reduce__``
naming ``os.system``); the range server's partials and the engines' partial bytes are read
here instead. The layout: ``MAGIC``, then one MessagePack value (msgpack's C decoder: None,
bools, ints, floats, str, bytes, lists, maps with any plain keys) with three extension types
of ours, each decoded by ``_ext`` and nothing else:

- ``TUPLE``: a tuple (its items as a MessagePack list);
- ``ARRAY``: an ``array.array`` of a numeric type code (the code, then its little-endian
  buffer, copied as it stands: most of a partial's bytes);
- ``OBJECT``: an object of a class in ``classes()`` (its number, then its state). The
  decoder makes it with ``object.__new__`` and hands it the state: the class's own
  ``__setstate__`` (code of this package), or its ``__dict__`` set to exactly its fields.

An unknown extension or class, a field a class does not have, bytes cut short or trailing,
extensions nested deeper than ``MAX_DEPTH`` (msgpack bounds its own lists and maps) are a
``CodecError``. Decoding only builds values; a
sender still must hold the evaluation's token to be heard (``range_server``).
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import fields, is_dataclass
from typing import Any

from ..errors import EngineError

MAGIC = b"TJM1"
TUPLE, ARRAY, OBJECT = 1, 2, 3
MAX_DEPTH = 32  # tuples and objects nested in one another at most (a partial needs ~6)
_ARRAY_CODES = "bBhHiIlLqQfd"
_LITTLE = sys.byteorder == "little"
_ARR = struct.Struct("<BI")  # an array's type code and the number of its buffer


class CodecError(EngineError):
    """Bytes that are not a data-only partial (``decode``), or a value it cannot hold
    (``encode``)."""


def _msgpack() -> Any:
    try:
        import msgpack
    except ImportError as e:  # pragma: no cover - the arrow/spark/ray extras install it
        raise EngineError("engine partials need msgpack: pip install 'trajcheck[arrow]'") from e
    return msgpack


def classes() -> tuple[type, ...]:
    """The classes a partial may hold, in a fixed order (a class's number is its index)."""
    from ..aggregate.case_sums import CaseSums, RunningSum
    from ..aggregate.partials import SuitePartial
    from ..report.scorecard import Disagreement, RunResult
    from .batch import BatchPartial

    return (BatchPartial, SuitePartial, CaseSums, RunningSum, RunResult, Disagreement)


def _state_names(cls: type) -> frozenset[str] | None:
    """The attribute names the state of a ``cls`` object holds: a dataclass's fields, or
    what a fresh ``cls()`` sets (a class whose ``__setstate__`` takes its ``__dict__``);
    None for a ``__slots__`` class (its ``__setstate__`` takes a tuple)."""
    if is_dataclass(cls):
        return frozenset(f.name for f in fields(cls))
    if "__slots__" in cls.__dict__:
        return None
    return frozenset(vars(cls()))


# --------------------------------------------------------------------------- encoding


class _Encoder:
    def __init__(self, msgpack: Any) -> None:
        self.index = {c: i for i, c in enumerate(classes())}
        self.msgpack = msgpack
        self.ext = msgpack.ExtType
        self.packers: list[Any] = []  # one per nesting level of extensions
        self.depth = 0
        self.buffers: list[bytes] = []  # the arrays' buffers, after the value

    def default(self, v: Any) -> Any:
        t = type(v)
        if t is tuple:
            return self.ext(TUPLE, self.pack(list(v)))
        if t is array:
            if v.typecode not in _ARRAY_CODES:
                raise CodecError(f"array of type code {v.typecode!r} not encodable")
            if not _LITTLE:  # pragma: no cover - big-endian hosts
                v = array(v.typecode, v)
                v.byteswap()
            self.buffers.append(v.tobytes())
            return self.ext(ARRAY, _ARR.pack(ord(v.typecode), len(self.buffers) - 1))
        k = self.index.get(t)
        if k is None:
            raise CodecError(f"a partial cannot hold a {t.__module__}.{t.__qualname__} value")
        own = t.__dict__.get("__getstate__")
        state = own(v) if own is not None else dict(v.__dict__)
        return self.ext(OBJECT, bytes([k]) + self.pack(state))

    def pack(self, v: Any) -> bytes:
        """``v`` packed; an extension's payload on the packer of its nesting level (the
        outer ones are in the middle of their buffers)."""
        d = self.depth
        if d >= MAX_DEPTH:
            raise CodecError(f"tuples and objects nested deeper than {MAX_DEPTH} levels")
        if d == len(self.packers):
            self.packers.append(self.msgpack.Packer(
                default=self.default, use_bin_type=True, strict_types=True,
                unicode_errors="surrogatepass", autoreset=True))
        self.depth = d + 1
        try:
            return bytes(self.packers[d].pack(v))
        finally:
            self.depth = d


def encode(value: Any) -> bytes:
    """``value`` (plain data and ``classes()`` objects) in the data-only layout.

    Args:
        value: None, bool, int (64-bit), float, str, bytes, list, tuple, dict,
            ``array.array`` of a numeric type code, or an object of one of ``classes()``,
            nested.

    Returns:
        ``MAGIC`` and the value's bytes.

    Raises:
        CodecError: a value of any other type (named) or an int beyond 64 bits.
    """
    enc = _Encoder(_msgpack())
    try:
        body = enc.pack(value)
        head = struct.pack(f"<II{len(enc.buffers)}Q", len(body), len(enc.buffers),
                           *map(len, enc.buffers))
        return b"".join([MAGIC, head, body, *enc.buffers])
    except (OverflowError, ValueError) as e:  # an int beyond 64 bits, nesting too deep
        raise CodecError(f"a value a partial cannot hold: {e}") from None


# --------------------------------------------------------------------------- decoding


class _Decoder:
    def __init__(self, msgpack: Any, buffers: list[memoryview]) -> None:
        self.msgpack = msgpack
        self.buffers = buffers
        self.cls = classes()
        self.names: dict[int, frozenset[str] | None] = {}
        self.depth = 0

    def unpack(self, data: bytes | memoryview) -> Any:
        return self.msgpack.unpackb(data, ext_hook=self.ext, raw=False, strict_map_key=False,
                                    use_list=True, unicode_errors="surrogatepass")

    def ext(self, code: int, data: bytes) -> Any:
        if self.depth >= MAX_DEPTH:
            raise CodecError(f"extensions nested deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            return self._ext(code, data)
        finally:
            self.depth -= 1

    def _ext(self, code: int, data: bytes) -> Any:
        if code == TUPLE:
            items = self.unpack(data)
            if type(items) is not list:
                raise CodecError("a tuple that does not hold a list")
            return tuple(items)
        if code == ARRAY:
            c, i = _ARR.unpack(data)
            tc = chr(c)
            if tc not in _ARRAY_CODES or i >= len(self.buffers):
                raise CodecError(f"array of type code {tc!r}, buffer {i}: not decodable")
            a = array(tc)
            raw = self.buffers[i]
            if len(raw) % a.itemsize:
                raise CodecError(f"array buffer of {len(raw)} bytes, not whole items")
            a.frombytes(raw)
            if not _LITTLE:  # pragma: no cover - big-endian hosts
                a.byteswap()
            return a
        if code == OBJECT:
            return self._object(data)
        raise CodecError(f"unknown extension type {code}")

    def _object(self, data: bytes) -> Any:
        k = data[0] if data else len(self.cls)
        if k >= len(self.cls):
            raise CodecError(f"unknown class number {k}")
        cls = self.cls[k]
        state = self.unpack(memoryview(data)[1:])
        if k not in self.names:
            self.names[k] = _state_names(cls)
        names = self.names[k]
        obj: Any = object.__new__(cls)
        own = cls.__dict__.get("__setstate__")
        if names is None:  # a __slots__ class: its __setstate__ takes a tuple
            if own is None or type(state) is not tuple:
                raise CodecError(f"{cls.__name__}: state is not a tuple")
            own(obj, state)
            return obj
        if type(state) is not dict or not all(type(x) is str for x in state):
            raise CodecError(f"{cls.__name__}: state is not a dict of attributes")
        if own is not None:
            if not set(state) <= names:
                raise CodecError(f"{cls.__name__}: unknown attributes "
                                 f"{sorted(set(state) - names)}")
            own(obj, state)
        else:
            if set(state) != names:
                raise CodecError(f"{cls.__name__}: fields {sorted(set(state) ^ names)} "
                                 "missing or unknown (a partial of another trajcheck version?)")
            obj.__dict__.update(state)
        return obj


def decode(blob: bytes | bytearray | memoryview) -> Any:
    """The value ``encode`` wrote, rebuilt from data alone (module docstring).

    Args:
        blob: bytes that claim to be ``encode``'s output (from a socket, another process).

    Returns:
        The value.

    Raises:
        CodecError: not this layout (no magic, an unknown extension or class, a field the
            class does not have, cut short, trailing bytes, nested too deep).
    """
    mv = memoryview(blob).cast("B")
    if bytes(mv[:len(MAGIC)]) != MAGIC:
        raise CodecError("not a trajcheck data-only partial (bad magic)")
    msgpack = _msgpack()
    try:
        at = len(MAGIC) + 8
        n_body, n_buf = struct.unpack_from("<II", mv, len(MAGIC))
        sizes = struct.unpack_from(f"<{n_buf}Q", mv, at) if n_buf <= len(mv) // 8 else ()
        if len(sizes) != n_buf:
            raise CodecError("malformed partial: more buffers announced than bytes")
        at += 8 * n_buf
        body = mv[at:at + n_body]
        at += n_body
        buffers = []
        for n in sizes:
            buffers.append(mv[at:at + n])
            at += n
        if at != len(mv):
            raise CodecError(f"malformed partial: {len(mv) - at} bytes more or fewer than "
                             "announced")
        return _Decoder(msgpack, buffers).unpack(body)
    except CodecError:
        raise
    except (msgpack.UnpackException, ValueError, TypeError, IndexError, KeyError,
            RecursionError, struct.error) as e:
        raise CodecError(f"malformed partial: {type(e).__name__}: {e}") from None


__all__ = ["ARRAY", "MAGIC", "MAX_DEPTH", "OBJECT", "TUPLE", "CodecError", "classes", "decode", "encode"]
