"""Run an agent on every case N times, record each run as a trace, and score the suite.

The agent contract
==================

An agent is a callable ``agent(input, tools)``, sync or async (a coroutine function, or any
callable returning an awaitable):

- ``input`` is the case's ``input`` exactly as the dataset row gives it (usually a string);
- ``tools`` is the agent's side of the tool registry bound to this trial's fresh sandbox
  (``trajcheck.run.worker.WorkerTools`` in a worker, ``trajcheck.run.tools.AgentTools``
  inline; the same surface). ``tools.call(name, args)`` (or ``await tools.acall(name, args)``) runs a
  tool and returns its ``ToolResult`` (``output``, ``is_error``, ``error``); calls are
  validated against the tool's JSON Schema first and the case's faults are applied (in a
  worker, the result's ``output`` is the tool's output as JSON).
  ``tools.definitions("openai" | "anthropic" | "plain")`` lists the tools for a model API,
  ``tools.user`` is the case's user context, ``tools.say(text)`` records an intermediate
  assistant message;
- it returns the final response: a ``str``, ``None`` (no response), an ``AgentRun``
  (``final_response`` plus optional ``usage``, ``cost_usd``, ``route``, ``metadata``), or a
  dict with those keys. Anything else is recorded as a failed run.

What the agent did is taken from the registry's record, not from the agent's own account:
every call, its validated arguments and its result are in the trace.

The agent's tools come from ``run_suite(..., tools=registry)``, else the agent's ``tools``
attribute, else a ``TOOLS`` attribute of the agent's module (a ``ToolRegistry`` or a
zero-argument callable returning one); with none, the agent gets an empty registry.

Isolation
=========

By default (``isolation="sandbox"``) the agent runs in worker processes under an OS sandbox
(bubblewrap: no network, read-only files but a scratch ``/tmp``, its own PID namespace,
resource limits; ``trajcheck.run.isolation``); where the sandbox cannot start, in plain
worker processes (``isolation="process"``, with the same limits), and ``SuiteRun.isolation``
says which ran. A worker (``trajcheck.run.worker``, managed by ``trajcheck.run.worker_pool``)
loads the agent by name -- given as a ``module:attr`` / ``file.py:attr`` spec, the agent's
file is imported only in the worker -- and gets, per run, JSON copies of the case's input, user context, id, trial and the
tool definitions; its ``tools`` sends each call to the runner, which validates, runs and
records it against the trial's sandbox and sends back the result as JSON. The case's
expected parts, the sandbox, the record and the grader stay in the runner's process. A
worker is reused for the next run after a run that ended by the protocol; one that exits
(``os._exit``), crashes, breaks the protocol or outlives its timeout is killed, replaced,
and its run fails with the reason. ``isolation="inline"`` runs the agent in a thread of
this process (for debugging, or agents no worker can load by name: lambdas, closures).

Runs, failures and resume
=========================

Each (case, trial) runs in its own thread of the runner with its own sandbox
(``trajcheck.run.sandbox``: the case's ``initial_state`` fixture loaded into a fresh database;
an empty database when the case has none). Policies, applied by ``run_suite``:

- **Timeout**: a run still going after ``timeout_s`` seconds is recorded as failed with the
  reason ``"timeout after <timeout_s>s"`` and the suite moves on. In a worker, the worker
  is killed. Inline, its tools are cancelled (further calls raise), an async agent's task
  is cancelled, and a sync agent stuck outside its tools is left to finish in a daemon
  thread, its result discarded. A new worker's start-up counts in the run's time.
- **Agent errors**: an agent that raises is recorded as failed with
  ``"<ExceptionType>: <message>"``; one that calls ``sys.exit`` with ``"agent tried to exit
  the process (SystemExit: <code>)"``; in a worker, one that ends the process with
  ``"agent worker process exited with code <n> during the run"`` (or ``killed by signal``)
  and one that sends what is not a message with ``"agent worker broke the protocol
  (...)"``. Only ``KeyboardInterrupt`` in the runner stops the suite (finished runs are
  already saved).
- **Setup errors** (a missing fixture, a fault naming an unknown tool): the case is not run
  and is reported in the scorecard's problems; the rest of the suite runs.
- **Traces**: each finished run is appended to ``out`` as one JSON line
  (``Trajectory.to_dict()``) with one ``os.write`` and ``fsync``. Its metadata holds
  ``case_id``, ``trial`` (0-based), ``run_id`` (``"<case_id>-<trial>"``), ``agent``,
  ``state_before``/``state_after`` (sandbox snapshots, so ``trajcheck eval`` can check the
  final state from the file alone), ``faults`` (the case's fault specs, when any),
  ``duration_ms``, and for failed runs ``error``, ``terminated: False`` and
  ``termination`` (the reason).
- **Resume**: with an existing ``out`` file, every (case_id, trial) already recorded is
  skipped and its recorded trace scored; a truncated last line (a run killed mid-write) is
  cut off and redone; an unparseable line elsewhere is reported and its run redone. A file
  holding runs of a different agent is refused (AgentError) rather than mixed.
- **Scoring**: as ``trajcheck eval`` does (``trajcheck.score.suite.score_run`` per run, then
  ``suite.score_runs``); the final state is checked from the recorded snapshots via
  ``check_final_state`` when the case has ``expected_final_state``. A failed run's failure
  reason is its agent error or timeout. Recorded runs of case ids not among the cases, and
  cases with no runs, are reported as problems; the rest is scored.

Source: seed 000 §4.1 (reset the sandbox to the initial fixture, run the agent, assert on
the resulting state) and §4.3 (several trials per task), and DESIGN.md ("suite: runs cases x
trials").
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AgentError, TrajcheckError
from ..model import Case, Trajectory, Usage
from ..read import limits
from .tools import AgentTools, BoundTools, ToolRegistry

__all__ = [
    "AgentRun",
    "RecordedRuns",
    "SuiteRun",
    "load_agent",
    "parse_agent_return",
    "read_runs",
    "resolve_tools",
    "run_suite",
]


@dataclass(frozen=True)
class AgentRun:
    """What an agent may return instead of a bare string: the ``final_response`` text (None
    for none), token ``usage``, ``cost_usd`` (US dollars), the ``route`` it took (for
    routing metrics) and free-form ``metadata`` (kept under the trace's
    ``metadata["agent_metadata"]``)."""

    final_response: str | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    route: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteRun:
    """The result of ``run_suite``: the ``scorecard`` (None when ``score=False``), every run
    as ``(trajectory, case)`` (recorded and new, in case order then trial order), the number
    of runs made now (``n_new``) and taken from the out file (``n_resumed``), and
    ``problems`` (setup errors, unreadable lines, unknown case ids, cases with no runs)."""

    scorecard: Any
    runs: tuple[tuple[Trajectory, Case], ...]
    n_new: int
    n_resumed: int
    problems: tuple[str, ...] = ()
    isolation: str = ""  # the line saying which isolation ran (isolation.Isolation.describe)
    notes: tuple[str, ...] = ()  # how it ran, for the user (not problems of the data)


# ----------------------------------------------------------------------------- loading


def load_agent(spec: str, *, add_cwd: bool = True, want_callable: bool = True) -> Any:
    """The callable named by ``spec``: ``"package.module:attr"`` (``attr`` may be dotted) or
    ``"path/to/file.py:attr"`` (loaded from the file; its folder is put on ``sys.path`` so
    it can import its siblings). The working directory is on the import path, as with
    ``python -m``. With ``add_cwd=False`` (an agent worker) the working directory is not
    added and the file's folder goes to the end of ``sys.path``, so neither can shadow the
    standard library. ``want_callable=False`` loads any object (``--tools`` naming a
    ``ToolRegistry``).

    Raises AgentError with a clear message when the spec has no ``:``, the module or file is
    not found, importing it fails, the attribute is missing, or it is not callable.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise AgentError(f"agent {spec!r}: expected module:callable (e.g. mypkg.agents:my_agent) "
                         "or path/to/file.py:callable")
    mod_part, attr = spec.rsplit(":", 1)
    if not mod_part or not attr:
        raise AgentError(f"agent {spec!r}: expected module:callable")
    if mod_part.endswith(".py") or os.sep in mod_part or "/" in mod_part:
        path = Path(mod_part)
        if not path.is_file():
            raise AgentError(f"agent {spec!r}: file {mod_part!r} not found")
        d = str(path.resolve().parent)
        if d not in sys.path:
            if add_cwd:
                sys.path.insert(0, d)
            else:
                sys.path.append(d)
        name = f"_trajcheck_agent_{abs(hash(str(path.resolve())))}"
        s = importlib.util.spec_from_file_location(name, path)
        if s is None or s.loader is None:
            raise AgentError(f"agent {spec!r}: cannot load {mod_part!r} as a Python module")
        mod = importlib.util.module_from_spec(s)
        sys.modules[name] = mod
        try:
            s.loader.exec_module(mod)
        except Exception as e:
            sys.modules.pop(name, None)
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e}") from e
    else:
        if add_cwd and os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_part)
        except ModuleNotFoundError as e:
            if e.name and (mod_part == e.name or mod_part.startswith(e.name + ".")):
                raise AgentError(f"agent {spec!r}: module {mod_part!r} not found "
                                 f"(no module named {e.name!r})") from e
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {e}") from e
        except Exception as e:
            raise AgentError(f"agent {spec!r}: importing {mod_part!r} failed: {type(e).__name__}: {e}") from e
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            avail = sorted(n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n)))
            raise AgentError(f"agent {spec!r}: module {mod_part!r} has no attribute {attr!r}"
                             + (f"; callables there: {', '.join(avail[:15])}" if avail else ""))
        obj = getattr(obj, part)
    if want_callable and not callable(obj):
        raise AgentError(f"agent {spec!r}: {attr!r} is a {type(obj).__name__}, not a callable")
    return obj  # type: ignore[no-any-return]


