"""trajcheck's metrics as LangSmith 0.15.x evaluators (row and summary).

User guide (every settings key, output and reference shapes, errors): docs/hosts/langsmith.md.

Row evaluators (``TrajcheckEvaluator``, a ``langsmith.evaluation.RunEvaluator``) work in
``evaluate(..., upload_results=False)`` with no API key, keep their feedback keys however
they are wrapped (``feedback_keys`` is static), and can also be called directly in the
openevals style, ``ev(outputs=..., reference_outputs=..., inputs=...)``, e.g. inside a
``@pytest.mark.langsmith`` test (then ``log_feedback(ev(...))``). ``as_function()`` gives a
plain function with the ``(inputs, outputs, reference_outputs, run, example)`` signature for
APIs that want a function. Scores and comments are the core's ``score`` and ``reason``.

Reading a row:

* ``outputs`` (``run.outputs``): a message list (OpenAI dicts or LangChain messages), a dict
  holding one under ``messages``/``trajectory``/``output``, a trajcheck trajectory dict
  (``steps``), or ``{"tool_calls": [{"name", "args"}...], "final_response"?}``
  (``_convert.any_trajectory``). A missing trajectory raises (it is never scored as empty).
* ``reference_outputs`` (``example.outputs``): ``expected_calls`` (``[{"name", "args",
  "match"?}...]``) or an agentevals-style reference trajectory under
  ``trajectory``/``messages`` (its calls become expected calls, arguments included), plus
  any case settings (``optional_calls``, ``forbidden_calls``, ``forbidden_sequences``,
  ``precedence``, ``expected_final_state``, ``response_must_include``, ``max_steps``, ...).
  Evaluator and reference settings: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error. ``before_state``/``after_state`` for final-state metrics are
  read from the outputs first, then the reference.
* ``inputs`` (``example.inputs``): the case input is ``inputs["input"]`` (or the only value,
  or the whole dict); the case id is the example id.

Settings are strict: ``reference_outputs`` is read as a whole, or only its ``"trajcheck"``
block when it has one (keep your own keys beside that block); an unknown or misspelled key
raises ``DatasetError`` naming the closest known key. A metric whose reference is missing
(``reference_outputs`` None or ``{}``, no ``expected_calls``/``trajectory``/``messages``, no
``precedence`` for ordering accuracy, ...) raises ``MissingReference``; LangSmith records that
as error feedback (score None, the message as comment) under the evaluator's key -- never a
pass. A core score of None (not applicable) is feedback with ``score=None`` and the reason.

Feedback keys: ``key`` (default ``trajcheck_<metric>``; a trajectory match names its mode
and dialect, ``trajcheck_trajectory_in_order``, ``trajcheck_trajectory_exact_agentevals_strict``);
``tool_call_f1`` also emits ``<key>_precision`` and ``<key>_recall``.

Summary evaluators (``pass_k_summary``, ``suite_summary``): pass^k, pass@k, the success rate
(Wilson interval) and routing macro-F1 over ``num_repetitions``, grouping runs by example id;
a trial succeeds when the row metric's result ``passed`` is True; pass^k/pass@k come with their
percentile bootstrap interval over tasks (``metrics.reliability``). Keys are
``<evaluator key>_pass^<k>`` etc. (``keys=`` overrides), so two summaries never overwrite each
other.

A LangGraph (or any LangChain) target under ``evaluate(..., upload_results=False)`` can hang
about two minutes at exit in LangSmith's background tracer when no server is reachable: run
the evaluation inside ``langsmith.tracing_context(enabled=False)`` (as the example does).

Mode names (``metric="trajectory_match"``): neutral names, or a framework's with
``dialect`` via ``trajcheck.metrics.trajectory.normalize_mode``; agentevals/openevals
``trajectory_match_mode`` names map as ``strict`` -> ``exact`` (flattened calls; agentevals
compares the message skeleton), ``unordered`` -> ``unordered``, ``superset`` -> ``superset``,
``subset`` -> ``subset`` (``dialect="agentevals"`` or ``"openevals"``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trajcheck.errors import TrajcheckError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _case, _catalog, _convert, _suite

__all__ = ["TrajcheckEvaluator", "pass_k_summary", "suite_summary", "log_feedback", "to_trajcheck",
           "agentevals_mode", "example_from_trace", "outputs_from_trace"]

#: Reference keys holding a reference trajectory (agentevals style) besides the settings.
_REF_TRAJ_KEYS = ("trajectory", "messages", "output")


def agentevals_mode(trajectory_match_mode: str, dialect: str = "agentevals") -> str:
    """The neutral mode for an agentevals/openevals ``trajectory_match_mode`` name
    (``strict`` -> exact, ``unordered``, ``superset``, ``subset``), via MATCH's table."""
    from trajcheck.metrics.trajectory import normalize_mode

    return normalize_mode(trajectory_match_mode, dialect)


