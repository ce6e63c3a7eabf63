"""A file of runs handed out to engine tasks range by range as they ask, and their partials
taken back over the same connection: the balanced way Spark's ``eval_file`` scores a file.

With one fixed byte range per core, the core that finishes first waits for the others (on a
2-core host, 1.5-2.5 s of a 1M-run evaluation: two cores do not run at the same speed, and
the JVM's own threads take turns on one of them). Instead a ``RangeServer`` thread on the
driver cuts the file as the tasks ask for work, each range a share of what is left
(``GUIDE``; between ``MIN_BYTES`` and ``MAX_BYTES``, line-aligned; guided self-scheduling),
so the ranges shrink towards the end and the tasks finish within one small range of each
other. Each task keeps one partial over all its ranges and, when told there is no more
work, sends the partial's bytes straight back: the driver unpacks the first partial while
the other tasks still score, and the partials do not pass through the JVM.

Ranges are numbered in file order as they are cut, and a run's position is its range's
number and its line within the range (``files.read_range``): positions increase in input
order, whichever task scored the range.

Protocol, one TCP connection per task, ASCII lines:

- task: ``<token>`` (the evaluation's random token: any other client is dropped);
- task: ``next``; server: ``<start> <end> <index>``, or ``done`` when the file is handed out;
- task: ``partial <n>`` and n bytes; server: ``ok``.

What the server trusts: a client must send the token first (compared in constant time,
``hmac.compare_digest``) within ``HELLO_S`` seconds, and at most ``MAX_GREETING``
connections may be waiting to do so (more are closed at once), so silent connections
cannot pin the server's threads. A task then may be silent while it scores a range for up
to ``IDLE_S`` seconds; a partial is at most ``max_partial`` bytes (``MAX_PARTIAL_BYTES``
plus ``PARTIAL_PER_BYTE`` per byte of the file) and arrives at ``SEND_S`` seconds' pace at
worst. The partial's bytes are opaque here; the driver reads them with
``BatchPartial.from_bytes``, which decodes data only (``data_codec``: never pickle).

A connection that closes before its partial gives its ranges back, and the next task to ask
scores them under the same numbers (a retried task). ``RangeServer.partials`` checks at the
end that the ranges of the partials received cover the file once each, and raises
``EngineError`` otherwise: a lost range never shows as a smaller score.
"""

from __future__ import annotations

import hmac
import os
import queue
import secrets
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

from ..errors import EngineError

#: each range is 1/(GUIDE * workers) of what is left, so the last ranges are small
GUIDE = 4
MIN_BYTES = 1 << 20  # ~400 volume runs, ~30 ms to score: the tasks end this close together
MAX_BYTES = 64 << 20  # early ranges: few round trips, each task's batches stay long

Range = tuple[int, int, int]  # (start byte, end byte, index in file order)
_LINE = 256  # the longest protocol line read (a client that sends more is dropped)
HELLO_S = 10.0  # a new connection must send the token within this many seconds
MAX_GREETING = 64  # connections at most waiting to send the token; more are closed
IDLE_S = 3600.0  # the longest a task may be silent (scoring one range) before it is dropped
SEND_S = 120.0  # the longest one read of a partial's bytes may wait
#: a partial's size cap: this much plus ``PARTIAL_PER_BYTE`` per byte of the runs file (a
#: 1M-run partial is ~80 MB of a 2.6 GB file)
MAX_PARTIAL_BYTES = 256 << 20
PARTIAL_PER_BYTE = 4


