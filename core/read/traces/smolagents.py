"""Reader for smolagents runs: ``RunResult`` (``agent.run(..., return_full_result=True)``) and
agent memory steps (``agent.memory.get_full_steps()``, or ``[s.dict() for s in memory.steps]``).

Accepted: a ``RunResult`` as its fields ``{output, state, steps, token_usage, timing}`` (the
object itself too), or a list of memory step dicts. Steps (smolagents 1.2x ``memory.py``):

- ``TaskStep`` ``{task}``: the user's request (a ``user`` step);
- ``ActionStep`` ``{step_number, tool_calls, model_output_message, observations, error,
  token_usage, timing, is_final_answer, code_action}``: one model turn. Its calls are
  ``tool_calls`` (``{id, function: {name, arguments}}``), or, when a tool raised (smolagents
  then records no ``tool_calls``), the calls of ``model_output_message.tool_calls``. The calls
  of one step are one ``tool_call`` step (smolagents runs them in parallel). Results: the
  step's ``observations`` text; with several calls it is their observations joined by new
  lines in call order, so it is split by line when it has exactly one line per call (else it
  goes whole to the first call, with a problem). An ``error`` (``AgentToolExecutionError``
  naming the tool) fails the result of the call it names; other errors (parsing, max steps)
  are problems. ``token_usage`` is the step's usage, ``timing.duration`` its latency.
- the ``final_answer`` tool is the run's final response, not a tool call: its ``answer``
  argument (else the ``RunResult.output``) is the final response.
- ``PlanningStep`` ``{plan}``: a ``reasoning`` step; ``FinalAnswerStep`` ``{output}``: the
  final response when no ``final_answer`` call gives one.

The run's latency is ``timing.duration`` (seconds) of a ``RunResult``, else the sum of the
steps' durations. smolagents gives no call ids of its own beyond the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    text_of,
    to_float,
    to_int,
    usage_or_none,
)

FORMAT = "smolagents"
_RUN_KEYS = {"output", "state", "steps", "token_usage", "timing"}
_FINAL_TOOL = "final_answer"
_TOOL_ERROR = re.compile(r"^Error executing tool '([^']+)'")


def _is_step(x: Any) -> bool:
    return isinstance(x, Mapping) and (
        ("step_number" in x and "timing" in x and ("tool_calls" in x or "model_output_message" in x))
        or ("task" in x and "task_images" in x) or ("plan" in x and "model_output_message" in x))


def is_memory(obj: Any) -> bool:
    """True for a list of smolagents memory step dicts (at least one action or task step, all
    of them steps or ``{output}`` final-answer steps)."""
    if not is_seq(obj) or not obj:
        return False
    items = [as_plain(x) for x in obj]
    return any(_is_step(x) for x in items) and all(
        _is_step(x) or (isinstance(x, Mapping) and set(x) == {"output"}) for x in items)


def is_run_result(obj: Any) -> bool:
    """True for a ``RunResult`` (its fields as a mapping, or the object)."""
    if type(obj).__name__ == "RunResult" and type(obj).__module__.startswith("smolagents"):
        return True
    return isinstance(obj, Mapping) and _RUN_KEYS <= set(obj) and is_memory(obj.get("steps"))


def _usage(u: Any) -> Usage | None:
    u = as_plain(u)
    if not isinstance(u, Mapping):
        return None
    return usage_or_none(Usage(input_tokens=to_int(u.get("input_tokens")), output_tokens=to_int(u.get("output_tokens")),
                               total_tokens=to_int(u.get("total_tokens"))))


def _calls(step: Mapping[str, Any], problems: list[str], w: str) -> list[ToolCall]:
    src = step.get("tool_calls") or mapping(step.get("model_output_message")).get("tool_calls") or ()
    out: list[ToolCall] = []
    for j, tc in enumerate(src):
        tc = as_plain(tc)
        if not isinstance(tc, Mapping):
            problems.append(f"{w}.tool_calls[{j}]: not an object; skipped")
            continue
        fn = mapping(tc.get("function"))
        name = fn.get("name", tc.get("name"))
        if not isinstance(name, str) or not name:
            problems.append(f"{w}.tool_calls[{j}]: call has no name")
            name = ""
        args, raw, err = parse_args(fn.get("arguments", tc.get("arguments")), problems, f"{w}.tool_calls[{j}] ({name})")
        out.append(ToolCall(name=name, args=args, call_id=None if tc.get("id") is None else str(tc["id"]),
                            raw_args=raw, args_parse_error=err))
    return out


def _timing(step: Mapping[str, Any]) -> tuple[float | None, float | None, float | None]:
    t = mapping(step.get("timing"))
    s, e = to_float(t.get("start_time")), to_float(t.get("end_time"))
    d = to_float(t.get("duration"))
    if d is None and s is not None and e is not None:
        d = e - s
    return s, e, None if d is None else d * 1000.0


def _action(sl: StepList, step: Mapping[str, Any], problems: list[str], w: str) -> str | None:
    """The steps of one ActionStep; returns the final answer when it called ``final_answer``."""
    calls = _calls(step, problems, w)
    final = [c for c in calls if c.name == _FINAL_TOOL]
    calls = [c for c in calls if c.name != _FINAL_TOOL]
    start, end, lat = _timing(step)
    usage = _usage(step.get("token_usage"))
    kw: dict[str, Any] = {"usage": usage, "start_time": start, "end_time": end, "latency_ms": lat}
    text = step.get("model_output")
    text = text if isinstance(text, str) and text.strip() else text_of(mapping(step.get("model_output_message")).get("content"))
    err = mapping(step.get("error"))
    failed_tool = None
    if err:
        m = _TOOL_ERROR.match(str(err.get("message") or ""))
        failed_tool = m.group(1) if m else None
        if failed_tool is None or not any(c.name == failed_tool for c in calls):
            problems.append(f"{w}: {err.get('type') or 'error'}: {str(err.get('message'))[:200]}")
            failed_tool = None
    if not calls:
        if final:
            ans = (final[0].args or {}).get("answer")
            sl.add("final_response", content=ans if isinstance(ans, str) else text_of(ans) if ans is not None
                   else step.get("observations"), **kw)
            return sl.steps[-1].content
        sl.add("assistant", content=text, **kw)
        return None
    sl.call(calls, content=text, **kw)
    obs = step.get("observations")
    outs: list[Any] = [None] * len(calls)
    if failed_tool is None and isinstance(obs, str):
        lines = obs.split("\n")
        if len(calls) == 1:
            outs = [obs]
        elif len(lines) == len(calls):
            outs = list(lines)
        else:
            outs[0] = obs
            problems.append(f"{w}: the observations of {len(calls)} parallel calls are one text of "
                            f"{len(lines)} lines; given whole to the first call")
    for c, out in zip(calls, outs):
        if failed_tool is not None and c.name == failed_tool:
            sl.result(ToolResult(call_id=c.call_id, name=c.name, output=str(err.get("message")), is_error=True,
                                 error=str(err.get("message")).split("\n")[0]))
        elif failed_tool is None:
            sl.result(ToolResult(call_id=c.call_id, name=c.name, output=out, is_error=False))
    if final:
        ans = (final[0].args or {}).get("answer")
        if ans is not None:
            return ans if isinstance(ans, str) else text_of(ans)
    return None


def _read_steps(steps: list[Any], output: Any, problems: list[str]) -> tuple[StepList, str | None, float]:
    sl = StepList()
    final: str | None = None
    total_ms = 0.0
    for i, raw in enumerate(steps):
        st = as_plain(raw)
        w = f"steps[{i}]"
        if not isinstance(st, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        if "task" in st and "step_number" not in st:
            if isinstance(st.get("task"), str):
                sl.add("user", content=st["task"])
        elif "plan" in st:
            sl.add("reasoning", content=str(st.get("plan")), usage=_usage(st.get("token_usage")))
        elif set(st) == {"output"}:
            if final is None and st.get("output") is not None:
                final = st["output"] if isinstance(st["output"], str) else text_of(st["output"])
        else:
            got = _action(sl, st, problems, w)
            final = got if got is not None else final
            lat = _timing(st)[2]
            total_ms += lat or 0.0
    if final is None and output is not None:
        final = output if isinstance(output, str) else text_of(output)
        if final is not None:
            sl.add("final_response", content=final)
    return sl, final, total_ms


def read(obj: Any) -> Trajectory:
    """Read a smolagents ``RunResult`` or memory step list into a ``Trajectory``.

    Raises ``TraceFormatError`` when ``obj`` is neither.
    """
    plain = as_plain(obj) if not is_seq(obj) else obj
    if type(obj).__name__ == "RunResult":
        plain = {k: getattr(obj, k, None) for k in _RUN_KEYS}
    problems: list[str] = []
    meta: dict[str, Any] = {}
    if isinstance(plain, Mapping) and is_memory(plain.get("steps")):
        sl, final, total_ms = _read_steps(list(plain["steps"]), plain.get("output"), problems)
        dur = to_float(mapping(as_plain(plain.get("timing"))).get("duration"))
        latency = dur * 1000.0 if dur is not None else total_ms or None
        if isinstance(plain.get("state"), str):
            meta["state"] = plain["state"]
            if plain["state"] != "success":
                problems.append(f"run ended in state {plain['state']!r}")
    elif is_memory(plain):
        sl, final, total_ms = _read_steps(list(plain), None, problems)
        latency = total_ms or None
    else:
        raise TraceFormatError(f"{FORMAT}: expected a RunResult ({{output, state, steps, token_usage, timing}}) "
                               "or a list of agent memory steps")
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=tuple(sl.steps), final_response=final, total_usage=sum_usage(sl.steps),
                      total_latency_ms=latency, source_format=FORMAT, metadata=meta)


__all__ = ["FORMAT", "is_memory", "is_run_result", "read"]
