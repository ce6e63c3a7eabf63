"""Trace readers: every supported source format -> ``trajcheck.model.Trajectory``.

``load(path_or_obj, format="auto")`` reads a JSON file, a JSON Lines file (one trace per
line), a directory of them, or an in-memory object, and returns a ``LoadResult``.
``read(obj, format)`` reads one object. Each format has its own module with
``read(obj) -> Trajectory``:

=====================  =========================================================
format name            source
=====================  =========================================================
``trajcheck``          ``Trajectory.to_dict()`` output (our own JSONL traces)
``tau_bench``          tau-bench result records (also yield ``Case`` objects)
``inspect_ai``         Inspect AI eval logs (``.json``, ``.eval`` zips), one run per sample
``atif``               ATIF trajectories (Harbor)
``langfuse``           Langfuse trace exports (``trace`` + ``observations``)
``openai_agents``      OpenAI Agents SDK traces (span exports, ``/v1/traces/ingest`` bodies)
``anthropic_managed``  Anthropic Managed Agents session events (``[method, event]`` JSONL)
``tau2``               tau2-bench ``Results`` files (one run per simulation, and the cases)
``bfcl``               BFCL result lines (``bfcl generate``: ``{id, result}``), one run per entry
``mlflow``             MLflow traces (``Trace.to_json()``, ``search_traces`` rows)
``pydantic_ai``        pydantic-ai message histories (``all_messages_json()``)
``smolagents``         smolagents ``RunResult`` and agent memory steps
``autogen``            AutoGen AgentChat ``TaskResult``, ``run_stream`` events, saved state
``langchain_events``   LangChain ``astream_events`` output (one run per root run)
``litellm``            LiteLLM standard logging payloads (grouped by trace id / message chain)
``llamaindex_events``  LlamaIndex agent workflow events (``JsonSerializer`` lines), a run per StopEvent
``otel``               OTLP JSON (OpenTelemetry GenAI / OpenInference attributes)
``langsmith``          LangSmith run trees
``promptfoo``          promptfoo provider output
``vertex``             Vertex ``predicted_trajectory``, Google ADK invocations
``openai_responses``   OpenAI Responses items
``deepeval``           DeepEval ``ToolCall`` lists / test cases
``langchain``          LangChain messages (objects, ``messages_to_dict``, lc dicts)
``ragas``              RAGAS messages
``messages``           provider messages of every other convention (``messages.py``): Bedrock
                       Converse/Strands, Gemini/google-genai, Cohere v2, Haystack, LlamaIndex,
                       Semantic Kernel, AG2 -- and OpenAI/Anthropic blocks mixed in
``anthropic``          Anthropic Messages
``openai_chat``        OpenAI Chat Completions messages
``plain``              a list of ``{name, args}``
=====================  =========================================================

Auto-detection (``detect``) tries the formats in the order of that table: the ones with an
unambiguous envelope first (a ``steps`` list of ``{index, kind}``; ``task_id`` + ``traj``;
Inspect ``eval`` + ``samples``; ATIF ``schema_version``; ``trace`` + ``observations``; items with
``object: trace.span``; ``user.*`` / ``agent.*`` session events; ``tasks`` + ``simulations``; ``id`` + ``result`` with BFCL's token counts or latency;
``resourceSpans`` or spans; ``run_type``; ``output`` with ``tokenUsage``/``latencyMs``/
``cost``/``metadata.toolCalls``; ``predicted_trajectory`` / ``tool_name`` / ADK keys; Responses
item types), then message lists by their markers: DeepEval ``input_parameters``; LangChain
``type`` messages with LangChain-only fields (``lc`` constructor dicts, ``{type, data}``,
``tool_call_id``, call ids, ``additional_kwargs``, ``response_metadata``, ``status``, or
langchain-core objects) else RAGAS (type-tagged messages without those fields, or ragas
objects); Anthropic (``tool_use`` / ``tool_result`` / ``thinking`` blocks); OpenAI chat
(``role`` messages, ``messages``/``choices`` wrappers); finally a plain ``{name}`` call list.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import InputLimitError, TraceFormatError
from ...model import Case, Trajectory
from .. import limits
from . import (
    _json_list,
    anthropic,
    anthropic_managed,
    atif,
    autogen,
    bfcl_result,
    case_keys,
    deepeval,
    host_exports,
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
    openai_chat,
    openai_responses,
    otel,
    plain,
    promptfoo,
    pydantic_ai,
    ragas,
    record_groups,
    smolagents,
    tau2,
    tau_bench,
    vertex,
    wrappers,
)
from ._util import as_plain, is_seq
from .unread import unread_in_batch, unread_problem

FORMATS: tuple[str, ...] = (
    "trajcheck", "tau_bench", "tau2", "bfcl", "inspect_ai", "atif", "langfuse", "openai_agents", "anthropic_managed",
    "mlflow", "pydantic_ai", "smolagents", "autogen", "langchain_events", "litellm", "llamaindex_events", "otel", "langsmith", "promptfoo", "vertex", "openai_responses",
    "deepeval", "langchain", "ragas", "messages", "anthropic", "openai_chat", "plain",
)
_ALIASES = {"openai": "openai_chat", "chat": "openai_chat", "responses": "openai_responses",
            "adk": "vertex", "openinference": "otel", "otlp": "otel", "tau-bench": "tau_bench",
            "tau": "tau_bench", "native": "trajcheck", "inspect": "inspect_ai", "agents": "openai_agents",
            "openai-agents": "openai_agents", "managed_agents": "anthropic_managed",
            "tau2-bench": "tau2", "pydantic-ai": "pydantic_ai",
            "autogen-agentchat": "autogen", "agentchat": "autogen", "astream_events": "langchain_events",
            "bedrock": "messages", "gemini": "messages", "google_genai": "messages", "cohere": "messages",
            "mistral": "messages", "haystack": "messages", "llamaindex": "messages",
            "semantic_kernel": "messages", "strands": "messages", "ag2": "messages"}
# readers of shapes once refused, registered here and detected in _detect_new
_ADDED_READERS: dict[str, Any] = {"smolagents": smolagents.read, "autogen": autogen.read,
                                  "langchain_events": langchain_events.read, "litellm": litellm.read}
EXPECTED = ("a trace: a trajcheck trajectory, tau-bench records, a tau2-bench results file, an Inspect AI log, an ATIF trajectory, a Langfuse "
            "export, OpenAI Agents SDK spans, Anthropic Managed Agents events, MLflow traces, pydantic-ai messages, smolagents runs, AutoGen AgentChat results, events and state, LangChain astream_events, LiteLLM logging payloads, LlamaIndex workflow events, OTLP JSON, LangSmith runs, promptfoo "
            "output, Vertex/ADK trajectories, OpenAI Responses items, DeepEval tool calls, LangChain/RAGAS/"
            "Anthropic/OpenAI chat messages, Bedrock/Gemini/Cohere/Mistral/Haystack/LlamaIndex/Semantic Kernel/AG2 "
            "messages, or a list of {name, args} calls")
_SUFFIXES = (".json", ".jsonl", ".ndjson", ".eval")
_GZ_SUFFIXES = tuple(x + ".gz" for x in (".json", ".jsonl", ".ndjson"))


@dataclass
class SourceRead:
    """What ``load`` recognised in one file: ``formats`` (format name -> trajectories read in
    it) and ``wrappers`` (names of the envelopes cut open, e.g. ``"ADK EvalSet"``, in the order
    met, each once)."""

    formats: dict[str, int] = field(default_factory=dict)
    wrappers: list[str] = field(default_factory=list)
    guessed: dict[str, str] = field(default_factory=dict)
    grouped: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """One line such as ``"vertex (2) in ADK EvalSet"``, ``"openai_chat (1, guessed:
        ...)"`` or ``"nothing read"``; a format taken by a guess says so and why."""
        fm = ", ".join(f"{k} ({v}" + (f", guessed: {self.guessed[k]})" if k in self.guessed else ")")
                       for k, v in self.formats.items()) or "nothing read"
        return (fm + (f" in {', '.join(self.wrappers)}" if self.wrappers else "")
                + "".join(f"; {k}: {v}" for k, v in self.grouped.items()))


