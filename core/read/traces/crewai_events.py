"""Reader for CrewAI event bus events logged as JSON Lines: each event a listener received
(``crewai.events``: ``BaseEventListener`` handlers), dumped by pydantic (``model_dump_json`` /
``model_dump(mode="json")``) or CrewAI's ``event.to_json()``, one per line or as a list.

Runs: each event carries ``event_id`` and the id of the event whose scope it ran in
(``parent_event_id``; a closing event names its opening one in ``started_event_id``). The
events whose chain of parents leads to one root -- a ``crew_kickoff_started`` (or a flow's or a
lone agent's first event) -- are one run, in ``emission_sequence`` order (handlers run in a
thread pool, so lines may be out of order). An opening event missing from the log is placed
by its closing event (same scope, ``started_event_id`` names it), so a hierarchical crew --
whose manager's ``agent_execution_started`` a listener on ``EventTypes`` does not get -- is
still one run. Events with no ids (older CrewAI) join the run of
the last ``crew_kickoff_started`` before them.

Events -> steps:

- the run's request: the first ``task_name`` (the task's name or description) or an
  ``agent_execution_started``'s ``task_prompt``;
- ``llm_call_completed``: one model call; ``usage`` (``prompt_tokens`` /
  ``completion_tokens``) on its step; a ``response`` list of OpenAI tool calls (native tool
  calling) is one call step (the parallel calls of one response stay together), a text
  response an assistant step, the last one the final answer;
- ``tool_usage_started``: the tool's call when no model response announced it (CrewAI's
  ReAct text mode); ``tool_usage_finished``: its result (``output``; failed when ``failure`` is
  set); ``tool_usage_error``, ``tool_validate_input_error``, ``tool_selection_error``: a
  failed result with the ``error`` text; ``tool_failure_detected``: marks the call's result
  failed. Tool events carry no call id: each joins the open call of its tool with equal
  arguments (else the first open call of that tool), in order;
- ``crew_kickoff_completed``: ``output.raw`` is the final answer when no model text came.

``llm_call_started`` events (copies of the prompt messages) are not read as steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    finalize,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    to_int,
    usage_or_none,
)
from .messages import openai_calls

FORMAT = "crewai_events"
GROUPED_BY = "parent_event_id"
_ROOTS = frozenset({"crew_kickoff_started", "flow_started", "lite_agent_execution_started"})
_TOOL_FAILS = frozenset({"tool_usage_error", "tool_validate_input_error", "tool_selection_error",
                         "tool_execution_error"})
# event types a CrewAI run writes (a record of one of them, with CrewAI's id fields, is an event)
_TYPES = frozenset({
    "crew_kickoff_started", "crew_kickoff_completed", "crew_kickoff_failed", "task_started", "task_completed",
    "task_failed", "agent_execution_started", "agent_execution_completed", "agent_execution_error",
    "lite_agent_execution_started", "lite_agent_execution_completed", "lite_agent_execution_error",
    "llm_call_started", "llm_call_completed", "llm_call_failed", "llm_stream_chunk", "tool_usage_started",
    "tool_usage_finished", "tool_failure_detected", "flow_started", "flow_finished", "method_execution_started",
    "method_execution_finished", "method_execution_failed", *_TOOL_FAILS})
_ID_KEYS = ("event_id", "source_fingerprint", "emission_sequence")


def is_event(obj: Any) -> bool:
    """True for one CrewAI event dump: a known ``type`` with CrewAI's ``timestamp`` and an id
    field (``event_id``, ``source_fingerprint`` or ``emission_sequence``)."""
    return (isinstance(obj, Mapping) and isinstance(obj.get("type"), str) and obj["type"] in _TYPES
            and "timestamp" in obj
            and any(k in obj for k in _ID_KEYS))


def is_source(obj: Any) -> bool:
    """True for one CrewAI event or a list of them."""
    obj = as_plain(obj)
    if is_seq(obj):
        return bool(obj) and all(is_event(as_plain(x)) for x in obj)
    return is_event(obj)


def _s(v: Any) -> str | None:
    return None if v is None else str(v)


def _runs(events: list[tuple[Mapping[str, Any], str]]) -> list[tuple[str, list[tuple[Mapping[str, Any], str]]]]:
    """The events grouped by their root (module docstring), in order of each root's first event."""
    parent: dict[str, str | None] = {}
    for e, _ in events:
        eid = _s(e.get("event_id"))
        if eid is not None:
            parent[eid] = _s(e.get("parent_event_id")) or _s(e.get("started_event_id"))
    # an opening event the log lacks (a hierarchical crew's manager agent_execution_started is
    # not among EventTypes) still has a parent: its closing event's parent_event_id
    for e, _ in events:
        opened, up = _s(e.get("started_event_id")), _s(e.get("parent_event_id"))
        if opened is not None and up is not None and opened not in parent:
            parent[opened] = up

    def root(eid: str) -> str:
        seen = {eid}
        while (p := parent.get(eid)) is not None and p in parent and p not in seen:
            seen.add(p)
            eid = p
        return parent.get(eid) or eid  # a parent not in the file is the root it names

    groups: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    current = ""
    for e, w in events:
        eid = _s(e.get("event_id"))
        if eid is None:
            if e.get("type") in _ROOTS:
                current = f"kickoff {len(groups) + 1}"
            key = current
        else:
            key = root(eid)
            if e.get("type") in _ROOTS:
                current = key
        groups.setdefault(key, []).append((e, w))
    return list(groups.items())


