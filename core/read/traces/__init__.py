"""Trace readers: every supported source format -> ``trajcheck.model.Trajectory``.

``load(path_or_obj, format="auto")`` reads a JSON file, a JSON Lines file (one trace per
line), a directory of them, or an in-memory object, and returns a ``LoadResult``.
``read(obj, format)`` reads one object. Each format has its own module with
``read(obj) -> Trajectory``:

=========================  =========================================================
format name                source
=========================  =========================================================
``trajcheck``              ``Trajectory.to_dict()`` output (our own JSONL traces)
``tau_bench``              tau-bench result records (also yield ``Case`` objects)
``inspect_ai``             Inspect AI eval logs (``.json``, ``.eval`` zips), one run per sample
``atif``                   ATIF trajectories (Harbor)
``langfuse``               Langfuse trace exports (``trace`` + ``observations``)
``openai_agents``          OpenAI Agents SDK traces (span exports, ``/v1/traces/ingest`` bodies)
``anthropic_managed``      Anthropic Managed Agents session events (``[method, event]`` JSONL)
``tau2``                   tau2-bench ``Results`` files (one run per simulation, and the cases)
``bfcl``                   BFCL result lines (``bfcl generate``: ``{id, result}``), one run per entry
``mlflow``                 MLflow traces (``Trace.to_json()``, ``search_traces`` rows)
``pydantic_ai``            pydantic-ai message histories (``all_messages_json()``)
``smolagents``             smolagents ``RunResult`` and agent memory steps
``autogen``                AutoGen AgentChat ``TaskResult``, ``run_stream`` events, saved state
``langchain_events``       LangChain ``astream_events`` output (one run per root run)
``litellm``                LiteLLM standard logging payloads (grouped by trace id / message chain)
``bedrock_invocations``    Bedrock model-invocation logs (grouped by requestMetadata / message chain)
``llamaindex_events``      LlamaIndex agent workflow events (``JsonSerializer`` lines), a run per StopEvent
``crewai_events``          CrewAI event bus events (JSON Lines), a run per crew kickoff
``ag2_chats``              AG2 ``ChatResult`` lines / ``chat_id`` messages, a run per conversation
``otel``                   OTLP JSON (OpenTelemetry GenAI / OpenInference attributes)
``langsmith``              LangSmith run trees
``promptfoo``              promptfoo provider output
``vertex``                 Vertex ``predicted_trajectory``, Google ADK invocations
``openai_responses``       OpenAI Responses items
``deepeval``               DeepEval ``ToolCall`` lists / test cases
``langchain``              LangChain messages (objects, ``messages_to_dict``, lc dicts)
``ragas``                  RAGAS messages
``messages``               provider messages of every other convention (``messages.py``): Bedrock
                           Converse/Strands, Gemini/google-genai, Cohere v2, Haystack, LlamaIndex,
                           Semantic Kernel, AG2 -- and OpenAI/Anthropic blocks mixed in
``anthropic``              Anthropic Messages
``openai_chat``            OpenAI Chat Completions messages
``plain``                  a list of ``{name, args}``
=========================  =========================================================

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

The package's modules: ``formats`` (names, aliases), ``detection`` (``detect``, ``guessed``),
``registry`` (the ``Reader`` of each format, ``REGISTRY``), ``units`` (a document's trace
objects and their reading, batched by format), ``io`` (files: bytes, text, JSON, JSON
Lines), ``load_result`` (``LoadResult`` and the accumulator of problems), ``error_pattern``;
this module holds the two entry points, ``read`` and ``load``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ...errors import TraceFormatError
from ...model import Trajectory
from .. import limits
from . import wrappers
from ._util import is_seq
from .detection import detect, guessed
from .error_pattern import apply_error_pattern, compile_error_pattern
from .formats import ALIASES, EXPECTED, FORMATS, norm_format
from .io import GZ_SUFFIXES, SUFFIXES, bad_json_line, parse_file, parse_json
from .load_result import Accumulator, LoadResult, SourceRead
from .registry import REGISTRY, Reader, read_one, with_wrapper_metadata
from .units import read_units, split_units

# the names these had while they lived here (modules and tests import some of them)
_ALIASES = ALIASES
_norm_format = norm_format
_compile_pattern = compile_error_pattern
_Acc = Accumulator
_units = split_units
_read_units = read_units
_json = parse_json
_bad_json_line = bad_json_line
_SUFFIXES = SUFFIXES
_GZ_SUFFIXES = GZ_SUFFIXES


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
    fmt = norm_format(format)
    pat = compile_error_pattern(error_pattern)
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
    t = read_one(obj, fmt)
    return apply_error_pattern(t, pat) if pat is not None else t



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
    fmt = norm_format(format)
    acc = Accumulator(error_pattern=compile_error_pattern(error_pattern))
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
                p.suffix.lower() in SUFFIXES or p.name.lower().endswith(GZ_SUFFIXES)))
            if not files:
                raise TraceFormatError(f"{path}: directory holds no .json/.jsonl/.ndjson files "
                                       "(or .gz of them)")
            errors: list[str] = []
            for f in files:
                acc.source(str(f))
                try:
                    units = parse_file(f, acc)
                    if units is not None:
                        read_units(units, fmt, acc, str(f), strict=True)
                except TraceFormatError as e:
                    errors.append(str(e))
            if errors and not acc.trajectories:
                raise TraceFormatError("; ".join(errors))
            for msg in errors:
                acc.skip(msg)
        elif path.is_file():
            acc.source(str(path))
            units = parse_file(path, acc)
            if units is not None:
                read_units(units, fmt, acc, str(path), strict=True)
        else:
            raise TraceFormatError(f"{path}: no such file or directory")
    else:
        obj = path_or_obj
        acc.source("<input>")
        if is_seq(obj) and not obj:
            acc.skip("<input>: an empty list; no traces")
        else:
            mem: list[tuple[Any, str]] = []
            for o, w in split_units(obj, acc, "<input>", "<input>"):
                where = f"<input> {w}" if w else "<input>"
                if limits.depth_exceeds(o):
                    if not w:
                        raise TraceFormatError(f"<input>: nested deeper than {limits.MAX_DEPTH} levels")
                    acc.skip(f"{where}: nested deeper than {limits.MAX_DEPTH} levels; skipped")
                    continue
                mem.append((o, where))
            read_units(mem, fmt, acc, "<input>", strict=True)
    return acc.result()


__all__ = ["EXPECTED", "FORMATS", "REGISTRY", "LoadResult", "Reader", "SourceRead",
           "apply_error_pattern", "detect", "guessed", "load", "read", "with_wrapper_metadata"]
