"""Reader for tau2-bench result files (sierra-research/tau2-bench ``Results``).

A results file is one JSON object ``{timestamp, info, tasks, simulations}`` (tau2
``data_model/simulation.py``): ``info.environment_info.domain_name`` names the domain,
``tasks`` hold each task's ``evaluation_criteria`` (expected ``actions`` ``{action_id,
requestor, name, arguments, compare_args}``, ``communicate_info``, ``nl_assertions``,
``reward_basis``), and each simulation has ``task_id``, ``trial``, ``termination_reason``,
``agent_cost`` / ``user_cost``, ``duration`` (seconds), ``messages`` and the recorded
verdict ``reward_info`` (``reward``, ``db_check.db_match``, ``action_checks``,
``communicate_checks``, ``reward_basis``).

One ``Trajectory`` per simulation:

- messages: ``assistant`` -> a ``tool_call`` step (calls ``{id, name, arguments}``) or an
  ``assistant`` text step; ``user`` -> ``user``; ``tool`` -> ``tool_result`` joined to its
  call by ``id``. A result failed when the message's ``error`` is true; files written before
  tau2 recorded that field carry only the text, and there a result failed when it starts
  with ``"Error:"`` (the text tau2's environment gives every tool exception). Tool calls the
  simulated user makes on its own device (``requestor: "user"``, telecom) are not the
  agent's calls: they and their results stay in the user step's ``metadata["user_tool_calls"]``.
- per-step ``usage`` (``prompt_tokens`` / ``completion_tokens``) and ``cost`` of the agent's
  messages; ``total_cost_usd`` = ``agent_cost``, else the sum of the agent messages' costs
  when any is non-zero, else None (the user simulator's ``user_cost`` is kept in metadata); ``total_latency_ms`` = ``duration`` x 1000.
- ``metadata``: ``case_id`` (the task id), ``trial``, ``run_id`` (``"<task>-<trial>"``),
  ``simulation_id``, ``reward``, ``termination_reason``, ``terminated`` (the run ended by
  ``user_stop`` / ``agent_stop``: tau2 scores any other ending 0 without a check),
  ``domain``, ``reward_info`` = ``{db_match, reward_basis, action_checks: [{name,
  arguments, match}], communicate: [{info, met}]}`` as recorded, ``recorded_checks`` =
  ``{"db_match": bool}`` (compared with trajcheck's verdict on the writes),
  ``recorded_task_id`` (the file's ``task_id``; tau2's own pass^k groups by it) and
  ``no_effect_calls`` (expected writes the recorded verdict proves changed nothing). A
  simulation that ended in ``infrastructure_error`` gets no reward: tau2 leaves it out.

One ``Case`` per task (``case_from_task``): expected calls from the agent's expected actions,
with the domain's argument matchers (``trajcheck.read.traces.tau_domains``) and ``args_mode``
``exact_keys`` (a tau2 tool rejects unknown arguments); ``optional_calls`` the domain's
read-only tools; ``response_must_include`` the ``communicate_info`` when ``COMMUNICATE`` is in
the task's ``reward_basis``.

Data defects (``read_results``): a simulation whose recorded ``action_checks`` are not its
task's actions but exactly another task's is scored against that other task (the one tau2
evaluated it on) and listed as a problem naming both task ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import TraceFormatError
from ...model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    figure,
    finalize,
    is_seq,
    parse_args,
    sum_usage,
    to_float,
    to_int,
    usage_or_none,
)
from .tau_domains import domain as tool_domain

FORMAT = "tau2"

#: tau2 ``TerminationReason`` values after which the evaluator checks the run; any other
#: ending gets reward 0 with no check (``evaluator.evaluate_simulation``).
FINISHED = frozenset({"user_stop", "agent_stop"})
#: Runs tau2's metrics leave out entirely (``metrics.agent_metrics.get_metrics_df``).
INFRA_ERROR = "infrastructure_error"


def is_results(obj: Any) -> bool:
    """True for a tau2 ``Results`` object: a mapping with ``simulations`` and ``tasks`` lists."""
    obj = as_plain(obj)
    return (isinstance(obj, Mapping) and is_seq(obj.get("simulations")) and is_seq(obj.get("tasks"))
            and ("info" in obj or "timestamp" in obj))


def domain_of(results: Mapping[str, Any]) -> str | None:
    """``info.environment_info.domain_name``, or None."""
    info = results.get("info")
    env = info.get("environment_info") if isinstance(info, Mapping) else None
    name = env.get("domain_name") if isinstance(env, Mapping) else None
    return name if isinstance(name, str) and name else None


def _error_of(m: Mapping[str, Any]) -> bool:
    err = m.get("error")
    if isinstance(err, bool):
        return err
    content = m.get("content")
    return isinstance(content, str) and content.startswith("Error:")


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, Mapping):
        return None
    return usage_or_none(Usage(input_tokens=to_int(u.get("prompt_tokens")),
                               output_tokens=to_int(u.get("completion_tokens"))))


def _calls(m: Mapping[str, Any], problems: list[str], w: str) -> list[ToolCall]:
    out: list[ToolCall] = []
    tcs = m.get("tool_calls")
    if tcs is not None and not is_seq(tcs):
        problems.append(f"{w}: field 'tool_calls' is not a list; ignored")
        return out
    for j, tc in enumerate(tcs or ()):
        wj = f"{w}.tool_calls[{j}]"
        if not isinstance(tc, Mapping):
            problems.append(f"{wj}: not an object; ignored")
            continue
        name = tc.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{wj}: tool call has no name")
            name = ""
        args, raw, err = parse_args(tc.get("arguments"), problems, f"{wj} ({name})")
        cid = tc.get("id")
        out.append(ToolCall(name=name, args=args, call_id=None if cid is None else str(cid), raw_args=raw,
                            args_parse_error=err, tool_type="function"))
    return out


def read_messages(messages: Any, problems: list[str], where: str = "messages") -> list[Step]:
    """tau2 messages -> steps (see the module docstring). Faults go to ``problems`` located
    by ``where[i]``; a non-object message or an unknown role is skipped."""
    sl = StepList()
    if not is_seq(messages):
        problems.append(f"{where}: not a list; no steps")
        return sl.steps
    seen: set[str] = set()
    user_side: list[dict[str, Any]] | None = None
    for i, m in enumerate(messages):
        m = as_plain(m)
        w = f"{where}[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not an object ({type(m).__name__}); skipped")
            continue
        role = m.get("role")
        content = m.get("content") if isinstance(m.get("content"), str) else None
        if role == "assistant":
            calls = _calls(m, problems, w)
            usage, cost = _usage(m.get("usage")), figure(m.get("cost"), f"{w}.cost", problems)
            if calls:
                seen.update(c.call_id for c in calls if c.call_id is not None)
                sl.call(calls, content=content or None, usage=usage, cost_usd=cost)
            else:
                sl.add("assistant", content=content, usage=usage, cost_usd=cost)
            user_side = None
        elif role == "user":
            calls = _calls(m, problems, w)
            meta: dict[str, Any] = {}
            if calls:
                user_side = [{"name": c.name, "args": c.args} for c in calls]
                meta["user_tool_calls"] = user_side
            else:
                user_side = None
            sl.add("user", content=content, metadata=meta)
        elif role == "tool":
            if m.get("requestor") == "user":
                if user_side is not None:
                    user_side.append({"result": content, "is_error": _error_of(m)})
                continue
            cid = m.get("id")
            cid = None if cid is None else str(cid)
            if cid is None:
                problems.append(f"{w}: tool message has no 'id'; paired by position")
            elif cid not in seen:
                problems.append(f"{w}: tool result for call id {cid!r} matches no earlier call")
            err = _error_of(m)
            sl.result(ToolResult(call_id=cid, name=None, output=content, is_error=err,
                                 error=content if err else None))
        elif role == "system":
            sl.add("system", content=content)
        else:
            problems.append(f"{w}: unknown role {role!r}; skipped")
    return sl.steps


def _recorded(sim: Mapping[str, Any]) -> dict[str, Any]:
    """The verdicts ``reward_info`` records, in a compact form (absent parts left out)."""
    ri = sim.get("reward_info")
    if not isinstance(ri, Mapping):
        return {}
    out: dict[str, Any] = {}
    db = ri.get("db_check")
    if isinstance(db, Mapping) and isinstance(db.get("db_match"), bool):
        out["db_match"] = db["db_match"]
    if is_seq(ri.get("reward_basis")):
        out["reward_basis"] = [str(b) for b in ri["reward_basis"]]
    checks = ri.get("action_checks")
    if checks is None and "db_match" in out:
        checks = []  # tau2 records no action checks when the task expects no action
    if is_seq(checks):
        acts = []
        for c in checks:
            a = c.get("action") if isinstance(c, Mapping) else None
            if isinstance(a, Mapping):
                acts.append({"name": a.get("name"), "arguments": a.get("arguments"),
                             "action_id": a.get("action_id"), "match": c.get("action_match")})
        out["action_checks"] = acts
    comm = ri.get("communicate_checks")
    if is_seq(comm):
        out["communicate"] = [{"info": c.get("info"), "met": c.get("met")} for c in comm
                              if isinstance(c, Mapping)]
    return out


def _no_effect_calls(rec: Mapping[str, Any], dom: Any) -> list[dict[str, Any]]:
    """Expected writes the recorded verdict proves changed nothing: tau2 records the write's
    action check as unmet (no call with exactly its arguments was made) and yet its DB check
    found the expected database (the database after the task's expected actions), so the
    expected database is reached without it. Read-only tools are left out (they never
    change anything); without a DB check nothing is proved."""
    if rec.get("db_match") is not True:
        return []
    reads = dom.read_only if dom is not None else {}
    return [{"name": a.get("name"), "args": a.get("arguments"),
             "evidence": "tau2 recorded its action check unmet and the DB check matched, so the "
                         "expected database is reached without it"}
            for a in rec.get("action_checks") or () if a.get("match") is False and a.get("name") not in reads]


def read_simulation(sim: Any, *, domain: str | None = None, where: str = "simulation") -> Trajectory:
    """One tau2 simulation -> ``Trajectory`` (module docstring). Raises ``TraceFormatError``
    when ``sim`` is not an object with a ``task_id`` and a ``messages`` list."""
    sim = as_plain(sim)
    why = simulation_problem(sim)
    if why is not None:
        raise TraceFormatError(f"{FORMAT}: {where}: {why}")
    problems: list[str] = []
    steps = read_messages(sim["messages"], problems, "messages")
    final_steps, final = finalize(steps)
    tid = str(sim["task_id"])
    trial = sim.get("trial")
    term = sim.get("termination_reason")
    meta: dict[str, Any] = {"case_id": tid, "trial": trial, "run_id": f"{tid}-{trial if trial is not None else 0}"}
    if isinstance(sim.get("id"), str):
        meta["simulation_id"] = sim["id"]
    ri = sim.get("reward_info")
    reward = to_float(ri.get("reward")) if isinstance(ri, Mapping) else None
    if reward is None:
        problems.append("no recorded reward ('reward_info.reward' missing or not a number)")
    meta["reward"] = reward
    rec = _recorded(sim)
    if rec:
        meta["reward_info"] = rec
    if isinstance(rec.get("db_match"), bool):
        meta["recorded_checks"] = {"db_match": rec["db_match"]}
    if term == INFRA_ERROR:  # tau2's metrics leave such runs out; so does the recorded reward here
        meta["reward"] = None
        problems.append("ended in an infrastructure error: left out of the recorded reward, as tau2 does")
    if isinstance(term, str):
        meta["termination_reason"] = term
        meta["terminated"] = term in FINISHED
        if term not in FINISHED:
            meta["termination"] = f"{term}: tau2 scores a run that ends this way 0 without checking it"
    if domain:
        meta["domain"] = domain
    user_cost = to_float(sim.get("user_cost"))
    if user_cost is not None:
        meta["user_cost_usd"] = user_cost
    no_effect = _no_effect_calls(rec, tool_domain("tau2", domain))
    if no_effect:
        meta["no_effect_calls"] = no_effect
    if problems:
        meta["problems"] = problems
    agent_cost = to_float(sim.get("agent_cost"))
    if agent_cost is None:
        # per-message costs, unless they are all 0 (tau2 writes 0.0 where it priced nothing)
        costs = [s.cost_usd for s in final_steps if s.cost_usd is not None]
        agent_cost = sum(costs) if any(costs) else None
    dur = to_float(sim.get("duration"))
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      total_cost_usd=agent_cost, total_latency_ms=None if dur is None else dur * 1000.0,
                      source_format=FORMAT, metadata=meta)


def simulation_problem(sim: Any) -> str | None:
    """Why ``sim`` cannot be read as a tau2 simulation, or None when it can."""
    if not isinstance(sim, Mapping):
        return f"not a simulation (a {type(sim).__name__}, not an object)"
    tid = sim.get("task_id")
    bits = []
    if tid is None or isinstance(tid, bool) or not isinstance(tid, (str, int)) or tid == "":
        bits.append("no 'task_id'" if "task_id" not in sim else f"field 'task_id' is {tid!r}")
    if not is_seq(sim.get("messages")):
        bits.append("no 'messages' list")
    return "; ".join(bits) or None


def _instructions(task: Mapping[str, Any]) -> Any:
    us = task.get("user_scenario")
    ins = us.get("instructions") if isinstance(us, Mapping) else None
    if isinstance(ins, Mapping):
        parts = [f"{k}: {ins[k]}" for k in ("reason_for_call", "known_info", "unknown_info",
                                            "task_instructions") if isinstance(ins.get(k), str) and ins[k]]
        return "\n".join(parts) or None
    return ins if isinstance(ins, str) else None


def _criteria(task: Mapping[str, Any]) -> Mapping[str, Any]:
    ec = task.get("evaluation_criteria")
    return ec if isinstance(ec, Mapping) else {}


def action_key(name: Any, arguments: Any) -> str:
    """A canonical text for one expected action (name and arguments), to compare actions."""
    return json.dumps([name, arguments], sort_keys=True, default=str)


def case_from_task(task: Any, *, domain: str | None = None) -> Case:
    """The ``Case`` a tau2 task defines (module docstring). Raises ``TraceFormatError`` when
    ``task`` is not an object with an ``id``."""
    task = as_plain(task)
    if not isinstance(task, Mapping) or task.get("id") in (None, ""):
        raise TraceFormatError(f"{FORMAT}: a task must be an object with an 'id'")
    ec = _criteria(task)
    dom = tool_domain("tau2", domain)
    expected: list[ExpectedCall] = []
    user_actions: list[dict[str, Any]] = []
    for a in ec.get("actions") or ():
        if not isinstance(a, Mapping) or not isinstance(a.get("name"), str):
            continue
        args = a.get("arguments")
        if a.get("requestor", "assistant") == "user":
            user_actions.append({"name": a["name"], "args": args})
            continue
        match = dom.matchers(a["name"]) if dom is not None else {}
        expected.append(ExpectedCall(name=a["name"], args=dict(args) if isinstance(args, Mapping) else None,
                                     match=match))
    basis = [str(b) for b in ec.get("reward_basis") or ()]
    comm = ec.get("communicate_info") or ()
    # tau2's expected database is the replay of the task's expected actions
    meta: dict[str, Any] = {"source": "tau2", "reward_basis": basis, "expected_state_is_replay": True}
    if domain:
        meta["domain"] = domain
    if dom is None:
        meta["tool_knowledge"] = f"none for domain {domain!r}: every tool counts as a write"
    elif dom.preconditions:
        meta["preconditions"] = {k: dict(v) for k, v in dom.preconditions.items()}
    if user_actions:
        meta["user_actions"] = user_actions
    nl = ec.get("nl_assertions")
    if nl:
        meta["nl_assertions"] = list(nl)
    return Case(
        id=str(task["id"]),
        input=_instructions(task),
        expected_calls=tuple(expected),
        optional_calls=tuple(dom.read_only) if dom is not None else (),
        response_must_include=tuple(str(c) for c in comm) if "COMMUNICATE" in basis and is_seq(comm) else (),
        args_mode="exact_keys",
        metadata=meta,
    )


@dataclass
class ResultsRead:
    """What ``read_results`` read: ``(Trajectory, label)`` pairs, cases by id, ``skipped``
    (simulations not read) and ``problems`` (data defects and faults outside a trajectory)."""

    trajectories: list[tuple[Trajectory, str]] = field(default_factory=list)
    cases: dict[str, Case] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _signature(actions: Any, infos: Any) -> str:
    """What identifies a task's checks: its agent actions (name and arguments, any order)
    and its communicate infos (any order)."""
    acts = sorted(action_key(a.get("name"), a.get("arguments")) for a in actions or ()
                  if isinstance(a, Mapping) and a.get("requestor", "assistant") != "user")
    return json.dumps([acts, sorted(str(x) for x in infos or ())])


def _sim_signature(rec: Mapping[str, Any]) -> str | None:
    """The signature of the checks a simulation's ``reward_info`` records; None when it
    records no action checks (nothing to compare)."""
    acts = rec.get("action_checks")
    if acts is None:
        return None
    return _signature(acts, [c.get("info") for c in rec.get("communicate") or ()])


def read_results(obj: Any, label: str = "<input>") -> ResultsRead:
    """Read a tau2 ``Results`` object (see the module docstring).

    Policy (DESIGN.md "Bad input"): a simulation that cannot be read is listed in
    ``skipped`` and the others are read; a task that cannot be turned into a case is listed
    in ``problems``. Data defect: a simulation's recorded checks (``action_checks`` actions
    and ``communicate_checks`` infos) should be its task's actions and communicate infos.
    When they are not, but are exactly those of other tasks of the file, the simulation is
    scored against the first of them (tau2 evaluated it on that task; tasks with the same
    checks are scored alike) and the problem names both ids; when they match no task it
    keeps its ``task_id`` and the problem says so. The id the file records stays in
    ``metadata["recorded_task_id"]``: tau2's own pass^k groups by it.
    Raises ``TraceFormatError`` when ``obj`` is not a ``Results`` object.
    """
    res = as_plain(obj)
    if not is_results(res):
        raise TraceFormatError(f"{label}: {FORMAT}: not a tau2 Results object "
                               "(needs 'tasks' and 'simulations' lists)")
    dom = domain_of(res)
    out = ResultsRead()
    by_sig: dict[str, list[str]] = {}
    own_sig: dict[str, str] = {}
    for i, t in enumerate(res["tasks"]):
        try:
            c = case_from_task(t, domain=dom)
        except TraceFormatError as e:
            out.problems.append(f"{label} tasks[{i}]: {e}")
            continue
        if c.id in out.cases:
            out.problems.append(f"{label} tasks[{i}]: task {c.id} appears twice; first kept")
            continue
        out.cases[c.id] = c
        ec = _criteria(t)
        sig = _signature(ec.get("actions"), ec.get("communicate_info"))
        own_sig[c.id] = sig
        by_sig.setdefault(sig, []).append(c.id)
    run_ids: dict[str, int] = {}
    for i, sim in enumerate(res["simulations"]):
        where = f"{label} simulation {i}"
        why = simulation_problem(as_plain(sim))
        if why is not None:
            out.skipped.append(f"{where}: {why}; skipped")
            continue
        t = read_simulation(sim, domain=dom, where=where)
        meta = dict(t.metadata)
        tid = meta["case_id"]
        meta["recorded_task_id"] = tid
        ssig = _sim_signature(meta.get("reward_info") or {})
        if tid not in out.cases:
            out.problems.append(f"{where}: task_id {tid} is not among the file's tasks")
        elif ssig is not None and ssig != own_sig[tid]:
            named = by_sig.get(ssig, [])
            if named:
                meta["case_id"] = named[0]
                alike = f" (as are tasks {', '.join(named[1:])})" if len(named) > 1 else ""
                out.problems.append(
                    f"{where}: data defect: task_id {tid}, but its recorded checks are task "
                    f"{named[0]}'s{alike}, not task {tid}'s; scored as task {named[0]}")
            else:
                out.problems.append(
                    f"{where}: data defect: task_id {tid}, but its recorded checks are not task "
                    f"{tid}'s and match no task of the file; scored as task {tid}")
        base = f"{meta['case_id']}-{meta.get('trial') if meta.get('trial') is not None else 0}"
        n = run_ids.get(base, 0)
        run_ids[base] = n + 1
        meta["run_id"] = base if n == 0 else f"{base}#{n + 1}"
        t = Trajectory(steps=t.steps, final_response=t.final_response, total_usage=t.total_usage,
                       total_cost_usd=t.total_cost_usd, total_latency_ms=t.total_latency_ms,
                       source_format=t.source_format, metadata=meta)
        out.trajectories.append((t, where))
    return out


def read(obj: Any) -> Trajectory:
    """Read one tau2 simulation (an item of ``Results.simulations``), or a ``Results`` object
    holding exactly one, into a ``Trajectory``. Raises ``TraceFormatError`` for a ``Results``
    object with another number of simulations (``trajcheck.read.traces.load`` reads those)."""
    plain = as_plain(obj)
    if is_results(plain):
        got = read_results(plain)
        if len(got.trajectories) != 1:
            raise TraceFormatError(f"{FORMAT}: a Results object with {len(got.trajectories)} readable "
                                   "simulations is many runs; read it with trajcheck.read.traces.load")
        return got.trajectories[0][0]
    return read_simulation(plain)


def read_labeled(items: Iterable[tuple[Any, str]]) -> ResultsRead:
    """Read several ``Results`` objects given with their locations into one ``ResultsRead``;
    a later file's case with an id already read is kept only when equal (else a problem)."""
    out = ResultsRead()
    for obj, label in items:
        r = read_results(obj, label)
        out.trajectories.extend(r.trajectories)
        out.skipped.extend(r.skipped)
        out.problems.extend(r.problems)
        for cid, c in r.cases.items():
            if cid in out.cases and out.cases[cid] != c:
                out.problems.append(f"{label}: task {cid} differs from an earlier file's; first kept")
            out.cases.setdefault(cid, c)
    return out


__all__ = ["FINISHED", "FORMAT", "INFRA_ERROR", "ResultsRead", "action_key", "case_from_task",
           "domain_of", "is_results", "read", "read_labeled", "read_messages", "read_results",
           "read_simulation", "simulation_problem"]
