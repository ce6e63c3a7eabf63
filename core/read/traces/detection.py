"""Format detection: ``detect`` names the format of one source object by the order of the
package docstring (the envelopes only one format writes first, then message lists by their
markers, then a plain call list); ``guessed`` says when that name was a fallback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import (
    ag2_chats,
    anthropic_managed,
    atif,
    autogen,
    bedrock_invocations,
    bfcl_result,
    crewai_events,
    deepeval,
    inspect_ai,
    langchain,
    langchain_events,
    langfuse,
    langsmith,
    litellm,
    llamaindex_events,
    messages,
    mlflow,
    native,
    openai_agents,
    openai_responses,
    otel,
    plain,
    promptfoo,
    pydantic_ai,
    smolagents,
    tau2,
    tau_bench,
    vertex,
    wrappers,
)
from ._util import as_plain, is_seq


def _msg_list(obj: Any) -> list[Any] | None:
    if is_seq(obj):
        return list(obj)
    if isinstance(obj, Mapping) and is_seq(obj.get("messages")):
        return list(obj["messages"])
    return None


_LC_ONLY = ("tool_call_id", "additional_kwargs", "response_metadata", "status", "usage_metadata",
            "invalid_tool_calls", "artifact")


def _is_langchain(raw: list[Any]) -> bool:
    for m in raw:
        if type(m).__module__.startswith("langchain"):
            return True
        p = as_plain(m)
        if not isinstance(p, Mapping):
            continue
        if p.get("lc") == 1 or (isinstance(p.get("data"), Mapping) and "content" not in p):
            return True
        if any(k in p for k in _LC_ONLY):
            return True
        for tc in p.get("tool_calls") or ():
            if isinstance(tc, Mapping) and (tc.get("id") is not None or tc.get("type") == "tool_call"):
                return True
    return False


def detect(obj: Any) -> str | None:
    """The format name of one source object by the order in the package docstring
    (``trajcheck.read.traces``), or None
    (also when the object is so odd that a detector fails on it)."""
    try:
        return _detect(obj)
    except Exception:
        return None


def _detect(obj: Any) -> str | None:
    raw = obj
    obj = as_plain(obj)
    if isinstance(obj, Mapping):
        if native.is_native(obj):
            return "trajcheck"
        if tau_bench.is_record(obj):
            return "tau_bench"
        if tau2.is_results(obj):
            return "tau2"
        if bfcl_result.is_record(obj):
            return "bfcl"
        new = _detect_new(obj, raw)
        if new is not None:
            return new
        if otel.is_source(obj):
            return "otel"
        if langsmith.is_run(obj):
            return "langsmith"
        if promptfoo.is_provider_response(obj):
            return "promptfoo"
        if ("predicted_trajectory" in obj or "reference_trajectory" in obj or vertex.is_adk(obj)
                or wrappers.is_adk_session(obj) or wrappers.is_gemini_contents(obj) or wrappers.is_legacy_case(obj)):
            return "vertex"
        if deepeval.is_trace_payload(obj):
            return "deepeval"
        if (obj.get("object") == "response" or is_seq(obj.get("output"))) and openai_responses.is_item_list(
                list(obj.get("input") or []) + list(obj.get("output") or [])
                if is_seq(obj.get("input") or []) else list(obj.get("output") or [])):
            return "openai_responses"
        if "tools_called" in obj or "toolsCalled" in obj:
            return "deepeval"
        if is_seq(obj.get("user_input")) and langchain.is_message_list(obj["user_input"]):
            return "ragas"
        if obj.get("type") == "message" and obj.get("role") == "assistant" and is_seq(obj.get("content")):
            return "anthropic"
        if "choices" in obj:
            return "openai_chat"
        if is_seq(obj.get("calls")) and plain.is_call_list(obj["calls"]):
            return "plain"
    if is_seq(obj) and obj:
        new = _detect_new(obj, raw)
        if new is not None:
            return new
        items = [as_plain(x) for x in obj]
        if all(isinstance(x, Mapping) and otel.is_source(x) for x in items):
            return "otel"
        if all(langsmith.is_run(x) for x in items):
            return "langsmith"
        if vertex.is_tool_list(items) or wrappers.is_legacy_turns(items):
            return "vertex"
        if openai_responses.is_item_list(items):
            return "openai_responses"
        if all(deepeval.is_tool_call(x) for x in obj):
            return "deepeval"
    if messages.is_source(obj):
        return "messages"
    msgs = _msg_list(raw)
    if msgs:
        if any(type(m).__module__.startswith("ragas") for m in msgs):
            return "ragas"
        if langchain.is_message_list(msgs):
            return "langchain" if _is_langchain(msgs) else "ragas"
        plain_msgs = [as_plain(m) for m in msgs]
        if all(isinstance(m, Mapping) and "role" in m for m in plain_msgs):
            for m in plain_msgs:
                c = m.get("content")
                if is_seq(c) and any(isinstance(b, Mapping) and b.get("type") in (
                        "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use")
                        for b in c):
                    return "anthropic"
            if isinstance(obj, Mapping) and "system" in obj and not any(
                    m.get("role") in ("tool", "function", "system") for m in plain_msgs):
                return "anthropic"
            return "openai_chat"
    if plain.is_call_list(obj if is_seq(obj) else None):
        return "plain"
    return None


_OPENAI_MARKS = ("tool_calls", "function_call", "tool_call_id", "refusal")


def guessed(obj: Any, fmt: str) -> str | None:
    """Why ``fmt`` was taken for ``obj`` by a fallback rather than a mark only that format
    writes (shown in ``inspect`` and the scorecard), or None when it was recognised.

    Guesses: OpenAI chat for ``{role, content}`` messages with no OpenAI-only field (no
    ``tool_calls`` / ``function_call`` / ``tool_call_id`` / ``refusal``, no ``tool`` /
    ``function`` / ``developer`` role, no ``choices``); RAGAS for type-tagged messages with no
    LangChain-only field; Anthropic for ``{messages, system}`` with no Anthropic block.
    """
    try:
        plain = as_plain(obj)
        if fmt == "openai_chat":
            if isinstance(plain, Mapping) and "choices" in plain:
                return None
            msgs = _msg_list(plain) or []
            for m in msgs:
                m = as_plain(m)
                if isinstance(m, Mapping) and (m.get("role") in ("tool", "function", "developer")
                                               or any(m.get(k) is not None for k in _OPENAI_MARKS)):
                    return None
            return "role/content messages with no field only OpenAI chat writes"
        if fmt == "ragas":
            msgs = _msg_list(obj) or []
            if any(type(m).__module__.startswith("ragas") for m in msgs) or (
                    isinstance(plain, Mapping) and "user_input" in plain):
                return None
            return "type-tagged messages with no LangChain-only field"
        if fmt == "anthropic" and isinstance(plain, Mapping) and "system" in plain:
            for m in _msg_list(plain) or []:
                c = as_plain(m).get("content") if isinstance(as_plain(m), Mapping) else None
                if is_seq(c) and any(isinstance(b, Mapping) and b.get("type") not in (None, "text") for b in c):
                    return None
            return "messages with a top-level system and no Anthropic-only block"
    except Exception:
        return None
    return None


def _detect_new(obj: Any, raw: Any) -> str | None:
    """Formats recognised by their own envelope: Inspect AI logs, ATIF, Langfuse exports,
    OpenAI Agents SDK spans, Anthropic Managed Agents events, smolagents runs (checked before
    OTLP and chat)."""
    if smolagents.is_run_result(raw) or smolagents.is_run_result(obj) or smolagents.is_memory(obj):
        return "smolagents"
    if autogen.is_source(obj) or autogen.is_message(obj):
        return "autogen"
    if langchain_events.is_source(obj):
        return "langchain_events"
    if litellm.is_source(obj):
        return "litellm"
    if bedrock_invocations.is_source(obj):
        return "bedrock_invocations"
    if llamaindex_events.is_source(obj):
        return "llamaindex_events"
    if crewai_events.is_source(obj):
        return "crewai_events"
    if ag2_chats.is_source(obj):
        return "ag2_chats"
    if isinstance(obj, Mapping):
        if inspect_ai.is_log(obj):
            return "inspect_ai"
        if atif.is_trajectory(obj):
            return "atif"
        if langfuse.is_export(obj):
            return "langfuse"
        if openai_agents.is_item(obj) or openai_agents.is_payload(obj):
            return "openai_agents"
    if mlflow.is_trace(raw):  # the raw object: a DataFrame of search results dumps differently
        return "mlflow"
    if pydantic_ai.is_history(obj):
        return "pydantic_ai"
    if openai_agents.is_payload(obj):
        return "openai_agents"
    if anthropic_managed.is_source(obj):
        return "anthropic_managed"
    return None
