"""trajcheck's metrics as pydantic-evals evaluators (``pydantic_evals.evaluators.Evaluator``).

User guide (every settings key, output and metadata shapes, errors): docs/hosts/pydantic_evals.md.

``TrajcheckEvaluator(metric=<key>)`` is an ``Evaluator`` dataclass for ``Dataset(evaluators=...)``
(offline, no model). It returns ``EvaluationReason(value=<core score>, reason=<core reason>)``
under its name (``trajcheck_<metric>``; a trajectory match names its mode and dialect,
``trajcheck_trajectory_in_order``), so pydantic-evals files it under the case's scores. A
score that does not apply (error recovery on a run where nothing failed) is the label
``"not applicable"`` with the reason (pydantic-evals has no empty score); a missing reference
raises ``MissingReference``, which pydantic-evals records as an evaluator failure -- never a
pass.

Where the run comes from (``source=``):

* ``"auto"`` (default): the case output when it holds a run -- a pydantic-ai message history
  (``result.all_messages()``, read by trajcheck's pydantic-ai reader), an ``AgentRunResult``,
  a chat message list, ``{"messages"|"trajectory"|"steps"|"tool_calls": ...}`` or a
  ``Trajectory`` -- else the span tree pydantic-evals recorded while the task ran
  (``ctx.span_tree``; pydantic-ai's OpenTelemetry spans read by trajcheck's OTel reader: a tool
  span per call, status ERROR for a failed one, e.g. ``ModelRetry``; the tool spans under one
  model response one step). As pydantic-evals' own span evaluators count them, an output
  function's span and an output tool (``final_result``) are the run's answer, not calls, and a
  deferred call (``ApprovalRequired`` / ``CallDeferred`` / ``requires_approval``) did not run
  (it is listed in the trajectory's ``metadata["deferred_calls"]``); a span whose tool name is
  not a string is no call (a problem names it).
* ``"output"`` / ``"span_tree"``: that one only. No run raises ``TraceFormatError``.

The reference is the case's metadata ``{"trajcheck": {...}}`` (``Case(metadata=...)``):
``expected_calls`` (names or ``{"name", "args"}``), any case setting (``optional_calls``,
``forbidden_calls``, ``precedence``, ``expected_final_state`` with ``before_state``/``after_state``,
``response_must_include``, ``max_steps``, ``tools``, ``match``, ...); unknown keys raise
``DatasetError`` naming the closest known one. Evaluator and case settings: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error.

``TrajcheckReportEvaluator`` is a ``ReportEvaluator``: pass^k, pass@k and the success rate over
``Dataset.evaluate(..., repeat=n)`` (runs grouped by their source case), plus routing macro-F1
when the outputs hold the runs, as ``ScalarResult`` analyses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
    from pydantic_evals.evaluators.report_evaluator import ReportEvaluator, ReportEvaluatorContext
    from pydantic_evals.reporting.analyses import ScalarResult
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("trajcheck.adapters.pydantic_evals needs pydantic-evals: "
                      "pip install 'trajcheck[pydantic-evals]'") from _e

from trajcheck.errors import MetricInputError, TraceFormatError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Trajectory

from . import _convert, _settings, _spec

__all__ = ["TrajcheckEvaluator", "TrajcheckReportEvaluator", "trajectory_of", "spans_of", "case_metadata"]

NOT_APPLICABLE = "not applicable"
_TRAJ_KEYS = ("messages", "trajectory", "steps", "tool_calls")


def _pydantic_ai_messages(output: Any) -> list[Any] | None:
    """The pydantic-ai message history in ``output`` (an ``AgentRunResult`` or a list of
    ``ModelRequest``/``ModelResponse``), else None."""
    if callable(getattr(output, "all_messages", None)):
        return list(output.all_messages())
    if isinstance(output, (list, tuple)) and output and all(
            type(m).__name__ in ("ModelRequest", "ModelResponse") for m in output):
        return list(output)
    return None


def spans_of(span_tree: Any) -> list[dict[str, Any]]:
    """A pydantic-evals ``SpanTree`` as OpenTelemetry span dicts trajcheck's OTel reader reads
    (ids as hex, times in ns since the epoch, status code 2 for an error)."""
    out = []
    for n in span_tree:
        out.append({"name": n.name, "context": {"trace_id": f"{n.trace_id:032x}", "span_id": f"{n.span_id:016x}"},
                    "parent_id": None if n.parent_span_id is None else f"{n.parent_span_id:016x}",
                    "start_time_unix_nano": int(n.start_timestamp.timestamp() * 1e9),
                    "end_time_unix_nano": int(n.end_timestamp.timestamp() * 1e9),
                    "attributes": dict(n.attributes),
                    "status": {"code": 2 if n.status == "error" else (1 if n.status == "ok" else 0)}})
    return out


def trajectory_of(ctx: Any, source: str = "auto") -> Trajectory:
    """The run one pydantic-evals case stands for (see the module doc for ``source``)."""
    output = ctx.output
    msgs = _pydantic_ai_messages(output)
    looks = msgs is not None or isinstance(output, (Trajectory, list, tuple)) or (
        isinstance(output, Mapping) and any(k in output for k in _TRAJ_KEYS))
    if source == "output" or (source == "auto" and looks):
        if msgs is not None:
            from trajcheck.read.traces import pydantic_ai

            return pydantic_ai.read(msgs)
        return _convert.any_trajectory(output, where="case output")
    try:
        tree = ctx.span_tree
    except Exception as e:  # pydantic-evals raises SpanTreeRecordingError when nothing was recorded
        raise TraceFormatError(f"case {ctx.name!r}: the output holds no run and no span tree was recorded "
                               f"({e}); configure an OpenTelemetry TracerProvider and instrument the agent, "
                               "or return the run from the task") from e
    from trajcheck.read.traces import load

    res = load(spans_of(tree), "otel")
    if len(res.trajectories) != 1:
        raise TraceFormatError(f"case {ctx.name!r}: the span tree holds {len(res.trajectories)} runs, not one")
    return res.trajectories[0]


def case_metadata(traj: Trajectory | Any, expected_calls: Sequence[Any] | None = None, *,
                  format: str = "auto", error_pattern: str | None = None, **settings: Any) -> dict[str, Any]:
    """``{"trajcheck": {...}}`` for ``Case(metadata=...)``: ``expected_calls`` and the case
    settings (checked now), plus a recorded run's database snapshots."""
    from . import _traces

    t = _traces.one_trajectory(traj, format=format, error_pattern=error_pattern)
    return {"trajcheck": _spec.row_settings(t, expected_calls, **settings)}


