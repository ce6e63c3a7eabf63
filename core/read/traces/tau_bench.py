"""Reader for tau-bench result files (sierra-research/tau-bench, ``historical_trajectories``).

A result file is a JSON list of ``EnvRunResult`` records
``{task_id: int, trial: int, reward: float, info: {task: {user_id, actions: [{name, kwargs}],
instruction, outputs: [str]}, reward_info: {reward, info: {r_actions, ...} | {r_outputs,
outputs}, actions} | null, ...}, traj: [OpenAI chat messages]}`` (research notes
realdata.md §1.1). ``traj`` is read by ``trajcheck.read.traces.openai_chat``; this module adds the
envelope:

- ``Trajectory.metadata``: ``case_id = str(task_id)``, ``trial``, ``run_id = f"{task_id}-{trial}"``,
  ``reward`` (the recorded reward, float), ``reward_info`` (``r_actions`` / ``r_outputs`` when
  present; absent when the record's ``reward_info`` is null), ``recorded_checks``
  (``{"r_actions": r_actions == 1}``: tau-bench's database-hash test, compared with
  trajcheck's verdict on the writes), ``domain``.
- One ``Case`` per task (``case_from_record``): expected calls from ``info.task.actions``,
  ``response_must_include`` from ``info.task.outputs``, ``input`` = the instruction,
  ``user = {"id": user_id}``, ``optional_calls`` = the domain's read-only tools
  (``READ_ONLY_TOOLS``).

Error convention: tau-bench tools report failure by *returning* a string that starts with
``"Error:"`` (there is no error channel in OpenAI messages). This reader therefore sets
``ToolResult.is_error=True`` for such results and False for every other result.

Tool-call ids are reused within a trajectory in this data (71 reuses in gpt-4o-airline);
``Trajectory.pairs()`` joins each result to the earliest still-open call with its id, which
is the call the result answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import TraceFormatError
from ...metrics.formulas import reward_success
from ...model import Case, ExpectedCall, Trajectory
from ._util import as_plain, finalize, is_seq, sum_usage, to_float
from .openai_chat import read_messages
from .tau_domains import TAU_BENCH

FORMAT = "tau_bench"

#: Read-only tools per tau-bench domain (tau_bench/envs/{airline,retail}/tools): calls the
#: agent may make without being expected to; each one's reason is in
#: ``trajcheck.read.traces.tau_domains.TAU_BENCH``. Used as each tau-bench Case's ``optional_calls``.
READ_ONLY_TOOLS: dict[str, tuple[str, ...]] = {n: tuple(d.read_only) for n, d in TAU_BENCH.items()}

# Tools that exist in one domain only, used to tell the domain from a record.
_AIRLINE_ONLY = {"get_reservation_details", "search_direct_flight", "search_onestop_flight",
                 "list_all_airports", "book_reservation", "cancel_reservation", "send_certificate",
                 "update_reservation_flights", "update_reservation_passengers",
                 "update_reservation_baggages"}
_RETAIL_ONLY = {"find_user_id_by_email", "find_user_id_by_name_zip", "get_order_details",
                "get_product_details", "list_all_product_types", "cancel_pending_order",
                "exchange_delivered_order_items", "modify_pending_order_address",
                "modify_pending_order_items", "modify_pending_order_payment",
                "modify_user_address", "return_delivered_order_items"}


def is_record(obj: Any) -> bool:
    """True when ``obj`` looks like one tau-bench record (has ``task_id`` and a ``traj`` list).

    Detection only: a record that passes may still be unreadable (see ``record_problem``)."""
    return isinstance(obj, Mapping) and "task_id" in obj and is_seq(obj.get("traj"))


def looks_like_record(obj: Any) -> bool:
    """True for a mapping with any tau-bench envelope key (``task_id``, ``traj``, ``trial`` +
    ``reward``): a record, possibly broken, of a file already recognised as tau-bench."""
    return isinstance(obj, Mapping) and ("task_id" in obj or "traj" in obj
                                         or ("trial" in obj and "reward" in obj))


def record_problem(obj: Any) -> str | None:
    """Why ``obj`` cannot be read as a tau-bench record, or None when it can.

    A record needs a ``task_id`` that is an int or a non-empty string (a null id would become
    a case named ``'None'``) and a ``traj`` list. The reason is phrased to follow a location,
    e.g. ``"no 'traj' list"`` or ``"field 'task_id' is null"``.
    """
    obj = as_plain(obj)
    if not isinstance(obj, Mapping):
        return f"not a tau-bench record (a {type(obj).__name__}, not an object)"
    tid = obj.get("task_id")
    if "task_id" not in obj:
        why = "no 'task_id'"
    elif tid is None:
        why = "field 'task_id' is null"
    elif isinstance(tid, bool) or not isinstance(tid, (int, str)) or tid == "":
        why = f"field 'task_id' is {tid!r}, not an integer or a non-empty string"
    else:
        why = ""
    traj = obj.get("traj")
    if "traj" not in obj:
        tw = "no 'traj' list"
    elif not is_seq(traj):
        tw = f"no 'traj' list ('traj' is {'null' if traj is None else 'a ' + type(traj).__name__})"
    else:
        tw = ""
    out = "; ".join(x for x in (why, tw) if x)
    return out or None


def crash_reason(obj: Any) -> str | None:
    """Why ``obj`` is a crash record rather than an agent run, or None.

    tau-bench's ``run.py`` writes a record with ``info.error`` (the exception text),
    ``info.traceback``, ``reward`` 0 and an empty ``traj`` when a task raised (an API error, a
    token limit, a user simulator that failed). That is not a run of the agent: it is reported
    with this reason and never scored as a failed run (it would count as a failure in pass^k).
    """
    obj = as_plain(obj)
    info = obj.get("info") if isinstance(obj, Mapping) else None
    err = info.get("error") if isinstance(info, Mapping) else None
    if err is None or err == "":
        return None
    first = str(err).strip().splitlines()[0] if str(err).strip() else str(err)
    return f"crashed before finishing (info.error: {first[:200]}); not an agent run"


def tool_error(output: Any) -> bool:
    """tau-bench convention: a tool failed iff its output is a string starting with ``"Error:"``."""
    return isinstance(output, str) and output.startswith("Error:")


def detect_domain(record: Mapping[str, Any]) -> str | None:
    """``"airline"`` or ``"retail"`` from the tool names in the task and trajectory, or the
    system prompt's title; None when neither is recognisable."""
    names: set[str] = set()
    task = _task(record)
    for a in task.get("actions") or ():
        if isinstance(a, Mapping) and isinstance(a.get("name"), str):
            names.add(a["name"])
    for m in record.get("traj") or ():
        if isinstance(m, Mapping):
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function") if isinstance(tc, Mapping) else None
                if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                    names.add(fn["name"])
    if names & _AIRLINE_ONLY:
        return "airline"
    if names & _RETAIL_ONLY:
        return "retail"
    for m in record.get("traj") or ():
        if isinstance(m, Mapping) and m.get("role") == "system" and isinstance(m.get("content"), str):
            head = m["content"][:200].lower()
            if "airline" in head:
                return "airline"
            if "retail" in head:
                return "retail"
    return None


