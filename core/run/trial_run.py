"""One (case, trial) run: ``TrialJob`` (its state while it runs), ``run_trial`` (the run in
its own thread: a fresh sandbox, the agent inline or in a worker, the result on the runner's
queue) and ``trial_trace`` (the trajectory recorded for it, with its metadata)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import queue
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TrajcheckError
from ..model import Case, Trajectory, Usage
from ..read import limits
from .agent_return import describe_error
from .tools import AgentTools, BoundTools, ToolRegistry

__all__ = ["TrialJob", "run_trial", "trial_trace"]


@dataclass
class TrialJob:
    """A (case, trial) run's state, shared by its thread and the runner's loop."""

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


async def _as_task(job: TrialJob, aw: Any) -> Any:
    job.loop = asyncio.get_running_loop()
    job.task = asyncio.current_task()
    return await aw


def _open_sandbox(case: Case, sandbox_url: str | None, base_dir: Any, fixture_roots: Sequence[Any] = ()) -> Any:
    from .sandbox import open_sandbox

    return open_sandbox(case.initial_state, url=sandbox_url, base_dir=base_dir, fixture_roots=fixture_roots)


def run_trial(job: TrialJob, agent: Callable[..., Any], registry: ToolRegistry, sandbox_url: str | None,
              base_dir: Any, q: queue.Queue[tuple[TrialJob, str, Any]], fixture_roots: Sequence[Any] = (),
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
                kind, payload = "error", describe_error(e)
            dur = (time.perf_counter() - job.t0) * 1000.0
            after = sb.snapshot()
            q.put((job, kind, (payload, after, dur)))
        finally:
            sb.close()
    except KeyboardInterrupt as e:
        q.put((job, "interrupt", e))
    except BaseException as e:  # a snapshot failed, or worse: record it, never hang the suite
        q.put((job, "setup", describe_error(e)))


def _run_isolated(job: TrialJob, pool: Any, registry: ToolRegistry, timeout_s: float | None) -> tuple[str, Any]:
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



def trial_trace(job: TrialJob, agent_name: str, *, final: str | None = None, usage: Usage | None = None,
                cost: float | None = None, route: Any = None, agent_meta: Mapping[str, Any] | None = None,
                after: Any = None, duration_ms: float | None = None, error: str | None = None) -> Trajectory:
    """The trajectory recorded for ``job``'s run: the calls its tools recorded and the run's
    metadata (case id, trial, run id, agent, isolation, faults, route, agent metadata, state
    snapshots, duration and, for a failed run, its error); what the agent reported (cost,
    usage) is checked at entry."""
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