def resolve_tools(agent: Any, tools: Any = None) -> ToolRegistry:
    """The registry for ``agent`` (see the module doc): ``tools`` if given, else
    ``agent.tools``, else the agent module's ``TOOLS``; each may be a ``ToolRegistry`` or a
    zero-argument callable returning one. Raises AgentError for anything else."""
    cand = tools
    where = "tools"
    if cand is None:
        cand = getattr(agent, "tools", None)
        where = "agent.tools"
    if cand is None:
        mod = sys.modules.get(getattr(agent, "__module__", "") or "")
        cand = getattr(mod, "TOOLS", None) if mod is not None else None
        where = "the agent module's TOOLS"
    if cand is None:
        return ToolRegistry()
    if not isinstance(cand, ToolRegistry) and callable(cand):
        cand = cand()
    if not isinstance(cand, ToolRegistry):
        raise AgentError(f"{where} must be a trajcheck.run.ToolRegistry, got {type(cand).__name__}")
    return cand


def _agent_name(agent: Any) -> str:
    mod = getattr(agent, "__module__", None) or "?"
    if mod.startswith("_trajcheck_agent_"):
        f = getattr(sys.modules.get(mod), "__file__", None)
        mod = Path(f).name if f else mod
    return f"{mod}:{getattr(agent, '__qualname__', None) or type(agent).__name__}"


