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

import copy
import dataclasses
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..model import Case, Trajectory
from .agent_loading import (
    agent_name_of,
    agent_name_of_spec,
    load_agent,
    resolve_tools,
    tools_from_module,
)
from .agent_return import AgentRun, parse_agent_return
from .run_file import RecordedRuns, RunWriter, read_runs
from .trial_run import TrialJob, run_trial, trial_trace

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

_Writer = RunWriter  # the former private names
_final = parse_agent_return


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
    MetricInputError when no run could be scored, its message listing every problem (each
    case's setup error among them); KeyboardInterrupt when
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
        name = agent_name or agent_name_of_spec(spec)
        if iso.mode == "inline" or tools is None:
            agent = load_agent(spec)
            if iso.mode != "inline" and tools_from_module(agent):
                notes.append(f"the agent's module ({spec.rsplit(':', 1)[0]}) was imported into trajcheck's "
                             "process to find its TOOLS, so its top-level code ran beside the grader; name "
                             "the tools with --tools (a module without the agent) to keep it out")
    else:
        name = agent_name or agent_name_of(agent)
    registry = resolve_tools(agent, tools)
    problems: list[str] = []
    if worker_log is None and out is not None:
        worker_log = f"{os.fspath(out)}.log"
    pool = _pool(agent, iso, worker_log)

    # the grader's own copy of the cases, made before any agent runs
    grading = {c.id: copy.deepcopy(c) for c in cases}
    writer = RunWriter(Path(out)) if out is not None else None  # locked before the file is read
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
    todo = [TrialJob(by_id[cid], t, isolation=iso.mode) for t in range(trials) for cid in by_id
            if (cid, t) not in done]

    if writer is not None:
        writer.truncate_to(rec.good_end)
    q: queue.Queue[tuple[TrialJob, str, Any]] = queue.Queue()
    running: list[TrialJob] = []
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
                    th = threading.Thread(target=run_trial, args=(job, agent, registry, sandbox_url, base_dir,
                                                                   q, fixture_roots, pool, timeout_s), daemon=True,
                                          name=f"trajcheck-run-{job.case.id}-{job.trial}")
                    running.append(job)
                    th.start()
                if not running:  # the last jobs were skipped (their case's setup failed): none to wait for
                    continue
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
                            t = trial_trace(j, name, duration_ms=timeout_s * 1000.0, error=why)
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
                    t = trial_trace(job, name, after=after, duration_ms=dur, error=err)
                else:
                    ret, after, dur = payload
                    fr, usage, cost, route, ameta, err = parse_agent_return(ret)
                    t = trial_trace(job, name, final=fr, usage=usage, cost=cost, route=route, agent_meta=ameta,
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
    if score and not pairs:  # the reasons, not only "empty suite": each case's setup error among them
        from ..errors import MetricInputError
        from ..report.text import plural

        raise MetricInputError("no run to score: " + plural(len(problems), "problem") + ":"
                               + "".join(f"\n  - {p}" for p in problems) if problems else
                               "no run to score: no cases")
    scorecard = None
    if score:
        scorecard = score_recorded(pairs, ks=ks, seed=seed, context=context, problems=problems,
                                   meta={"agent": name, "trials": trials, "out": str(out) if out else None})
    return SuiteRun(scorecard, tuple(pairs), len(new), sum(1 for k in done if k[0] in by_id and k[1] < trials),
                    tuple(problems), iso.describe(), tuple(notes))



def _pool(agent: Any, iso: Any, log: Any) -> Any:
    from .worker_pool import pool_for

    return pool_for(agent, iso, log)


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
