"""Reader for ATIF trajectories (Agent Trajectory Interchange Format, Harbor; ``ATIF-v1.x``).

Accepted: one trajectory object ``{"schema_version": "ATIF-v1.5", "session_id", "agent",
"steps": [...], "final_metrics"}``. Each step has ``step_id``, ``source`` (``system``,
``user``, ``agent``), ``message``, and for agent steps ``reasoning_content``, ``tool_calls``
(``tool_call_id``, ``function_name``, ``arguments``), ``observation.results``
(``source_call_id``, ``content``), ``metrics`` (``prompt_tokens``, ``completion_tokens``,
``cached_tokens``, ``cost_usd``) and ``model_name``.

Mapping: an agent step is one model turn: its calls stay in one ``tool_call`` step (with its
message as content, its usage and cost), followed by one ``tool_result`` per observation
result. ATIF has no error flag on results (``is_error`` None). Usage and cost are summed over
the steps' ``metrics``; ``final_metrics`` is used only when no step has metrics. The final
response is the message of the last agent step (ATIF agents often end with a ``finish``
call whose step also carries the closing message).
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
    figure,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    text_of,
    to_float,
    to_int,
    to_unix_seconds,
    usage_or_none,
)

FORMAT = "atif"


def is_trajectory(obj: Any) -> bool:
    """True for an ATIF object: ``schema_version`` ``ATIF-...``, or a ``steps`` list whose
    items have ``step_id`` and ``source``."""
    if not isinstance(obj, Mapping):
        return False
    sv = obj.get("schema_version")
    if isinstance(sv, str) and sv.upper().startswith("ATIF"):
        return True
    steps = obj.get("steps")
    return is_seq(steps) and bool(steps) and all(
        isinstance(s, Mapping) and "step_id" in s and "source" in s for s in steps)


def _usage(m: Mapping[str, Any]) -> Usage | None:
    return usage_or_none(Usage(input_tokens=to_int(m.get("prompt_tokens")),
                               output_tokens=to_int(m.get("completion_tokens")),
                               cache_read_tokens=to_int(m.get("cached_tokens"))))


def read(obj: Any) -> Trajectory:
    """One ATIF trajectory. Raises ``TraceFormatError`` when ``obj`` is not one."""
    d = as_plain(obj)
    if not is_trajectory(d):
        raise TraceFormatError(f"{FORMAT}: expected an ATIF trajectory with 'schema_version' and 'steps'")
    problems: list[str] = []
    sl = StepList()
    last_agent_msg: str | None = None
    for i, st in enumerate(d.get("steps") or ()):
        w = f"steps[{i}]"
        if not isinstance(st, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        src = st.get("source")
        msg = text_of(st.get("message"))
        t = to_unix_seconds(st.get("timestamp"))
        kw: dict[str, Any] = {"start_time": t} if t is not None else {}
        if src in ("system", "user"):
            sl.add(src, content=msg, **kw)
            continue
        if src != "agent":
            problems.append(f"{w}: unknown source {src!r}; skipped")
            continue
        m = mapping(st.get("metrics"))
        if isinstance(st.get("model_name"), str):
            kw["model"] = st["model_name"]
        if st.get("reasoning_content"):
            sl.add("reasoning", content=text_of(st["reasoning_content"]), **kw)
        calls: list[ToolCall] = []
        for j, tc in enumerate(st.get("tool_calls") or ()):
            cw = f"{w}.tool_calls[{j}]"
            tc = mapping(tc)
            name = tc.get("function_name")
            if not isinstance(name, str) or not name:
                problems.append(f"{cw}: field 'function_name' is missing")
                name = "" if name is None else str(name)
            err: str | None
            if "arguments" not in tc or tc["arguments"] is None:
                problems.append(f"{cw}: field 'arguments' is missing; arguments unknown")
                args, raw, err = None, None, "arguments not recorded"
            else:
                args, raw, err = parse_args(tc["arguments"], problems, cw)
            cid = tc.get("tool_call_id")
            calls.append(ToolCall(name=name, args=args, call_id=str(cid) if cid is not None else None,
                                  raw_args=raw, args_parse_error=err))
        usage, cost = _usage(m), figure(m.get("cost_usd"), f"{w}.cost_usd", problems)
        if calls:
            sl.call(calls, content=msg, usage=usage, cost_usd=cost, **kw)
        else:
            sl.add("assistant", content=msg, usage=usage, cost_usd=cost, **kw)
        last_agent_msg = msg if msg else last_agent_msg
        names = {c.call_id: c.name for c in calls if c.call_id}
        for j, r in enumerate(mapping(st.get("observation")).get("results") or ()):
            r = mapping(r)
            cid = r.get("source_call_id")
            cid = str(cid) if cid is not None else None
            if cid is not None and cid not in names:
                problems.append(f"{w}.observation.results[{j}]: 'source_call_id' {cid!r} matches no call of the step")
            content = r.get("content")
            sl.result(ToolResult(call_id=cid, name=names.get(cid or ""),
                                 output=text_of(content) if is_seq(content) else content))
    steps = list(sl.steps)
    last = steps[-1] if steps else None
    final = last_agent_msg
    if last is not None and last.kind == "assistant" and last.content:
        steps[-1] = replace(last, kind="final_response")
    fs = tuple(steps)
    total = sum_usage(fs)
    costs = [s.cost_usd for s in fs if s.cost_usd is not None]
    fm = mapping(d.get("final_metrics"))
    if total is None and fm:
        total = usage_or_none(Usage(input_tokens=to_int(fm.get("total_prompt_tokens")),
                                    output_tokens=to_int(fm.get("total_completion_tokens")),
                                    cache_read_tokens=to_int(fm.get("total_cached_tokens"))))
    cost = sum(costs) if costs else to_float(fm.get("total_cost_usd"))
    agent = mapping(d.get("agent"))
    meta: dict[str, Any] = {}
    if isinstance(agent.get("name"), str):
        meta["agent_name"] = agent["name"]
    if problems:
        meta["problems"] = problems
    sid = d.get("session_id")
    return Trajectory(steps=fs, final_response=final, total_usage=total, total_cost_usd=cost,
                      source_format=FORMAT, session_id=str(sid) if sid is not None else None, metadata=meta)


__all__ = ["FORMAT", "is_trajectory", "read"]
