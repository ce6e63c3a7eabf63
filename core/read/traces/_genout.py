"""Text and requested tool calls of one model call's recorded output, whatever API shape it has.

Shared by the readers of tracing platforms (Langfuse, MLflow) that store a model call's raw
output: an OpenAI Responses object (``output`` items: ``message``, ``function_call``), a Chat
Completions response (``choices[].message``), a bare assistant message, a list of messages,
or plain text. JSON-encoded strings of those are decoded first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._util import is_seq, mapping, text_of


def decode_json(v: Any) -> Any:
    """A JSON-encoded object or list decoded; anything else (plain text too) as is."""
    if isinstance(v, str) and v[:1] in ("{", "["):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def model_output(out: Any) -> tuple[str | None, list[tuple[str, str | None]]]:
    """``(text, [(tool name, call id), ...])`` of a model call's output (see the module docstring)."""
    out = decode_json(out)
    if isinstance(out, str):
        return out, []
    texts: list[str] = []
    calls: list[tuple[str, str | None]] = []
    items: list[Any]
    if isinstance(out, Mapping) and is_seq(out.get("output")):
        items = list(out["output"])
    elif isinstance(out, Mapping) and is_seq(out.get("choices")):
        items = [mapping(c).get("message") for c in out["choices"]]
    elif is_seq(out):
        items = list(out)
    else:
        items = [out]
    for it in items:
        it = mapping(it)
        if it.get("type") == "function_call":
            calls.append((str(it.get("name")), str(it["call_id"]) if it.get("call_id") else None))
            continue
        if it.get("role") in (None, "assistant") or it.get("type") == "message":
            t = text_of(it.get("content"))
            if t:
                texts.append(t)
            for tc in it.get("tool_calls") or ():
                tc = mapping(tc)
                fn = mapping(tc.get("function"))
                calls.append((str(fn.get("name") or tc.get("name")), str(tc["id"]) if tc.get("id") else None))
    return ("\n".join(texts) if texts else None), calls


def first_user_text(inp: Any) -> str | None:
    """The first user message's text of a model call's input (a string is the message itself)."""
    inp = decode_json(inp)
    if isinstance(inp, str):
        return inp
    if isinstance(inp, Mapping) and is_seq(inp.get("messages")):
        inp = inp["messages"]
    for m in inp if is_seq(inp) else ():
        m = mapping(m)
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return None