# ----------------------------------------------------------------------------- the out file


@dataclass(frozen=True)
class RecordedRuns:
    """What ``read_runs`` found in an out file: ``runs`` keyed by ``(case_id, trial)`` (the
    first record of a pair wins), ``problems`` (line-numbered), the byte offset ``good_end``
    up to which the file is whole lines, and whether the last line was truncated."""

    runs: dict[tuple[str, int], Trajectory]
    problems: tuple[str, ...] = ()
    good_end: int = 0
    truncated: bool = False


def read_runs(path: str | os.PathLike[str], key: bytes | None = None) -> RecordedRuns:
    """Read a run file written by ``run_suite`` (one ``Trajectory.to_dict()`` per line).

    With ``key`` (the run file's, ``record_mac.load_key``) every line must carry a
    ``trajcheck_mac`` that checks: a line that does not (appended by an agent, edited, or
    from another tool) is reported with its line number and left out, so its run is redone.

    A last line without its newline (a run killed mid-write) is reported as truncated and
    left out; a line that is not JSON, not a trajectory, or lacks ``metadata.case_id`` /
    an integer ``metadata.trial`` is reported (with its line number) and left out; a second
    record of the same (case_id, trial) is reported and left out. A missing file reads as
    empty. Raises TrajcheckError when the file exists but cannot be read.
    """
    p = Path(path)
    if not p.exists():
        return RecordedRuns({})
    try:
        data = p.read_bytes()
    except OSError as e:
        raise TrajcheckError(f"{p}: cannot read the run file ({e})") from e
    runs: dict[tuple[str, int], Trajectory] = {}
    problems: list[str] = []
    end = data.rfind(b"\n") + 1
    truncated = end < len(data) and bool(data[end:].strip())
    if truncated:
        last = data.count(b"\n", 0, end) + 1
        problems.append(f"{p}: line {last} is truncated (run interrupted mid-write); dropped and redone")
    for ln, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        if key is not None:
            from .record_mac import check_line

            why = check_line(key, raw)
            if why is not None:
                problems.append(f"{p}: line {ln}: {why}; refused")
                continue
        notes: list[str] = []
        try:
            obj = limits.loads(raw, notes)
            if not isinstance(obj, dict) or not isinstance(obj.get("steps"), list):
                raise ValueError("not a trajcheck trajectory (no 'steps' list)")
            t = Trajectory.from_dict(obj)
        except Exception as e:  # whatever the line holds, it is one unreadable record
            problems.append(f"{p}: line {ln}: unreadable run record ({_describe(e)}); ignored")
            continue
        t, figs = limits.clean_figures(t)
        problems.extend(f"{p}: line {ln}: {n}" for n in [*notes, *figs])
        cid, trial = t.metadata.get("case_id"), t.metadata.get("trial")
        if cid is None or isinstance(trial, bool) or not isinstance(trial, int):
            problems.append(f"{p}: line {ln}: run record without metadata.case_id / integer "
                            "metadata.trial; ignored")
            continue
        pair = (str(cid), trial)
        if pair in runs:
            problems.append(f"{p}: line {ln}: second record of case {cid!r} trial {trial}; ignored")
            continue
        runs[pair] = t
    return RecordedRuns(runs, tuple(problems), end, truncated)


