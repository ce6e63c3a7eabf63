"""Reader for OpenAI Chat Completions messages (research notes traces.md §1.1).

Accepted shapes: a list of message dicts (or SDK message objects); ``{"messages": [...]}``
optionally with ``usage`` / ``model``; a ``ChatCompletion`` response ``{"choices": [...],
"usage": ...}``; or both (``messages`` then the first choice's message appended).

Mapping: ``system``/``developer`` -> ``system`` step; ``user`` -> ``user``; an assistant
message with ``tool_calls`` (function or custom) or a legacy ``function_call`` -> one
``tool_call`` step (parallel calls stay together; its text, if any, is the step content);
an assistant text message -> ``assistant`` (the last one becomes ``final_response``);
``role: tool`` -> ``tool_result`` linked by ``tool_call_id``; legacy ``role: function`` ->
``tool_result`` with no id (paired by position/name). OpenAI has no error channel, so
``ToolResult.is_error`` is None unless a caller-supplied convention says otherwise
(tau-bench's, see ``trajcheck.read.traces.tau_bench``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import TraceFormatError
from ...model import Step, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    finalize,
    get,
    is_seq,
    result_content,
    sum_usage,
    text_of,
    to_int,
    usage_or_none,
)
from .messages import openai_calls as _calls_of

FORMAT = "openai_chat"
ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def parse_usage(u: Any) -> Usage | None:
    """OpenAI ``usage`` -> ``Usage``.

    Chat fields ``prompt_tokens`` / ``completion_tokens`` / ``total_tokens`` (and the
    Responses names ``input_tokens`` / ``output_tokens``); ``prompt_tokens_details.cached_tokens``
    -> ``cache_read_tokens`` (already included in the prompt count, OpenAI docs),
    ``cache_write_tokens``; ``completion_tokens_details.reasoning_tokens`` -> ``reasoning_tokens``.
    None when ``u`` has no counts.
    """
    u = as_plain(u)
    if not isinstance(u, Mapping):
        return None
    pin = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    pout = u.get("completion_tokens_details") or u.get("output_tokens_details") or {}
    pin = pin if isinstance(pin, Mapping) else {}
    pout = pout if isinstance(pout, Mapping) else {}
    return usage_or_none(Usage(
        input_tokens=to_int(u.get("prompt_tokens", u.get("input_tokens"))),
        output_tokens=to_int(u.get("completion_tokens", u.get("output_tokens"))),
        total_tokens=to_int(u.get("total_tokens")),
        cache_read_tokens=to_int(pin.get("cached_tokens")),
        cache_write_tokens=to_int(pin.get("cache_write_tokens")),
        reasoning_tokens=to_int(pout.get("reasoning_tokens")),
    ))


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def read_messages(
    messages: Sequence[Any],
    problems: list[str],
    *,
    tool_error: Callable[[Any], bool | None] | None = None,
    where: str = "messages",
) -> list[Step]:
    """Turn OpenAI chat messages into steps (no final-response marking).

    ``problems`` receives one string per tolerated fault, located by a 0-based path from
    ``where`` (the name of the message list), e.g. ``messages[2].tool_calls[1] (search)``: a non-object message, an unknown role (the message is skipped), arguments that
    are not valid JSON (the call is kept with ``args=None``), a tool result whose
    ``tool_call_id`` matches no earlier call (kept, reported). ``tool_error(content)``
    supplies ``ToolResult.is_error`` for sources with an error convention; default None.
    """
    sl = StepList()
    seen_ids: set[str | None] = set()  # a set: a list made the join quadratic (100k messages: 13 s)
    for i, m in enumerate(messages):
        m = as_plain(m)
        w = f"{where}[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not an object ({type(m).__name__}); skipped")
            continue
        role = m.get("role")
        usage = parse_usage(m.get("usage")) if m.get("usage") is not None else None
        model = m.get("model") if isinstance(m.get("model"), str) else None
        if role in ("system", "developer"):
            sl.add("system", content=text_of(m.get("content")))
        elif role == "user":
            sl.add("user", content=text_of(m.get("content")))
        elif role == "assistant":
            calls = _calls_of(m, problems, w)
            text = text_of(m.get("content"))
            if text is None and isinstance(m.get("refusal"), str):
                text = m["refusal"]
            reasoning = m.get("reasoning_content") or m.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                sl.add("reasoning", content=reasoning)
            if calls:
                seen_ids.update(c.call_id for c in calls)
                sl.call(calls, content=text or None, usage=usage, model=model)
            else:
                sl.add("assistant", content=text, usage=usage, model=model)
        elif role in ("tool", "function"):
            cid = _str(m.get("tool_call_id")) if role == "tool" else None
            if role == "tool" and cid is None:
                problems.append(f"{w}: tool message has no 'tool_call_id'; paired by position")
            elif cid is not None and cid not in seen_ids:
                problems.append(f"{w}: tool result for call id {cid!r} matches no earlier call")
            content = m.get("content")
            out = result_content(content)
            name = m.get("name")
            sl.result(ToolResult(call_id=cid, name=name if isinstance(name, str) else None, output=out,
                                 is_error=tool_error(out) if tool_error else None))
        else:
            problems.append(f"{w}: unknown role {role!r}; skipped")
    return sl.steps


def read(obj: Any) -> Trajectory:
    """Read one OpenAI Chat Completions conversation into a ``Trajectory``.

    ``obj``: see the module docstring. Raises ``TraceFormatError`` when ``obj`` is neither a
    message list nor a dict with ``messages`` or ``choices``. Usage: a top-level ``usage``
    (response or wrapper) becomes ``total_usage``; otherwise the sum of per-message
    ``usage`` fields. Tolerated faults go to ``metadata["problems"]``.
    """
    obj = as_plain(obj)
    problems: list[str] = []
    top_usage: Usage | None = None
    meta: dict[str, Any] = {}
    if is_seq(obj):
        messages = list(obj)
    elif isinstance(obj, Mapping) and ("messages" in obj or "choices" in obj):
        messages = list(obj.get("messages") or [])
        choices = obj.get("choices")
        if is_seq(choices) and choices:
            msg = get(as_plain(choices[0]), "message")
            if msg is not None:
                msg = dict(as_plain(msg))
                if obj.get("model") and "model" not in msg:
                    msg["model"] = obj["model"]
                messages.append(msg)
        top_usage = parse_usage(obj.get("usage"))
        for k in ("id", "model"):
            if isinstance(obj.get(k), str):
                meta[k] = obj[k]
    else:
        raise TraceFormatError(
            f"{FORMAT}: expected a list of chat messages or an object with 'messages'/'choices', "
            f"got {type(obj).__name__}")
    steps = read_messages(messages, problems)
    final_steps, final = finalize(steps)
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=final_steps, final_response=final,
                      total_usage=top_usage or sum_usage(final_steps),
                      source_format=FORMAT, metadata=meta)
