"""Reader for OpenAI Responses API items (research notes traces.md §1.2).

Accepted shapes: a list of items (input items plus ``response.output`` items, as the
Agents SDK's ``to_input_list()`` returns), ``{"input": [...], "output": [...]}``, or a
``Response`` object ``{"object": "response", "output": [...], "usage": ...}``.

Mapping: input messages (``role`` user/system/developer/assistant, content a string or
``input_text`` parts) -> user/system/assistant steps; ``message`` output items -> assistant
text (the last becomes the final response); ``reasoning`` -> ``reasoning`` (summary text);
consecutive ``function_call`` / ``custom_tool_call`` items -> one ``tool_call`` step;
``function_call_output`` / ``custom_tool_call_output`` -> ``tool_result``. Calls and outputs
are linked by ``call_id``, never by the item ``id`` (``fc_...``), which differs.
``mcp_call`` -> an ``mcp`` call plus its result (``is_error`` from its ``error`` field);
hosted tool items (``web_search_call``...) -> ``server`` calls. OpenAI has no error
channel for function outputs: ``is_error`` is None there.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory
from ._util import (
    StepList,
    as_plain,
    call_args,
    finalize,
    get,
    is_seq,
    parse_args,
    result_content,
    sum_usage,
    text_of,
    tool_name,
)
from .openai_chat import parse_usage

FORMAT = "openai_responses"
_HOSTED = ("web_search_call", "file_search_call", "computer_call", "code_interpreter_call",
           "image_generation_call", "local_shell_call", "shell_call", "apply_patch_call",
           "tool_search_call")


def is_item_list(items: Any) -> bool:
    """True when a list holds at least one Responses-specific item (a typed item other than a plain message, or output_text/input_text parts)."""
    if not is_seq(items):
        return False
    for it in items:
        it = as_plain(it)
        if not isinstance(it, Mapping):
            continue
        t = it.get("type")
        if t in ("function_call", "function_call_output", "reasoning", "custom_tool_call",
                 "custom_tool_call_output", "mcp_call", *_HOSTED):
            return True
        if t == "message" or (t is None and "role" in it):
            c = it.get("content")
            if is_seq(c) and any(isinstance(p, Mapping) and p.get("type") in ("output_text", "input_text")
                                 for p in c):
                return True
    return False


def read(obj: Any, *, turn_starts: Collection[int] = ()) -> Trajectory:
    """Read a Responses item list into a ``Trajectory`` (see the module docstring).

    ``turn_starts``: indices of the items that begin a new model call's output (a chain of
    logged responses read as one list): calls on either side of one are separate steps even
    with no output between them.

    Raises ``TraceFormatError`` when ``obj`` is not an item list or response. Unknown item
    types, bad arguments and outputs with a ``call_id`` no call has are reported in
    ``metadata["problems"]``. ``total_usage`` is the response's ``usage`` when given.
    """
    obj = as_plain(obj)
    usage = None
    meta: dict[str, Any] = {}
    if is_seq(obj):
        items = list(obj)
    elif isinstance(obj, Mapping) and ("output" in obj or "input" in obj) and (
            is_seq(obj.get("output")) or is_seq(obj.get("input"))):
        inp = obj.get("input")
        items = ([{"role": "user", "content": inp}] if isinstance(inp, str) else list(inp or []))
        items += list(obj.get("output") or [])
        usage = parse_usage(obj.get("usage"))
        for k in ("id", "model"):
            if isinstance(obj.get(k), str):
                meta[k] = obj[k]
    else:
        raise TraceFormatError(f"{FORMAT}: expected a list of items or a response with 'output', got {type(obj).__name__}")
    problems: list[str] = []
    sl = StepList()
    pending: list[ToolCall] = []
    names: dict[str, str] = {}

    def flush() -> None:
        if pending:
            sl.call(list(pending))
            pending.clear()

    for i, it in enumerate(items):
        if i in turn_starts:
            flush()
        it = as_plain(it)
        w = f"items[{i}]"
        if not isinstance(it, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        t = it.get("type")
        if t in ("function_call", "custom_tool_call"):
            name = tool_name(it.get("name"), problems, w)
            cid = get(it, "call_id")
            cid = None if cid is None else str(cid)
            if cid is None:
                problems.append(f"{w}: function_call has no 'call_id'; paired by position")
            if t == "function_call":
                args, raw, err = call_args(it, ("arguments",), problems, f"{w} ({name})")
                pending.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err,
                                        tool_type="function"))
            else:
                raw_in = it.get("input")
                pending.append(ToolCall(name=name, args={"input": raw_in}, call_id=cid,
                                        raw_args=raw_in if isinstance(raw_in, str) else None, tool_type="custom"))
            if cid:
                names[cid] = name
            continue
        flush()
        if t in ("function_call_output", "custom_tool_call_output"):
            cid = it.get("call_id")
            cid = None if cid is None else str(cid)
            if cid is not None and cid not in names:
                problems.append(f"{w}: output for call_id {cid!r} matches no earlier call")
            out = result_content(it.get("output"))
            sl.result(ToolResult(call_id=cid, name=names.get(cid or "") or it.get("name"), output=out))
        elif t == "mcp_call":
            name = str(it.get("name") or "")
            args, raw, err = parse_args(it.get("arguments"), problems, f"{w} ({name})")
            cid = None if it.get("id") is None else str(it["id"])
            sl.call([ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err,
                              tool_type="mcp")])
            error = it.get("error")
            sl.result(ToolResult(call_id=cid, name=name, output=it.get("output"), is_error=bool(error),
                                 error=str(error) if error else None))
        elif t in _HOSTED:
            cid = None if it.get("id") is None else str(it["id"])
            action = it.get("action")
            sl.call([ToolCall(name=t[: -len("_call")], args=dict(action) if isinstance(action, Mapping) else {},
                              call_id=cid, tool_type="server")])
        elif t == "reasoning":
            summary = it.get("summary")
            sl.add("reasoning", content=text_of(summary) if summary else text_of(it.get("content")))
        elif t == "message" or (t is None and "role" in it):
            role = it.get("role")
            text = text_of(it.get("content"))
            if role in ("system", "developer"):
                sl.add("system", content=text)
            elif role == "user":
                sl.add("user", content=text)
            elif role == "assistant":
                sl.add("assistant", content=text)
            else:
                problems.append(f"{w}: unknown role {role!r}; skipped")
        else:
            problems.append(f"{w}: unknown item type {t!r}; skipped")
    flush()
    final_steps, final = finalize(sl.steps)
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=final_steps, final_response=final, total_usage=usage or sum_usage(final_steps),
                      source_format=FORMAT, metadata=meta)