def _task(record: Mapping[str, Any]) -> Mapping[str, Any]:
    info = record.get("info")
    task = info.get("task") if isinstance(info, Mapping) else None
    return task if isinstance(task, Mapping) else {}


def read(obj: Any, *, domain: str | None = None) -> Trajectory:
    """Read one tau-bench record into a ``Trajectory`` (see the module docstring).

    ``domain`` overrides detection. Raises ``TraceFormatError`` when ``obj`` is not a readable
    record (``record_problem``: no or null ``task_id``, no ``traj`` list). Tolerated faults are
    listed in ``metadata["problems"]``, located by a path inside the record such as
    ``traj[6].tool_calls[0] (get_user_details)`` (0-based).
    """
    rec = as_plain(obj)
    why = record_problem(rec)
    if why is not None:
        raise TraceFormatError(f"{FORMAT}: {why}")
    problems: list[str] = []
    steps = read_messages(rec["traj"], problems, tool_error=tool_error, where="traj")
    final_steps, final = finalize(steps)
    task_id = rec["task_id"]
    trial = rec.get("trial")
    meta: dict[str, Any] = {
        "case_id": str(task_id),
        "trial": trial,
        "run_id": f"{task_id}-{trial}",
    }
    reward = to_float(rec.get("reward"))
    if reward is None:
        problems.append("field 'reward' is missing or not a number")
    meta["reward"] = reward
    info = rec.get("info")
    rinfo = info.get("reward_info") if isinstance(info, Mapping) else None
    if isinstance(rinfo, Mapping):
        inner = rinfo.get("info")
        if isinstance(inner, Mapping):
            kept = {k: inner[k] for k in ("r_actions", "r_outputs") if k in inner}
            if kept:
                meta["reward_info"] = kept
            rv = inner.get("r_actions")  # the DB-hash part of the reward (a bool or 0/1)
            ra = float(rv) if isinstance(rv, bool) else to_float(rv)
            if ra is not None:
                meta["recorded_checks"] = {"r_actions": reward_success(ra)}
    dom = domain or detect_domain(rec)
    if dom is not None:
        meta["domain"] = dom
    meta["terminated"] = _terminated(rec["traj"])
    if not meta["terminated"]:
        meta["termination"] = "max_steps: the run stopped before the user or agent ended it"
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      source_format=FORMAT, metadata=meta)


