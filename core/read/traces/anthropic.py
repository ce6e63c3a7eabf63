"""Reader for Anthropic Messages conversations (research notes traces.md §2).

Accepted shapes: a list of ``{role, content}`` messages (content a string or a list of
blocks), ``{"messages": [...], "system"?: str|blocks}``, a single response ``Message``
(``{"type": "message", "role": "assistant", "content": [...], "usage": ...}``), or SDK
objects with ``model_dump()``.

Mapping: ``text`` -> user/assistant text; ``thinking`` -> ``reasoning``; ``tool_use`` /
``server_tool_use`` / ``mcp_tool_use`` blocks of one assistant message -> one ``tool_call``
step (``tool_type`` function / server / mcp); ``tool_result`` blocks (and the server
``*_tool_result`` blocks) inside a **user** message -> ``tool_result`` steps, and such a
message is not a user turn unless it also has text. ``is_error`` is read as given
(default False: the field is optional with default false in the API). Usage:
``input_tokens`` here = ``input_tokens + cache_read_input_tokens +
cache_creation_input_tokens`` (the OpenTelemetry GenAI rule; Anthropic's own figure
excludes cache tokens); a ``{"messages": [...], "usage": {...}}`` record's own usage is the
run's total, else the sum of the messages' usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    finalize,
    is_seq,
    mapping,
    sum_usage,
    text_of,
    to_int,
    usage_or_none,
)
from .messages import block_call, block_result, is_call_block, is_result_block

FORMAT = "anthropic"


def parse_usage(u: Any) -> Usage | None:
    """Anthropic ``usage`` -> ``Usage`` with cache reads and writes added into ``input_tokens``."""
    u = as_plain(u)
    if not isinstance(u, Mapping):
        return None
    base = to_int(u.get("input_tokens"))
    cr = to_int(u.get("cache_read_input_tokens"))
    cw = to_int(u.get("cache_creation_input_tokens"))
    inp = None if base is None and cr is None and cw is None else (base or 0) + (cr or 0) + (cw or 0)
    out = to_int(u.get("output_tokens"))
    details = mapping(u.get("output_tokens_details"))
    return usage_or_none(Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=cr,
                               cache_write_tokens=cw,
                               reasoning_tokens=to_int(details.get("thinking_tokens"))))


def read(obj: Any) -> Trajectory:
    """Read one Anthropic Messages conversation into a ``Trajectory`` (see module docstring).

    Raises ``TraceFormatError`` when ``obj`` is not a message list / wrapper / response.
    Unknown roles and block types, bad ``input`` values and results whose ``tool_use_id``
    matches no earlier ``tool_use`` are reported in ``metadata["problems"]``.
    """
    obj = as_plain(obj)
    problems: list[str] = []
    system: Any = None
    if is_seq(obj):
        messages = list(obj)
    elif isinstance(obj, Mapping) and "messages" in obj:
        messages = list(obj.get("messages") or [])
        system = obj.get("system")
    elif isinstance(obj, Mapping) and obj.get("role") == "assistant" and "content" in obj:
        messages = [obj]
    else:
        raise TraceFormatError(
            f"{FORMAT}: expected a list of messages, {{'messages': [...]}} or a Message, got {type(obj).__name__}")
    sl = StepList()
    if system is not None:
        sl.add("system", content=text_of(system))
    seen: dict[str, str] = {}
    for i, m in enumerate(messages):
        m = as_plain(m)
        w = f"messages[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        role = m.get("role")
        content = m.get("content")
        usage = parse_usage(m.get("usage"))
        model = m.get("model") if isinstance(m.get("model"), str) else None
        if role == "system":
            sl.add("system", content=text_of(content))
            continue
        if role not in ("user", "assistant"):
            problems.append(f"{w}: unknown role {role!r}; skipped")
            continue
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not is_seq(blocks):
            problems.append(f"{w}: field 'content' is neither a string nor a list; skipped")
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        for j, b in enumerate(blocks):
            b = as_plain(b)
            wb = f"{w}.content[{j}]"
            if not isinstance(b, Mapping):
                problems.append(f"{wb}: not an object; ignored")
                continue
            t = b.get("type")
            if t == "text":
                if isinstance(b.get("text"), str):
                    texts.append(b["text"])
            elif t in ("thinking", "redacted_thinking"):
                sl.add("reasoning", content=b.get("thinking") if isinstance(b.get("thinking"), str) else None)
            elif is_call_block(t) and t != "tool_call":
                c = block_call(b, problems, wb)
                if c.call_id:
                    seen[c.call_id] = c.name
                calls.append(c)
            elif is_result_block(t):
                if texts or calls:
                    _flush(sl, role, texts, calls, usage, model)
                    texts, calls, usage = [], [], None
                cid = None if b.get("tool_use_id") is None else str(b["tool_use_id"])
                if cid is not None and cid not in seen:
                    problems.append(f"{wb}: tool_result for tool_use_id {cid!r} matches no earlier tool_use")
                sl.result(block_result(b, seen.get(cid) if cid else None))
            else:
                problems.append(f"{wb}: unknown block type {t!r}; ignored")
        _flush(sl, role, texts, calls, usage, model)
    steps = sl.steps
    final_steps, final = finalize(steps)
    meta: dict[str, Any] = {"problems": problems} if problems else {}
    # a wrapper's own usage (the record's total, as OpenAI wrappers carry it) wins over the
    # sum of per-message usage, which is all a plain message list has
    top = (parse_usage(obj.get("usage")) if isinstance(obj, Mapping) and "messages" in obj
           and obj.get("usage") is not None else None)
    return Trajectory(steps=final_steps, final_response=final,
                      total_usage=top or sum_usage(final_steps), source_format=FORMAT, metadata=meta)


def _flush(sl: StepList, role: str, texts: list[str], calls: list[ToolCall],
           usage: Usage | None, model: str | None) -> None:
    text = "\n".join(texts) if texts else None
    if role == "user":
        if text is not None:
            sl.add("user", content=text)
    elif calls:
        sl.call(calls, content=text, usage=usage, model=model)
    elif text is not None or usage is not None:
        sl.add("assistant", content=text, usage=usage, model=model)