def _reference(ctx: Any) -> dict[str, Any]:
    return _settings.namespaced(ctx.metadata, f"case {ctx.name!r} metadata")


@dataclass(repr=False)
class TrajcheckEvaluator(Evaluator):  # type: ignore[misc]
    """One trajcheck metric as a pydantic-evals evaluator (see the module doc).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS``; ``evaluation_name``:
    the result name (default ``_catalog.default_key``); ``mode``/``dialect``: trajectory match;
    ``source``: ``"auto"``, ``"output"`` or ``"span_tree"``; ``settings``: case fields
    (``optional_calls``, ``precedence``, ``args_mode``, ``threshold``, ...); ``match``,
    ``weights``, ``ignore``, ``id_args``, ``retry_budget``, ``semantic_scorer``, ``judge`` as
    in the core. Unknown settings, wrong types and unknown mode names raise
    ``MetricInputError`` when the evaluator is made; a malformed case setting or list of
    names ``DatasetError`` naming the field, then too.
    """

    metric: str = "tool_call_f1"
    mode: str | None = None
    dialect: str | None = None
    source: str = "auto"
    evaluation_name: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    match: dict[str, Any] | None = None
    weights: dict[str, float] | None = None
    ignore: list[str] | None = None
    id_args: list[str] | None = None
    retry_budget: int | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, Any, Any], bool] | None = None

    def __post_init__(self) -> None:
        if self.source not in ("auto", "output", "span_tree"):
            raise MetricInputError(f"TrajcheckEvaluator: source must be 'auto', 'output' or 'span_tree', "
                                   f"got {self.source!r}")
        if not isinstance(self.settings, Mapping):
            raise MetricInputError(f"TrajcheckEvaluator: settings must be a dict, got {self.settings!r}")
        self._spec = _spec.make_spec(self.metric, "TrajcheckEvaluator", key=self.evaluation_name, mode=self.mode,
                                     dialect=self.dialect, match=self.match, weights=self.weights,
                                     ignore=self.ignore, id_args=self.id_args, retry_budget=self.retry_budget,
                                     semantic_scorer=self.semantic_scorer, judge=self.judge, **self.settings)

    def get_default_evaluation_name(self) -> str:
        """``trajcheck_<metric>`` (a trajectory match names its mode and dialect)."""
        return str(self._spec.key)

    def compute(self, ctx: Any) -> MetricResult:
        """The core ``MetricResult`` for one case."""
        traj = trajectory_of(ctx, self.source)
        return self._spec.score(traj, _reference(ctx), case_id=str(ctx.name), case_input=ctx.inputs
                                if isinstance(ctx.inputs, str) else None,
                                how="give it in Case(metadata={'trajcheck': {...}}) or to the evaluator")

    def evaluate(self, ctx: EvaluatorContext) -> EvaluationReason:
        res = self.compute(ctx)
        if res.score is None:
            return EvaluationReason(value=NOT_APPLICABLE, reason=res.reason)
        return EvaluationReason(value=float(res.score), reason=res.reason)


