"""The engine-neutral batch API: Arrow record batches of runs in, per-run results and
mergeable partial aggregates out.

A batch holds one run per row: the run's JSON text (any format ``traces.load`` reads one
record at a time: trajcheck's JSONL, chat messages, plain calls, ...) in ``trace_column``,
and its position in the whole input in ``seq_column`` (int64; positions only need to
increase with the input order). ``BatchScorer.score`` reads each row (``traces.stream.
read_row``), keys it to its case (``intake.RunKeyer``), scores it (``scoring.score_run``,
compact unless kept for reports) and folds it into a ``BatchPartial``; it returns a record
batch of per-run results (``RESULT_SCHEMA``). Any engine maps batches to partials and
reduces them with ``BatchPartial.merge`` in any grouping; ``finalize`` gives the scorecard a
local ``trajcheck eval`` gives on the same runs in the same order (the same counts; other
figures equal). Problems are located by row position (``row <seq>``), not file line.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..aggregate.partials import DEFAULT_BOOTSTRAP, DEFAULT_SEED, SuitePartial
from ..errors import EngineError, MetricInputError
from ..model import Case, Trajectory
from ..read.intake import RunKeyer, _unmatched_message, case_map_of
from ..report.scorecard import RunResult, Scorecard
from ..score.scoring import score_compact_by_id, score_run
from .files import NotUtf8

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

DEFAULT_KEEP_RUNS = 1000

#: (name, arrow type name, RunResult attribute or derived key) of a per-run result row
RESULT_FIELDS: tuple[tuple[str, str], ...] = (
    ("seq", "int64"), ("run_id", "string"), ("case_id", "string"), ("trial", "int64"),
    ("success", "bool"), ("precision", "float64"), ("recall", "float64"), ("f1", "float64"),
    ("composite", "float64"), ("composite_passed", "bool"), ("steps", "int64"),
    ("n_calls", "int64"), ("tokens", "int64"), ("cost_usd", "float64"),
    ("latency_ms", "float64"), ("ordering", "float64"), ("forbidden", "bool"),
    ("duplicate", "bool"), ("fault_run", "bool"), ("false_success", "bool"),
    ("recorded_reward", "float64"), ("failure_reason", "string"),
    # for the evaluation events (otel_events.EvaluationEmitter.emit_rows)
    ("outcome_reason", "string"), ("trace_id", "string"), ("span_id", "string"),
    ("response_id", "string"),
)


def _pa() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - the 'arrow' extra installs it
        raise EngineError("the batch API needs pyarrow: pip install 'trajcheck[arrow]'") from e
    return pyarrow


def result_schema() -> pa.Schema:
    """The Arrow schema of the per-run results table (``RESULT_FIELDS``)."""
    pa = _pa()
    types = {"int64": pa.int64(), "string": pa.string(), "bool": pa.bool_(),
             "float64": pa.float64()}
    return pa.schema([(n, types[t]) for n, t in RESULT_FIELDS])


def result_row(r: RunResult, seq: int, traj: Trajectory | None = None) -> dict[str, Any]:
    """One run's compact results (the figures and flags of ``RESULT_FIELDS``; the trace and
    root span ids and response id from ``traj`` when given)."""
    from ..report.otel_events import root_span

    tid, sid = root_span(traj)
    resp = traj.metadata.get("response_id") if traj is not None else None
    m = r.metrics
    parts = (m.get("call_rates") or {}).get("parts") or {}
    order = (m.get("ordering") or {}).get("score")
    return {"seq": seq, "run_id": r.run_id, "case_id": r.case_id, "trial": r.trial,
            "success": r.success, "precision": r.precision, "recall": r.recall, "f1": r.f1,
            "composite": r.composite, "composite_passed": r.composite_passed,
            "steps": r.steps, "n_calls": r.n_calls, "tokens": r.tokens, "cost_usd": r.cost_usd,
            "latency_ms": r.latency_ms,
            "ordering": float(order) if isinstance(order, (int, float)) else None,
            "forbidden": bool(parts.get("forbidden"))
            or (m.get("forbidden_sequences") or {}).get("passed") is False,
            "duplicate": bool(parts.get("duplicate")), "fault_run": r.fault_run,
            "false_success": r.false_success, "recorded_reward": r.recorded_reward,
            "failure_reason": r.failure_reason, "outcome_reason": r.outcome_reason,
            "trace_id": tid, "span_id": sid, "response_id": resp if isinstance(resp, str) else None}


@dataclass
class BatchPartial:
    """A mergeable partial aggregate of scored rows: the runs (``suite``) and the problems
    met, each with its row position -- reading problems (``read``), keying problems
    (``keyed``, rows with no or an unknown case id) and the never-silent ones (``unread``:
    records holding tool calls that were not read as calls, ``LoadResult.unread``) -- how
    the rows were read (``formats``: format -> runs read; ``guessed``: format -> why it was
    a guess; ``formats_at``: format -> the first row it was read in, which orders
    ``formats`` as the input does) plus the counts ``finalize`` needs."""

    suite: SuitePartial
    read: list[tuple[int, str]] = field(default_factory=list)
    keyed: list[tuple[int, str]] = field(default_factory=list)
    n_rows: int = 0
    no_case_id: list[int] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    #: CPU seconds of the scoring threads in ``BatchScorer.score`` and the batches scored:
    #: what the workers spent on trajcheck's own work (engines' costs are the rest)
    cpu_s: float = 0.0
    batches: int = 0
    #: ``time.monotonic()`` when the first batch began and the last ended (one clock for
    #: every process of a host): when the workers' scoring ran, as the driver sees it
    t_first: float = float("inf")
    t_last: float = float("-inf")
    #: runs kept for reports but scored compact only (``BatchScorer(defer_full=True)``):
    #: (position, run id) -> (the row's text, its case column value, the run's index in the
    #: row, how to read it: format, error pattern, grouped); ``finalize`` scores the few that
    #: the merged partial keeps in full, instead of every partial scoring its own in full
    pending: dict[tuple[int, str], tuple[str, Any, int, tuple[str, str | None, bool]]] = field(
        default_factory=dict)
    unread: list[tuple[int, str]] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    guessed: dict[str, str] = field(default_factory=dict)
    formats_at: dict[str, int] = field(default_factory=dict)

    def merge(self, other: BatchPartial) -> BatchPartial:
        """Fold ``other`` in (in place) and return this partial."""
        self.suite.merge(other.suite)
        self.cpu_s += other.cpu_s
        self.batches += other.batches
        self.t_first = min(self.t_first, other.t_first)
        self.t_last = max(self.t_last, other.t_last)
        self.pending.update(other.pending)
        self.prune()
        self.read.extend(other.read)
        self.keyed.extend(other.keyed)
        self.unread.extend(other.unread)
        for k, v in other.formats.items():
            self.formats[k] = self.formats.get(k, 0) + v
        for k, at in other.formats_at.items():
            self.formats_at[k] = min(at, self.formats_at.get(k, at))
        for k, why in other.guessed.items():
            # one reason per format (detection.guessed); the smaller kept, whatever the order
            mine = self.guessed.get(k)
            self.guessed[k] = why if mine is None else min(mine, why)
        self.n_rows += other.n_rows
        self.no_case_id.extend(other.no_case_id)
        self.unknown.extend(other.unknown)
        return self

    def prune(self) -> None:
        """Drop the pending rows of runs the partial no longer keeps."""
        if len(self.pending) > len(self.suite.kept):
            keep = {(q, r.run_id) for q, r in self.suite.kept}
            self.pending = {k: v for k, v in self.pending.items() if k in keep}

    def to_bytes(self) -> bytes:
        """Serialised form, for engines that move partials between processes: the
        data-only layout of ``data_codec`` (no pickle: the bytes cross sockets)."""
        from .data_codec import encode

        self.prune()
        return encode(self)

    @staticmethod
    def from_bytes(b: bytes | bytearray | memoryview) -> BatchPartial:
        """Inverse of ``to_bytes``: data only, whoever sent the bytes.

        Raises:
            CodecError: (an ``EngineError``) bytes not in ``data_codec``'s layout.
            MetricInputError: a valid layout holding something else than a partial.
        """
        from .data_codec import decode

        p = decode(b)
        if not isinstance(p, BatchPartial):
            raise MetricInputError("not a trajcheck BatchPartial")
        return p


class BatchScorer:
    """Scores record batches of runs against ``cases`` (module docstring).

    ``trace_column``: the column of JSON texts; ``seq_column``: the int64 input positions
    (None: positions are the rows' order within each batch, offset by ``seq_offset``).
    ``keep_runs``: runs kept in full for reports per partial (None: all). ``format`` and
    ``error_pattern`` as in ``traces.load``. ``grouped``: each row's text is a JSON list
    holding every record of its run(s), read together (``traces.stream.read_row(whole=
    True)``): the OTel spans of one trace, gathered by ``group_spans``. ``case_column``
    (optional): a column of case ids, given to the row's runs whose trace names none (OTel
    spans carry no case id). Raises ``MetricInputError`` naming a missing column.
    """

    def __init__(self, cases: Mapping[str, Case] | Sequence[Case], *, trace_column: str = "trace",
                 seq_column: str | None = "seq", keep_runs: int | None = DEFAULT_KEEP_RUNS,
                 format: str = "auto", error_pattern: str | None = None, grouped: bool = False,
                 case_column: str | None = None, defer_full: bool = False) -> None:
        self.case_map = case_lookup(cases)
        self.defer_full = defer_full and keep_runs is not None
        self.trace_column = trace_column
        self.seq_column = seq_column
        self.keep_runs = keep_runs
        self.format = format
        self.error_pattern = error_pattern
        self.grouped = grouped
        self.case_column = case_column

    def new_partial(self) -> BatchPartial:
        """An empty partial to fold batches into."""
        return BatchPartial(SuitePartial(keep_runs=self.keep_runs))

    def score(self, batch: Any, part: BatchPartial, *, seq_offset: int = 0,
              rows: bool = True) -> pa.RecordBatch | None:
        """Score every row of ``batch`` (a ``pyarrow.RecordBatch`` or ``Table``) into
        ``part`` and return the per-run results (``result_schema()``; rows that could not be
        scored have no result row), or None with ``rows=False`` (only the partial is wanted:
        no result rows are built)."""
        t0, w0 = time.thread_time(), time.monotonic()
        try:
            return self._score(batch, part, seq_offset, rows)
        finally:
            _account(part, t0, w0)

    def _score(self, batch: Any, part: BatchPartial, seq_offset: int,
               want_rows: bool) -> pa.RecordBatch | None:
        names = batch.schema.names
        if self.trace_column not in names:
            raise MetricInputError(f"batch has no column {self.trace_column!r} (columns: {names})")
        texts = batch.column(self.trace_column).to_pylist()
        if self.seq_column is not None and self.seq_column in names:
            seqs = batch.column(self.seq_column).to_pylist()
        elif self.seq_column is not None and self.seq_column != "seq":
            raise MetricInputError(f"batch has no column {self.seq_column!r} (columns: {names})")
        else:
            seqs = list(range(seq_offset, seq_offset + len(texts)))
        if self.case_column is not None and self.case_column not in names:
            raise MetricInputError(f"batch has no column {self.case_column!r} (columns: {names})")
        cids = (batch.column(self.case_column).to_pylist() if self.case_column is not None
                else [None] * len(texts))
        return self._score_rows(seqs, texts, cids, part, want_rows)

    def score_texts(self, seqs: Sequence[int], texts: Sequence[str | NotUtf8], part: BatchPartial, *,
                    rows: bool = True) -> pa.RecordBatch | None:
        """``score`` for rows already held as Python lists (positions and JSON texts; no
        case column): what an engine that reads the file itself hands over
        (``files.read_range``: a line that is not UTF-8 is a ``NotUtf8``, reported)."""
        t0, w0 = time.thread_time(), time.monotonic()
        try:
            return self._score_rows(seqs, texts, [None] * len(texts), part, rows)
        finally:
            _account(part, t0, w0)

    def _score_rows(self, seqs: Sequence[int], texts: Sequence[str | NotUtf8 | None],
                    cids: Sequence[Any], part: BatchPartial,
                    want_rows: bool) -> pa.RecordBatch | None:
        from ..read.traces.io import not_utf8_line
        from ..read.traces.stream import read_row

        pa = _pa()
        keyer = RunKeyer(self.case_map)
        how = (self.format, self.error_pattern, self.grouped)
        rows: list[dict[str, Any]] = []
        suite = part.suite
        unread: list[str] = []
        formats, guessed, formats_at = part.formats, part.guessed, part.formats_at
        for seq, text, cid in zip(seqs, texts, cids):
            part.n_rows += 1
            where = f"row {seq}"
            if isinstance(text, NotUtf8):
                part.read.append((seq, not_utf8_line(where, text.error)))
                continue
            n_formats = len(formats)
            trajs, problems = read_row(text or "", where, self.format,
                                       error_pattern=self.error_pattern, whole=self.grouped,
                                       unread=unread, formats=formats, guessed=guessed)
            if len(formats) != n_formats:  # a format first read here (rows come in order)
                for name in formats:
                    formats_at.setdefault(name, seq)
            part.read.extend((seq, p) for p in problems)
            if unread:
                part.unread.extend((seq, m) for m in unread)
                unread.clear()
            if cid is not None:
                trajs = [with_case_id(t, cid) for t in trajs]
            for k, t in enumerate(trajs):  # one run per row in practice; a list row holds several
                before = len(keyer.problems)
                # keyed by id: the fast scorer reads the case's plan, so a Case is built only
                # for a run outside its scope or scored in full (as the local streaming eval)
                sid = keyer.key_id(seq, t)
                part.keyed.extend((seq, p) for p in keyer.problems[before:])
                if sid is None:
                    continue
                r = score_compact_by_id(t, self.case_map, sid)
                if suite.wants(r):
                    key = (seq, r.run_id)
                    if self.defer_full and key not in part.pending:
                        part.pending[key] = (text or "", cid, k, how)
                    else:
                        r = score_run(t, self.case_map[sid])
                suite.add(r, seq)
                if want_rows:
                    rows.append(result_row(r, seq, t))
        part.no_case_id.extend(keyer.no_cid)
        part.unknown.extend(keyer.unknown)
        if len(part.pending) > 2 * len(suite.kept):
            part.prune()
        return pa.RecordBatch.from_pylist(rows, schema=result_schema()) if want_rows else None


def _account(part: BatchPartial, t0: float, w0: float) -> None:
    """Add one scored batch's CPU (from ``thread_time`` ``t0``) and wall span (from
    ``monotonic`` ``w0``) to ``part``."""
    part.cpu_s += time.thread_time() - t0
    part.batches += 1
    part.t_first = min(part.t_first, w0)
    part.t_last = max(part.t_last, time.monotonic())


def _score_pending(part: BatchPartial, case_map: Mapping[str, Case]) -> None:
    """Score in full the kept runs that were scored compact (``BatchScorer.defer_full``),
    from their rows, as the worker would have: read, case id given, keyed, ``score_run``."""
    from ..read.traces.stream import read_row

    part.suite._trim()  # the runs the scorecard shows: at most keep_runs
    kept = part.suite.kept
    for i, (seq, r) in enumerate(kept):
        row = part.pending.get((seq, r.run_id))
        if row is None:
            continue
        text, cid, k, (fmt, pattern, grouped) = row
        trajs, _ = read_row(text, f"row {seq}", fmt, error_pattern=pattern, whole=grouped)
        t = trajs[k] if cid is None else with_case_id(trajs[k], cid)
        full = score_run(t, case_map[r.case_id])
        if full.run_id != r.run_id:  # pragma: no cover - the same row read the same way
            raise MetricInputError(f"row {seq}: run {r.run_id!r} not found again in its row")
        kept[i] = (seq, full)
    part.pending = {}


def case_lookup(cases: Mapping[str, Case] | Sequence[Case]) -> Mapping[str, Case]:
    """Cases by id without building them again: a mapping (a ``case_store.CaseStore``
    holds a quarter of a million cases compressed) is used as it is, a sequence is indexed."""
    return cases if isinstance(cases, Mapping) else case_map_of(cases)


#: scorers built in this (worker) process, by ``ShippedScorer.token``: the cases are
#: unpacked once per process, not once per task or batch
_BUILT: dict[str, BatchScorer] = {}
# a worker may run tasks in threads: the check-then-build of ``_BUILT`` runs under this lock
_BUILT_LOCK = threading.Lock()


class ShippedScorer:
    """A ``BatchScorer`` as an engine ships it to its workers: the settings travel with every
    task (a few hundred bytes), the cases once, through the engine's own channel (a Spark
    broadcast, a Ray object). ``load_cases``: a picklable zero-argument function giving the
    cases on a worker; ``get()`` builds the scorer on its first call in a process and
    returns that one afterwards."""

    def __init__(self, scorer: BatchScorer, load_cases: Callable[[], Mapping[str, Case]]) -> None:
        self.token = uuid.uuid4().hex
        self.template = copy.copy(scorer)
        self.template.case_map = {}
        self.load_cases = load_cases

    def get(self) -> BatchScorer:
        """The scorer of this process (cases loaded on the first call)."""
        s = _BUILT.get(self.token)
        if s is not None:
            return s
        with _BUILT_LOCK:  # two tasks of one evaluation starting at once build it once
            s = _BUILT.get(self.token)
            if s is None:
                s = copy.copy(self.template)
                s.case_map = self.load_cases()
                _BUILT.clear()  # one evaluation at a time per worker: drop older ones' cases
                _BUILT[self.token] = s
            return s


def with_case_id(t: Trajectory, case_id: Any) -> Trajectory:
    """``t`` with ``metadata["case_id"] = case_id`` unless its trace already names a case
    (the trace's own value wins, as wrapper metadata never overrides a reader's)."""
    if t.metadata.get("case_id") is not None:
        return t
    from dataclasses import replace

    return replace(t, metadata={**t.metadata, "case_id": str(case_id)})


def group_spans(rows: Iterable[tuple[int, str]]) -> str:
    """The ``trace`` text of one run from its span rows ``(position, span JSON text)``: a
    JSON list of the spans in input order (an engine gathers a trace id's rows and calls
    this, or builds the same text with its own functions)."""
    return "[" + ",".join(j for _, j in sorted(rows, key=lambda r: r[0])) + "]"


def score_batches(batches: Iterable[Any], cases: Mapping[str, Case] | Sequence[Case],
                  **kw: Any) -> tuple[list[pa.RecordBatch], BatchPartial]:
    """Score record batches in one process: the per-run results and one partial.
    ``kw`` as in ``BatchScorer``. Rows without a ``seq`` column are numbered in order
    across the batches."""
    scorer = BatchScorer(cases, **kw)
    part = scorer.new_partial()
    out = []
    offset = 0
    for b in batches:
        out.append(scorer.score(b, part, seq_offset=offset))
        offset += b.num_rows
    return out, part


def finalize(partials: Iterable[BatchPartial], cases: Mapping[str, Case] | Sequence[Case], *,
             ks: Sequence[int] | None = None, seed: int = DEFAULT_SEED,
             n_boot: int = DEFAULT_BOOTSTRAP, confidence: float = 0.95,
             source: str | None = None,
             route_floors: Mapping[Any, float] | None = None,
             stats: dict[str, Any] | None = None) -> Scorecard:
    """Merge ``partials`` (any grouping) and build the scorecard. ``stats`` (optional, the
    caller's dict, e.g. bench/engines.py's) gets what was merged: ``partials``, ``rows``,
    ``batches``, the workers' scoring CPU seconds, the driver's merge-and-finalize CPU
    seconds and when the scoring ran (``time.monotonic``). Problems: the reading
    problems by row, then the keying problems by row, then the cases with no run (as a
    local eval lists them). Raises ``MetricInputError`` (cause first, as ``evaluate``) when
    no row could be keyed to a case, ``KTooLargeError`` for a k above some case's runs.
    Rows holding tool calls that were not read as calls are listed in the scorecard's
    ``meta["unread"]`` (``trajcheck eval --engine`` exits 2 on them unless --allow-unread)."""
    t0 = time.process_time()
    case_map = case_lookup(cases)
    merged: BatchPartial | None = None
    n_parts = 0
    for p in partials:
        merged = p if merged is None else merged.merge(p)
        n_parts += 1
    if merged is None:
        raise MetricInputError("no partial aggregates to finalize")
    merge_cpu = time.process_time() - t0
    if merged.pending:
        # not in a thread beside finalize: this pure-Python scoring would hold the
        # interpreter against the bootstrap's threads and slow them more than it saves
        _score_pending(merged, case_map)
    pending_cpu = time.process_time() - t0 - merge_cpu
    problems = [m for _, m in sorted(merged.read, key=lambda x: x[0])]
    problems += [m for _, m in sorted(merged.keyed, key=lambda x: x[0])]
    problems += [f"case {cid!r}: no traces; not scored" for cid in case_map
                 if cid not in merged.suite.cases]
    if not merged.suite.n:
        raise MetricInputError(_unmatched_message(merged.n_rows, sorted(merged.no_case_id),
                                                  merged.unknown, case_map, problems))
    meta: dict[str, Any] = {"source": source} if source else {}
    # how the rows were read, as a local eval notes its stream's (cli.eval_cmd._note_reading):
    # formats in the order the input first holds them, guessed formats only when any
    def first_read(k: str) -> tuple[int, str]:
        return merged.formats_at.get(k, 0), k

    meta["formats"] = {k: merged.formats[k] for k in sorted(merged.formats, key=first_read)}
    if merged.guessed:
        meta["guessed_formats"] = {k: merged.guessed[k] for k in sorted(merged.guessed, key=first_read)}
    if merged.unread:  # as a local eval notes them (LoadResult.unread), in row order
        meta["unread"] = [m for _, m in sorted(merged.unread, key=lambda x: x[0])]
    sc = merged.suite.finalize(ks=ks, seed=seed, n_boot=n_boot, confidence=confidence,
                               problems=problems, meta=meta or None, route_floors=route_floors)
    if stats is not None:
        stats.update(partials=n_parts, rows=merged.n_rows, batches=merged.batches,
                     worker_cpu_s=merged.cpu_s, finalize_cpu_s=time.process_time() - t0,
                     merge_cpu_s=merge_cpu, pending_cpu_s=pending_cpu,
                     scoring_from=merged.t_first, scoring_to=merged.t_last,
                     finalized_at=time.monotonic())
    return sc


__all__ = ["DEFAULT_KEEP_RUNS", "RESULT_FIELDS", "BatchPartial", "BatchScorer", "ShippedScorer",
           "case_lookup", "finalize", "group_spans", "result_row", "result_schema", "score_batches", "with_case_id"]
