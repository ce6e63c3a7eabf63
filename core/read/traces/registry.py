"""The reader registry: which function reads each format.

``READERS`` maps a format name to its one-object reader (``read(obj) -> Trajectory``);
``GROUPED`` to the reader of formats whose records join across lines into runs (by trace or
session id). ``REGISTRY`` maps every name of ``FORMATS`` to a ``Reader``: the function that
reads one file's records of that format into the loader's ``Accumulator`` (tau-bench and
tau2 result files with their cases, Inspect AI logs, grouped records, OTLP spans and
LangSmith runs read together, every other format one record at a time). Every ``Reader``
keeps the loader's never-silent policy: a record it cannot read is reported with its
location, and a record holding tool calls it did not read is an ``unread`` problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ...errors import TraceFormatError
from ...model import Trajectory
from . import (
    ag2_chats,
    anthropic,
    anthropic_managed,
    atif,
    autogen,
    bedrock_invocations,
    bfcl_result,
    case_keys,
    crewai_events,
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
    smolagents,
    tau2,
    tau_bench,
    vertex,
)
from ._util import as_plain, is_seq
from .detection import detect
from .formats import FORMATS
from .load_result import Accumulator
from .unread import unread_problem

# readers of shapes once refused (detected in ``detection._detect_new``)
_ADDED_READERS: dict[str, Any] = {"smolagents": smolagents.read, "autogen": autogen.read,
                                  "langchain_events": langchain_events.read, "litellm": litellm.read,
                                  "bedrock_invocations": bedrock_invocations.read,
                                  "llamaindex_events": llamaindex_events.read,
                                  "crewai_events": crewai_events.read, "ag2_chats": ag2_chats.read}
READERS: dict[str, Callable[[Any], Trajectory]] = {
    "trajcheck": native.read, "tau_bench": tau_bench.read, "tau2": tau2.read, "bfcl": bfcl_result.read, "otel": otel.read, "langsmith": langsmith.read,
    "promptfoo": promptfoo.read, "vertex": vertex.read, "openai_responses": openai_responses.read,
    "deepeval": deepeval.read, "langchain": langchain.read, "ragas": ragas.read,
    "anthropic": anthropic.read, "openai_chat": openai_chat.read, "plain": plain.read,
    "inspect_ai": inspect_ai.read, "atif": atif.read, "langfuse": langfuse.read,
    "openai_agents": openai_agents.read, "anthropic_managed": anthropic_managed.read, "mlflow": mlflow.read,
    "pydantic_ai": pydantic_ai.read, **_ADDED_READERS, "messages": messages.read,
}
# formats whose records are grouped across lines/items into runs (by trace or session id)
GROUPED: dict[str, Callable[[list[Any]], list[Trajectory]]] = {
    "openai_agents": openai_agents.read_all, "anthropic_managed": anthropic_managed.read_all,
    "mlflow": mlflow.read_all, "autogen": autogen.read_all,
    "langchain_events": langchain_events.read_all, "litellm": litellm.read_all,
    "bedrock_invocations": bedrock_invocations.read_all,
    "llamaindex_events": llamaindex_events.read_all, "crewai_events": crewai_events.read_all,
    "ag2_chats": ag2_chats.read_all}


def guarded(fn: Any, obj: Any, fmt: str) -> Any:
    """``fn(obj)``; any exception other than ``TraceFormatError`` (a reader's bug on odd
    input) is raised as ``TraceFormatError`` naming the format."""
    try:
        return fn(obj)
    except TraceFormatError:
        raise
    except Exception as e:  # a reader's bug on odd input must not escape as a crash
        raise TraceFormatError(f"{fmt}: could not read the object as {fmt}: {type(e).__name__}: {e}") from e


def read_one(obj: Any, fmt: str) -> Trajectory:
    """One object through its format's reader, plus the wrapper's metadata."""
    t = guarded(READERS[fmt], obj, fmt)
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


def batch_misfit(obj: Any, fmt: str) -> str | None:
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


def misfit(obj: Any, fmt: str, t: Trajectory) -> str | None:
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
        other = read_one(obj, det)
    except TraceFormatError:
        return None
    nf, nd = len(t.tool_calls()), len(other.tool_calls())
    if nf < nd:
        return f"it reads {nf} tool call(s) as {fmt} but {nd} as {det}, its detected format"
    if len(t.steps) < len(other.steps) and nf == 0:
        return f"it reads {len(t.steps)} step(s) as {fmt} but {len(other.steps)} as {det}, its detected format"
    return None


def _read_batch_apart(mod: Any, fmt: str, items: list[tuple[Any, str]], acc: Accumulator) -> list[Trajectory]:
    """When a batch of OTLP / LangSmith records fails as a whole: find the records that fail
    on their own, report each (with its location) and read the others together (so spans
    of one trace spread over several lines are still grouped)."""
    good: list[Any] = []
    for o, where in items:
        o = as_plain(o)
        recs = list(o) if is_seq(o) else [o]
        try:
            guarded(mod.read_all, recs, fmt)
        except TraceFormatError as e:
            acc.skip(f"{where}: {e}; skipped")
            continue
        good.extend(recs)
    if not good:
        return []
    try:
        return list(guarded(mod.read_all, good, fmt))
    except TraceFormatError:
        return []


# ----------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Batch:
    """One format's records of one file (or in-memory input), as the loader hands them to
    that format's ``Reader``.

    ``fmt``: the format the records are read as; ``items``: ``(record, location)`` pairs in
    input order; ``forced``: the format the user asked for (``"auto"`` when each record's
    was detected); ``acc``: the loader's accumulator; ``label``: the file (``"<input>"``);
    ``strict``: raise rather than report when nothing of the file can be read;
    ``n_units``: the file's records (all formats), ``n_formats``: its formats.
    """

    fmt: str
    items: list[tuple[Any, str]]
    forced: str
    acc: Accumulator
    label: str
    strict: bool
    n_units: int
    n_formats: int


class Reader(Protocol):
    """Reads a ``Batch`` into its accumulator: each trajectory added with its location,
    each record not read reported (``skipped``), each record's tool calls not read noted
    (``unread``). Raises ``TraceFormatError`` when the batch cannot be read and ``strict``
    says the file has nothing else, or when a record does not fit a forced format."""

    def __call__(self, b: Batch) -> None: ...


def _add_with_cases(b: Batch, res: Any, runs: list[tuple[Trajectory, str]], cases: dict[str, Any],
                    clash: str | None) -> None:
    """Add a result file's runs (already keyed by ``case_keys.qualify``) and its cases;
    ``res``: the format's ``read_labeled`` result (``skipped`` already reported)."""
    acc = b.acc
    for t, w in runs:
        acc.add(t, b.fmt, w, b.label)
    acc.check_batch([o for o, _ in b.items], [t for t, _ in runs], b.fmt, b.label)
    acc.problems.extend(res.problems)
    if clash:
        acc.problems.append(clash)
    for cid, c in cases.items():
        acc.cases.setdefault(cid, c)


