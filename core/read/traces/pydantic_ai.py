"""Reader for pydantic-ai message histories (``result.all_messages_json()``,
``ModelMessagesTypeAdapter``).

Accepted: the JSON list of ``ModelRequest`` / ``ModelResponse`` messages (``{"kind":
"request" | "response", "parts": [...]}``), a ``{"messages": [...]}`` wrapper, or the message
objects themselves (dumped with pydantic-ai's own ``ModelMessagesTypeAdapter``).

Part mapping (``pydantic_ai.messages``, by ``part_kind``):

- request parts: ``system-prompt`` -> ``system`` step (a request's ``instructions`` too, once
  per distinct text); ``user-prompt`` -> ``user``; ``tool-return`` -> a result, failed unless
  its ``outcome`` is ``success`` (``failed``, ``denied``, ``interrupted``, ``retried``: the
  SDK's ``ModelRetry`` and argument-validation failures are ``retried``); ``retry-prompt``
  (older versions) with a ``tool_name`` -> a failed result of that call, its ``content`` (text
  or validation errors) the error; a ``retry-prompt`` without a tool answers no call and is
  recorded as a ``user`` step.
- a response is one model call: its ``tool-call`` parts (``tool_name``, ``args`` as an object
  or a JSON string, ``tool_call_id``) stay in one step with its ``text`` parts, ``thinking``
  parts are ``reasoning`` steps, ``builtin-tool-call`` / ``-return`` are server-side calls and
  their results. ``args`` null is pydantic-ai's no-argument call (``{}``).
- a response's ``usage`` is that model call's usage (``input_tokens`` already includes cache
  reads and writes in pydantic-ai; older ``request_tokens`` / ``response_tokens`` names too),
  ``usage.cost`` when numeric is its cost in USD, ``model_name`` its model.

The final response is the text of the last response that called no tool.

Calls that are not calls of the run (as pydantic-evals' span evaluators count, where these
have no tool span): an output tool's call (``final_result``; its return is pydantic-ai's
``"Final result processed."`` or ``"Output tool not used - ..."``) is the run's output -- its
arguments, as JSON text, are the final response when no text answers -- and a function tool
call pydantic-ai skipped (``"Tool not executed - ..."``) did not run; both leave the steps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    figure,
    is_seq,
    mapping,
    mark_last_reply,
    parse_args,
    sum_usage,
    text_of,
    to_int,
    to_unix_seconds,
    usage_or_none,
)

FORMAT = "pydantic_ai"
_KINDS = ("request", "response")
# the tool-return texts pydantic-ai writes for output tools and for tools it did not run
_OUTPUT_RETURNS = ("Final result processed.", "Output tool not used")
_SKIPPED_RETURN = "Tool not executed"


def _not_calls(msgs: list[Any]) -> tuple[set[str], set[str]]:
    """Call ids of output tool calls and of skipped tool calls (the module doc), by their returns."""
    outputs: set[str] = set()
    skipped: set[str] = set()
    for m in msgs:
        m = mapping(m)
        if m.get("kind") != "request":
            continue
        for p in m.get("parts") or ():
            p = mapping(p)
            c, cid = p.get("content"), p.get("tool_call_id")
            if p.get("part_kind") != "tool-return" or not isinstance(c, str) or cid is None:
                continue
            if c.startswith(_OUTPUT_RETURNS):
                outputs.add(str(cid))
            elif c.startswith(_SKIPPED_RETURN):
                skipped.add(str(cid))
    return outputs, skipped


def _dump(msgs: list[Any]) -> list[Any]:
    """pydantic-ai message objects as JSON-ready dicts (the SDK's own serialiser); dicts as is."""
    if msgs and all(isinstance(m, Mapping) for m in msgs):
        return msgs
    if any(type(m).__module__.startswith("pydantic_ai") for m in msgs):
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        return list(ModelMessagesTypeAdapter.dump_python(msgs, mode="json"))
    return [as_plain(m) for m in msgs]


def _messages(obj: Any) -> list[Any] | None:
    if isinstance(obj, (bytes, str)):
        try:
            obj = json.loads(obj)
        except ValueError:
            return None
    if isinstance(obj, Mapping) and is_seq(obj.get("messages")):
        obj = obj["messages"]
    return list(obj) if is_seq(obj) else None


def _is_msg(m: Any) -> bool:
    if type(m).__module__.startswith("pydantic_ai"):
        return getattr(m, "kind", None) in _KINDS
    return isinstance(m, Mapping) and m.get("kind") in _KINDS and is_seq(m.get("parts"))


def is_history(obj: Any) -> bool:
    """True for a non-empty list (or ``{"messages": [...]}``) of pydantic-ai messages."""
    msgs = _messages(obj) if not isinstance(obj, (bytes, str)) else None
    return bool(msgs) and all(_is_msg(m) for m in msgs or ())


def usage_of(u: Any) -> Usage | None:
    """A ``Usage`` from a response's ``usage`` (current or pre-1.0 field names)."""
    u = mapping(u)
    if not u:
        return None
    det = mapping(u.get("details"))
    reasoning = u.get("output_reasoning_tokens", det.get("reasoning_tokens"))
    return usage_or_none(Usage(
        input_tokens=to_int(u["input_tokens"] if "input_tokens" in u else u.get("request_tokens")),
        output_tokens=to_int(u["output_tokens"] if "output_tokens" in u else u.get("response_tokens")),
        total_tokens=to_int(u.get("total_tokens")),
        cache_read_tokens=to_int(u.get("cache_read_tokens")),
        cache_write_tokens=to_int(u.get("cache_write_tokens")),
        reasoning_tokens=to_int(reasoning),
    ))


def _content_text(c: Any) -> Any:
    if isinstance(c, str) or c is None:
        return c
    if is_seq(c) and all(isinstance(x, str) or (isinstance(x, Mapping) and "text" in x) for x in c):
        return text_of(c)
    return c


def read(obj: Any) -> Trajectory:
    """One pydantic-ai message history. Raises ``TraceFormatError`` when ``obj`` is not one."""
    raw = _messages(obj)
    if not raw or not all(_is_msg(m) for m in raw):
        raise TraceFormatError(f"{FORMAT}: expected a list of pydantic-ai messages ({{'kind': 'request' | "
                               "'response', 'parts': [...]}})")
    msgs = _dump(raw)
    problems: list[str] = []
    sl = StepList()
    names: dict[str, str] = {}
    seen_instructions: set[str] = set()
    outputs, skipped = _not_calls(msgs)
    output_args: str | None = None
    for i, m in enumerate(msgs):
        m = mapping(m)
        w = f"messages[{i}]"
        ts = to_unix_seconds(m.get("timestamp"))
        if m.get("kind") == "request":
            ins = m.get("instructions")
            if isinstance(ins, str) and ins and ins not in seen_instructions:
                seen_instructions.add(ins)
                sl.add("system", content=ins)
            for j, p in enumerate(m.get("parts") or ()):
                p = mapping(p)
                pk = p.get("part_kind")
                pw = f"{w}.parts[{j}]"
                if pk == "system-prompt":
                    sl.add("system", content=_content_text(p.get("content")))
                elif pk == "user-prompt":
                    c = _content_text(p.get("content"))
                    sl.add("user", content=c if isinstance(c, str) else text_of(c))
                elif pk in ("tool-return", "builtin-tool-return", "retry-prompt"):
                    cid = p.get("tool_call_id")
                    cid = str(cid) if cid is not None else None
                    if pk == "tool-return" and (cid in outputs or cid in skipped):
                        continue
                    name = p.get("tool_name")
                    if pk == "retry-prompt" and not name:
                        sl.add("user", content=str(_content_text(p.get("content"))))
                        continue
                    if cid is not None and cid not in names:
                        problems.append(f"{pw}: 'tool_call_id' {cid!r} matches no earlier call")
                    out = _content_text(p.get("content"))
                    if pk == "retry-prompt":
                        failed = True
                    else:
                        outcome = p.get("outcome", "success")
                        failed = outcome != "success"
                    err = None
                    if failed:
                        err = out if isinstance(out, str) else json.dumps(out, default=str)
                    sl.result(ToolResult(call_id=cid, name=name if isinstance(name, str) else names.get(cid or ""),
                                         output=out, is_error=failed, error=err),
                              **({"start_time": to_unix_seconds(p.get("timestamp"))} if p.get("timestamp") else {}))
                elif pk in ("instruction", "retry-feedback"):
                    continue
            continue
        # a response: one model call
        texts: list[str] = []
        calls: list[ToolCall] = []
        for j, p in enumerate(m.get("parts") or ()):
            p = mapping(p)
            pk = p.get("part_kind")
            pw = f"{w}.parts[{j}]"
            if pk == "text":
                if isinstance(p.get("content"), str):
                    texts.append(p["content"])
            elif pk == "thinking":
                sl.add("reasoning", content=p.get("content") if isinstance(p.get("content"), str) else None)
            elif pk in ("tool-call", "builtin-tool-call"):
                name = p.get("tool_name")
                if not isinstance(name, str) or not name:
                    problems.append(f"{pw}: field 'tool_name' is missing")
                    name = "" if name is None else str(name)
                args, raw_s, perr = parse_args(p.get("args"), problems, pw)
                cid = p.get("tool_call_id")
                cid = str(cid) if cid is not None else None
                if cid in skipped or (cid in outputs and pk == "tool-call"):
                    if cid in outputs and args is not None:
                        output_args = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
                    continue
                if cid:
                    names[cid] = name
                calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=perr,
                                      tool_type="server" if pk == "builtin-tool-call" else None))
        u = mapping(m.get("usage"))
        kw: dict[str, Any] = {"usage": usage_of(u), "cost_usd": figure(u.get("cost"), f"{w}.usage.cost", problems)}
        if isinstance(m.get("model_name"), str):
            kw["model"] = m["model_name"]
        if ts is not None:
            kw["start_time"] = ts
        text = "\n".join(texts) if texts else None
        if calls:
            sl.call(calls, content=text, **kw)
        else:
            sl.add("assistant", content=text, **kw)
    steps, final = mark_last_reply(list(sl.steps))
    if final is None and output_args is not None:
        sl.add("final_response", content=output_args)
        steps, final = list(sl.steps), output_args
    fs = tuple(steps)
    costs = [s.cost_usd for s in fs if s.cost_usd is not None]
    first = mapping(msgs[0])
    meta: dict[str, Any] = {}
    if first.get("run_id"):
        meta["run_id"] = str(first["run_id"])
    if problems:
        meta["problems"] = problems
    conv = first.get("conversation_id")
    return Trajectory(steps=fs, final_response=final, total_usage=sum_usage(fs),
                      total_cost_usd=sum(costs) if costs else None, source_format=FORMAT,
                      session_id=str(conv) if conv is not None else None, metadata=meta)


__all__ = ["FORMAT", "is_history", "read", "usage_of"]
