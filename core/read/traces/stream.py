"""Streaming reads: trajectories one at a time, in input order, without holding the file.

``stream(path)`` yields the same trajectories, in the same order and with the same problems,
as ``load(path)`` for inputs whose records are read one at a time (trajcheck's JSONL, chat
messages, plain call lists, any one-record-per-line format): a ``.jsonl``/``.ndjson`` file
is read line by line and each line is parsed, read and handed on before the next is
touched, so memory does not grow with the file. Records of formats that group many lines
into one run (OTLP spans, LangSmith runs, tau-bench files, Inspect logs, event streams)
cannot be read before their last line: such records are set aside and read together at the
end of their file, and ``.json`` files and folders' ``.json`` files go through ``load`` as
a whole. A run's position in the stream is its position in ``load``'s result whenever the
file holds one kind of record.

The ``TraceStream`` carries what ``load``'s ``LoadResult`` carries besides the trajectories:
``problems``, ``skipped``, ``cases`` (tau-bench), ``formats`` -- filled as the stream is
consumed (a file's cases before its first trajectory).

``TraceStream.fused_runs()`` is the same stream for a scorer that reads runs from their
facts (``trajcheck eval``): each usual line of trajcheck's own JSONL that the stream would
hand on with nothing to note comes as a ``native_facts.LineRun`` (its ``trajectory()`` is
the trajectory the plain iteration gives) instead of being built; everything else, and
every count and problem, is as in the plain iteration.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from ...errors import TraceFormatError
from ...model import Trajectory
from ..limits import NOT_PLAIN, plain_loads
from . import host_exports, load, native
from .case_keys import qualify
from .detection import detect
from .error_pattern import compile_error_pattern
from .formats import EXPECTED, norm_format
from .io import GZ_SUFFIXES, SUFFIXES, bad_json_line, not_utf8_line, parse_json
from .load_result import Accumulator
from .native import read_line
from .native_facts import LineRun, line_run
from .record_groups import defers, needs_others
from .units import read_units, split_units
from .unread import call_shapes, unread_problem

# formats read one record at a time (the rest need every record of their file together)
_NATIVE = native.FORMAT
_GROUPING = frozenset({"tau_bench", "inspect_ai", "otel", "langsmith", "openai_agents",
                       "anthropic_managed",
                       # event streams and call logs: one run spans many lines
                       "autogen", "langchain_events", "litellm", "bedrock_invocations", "llamaindex_events",
                       "crewai_events", "ag2_chats"})


class TraceStream:
    """Trajectories of ``path`` in input order (iterate once); see the module docstring.

    ``format``, ``error_pattern`` as in ``traces.load``. Iterating raises
    ``TraceFormatError`` naming the file when nothing in it is a trace, when the path does
    not exist, or when ``format`` is unknown -- as ``load`` does.
    """

    def __init__(self, path: str | Path, format: str = "auto", *,
                 error_pattern: str | re.Pattern[str] | None = None) -> None:
        self.path = Path(path)
        self.fmt = norm_format(format)
        self._acc = Accumulator(error_pattern=compile_error_pattern(error_pattern))
        self.problems = self._acc.problems
        self.skipped = self._acc.skipped
        self.cases = self._acc.cases
        self.formats = self._acc.formats
        self.unread = self._acc.unread
        self.guessed = self._acc.guessed
        self.n_read = 0

    @property
    def faults(self) -> list[str]:
        """Problems inside records that were read (not whole lines or records skipped)."""
        skipped = set(self.skipped)
        return [p for p in self.problems if p not in skipped]

    def __iter__(self) -> Iterator[Trajectory]:
        return cast("Iterator[Trajectory]", self._walk(False))

    def fused_runs(self) -> Iterator[Trajectory | LineRun]:
        """The stream's runs with the usual native line as a ``LineRun`` (module docstring)."""
        return self._walk(True)

    def _walk(self, fused: bool) -> Iterator[Trajectory | LineRun]:
        p = self.path
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and (
                f.suffix.lower() in SUFFIXES or f.name.lower().endswith(GZ_SUFFIXES)))
            if not files:
                raise TraceFormatError(f"{p}: directory holds no .json/.jsonl/.ndjson files")
            errors: list[str] = []
            for f in files:
                try:
                    yield from self._file(f, strict=True, fused=fused)
                except TraceFormatError as e:
                    errors.append(str(e))
            if errors and not self.n_read:
                raise TraceFormatError("; ".join(errors))
            for msg in errors:
                self._acc.skip(msg)
        elif p.is_file():
            yield from self._file(p, strict=True, fused=fused)
        else:
            raise TraceFormatError(f"{p}: no such file or directory")

    def _drain(self) -> Iterator[Trajectory]:
        out = self._acc.trajectories
        if out:
            self.n_read += len(out)
            batch = out[:]
            out.clear()
            yield from batch

    def _file(self, f: Path, *, strict: bool, fused: bool = False) -> Iterator[Trajectory | LineRun]:
        if f.suffix.lower() not in (".jsonl", ".ndjson"):
            res = load(f, self.fmt, error_pattern=self._acc.error_pattern)
            acc = self._acc
            acc.problems.extend(res.problems)
            acc.skipped.extend(res.skipped)
            acc.unread.extend(res.unread)
            for gf, why in res.guessed.items():
                acc.guessed.setdefault(gf, why)
            # a file whose tasks clash with an earlier file's is keyed by its name (case_keys)
            f_cases, f_runs, clash = qualify(res.cases, [(t, "") for t in res.trajectories],
                                             acc.cases, str(f))
            if clash:
                acc.problems.append(clash)
            for cid, c in f_cases.items():
                acc.cases.setdefault(cid, c)
            for k, v in res.formats.items():
                acc.formats[k] = acc.formats.get(k, 0) + v
            acc.sources.update(res.sources)
            self.n_read += len(f_runs)
            yield from (t for t, _ in f_runs)
            return
        yield from self._lines(f, strict=strict, fused=fused)

    def _lines(self, f: Path, *, strict: bool, fused: bool = False) -> Iterator[Trajectory | LineRun]:
        acc, label = self._acc, str(f)
        acc.source(label)
        deferred: list[tuple[Any, str]] = []
        n_units = 0
        bad: list[str] = []
        seen_any = False
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        try:
            fh = f.open("rb", buffering=1 << 20)  # a line is a few KB: fewer refills and joins
        except OSError as e:
            raise TraceFormatError(f"{f}: cannot be read ({e.strerror})") from e
        # the usual line of trajcheck's own JSONL (native.read_line) is parsed once and built
        # in one pass; any other line -- or one plain_loads leaves to limits.loads -- goes the
        # general way below, which gives it the same trajectory, problems and errors
        usual = self.fmt in ("auto", _NATIVE)
        out = acc.trajectories
        quiet = acc.error_pattern is None
        # the usual line with nothing to note, read straight to its scoring facts
        fused = fused and usual and quiet
        formats, src_formats = acc.formats, acc.source(label).formats
        with fh:
            for n, raw in enumerate(fh, 1):
                if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                obj = plain_loads(raw)
                if usual and obj is not NOT_PLAIN:
                    if fused:
                        lr = line_run(obj)
                        if lr is not None and not lr.cnames:  # no call read: is one there?
                            acc.check(obj, lr.trajectory(), _NATIVE, f"{label}:{n}")
                            lr._traj = None  # built for the check only: the fused route stays lean
                        if lr is not None:  # counted as the branch below counts such a line
                            seen_any = True
                            n_units += 1
                            formats[_NATIVE] = formats.get(_NATIVE, 0) + 1
                            src_formats[_NATIVE] = src_formats.get(_NATIVE, 0) + 1
                            self.n_read += 1
                            yield lr
                            continue
                    got = read_line(obj)
                    if got is not None:
                        seen_any = True
                        n_units += 1
                        t, plain = got
                        if not t.steps or not t.tool_calls():
                            acc.check(obj, t, _NATIVE, f"{label}:{n}")
                        if plain and quiet and "problems" not in t.metadata:
                            # what acc.add does for such a run: count it
                            formats[_NATIVE] = formats.get(_NATIVE, 0) + 1
                            src_formats[_NATIVE] = src_formats.get(_NATIVE, 0) + 1
                        else:
                            acc.add(t, _NATIVE, f"{label}:{n}", label, plain=plain)
                            t = out.pop()  # acc.add's one trajectory (drained after every line)
                        self.n_read += 1
                        yield t
                        continue
                if obj is not NOT_PLAIN:  # parsed, with nothing for loads to note
                    seen_any = True
                    where = f"{f}:{n}"
                else:
                    try:
                        line = decoder.decode(raw, final=True)
                    except UnicodeDecodeError as e:
                        acc.skip(not_utf8_line(f"{f}:{n}", e))
                        decoder.reset()
                        continue
                    if not line.strip():
                        continue
                    seen_any = True
                    where = f"{f}:{n}"
                    try:
                        obj = parse_json(line, where, acc)
                    except ValueError as e:
                        bad.append(bad_json_line(where, e))
                        continue
                now: list[tuple[Any, str]] = []
                for o, w in split_units(obj, acc, label, where):
                    unit = (o, where + (f" {w}" if w else ""))
                    n_units += 1
                    kind = self.fmt if self.fmt != "auto" else detect(o)
                    # a RAGAS export's rows are numbered together (their case ids)
                    grouped = kind in _GROUPING or (kind == "ragas" and host_exports.kind(o) is not None)  or defers(kind, o)
                    (deferred if grouped else now).append(unit)
                if now:
                    read_units(now, self.fmt, acc, label, strict=False)
                    yield from self._drain()
        if not seen_any:
            acc.skip(f"{f}: empty file; no traces")
            return
        if deferred:
            read_units(deferred, self.fmt, acc, label, strict=False)
            yield from self._drain()
        if strict and not n_units:
            reason = bad[0] if bad else "no JSON"
            raise TraceFormatError(f"{f}: not JSON or JSON Lines ({reason}); expected {EXPECTED}")
        if strict and not acc.formats and n_units:
            raise TraceFormatError(f"{f}: not a trace; expected {EXPECTED}")
        for b in bad:
            acc.skip(b)


