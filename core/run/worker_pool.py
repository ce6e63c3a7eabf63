"""The runner's side of process isolation: agent worker processes and one run in a worker.

Each agent under test runs in a worker process (``trajcheck.run.worker``); the runner
keeps the case, the sandbox, the tool registry and the record. A worker is reused for the
next run after a run that ended by the protocol (the agent returned or raised); a worker
that exited, crashed, broke the protocol or ran out of time is killed and replaced, and that
run fails with the reason. What the worker sends is read as data only (JSON, size and depth
limits), so an agent can change its own run's calls and answer -- what it did -- and nothing
else. Source: README "Security model".
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import AgentError
from ..read import limits
from .worker import ChannelClosed, recv_frame, send

__all__ = ["WorkerFailed", "WorkerPool", "agent_spec", "pool_for", "run_in_worker"]

STARTUP_TIMEOUT_S = 120.0  # a worker's Python start and the agent's import, apart from the run's timeout


class WorkerFailed(Exception):
    """A worker died, broke the protocol or could not start; the message is the run's reason."""


class _TimedOut(Exception):
    pass


def agent_spec(agent: Any) -> str:
    """The ``module:attr`` or ``path/to/file.py:attr`` a worker loads ``agent`` by: the name
    ``agent`` is bound to in its module (``__qualname__`` first, else any module-level name
    bound to the same object). Raises AgentError for an agent no worker could load by name
    (a lambda, a function defined inside another, an object held by no module-level name)."""
    mod_name = getattr(agent, "__module__", None) or getattr(type(agent), "__module__", None)
    mod = sys.modules.get(mod_name or "")
    attr: str | None = None
    if mod is not None:
        qual = getattr(agent, "__qualname__", None)
        if isinstance(qual, str) and "<" not in qual:
            obj: Any = mod
            for part in qual.split("."):
                obj = getattr(obj, part, None)
            if obj is agent or (obj is not None and _same_method(obj, agent)):
                attr = qual
        if attr is None:
            attr = next((k for k, v in vars(mod).items() if v is agent and not k.startswith("__")), None)
    if mod is None or attr is None:
        raise AgentError(f"agent {_show(agent)} cannot be loaded by name in a worker process (a lambda, a "
                         "function defined inside another, or an object no module-level name holds): "
                         "define it at module level, or run it in trajcheck's own process with "
                         "isolation='inline' (--isolation inline), which does not keep the grader out "
                         "of its reach")
    f = getattr(mod, "__file__", None)
    if mod_name == "__main__" or (mod_name or "").startswith("_trajcheck_agent_"):
        if not f:
            raise AgentError(f"agent {_show(agent)}: its module has no file a worker could load")
        return f"{f}:{attr}"
    return f"{mod_name}:{attr}"


def _same_method(a: Any, b: Any) -> bool:
    try:
        return bool(getattr(a, "__self__", None) is getattr(b, "__self__", object())
                    and getattr(a, "__func__", None) is getattr(b, "__func__", object()))
    except Exception:
        return False


def _show(agent: Any) -> str:
    return repr(getattr(agent, "__qualname__", None) or type(agent).__name__)