def _case_input(inputs: Any) -> Any:
    if isinstance(inputs, Mapping):
        if "input" in inputs:
            return inputs["input"]
        if len(inputs) == 1:
            return next(iter(inputs.values()))
        return dict(inputs)
    return inputs


def _reference(ref: Any) -> dict[str, Any]:
    """The settings part of ``reference_outputs`` (strict, ``_settings.read``), see the module doc."""
    from . import _settings

    if ref is None:
        return {}
    if not isinstance(ref, Mapping):
        return {"expected_calls": ref}
    if "trajcheck" in ref:
        return _settings.read(ref["trajcheck"], "reference_outputs['trajcheck']", extra_keys=_REF_TRAJ_KEYS)
    return _settings.read(ref, "reference_outputs (put other keys beside a 'trajcheck' block)",
                          extra_keys=_REF_TRAJ_KEYS)


def _to_trajcheck(inputs: Any, outputs: Any, reference_outputs: Any, settings: Mapping[str, Any] | None,
                  match: Mapping[str, Any] | None, case_id: str
                  ) -> tuple[Trajectory, Case, frozenset[str], dict[str, Any]]:
    from . import _settings

    traj = _convert.any_trajectory(outputs, where="outputs")
    ref = _reference(reference_outputs)
    layer = {k: v for k, v in ref.items() if k not in _REF_TRAJ_KEYS}
    if ref.get("expected_calls") is not None:
        layer["expected_calls"] = [e.to_dict() for e in _convert.expected_from_reference(
            ref["expected_calls"], where="reference_outputs.expected_calls")]
    elif any(k in ref for k in _REF_TRAJ_KEYS):
        layer["expected_calls"] = [e.to_dict() for e in _convert.expected_from_reference(
            {k: ref[k] for k in _REF_TRAJ_KEYS if k in ref})]
    own = dict(settings or {})
    if match:
        own["match"] = match
    r = _settings.resolve(case_id, _case_input(inputs), (),
                          [_settings.Layer("reference_outputs", layer),
                           _settings.Layer("TrajcheckEvaluator(...)", _settings.read(own, "TrajcheckEvaluator"),
                                           per_case=False)])
    return traj, r.case, r.provided, {**ref, **r.settings}


def to_trajcheck(inputs: Any, outputs: Any, reference_outputs: Any, *,
                 settings: Mapping[str, Any] | None = None, match: Mapping[str, Any] | None = None,
                 case_id: str = "langsmith") -> tuple[Trajectory, Case]:
    """``(Trajectory, Case)`` for one LangSmith row (see the module doc for the shapes)."""
    return _to_trajcheck(inputs, outputs, reference_outputs, settings, match, case_id)[:2]  # type: ignore[return-value]