@dataclass(frozen=True)
class LoadResult:
    """What ``load`` read.

    ``trajectories``: every trajectory, in source order within a format; ``problems``: every
    message, in the order found, each naming the file (or ``<input>``), the line or record, and
    the field (see ``load`` for the location style). It is split into two disjoint lists:
    ``skipped``, the lines, records and files that were not read (no trajectory came from
    them), and ``faults``, the faults tolerated inside what was read (the trajectory was kept,
    e.g. a call without a name, arguments that are not JSON, a missing reward).
    ``unread``: the records that hold tool calls or results which were not read as calls
    (``traces.unread``), each naming the record and the shapes: a scorer must not score such
    input as if no tool had been called (``trajcheck eval`` exits 2 unless --allow-unread).
    A record read with none of its calls has its message in ``problems`` too; a record
    skipped whole is in ``skipped`` under its own reason.
    ``guessed``: format name -> why it was a guess, for formats taken by a fallback rather
    than a mark only that format writes (role/content messages read as OpenAI chat).
    ``cases``: case id -> ``Case`` for sources that carry cases (tau-bench); ``formats``:
    detected format name -> number of trajectories read in it. ``sources``: per file read
    (``"<input>"`` for an in-memory object), what was recognised in it (``SourceRead``: the
    formats with their trajectory counts, and the wrappers cut open, see ``wrappers``).
    Iterating yields the trajectories; ``len()`` is their number.
    """

    trajectories: list[Trajectory] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    cases: dict[str, Case] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)
    sources: dict[str, SourceRead] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    guessed: dict[str, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Trajectory]:
        return iter(self.trajectories)

    def __len__(self) -> int:
        return len(self.trajectories)

    def __getitem__(self, i: int) -> Trajectory:
        return self.trajectories[i]


def _norm_format(fmt: str) -> str:
    f = _ALIASES.get(fmt, fmt)
    if f != "auto" and f not in FORMATS:
        raise TraceFormatError(f"unknown trace format {fmt!r}; known: auto, {', '.join(FORMATS)}")
    return f


_is_native = native.is_native


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
    """The format name of one source object by the order in the module docstring, or None
    (also when the object is so odd that a detector fails on it)."""
    try:
        return _detect(obj)
    except Exception:
        return None


def _detect(obj: Any) -> str | None:
    raw = obj
    obj = as_plain(obj)
    if isinstance(obj, Mapping):
        if _is_native(obj):
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
    if llamaindex_events.is_source(obj):
        return "llamaindex_events"
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


_READERS = {
    "trajcheck": native.read, "tau_bench": tau_bench.read, "tau2": tau2.read, "bfcl": bfcl_result.read, "otel": otel.read, "langsmith": langsmith.read,
    "promptfoo": promptfoo.read, "vertex": vertex.read, "openai_responses": openai_responses.read,
    "deepeval": deepeval.read, "langchain": langchain.read, "ragas": ragas.read,
    "anthropic": anthropic.read, "openai_chat": openai_chat.read, "plain": plain.read,
    "inspect_ai": inspect_ai.read, "atif": atif.read, "langfuse": langfuse.read,
    "openai_agents": openai_agents.read, "anthropic_managed": anthropic_managed.read, "mlflow": mlflow.read,
    "pydantic_ai": pydantic_ai.read, **_ADDED_READERS, "messages": messages.read,
}
# formats whose records are grouped across lines/items into runs (by trace or session id)
_GROUPED = {"openai_agents": openai_agents.read_all, "anthropic_managed": anthropic_managed.read_all,
            "mlflow": mlflow.read_all, "autogen": autogen.read_all,
            "langchain_events": langchain_events.read_all, "litellm": litellm.read_all,
            "llamaindex_events": llamaindex_events.read_all}