class RangeServer:
    """Serves ``path``'s line-aligned byte ranges to ``workers`` tasks on ``host`` (a
    listening socket on a free port: ``address``) and collects their partials (module
    docstring); ranges of ``min_bytes`` to ``max_bytes`` (default ``MIN_BYTES``,
    ``MAX_BYTES``). A context manager: the server thread runs inside the ``with``. Raises
    ``ValueError`` for ``workers < 1``, ``OSError`` for a file it cannot open."""

    def __init__(self, path: str | os.PathLike[str], workers: int, host: str = "127.0.0.1", *,
                 min_bytes: int | None = None, max_bytes: int | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.path = os.fspath(path)
        self.size = os.path.getsize(self.path)
        self.workers = workers
        self.min_bytes = MIN_BYTES if min_bytes is None else min_bytes  # read now: tests set them
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self.token = secrets.token_hex(16)
        self.max_partial = MAX_PARTIAL_BYTES + PARTIAL_PER_BYTE * self.size
        self._greeting = threading.BoundedSemaphore(MAX_GREETING)
        self._lock = threading.Lock()
        self._pos = 0
        self._cut: list[Range] = []  # every range cut so far, in file order
        self._returned: list[Range] = []  # ranges of connections that closed without a partial
        self._got: queue.Queue[tuple[list[Range], bytes]] = queue.Queue()
        self._file = open(self.path, "rb")  # noqa: SIM115 - closed in close()
        self._sock = socket.create_server((host, 0))
        self.address: tuple[str, int] = self._sock.getsockname()[:2]
        self._thread = threading.Thread(target=self._accept, name="trajcheck-ranges",
                                        daemon=True)

    def __enter__(self) -> RangeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting tasks and close the file."""
        self._sock.close()
        self._file.close()

    def take(self) -> Range | None:
        """The next range to score (a returned one first), or None: all handed out."""
        with self._lock:
            if self._returned:
                return self._returned.pop()
            if self._pos >= self.size:
                return None
            want = (self.size - self._pos) // (GUIDE * self.workers)
            end = self._pos + min(max(want, self.min_bytes), self.max_bytes)
            if end < self.size:
                self._file.seek(end - 1)
                self._file.readline()  # to the end of the line holding byte end - 1
                end = self._file.tell()
            r = (self._pos, min(end, self.size), len(self._cut))
            self._cut.append(r)
            self._pos = r[1]
            return r

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed
                return
            if not self._greeting.acquire(blocking=False):
                conn.close()  # too many connections that have not said the token yet
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        given: list[Range] = []
        delivered = False
        greeting = True
        try:
            with conn, conn.makefile("rb") as f:
                conn.settimeout(HELLO_S)
                hello = f.readline(_LINE).rstrip(b"\n")
                self._greeting.release()
                greeting = False
                if not hmac.compare_digest(hello, self.token.encode()):
                    return
                while True:
                    conn.settimeout(IDLE_S)
                    line = f.readline(_LINE)
                    if line == b"next\n":
                        r = self.take()
                        if r is not None:
                            given.append(r)
                        conn.sendall(b"done\n" if r is None else f"{r[0]} {r[1]} {r[2]}\n".encode())
                    elif line.startswith(b"partial "):
                        n = int(line.split()[1])
                        if not 0 <= n <= self.max_partial:
                            return
                        conn.settimeout(SEND_S)
                        blob = f.read(n)
                        if len(blob) != n:
                            return
                        self._got.put((given, blob))
                        delivered = True
                        conn.sendall(b"ok\n")
                        return
                    else:  # closed (a task that failed) or not our protocol
                        return
        except (OSError, ValueError):  # socket.timeout is an OSError
            return
        finally:
            if greeting:
                self._greeting.release()
            if given and not delivered:
                with self._lock:
                    self._returned.extend(given)

    def partials(self, job: Future[Any]) -> Iterator[bytes]:
        """Each task's partial bytes as it arrives, until ``job`` (the engine's job running
        the tasks) is done; raises the job's error, or ``EngineError`` when the partials'
        ranges do not cover the file exactly once."""
        seen: list[Range] = []
        while True:
            try:
                ranges, blob = self._got.get(timeout=0.05)
            except queue.Empty:
                if job.done():
                    job.result()  # the job's error, if it failed
                    if self._got.empty():  # a task sends its partial before it ends
                        break
                continue
            seen.extend(ranges)
            yield blob
        self._check(seen)

    def _check(self, seen: list[Range]) -> None:
        with self._lock:
            cut = list(self._cut)
        # the ranges received are the ranges cut, and these tile [0, size) in order
        ok = (sorted(seen) == cut
              and [0] + [e for _, e, _ in cut] == [s for s, _, _ in cut] + [self.size])
        if not ok:
            missing = sorted(set(cut) - set(seen))
            raise EngineError(
                f"{self.path}: the tasks' partials cover {len(seen)} byte ranges of the "
                f"{len(cut)} cut ({len(missing)} missing, e.g. {missing[:3]}; "
                f"{self._pos} of {self.size} bytes handed out): a task lost its work")


class RangeClient:
    """A task's side of the protocol (module docstring): ``ranges()`` asks for ranges
    until there are none, ``send_partial`` hands the partial back. Raises ``EngineError``
    when the driver's server goes away."""

    def __init__(self, address: tuple[str, int], token: str) -> None:
        self._sock = socket.create_connection((address[0], address[1]))
        self._f = self._sock.makefile("rb")
        self._sock.sendall(token.encode() + b"\n")

    def __enter__(self) -> RangeClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._f.close()
        self._sock.close()

    def _line(self) -> bytes:
        line = self._f.readline()
        if not line.endswith(b"\n"):
            raise EngineError("the driver's range server closed the connection")
        return line[:-1]

    def ranges(self) -> Iterator[Range]:
        """``(start, end, index)`` of each range to score, as the server cuts them."""
        while True:
            self._sock.sendall(b"next\n")
            line = self._line()
            if line == b"done":
                return
            s, e, i = line.split()
            yield int(s), int(e), int(i)

    def send_partial(self, blob: bytes) -> None:
        """Send the task's partial (``BatchPartial.to_bytes``) and wait for the receipt."""
        try:
            self._sock.sendall(b"partial %d\n" % len(blob))
            self._sock.sendall(blob)
        except OSError as e:  # the server dropped us (a partial over its cap)
            raise EngineError(f"the driver's range server closed the connection ({e})") from e
        if self._line() != b"ok":
            raise EngineError("the driver's range server did not take the partial")


__all__ = ["GUIDE", "MAX_BYTES", "MIN_BYTES", "RangeClient", "RangeServer"]
