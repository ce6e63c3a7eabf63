"""Reader for tau-bench result files (sierra-research/tau-bench, ``historical_trajectories``).

A result file is a JSON list of ``EnvRunResult`` records
``{task_id: int, trial: int, reward: float, info: {task: {user_id, actions: [{name, kwargs}],
instruction, outputs: [str]}, reward_info: {reward, info: {r_actions, ...} | {r_outputs,
outputs}, actions} | null, ...}, traj: [OpenAI chat messages]}`` (research notes
realdata.md §1.1). ``traj`` is read by ``trajcheck.traces.openai_chat``; this module adds the
envelope:

- ``Trajectory.metadata``: ``case_id = str(task_id)``, ``trial``, ``run_id = f"{task_id}-{trial}"``,
  ``reward`` (the recorded reward, float), ``reward_info`` (``r_actions`` / ``r_outputs`` when
  present; absent when the record's ``reward_info`` is null), ``domain``.
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
from typing import Any

from ..errors import TraceFormatError
from ..model import Case, ExpectedCall, Trajectory
from ._util import as_plain, finalize, is_seq, sum_usage, to_float
from .openai_chat import read_messages

FORMAT = "tau_bench"

#: Read-only tools per tau-bench domain (tau_bench/envs/{airline,retail}/tools): calls the
#: agent may make without being expected to. ``think`` and ``calculate`` change nothing;
#: ``transfer_to_human_agents`` ends the conversation and is not part of the DB check.
#: Used as each tau-bench Case's ``optional_calls``.
READ_ONLY_TOOLS: dict[str, tuple[str, ...]] = {
    "airline": (
        "get_user_details", "get_reservation_details", "search_direct_flight",
        "search_onestop_flight", "list_all_airports", "calculate", "think",
        "transfer_to_human_agents",
    ),
    "retail": (
        "find_user_id_by_email", "find_user_id_by_name_zip", "get_order_details",
        "get_product_details", "get_user_details", "list_all_product_types", "calculate",
        "think", "transfer_to_human_agents",
    ),
}

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
    """True when ``obj`` looks like one tau-bench record (has ``task_id`` and a ``traj`` list)."""
    return isinstance(obj, Mapping) and "task_id" in obj and is_seq(obj.get("traj"))


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

    ``domain`` overrides detection. Raises ``TraceFormatError`` when ``obj`` is not a record
    (no ``task_id`` or no ``traj`` list). Tolerated faults are listed in ``metadata["problems"]``.
    """
    rec = as_plain(obj)
    if not is_record(rec):
        raise TraceFormatError(
            f"{FORMAT}: expected a record with 'task_id' and a 'traj' list, got {type(obj).__name__}")
    problems: list[str] = []
    steps = read_messages(rec["traj"], problems, tool_error=tool_error, where="traj message")
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
    ``ExpectedCall(name, args=kwargs)``; ``response_must_include``: ``info.task.outputs``;
    ``input``: ``info.task.instruction``; ``user``: ``{"id": info.task.user_id}``;
    ``optional_calls``: ``READ_ONLY_TOOLS[domain]`` (empty when the domain is unknown);
    ``metadata``: ``{"source": "tau-bench", "domain": ...}``.
    Raises ``TraceFormatError`` when ``obj`` is not a record or has no ``info.task``.
    """
    rec = as_plain(obj)
    if not is_record(rec):
        raise TraceFormatError(f"{FORMAT}: expected a record with 'task_id' and 'traj'")
    task = _task(rec)
    if not task:
        raise TraceFormatError(f"{FORMAT}: record task_id={rec.get('task_id')!r} has no 'info.task'")
    dom = domain or detect_domain(rec)
    expected = []
    for a in task.get("actions") or ():
        if isinstance(a, Mapping) and isinstance(a.get("name"), str):
            kw = a.get("kwargs")
            expected.append(ExpectedCall(name=a["name"], args=dict(kw) if isinstance(kw, Mapping) else None))
    outputs = task.get("outputs") or ()
    user_id = task.get("user_id")
    meta: dict[str, Any] = {"source": "tau-bench"}
    if dom:
        meta["domain"] = dom
    return Case(
        id=str(rec["task_id"]),
        input=task.get("instruction"),
        user={"id": user_id} if user_id is not None else None,
        expected_calls=tuple(expected),
        optional_calls=READ_ONLY_TOOLS.get(dom or "", ()),
        response_must_include=tuple(str(o) for o in outputs) if is_seq(outputs) else (),
        metadata=meta,
    )


def read_records(records: Iterable[Any], *, domain: str | None = None,
                 where: str = "record") -> tuple[list[Trajectory], dict[str, Case], list[str]]:
    """Read many records: ``(trajectories, cases by case id, problems)``.

    A record whose task differs from an earlier record's task with the same ``task_id`` keeps
    the first case and reports the conflict. Records that are not records are reported and
    skipped.
    """
    trajs: list[Trajectory] = []
    cases: dict[str, Case] = {}
    problems: list[str] = []
    for i, r in enumerate(records):
        r = as_plain(r)
        if not is_record(r):
            problems.append(f"{where} {i}: not a tau-bench record (needs 'task_id' and a 'traj' list); skipped")
            continue
        t = read(r, domain=domain)
        trajs.append(t)
        for p in t.metadata.get("problems", ()):
            problems.append(f"{where} {i} (run {t.metadata['run_id']}): {p}")
        try:
            c = case_from_record(r, domain=domain)
        except TraceFormatError as e:
            problems.append(f"{where} {i}: {e}")
            continue
        if c.id in cases:
            if cases[c.id] != c:
                problems.append(f"{where} {i}: task {c.id} differs from an earlier record of the same task; first kept")
        else:
            cases[c.id] = c
    return trajs, cases, problems