def read(obj: Any, format: str = "auto", *, error_pattern: str | re.Pattern[str] | None = None) -> Trajectory:
    """Read one source object in ``format`` (or the detected one) into a ``Trajectory``.

    Wrapper metadata: when ``obj`` is a mapping (e.g. a JSONL record ``{"messages": [...],
    "metadata": {"case_id": "c1"}}``) carrying a ``metadata`` mapping and/or top-level
    ``case_id`` / ``trial`` / ``run_id``, those are merged into ``Trajectory.metadata``; the
    reader's own metadata values win on a clash (see ``with_wrapper_metadata``).

    ``error_pattern`` (opt-in, a regex string or compiled pattern): for sources with no error
    channel (OpenAI chat, DeepEval, RAGAS, OpenAI Responses function outputs, ...), a
    ``ToolResult`` whose ``is_error`` is None and whose output text matches it gets
    ``is_error=True`` (see ``apply_error_pattern``). It never overrides a source's own error
    flag (``is_error`` True or False is kept as read).

    A wrapper (``wrappers.unwrap``) that holds one trace, or spans / runs of one trace, is cut
    open first; one that holds several (an EvalSet of several cases) needs ``load``.

    Raises ``TraceFormatError`` when ``format`` is unknown, when nothing is detected, when
    ``error_pattern`` is not a valid regex, or when the object does not have the format's
    shape. Any other exception inside a reader or in detection (a reader's blind spot for
    some odd input) is re-raised as ``TraceFormatError`` naming the format, so callers only
    ever see trajcheck errors for bad input.
    """
    fmt = _norm_format(format)
    pat = _compile_pattern(error_pattern)
    un = wrappers.unwrap(obj)
    if un is not None:
        objs = [o for o, _ in un.units]
        kinds = {fmt if fmt != "auto" else detect(o) for o in objs}
        if len(objs) > 1 and len(kinds) == 1 and kinds <= {"otel", "langsmith"}:
            obj = objs
        elif len(objs) == 1:
            obj = objs[0]
        else:
            raise TraceFormatError(f"<input>: {un.wrapper} holds {len(objs)} traces; read it with load()")
    if fmt == "auto":
        det = detect(obj)
        if det is None:
            raise TraceFormatError(f"<input>: not a trace; expected {EXPECTED}")
        fmt = det
    t = _read_one(obj, fmt)
    return apply_error_pattern(t, pat) if pat is not None else t


def _read_one(obj: Any, fmt: str) -> Trajectory:
    """One object through its format's reader, plus the wrapper's metadata."""
    t = _guarded(_READERS[fmt], obj, fmt)
    return with_wrapper_metadata(t, obj)


_WRAPPER_KEYS = ("case_id", "trial", "run_id")
# keys of a wrapper's ``metadata`` that a reader already consumes as trace content
_CONSUMED = {"promptfoo": ("toolCalls",)}


def with_wrapper_metadata(t: Trajectory, obj: Any) -> Trajectory:
    """``t`` with the metadata of the source object ``obj`` merged in.

    ``obj``: the source object ``t`` was read from. When it is a mapping (SDK objects are
    dumped first), the items of its ``metadata`` mapping (if any) and its top-level
    ``case_id`` / ``trial`` / ``run_id`` (if present and not None) are added to
    ``t.metadata``; a key the reader already set keeps the reader's value (DESIGN.md
    "Traces": the reader's own values win). Keys a format reads as trace content (promptfoo's
    ``metadata.toolCalls``) are not copied. Returns ``t`` itself when nothing is added.
    """
    src = as_plain(obj)
    if not isinstance(src, Mapping):
        return t
    extra: dict[str, Any] = {}
    meta = src.get("metadata")
    if isinstance(meta, Mapping):
        skip = _CONSUMED.get(t.source_format or "", ())
        extra.update({str(k): v for k, v in meta.items() if k not in skip})
    for k in _WRAPPER_KEYS:
        if src.get(k) is not None:
            extra[k] = src[k]
    own = t.metadata if isinstance(t.metadata, Mapping) else {}
    add = {k: v for k, v in extra.items() if k not in own}
    if not add:
        return t
    return replace(t, metadata={**add, **own})


def _compile_pattern(p: Any) -> Any:
    """A string pattern compiled for linear-time matching (``trajcheck.match.safe_regex``: trace
    outputs are untrusted text); a pattern object a Python caller compiled is used as given."""
    from ...errors import MatcherError
    from ...match.safe_regex import compile_pattern

    if p is None or not isinstance(p, str):
        return p
    try:
        return compile_pattern(p, where="error_pattern")
    except MatcherError as e:
        raise TraceFormatError(f"error_pattern {p!r} is not a valid regular expression: {e}") from e