def _lock(fd: int, path: Path) -> None:
    """An exclusive lock on the out file for this process's run (POSIX ``flock``), so two
    ``run``s on one ``--out`` cannot interleave their lines: the second is refused."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, one writer per file is on the user
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        raise AgentError(f"{path}: another trajcheck run is writing this file; refused (wait for it to "
                         "finish, or use another --out)") from e


def _json_line(traj: Trajectory) -> bytes:
    """One standard-JSON object in UTF-8 for a run (no newline), whatever its values:
    anything JSON cannot hold (NaN, lone surrogates, cycles, objects) is normalised by
    ``limits.scrub``."""
    d = traj.to_dict()
    try:
        return json.dumps(d, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        return json.dumps(limits.scrub(d), ensure_ascii=False, allow_nan=False).encode("utf-8")


class _Writer:
    """Appends one JSON line per run with a single ``os.write`` followed by ``fsync``, holding
    an exclusive lock on the file (a second writer is refused); each line signed with the run
    file's key (``record_mac``: made with a new file, read from ``<out>.key`` for an existing
    one). Raises AgentError for a file holding records but no key file."""

    def __init__(self, path: Path, good_end: int | None = None) -> None:
        from . import record_mac

        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        _lock(self.fd, path)
        self.path = path
        try:
            key = record_mac.load_key(path)
            if key is None:
                if os.fstat(self.fd).st_size > 0 and Path(path).read_bytes().strip():
                    raise AgentError(f"{path}: holds records but no key file ({record_mac.key_path(path)}): it was "
                                     "written by an older trajcheck or another tool, or its key was deleted, so "
                                     "its records cannot be told from forged ones; use another --out")
                key = record_mac.new_key(path)
        except BaseException:
            os.close(self.fd)
            raise
        self.key = key

    def truncate_to(self, good_end: int) -> None:
        """Cut a truncated last line (a run killed mid-write) before appending."""
        if os.fstat(self.fd).st_size > good_end:
            os.ftruncate(self.fd, good_end)

    def write(self, traj: Trajectory) -> None:
        from .record_mac import sign

        b = sign(self.key, _json_line(traj))
        n = 0
        while n < len(b):
            n += os.write(self.fd, b[n:])
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


# ----------------------------------------------------------------------------- running


@dataclass
class _Job:
    case: Case
    trial: int
    bound: BoundTools | None = None
    before: Any = None
    started: float = 0.0
    t0: float = 0.0
    loop: asyncio.AbstractEventLoop | None = None
    task: asyncio.Task[Any] | None = None
    abandoned: bool = False
    worker: Any = None  # a worker's run: the worker (killed on timeout)
    starting: bool = False  # a worker's run: its sandbox being set up (the clock not started yet)
    isolation: str = ""  # the mode the run's agent ran in (recorded in the trace's metadata)


async def _as_task(job: _Job, aw: Any) -> Any:
    job.loop = asyncio.get_running_loop()
    job.task = asyncio.current_task()
    return await aw


def _open_sandbox(case: Case, sandbox_url: str | None, base_dir: Any, fixture_roots: Sequence[Any] = ()) -> Any:
    from .sandbox import open_sandbox

    return open_sandbox(case.initial_state, url=sandbox_url, base_dir=base_dir, fixture_roots=fixture_roots)


def _execute(job: _Job, agent: Callable[..., Any], registry: ToolRegistry, sandbox_url: str | None,
             base_dir: Any, q: queue.Queue[tuple[_Job, str, Any]], fixture_roots: Sequence[Any] = (),
             pool: Any = None, timeout_s: float | None = None) -> None:
    """One run, in its own thread (which owns the sandbox's connection).

    With a ``pool`` (process isolation) the agent runs in a worker process and this thread
    serves its tool calls (``worker_pool.run_in_worker``). In-process, the agent gets a copy
    of the case's input and an ``AgentTools`` (never the case or the record); an agent that
    raises anything -- ``SystemExit`` from ``sys.exit`` included -- fails its own run, and
    only ``KeyboardInterrupt`` stops the suite."""
    try:
        try:
            sb = _open_sandbox(job.case, sandbox_url, base_dir, fixture_roots)
            sb.open()
        except TrajcheckError as e:
            q.put((job, "setup", f"{type(e).__name__}: {e}"))
            return
        try:
            job.before = sb.snapshot()
            try:
                job.bound = registry.bind(sb, case=job.case, trial=job.trial)
            except TrajcheckError as e:
                q.put((job, "setup", f"{type(e).__name__}: {e}"))
                return
            if pool is not None:
                kind, payload = _run_isolated(job, pool, registry, timeout_s)
                dur = (time.perf_counter() - job.t0) * 1000.0
                q.put((job, kind, (payload, sb.snapshot(), dur)))
                return
            job.t0 = time.perf_counter()
            try:
                ret = agent(copy.deepcopy(job.case.input), AgentTools(job.bound))
                if inspect.isawaitable(ret):
                    ret = asyncio.run(_as_task(job, ret))
                kind, payload = "ok", ret
            except KeyboardInterrupt:
                raise
            except SystemExit as e:  # sys.exit() inside the agent ends its run, not the suite
                kind, payload = "error", f"agent tried to exit the process (SystemExit: {e.code!r})"
            except BaseException as e:  # Exception, or CancelledError after a timeout
                kind, payload = "error", _describe(e)
            dur = (time.perf_counter() - job.t0) * 1000.0
            after = sb.snapshot()
            q.put((job, kind, (payload, after, dur)))
        finally:
            sb.close()
    except KeyboardInterrupt as e:
        q.put((job, "interrupt", e))
    except BaseException as e:  # a snapshot failed, or worse: record it, never hang the suite
        q.put((job, "setup", _describe(e)))


def _run_isolated(job: _Job, pool: Any, registry: ToolRegistry, timeout_s: float | None) -> tuple[str, Any]:
    """The agent's run in a worker of ``pool``: ``("ok", its return)`` or ``("error", why)``.
    The worker gets JSON copies of the input, user context, case id, trial and tool
    definitions only; the run's clock starts once the worker is ready."""
    from .worker_pool import run_in_worker

    def started() -> None:
        job.t0 = time.perf_counter()
        job.starting = False

    def set_worker(w: Any) -> None:
        job.worker = w
        if job.abandoned:  # timed out while waiting for the worker
            w.kill()

    run = {"input": job.case.input, "user": job.case.user, "case_id": job.case.id, "trial": job.trial,
           "definitions": {f: registry.definitions(f) for f in ("openai", "anthropic", "plain")}}
    job.starting = True
    kind, payload = run_in_worker(pool, job.bound, run,
                                  deadline=lambda: None if timeout_s is None else job.t0 + timeout_s,
                                  on_worker=set_worker, on_start=started)
    job.starting = False
    if kind == "error" and payload == "timeout":
        payload = f"timeout after {timeout_s:g}s"
    return kind, payload


def _describe(e: BaseException) -> str:
    """``"<Type>: <message>"`` of an exception from untrusted code, whose ``__str__`` may
    itself raise or hold text JSON cannot write."""
    try:
        msg = str(e)
    except BaseException:
        msg = "<unprintable>"
    return limits.clean_text(f"{type(e).__name__}: {msg}".rstrip(": "))


def parse_agent_return(ret: Any) -> tuple[str | None, Usage | None, float | None, Any, dict[str, Any],
                                          str | None]:
    """``(final_response, usage, cost_usd, route, agent metadata, error)`` from an agent's
    return value: a str or None (the final response), an ``AgentRun``, or a dict with only
    the keys ``final_response``, ``usage`` (dict or ``Usage``), ``cost_usd``, ``route``,
    ``metadata``. Anything else gives ``error`` (a one-line message; the other fields empty)
    instead of raising, so the caller records a failed run. Used by ``run_suite`` and by
    ``trajcheck.run.simulated_user`` for each agent turn."""
    try:
        return _parse_return(ret)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # an odd object (a raising __eq__, __iter__, ...) fails the run
        return None, None, None, None, {}, f"agent returned an unreadable {type(ret).__name__} ({_describe(e)})"


def _text(v: Any) -> str:
    """A plain ``str`` (not a subclass with its own methods), lone surrogates repaired."""
    return limits.clean_text(str.__str__(v) if isinstance(v, str) else str(limits.scrub(v)))


def _parse_return(ret: Any) -> tuple[str | None, Usage | None, float | None, Any, dict[str, Any], str | None]:
    if ret is None or isinstance(ret, str):
        return (None if ret is None else _text(ret)), None, None, None, {}, None
    if isinstance(ret, AgentRun):
        fr = ret.final_response
        return (None if fr is None else _text(fr)), ret.usage if isinstance(ret.usage, Usage) else None, \
            ret.cost_usd, ret.route, dict(ret.metadata) if isinstance(ret.metadata, Mapping) else {}, None
    if isinstance(ret, Mapping) and set(ret) <= {"final_response", "usage", "cost_usd", "route", "metadata"}:
        u = ret.get("usage")
        usage = Usage.from_dict(u) if isinstance(u, Mapping) else u if isinstance(u, Usage) else None
        fr = ret.get("final_response")
        md = ret.get("metadata")
        return (None if fr is None else _text(fr)), usage, ret.get("cost_usd"), ret.get("route"), \
            dict(md) if isinstance(md, Mapping) else {}, None
    return None, None, None, None, {}, (f"agent returned {type(ret).__name__}; expected str, None, "
                                        "AgentRun or a dict with final_response")


_final = parse_agent_return  # the former private name


def _trace(job: _Job, agent_name: str, *, final: str | None = None, usage: Usage | None = None,
           cost: float | None = None, route: Any = None, agent_meta: Mapping[str, Any] | None = None,
           after: Any = None, duration_ms: float | None = None, error: str | None = None) -> Trajectory:
    case = job.case
    meta: dict[str, Any] = {"case_id": case.id, "trial": job.trial, "run_id": f"{case.id}-{job.trial}",
                            "agent": agent_name, "started_at": round(job.started, 3)}
    if job.isolation:
        meta["isolation"] = job.isolation
    if case.faults:
        meta["faults"] = [dict(f) for f in case.faults]
    if route is not None:
        meta["route"] = limits.scrub(route)
    if agent_meta:
        meta["agent_metadata"] = limits.scrub(dict(agent_meta))
    if job.before is not None:
        meta["state_before"] = job.before
    if after is not None:
        meta["state_after"] = after
    if duration_ms is not None:
        meta["duration_ms"] = round(duration_ms, 3)
    if error is not None:
        meta["error"] = error
        meta["terminated"] = False
        meta["termination"] = error
    if job.bound is not None:
        t = job.bound.trajectory(final, usage=usage, cost_usd=cost,
                                 latency_ms=round(duration_ms, 3) if duration_ms is not None else None,
                                 metadata=meta)
    else:
        t = Trajectory(final_response=final, source_format="trajcheck", metadata=meta)
    # what the agent reported (cost, usage) is checked at entry: a figure JSON cannot hold or
    # that is not a number is recorded as unknown, with a problem naming the run
    t, notes = limits.clean_figures(t)
    if notes:
        t = dataclasses.replace(t, metadata={**t.metadata, "problems": [*t.metadata.get("problems", ()),
                                                                         *notes]})
    return t


def _progress(enabled: bool, total: int) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                    console=Console(stderr=True), disable=not enabled, transient=False)


