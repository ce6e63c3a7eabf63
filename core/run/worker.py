"""The agent's side of process isolation: a worker process that runs the agent under test.

``trajcheck run`` (``runner.run_suite`` with ``isolation="sandbox"`` or ``"process"``) starts
workers with ``python -I -m trajcheck.run.worker WATCH_FD FD`` (under bubblewrap in sandbox
mode: ``trajcheck.run.isolation``), where FD is one end of a socket pair and WATCH_FD the
read end of a pipe whose write end only the runner holds: when the runner dies, the pipe's
end of file makes the worker kill its whole process group.
Messages both ways are length-prefixed JSON objects (4-byte big-endian length, then UTF-8
JSON): never pickle, so nothing the worker sends can run code in the runner.

Protocol (runner -> worker, then worker -> runner):

- ``{"op": "hello", "agent": SPEC, "sys_path": [...], "limits": {...}}`` -> ``{"op": "ready"}``
  (the limits, ``isolation.Limits``, are set before the agent is loaded; the runner's import
  path entries are added after the worker's own, so nothing in them shadows the standard
  library), or
  ``{"op": "load_error", "error": TEXT}`` when the agent cannot be loaded;
- ``{"op": "run", "input", "user", "case_id", "trial", "definitions"}`` (and ``history``
  for a simulated-user turn, passed to an agent that declares that parameter): the worker
  calls the agent with the input and a ``WorkerTools``; each tool call is sent as
  ``{"op": "call", "name", "args", "kwargs"}`` and answered with ``{"op": "result",
  "result": {call_id, name, output, is_error, error}}`` (the runner runs the tool and keeps
  the record); ``{"op": "say", "text"}`` records a message; the run ends with
  ``{"op": "done", "final_response", "usage", "cost_usd", "route", "metadata", "error"}``;
- ``{"op": "exit"}`` or end of file: the worker exits.

The worker holds only what the runner sent it: the case's input, user context, id and
trial, and the tool definitions -- never the case's expected parts, the sandbox or the
record. Source: README "Security model"; the framing is the usual length-prefixed stream.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
import signal
import socket
import struct
import sys
from collections.abc import Mapping
from typing import Any

WORKER_ENV = "TRAJCHECK_AGENT_WORKER"
MAX_MESSAGE = 64 * 1024 * 1024  # bytes; a longer message is a protocol error
_LEN = struct.Struct(">I")


class ChannelClosed(Exception):
    """The other side closed the socket (or it broke)."""


def send(sock: socket.socket, obj: Mapping[str, Any]) -> None:
    """Send one message: ``obj`` as standard JSON (values JSON cannot hold scrubbed)."""
    from ..read import limits

    try:
        data = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        data = json.dumps(limits.scrub(dict(obj)), ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(_LEN.pack(len(data)) + data)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from ``sock``; ChannelClosed at end of file. ``socket.timeout``
    (an OSError) propagates when the socket has a timeout set."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ChannelClosed("end of file")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket) -> bytes:
    """One message's bytes; ValueError when its length is over ``MAX_MESSAGE``."""
    (n,) = _LEN.unpack(recv_exact(sock, _LEN.size))
    if n > MAX_MESSAGE:
        raise ValueError(f"message of {n} bytes (limit {MAX_MESSAGE})")
    return recv_exact(sock, n)


# ----------------------------------------------------------------------------- the worker


class WorkerTools:
    """What the agent receives as ``tools`` in a worker: the same surface as
    ``trajcheck.run.tools.AgentTools`` (``call``, ``acall``, ``say``, ``definitions``,
    ``n_calls``, ``user``, ``case_id``, ``trial``). Every call goes to the runner, which
    validates and runs it against the trial's sandbox and records it; the result comes back
    as a ``ToolResult`` whose ``output`` is the tool's output as JSON."""

    def __init__(self, sock: socket.socket, run: Mapping[str, Any]) -> None:
        self._sock = sock
        self._defs: dict[str, Any] = dict(run.get("definitions") or {})
        self.user: dict[str, Any] | None = run.get("user")
        self.case_id: str | None = run.get("case_id")
        self.trial: int = int(run.get("trial") or 0)
        self._n = 0

    def call(self, name: str, args: Any = None, **kwargs: Any) -> Any:
        """Run tool ``name`` in the runner; returns its ``ToolResult``."""
        from ..model import ToolResult

        self._n += 1
        send(self._sock, {"op": "call", "name": str(name), "args": _wire(args), "kwargs": _wire(kwargs)})
        r = json.loads(recv_frame(self._sock))["result"]
        return ToolResult(call_id=r.get("call_id"), name=r.get("name"), output=r.get("output"),
                          is_error=r.get("is_error"), error=r.get("error"))

    async def acall(self, name: str, args: Any = None, **kwargs: Any) -> Any:
        """``call`` for async agents (calls are served one at a time, in order)."""
        return self.call(name, args, **kwargs)

    def say(self, text: str) -> None:
        """Record an intermediate assistant message (not the final response)."""
        send(self._sock, {"op": "say", "text": text if isinstance(text, str) else str(text)})

    def definitions(self, format: str = "openai") -> list[dict[str, Any]]:
        """The tools' definitions (``openai``, ``anthropic`` or ``plain``)."""
        from ..errors import SchemaError

        if format not in self._defs:
            raise SchemaError(f"unknown definition format {format!r}; use openai, anthropic or plain")
        return json.loads(json.dumps(self._defs[format]))  # type: ignore[no-any-return]

    @property
    def n_calls(self) -> int:
        """Number of tool calls made so far."""
        return self._n