def _output_text(out: Any) -> str | None:
    if out is None:
        return None
    if isinstance(out, str):
        return out
    try:
        return json.dumps(out, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(out)


def apply_error_pattern(t: Trajectory, pattern: str | re.Pattern[str]) -> Trajectory:
    """``t`` with tool results marked failed by a caller-supplied error convention.

    ``pattern``: a regular expression (string or compiled). For each ``tool_result`` step
    whose ``ToolResult.is_error`` is None (the source has no error channel) and whose output
    text -- the string itself, or the compact JSON of a structured output -- matches it
    (``re.search``, case-sensitive unless the pattern says otherwise, e.g. ``(?i)``), the
    result gets ``is_error=True`` and, when it has no ``error`` text, ``error`` = the first
    line of the output text. It never overrides a source's own error flag: a result with
    ``is_error`` True or False is left as read. Opt-in (DESIGN.md "Recovery": an error
    convention must be declared, never guessed). Raises ``TraceFormatError`` for an invalid
    regex. Returns ``t`` itself when nothing changes.
    """
    pat = _compile_pattern(pattern)
    if pat is None:
        return t
    steps = list(t.steps)
    changed = False
    for i, s in enumerate(steps):
        r = s.tool_result
        if r is None or r.is_error is not None:
            continue
        text = _output_text(r.output)
        if text is None or pat.search(text) is None:
            continue
        first = text.strip().splitlines()[0] if text.strip() else text
        steps[i] = replace(s, tool_result=replace(r, is_error=True, error=r.error or first))
        changed = True
    return replace(t, steps=tuple(steps)) if changed else t


def _guarded(fn: Any, obj: Any, fmt: str) -> Any:
    try:
        return fn(obj)
    except TraceFormatError:
        raise
    except Exception as e:  # a reader's bug on odd input must not escape as a crash
        raise TraceFormatError(f"{fmt}: could not read the object as {fmt}: {type(e).__name__}: {e}") from e


# ----------------------------------------------------------------------------- loading


@dataclass
class _Acc:
    trajectories: list[Trajectory] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    cases: dict[str, Case] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)
    sources: dict[str, SourceRead] = field(default_factory=dict)
    error_pattern: Any = None
    unread: list[str] = field(default_factory=list)
    guessed: dict[str, str] = field(default_factory=dict)

    def not_read(self, msg: str, *, skipped: bool = False) -> None:
        """Record a record's tool calls that were not read (``unread``). It is also a problem,
        unless the record was ``skipped`` whole: then its skip message is the problem."""
        if not skipped:
            self.problems.append(msg)
        self.unread.append(msg)

    def check(self, obj: Any, t: Trajectory, fmt: str, where: str) -> None:
        """Note when ``obj`` holds tool calls its reader (``fmt``) did not read into ``t``."""
        msg = unread_problem(obj, t, fmt)
        if msg is not None:
            self.not_read(f"{where}: {msg}")

    def check_batch(self, objs: list[Any], trajs: list[Trajectory], fmt: str, where: str) -> None:
        """``check`` for formats read in batches (spans, runs, events, result files)."""
        msg = unread_in_batch(objs, trajs, fmt)
        if msg is not None:
            self.not_read(f"{where}: {msg}")

    def guess(self, obj: Any, fmt: str, label: str) -> None:
        """Note that ``fmt`` was taken for ``obj`` by a guess (``guessed``), if it was."""
        why = guessed(obj, fmt)
        if why is not None:
            self.guessed.setdefault(fmt, why)
            self.source(label).guessed.setdefault(fmt, why)

    def source(self, label: str) -> SourceRead:
        """The record of what was recognised in the file ``label``."""
        return self.sources.setdefault(label, SourceRead())

    def wrapper(self, label: str, name: str) -> None:
        """Note that a wrapper named ``name`` was cut open in the file ``label``."""
        w = self.source(label).wrappers
        if name not in w:
            w.append(name)

    def add(self, t: Trajectory, fmt: str, where: str, label: str | None = None, *,
            plain: bool = False) -> None:
        """Record one trajectory read at ``where``; ``plain`` says its figures are known
        plain (``native.read_line``), so ``limits.clean_figures`` is not asked again."""
        if self.error_pattern is not None:
            t = apply_error_pattern(t, self.error_pattern)
        if not plain:
            t, notes = limits.clean_figures(t)
            self.problems.extend(f"{where}: {n}" for n in notes)
        self.trajectories.append(t)
        formats = self.formats
        formats[fmt] = formats.get(fmt, 0) + 1
        if label is not None:
            src = self.sources.get(label) or self.source(label)
            src.formats[fmt] = src.formats.get(fmt, 0) + 1
        meta = t.metadata
        got = meta.get("problems") if type(meta) is dict or isinstance(meta, Mapping) else None
        if got is not None:
            # a list of problem texts (the readers' and to_dict's form); any other value
            # written there is one problem, not an error and not one per character
            self.problems.extend(f"{where}: {p}" for p in (got if is_seq(got) else (got,)))

    def skip(self, msg: str) -> None:
        """Record a line, record or file that was not read."""
        self.problems.append(msg)
        self.skipped.append(msg)

    def result(self) -> LoadResult:
        skipped = set(self.skipped)
        return LoadResult(trajectories=self.trajectories, problems=self.problems, skipped=self.skipped,
                          faults=[p for p in self.problems if p not in skipped], cases=self.cases,
                          formats=self.formats, sources=self.sources, unread=self.unread,
                          guessed=self.guessed)


def _is_record(x: Any) -> bool:
    """One whole trace of a format whose files are lists of such records."""
    return (tau_bench.is_record(x) or _is_native(x) or promptfoo.is_provider_response(x)
            or host_exports.kind(x) is not None or record_groups.defers("openai_responses", x)
            or (isinstance(x, Mapping) and ("predicted_trajectory" in x or vertex.is_adk(x))))


def _safe_is_record(x: Any) -> bool:
    try:
        return _is_record(x)
    except Exception:
        return False


def _bad_json_line(where: str, e: ValueError) -> str:
    """The problem for a JSONL line at ``where`` that did not parse (``e`` from the JSON
    decoder: its message and column when it gives them)."""
    msg = getattr(e, "msg", None) or str(e)
    col = f" (column {e.colno})" if hasattr(e, "colno") else ""
    return f"{where}: not valid JSON: {msg}{col}; line skipped"


def _units(doc: Any, acc: _Acc | None = None, label: str = "<input>",
           prefix: str = "") -> list[tuple[Any, str | None]]:
    """Split a parsed JSON document into trace objects with a sub-location label.

    A wrapper (``wrappers.unwrap``: an ADK EvalSet, a span dump, a promptfoo output file, ...)
    is cut open first: its units are returned with their labels, the wrapper's name is noted
    for ``label`` in ``acc`` and its entries that hold no trace are reported as skipped
    (``prefix`` is the location the labels hang from, e.g. ``"run.json"``).
    A list is a list of records (labelled ``record <i>``, 0-based) when at least half of its
    items are whole records (tau-bench, trajcheck, promptfoo, Vertex/ADK) -- a chat message
    list holds none -- so that a stray item (a chat message, a typed item, a number) among
    records is reported on its own and the other records read, instead of the whole list
    being "not a trace".
    """
    try:
        un = wrappers.unwrap(doc)
    except Exception:  # an odd document is simply not that wrapper
        un = None
    if un is not None:
        if acc is not None:
            acc.wrapper(label, un.wrapper)
            for w, why in un.skipped:
                acc.skip(f"{prefix} {w}: {why}; skipped".strip())
            if not un.units and not un.skipped:
                acc.skip(f"{prefix}: {un.wrapper} holds no traces".lstrip(": "))
        return list(un.units)
    if is_seq(doc) and doc:
        items = [as_plain(x) for x in doc]
        n_rec = sum(1 for x in items if _safe_is_record(x))
        if n_rec and 2 * n_rec >= len(items):
            return [(x, f"record {i}") for i, x in enumerate(doc)]
        if all(is_seq(x) for x in doc):
            return [(x, f"record {i}") for i, x in enumerate(doc)]
    return [(doc, None)]