def _usage(u: Any) -> Usage | None:
    u = mapping(u)
    return usage_or_none(Usage(input_tokens=to_int(u.get("prompt_tokens")),
                               output_tokens=to_int(u.get("completion_tokens")),
                               total_tokens=to_int(u.get("total_tokens"))))


class _Open:
    """Calls announced and not yet answered: ``(name, args, call_id)`` in order."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def take(self, name: str, args: Any) -> ToolCall | None:
        same = [c for c in self.calls if c.name == name]
        hit = next((c for c in same if c.args == args), same[0] if same else None)
        if hit is not None:
            self.calls.remove(hit)
        return hit


def _args(v: Any, problems: list[str], where: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    return parse_args(v, problems, where) if v is not None else ({}, None, None)


def _run(events: list[tuple[Mapping[str, Any], str]], problems: list[str]) -> Trajectory:
    sl = StepList()
    opened = _Open()
    started: dict[str, ToolCall] = {}  # tool_usage_started event_id -> its call
    results: dict[int, int] = {}  # id(call) -> index of its result step
    user = None
    answer_from_output = None
    for e, w in events:
        kind = e.get("type")
        agent = e.get("agent_role") if isinstance(e.get("agent_role"), str) else None
        if user is None:
            user = e.get("task_name") if isinstance(e.get("task_name"), str) else None
            if user is None and kind == "agent_execution_started" and isinstance(e.get("task_prompt"), str):
                user = e["task_prompt"]
            if user is not None:
                sl.add("user", content=user)
        if kind == "llm_call_completed":
            resp = as_plain(e.get("response"))
            usage = _usage(e.get("usage"))
            model = e.get("model") if isinstance(e.get("model"), str) else None
            if is_seq(resp) and resp:
                calls = openai_calls({"tool_calls": resp}, problems, f"{w}.response")
                sl.call(calls, usage=usage, model=model, agent_name=agent)
                opened.calls.extend(calls)
            elif isinstance(resp, str):
                sl.add("assistant", content=resp, usage=usage, model=model, agent_name=agent)
            elif usage is not None:
                sl.add("assistant", usage=usage, model=model, agent_name=agent)
        elif kind == "tool_usage_started":
            name = str(e.get("tool_name") or "")
            args, raw, err = _args(e.get("tool_args"), problems, f"{w}.tool_args")
            call = opened.take(name, args)
            if call is None:  # not announced by a model response (ReAct text mode)
                call = ToolCall(name=name, args=args, raw_args=raw, args_parse_error=err, tool_type="function")
                sl.call([call], agent_name=agent)
            if e.get("event_id") is not None:
                started[str(e["event_id"])] = call
        elif kind == "tool_usage_finished" or kind in _TOOL_FAILS:
            call = started.pop(str(e.get("started_event_id")), None)
            if call is None:
                args, _, _ = _args(e.get("tool_args"), [], w)
                call = opened.take(str(e.get("tool_name") or ""), args)
            failure = mapping(as_plain(e.get("failure")))
            failed = kind in _TOOL_FAILS or bool(failure)
            if kind == "tool_usage_finished":
                out: Any = e.get("output")
                error = failure.get("message") if failure else None
            else:
                out = e.get("error")
                error = out if isinstance(out, str) else None
            if call is None and kind == "tool_usage_finished":
                problems.append(f"{w}: {kind} of tool {e.get('tool_name')!r} matches no call; read as a call")
            if call is None:
                args, raw, err = _args(e.get("tool_args"), problems, f"{w}.tool_args")
                call = ToolCall(name=str(e.get("tool_name") or ""), args=args, raw_args=raw, args_parse_error=err,
                                tool_type="function")
                sl.call([call], agent_name=agent)
            results[id(call)] = len(sl.steps)
            sl.result(ToolResult(call_id=call.call_id, name=call.name, output=out, is_error=failed,
                                 error=str(error) if failed and error is not None else None), agent_name=agent)
        elif kind == "tool_failure_detected":
            _mark_failed(sl, e, w, problems)
        elif kind == "crew_kickoff_completed":
            o = as_plain(e.get("output"))
            raw_out = mapping(o).get("raw") if isinstance(o, Mapping) else o
            if isinstance(raw_out, str):
                answer_from_output = raw_out
    steps, final = finalize(sl.steps)
    if final is None:
        final = answer_from_output
    meta: dict[str, Any] = {"grouped_by": GROUPED_BY}
    if problems:
        meta["problems"] = list(problems)
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps), source_format=FORMAT,
                      metadata=meta)


def _mark_failed(sl: StepList, e: Mapping[str, Any], w: str, problems: list[str]) -> None:
    """A ``tool_failure_detected`` event: the last result of its tool is failed (already so
    when a ``tool_usage_error`` came first)."""
    name = e.get("tool_name")
    for i in range(len(sl.steps) - 1, -1, -1):
        r = sl.steps[i].tool_result
        if r is not None and r.name == name:
            if not r.is_error:
                msg = mapping(as_plain(e.get("failure"))).get("message")
                sl.steps[i] = replace(sl.steps[i], tool_result=replace(
                    r, is_error=True, error=r.error or (str(msg) if msg is not None else None)))
            return
    problems.append(f"{w}: tool_failure_detected for tool {name!r} with no result before it; ignored")


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per run of the CrewAI events in ``objs`` (module docstring).

    Raises:
        TraceFormatError: when no CrewAI event is there.
    """
    events: list[tuple[Mapping[str, Any], str]] = []
    for i, o in enumerate(objs):
        o = as_plain(o)
        for j, x in enumerate(o if is_seq(o) else [o]):
            x = as_plain(x)
            if is_event(x):
                events.append((x, f"item {i}" if not is_seq(o) else f"item {i}[{j}]"))
    if not events:
        raise TraceFormatError(f"{FORMAT}: no CrewAI events")
    out = []
    for key, evs in _runs(events):
        evs = sorted(evs, key=lambda p: to_int(p[0].get("emission_sequence")) or 0) \
            if all(to_int(e.get("emission_sequence")) is not None for e, _ in evs) else evs
        problems: list[str] = []
        t = _run(evs, problems)
        t.metadata["run_root"] = key
        out.append(t)
    return out


def read(obj: Any) -> Trajectory:
    """The first run of ``obj`` (an event or a list of events); see ``read_all``."""
    return read_all([obj])[0]


__all__ = ["FORMAT", "is_source", "read", "read_all"]
