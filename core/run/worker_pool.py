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

import dataclasses
import itertools
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
from .isolation import Isolation, choose, pids_cgroup, remove_cgroup, worker_env
from .worker import ChannelClosed, recv_frame, send

__all__ = ["WorkerFailed", "WorkerPool", "agent_spec", "pool_for", "run_in_worker"]

STARTUP_TIMEOUT_S = 120.0  # a worker's start and the agent's import, at most (and within the run's timeout)
LOG_CAP_BYTES = 1 << 20  # a worker's output kept in the run's log, at most; the rest is read and dropped


class _Log:
    """Where workers' stdout and stderr go: appended to ``path`` (None: read and dropped),
    at most ``cap`` bytes per worker, each chunk prefixed by the worker's pid; never to
    trajcheck's own stdout. One reader thread per worker drains its pipe, so a chatty agent
    never blocks on a full pipe."""

    def __init__(self, path: str | os.PathLike[str] | None, cap: int = LOG_CAP_BYTES) -> None:
        self.path = None if path is None else os.fspath(path)
        self.cap = cap
        self._lock = threading.Lock()

    def follow(self, pipe: Any, pid: int) -> None:
        threading.Thread(target=self._drain, args=(pipe, pid), daemon=True,
                         name=f"trajcheck-worker-log-{pid}").start()

    def see(self) -> str:
        """A hint for error messages: where the worker's output is."""
        return f" (its output is in {self.path})" if self.path else ""

    def _drain(self, pipe: Any, pid: int) -> None:
        kept = 0
        fd = None
        try:
            if self.path is not None:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            while True:
                chunk = pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536)
                if not chunk:
                    break
                if fd is None or kept >= self.cap:
                    continue
                part = chunk[: self.cap - kept]
                kept += len(part)
                note = b"" if kept < self.cap else f"\n[worker {pid}: output past {self.cap} bytes dropped]\n".encode()
                with self._lock:
                    os.write(fd, f"[worker {pid}] ".encode() + part + note)
        except (OSError, ValueError):
            pass
        finally:
            if fd is not None:
                os.close(fd)
            try:
                pipe.close()
            except OSError:
                pass


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


_SERIAL = itertools.count()