def _wire(v: Any) -> Any:
    """``v`` as a JSON value (copied by the encoding; what JSON cannot hold scrubbed)."""
    from ..read import limits

    try:
        json.dumps(v, allow_nan=False)
        return v
    except (ValueError, TypeError, RecursionError):
        return limits.scrub(v)


def _figure(v: Any) -> Any:
    """A reported cost as the runner should see it: numbers and text as they are (the runner
    checks them and says what it dropped), a non-finite float as ``{"float": "nan"}``."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    return str(type(v).__name__)


def _describe(e: BaseException) -> str:
    try:
        msg = str(e)
    except BaseException:
        msg = "<unprintable>"
    return f"{type(e).__name__}: {msg}".rstrip(": ")


def _wants_history(agent: Any) -> bool:
    try:
        return "history" in inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return False


def _run(sock: socket.socket, agent: Any, run: Mapping[str, Any]) -> dict[str, Any]:
    from dataclasses import asdict

    from .agent_return import parse_agent_return

    tools = WorkerTools(sock, run)
    try:
        if isinstance(run.get("history"), list) and _wants_history(agent):  # a simulated-user turn
            ret = agent(run.get("input"), tools, history=run["history"])
        else:
            ret = agent(run.get("input"), tools)
        if inspect.isawaitable(ret):
            async def _wait() -> Any:
                return await ret
            ret = asyncio.run(_wait())
    except KeyboardInterrupt:
        raise
    except SystemExit as e:  # sys.exit() inside the agent ends its run
        return {"op": "done", "error": f"agent tried to exit the process (SystemExit: {e.code!r})"}
    except BaseException as e:
        return {"op": "done", "error": _describe(e)}
    fr, usage, cost, route, meta, err = parse_agent_return(ret)
    return {"op": "done", "final_response": fr, "usage": asdict(usage) if usage is not None else None,
            "cost_usd": _figure(cost), "route": _wire(route), "metadata": _wire(meta), "error": err}


def _die_with_runner(runner_pid: int, watch_fd: int | None) -> None:
    """Make this worker (and its process group) end when the runner does: the kernel's
    parent-death signal (Linux), a check that the runner has not already gone, and a thread
    that kills the process group when the watch pipe reaches end of file."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if runner_pid and os.getppid() != runner_pid and watch_fd is None:
        os._exit(0)
    if watch_fd is None:
        return

    def watch() -> None:
        try:
            while os.read(watch_fd, 1):
                pass
        except OSError:
            pass
        try:
            os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(0)

    import threading

    threading.Thread(target=watch, name="trajcheck-runner-watch", daemon=True).start()


def set_limits(limits: Mapping[str, Any] | None) -> None:
    """Set the hello message's limits on this process (soft = hard, never raised above the
    current hard limit): ``processes`` (RLIMIT_NPROC), ``memory_mb`` (RLIMIT_AS), ``file_mb``
    (RLIMIT_FSIZE)."""
    if not limits:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    for key, res, scale in (("processes", "RLIMIT_NPROC", 1), ("memory_mb", "RLIMIT_AS", 1 << 20),
                            ("file_mb", "RLIMIT_FSIZE", 1 << 20)):
        v = limits.get(key)
        if v is None or not hasattr(resource, res):
            continue
        r = getattr(resource, res)
        _soft, hard = resource.getrlimit(r)
        n = int(v) * scale
        if hard != resource.RLIM_INFINITY:
            n = min(n, hard)
        try:
            resource.setrlimit(r, (n, n))
        except (ValueError, OSError):
            pass


def main(argv: list[str] | None = None) -> int:
    """The worker's entry point: ``python -I -m trajcheck.run.worker [WATCH_FD] FD``."""
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    os.environ[WORKER_ENV] = "1"  # run_suite refuses to start workers from inside one
    _die_with_runner(0, int(argv[0]) if len(argv) > 1 else None)
    sock = socket.socket(fileno=int(argv[-1]))
    try:
        hello = json.loads(recv_frame(sock))
        set_limits(hello.get("limits"))
        for p in hello.get("sys_path") or []:
            # after the worker's own entries: a folder of the runner's path (the working
            # folder among them) cannot shadow the standard library or trajcheck
            if isinstance(p, str) and p and p not in sys.path:
                sys.path.append(p)
        from ..errors import AgentError
        from .agent_loading import load_agent

        try:
            agent = load_agent(hello["agent"], add_cwd=False)
        except AgentError as e:
            send(sock, {"op": "load_error", "error": str(e)})
            return 1
        send(sock, {"op": "ready"})
        while True:
            msg = json.loads(recv_frame(sock))
            if msg.get("op") != "run":
                return 0
            send(sock, _run(sock, agent, msg))
    except (ChannelClosed, OSError):
        return 0


if __name__ == "__main__":
    sys.exit(main())
