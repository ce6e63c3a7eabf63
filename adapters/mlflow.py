"""trajcheck's metrics as MLflow 3 scorers (``mlflow.genai.scorers.Scorer``).

User guide (every settings key, row and expectation shapes, errors): docs/hosts/mlflow.md.

``TrajcheckScorer(metric=<key>)`` is a class-based scorer for ``mlflow.genai.evaluate`` (or
called directly, ``scorer(outputs=..., expectations=...)``); it returns MLflow ``Feedback``
whose ``value`` is the core's score and whose ``rationale`` is the core's reason, under the
scorer's name (``trajcheck_<metric>``; a trajectory match names its mode and dialect,
``trajcheck_trajectory_in_order``). ``tool_call_f1`` returns three: ``<name>``,
``<name>_precision`` and ``<name>_recall``. ``Feedback.metadata`` carries ``passed``
(``"true"``/``"false"``/``"skipped"``) and ``pass_if`` gives MLflow the same verdict
(``score >= threshold``, lower-is-better rates ``<=``). No model and no API key is involved.

Where the run comes from (``source=``):

* ``"auto"`` (default): ``outputs`` when it holds a trajectory (a message list, a dict with
  ``messages``/``trajectory``/``steps``/``tool_calls``, or a ``Trajectory``), else the
  row's MLflow ``trace`` read by trajcheck's MLflow trace reader (``trajcheck.read.traces.mlflow``:
  TOOL spans are the calls, an ERROR status a failed call, tools after one model span one
  step). This is what ``evaluate(data=mlflow.search_traces(...))`` and ``evaluate(...,
  predict_fn=agent)`` hand the scorer.
* ``"outputs"`` / ``"trace"``: that one only. A row with no run raises ``TraceFormatError``
  (MLflow records it as an error Feedback), never an empty run.

The reference is the row's ``expectations``: ``expected_calls`` (names or ``{"name", "args"}``)
or MLflow's own ``expected_tool_calls`` (``[{"name", "arguments"?}]``, as ``ToolCallCorrectness``
reads it), and any case setting (``optional_calls``, ``forbidden_calls``, ``precedence``,
``forbidden_sequences``, ``expected_final_state``, ``response_must_include``, ``max_steps``,
``tools``, ``match``, ``before_state``/``after_state``, ...). Keys MLflow's other scorers read
(``expected_response``, ``expected_facts``, ``guidelines``, ...) may sit beside them; any other
key is an error naming the closest known one -- or put the settings in an
``expectations["trajcheck"]`` block. Expectations logged on a trace (``mlflow.log_expectation``)
arrive the same way. Scorer and expectations: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error. A missing reference raises ``MissingReference``
(an error Feedback in MLflow, never a pass); a core score of None (not applicable) is a
Feedback with ``value=None`` and the reason.

``suite_figures(rows_or_result, scorer)`` gives pass^k, pass@k, the success rate and routing
macro-F1 over the rows you evaluate or the ``EvaluationResult`` that ``mlflow.genai.evaluate``
returned (MLflow's aggregations see one scorer's values without the task they belong to),
grouping rows by ``inputs["case_id"]``. ``row_from_trace`` and ``log_trace``
turn a recorded run into an evaluate row or a real MLflow trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    from mlflow.entities import Feedback
    from mlflow.genai.scorers import Scorer
    from pydantic import PrivateAttr
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("trajcheck.adapters.mlflow needs MLflow 3: pip install 'trajcheck[agent-sdks]'") from _e

from trajcheck.errors import TraceFormatError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Trajectory

from . import _catalog, _convert, _spec

__all__ = ["TrajcheckScorer", "suite_figures", "row_from_trace", "log_trace", "trajectory_of"]

#: Expectation names MLflow's own scorers read; they may sit beside trajcheck's settings.
MLFLOW_EXPECTATION_KEYS: tuple[str, ...] = (
    "expected_response", "expected_facts", "guidelines", "expected_retrieved_context",
    "expected_tool_calls", "expected_output",
)
_TRAJ_KEYS = ("messages", "trajectory", "steps", "tool_calls")


def trajectory_of(outputs: Any = None, trace: Any = None, source: str = "auto") -> Trajectory:
    """The run one MLflow row stands for (see the module doc for ``source``). Raises
    ``TraceFormatError`` when the chosen source holds no run."""
    looks = isinstance(outputs, (Trajectory, list, tuple)) or (
        isinstance(outputs, Mapping) and any(k in outputs for k in _TRAJ_KEYS))
    if source == "outputs" or (source == "auto" and looks):
        return _convert.any_trajectory(outputs, where="outputs")
    if trace is None:
        raise TraceFormatError("MLflow row: no run to score (outputs holds no trajectory and the row has no "
                               "trace); return the messages or {'trajectory': ...} from the agent, or "
                               "evaluate traces")
    from trajcheck.read.traces import mlflow as reader

    traj = reader.read(trace)
    if not traj.tool_calls() and len(getattr(getattr(trace, "data", None), "spans", None) or ()) <= 1:
        # only the root span evaluate() opens around an undecorated predict_fn: nothing inside
        # was traced, so "no calls" would be a guess (forbidden calls would pass silently)
        raise TraceFormatError(
            "MLflow row: the trace holds no tool spans and nothing but its root span, and outputs hold no "
            "call list, so the run's calls are unknown; decorate each tool with "
            "@mlflow.trace(span_type=\"TOOL\") (and the agent with @mlflow.trace), or return the calls in "
            "outputs ({'tool_calls': [...]}, a message list or {'trajectory': ...})")
    return traj


#: Keys of one call in MLflow's ``expected_tool_calls`` (``args`` is trajcheck's spelling).
_EXPECTED_TOOL_CALL_KEYS = ("name", "arguments", "args")


def _expected_tool_calls(v: Any, where: str) -> list[Any]:
    """MLflow ``expected_tool_calls`` (``[{"name", "arguments"?}]``) as trajcheck expected calls."""
    if not isinstance(v, (list, tuple)):
        from trajcheck.errors import DatasetError

        raise DatasetError(f"{where}: expected_tool_calls must be a list, got {type(v).__name__}")
    out: list[Any] = []
    for i, c in enumerate(v):
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, Mapping) and isinstance(c.get("name"), str):
            for k in c:
                if k not in _EXPECTED_TOOL_CALL_KEYS:
                    from trajcheck.case_fields import did_you_mean
                    from trajcheck.errors import DatasetError

                    raise DatasetError(f"{where}[{i}]: unknown key {k!r}{did_you_mean(str(k), _EXPECTED_TOOL_CALL_KEYS)}"
                                       f"; a call is {{'name', 'arguments'}}")
            if "arguments" in c and "args" in c:
                from trajcheck.errors import DatasetError

                raise DatasetError(f"{where}[{i}]: both 'arguments' and 'args'; give one")
            args = c.get("arguments", c.get("args"))
            out.append({"name": c["name"], "args": args})
        else:
            from trajcheck.errors import DatasetError

            raise DatasetError(f"{where}: expected_tool_calls[{i}] needs a 'name', got {c!r}")
    return out


def _case_input(inputs: Any) -> Any:
    if isinstance(inputs, Mapping):
        if "input" in inputs:
            return inputs["input"]
        texts = [v for k, v in inputs.items() if k != "case_id" and isinstance(v, str)]
        return texts[0] if len(texts) == 1 else dict(inputs)
    return inputs


def _reference(expectations: Any) -> tuple[dict[str, Any], bool]:
    ref = _spec.reference_block(expectations, "expectations", MLFLOW_EXPECTATION_KEYS)
    given = "expected_calls" in ref
    if given and isinstance(expectations, Mapping) and expectations.get("expected_tool_calls") is not None:
        from trajcheck.errors import DatasetError

        raise DatasetError("expectations: both 'expected_calls' and 'expected_tool_calls' are given and only "
                           "one would be read; keep one")
    if not given and isinstance(expectations, Mapping) and expectations.get("expected_tool_calls") is not None:
        ref["expected_calls"] = _expected_tool_calls(expectations["expected_tool_calls"],
                                                     "expectations.expected_tool_calls")
        given = True
    return ref, given


def _flag(p: bool | None) -> str:
    return "skipped" if p is None else ("true" if p else "false")


class TrajcheckScorer(Scorer):  # type: ignore[misc]
    """One trajcheck metric as an MLflow scorer (see the module doc).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS``; ``name``: the
    assessment name (default ``_catalog.default_key``); ``mode``/``dialect``: trajectory
    match; ``source``: ``"auto"``, ``"outputs"`` or ``"trace"``; case settings as keywords
    (``optional_calls``, ``forbidden_calls``, ``precedence``, ``args_mode``, ``threshold``,
    ...); ``match``, ``weights``, ``ignore``, ``id_args``, ``retry_budget``,
    ``semantic_scorer``, ``judge`` as in the core. Unknown settings, wrong types and unknown
    mode names raise ``MetricInputError`` here; a malformed case setting or list of names
    ``DatasetError`` naming the field.
    """

    metric: str = "tool_call_f1"
    mode: str | None = None
    dialect: str | None = None
    source: str = "auto"
    settings: dict[str, Any] = {}
    _spec: Any = PrivateAttr(default=None)

    def __init__(self, metric: str = "tool_call_f1", *, name: str | None = None, mode: str | None = None,
                 dialect: str | None = None, source: str = "auto",
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                 id_args: Sequence[str] | None = None, retry_budget: int | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None, **settings: Any) -> None:
        spec = _spec.make_spec(metric, "TrajcheckScorer", key=name, mode=mode, dialect=dialect, match=match,
                               weights=weights, ignore=ignore, id_args=id_args, retry_budget=retry_budget,
                               semantic_scorer=semantic_scorer, judge=judge, **settings)
        if source not in ("auto", "outputs", "trace"):
            from trajcheck.errors import MetricInputError

            raise MetricInputError(f"TrajcheckScorer: source must be 'auto', 'outputs' or 'trace', got {source!r}")
        super().__init__(name=spec.key, description=spec.title, metric=spec.row.key, mode=spec.mode,
                         dialect=spec.dialect, source=source, settings=json.loads(json.dumps(settings, default=str)))
        self._spec = spec
        self._pass_if = self._passes

    def _passes(self, value: Any) -> bool:
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return False
        return bool(self._spec.passed(MetricResult(self._spec.key, float(value), "", {},
                                                   value == 1.0 if self.metric == "forbidden_calls" else None)))

    def compute(self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None,
                trace: Any = None) -> MetricResult:
        """The core ``MetricResult`` for one row."""
        return self._compute_case(inputs=inputs, outputs=outputs, expectations=expectations, trace=trace)[1]

    def _compute_case(self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None,
                      trace: Any = None) -> tuple[Any, MetricResult]:
        traj = trajectory_of(outputs, trace, self.source)
        ref, given = _reference(expectations)
        if isinstance(outputs, Mapping):  # the agent may return the database before/after
            for k in ("before_state", "after_state"):
                if outputs.get(k) is not None and k not in ref:
                    ref[k] = outputs[k]
        cid = inputs.get("case_id") if isinstance(inputs, Mapping) else None
        if cid is None:
            cid = getattr(getattr(trace, "info", None), "trace_id", None) or "mlflow"
        return self._spec.score_case(traj, ref, case_id=str(cid), case_input=_case_input(inputs),
                                     expected_given=given,
                                     how="give it in the row's expectations or to the scorer")

    def __call__(self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None,
                 trace: Any = None) -> Any:
        case, res = self._compute_case(inputs=inputs, outputs=outputs, expectations=expectations, trace=trace)
        meta = {"passed": _flag(self._spec.passed(res, case)), "metric": self.metric}
        fb = [Feedback(name=self.name, value=res.score, rationale=res.reason, metadata=meta)]
        if self.metric == "tool_call_f1":
            for part in ("precision", "recall"):
                fb.append(Feedback(name=f"{self.name}_{part}", value=getattr(res, part, None),
                                   rationale=res.reason, metadata={"metric": f"tool_call_{part}"}))
        return fb[0] if len(fb) == 1 else fb


def suite_figures(rows: Any, scorer: TrajcheckScorer | None = None, *,
                  figures: Sequence[str] = ("pass_hat_k", "pass_at_k", "success_rate", "routing_macro_f1"),
                  k: int | None = None, confidence: float = 0.95, n_boot: int = 2000,
                  seed: int = 0) -> dict[str, MetricResult]:
    """pass^k, pass@k, the success rate and routing macro-F1 over an evaluation.

    Args:
        rows: the rows given to ``mlflow.genai.evaluate`` (dicts with ``inputs``,
            ``outputs``, ``expectations``, ``trace``), or the ``EvaluationResult`` it
            returned (its ``result_df``: each row's ``request``, ``response``, trace and the
            trace's assessments -- the expectations logged on it and the scorer's Feedback of
            that evaluation's run).
        scorer: the row metric whose verdict is a run's success (default
            ``TrajcheckScorer("task_success")``). On an ``EvaluationResult``, a row's
            Feedback under the scorer's name from that run is read (its value, judged by
            the scorer's pass mark; an error Feedback is a failure); a row without one is
            scored now from its outputs or trace and expectations, as for ``rows``.
        figures, k, confidence, n_boot, seed: as ``_suite.compute_figures``.

    Returns:
        ``{figure: MetricResult}`` (``_suite.compute_figures``: core ``metrics.reliability``
        / ``routing``). Rows are grouped into tasks by ``inputs["case_id"]`` (else each row
        is its own task); a missing reference or a skipped score is a failure.

    Raises:
        MetricInputError: no rows, or a task with fewer than ``k`` runs.
        TraceFormatError: a row with no run (see :func:`trajectory_of`), or an
            ``EvaluationResult`` without a result table.
        DatasetError: a row's expectations with an unknown key.
    """
    from . import _suite

    sc = scorer if scorer is not None else TrajcheckScorer("task_success")
    if hasattr(rows, "result_df") and not isinstance(rows, Mapping):
        scored = _result_rows(rows, sc.name)
    else:
        scored = [(r, _UNSCORED) for r in rows]
    out: list[tuple[str, Any, Any, MetricResult | None]] = []
    for i, (r, recorded) in enumerate(scored):
        inputs = r.get("inputs")
        task = inputs.get("case_id") if isinstance(inputs, Mapping) else None
        task = str(task if task is not None else i)
        traj = trajectory_of(r.get("outputs"), r.get("trace"), sc.source)
        ref, given = _reference(r.get("expectations"))
        case, _p = sc._spec.case_for(traj, ref, case_id=task, expected_given=given)
        res: MetricResult | None
        if recorded is not _UNSCORED:
            res = recorded
        else:
            try:
                res = sc.compute(inputs=inputs, outputs=r.get("outputs"),
                                 expectations=r.get("expectations"), trace=r.get("trace"))
            except _catalog.MissingReference:
                res = None
        out.append((task, traj, case, res))
    return _suite.compute_figures(_spec.suite_records(out, sc._spec), figures, k=k, confidence=confidence,
                                  n_boot=n_boot, seed=seed)


#: A row of an ``EvaluationResult`` without the scorer's Feedback: score it now.
_UNSCORED: Any = object()


def _trace_entity(t: Any) -> Any:
    """A result table's ``trace`` cell (a JSON string in MLflow 3.x, or a ``Trace``) as a ``Trace``."""
    from mlflow.entities import Trace

    if isinstance(t, str):
        return Trace.from_json(t)
    if isinstance(t, Mapping):
        return Trace.from_dict(dict(t))
    return t