# How a tau-bench conversation ends properly (tau_bench/envs/user.py and base.py): the simulated
# user sends one of these markers, or the agent calls a terminate tool. A run with neither hit
# the step limit; tau-bench then records no reward_info and reward 0, whatever its calls did.
STOP_MARKERS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
TERMINATE_TOOLS = frozenset({"transfer_to_human_agents"})


def _terminated(traj: Any) -> bool:
    """True when the conversation ended with a stop marker or a terminate-tool call."""
    msgs = [m for m in traj if isinstance(m, Mapping)] if isinstance(traj, list) else []
    for m in msgs:
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function") if isinstance(tc, Mapping) else None
            if isinstance(fn, Mapping) and fn.get("name") in TERMINATE_TOOLS:
                return True
    last_user = next((m for m in reversed(msgs) if m.get("role") == "user"), None)
    content = last_user.get("content") if last_user else None
    return isinstance(content, str) and any(k in content for k in STOP_MARKERS)


def case_from_record(obj: Any, *, domain: str | None = None) -> Case:
    """The ``Case`` a tau-bench record's task defines.

    ``expected_calls``: ``info.task.actions`` in order, each ``{name, kwargs}`` ->
    ``ExpectedCall(name, args=kwargs, match=<the domain's matchers for the tool>)``
    (``tau_domains.TAU_BENCH``: e.g. retail ``item_ids`` ``unordered`` because the tool
    sorts them); ``args_mode`` ``exact_keys`` (a tau-bench tool rejects an unknown
    argument); ``response_must_include``: ``info.task.outputs``;
    ``input``: ``info.task.instruction``; ``user``: ``{"id": info.task.user_id}``;
    ``optional_calls``: ``READ_ONLY_TOOLS[domain]`` (empty when the domain is unknown);
    ``metadata``: ``{"source": "tau-bench", "domain": ...}``.
    Raises ``TraceFormatError`` when ``obj`` is not a record or has no ``info.task``.
    """
    rec = as_plain(obj)
    why = record_problem(rec)
    if why is not None:
        raise TraceFormatError(f"{FORMAT}: {why}")
    task = _task(rec)
    if not task:
        raise TraceFormatError(f"{FORMAT}: record task_id={rec.get('task_id')!r} has no 'info.task'")
    dom = domain or detect_domain(rec)
    known = TAU_BENCH.get(dom or "")
    expected = []
    for a in task.get("actions") or ():
        if isinstance(a, Mapping) and isinstance(a.get("name"), str):
            kw = a.get("kwargs")
            expected.append(ExpectedCall(name=a["name"], args=dict(kw) if isinstance(kw, Mapping) else None,
                                         match=known.matchers(a["name"]) if known else {}))
    outputs = task.get("outputs") or ()
    user_id = task.get("user_id")
    # tau-bench's expected database is the replay of the task's expected actions
    meta: dict[str, Any] = {"source": "tau-bench", "expected_state_is_replay": True}
    if dom:
        meta["domain"] = dom
    if known is not None and known.preconditions:
        meta["preconditions"] = {k: dict(v) for k, v in known.preconditions.items()}
    return Case(
        id=str(rec["task_id"]),
        input=task.get("instruction"),
        user={"id": user_id} if user_id is not None else None,
        expected_calls=tuple(expected),
        optional_calls=READ_ONLY_TOOLS.get(dom or "", ()),
        response_must_include=tuple(str(o) for o in outputs) if is_seq(outputs) else (),
        args_mode="exact_keys",
        metadata=meta,
    )


