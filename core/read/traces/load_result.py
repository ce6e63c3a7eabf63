"""What ``load`` returns (``LoadResult``, with a ``SourceRead`` per file) and the
``Accumulator`` that collects it while reading: trajectories with their format counts, and
every problem, split into skipped input, tolerated faults and unread tool calls (never
silent: a record holding calls that read as none is a problem)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...model import Case, Trajectory
from .. import limits
from ._util import is_seq
from .detection import guessed
from .error_pattern import apply_error_pattern
from .unread import unread_in_batch, unread_problem


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


@dataclass
class Accumulator:
    """The parts of a ``LoadResult`` while files are read (``result()`` makes it); the
    ``error_pattern`` (compiled) is applied to every trajectory added."""

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
        """The ``LoadResult`` of what was read (``faults``: the problems not skipped)."""
        skipped = set(self.skipped)
        return LoadResult(trajectories=self.trajectories, problems=self.problems, skipped=self.skipped,
                          faults=[p for p in self.problems if p not in skipped], cases=self.cases,
                          formats=self.formats, sources=self.sources, unread=self.unread,
                          guessed=self.guessed)