def _kill_cgroup(path: str) -> None:
    """SIGKILL every process still in a worker's cgroup (one that left the worker's process
    group with setsid)."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            pids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class _Spawner:
    """Starts every worker of a pool from one thread that lives as long as the pool: the
    kernel's parent-death signal (the worker's ``PR_SET_PDEATHSIG``, bwrap's
    ``--die-with-parent``) fires when the *thread* that started a process ends, so workers
    cannot be started from the runner's per-run threads."""

    def __init__(self) -> None:
        import queue

        self._q: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name="trajcheck-worker-spawner", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            args, kwargs, box, done = item
            try:
                box.append(("ok", subprocess.Popen(args, **kwargs)))
            except BaseException as e:  # handed to the caller
                box.append(("error", e))
            done.set()

    def popen(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(args, **kwargs)`` run by the spawner thread."""
        box: list[tuple[str, Any]] = []
        done = threading.Event()
        self._q.put((list(args), kwargs, box, done))
        done.wait()
        kind, val = box[0]
        if kind == "error":
            raise val
        return val  # type: ignore[no-any-return]

    def stop(self) -> None:
        self._q.put(None)


class _Worker:
    """One worker process (in a process group of its own, under bwrap in sandbox mode), the
    runner's end of its socket, and the write end of its watch pipe."""

    def __init__(self, spec: str, sys_path: Sequence[str], iso: Isolation, log: _Log, spawner: _Spawner,
                 deadline: float | None = None) -> None:
        mine, theirs = socket.socketpair()
        watch_r, watch_w = os.pipe()
        os.set_inheritable(watch_w, False)
        self.cgroup = pids_cgroup(iso.limits.processes, f"trajcheck-worker-{os.getpid()}-{next(_SERIAL)}")
        cmd = iso.command(["-m", "trajcheck.run.worker", str(watch_r), str(theirs.fileno())], self.cgroup)
        try:
            self.proc = spawner.popen(cmd, pass_fds=(theirs.fileno(), watch_r), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=worker_env())
        except OSError as e:
            mine.close()
            os.close(watch_w)
            remove_cgroup(self.cgroup)
            raise WorkerFailed(f"agent worker could not start: {e}") from e
        finally:
            theirs.close()
            os.close(watch_r)
        self.sock = mine
        self.watch = watch_w
        self.killed = False
        assert self.proc.stdout is not None
        log.follow(self.proc.stdout, self.proc.pid)
        limit = time.perf_counter() + STARTUP_TIMEOUT_S
        if deadline is not None:
            limit = min(limit, deadline)
        try:
            self.send({"op": "hello", "agent": spec, "sys_path": list(sys_path), "limits": iso.limits.to_wire()})
            msg = self.recv(limit)
        except _TimedOut:
            self.kill()
            if deadline is not None and deadline <= time.perf_counter() + 0.001:
                raise WorkerFailed("timeout") from None
            raise WorkerFailed(f"agent worker did not load the agent within {STARTUP_TIMEOUT_S:g}s") from None
        except WorkerFailed as e:
            self.kill()
            raise WorkerFailed(f"agent worker failed while loading the agent: {e}{log.see()}") from None
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
        """Stop the process and everything in its process group now (SIGKILL), close the
        socket and the watch pipe."""
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            try:
                self.proc.kill()
            except OSError:
                pass
        watch, self.watch = self.watch, -1
        for fd in (self.sock.fileno(), watch):
            if fd < 0:
                continue
            try:
                if fd == watch:
                    os.close(fd)
                else:
                    self.sock.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process SIGKILL did not end
            pass
        cg, self.cgroup = self.cgroup, None
        if cg is not None:
            _kill_cgroup(cg)
            remove_cgroup(cg)

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
    """Worker processes for one agent (``spec``, loaded with the runner's ``sys.path``) under
    ``isolation`` (``isolation.Isolation``; default: process), their output to ``log`` (a
    file path; None drops it): ``acquire`` an idle one or start one, ``release`` it after a
    clean run, ``discard`` it otherwise; ``close`` stops them all."""

    def __init__(self, spec: str, sys_path: Sequence[str] | None = None, isolation: Isolation | None = None,
                 log: str | os.PathLike[str] | None = None) -> None:
        self.spec = spec
        cwd = os.getcwd()
        # '' (the working folder, as `python -m` puts it) as an absolute path: a worker never
        # has the working folder first on its path
        self.sys_path = [p or cwd for p in (sys.path if sys_path is None else sys_path)]
        if cwd not in self.sys_path:  # a module:attr agent is found in the working folder, last
            self.sys_path.append(cwd)
        iso = isolation if isolation is not None else choose("process")
        # the sandbox's fresh /tmp would hide an agent file or import folder kept there
        mod = spec.rpartition(":")[0]
        agent_dir = os.path.dirname(os.path.abspath(mod)) if mod.endswith(".py") else ""
        keep = tuple(p for p in (*self.sys_path, agent_dir) if p and os.path.isdir(p))
        self.isolation = dataclasses.replace(iso, keep=iso.keep + keep)
        self.log = _Log(log)
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        self.started = 0
        self._spawner = _Spawner()

    def acquire(self, deadline: float | None = None) -> _Worker:
        """An idle live worker, else a new one started by ``deadline`` (perf_counter seconds;
        WorkerFailed("timeout") past it, WorkerFailed with the reason when it cannot start)."""
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
        w = _Worker(self.spec, self.sys_path, self.isolation, self.log, self._spawner, deadline)
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
        self._spawner.stop()


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
    dict for agent_return.parse_agent_return)`` or ``("error", reason)``. ``deadline()`` gives the
    run's end (perf_counter seconds; None for none), read after ``on_start`` is called and
    before a worker is started, so a new worker's start-up counts in the run's time;
    ``on_worker(w)`` hands the worker to the caller, whose ``w.kill()`` ends the run from
    outside (a timeout)."""
    on_start()
    try:
        w = pool.acquire(deadline())
    except WorkerFailed as e:
        return "error", str(e)
    on_worker(w)
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


def pool_for(agent: Any, isolation: str | Isolation, log: str | os.PathLike[str] | None = None
             ) -> WorkerPool | None:
    """The worker pool for running ``agent`` (a callable, or a ``module:attr`` /
    ``file.py:attr`` spec that is then never imported here) with ``isolation`` (a mode name
    or an ``isolation.Isolation``; None for ``"inline"``), workers' output to ``log``.
    Raises AgentError for an unknown mode, an agent no worker can load by name
    (``agent_spec``), or a call from inside a worker (an agent module that starts a suite
    when imported would otherwise start workers without end)."""
    iso = isolation if isinstance(isolation, Isolation) else choose(isolation)
    if iso.mode == "inline":
        return None
    if in_worker():
        raise AgentError("a suite was started inside an agent worker: the agent's module runs it when "
                         "imported; put that code under `if __name__ == '__main__':`")
    spec = agent if isinstance(agent, str) else agent_spec(agent)
    return WorkerPool(spec, isolation=iso, log=log)


def in_worker() -> bool:
    """True inside an agent worker process."""
    from .worker import WORKER_ENV

    return os.environ.get(WORKER_ENV) == "1"