def log_feedback(result: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
    """Log an evaluator's result dict(s) with ``langsmith.testing.log_feedback`` (inside a
    ``@pytest.mark.langsmith`` test; a no-op there when ``LANGSMITH_TEST_TRACKING=false``)."""
    from langsmith import testing as t

    items = result.get("results", [result]) if isinstance(result, Mapping) else list(result)
    for r in items:
        t.log_feedback(key=r["key"], score=r.get("score"), comment=r.get("comment"))


def _run_evaluator_base() -> type:
    # LangSmith's evaluator classes are imported on first use (importing them costs ~0.5 s;
    # ``import trajcheck.adapters.langsmith`` stays cheap).
    from langsmith.evaluation import RunEvaluator

    return RunEvaluator  # type: ignore[no-any-return]


class TrajcheckEvaluator:
    """One trajcheck metric as a LangSmith evaluator (a ``langsmith.evaluation.RunEvaluator``:
    ``isinstance`` holds once LangSmith's evaluation module is loaded).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS`` (``tool_call_f1``,
    ``trajectory_match``, ``ordering_accuracy``, ``duplicate_call_rate``, ``task_success``,
    ...). ``key``: feedback key (default ``_catalog.default_key``). ``mode``/``dialect``: for
    ``trajectory_match``. Case settings (``optional_calls``, ``forbidden_calls``,
    ``forbidden_sequences``, ``precedence``, ``args_mode``, ``expected_final_state``,
    ``response_must_include``, ``max_steps``, ``optimal_steps``, ``tools``, ...) override the
    reference's; ``match`` adds argument matchers; ``weights``, ``ignore``, ``id_args``,
    ``retry_budget``, ``semantic_scorer``, ``judge`` as in the core.

    Errors: an unknown metric, setting (with the closest known one) or a wrong-typed option
    raises ``MetricInputError`` here; a malformed case setting (a list of names given a
    string, say) ``DatasetError`` naming the field, here too. At run time a trajcheck error (bad trajectory, bad or
    missing reference) propagates; LangSmith then records error feedback under this
    evaluator's keys.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Become a RunEvaluator subclass lazily (see _run_evaluator_base).
        if cls is TrajcheckEvaluator:
            cls = _evaluator_class()
        return object.__new__(cls)

    def __init__(self, metric: str = "tool_call_f1", *, key: str | None = None,
                 mode: str | None = None, dialect: str | None = None,
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                 id_args: Sequence[str] | None = None, retry_budget: int | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None,
                 **settings: Any) -> None:
        where = "TrajcheckEvaluator"
        row = _catalog.row_metric(metric, where)
        try:
            _catalog.check_keys(settings, _catalog.CASE_KEYS, f"{where} settings")
        except TrajcheckError as e:
            from trajcheck.errors import MetricInputError

            raise MetricInputError(str(e)) from e
        for k, v in (("key", key), ("mode", mode), ("dialect", dialect), ("match", match),
                     ("weights", weights), ("ignore", ignore), ("id_args", id_args),
                     ("retry_budget", retry_budget), ("args_mode", settings.get("args_mode"))):
            _catalog.check_option(k, v, where)
        _case.check_settings(settings, where)
        if row.key == "trajectory_match":
            mode = mode or "superset"
        elif mode is not None or dialect is not None:
            from trajcheck.errors import MetricInputError

            raise MetricInputError(f"{where}: mode/dialect apply to trajectory_match only")
        self.row = row
        self.metric, self.key = row.key, key or _catalog.default_key(row.key, mode, dialect)
        self.name = _catalog.display_name(row.key, mode, dialect)
        self.mode, self.dialect, self.match = mode, dialect, match
        self.weights, self.ignore, self.id_args = weights, ignore, id_args
        self.retry_budget = retry_budget
        self.semantic_scorer, self.judge = semantic_scorer, judge
        self.settings = settings
        self.__name__ = self.key  # LangSmith names un-keyed feedback after __name__

    @property
    def feedback_keys(self) -> list[str]:
        """The keys this evaluator emits, known before it runs."""
        if self.metric == "tool_call_f1":
            return [self.key, f"{self.key}_precision", f"{self.key}_recall"]
        return [self.key]

    def compute(self, *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None,
                case_id: str = "langsmith") -> MetricResult:
        """The core ``MetricResult`` for one row."""
        traj, case, provided, ref = _to_trajcheck(inputs, outputs, reference_outputs, self.settings,
                                                  self.match, case_id)
        return self._compute(traj, case, provided, outputs, ref)

    def _compute(self, traj: Trajectory, case: Case, provided: frozenset[str], outputs: Any,
                 ref: Mapping[str, Any]) -> MetricResult:
        before = after = None
        for src in (outputs, ref):
            if isinstance(src, Mapping):
                before = before if before is not None else src.get("before_state")
                after = after if after is not None else src.get("after_state")
        o = _catalog.Options(mode=self.mode, dialect=self.dialect,
                             args_mode=self.settings.get("args_mode"),
                             semantic_scorer=self.semantic_scorer, judge=self.judge,
                             weights=self.weights, before_state=before, after_state=after,
                             ignore=self.ignore, id_args=self.id_args,
                             retry_budget=self.retry_budget if self.retry_budget is not None else 2)
        return _catalog.compute(self.metric, traj, case, o, provided,
                                "give it in the example's reference outputs or to the evaluator")

    def _results(self, res: MetricResult) -> list[dict[str, Any]]:
        out = [{"key": self.key, "score": res.score, "comment": res.reason}]
        if self.metric == "tool_call_f1":
            out.append({"key": f"{self.key}_precision", "score": getattr(res, "precision", None),
                        "comment": res.reason})
            out.append({"key": f"{self.key}_recall", "score": getattr(res, "recall", None),
                        "comment": res.reason})
        return out

    def __call__(self, *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None,
                 **kwargs: Any) -> dict[str, Any]:
        """openevals-style call: ``{"key", "score", "comment"}``, or ``{"results": [...]}``
        when the metric has several keys (``tool_call_f1``)."""
        res = self.compute(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs)
        items = self._results(res)
        return items[0] if len(items) == 1 else {"results": items}

    def evaluate_run(self, run: Any, example: Any = None, evaluator_run_id: Any = None) -> Any:
        """LangSmith's row hook: reads ``run.outputs``, ``example.outputs``/``inputs``."""
        from langsmith.evaluation import EvaluationResult, EvaluationResults

        case_id = str(getattr(example, "id", None) or "langsmith")
        res = self.compute(inputs=getattr(example, "inputs", None), outputs=run.outputs,
                           reference_outputs=getattr(example, "outputs", None), case_id=case_id)
        items = [EvaluationResult(key=r["key"], score=r["score"], comment=r["comment"])
                 for r in self._results(res)]
        return items[0] if len(items) == 1 else EvaluationResults(results=items)

    def as_function(self) -> Callable[..., dict[str, Any]]:
        """A plain function ``f(inputs=None, outputs=None, reference_outputs=None, run=None,
        example=None)`` LangSmith accepts in either calling style; its ``__name__`` is the key
        and its results carry explicit keys."""

        def evaluator(inputs: Any = None, outputs: Any = None, reference_outputs: Any = None,
                      run: Any = None, example: Any = None) -> dict[str, Any]:
            if outputs is None and run is not None:
                outputs = run.outputs
            if reference_outputs is None and example is not None:
                reference_outputs = example.outputs
            if inputs is None and example is not None:
                inputs = example.inputs
            return self(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs)

        evaluator.__name__ = self.key
        evaluator.__qualname__ = self.key
        return evaluator


_EVALUATOR_CLASS: list[type] = []
_CLASS_LOCK = threading.Lock()


def _evaluator_class() -> type:
    """``TrajcheckEvaluator`` mixed with LangSmith's ``RunEvaluator``, built once under a lock
    (evaluators made from two threads at once are instances of the one class)."""
    if not _EVALUATOR_CLASS:
        with _CLASS_LOCK:
            if not _EVALUATOR_CLASS:
                base = _run_evaluator_base()
                _EVALUATOR_CLASS.append(type("TrajcheckEvaluator", (TrajcheckEvaluator, base),
                                             {"__module__": __name__, "__doc__": TrajcheckEvaluator.__doc__}))
    return _EVALUATOR_CLASS[0]


def suite_summary(evaluator: TrajcheckEvaluator, figures: Sequence[str] = _suite.SUITE_FIGURES, *,
                  k: int | None = None, keys: Mapping[str, str] | None = None, n_boot: int = 2000,
                  seed: int = 0, confidence: float = 0.95
                  ) -> Callable[[Sequence[Any], Sequence[Any]], dict[str, Any]]:
    """A LangSmith summary evaluator ``f(runs, examples)`` giving the suite ``figures``
    (``pass_hat_k``, ``pass_at_k``, ``success_rate``, ``routing_macro_f1``;
    ``_suite.compute_figures``) over the runs grouped by ``example.id``.

    A trial succeeds when ``evaluator``'s core result has ``passed`` True (a row whose metric
    raises or is skipped counts as a failure). ``k`` defaults to the smallest number of runs
    of an example (the figures' reasons say so when examples have unequal run counts). Keys: ``_suite.default_keys(evaluator.key, k)`` (e.g.
    ``trajcheck_task_success_pass^3``), or ``keys`` mapping a figure to its key (an unknown
    figure name raises ``MetricInputError``). A figure that does not apply (routing with no
    expected route) has score None.
    """
    figs = _suite.check_figures(figures, "suite_summary")
    if keys is not None:
        _suite.check_figures(list(keys), "suite_summary keys")

    def summary(runs: Sequence[Any], examples: Sequence[Any]) -> dict[str, Any]:
        rows: list[tuple[str, Any, Any, MetricResult | None]] = []
        for run, ex in zip(runs, examples):
            ex_id = str(getattr(ex, "id", None))
            try:
                traj, case, provided, ref = _to_trajcheck(getattr(ex, "inputs", None), run.outputs,
                                                          getattr(ex, "outputs", None),
                                                          evaluator.settings, evaluator.match, ex_id)
                res: MetricResult | None = evaluator._compute(traj, case, provided, run.outputs, ref)
            except TrajcheckError:
                traj = case = res = None
            rows.append((ex_id, traj, case, res))
        recs = _suite.records_from(rows)
        # k=None goes through as None, so the figure's reason says when k was lowered to the
        # fewest runs of an example
        got = _suite.compute_figures(recs, figs, k=k, confidence=confidence, n_boot=n_boot, seed=seed)
        kk = k
        if kk is None:
            trials: dict[str, list[Any]] = {}
            for r in recs:
                trials.setdefault(r.task, []).append(r)
            kk = _suite.default_k(trials)[0]
        names = dict(_suite.default_keys(evaluator.key, kk))
        names.update(keys or {})
        return {"results": _suite.figures_json(got, names)}

    summary.__name__ = f"{evaluator.key}_suite"
    return summary


def pass_k_summary(evaluator: TrajcheckEvaluator, k: int | None = None, *,
                   keys: Mapping[str, str] | None = None, n_boot: int = 2000, seed: int = 0,
                   confidence: float = 0.95) -> Callable[[Sequence[Any], Sequence[Any]], dict[str, Any]]:
    """``suite_summary(evaluator, ("pass_hat_k", "pass_at_k"), ...)``: pass^k = mean
    C(c,k)/C(n,k) and pass@k = mean 1 - C(n-c,k)/C(n,k) (``metrics.reliability``), keys
    ``<evaluator key>_pass^<k>`` and ``<evaluator key>_pass@<k>`` unless ``keys`` says
    otherwise; n < k raises ``MetricInputError`` naming the task."""
    f = suite_summary(evaluator, ("pass_hat_k", "pass_at_k"), k=k, keys=keys, n_boot=n_boot,
                      seed=seed, confidence=confidence)
    f.__name__ = f"{evaluator.key}_pass_k"
    return f


def outputs_from_trace(trace: Any, *, format: str = "auto", error_pattern: str | None = None) -> dict[str, Any]:
    """A LangSmith run output for one recorded run in any format ``trajcheck.read.traces.load``
    reads (or a ``Trajectory``): ``{"trajectory": Trajectory.to_dict(), "final_response"}``,
    which the evaluators read back losslessly (failed calls -- from the source's error flag or
    ``error_pattern`` -- and parallel steps kept). Use it as your target's return value when
    replaying recorded runs. Raises ``TraceFormatError`` unless ``trace`` is exactly one run."""
    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    return {"trajectory": traj.to_dict(), "final_response": traj.final_response}


def example_from_trace(trace: Any, *, expected_calls: Sequence[Any] | None = None,
                       format: str = "auto", error_pattern: str | None = None,
                       dataset_id: Any = None, **settings: Any) -> Any:
    """A ``langsmith.schemas.Example`` for one recorded run: ``inputs = {"input": <first
    user message>, "case_id"?}``, ``outputs`` (the reference) ``= {"trajcheck": {"expected_calls", ...
    settings}}`` (checked like any reference: unknown keys raise), and the recorded run
    itself under ``metadata["trajcheck_outputs"]`` (:func:`outputs_from_trace`), so that a
    target ``lambda inputs: ...`` can replay it. ``expected_calls``: names or ``{"name",
    "args"}`` dicts (None leaves them out: metrics needing them then report a missing
    reference)."""
    import uuid

    from langsmith.schemas import Example

    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    ref: dict[str, Any] = dict(settings)
    if expected_calls is not None:
        ref["expected_calls"] = [e if isinstance(e, (str, Mapping)) else e.to_dict() for e in expected_calls]
    _reference({"trajcheck": ref})  # strict check now rather than at evaluation time
    inputs: dict[str, Any] = {"input": traj.user_input or ""}
    if traj.metadata.get("case_id") is not None:
        inputs["case_id"] = traj.metadata["case_id"]
    return Example(id=uuid.uuid4(), dataset_id=dataset_id or uuid.uuid4(),
                   inputs=inputs, outputs={"trajcheck": ref},
                   metadata={"trajcheck_outputs": outputs_from_trace(traj)})
