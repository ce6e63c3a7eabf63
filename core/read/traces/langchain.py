"""Reader for LangChain messages, as objects or dicts (research notes traces.md §3).

Accepted message forms, freely mixed in one list (or under ``{"messages": [...]}``):

- ``langchain_core`` message objects (duck-typed through ``model_dump()``; langchain-core
  is never imported here, so it stays an optional extra);
- ``messages_to_dict`` output ``{"type": "ai", "data": {...}}``;
- ``dumpd`` / LangSmith "lc constructor" dicts ``{"lc": 1, "type": "constructor",
  "id": [..., "AIMessage"], "kwargs": {...}}``;
- plain dumps ``{"type": "ai"|"human"|"tool"|"system", "content": ..., ...}``.

Mapping: ``human`` -> user (Anthropic ``tool_result`` blocks inside it become results, not a
user turn); ``system`` -> system; ``ai`` -> a ``tool_call`` step when it has calls, else
assistant text. Calls come from ``tool_calls`` (``{name, args, id}``), then
``invalid_tool_calls`` (kept with ``args=None``, ``raw_args`` and the error), then content
blocks of type ``tool_use`` / ``server_tool_use`` / ``mcp_tool_use`` / ``tool_call`` whose id is
not already present (Anthropic
AIMessages carry each call twice; duplicates are dropped by id), then
``additional_kwargs.tool_calls`` (raw OpenAI form) when nothing else gave calls.
``tool`` -> ``tool_result`` linked by ``tool_call_id``; ``is_error = status == "error"``
(``status`` absent means LangChain's default ``"success"``). ``usage_metadata`` ->
``Usage`` (LangChain's ``input_tokens`` already include cache tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import TraceFormatError
from ...model import Step, ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    call_args,
    finalize,
    get,
    is_seq,
    mapping,
    result_content,
    sum_usage,
    text_of,
    to_int,
    tool_name,
    usage_or_none,
)
from .messages import block_call, block_result, is_call_block, is_result_block, openai_calls

FORMAT = "langchain"
_CLASS_TYPES = {
    "HumanMessage": "human", "HumanMessageChunk": "human",
    "AIMessage": "ai", "AIMessageChunk": "ai",
    "ToolMessage": "tool", "ToolMessageChunk": "tool",
    "SystemMessage": "system", "SystemMessageChunk": "system",
    "FunctionMessage": "function", "ChatMessage": "chat",
}
TYPES = ("human", "user", "ai", "assistant", "tool", "system", "function", "chat")


def normalize_message(m: Any) -> dict[str, Any] | None:
    """Any LangChain message form -> a plain dict with a ``type`` key; None if unrecognised."""
    m = as_plain(m)
    if not isinstance(m, Mapping):
        return None
    if m.get("lc") == 1 and m.get("type") == "constructor" and is_seq(m.get("id")):
        cls = str(m["id"][-1]) if m["id"] else ""
        kw = dict(m["kwargs"]) if isinstance(m.get("kwargs"), Mapping) else {}
        kw.setdefault("type", _CLASS_TYPES.get(cls, kw.get("type")))
        return kw
    if isinstance(m.get("data"), Mapping) and isinstance(m.get("type"), str) and "content" not in m:
        d = dict(m["data"])
        d.setdefault("type", m["type"])
        return d
    if isinstance(m.get("type"), str):
        return dict(m)
    return None


def is_message_list(msgs: Any) -> bool:
    """True when every element normalises to a message dict of a known LangChain type."""
    if not is_seq(msgs) or not msgs:
        return False
    for m in msgs:
        d = normalize_message(m)
        if d is None or d.get("type") not in TYPES:
            return False
    return True


def parse_usage(u: Any) -> Usage | None:
    """LangChain ``UsageMetadata`` -> ``Usage`` (cache and reasoning details kept)."""
    u = as_plain(u)
    if not isinstance(u, Mapping):
        return None
    ind = mapping(u.get("input_token_details"))
    outd = mapping(u.get("output_token_details"))
    return usage_or_none(Usage(
        input_tokens=to_int(u.get("input_tokens")), output_tokens=to_int(u.get("output_tokens")),
        total_tokens=to_int(u.get("total_tokens")), cache_read_tokens=to_int(ind.get("cache_read")),
        cache_write_tokens=to_int(ind.get("cache_creation")),
        reasoning_tokens=to_int(outd.get("reasoning"))))


def _ai_calls(d: Mapping[str, Any], problems: list[str], w: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    ids: set[str] = set()
    for j, tc in enumerate(d.get("tool_calls") or ()):
        tc = as_plain(tc)
        if not isinstance(tc, Mapping):
            problems.append(f"{w}.tool_calls[{j}]: not an object; ignored")
            continue
        name = tool_name(tc.get("name"), problems, f"{w}.tool_calls[{j}]")
        args, raw, err = call_args(tc, ("args",), problems, f"{w}.tool_calls[{j}] ({name})")
        cid = None if tc.get("id") is None else str(tc["id"])
        if cid:
            ids.add(cid)
        calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err,
                              tool_type="function"))
    for j, tc in enumerate(d.get("invalid_tool_calls") or ()):
        tc = as_plain(tc)
        if not isinstance(tc, Mapping):
            continue
        cid = None if tc.get("id") is None else str(tc["id"])
        if cid and cid in ids:
            continue
        raw = tc.get("args")
        err = str(tc.get("error") or "invalid tool call")
        problems.append(f"{w}.invalid_tool_calls[{j}]: {err}")
        if cid:
            ids.add(cid)
        calls.append(ToolCall(name=str(tc.get("name") or ""), args=None, call_id=cid,
                              raw_args=raw if isinstance(raw, str) else None, args_parse_error=err,
                              tool_type="function"))
    content = d.get("content")
    if is_seq(content):
        for j, b in enumerate(content):
            b = as_plain(b)
            if not isinstance(b, Mapping) or not is_call_block(b.get("type")):
                continue
            cid = None if b.get("id") is None else str(b["id"])
            if cid and cid in ids:
                continue
            c = block_call(b, problems, f"{w}.content[{j}]")
            if cid:
                ids.add(cid)
            calls.append(c)
    if not calls:
        ak = d.get("additional_kwargs")
        raw_tcs = ak.get("tool_calls") if isinstance(ak, Mapping) else None
        if is_seq(raw_tcs):
            calls = openai_calls({"tool_calls": raw_tcs}, problems, f"{w}.additional_kwargs")
    return calls


def read_messages(msgs: Sequence[Any], problems: list[str], *, error_channel: bool = True,
                  where: str = "messages") -> list[Step]:
    """LangChain-style messages -> steps (no final-response marking).

    ``error_channel`` False (RAGAS) makes every ``ToolResult.is_error`` None. Unknown
    message types and non-message entries are skipped and reported.
    """
    sl = StepList()
    seen: dict[str, str] = {}
    for i, m in enumerate(msgs):
        w = f"{where}[{i}]"
        d = normalize_message(m)
        if d is None:
            problems.append(f"{w}: not a message object; skipped")
            continue
        t = d.get("type")
        if t == "chat":
            role = d.get("role")
            t = {"user": "human", "assistant": "ai"}.get(str(role), role)
        content = d.get("content")
        if t in ("human", "user"):
            blocks = content if is_seq(content) else ()
            text = text_of(content)
            for b in blocks:
                b = as_plain(b)
                if isinstance(b, Mapping) and is_result_block(b.get("type")):
                    cid = None if b.get("tool_use_id") is None else str(b["tool_use_id"])
                    sl.result(block_result(b, seen.get(cid or ""), error_channel=error_channel))
            if text is not None or not blocks:
                sl.add("user", content=text)
        elif t == "system":
            sl.add("system", content=text_of(content))
        elif t in ("ai", "assistant"):
            calls = _ai_calls(d, problems, w)
            text = text_of(content)
            rm = mapping(d.get("response_metadata"))
            model = get(rm, "model_name", "model")
            usage = parse_usage(d.get("usage_metadata"))
            for c in calls:
                if c.call_id:
                    seen[c.call_id] = c.name
            if calls:
                sl.call(calls, content=text or None, usage=usage, model=model if isinstance(model, str) else None)
            else:
                sl.add("assistant", content=text, usage=usage, model=model if isinstance(model, str) else None)
        elif t in ("tool", "function"):
            cid = d.get("tool_call_id")
            cid = None if cid is None else str(cid)
            if cid is not None and cid not in seen:
                problems.append(f"{w}: tool result for call id {cid!r} matches no earlier call")
            name = d.get("name") if isinstance(d.get("name"), str) else seen.get(cid or "")
            out = result_content(content)
            status = d.get("status")
            is_err = (status == "error") if error_channel else None
            sl.result(ToolResult(call_id=cid, name=name, output=out, is_error=is_err,
                                 error=out if is_err and isinstance(out, str) else None))
        else:
            problems.append(f"{w}: unknown message type {t!r}; skipped")
    return sl.steps


def read(obj: Any) -> Trajectory:
    """Read a list of LangChain messages (objects or dicts) into a ``Trajectory``.

    Raises ``TraceFormatError`` when ``obj`` is not a list (or ``{"messages": [...]}``).
    """
    obj = as_plain(obj) if not is_seq(obj) else obj
    if isinstance(obj, Mapping) and is_seq(obj.get("messages")):
        obj = obj["messages"]
    if not is_seq(obj):
        raise TraceFormatError(f"{FORMAT}: expected a list of messages, got {type(obj).__name__}")
    problems: list[str] = []
    steps = read_messages(obj, problems)
    final_steps, final = finalize(steps)
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      source_format=FORMAT, metadata={"problems": problems} if problems else {})