def _why_not(obj: Any, formats: Any) -> str:
    """Why a unit of a file already recognised as one of ``formats`` is not a trace."""
    plain = as_plain(obj)
    if "tau_bench" in formats and (tau_bench.looks_like_record(plain) or not isinstance(plain, Mapping)):
        why = tau_bench.record_problem(plain)
        if why is not None:
            return why
    if "trajcheck" in formats and isinstance(plain, Mapping) and "steps" in plain:
        return "not a trajcheck trajectory (needs a 'steps' list of {index, kind} objects)"
    return f"not a trace (expected {EXPECTED})"


def _read_units(units: list[tuple[Any, str]], fmt: str, acc: _Acc, label: str, *, strict: bool) -> None:
    """Read trace objects (``(obj, where)``); batch formats are read together.

    Policy (DESIGN.md, "Bad input"): once some unit is recognised as a format, a unit that is
    not a trace, or that its reader rejects, is reported in ``skipped`` with its location and
    the rest is read; ``TraceFormatError`` is raised (when ``strict``) only when no unit is a
    trace, or when the only unit fails.
    """
    exported: dict[str, list[tuple[Any, str]]] = {}
    if fmt in ("auto", "deepeval", "ragas"):
        rest = []
        for obj, where in units:
            k = host_exports.kind(obj)
            if k is not None and fmt in ("auto", _EXPORT_FORMAT[k]):
                exported.setdefault(k, []).append((obj, where))
            else:
                rest.append((obj, where))
        if exported:
            _read_exports(exported, acc, label)
            if not rest:
                return
            units = rest
    batches: dict[str, list[tuple[Any, str]]] = {}
    undetected: list[tuple[Any, str]] = []
    for obj, where in units:
        f = fmt if fmt != "auto" else detect(obj)
        if f is None:
            undetected.append((obj, where))
            continue
        batches.setdefault(f, []).append((obj, where))
    if not batches and units and strict:
        held = unread_problem(units[0][0], None, None)
        raise TraceFormatError(f"{label}: not a trace; expected {EXPECTED}"
                               + (f"; it {held.removesuffix('; not read')}" if held else ""))
    for obj, where in undetected:
        acc.skip(f"{where}: {_why_not(obj, batches)}; skipped")
        msg = unread_problem(obj, None, None)
        if msg is not None:
            acc.not_read(f"{where}: {msg}", skipped=True)
    record_groups.take_grouped(batches, acc, label)  # per-call / per-event records: runs by their ids
    for f, items in batches.items():
        if f == "tau_bench":
            res = tau_bench.read_labeled(items)
            if fmt != "auto" and res.skipped and any(tau_bench.crash_reason(o) is None for o, _ in items
                                                      if tau_bench.record_problem(o) is not None):
                bad = next(m for m in res.skipped if "crashed before finishing" not in m)
                loc, _, why = bad.removesuffix("; skipped").partition(": ")
                raise TraceFormatError(f"{loc}: does not fit --format tau_bench: {why}")
            crashed_only = all(tau_bench.crash_reason(o) is not None for o, _ in items)
            if strict and len(units) == 1 and res.skipped and not crashed_only:
                raise TraceFormatError(f"{label}: {tau_bench.FORMAT}: {res.skipped[0].split(': ', 1)[1]}")
            for msg in res.skipped:
                acc.skip(msg)
            tb_cases, tb_runs, clash = case_keys.qualify(res.cases, res.trajectories, acc.cases, label)
            for t, w in tb_runs:
                acc.add(t, f, w, label)
            acc.check_batch([o for o, _ in items], [t for t, _ in tb_runs], f, label)
            acc.problems.extend(res.problems)
            if clash:
                acc.problems.append(clash)
            for cid, c in tb_cases.items():
                acc.cases.setdefault(cid, c)
        elif f == "inspect_ai":
            if fmt != "auto":
                for o, w in items:
                    if not inspect_ai.is_log(as_plain(o)):
                        det = detect(o)
                        raise TraceFormatError(f"{w}: does not fit --format inspect_ai: not an Inspect AI log or sample"
                                               + (f"; it reads as {det}" if det else ""))
            ires = _guarded(inspect_ai.read_labeled, items, f)
            if strict and len(units) == 1 and not ires.trajectories and not ires.skipped:
                raise TraceFormatError(f"{label}: {f}: no samples")
            for msg in ires.skipped:
                acc.skip(msg)
            i_cases, i_runs, i_problems = host_exports.inspect_cases(ires.references, ires.trajectories)
            acc.problems.extend(i_problems)
            i_cases, i_runs, clash = case_keys.qualify(i_cases, i_runs, acc.cases, label)
            if clash:
                acc.problems.append(clash)
            for cid, c in i_cases.items():
                acc.cases.setdefault(cid, c)
            for t, w in i_runs:
                acc.add(t, f, w, label)
            acc.check_batch([o for o, _ in items], [t for t, _ in ires.trajectories], f, label)
        elif f in _GROUPED:
            try:
                trajs = _guarded(_GROUPED[f], [o for o, _ in items], f)
            except TraceFormatError as e:
                if strict and len(batches) == 1:
                    raise TraceFormatError(f"{label}: {e}") from e
                acc.skip(f"{label}: {e}")
                continue
            if not trajs:
                acc.skip(f"{label}: {f}: no spans or events of a run; no traces")
            how = sorted({str(t.metadata["grouped_by"]) for t in trajs if t.metadata.get("grouped_by")})
            if how:  # per-call / per-event records grouped into runs: say how (inspect shows it)
                acc.source(label).grouped[f] = f"{len(items)} records grouped into {len(trajs)} runs by {' / '.join(how)}"
            for t in trajs:
                tag = t.trace_id or t.session_id
                acc.add(t, f, f"{label} {'trace' if t.trace_id else 'session'} {tag}" if tag else label, label)
            acc.check_batch([o for o, _ in items], list(trajs), f, label)
        elif f == "tau2":
            try:
                r2 = _guarded(tau2.read_labeled, items, f)
            except TraceFormatError as e:
                if strict and len(units) == 1:
                    raise TraceFormatError(f"{label}: {e}") from e
                acc.skip(f"{label}: {e}")
                continue
            for msg in r2.skipped:
                acc.skip(msg)
            t2_cases, t2_runs, clash = case_keys.qualify(r2.cases, r2.trajectories, acc.cases, label)
            for t, w in t2_runs:
                acc.add(t, f, w, label)
            acc.check_batch([o for o, _ in items], [t for t, _ in t2_runs], f, label)
            acc.problems.extend(r2.problems)
            if clash:
                acc.problems.append(clash)
            for cid, c in t2_cases.items():
                acc.cases.setdefault(cid, c)
        elif f in ("otel", "langsmith"):
            mod = otel if f == "otel" else langsmith
            flat: list[Any] = []
            for o, w in items:
                o = as_plain(o)
                if fmt != "auto":
                    misfit = _batch_misfit(o, f)
                    if misfit is not None:
                        raise TraceFormatError(f"{w}: does not fit --format {f}: {misfit}")
                flat.extend(o if is_seq(o) else [o])
            try:
                trajs = _guarded(mod.read_all, flat, f)
            except TraceFormatError as e:
                trajs = _read_batch_apart(mod, f, items, acc)
                if not trajs:
                    if strict and len(batches) == 1:
                        raise TraceFormatError(f"{label}: {e}") from e
                    acc.skip(f"{label}: {e}")
                    continue
            for t in trajs:
                acc.add(t, f, f"{label} trace {t.trace_id}" if t.trace_id else label, label)
            acc.check_batch([o for o, _ in items], list(trajs), f, label)
        else:
            for o, w in items:
                try:
                    t = _read_one(o, f)
                except TraceFormatError as e:
                    if fmt != "auto":
                        raise TraceFormatError(f"{w}: does not fit --format {f}: {e}") from e
                    if strict and len(units) == 1:
                        raise TraceFormatError(f"{label}: {e}") from e
                    acc.skip(f"{w}: {e}; skipped")
                    held = unread_problem(o, None, f)
                    if held is not None:
                        acc.not_read(f"{w}: {held}", skipped=True)
                    continue
                if fmt != "auto":
                    misfit = _misfit(o, f, t)
                    if misfit is not None:
                        raise TraceFormatError(f"{w}: does not fit --format {f}: {misfit}")
                else:
                    acc.guess(o, f, label)
                acc.add(t, f, w, label)
                acc.check(o, t, f, w)