def read_tau_bench(b: Batch) -> None:
    """tau-bench result records: a run per record, the cases they carry; a record that is
    not one is refused under ``--format tau_bench`` and skipped otherwise (crashed runs
    are skipped and named even alone)."""
    acc, items, label = b.acc, b.items, b.label
    res = tau_bench.read_labeled(items)
    if b.forced != "auto" and res.skipped and any(tau_bench.crash_reason(o) is None for o, _ in items
                                                  if tau_bench.record_problem(o) is not None):
        bad = next(m for m in res.skipped if "crashed before finishing" not in m)
        loc, _, why = bad.removesuffix("; skipped").partition(": ")
        raise TraceFormatError(f"{loc}: does not fit --format tau_bench: {why}")
    crashed_only = all(tau_bench.crash_reason(o) is not None for o, _ in items)
    if b.strict and b.n_units == 1 and res.skipped and not crashed_only:
        raise TraceFormatError(f"{label}: {tau_bench.FORMAT}: {res.skipped[0].split(': ', 1)[1]}")
    for msg in res.skipped:
        acc.skip(msg)
    cases, runs, clash = case_keys.qualify(res.cases, res.trajectories, acc.cases, label)
    _add_with_cases(b, res, runs, cases, clash)


def read_tau2(b: Batch) -> None:
    """tau2-bench ``Results`` files: a run per simulation, the tasks as cases."""
    acc, label = b.acc, b.label
    try:
        res = guarded(tau2.read_labeled, b.items, b.fmt)
    except TraceFormatError as e:
        if b.strict and b.n_units == 1:
            raise TraceFormatError(f"{label}: {e}") from e
        acc.skip(f"{label}: {e}")
        return
    for msg in res.skipped:
        acc.skip(msg)
    cases, runs, clash = case_keys.qualify(res.cases, res.trajectories, acc.cases, label)
    _add_with_cases(b, res, runs, cases, clash)