def _result_rows(result: Any, name: str) -> list[tuple[dict[str, Any], Any]]:
    """``(row, recorded result)`` per row of an ``EvaluationResult``: the row as
    ``evaluate`` takes it (``inputs`` = ``request``, ``outputs`` = ``response``,
    ``expectations`` = the trace's Expectation assessments by name, ``trace``), and the
    scorer ``name``'s Feedback of the result's run as a ``MetricResult`` (None for an error
    Feedback; :data:`_UNSCORED` when the row has none)."""
    from mlflow.entities import Expectation

    df = result.result_df
    if df is None:
        raise TraceFormatError("EvaluationResult has no result_df to read the rows from; pass the rows "
                               "given to evaluate instead")
    run_id = getattr(result, "run_id", None)
    out: list[tuple[dict[str, Any], Any]] = []
    for i in range(len(df)):
        cell = df.iloc[i]
        trace = _trace_entity(cell.get("trace"))
        assessments = list(getattr(getattr(trace, "info", None), "assessments", None) or [])
        expectations = {a.name: a.value for a in assessments if isinstance(a, Expectation)}
        mine = [a for a in assessments if isinstance(a, Feedback) and a.name == name
                and (run_id is None or (a.metadata or {}).get("mlflow.assessment.sourceRunId") in (None, run_id))]
        recorded: Any = _UNSCORED
        if mine:
            fb = mine[-1]
            if fb.error is not None:
                recorded = None
            else:
                flag = (fb.metadata or {}).get("passed")
                value = fb.value if isinstance(fb.value, (int, float)) and not isinstance(fb.value, bool) else None
                recorded = MetricResult(name, None if value is None else float(value), fb.rationale or "", {},
                                        None if flag in (None, "skipped") else flag == "true")
        row = {"inputs": cell.get("request"), "outputs": cell.get("response"),
               "expectations": expectations or None, "trace": trace}
        out.append((row, recorded))
    return out