_EXPORT_FORMAT = {host_exports.DEEPEVAL: "deepeval", host_exports.RAGAS: "ragas"}


def _read_exports(exported: dict[str, list[tuple[Any, str]]], acc: _Acc, label: str) -> None:
    """Read host exports that carry their own references (``host_exports``): their runs under
    the host's format name, their cases into ``acc.cases`` (re-keyed by file when they clash
    with another file's, as tau-bench's are)."""
    for k, items in exported.items():
        res = host_exports.read_deepeval(items) if k == host_exports.DEEPEVAL else host_exports.read_ragas(items)
        acc.wrapper(label, res.wrapper)
        for msg in res.skipped:
            acc.skip(msg)
        acc.problems.extend(res.problems)
        cases, runs, clash = case_keys.qualify(res.cases, res.runs, acc.cases, label)
        if clash:
            acc.problems.append(clash)
        for cid, c in cases.items():
            acc.cases.setdefault(cid, c)
        for t, w in runs:
            acc.add(t, _EXPORT_FORMAT[k], w, label)


def _batch_misfit(obj: Any, fmt: str) -> str | None:
    """Why ``obj`` cannot be part of a forced ``otel`` / ``langsmith`` batch, or None."""
    items = list(obj) if is_seq(obj) else [obj]
    for i, x in enumerate(items):
        x = as_plain(x)
        ok = otel.is_source(x) if fmt == "otel" else langsmith.is_run(x)
        if not ok:
            what = "an OTLP document or span" if fmt == "otel" else "a LangSmith run ('run_type' and 'name')"
            at = f"item {i} " if is_seq(obj) else ""
            return f"{at}is not {what}" + (f"; it reads as {detect(x)}" if detect(x) else "")
    return None


def _misfit(obj: Any, fmt: str, t: Trajectory) -> str | None:
    """Why the trajectory ``t`` that the forced format ``fmt`` read from ``obj`` is not what
    ``obj`` holds, or None when it fits.

    A forced format does not fit when it reads no step from the record, or fewer tool calls or
    steps than the record's detected format reads (e.g. ``--format anthropic`` on OpenAI chat
    messages would drop their ``tool_calls``). A forced format that reads as much as the
    detected one is the user's choice between two readings (LangChain vs RAGAS messages).
    """
    if not t.steps:
        det = detect(obj)
        return "nothing read from the record" + (f"; it reads as {det}" if det and det != fmt else "")
    det = detect(obj)
    if det is None or det == fmt or det in ("otel", "langsmith", "tau_bench"):
        return None
    try:
        other = _read_one(obj, det)
    except TraceFormatError:
        return None
    nf, nd = len(t.tool_calls()), len(other.tool_calls())
    if nf < nd:
        return f"it reads {nf} tool call(s) as {fmt} but {nd} as {det}, its detected format"
    if len(t.steps) < len(other.steps) and nf == 0:
        return f"it reads {len(t.steps)} step(s) as {fmt} but {len(other.steps)} as {det}, its detected format"
    return None