def run_suite(agent: Callable[..., Any] | str, cases: Iterable[Case], *, trials: int = 1,
              concurrency: int = 1, timeout_s: float | None = 60.0,
              out: str | os.PathLike[str] | None = None, tools: Any = None,
              sandbox_url: str | None = None, base_dir: str | os.PathLike[str] | None = None,
              progress: bool = True, score: bool = True, ks: Sequence[int] | None = None,
              seed: int = 0, context: Any = None, agent_name: str | None = None,
              fixture_roots: Sequence[str | os.PathLike[str]] = (), isolation: str = "sandbox",
              network: bool = False, hide: Sequence[str | os.PathLike[str]] = (),
              limits: Any = None, worker_log: str | os.PathLike[str] | None = None) -> SuiteRun:
    """Run ``agent`` on every case ``trials`` times and score the runs.

    Args:
        agent: the agent callable (contract in the module doc), or its ``module:attr`` /
            ``file.py:attr`` spec: then, in a worker mode, it is imported only in the workers
            (with ``tools`` given; without, the runner imports it to find its ``TOOLS`` and
            says so in ``notes``).
        cases: ``Case`` objects with unique ids.
        trials: runs per case, >= 1 (trial numbers 0..trials-1).
        concurrency: runs at once, >= 1 (each in its own thread and sandbox).
        timeout_s: seconds per run; None for no limit.
        out: the JSONL trace file; appended to, and resumed from when it exists. None keeps
            traces in memory only.
        tools: the ``ToolRegistry`` (default: see ``resolve_tools``).
        sandbox_url: a SQLAlchemy URL for ``SQLAlchemySandbox``; None = in-memory SQLite.
        base_dir: folder that relative ``initial_state`` paths are resolved against.
        progress: show a rich progress bar on stderr.
        score: score the runs (``suite.score_runs``); False returns ``scorecard=None``.
        ks, seed, context: passed to the scoring (pass^k's k, bootstrap seed, MatchContext).
        agent_name: the name recorded in traces (default ``module:qualname``).
        fixture_roots: folders besides ``base_dir`` that fixtures may come from
            (``trajcheck.run.sandbox.resolve_fixture``).
        isolation: ``"sandbox"`` (default): the agent runs in worker processes under
            bubblewrap (``trajcheck.run.isolation``); where that cannot start, as
            ``"process"``: plain worker processes. In both, exiting, crashing, hanging or
            breaking the protocol fails only its run, and the agent must be loadable by name.
            ``"inline"``: in this process, in a thread (for debugging; docs/security.md says
            what each mode guards).
        network: sandbox only: share the host's network (default: none).
        hide: paths the sandbox shows empty (besides the run file's key).
        limits: an ``isolation.Limits`` for the workers (default ``Limits()``).
        worker_log: the file workers' stdout and stderr are appended to (capped); default
            ``out`` + ``.log`` with an ``out``, else dropped.

    Returns a ``SuiteRun``. Policies (timeout, agent errors, setup errors, resume, scoring)
    are in the module doc. Raises AgentError for bad ``trials``/``concurrency``/
    ``timeout_s``/``isolation``, duplicate case ids, an out file holding another agent's
    runs, or (process isolation) an agent no worker can load by name;
    ``suite.KTooLargeError`` (a MetricInputError), before any run, when ``max(ks) > trials``;
    MetricInputError (from scoring) when no run could be scored; KeyboardInterrupt when
    interrupted (every finished run is already in ``out``).
    """
    cases = list(cases)
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise AgentError(f"trials must be an integer >= 1, got {trials!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise AgentError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float))
                                  or timeout_s <= 0):
        raise AgentError(f"timeout_s must be a positive number of seconds or None, got {timeout_s!r}")
    if score and ks:
        # checked before any run is made (DESIGN: pass^k needs n >= k for every task), so a
        # too-large k does not cost the whole suite's runs and then fail at scoring
        from ..score.suite import KTooLargeError

        if max(ks) > trials and cases:
            raise KTooLargeError(max(ks), cases[0].id, trials)
    by_id: dict[str, Case] = {}
    for c in cases:
        if c.id in by_id:
            raise AgentError(f"case id {c.id!r} appears twice; case ids must be unique")
        by_id[c.id] = c
    from .isolation import choose

    notes: list[str] = []
    from .record_mac import key_path

    hidden = [os.fspath(h) for h in hide] + ([os.fspath(key_path(out))] if out is not None else [])
    iso = choose(isolation, network=network, hide=hidden, limits=limits)
    if isinstance(agent, str):
        spec = agent
        name = agent_name or _spec_name(spec)
        if iso.mode == "inline" or tools is None:
            agent = load_agent(spec)
            if iso.mode != "inline" and _tools_from_module(agent):
                notes.append(f"the agent's module ({spec.rsplit(':', 1)[0]}) was imported into trajcheck's "
                             "process to find its TOOLS, so its top-level code ran beside the grader; name "
                             "the tools with --tools (a module without the agent) to keep it out")
    else:
        name = agent_name or _agent_name(agent)
    registry = resolve_tools(agent, tools)
    problems: list[str] = []
    if worker_log is None and out is not None:
        worker_log = f"{os.fspath(out)}.log"
    pool = _pool(agent, iso, worker_log)

    # the grader's own copy of the cases, made before any agent runs
    grading = {c.id: copy.deepcopy(c) for c in cases}
    writer = _Writer(Path(out)) if out is not None else None  # locked before the file is read
    try:
        rec = read_runs(writer.path, key=writer.key) if writer is not None else RecordedRuns({})
        others = sorted({str(t.metadata.get("agent")) for t in rec.runs.values()
                         if t.metadata.get("agent") not in (None, name)})
        if others:
            raise AgentError(f"{out}: holds runs of agent {others[0]!r}, not {name!r}; use another --out "
                             "file (or delete this one) instead of mixing agents in one suite")
    except BaseException:
        if writer is not None:
            writer.close()
        if pool is not None:
            pool.close()
        raise
    problems.extend(rec.problems)
    done: dict[tuple[str, int], Trajectory] = dict(rec.runs)
    new: dict[tuple[str, int], Trajectory] = {}
    setup_failed: dict[str, str] = {}
    todo = [_Job(by_id[cid], t, isolation=iso.mode) for t in range(trials) for cid in by_id
            if (cid, t) not in done]

    if writer is not None:
        writer.truncate_to(rec.good_end)
    q: queue.Queue[tuple[_Job, str, Any]] = queue.Queue()
    running: list[_Job] = []
    pending = list(todo)
    try:
        with _progress(progress, len(todo)) as bar:
            task = bar.add_task(f"{name}", total=len(todo), status="")
            n_fail = 0
            while pending or running:
                while pending and len(running) < concurrency:
                    job = pending.pop(0)
                    if job.case.id in setup_failed:  # same setup error for every trial
                        bar.advance(task)
                        continue
                    job.started = time.time()
                    job.t0 = time.perf_counter()
                    th = threading.Thread(target=_execute, args=(job, agent, registry, sandbox_url, base_dir,
                                                                 q, fixture_roots, pool, timeout_s), daemon=True,
                                          name=f"trajcheck-run-{job.case.id}-{job.trial}")
                    running.append(job)
                    th.start()
                wait: float | None = None
                if timeout_s is not None and running:
                    now = time.perf_counter()
                    clocks = [j.t0 + timeout_s - now for j in running if not j.starting]
                    # a run waiting for its worker has no clock yet: look again shortly
                    wait = max(0.0, min([*clocks, *([0.05] if len(clocks) < len(running) else [])]))
                try:
                    job, kind, payload = q.get(timeout=wait)
                except queue.Empty:
                    now = time.perf_counter()
                    for j in list(running):
                        if timeout_s is not None and not j.starting and now - j.t0 >= timeout_s:
                            running.remove(j)
                            j.abandoned = True
                            why = f"timeout after {timeout_s:g}s"
                            if j.bound is not None:
                                j.bound.cancel(why)
                            if j.worker is not None:  # process isolation: the worker goes
                                j.worker.kill()
                            if j.loop is not None and j.task is not None:
                                j.loop.call_soon_threadsafe(j.task.cancel)
                            t = _trace(j, name, duration_ms=timeout_s * 1000.0, error=why)
                            new[(j.case.id, j.trial)] = t
                            if writer is not None:
                                writer.write(t)
                            n_fail += 1
                            bar.update(task, advance=1, status=f"{n_fail} failed")
                    continue
                if job.abandoned:
                    continue
                running.remove(job)
                if kind == "interrupt":
                    raise payload
                if kind == "setup":
                    setup_failed.setdefault(job.case.id, str(payload))
                    bar.advance(task)
                    continue
                if kind == "error":
                    err, after, dur = payload
                    t = _trace(job, name, after=after, duration_ms=dur, error=err)
                else:
                    ret, after, dur = payload
                    fr, usage, cost, route, ameta, err = parse_agent_return(ret)
                    t = _trace(job, name, final=fr, usage=usage, cost=cost, route=route, agent_meta=ameta,
                               after=after, duration_ms=dur, error=err)
                if err is not None:
                    n_fail += 1
                new[(job.case.id, job.trial)] = t
                if writer is not None:
                    writer.write(t)
                bar.update(task, advance=1, status=f"{n_fail} failed" if n_fail else "")
    finally:
        if writer is not None:
            writer.close()
        if pool is not None:
            pool.close(now=sys.exc_info()[0] is not None)  # interrupted: no grace for busy workers

    for cid, why in setup_failed.items():
        problems.append(f"case {cid!r}: not run ({why})")
    all_runs = {**done, **new}
    pairs: list[tuple[Trajectory, Case]] = []
    for (cid, tr), traj in all_runs.items():
        if cid not in by_id:
            problems.append(f"run {traj.metadata.get('run_id') or f'{cid}-{tr}'}: case id {cid!r} is not "
                            "among the cases; not scored")
    for (cid, tr), traj in sorted(new.items()):
        problems.extend(f"run {cid}-{tr}: {p}" for p in traj.metadata.get("problems", ()))
    for cid in by_id:
        mine = sorted(((tr, traj) for (k, tr), traj in all_runs.items() if k == cid and tr < trials),
                      key=lambda x: x[0])
        extra = sum(1 for (k, tr) in all_runs if k == cid and tr >= trials)
        if extra:
            problems.append(f"case {cid!r}: {extra} recorded run(s) with trial >= {trials} not scored")
        if not mine and cid not in setup_failed:
            problems.append(f"case {cid!r}: no runs; not scored")
        pairs.extend((traj, grading[cid]) for _t, traj in mine)
    scorecard = None
    if score:
        scorecard = score_recorded(pairs, ks=ks, seed=seed, context=context, problems=problems,
                                   meta={"agent": name, "trials": trials, "out": str(out) if out else None})
    return SuiteRun(scorecard, tuple(pairs), len(new), sum(1 for k in done if k[0] in by_id and k[1] < trials),
                    tuple(problems), iso.describe(), tuple(notes))


