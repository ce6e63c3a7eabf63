"""Reader for DeepEval tool calls (research notes traces.md §6.1; deepeval 4.3 ``ToolCall``).

Accepted: a list of ``ToolCall`` objects or dicts ``{name, input_parameters | inputParameters,
output?, description?, reasoning?}``, or an ``LLMTestCase``-like object/dict with ``input``,
``actual_output``, ``tools_called`` and optionally ``input_token_count``,
``output_token_count``, ``token_cost`` (USD) and ``completion_time`` (seconds).

Each call is its own ``tool_call`` step, followed by a ``tool_result`` when ``output`` is
present. DeepEval calls have no id and no error flag: ``call_id`` and ``is_error`` are None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TraceFormatError
from ..model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    finalize,
    get,
    is_seq,
    parse_args,
    to_float,
    to_int,
    tool_name,
    usage_or_none,
)

FORMAT = "deepeval"


def is_tool_call(c: Any) -> bool:
    """True for a DeepEval ToolCall object or dict (a ``name`` and an ``input_parameters`` / ``inputParameters`` key)."""
    if isinstance(c, Mapping):
        return isinstance(c.get("name"), str) and ("input_parameters" in c or "inputParameters" in c) \
            and "role" not in c
    return type(c).__module__.startswith("deepeval") and hasattr(c, "name")


def read(obj: Any) -> Trajectory:
    """Read DeepEval tool calls (or a test case) into a ``Trajectory``.

    Raises ``TraceFormatError`` when ``obj`` is neither a list nor has ``tools_called``.
    """
    calls_src: Any = obj
    usage = None
    cost = latency = None
    user = final = None
    if not is_seq(obj):
        calls_src = get(obj, "tools_called", "toolsCalled")
        if calls_src is None and not is_seq(calls_src):
            raise TraceFormatError(f"{FORMAT}: expected a list of ToolCall or a test case with 'tools_called', "
                                   f"got {type(obj).__name__}")
        user = get(obj, "input")
        final = get(obj, "actual_output", "actualOutput")
        usage = usage_or_none(Usage(input_tokens=to_int(get(obj, "input_token_count")),
                                    output_tokens=to_int(get(obj, "output_token_count"))))
        cost = to_float(get(obj, "token_cost"))
        t = to_float(get(obj, "completion_time"))
        latency = t * 1000.0 if t is not None else None
    if not is_seq(calls_src):
        raise TraceFormatError(f"{FORMAT}: 'tools_called' is not a list")
    problems: list[str] = []
    sl = StepList()
    if isinstance(user, str):
        sl.add("user", content=user)
    for i, c in enumerate(calls_src):
        w = f"tools_called[{i}]"
        name = tool_name(get(c, "name"), problems, w)
        params = get(c, "input_parameters", "inputParameters")
        args, raw, err = parse_args(params, problems, f"{w} ({name})")
        sl.call([ToolCall(name=name, args=args, raw_args=raw, args_parse_error=err,
                          tool_type="mcp" if str(get(c, "type", default="")).upper().endswith("MCP") else "function")])
        out = get(c, "output", default=_NONE)
        if out is not _NONE:
            sl.result(ToolResult(call_id=None, name=name, output=as_plain(out)))
    if isinstance(final, str):
        sl.add("assistant", content=final)
    final_steps, final_text = finalize(sl.steps)
    return Trajectory(steps=final_steps, final_response=final_text, total_usage=usage, total_cost_usd=cost,
                      total_latency_ms=latency, source_format=FORMAT,
                      metadata={"problems": problems} if problems else {})


_NONE = object()