@dataclass
class LabeledRead:
    """What ``read_labeled`` read: ``trajectories`` as ``(Trajectory, label)`` pairs, ``cases``
    by case id, ``skipped`` (records not read) and ``problems`` (faults of records that were
    read, outside their trajectories' own ``metadata["problems"]``), each message prefixed by
    the record's label."""

    trajectories: list[tuple[Trajectory, str]] = field(default_factory=list)
    cases: dict[str, Case] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_labeled(items: Iterable[tuple[Any, str]], *, domain: str | None = None) -> LabeledRead:
    """Read records given with their locations (``(record, label)`` pairs, e.g.
    ``("run.json record 3")``); see ``LabeledRead``.

    Policy (DESIGN.md, "Bad input"): a record that cannot be read (``record_problem``) is
    reported in ``skipped`` as ``"<label>: <reason>; skipped"`` and the other records are read.
    A record whose task has no ``info.task``, or differs from an earlier record's task with the
    same ``task_id`` (the first case is kept), is read and reported in ``problems``. Problems
    inside a read record stay in its ``Trajectory.metadata["problems"]``.
    """
    out = LabeledRead()
    for r, label in items:
        r = as_plain(r)
        why = crash_reason(r) or record_problem(r)
        if why is not None:
            out.skipped.append(f"{label}: {why}; skipped")
            continue
        try:
            t = read(r, domain=domain)
        except Exception as e:  # an odd record is skipped, never the whole file
            out.skipped.append(f"{label}: could not read the record ({type(e).__name__}: {e}); skipped")
            continue
        out.trajectories.append((t, label))
        try:
            c = case_from_record(r, domain=domain)
        except Exception as e:
            out.problems.append(f"{label}: {e}")
            continue
        if c.id in out.cases:
            if out.cases[c.id] != c:
                out.problems.append(f"{label}: task {c.id} differs from an earlier record of the same task; "
                                    "first kept")
        else:
            out.cases[c.id] = c
    return out


def read_records(records: Iterable[Any], *, domain: str | None = None,
                 where: str = "record") -> tuple[list[Trajectory], dict[str, Case], list[str]]:
    """Read many records: ``(trajectories, cases by case id, problems)``.

    Records are labelled ``f"{where} {i}"`` (0-based). A record that cannot be read is
    reported and skipped; a record whose task differs from an earlier record's task with the
    same ``task_id`` keeps the first case and reports the conflict; each read record's own
    problems are listed as ``"<label> (run <run_id>): <problem>"`` (see ``read_labeled``).
    """
    res = read_labeled(((r, f"{where} {i}") for i, r in enumerate(records)), domain=domain)
    problems = list(res.skipped) + list(res.problems)
    for t, label in res.trajectories:
        for p in t.metadata.get("problems", ()):
            problems.append(f"{label} (run {t.metadata['run_id']}): {p}")
    return [t for t, _ in res.trajectories], res.cases, problems