def read_inspect(b: Batch) -> None:
    """Inspect AI logs: a run per sample, the samples' targets as cases."""
    acc, items, label, f = b.acc, b.items, b.label, b.fmt
    if b.forced != "auto":
        for o, w in items:
            if not inspect_ai.is_log(as_plain(o)):
                det = detect(o)
                raise TraceFormatError(f"{w}: does not fit --format inspect_ai: not an Inspect AI log or sample"
                                       + (f"; it reads as {det}" if det else ""))
    ires = guarded(inspect_ai.read_labeled, items, f)
    if b.strict and b.n_units == 1 and not ires.trajectories and not ires.skipped:
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


def read_grouped(b: Batch) -> None:
    """Records of one run spread over lines or items (``GROUPED``), grouped into runs by
    their trace or session ids; how they were grouped is noted for ``inspect``."""
    acc, items, label, f = b.acc, b.items, b.label, b.fmt
    try:
        trajs = guarded(GROUPED[f], [o for o, _ in items], f)
    except TraceFormatError as e:
        if b.strict and b.n_formats == 1:
            raise TraceFormatError(f"{label}: {e}") from e
        acc.skip(f"{label}: {e}")
        return
    if not trajs:
        acc.skip(f"{label}: {f}: no spans or events of a run; no traces")
    how = sorted({str(t.metadata["grouped_by"]) for t in trajs if t.metadata.get("grouped_by")})
    if how:  # per-call / per-event records grouped into runs: say how (inspect shows it)
        acc.source(label).grouped[f] = f"{len(items)} records grouped into {len(trajs)} runs by {' / '.join(how)}"
    for t in trajs:
        tag = t.trace_id or t.session_id
        acc.add(t, f, f"{label} {'trace' if t.trace_id else 'session'} {tag}" if tag else label, label)
    acc.check_batch([o for o, _ in items], list(trajs), f, label)


def read_spans(b: Batch) -> None:
    """OTLP spans or LangSmith runs, read together (one trace may span several lines); when
    the batch fails as a whole, the records that fail alone are skipped and the rest read."""
    acc, items, label, f = b.acc, b.items, b.label, b.fmt
    mod = otel if f == "otel" else langsmith
    flat: list[Any] = []
    for o, w in items:
        o = as_plain(o)
        if b.forced != "auto":
            why = batch_misfit(o, f)
            if why is not None:
                raise TraceFormatError(f"{w}: does not fit --format {f}: {why}")
        flat.extend(o if is_seq(o) else [o])
    try:
        trajs = guarded(mod.read_all, flat, f)
    except TraceFormatError as e:
        trajs = _read_batch_apart(mod, f, items, acc)
        if not trajs:
            if b.strict and b.n_formats == 1:
                raise TraceFormatError(f"{label}: {e}") from e
            acc.skip(f"{label}: {e}")
            return
    for t in trajs:
        acc.add(t, f, f"{label} trace {t.trace_id}" if t.trace_id else label, label)
    acc.check_batch([o for o, _ in items], list(trajs), f, label)


def read_each(b: Batch) -> None:
    """Formats read one record at a time (``READERS``): a record its reader rejects is
    skipped (refused under a forced format); a forced format that reads less than the
    record's detected one is refused (``misfit``); a format taken by a guess is noted."""
    acc, label, f = b.acc, b.label, b.fmt
    for o, w in b.items:
        try:
            t = read_one(o, f)
        except TraceFormatError as e:
            if b.forced != "auto":
                raise TraceFormatError(f"{w}: does not fit --format {f}: {e}") from e
            if b.strict and b.n_units == 1:
                raise TraceFormatError(f"{label}: {e}") from e
            acc.skip(f"{w}: {e}; skipped")
            held = unread_problem(o, None, f)
            if held is not None:
                acc.not_read(f"{w}: {held}", skipped=True)
            continue
        if b.forced != "auto":
            why = misfit(o, f, t)
            if why is not None:
                raise TraceFormatError(f"{w}: does not fit --format {f}: {why}")
        else:
            acc.guess(o, f, label)
        acc.add(t, f, w, label)
        acc.check(o, t, f, w)


_BATCH_READERS: dict[str, Reader] = {"tau_bench": read_tau_bench, "inspect_ai": read_inspect,
                                     **dict.fromkeys(GROUPED, read_grouped), "tau2": read_tau2,
                                     "otel": read_spans, "langsmith": read_spans}
#: format name -> the ``Reader`` of its records; every name of ``FORMATS`` has one
REGISTRY: dict[str, Reader] = {f: _BATCH_READERS.get(f, read_each) for f in FORMATS}
