"""engines.data_codec: partials cross sockets as data only. A real partial round-trips to
the same scorecard; bytes that would run code when unpickled (the attack on the range
server) are refused without running it; malformed or forged layouts are a CodecError."""

from __future__ import annotations

import json
import os
import pickle
import struct
from array import array
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
msgpack = pytest.importorskip("msgpack")

from trajcheck.engines import data_codec  # noqa: E402
from trajcheck.engines.batch import BatchPartial, finalize, score_batches  # noqa: E402
from trajcheck.engines.data_codec import CodecError, decode, encode  # noqa: E402
from trajcheck.engines.range_server import RangeClient, RangeServer  # noqa: E402
from trajcheck.engines.tasks import partials_of  # noqa: E402
from trajcheck.scorecard import RunResult  # noqa: E402
from trajcheck.traces import load  # noqa: E402

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau_partial():
    tau = load(TAU)
    lines = [json.dumps(t.to_dict()) for t in tau]
    b = pa.RecordBatch.from_pydict({"trace": lines, "seq": list(range(len(lines)))})
    _, part = score_batches([b], tau.cases, keep_runs=None)
    return part, tau.cases


def test_a_real_partial_round_trips_to_the_same_scorecard(tau_partial):
    part, cases = tau_partial
    blob = part.to_bytes()
    assert blob.startswith(data_codec.MAGIC) and b"pickle" not in blob[:8]
    back = BatchPartial.from_bytes(blob)
    assert back.n_rows == part.n_rows == 200 and len(back.suite.kept) == 200
    assert back.suite.kept[0][1] == part.suite.kept[0][1]  # a RunResult, field by field
    assert isinstance(back.suite.kept[0][1].matched, tuple)
    assert back.suite.run_seq == part.suite.run_seq and back.suite.run_seq.typecode == "q"
    want = finalize([pickle.loads(pickle.dumps(part))], cases, n_boot=50).to_dict()
    assert finalize([back], cases, n_boot=50).to_dict() == want
    # and split in two partials sent as bytes, merged on the "driver"
    assert back.to_bytes() == blob


def test_plain_values_keep_their_types():
    v = {"a": (1, "x", None), ("k", 2): [1.5, float("inf"), True], 3: b"\x00\xff",
         "arr": array("d", [0.5, -2.0]), "i": array("i", [1, -7]), "big": -(1 << 63),
         "s": "caf\u00e9 \ud800"}  # a lone surrogate, as json.loads can give
    back = decode(encode(v))
    assert back == v and type(back["a"]) is tuple and type(back[("k", 2)]) is list
    assert back["arr"].typecode == "d" and back["i"].typecode == "i"


def test_values_it_cannot_hold_are_named():
    with pytest.raises(CodecError, match="set"):
        encode({1, 2})
    with pytest.raises(CodecError, match="cannot hold"):
        encode(1 << 70)


class _Boom:
    """What an attacker sends: unpickling it runs a command of theirs."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_pickled_payload_sent_to_the_range_server_is_not_run(tmp_path):
    """A client holding the token sends a pickle that would run a command on the driver:
    the driver's decoder refuses it and the command never runs."""
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Boom(marker))
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"i": 1}\n')
    with RangeServer(runs, 1) as srv, ThreadPoolExecutor(1) as ex:
        def task() -> None:
            with RangeClient(srv.address, srv.token) as c:
                list(c.ranges())
                c.send_partial(evil)

        job = ex.submit(task)
        with pytest.raises(CodecError, match="bad magic"):
            list(partials_of(srv.partials(job), []))
    assert not marker.exists()
    # the same pickle behind our magic, and inside a forged object extension
    with pytest.raises(CodecError):
        decode(data_codec.MAGIC + evil)
    forged = msgpack.packb(msgpack.ExtType(data_codec.OBJECT, bytes([4]) + evil))
    with pytest.raises(CodecError):
        decode(data_codec.MAGIC + struct.pack("<II", len(forged), 0) + forged)
    assert not marker.exists()
    pickle.loads(evil)  # the payload is real: unpickled, it does run
    assert marker.exists()


def _framed(body: bytes, buffers: tuple[bytes, ...] = ()) -> bytes:
    head = struct.pack(f"<II{len(buffers)}Q", len(body), len(buffers), *map(len, buffers))
    return data_codec.MAGIC + head + body + b"".join(buffers)


def test_forged_layouts_are_codec_errors():
    ext = msgpack.ExtType
    # an extension type we do not have
    with pytest.raises(CodecError, match="unknown extension"):
        decode(_framed(msgpack.packb(ext(9, b""))))
    # a class number past the known classes
    with pytest.raises(CodecError, match="unknown class"):
        decode(_framed(msgpack.packb(ext(data_codec.OBJECT, bytes([200]) + msgpack.packb({})))))
    # a RunResult with a field it does not have (an attribute meant to shadow a method)
    state = RunResult("r", "c", 0, True, "ok").__dict__ | {"to_dict": "x"}
    with pytest.raises(CodecError, match="to_dict"):
        decode(_framed(msgpack.packb(ext(data_codec.OBJECT, bytes([4]) + msgpack.packb(state)))))
    # an array naming a buffer that is not there, or of an object type code
    with pytest.raises(CodecError, match="not decodable"):
        decode(_framed(msgpack.packb(ext(data_codec.ARRAY, struct.pack("<BI", ord("d"), 3)))))
    with pytest.raises(CodecError, match="not decodable"):
        decode(_framed(msgpack.packb(ext(data_codec.ARRAY, struct.pack("<BI", ord("u"), 0))),
                       (b"ab",)))
    # cut short, trailing bytes, a bad head
    good = encode({"a": [1, 2, 3]})
    for bad in (good[:-1], good + b"x", good[:6], b"TJM1" + b"\xff" * 12):
        with pytest.raises(CodecError):
            decode(bad)
    # nesting deeper than the decoder allows: an error, not a crash
    deep = msgpack.packb([])
    for _ in range(3000):
        deep = msgpack.packb(ext(data_codec.TUPLE, b"\x91" + deep))
    with pytest.raises(CodecError):
        decode(_framed(deep))