@dataclass(repr=False)
class TrajcheckReportEvaluator(ReportEvaluator):  # type: ignore[misc]
    """Suite figures over a pydantic-evals report (``Dataset(report_evaluators=[...])``).

    A run succeeds when the case-level result named ``evaluation`` (default
    ``trajcheck_task_success``) is a score passing the ``metric``'s trajcheck verdict
    (``threshold`` or the metric's default; a label such as ``"not applicable"``, a missing
    result or an evaluator failure is a failure; a name that no scored case has raises
    ``MetricInputError`` with the closest result name, which pydantic-evals records as the report
    evaluator's failure, never pass^k 0.0). Runs are grouped into tasks by their source
    case (``repeat=n``); ``k`` defaults to the smallest number of runs of a task (the
    pass^k description says so when tasks have unequal run counts). Returns
    ``ScalarResult`` analyses ``pass^k``, ``pass@k`` (``metrics.reliability``, unbiased),
    ``success rate``, and ``routing macro-F1`` when the outputs hold the runs and some case
    has an expected route."""

    metric: str = "task_success"
    evaluation: str | None = None
    threshold: float | None = None
    k: int | None = None

    def evaluate(self, ctx: ReportEvaluatorContext) -> list[Any]:
        from . import _suite

        spec = _spec.make_spec(self.metric, "TrajcheckReportEvaluator", threshold=self.threshold)
        name = self.evaluation or spec.key
        _check_result_name(name, ctx.report.cases)
        rows: list[tuple[str, Any, Any, MetricResult | None]] = []
        for c in ctx.report.cases:
            task = str(c.source_case_name or c.name)
            sc = c.scores.get(name)
            res = None if sc is None else MetricResult(name, float(sc.value), "", {},
                                                       sc.value == 1.0 if spec.row.key == "forbidden_calls" else None)
            traj = case = None
            try:
                traj = trajectory_of(_Out(c.output, task), "output")
                case, _p = spec.case_for(traj, _settings.namespaced(c.metadata, f"case {task!r} metadata"),
                                         case_id=task)
            except TraceFormatError:
                pass
            rows.append((task, traj, case, res))
        for f in ctx.report.failures:
            rows.append((str(f.source_case_name or f.name), None, None, None))
        recs = _spec.suite_records(rows, spec)
        figs = _suite.compute_figures(recs, k=self.k)
        out = []
        for fig, title in (("pass_hat_k", "pass^k"), ("pass_at_k", "pass@k"), ("success_rate", "success rate"),
                           ("routing_macro_f1", "routing macro-F1")):
            r = figs[fig]
            if r.score is None:
                continue
            out.append(ScalarResult(title=r.name if fig in ("pass_hat_k", "pass_at_k") else title,
                                    value=float(r.score), description=r.reason))
        return out


def _check_result_name(name: str, cases: Sequence[Any]) -> None:
    """Raise ``MetricInputError`` when cases were scored but none has a result (score, label
    or assertion) named ``name``: the report evaluator would count every run as failed and
    give pass^k 0.0 for a misspelled name. pydantic-evals records the error as the report
    evaluator's failure."""
    if not cases:
        return  # every case failed: the failures count as failed runs
    known: set[str] = set()
    for c in cases:
        for group in (c.scores, c.labels, c.assertions):
            known.update(group)
    if name not in known:
        from trajcheck.model import did_you_mean

        raise MetricInputError(
            f"TrajcheckReportEvaluator: no case has a result named {name!r}{did_you_mean(name, known)}; "
            f"the cases' results: {', '.join(sorted(known)) or '(none)'} (set evaluation= to the "
            "name of a TrajcheckEvaluator in the dataset)")


@dataclass
class _Out:
    output: Any
    name: str