class _Worker:
    """One worker process and the runner's end of its socket."""

    def __init__(self, spec: str, sys_path: Sequence[str]) -> None:
        mine, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "trajcheck.run.worker", str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        except OSError as e:
            mine.close()
            raise WorkerFailed(f"agent worker could not start: {e}") from e
        finally:
            theirs.close()
        self.sock = mine
        self.killed = False
        try:
            self.send({"op": "hello", "agent": spec, "sys_path": list(sys_path)})
            msg = self.recv(time.perf_counter() + STARTUP_TIMEOUT_S)
        except _TimedOut:
            self.kill()
            raise WorkerFailed(f"agent worker did not load the agent within {STARTUP_TIMEOUT_S:g}s") from None
        except WorkerFailed as e:
            self.kill()
            raise WorkerFailed(f"agent worker failed while loading the agent: {e}") from None
        if msg.get("op") != "ready":
            self.kill()
            why = msg.get("error") if msg.get("op") == "load_error" else f"unexpected message {msg.get('op')!r}"
            raise WorkerFailed(f"agent worker could not load the agent: {why}")

    def send(self, obj: Mapping[str, Any]) -> None:
        try:
            send(self.sock, obj)
        except OSError as e:
            raise WorkerFailed(self._gone(e)) from None

    def recv(self, deadline: float | None) -> dict[str, Any]:
        """The next message, read as data; _TimedOut at ``deadline`` (perf_counter seconds),
        WorkerFailed when the worker is gone or sent something that is not a message."""
        try:
            self.sock.settimeout(None if deadline is None else max(0.001, deadline - time.perf_counter()))
            raw = recv_frame(self.sock)
        except TimeoutError:
            raise _TimedOut() from None
        except (ChannelClosed, OSError) as e:
            raise WorkerFailed(self._gone(e)) from None
        except ValueError as e:
            raise WorkerFailed(f"agent worker broke the protocol ({e})") from None
        try:
            msg = limits.loads(raw, [])
        except Exception as e:  # bad UTF-8, not JSON, too deep: the message is not one
            raise WorkerFailed(f"agent worker broke the protocol (unreadable message: "
                               f"{limits.clean_text(str(e))[:200]})") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("op"), str):
            raise WorkerFailed("agent worker broke the protocol (a message that is not an object with 'op')")
        return msg

    def _gone(self, e: BaseException) -> str:
        if self.killed:
            return "agent worker was stopped"
        try:
            code = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.kill()
            return f"agent worker closed its channel ({type(e).__name__}) and was stopped"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"agent worker was killed by signal {name} during the run"
        return f"agent worker process exited with code {code} during the run"

    def alive(self) -> bool:
        return not self.killed and self.proc.poll() is None

    def kill(self) -> None:
        """Stop the process now (SIGKILL) and close the socket."""
        self.killed = True
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process SIGKILL did not end
            pass

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within a second."""
        if self.killed:
            return
        try:
            send(self.sock, {"op": "exit"})
        except OSError:
            pass
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class WorkerPool:
    """Worker processes for one agent (``spec``, loaded with the runner's ``sys.path``):
    ``acquire`` an idle one or start one, ``release`` it after a clean run, ``discard`` it
    otherwise; ``close`` stops them all."""

    def __init__(self, spec: str, sys_path: Sequence[str] | None = None) -> None:
        self.spec = spec
        self.sys_path = list(sys.path if sys_path is None else sys_path)
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        self.started = 0

    def acquire(self) -> _Worker:
        """An idle live worker, else a new one (WorkerFailed when it cannot start)."""
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
        w = _Worker(self.spec, self.sys_path)
        with self._lock:
            self._all.append(w)
            self.started += 1
        return w

    def release(self, w: _Worker) -> None:
        with self._lock:
            if w.alive():
                self._idle.append(w)

    def discard(self, w: _Worker) -> None:
        w.kill()

    def close(self, now: bool = False) -> None:
        """Stop every worker: asked to exit (killed after a second), or killed at once with
        ``now`` (the runner was interrupted)."""
        with self._lock:
            ws, self._all, self._idle = list(self._all), [], []
        for w in ws:
            if now:
                w.kill()
            else:
                w.close()


def _result_msg(r: Any) -> dict[str, Any]:
    return {"op": "result", "result": {"call_id": r.call_id, "name": r.name, "output": limits.scrub(r.output),
                                       "is_error": r.is_error, "error": r.error}}


def _done(msg: Mapping[str, Any]) -> tuple[str, Any]:
    """``("ok", the agent's return as a dict)`` or ``("error", reason)`` from a ``done`` message."""
    err = msg.get("error")
    if err is not None:
        return "error", limits.clean_text(str(err))
    fr = msg.get("final_response")
    if fr is not None and not isinstance(fr, str):
        raise WorkerFailed("agent worker broke the protocol (final_response is not text)")
    cost: Any = msg.get("cost_usd")
    if isinstance(cost, dict):  # a non-finite float, sent as text
        text = str(cost.get("float"))
        try:
            cost = float(text)
        except ValueError:
            cost = text
    ret: dict[str, Any] = {"final_response": fr, "cost_usd": cost, "route": msg.get("route"),
                           "metadata": msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}}
    if isinstance(msg.get("usage"), dict):
        ret["usage"] = msg["usage"]
    return "ok", ret


def run_in_worker(pool: WorkerPool, bound: Any, run: Mapping[str, Any], deadline: Callable[[], float | None],
                  on_worker: Callable[[Any], None] = lambda w: None,
                  on_start: Callable[[], None] = lambda: None) -> tuple[str, Any]:
    """One run of the agent in a worker of ``pool``: send it ``run`` (the ``run`` message of
    ``trajcheck.run.worker``), serve its tool calls with ``bound`` (a ``BoundTools``: the
    registry runs, validates and records them), and return ``("ok", the agent's return as a
    dict for runner.parse_agent_return)`` or ``("error", reason)``. ``deadline()`` gives the
    run's end (perf_counter seconds; None for none), read after ``on_start`` is called (once
    the worker is ready, so its start-up is not the agent's time); ``on_worker(w)`` hands
    the worker to the caller, whose ``w.kill()`` ends the run from outside (a timeout)."""
    try:
        w = pool.acquire()
    except WorkerFailed as e:
        return "error", str(e)
    on_worker(w)
    on_start()
    clean = False
    try:
        w.send({"op": "run", **run})
        while True:
            msg = w.recv(deadline())
            op = msg["op"]
            if op == "call":
                name, args, kwargs = msg.get("name"), msg.get("args"), msg.get("kwargs")
                if not isinstance(name, str) or not isinstance(kwargs, (dict, type(None))):
                    raise WorkerFailed("agent worker broke the protocol (a call without a name)")
                if kwargs and isinstance(args, (dict, type(None))):
                    args, kwargs = {**(args or {}), **kwargs}, None
                try:
                    r = bound.call(name, args, **(kwargs or {}))
                except TypeError as e:
                    raise WorkerFailed(f"agent worker broke the protocol (bad call: {e})") from None
                w.send(_result_msg(r))
            elif op == "say":
                t = msg.get("text")
                bound.say(limits.clean_text(t) if isinstance(t, str) else str(limits.scrub(t)))
            elif op == "done":
                out = _done(msg)
                clean = True
                return out
            else:
                raise WorkerFailed(f"agent worker broke the protocol (unexpected message {op[:40]!r})")
    except _TimedOut:
        return "error", "timeout"
    except WorkerFailed as e:
        return "error", str(e)
    except AgentError as e:  # the runner cancelled the run (its timeout) while a call came in
        return "error", str(e)
    finally:
        if clean:
            pool.release(w)
        else:
            pool.discard(w)


def pool_for(agent: Any, isolation: str) -> WorkerPool | None:
    """The worker pool for running ``agent`` with ``isolation="process"`` (None for
    ``"inline"``). Raises AgentError for another value, an agent no worker can load by name
    (``agent_spec``), or a call from inside a worker (an agent module that starts a suite
    when imported would otherwise start workers without end)."""
    if isolation == "inline":
        return None
    if isolation != "process":
        raise AgentError(f"isolation must be 'process' or 'inline', got {isolation!r}")
    if in_worker():
        raise AgentError("a suite was started inside an agent worker: the agent's module runs it when "
                         "imported; put that code under `if __name__ == '__main__':`")
    return WorkerPool(agent_spec(agent))


def in_worker() -> bool:
    """True inside an agent worker process."""
    from .worker import WORKER_ENV

    return os.environ.get(WORKER_ENV) == "1"