def _decode_lines(data: bytes, path: Path, acc: _Acc) -> str:
    """The text of a file that is not UTF-8 as a whole: each line decoded on its own, a line
    that is not UTF-8 reported (with its line number) and left out, the others kept."""
    lines = data.split(b"\n")
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    out: list[str] = []
    for n, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            acc.skip(f"{path}:{n}: not UTF-8 text ({e.reason} at byte {e.start} of the line); line skipped")
            out.append("")
    return "\n".join(out)


def _json(text: str, where: str, acc: _Acc, *, check_depth: bool = True) -> Any:
    """One JSON value of untrusted text (``limits.loads``); normalisations become faults."""
    notes: list[str] = []
    val = limits.loads(text, notes, max_depth=limits.MAX_DEPTH if check_depth else None)
    acc.problems.extend(f"{where}: {n}" for n in notes)
    return val


def _read_batch_apart(mod: Any, fmt: str, items: list[tuple[Any, str]], acc: _Acc) -> list[Trajectory]:
    """When a batch of OTLP / LangSmith records fails as a whole: find the records that fail
    on their own, report each (with its location) and read the others together (so spans
    of one trace spread over several lines are still grouped)."""
    good: list[Any] = []
    for o, where in items:
        o = as_plain(o)
        recs = list(o) if is_seq(o) else [o]
        try:
            _guarded(mod.read_all, recs, fmt)
        except TraceFormatError as e:
            acc.skip(f"{where}: {e}; skipped")
            continue
        good.extend(recs)
    if not good:
        return []
    try:
        return list(_guarded(mod.read_all, good, fmt))
    except TraceFormatError:
        return []


def _parse_file(path: Path, acc: _Acc) -> list[tuple[Any, str]] | None:
    """Parsed trace objects of one file with their locations; None when the file is empty."""
    if path.suffix.lower() == ".eval" or inspect_ai.is_eval_zip(path):
        return [(inspect_ai.load_eval_zip(path), str(path))]
    try:
        data = _read_bytes(path)
    except OSError as e:
        raise TraceFormatError(f"{path}: cannot be read ({e.strerror})") from e
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if b"\n" not in data.strip():
            raise TraceFormatError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start}); "
                                   f"expected {EXPECTED}") from e
        text = _decode_lines(data, path, acc)
    if not text.strip():
        if not acc.skipped or not acc.skipped[-1].startswith(f"{path}:"):
            acc.skip(f"{path}: empty file; no traces")
        return None
    whole_err: str | None = None
    if _inner_suffix(path) not in (".jsonl", ".ndjson"):
        try:
            doc = _json(text, str(path), acc, check_depth=False)
        except InputLimitError as e:
            whole_err = str(e)
            doc = _list_apart(text, path, acc)
            if doc is not None:
                return _list_units(doc, path, acc)
        except ValueError as e:
            whole_err = str(e)
        else:
            if is_seq(doc) and not doc:
                acc.skip(f"{path}: an empty list; no traces")
                return None
            return _list_units(doc, path, acc)
    units: list[tuple[Any, str]] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = _json(line, f"{path}:{n}", acc)
        except ValueError as e:
            bad.append(_bad_json_line(f"{path}:{n}", e))
            continue
        for o, w in _units(obj, acc, str(path), f"{path}:{n}"):
            units.append((o, f"{path}:{n}" + (f" {w}" if w else "")))
    if not units:
        stream = _raw_stream(text)
        if stream:
            return [(o, f"{path} object {i}") for i, o in enumerate(stream)]
        reason = whole_err or (bad[0] if bad else "no JSON")
        raise TraceFormatError(f"{path}: not JSON or JSON Lines ({reason}); expected {EXPECTED}")
    for b in bad:
        acc.skip(b)
    return units


_LOST = object()  # the place of a JSON list's item that could not be parsed (``_list_apart``)


def _list_units(doc: Any, path: Path, acc: _Acc) -> list[tuple[Any, str]]:
    """The trace objects of a parsed JSON document (``_units``), each nested too deep
    reported and left out."""
    out: list[tuple[Any, str]] = []
    for o, w in _units(doc, acc, str(path), str(path)):
        if o is _LOST:
            continue
        if w is None and is_seq(o) and any(x is _LOST for x in o):
            o = [x for x in o if x is not _LOST]
        where = f"{path} {w}" if w else str(path)
        if limits.depth_exceeds(o):
            if not w:
                raise TraceFormatError(f"{path}: JSON nested deeper than {limits.MAX_DEPTH} levels")
            acc.skip(f"{where}: JSON nested deeper than {limits.MAX_DEPTH} levels; skipped")
            continue
        out.append((o, where))
    return out


def _list_apart(text: str, path: Path, acc: _Acc) -> list[Any] | None:
    """A JSON array whose whole parse was refused for its depth, parsed item by item: an item
    nested too deep for the parser is reported (``<file> record <i>``) and left out, as a JSON
    Lines line would be; the others are kept in order, a lost item's place held by ``_LOST``
    (so the others keep their record numbers; ``_list_units`` drops it). None when ``text`` is
    not an array, or when no item parses (the file is then refused as before)."""
    texts = _json_list.split_array(text)
    if texts is None:
        return None
    items: list[Any] = []
    lost: list[str] = []
    for i, t in enumerate(texts):
        try:
            items.append(_json(t, f"{path} record {i}", acc, check_depth=False))
        except ValueError as e:
            lost.append(f"{path} record {i}: {e}; skipped")
            items.append(_LOST)
    if len(lost) == len(items):
        return None
    for msg in lost:
        acc.skip(msg)
    return items