def row_from_trace(trace: Any, *, expected_calls: Sequence[Any] | None = None, format: str = "auto",
                   error_pattern: str | None = None, **settings: Any) -> dict[str, Any]:
    """An ``mlflow.genai.evaluate`` row for one recorded run in any format
    ``trajcheck.read.traces.load`` reads (or a ``Trajectory``): ``inputs = {"input": <first user
    message>, "case_id"?}``, ``outputs = {"trajectory": ...}`` (failed calls and parallel
    steps kept), ``expectations = {"trajcheck": {"expected_calls", ...settings, before/after
    state}}`` (checked now: an unknown key raises ``DatasetError``)."""
    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    inputs: dict[str, Any] = {"input": traj.user_input or ""}
    if traj.metadata.get("case_id") is not None:
        inputs["case_id"] = traj.metadata["case_id"]
    return {"inputs": inputs, "outputs": {"trajectory": traj.to_dict()},
            "expectations": {"trajcheck": _spec.row_settings(traj, expected_calls, **settings)}}


def log_trace(trace: Any, *, format: str = "auto", error_pattern: str | None = None) -> str:
    """Replay one recorded run as a real MLflow trace in the active tracking store (spans made
    with ``mlflow.start_span``: an AGENT root with the user input, a CHAT_MODEL span per model
    turn whose output lists the turn's tool calls, a TOOL span per call with its arguments and
    result, status ERROR for a failed call) and return its trace id, e.g. to evaluate recorded
    runs as traces (``mlflow.get_trace(id)``). trajcheck's MLflow reader reads it back as the
    same calls, failures and parallel steps."""
    import mlflow
    from mlflow.entities import SpanStatus, SpanStatusCode, SpanType

    from trajcheck.match.matching import is_failed

    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    results = {id(c): r for c, r in traj.pairs()}
    messages: list[dict[str, Any]] = [{"role": "user", "content": traj.user_input or ""}]
    with mlflow.start_span(name="agent", span_type=SpanType.AGENT) as root:
        root.set_inputs({"input": traj.user_input or "", "case_id": traj.metadata.get("case_id")})
        for s in traj.steps:
            if not s.tool_calls:
                continue
            calls = [{"id": c.call_id or f"call_{s.index}_{j}", "type": "function",
                      "function": {"name": c.name, "arguments": json.dumps(c.args if c.args is not None else {})}}
                     for j, c in enumerate(s.tool_calls)]
            with mlflow.start_span(name="chat", span_type=SpanType.CHAT_MODEL) as chat:
                chat.set_inputs({"messages": list(messages)})
                msg = {"role": "assistant", "content": s.content, "tool_calls": calls}
                chat.set_outputs({"choices": [{"index": 0, "message": msg}]})
            messages.append(msg)
            for c, cd in zip(s.tool_calls, calls):
                r = results.get(id(c))
                with mlflow.start_span(name=c.name, span_type=SpanType.TOOL) as tool:
                    tool.set_inputs(dict(c.args or {}))
                    if r is not None and is_failed(r):
                        tool.set_status(SpanStatus(SpanStatusCode.ERROR, str(r.error or r.output)))
                    elif r is not None:
                        tool.set_outputs(r.output)
                messages.append({"role": "tool", "tool_call_id": cd["id"],
                                 "content": "" if r is None else json.dumps(r.output, default=str)})
        if traj.final_response is not None:
            with mlflow.start_span(name="chat", span_type=SpanType.CHAT_MODEL) as chat:
                chat.set_inputs({"messages": list(messages)})
                chat.set_outputs({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                      "content": traj.final_response}}]})
        root.set_outputs(traj.final_response)
        tid = root.trace_id
    flush = getattr(mlflow, "flush_trace_async_logging", None)
    if callable(flush):  # with async trace logging on, get_trace(tid) right after could miss spans
        flush(terminate=False)
    return str(tid)
