"""engines.range_server: a file handed out in line-aligned ranges to tasks that ask, over
loopback sockets; every range scored once, a task's lost ranges served again, and a range
nobody scored an error, never a smaller score."""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from trajcheck.engines import range_server
from trajcheck.engines.range_server import RangeClient, RangeServer
from trajcheck.errors import EngineError


@pytest.fixture()
def lines(tmp_path):
    """A JSONL file of 3,000 lines of uneven length; the lines' start offsets."""
    p = tmp_path / "runs.jsonl"
    rows = [json.dumps({"i": i, "pad": "x" * (i * 7 % 53)}) + "\n" for i in range(3000)]
    p.write_text("".join(rows))
    starts, at = [], 0
    for r in rows:
        starts.append(at)
        at += len(r)
    return p, starts, at


def _task(srv: RangeServer, out: list) -> int:
    """A task: take ranges until told there are none, send their list as the partial."""
    with RangeClient(srv.address, srv.token) as c:
        got = list(c.ranges())
        c.send_partial(json.dumps(got).encode())
    out.append(got)
    return len(got)


def _job(ex: ThreadPoolExecutor, fn, n: int) -> Future:
    return ex.submit(lambda: [f.result() for f in [ex.submit(fn) for _ in range(n)]])


def test_ranges_tile_the_file_line_aligned_guided_and_numbered_in_order(lines):
    p, starts, size = lines
    with RangeServer(p, 3, min_bytes=200, max_bytes=9000) as srv:
        got: list = []
        with ThreadPoolExecutor(4) as ex:
            job = _job(ex, lambda: _task(srv, got), 3)
            blobs = list(srv.partials(job))
    assert len(blobs) == 3 and sorted(job.result()) == sorted(len(g) for g in got)
    every = sorted(tuple(r) for g in got for r in g)
    # each range once; together they are [0, size), cut at line starts, numbered in file order
    assert [r[2] for r in every] == list(range(len(every)))
    assert every[0][0] == 0 and every[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(every, every[1:]))
    assert {r[0] for r in every} <= set(starts)
    # guided: a twelfth of what was left (3 workers), within [200, 9000] bytes before the
    # line end; so the first ranges are the largest and the last ones small
    left = size
    for s, e, _ in every[:-1]:
        want = min(max(left // 12, 200), 9000)
        assert want <= e - s < want + 80 and s == size - left  # lines: <= 80 bytes
        left -= e - s
    assert every[0][1] - every[0][0] >= 9000 and every[-2][1] - every[-2][0] < 280
    assert sorted(json.loads(b) for b in blobs) == sorted(json.loads(json.dumps(g)) for g in got)


def test_a_task_that_drops_its_ranges_has_them_served_again(lines):
    """A task that took two ranges and died: another task scores them, same numbers."""
    p, _, size = lines
    with RangeServer(p, 2, min_bytes=500, max_bytes=2000) as srv:
        with RangeClient(srv.address, srv.token) as dead:
            it = dead.ranges()
            lost = [next(it), next(it)]
        got: list = []
        with ThreadPoolExecutor(3) as ex:
            job = _job(ex, lambda: _task(srv, got), 2)
            blobs = list(srv.partials(job))
    every = sorted(tuple(r) for g in got for r in g)
    assert set(map(tuple, lost)) <= set(every) and len(blobs) == 2
    assert [r[2] for r in every] == list(range(len(every))) and every[-1][1] == size


def test_a_range_nobody_scored_is_an_error(lines):
    """Ranges lost after every task finished: the partials do not cover the file."""
    p, _, _ = lines
    with RangeServer(p, 1, min_bytes=500, max_bytes=2000) as srv:
        done = threading.Event()

        def job_fn() -> int:
            with RangeClient(srv.address, srv.token) as c:
                it = c.ranges()
                next(it)  # takes a range, then its partial claims nothing was scored
                c.send_partial(b"[]")
            # a second task took a range and died: it goes back, but nobody asks again
            with RangeClient(srv.address, srv.token) as c:
                next(c.ranges())
            done.set()
            return 0

        with ThreadPoolExecutor(1) as ex:
            job = ex.submit(job_fn)
            with pytest.raises(EngineError, match="a task lost its work") as ei:
                list(srv.partials(job))
    assert str(p) in str(ei.value) and done.is_set()


def test_the_jobs_error_is_raised(lines):
    p, _, _ = lines
    with RangeServer(p, 2) as srv, ThreadPoolExecutor(1) as ex:
        job = ex.submit(lambda: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            list(srv.partials(job))


def test_a_client_without_the_token_gets_nothing(lines):
    p, _, _ = lines
    with RangeServer(p, 2) as srv:
        with RangeClient(srv.address, "0" * 32) as c, pytest.raises(EngineError, match="closed"):
            next(c.ranges())
        # a raw connection speaking something else: dropped, and the server still serves
        with socket.create_connection(srv.address) as s:
            s.sendall(srv.token.encode() + b"\nGET / HTTP/1.1\n")
            assert s.recv(10) == b""
        with RangeClient(srv.address, srv.token) as c:
            first = next(c.ranges())
        assert first[0] == 0 and first[2] == 0
        for _ in range(500):  # the server sees the close: the range goes back, served again
            if srv._returned:
                break
            time.sleep(0.01)
        assert srv.take() == first


def test_defaults_and_bad_workers(lines, monkeypatch):
    p, _, size = lines
    with RangeServer(p, 1) as srv:  # a small file: one range, the whole of it
        assert srv.take() == (0, size, 0) and srv.take() is None
    monkeypatch.setattr(range_server, "MIN_BYTES", 1000)
    with RangeServer(p, 50) as srv:
        s, e, _ = srv.take()
        assert 1000 <= e - s < 1080
    with pytest.raises(ValueError, match="workers"):
        RangeServer(p, 0)


def test_an_empty_file_gives_no_ranges(tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    got: list = []
    with RangeServer(p, 2) as srv, ThreadPoolExecutor(3) as ex:
        job = _job(ex, lambda: _task(srv, got), 2)
        assert [json.loads(b) for b in srv.partials(job)] == [[], []]


def test_silent_and_flooding_connections_do_not_pin_the_server(lines, monkeypatch):
    """A connection that never sends the token is dropped after HELLO_S; past MAX_GREETING
    such connections the next are closed at once; the token is compared in full (one of the
    same length with one digit changed is refused); tasks are still served."""
    p, _, _ = lines
    monkeypatch.setattr(range_server, "HELLO_S", 0.3)
    monkeypatch.setattr(range_server, "MAX_GREETING", 3)
    with RangeServer(p, 2) as srv:
        silent = [socket.create_connection(srv.address) for _ in range(3)]
        time.sleep(0.1)
        with socket.create_connection(srv.address) as extra:  # the 4th: closed at once
            extra.settimeout(2)
            assert extra.recv(10) == b""
        for s in silent:  # each dropped once HELLO_S has passed
            s.settimeout(2)
            t0 = time.monotonic()
            assert s.recv(10) == b""
            assert time.monotonic() - t0 < 1.5
            s.close()
        near = srv.token[:-1] + ("0" if srv.token[-1] != "0" else "1")
        with RangeClient(srv.address, near) as c, pytest.raises(EngineError, match="closed"):
            next(c.ranges())
        with RangeClient(srv.address, srv.token) as c:
            assert next(c.ranges())[0] == 0


def test_a_partial_over_the_cap_is_dropped(lines, monkeypatch):
    p, _, size = lines
    monkeypatch.setattr(range_server, "MAX_PARTIAL_BYTES", 1000)
    monkeypatch.setattr(range_server, "PARTIAL_PER_BYTE", 0)
    with RangeServer(p, 1) as srv:
        assert srv.max_partial == 1000
        with RangeClient(srv.address, srv.token) as c:
            list(c.ranges())
            with pytest.raises(EngineError, match="closed"):
                c.send_partial(b"x" * 1001)
        assert srv._got.empty()
        for _ in range(500):  # its ranges go back, to be served again
            if srv._returned:
                break
            time.sleep(0.01)
        assert srv.take() == (0, size, 0)