def _inner_suffix(path: Path) -> str:
    """The suffix that says what a file holds: ``.jsonl`` for both ``a.jsonl`` and ``a.jsonl.gz``."""
    sfx = [s.lower() for s in path.suffixes]
    if len(sfx) >= 2 and sfx[-1] == ".gz":
        return sfx[-2]
    return sfx[-1] if sfx else ""


def _read_bytes(path: Path) -> bytes:
    """A file's bytes; a ``.gz`` file is decompressed first (benchmarks publish their result
    files gzipped). Raises OSError as reading does; a corrupt gzip stream raises OSError
    naming the fault."""
    data = path.read_bytes()
    if path.suffix.lower() != ".gz":
        return data
    import gzip

    try:
        return gzip.decompress(data)
    except EOFError as e:
        raise OSError(0, f"truncated gzip file ({e})") from e
    except gzip.BadGzipFile as e:
        raise OSError(0, f"not a gzip file ({e})") from e


def _raw_stream(text: str) -> list[Any]:
    """Concatenated JSON values (e.g. the OTel SDK console exporter); [] when the text is not that."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            val, i = dec.raw_decode(text, i)
        except (ValueError, RecursionError):
            return []
        if limits.depth_exceeds(val):
            return []
        out.append(val)
    return out if len(out) > 1 else []


def load(path_or_obj: Any, format: str = "auto", *,
         error_pattern: str | re.Pattern[str] | None = None) -> LoadResult:
    """Read traces from a file, a directory, or an in-memory object.

    ``path_or_obj``: a ``str`` / ``os.PathLike`` naming a ``.json`` file (one trace, or a list
    of traces such as tau-bench records), a ``.jsonl`` / ``.ndjson`` file (one trace per line;
    a malformed line is reported in ``problems`` with its line number and the rest is read),
    a file of concatenated JSON objects, or a directory (all ``.json``/``.jsonl``/``.ndjson``
    files below it, sorted; a file that is not a trace is reported, not raised, unless no
    file holds a trace); or any already-parsed object or SDK object.
    ``format``: ``"auto"`` (per-object detection, see ``detect``) or a name from ``FORMATS``.
    ``error_pattern``: opt-in regex marking tool results failed for sources with no error
    channel; applied to every trajectory read, never overriding a source's own error flag
    (see ``apply_error_pattern``). Wrapper metadata (``metadata``, ``case_id``, ``trial``,
    ``run_id`` of a record such as ``{"messages": [...], "metadata": {...}}``) is merged into
    each trajectory's metadata as in ``read`` (for formats read one object at a time; OTLP,
    LangSmith and tau-bench, which group records, carry their own ids).

    Locations in messages (one style everywhere): ``<file>:<line>`` for a JSONL line (1-based),
    ``<file> record <i>`` for an item of a JSON list (0-based index; ``<file>:<line> record
    <i>`` for a list on a JSONL line), ``<file> object <i>`` for concatenated JSON values
    (0-based), ``<input>`` for an in-memory object; then, inside a trace, a 0-based JSON-path-like
    field path such as ``traj[2].tool_calls[0]`` or ``steps[1].tool_calls[0]``.
    A line or record that is not a trace, or that its reader rejects, is reported in
    ``skipped`` and the rest is read (only a file in which nothing is a trace raises).

    Returns a ``LoadResult``. An empty file yields no trajectories and a problem. Raises
    ``TraceFormatError`` naming the file when the input is not a trace at all (not JSON,
    or JSON in no supported shape), when a path does not exist, or when ``format`` is unknown.
    OTLP spans and LangSmith runs of one file are grouped by trace id / root run across lines.
    """
    fmt = _norm_format(format)
    acc = _Acc(error_pattern=_compile_pattern(error_pattern))
    if isinstance(path_or_obj, (str, os.PathLike)):
        path = Path(path_or_obj)
        try:
            path.stat()
        except (OSError, ValueError) as e:  # a name too long or not encodable, a link loop, ...
            if not isinstance(e, FileNotFoundError):
                raise TraceFormatError(f"{str(path)[:200]!r}: cannot be read as a path "
                                       f"({getattr(e, 'strerror', None) or e})") from e
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and (
                p.suffix.lower() in _SUFFIXES or p.name.lower().endswith(_GZ_SUFFIXES)))
            if not files:
                raise TraceFormatError(f"{path}: directory holds no .json/.jsonl/.ndjson files "
                                       "(or .gz of them)")
            errors: list[str] = []
            for f in files:
                acc.source(str(f))
                try:
                    units = _parse_file(f, acc)
                    if units is not None:
                        _read_units(units, fmt, acc, str(f), strict=True)
                except TraceFormatError as e:
                    errors.append(str(e))
            if errors and not acc.trajectories:
                raise TraceFormatError("; ".join(errors))
            for msg in errors:
                acc.skip(msg)
        elif path.is_file():
            acc.source(str(path))
            units = _parse_file(path, acc)
            if units is not None:
                _read_units(units, fmt, acc, str(path), strict=True)
        else:
            raise TraceFormatError(f"{path}: no such file or directory")
    else:
        obj = path_or_obj
        acc.source("<input>")
        if is_seq(obj) and not obj:
            acc.skip("<input>: an empty list; no traces")
        else:
            mem: list[tuple[Any, str]] = []
            for o, w in _units(obj, acc, "<input>", "<input>"):
                where = f"<input> {w}" if w else "<input>"
                if limits.depth_exceeds(o):
                    if not w:
                        raise TraceFormatError(f"<input>: nested deeper than {limits.MAX_DEPTH} levels")
                    acc.skip(f"{where}: nested deeper than {limits.MAX_DEPTH} levels; skipped")
                    continue
                mem.append((o, where))
            _read_units(mem, fmt, acc, "<input>", strict=True)
    return acc.result()


__all__ = ["EXPECTED", "FORMATS", "LoadResult", "apply_error_pattern", "detect", "guessed", "load",
           "read", "with_wrapper_metadata"]
