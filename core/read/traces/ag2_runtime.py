"""AG2's runtime log written to a file (``autogen.runtime_logging.start(logger_type="file")``),
read as part of the ``ag2_chats`` format.

The file logger writes one JSON object per line of several kinds (and a few plain-text lines:
the session banner, its own "Failed to log ..." notes, which the loader reports as lines it
did not read): agent/client/wrapper creation (``session_id``), model calls (``invocation_id``,
``request``, ``response`` -- both Python reprs, not JSON), tool runs (``input_args``,
``returns``) and agent events (``event_name``, ``source_name``, ``json_state``: a JSON text).

The conversation is read from the ``received_message`` events (``json_state``: ``message``,
``sender``; the receiving agent is ``source_name``), each one chat message, as a chat history
is (``ag2_chats``): the first one is the request and its sender the initiator, ``tool_calls`` a
call step, ``tool_responses`` the results. A ``check_termination_and_human_reply`` reply
function that ends the chat (``final`` true, no reply) closes a conversation: the next
message starts the next run. Usage: the ``prompt_tokens`` / ``completion_tokens`` of each model
call's response repr (``CompletionUsage(...)``), summed per conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ...model import Usage

_EVENT_KEYS = ("source_name", "event_name", "json_state")
_USAGE = {k: re.compile(rf"\b{k}=(\d+)") for k in ("prompt_tokens", "completion_tokens")}


def is_record(obj: Any) -> bool:
    """True for one record of AG2's file runtime log (an agent event, a model call, a tool run,
    a client, wrapper or agent created)."""
    if not isinstance(obj, Mapping):
        return False
    if "source_id" in obj and "source_name" in obj and (
            all(k in obj for k in _EVENT_KEYS) or ("input_args" in obj and "returns" in obj)):
        return True  # an agent event, a tool run (its call and result are read from the messages)
    if "session_id" in obj and "wrapper_id" in obj and ("json_state" in obj or "agent_type" in obj):
        return True  # a client, wrapper or agent created
    return "invocation_id" in obj and "wrapper_id" in obj and "request" in obj and "response" in obj


def _state(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    s = rec.get("json_state")
    try:
        v = json.loads(s) if isinstance(s, str) else s
    except ValueError:
        return {}
    return v if isinstance(v, Mapping) else {}


def _call_usage(rec: Mapping[str, Any]) -> Usage | None:
    text = rec.get("response")
    if not isinstance(text, str):
        return None
    found = {k: sum(int(x) for x in p.findall(text)) if p.search(text) else None for k, p in _USAGE.items()}
    if found["prompt_tokens"] is None and found["completion_tokens"] is None:
        return None
    return Usage(input_tokens=found["prompt_tokens"], output_tokens=found["completion_tokens"])


def conversations(recs: list[tuple[Mapping[str, Any], str]]) -> list[tuple[list[tuple[Any, str]], Usage | None]]:
    """The conversations of a runtime log's records (``(record, where)`` in line order): each
    its messages as chat-history messages (``name`` = the sender) with their locations, and its
    summed usage."""
    out: list[tuple[list[tuple[Any, str]], Usage | None]] = []
    msgs: list[tuple[Any, str]] = []
    usage: Usage | None = None
    for rec, w in recs:
        if "invocation_id" in rec:
            u = _call_usage(rec)
            if u is not None:
                usage = u if usage is None else usage + u
            continue
        st = _state(rec)
        if rec.get("event_name") == "received_message":
            m, sender = st.get("message"), st.get("sender")
            name = sender if isinstance(sender, str) else None
            if isinstance(m, Mapping):
                msgs.append(({**m, "name": name} if name else dict(m), f"{w} (received_message)"))
            elif m is not None:
                msgs.append(({"content": m if isinstance(m, str) else str(m), "role": "user", "name": name},
                             f"{w} (received_message)"))
        elif (rec.get("event_name") == "reply_func_executed" and st.get("final") is True and st.get("reply") is None
              and st.get("reply_func_name") == "check_termination_and_human_reply" and msgs):
            out.append((msgs, usage))
            msgs, usage = [], None
    if msgs:
        out.append((msgs, usage))
    return out


__all__ = ["conversations", "is_record"]