def _pool(agent: Any, iso: Any, log: Any) -> Any:
    from .worker_pool import pool_for

    return pool_for(agent, iso, log)


def _spec_name(spec: str) -> str:
    """The name recorded for an agent given by spec: ``file.py:attr`` for a file (its name,
    not its folder), the spec itself for a module."""
    mod, _, attr = spec.rpartition(":")
    if mod.endswith(".py") or "/" in mod or os.sep in mod:
        return f"{Path(mod).name}:{attr}"
    return spec


def _tools_from_module(agent: Any) -> bool:
    """True when ``resolve_tools`` would take the tools from the agent's module or object."""
    if getattr(agent, "tools", None) is not None:
        return True
    mod = sys.modules.get(getattr(agent, "__module__", "") or "")
    return mod is not None and getattr(mod, "TOOLS", None) is not None


def score_recorded(runs: Sequence[tuple[Trajectory, Case]], *, ks: Sequence[int] | None = None,
                   seed: int = 0, context: Any = None, problems: Iterable[str] = (),
                   meta: Mapping[str, Any] | None = None) -> Any:
    """Score runs recorded by ``run_suite`` into a ``suite.Scorecard``.

    Each run is scored by ``suite.score_run`` (final state from the recorded
    ``state_before``/``state_after`` snapshots when the case has ``expected_final_state``);
    a run whose metadata carries an ``error`` (agent exception, timeout, bad return value)
    is a failure whose ``failure_reason`` is ``"agent failed: <error>"``. Raises
    MetricInputError when ``runs`` is empty.
    """
    from ..score.suite import score_run, score_runs

    scored = []
    for traj, case in runs:
        r = score_run(traj, case, context=context)
        err = traj.metadata.get("error")
        if err:
            r = dataclasses.replace(r, success=False, failure_reason=f"agent failed: {err}")
        scored.append(r)
    return score_runs(runs, scored=scored, ks=ks, seed=seed, context=context, problems=problems,
                      meta=meta)