def read_row(text: str, where: str, format: str = "auto", *,
             error_pattern: str | re.Pattern[str] | None = None,
             whole: bool = False, unread: list[str] | None = None,
             formats: dict[str, int] | None = None,
             guessed: dict[str, str] | None = None) -> tuple[list[Trajectory], list[str]]:
    """The trajectories of one JSON text (one JSONL line, one table cell) and the problems
    met, as ``load`` reads such a line.

    Records of formats that group many lines into one run (``_GROUPING``) cannot be read
    alone: they come back as a problem (and, holding tool calls, as unread) -- unless
    ``whole`` says the text holds every record of its runs (e.g. a JSON list of all the
    OTel spans of one trace, gathered by an engine's group-by), and they are read together
    as ``load`` reads them from one file.

    Args:
        text: the JSON text.
        where: names the row in problems (e.g. ``"row 12"``).
        format, error_pattern: as in ``traces.load``.
        whole: the text holds every record of its runs (see above).
        unread: when given, the never-silent messages (``LoadResult.unread``: records holding
            tool calls or results that were not read as calls) are appended to it; they are
            among the returned problems too unless their record was skipped whole.
        formats: when given, each run read is counted in it under its format (format ->
            runs), as ``TraceStream.formats`` counts the runs of a file.
        guessed: when given, each format taken by a guess gets its reason (format -> why,
            the first kept), as ``TraceStream.guessed``.

    Returns:
        (trajectories, problems), as ``load`` reads the text. Never raises for bad input.
    """
    fmt = norm_format(format)
    try:  # parsed once when plain_loads can (no lone surrogate in the text to encode)
        obj = plain_loads(text.encode("utf-8"))
    except UnicodeEncodeError:
        obj = NOT_PLAIN
    if obj is not NOT_PLAIN and error_pattern is None and fmt in ("auto", native.FORMAT):
        got = read_line(obj)
        # the usual line with plain figures and no problems recorded in it: what the
        # general way below gives, without its accumulator; a line read with no call is
        # looked into (never silent), as the stream looks into it
        if got is not None and got[1] and "problems" not in got[0].metadata:
            t = got[0]
            if formats is not None:  # counted as the stream counts such a line
                formats[_NATIVE] = formats.get(_NATIVE, 0) + 1
            if t.steps and t.tool_calls():
                return [t], []
            held = unread_problem(obj, t, native.FORMAT)
            if held is None:
                return [t], []
            if unread is not None:
                unread.append(f"{where}: {held}")
            return [t], [f"{where}: {held}"]
    acc = Accumulator(error_pattern=compile_error_pattern(error_pattern))
    if obj is NOT_PLAIN:
        if not text.strip():
            return [], []
        try:
            obj = parse_json(text, where, acc)
        except ValueError as e:
            acc.skip(bad_json_line(where, e))
            return [], acc.problems
    now: list[tuple[Any, str]] = []
    for o, w in split_units(obj, acc, where, where):
        loc = where + (f" {w}" if w else "")
        kind = fmt if fmt != "auto" else detect(o)
        if (kind in _GROUPING or needs_others(kind, o)) and not whole:
            acc.skip(f"{loc}: a {kind} record is read with the other records of its file, "
                     "not one row at a time; skipped")
            shapes = call_shapes(o)
            if shapes.calls or shapes.results:
                acc.not_read(f"{loc}: holds {shapes.describe()}, which a row read alone cannot "
                             f"join into its {kind} run; not read", skipped=True)
        else:
            now.append((o, loc))
    if now:
        try:
            read_units(now, fmt, acc, where, strict=False)
        except TraceFormatError as e:
            acc.skip(f"{e}; skipped")
    if unread is not None:
        unread.extend(acc.unread)
    if formats is not None:
        for k, v in acc.formats.items():
            formats[k] = formats.get(k, 0) + v
    if guessed is not None:
        for k, why in acc.guessed.items():
            guessed.setdefault(k, why)
    return acc.trajectories, acc.problems


def stream(path: str | Path, format: str = "auto", *,
           error_pattern: str | re.Pattern[str] | None = None) -> TraceStream:
    """A ``TraceStream`` over ``path`` (a file or a directory); see the module docstring."""
    return TraceStream(path, format, error_pattern=error_pattern)


__all__ = ["TraceStream", "read_row", "stream"]
