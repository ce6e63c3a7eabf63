"""trajcheck's metrics as DeepEval 4.3.x metrics (``deepeval.metrics.BaseMetric``).

User guide (every settings key, the test-case shape, errors): docs/hosts/deepeval.md.

Use them like any DeepEval metric: in ``evaluate()`` (async or sync), in ``assert_test``
under pytest, or on a span with ``@observe(metrics=[...])``. No LLM and no API key is
involved. ``TrajcheckMetric(metric=<key>)`` exposes any row of the metric table
(``trajcheck.adapters._catalog.ROW_METRICS``: ``tool_call_f1``, ``trajectory_match``,
``ordering_accuracy``, ``duplicate_call_rate``, ...); the named classes below are the same
with the key fixed. Each metric translates the ``LLMTestCase`` into ``(Trajectory, Case)``
(``trajcheck.adapters._convert``), runs one core metric and copies the core result back:
``metric.score`` and ``metric.reason`` are the core's ``score`` and ``reason`` verbatim,
``metric.score_breakdown`` its ``parts``.

Reading the test case:

* ``tools_called`` -> the run's calls (``input_parameters=None`` = called with no
  arguments); ``output`` -> the call's result; ``metadata["failed_calls"]`` (indices) marks
  calls whose result was an error; ``input``/``actual_output`` -> user input and final
  response. :func:`test_case_from_trace` builds such a test case from any trace
  ``trajcheck.read.traces.load`` reads, failed calls marked.
* ``expected_tools`` -> ``Case.expected_calls``; an expected ``input_parameters=None``
  means "no argument constraint"; ``expected_tools=[]`` means "no tool should be called".
* Case settings (``optional_calls``, ``forbidden_calls``, ``precedence``,
  ``forbidden_sequences``, ``expected_final_state``, ``response_must_include``,
  ``max_steps``, ``optimal_steps``, ``args_mode``, ``tools``, ``user``, ``expected_calls``)
  come from ``test_case.metadata["trajcheck"]`` (or the metadata itself when it has no
  ``"trajcheck"`` block) and from the metric's constructor: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error.
  ``match`` (``{tool or "*": {arg: matcher spec}}``) attaches argument matchers. Final-state
  metrics read ``before_state`` and ``after_state`` (``{table: [row, ...]}``) there too.
  Every key is checked: an unknown or misspelled one raises ``DatasetError`` naming the
  closest known key; a wrong type raises too.

Missing reference and not-applicable scores, in DeepEval's own conventions: a metric whose
reference is not in the test case (``expected_tools`` None and no ``expected_calls``,
no ``precedence`` for ordering accuracy, no ``tools`` for schema validity, ...) raises
``deepeval.errors.MissingTestCaseParamsError`` (so ``ErrorConfig(skip_on_missing_params=True)``
skips it); a core score of None (e.g. no applicable precedence rule) marks the metric
``skipped`` as DeepEval's own metrics do, and its verdict is DeepEval's "no verdict":
``success`` and ``is_successful()`` are None (as for a DeepEval metric with no threshold).
Both runners then decide the test case on its other metrics only: async ``evaluate()``
records nothing for a skipped metric; the sync runner (``AsyncConfig(run_async=False)``)
has no skip path for a metric that ran, so it records a row with score None and success
None, which DeepEval shows as ``NONE`` and leaves out of pass and fail counts (DeepEval's
summary log of pass rates still divides by it). ``assert_test`` fails only on the others.

DeepEval re-creates a metric for every test case in async ``evaluate()`` from the attributes
named like its ``__init__`` parameters; every setting here is such a parameter, stored
under its own name. ``strict_mode=True`` sets the threshold to 1.0 (0.0 for a rate where
lower is better) and a score on the wrong side of it to 0.0 (1.0 for a rate); otherwise the
score is the core's. Rates (``unnecessary_call_rate``, ``duplicate_call_rate``,
``false_success``) pass at ``score <= threshold`` (default 0.0).

Names carry the mode: ``TrajectoryMatchMetric(mode="in_order").__name__`` is
``"Trajectory Match [in_order] (trajcheck)"``; with a dialect,
``"Trajectory Match [agentevals strict -> exact] (trajcheck)"``. DeepEval's own flags are
accepted too and mapped through ``trajcheck.metrics.trajectory.normalize_mode(...,
"deepeval")``: ``should_exact_match=True`` -> ``exact``; ``should_consider_ordering=True`` ->
``in_order``; both False -> ``recall``. No class here is named like one of DeepEval's
(trajcheck's argument metric is ``ArgumentAccuracyMetric``, not DeepEval's LLM-judged
``ArgumentCorrectnessMetric``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

try:
    from deepeval.metrics import BaseConversationalMetric, BaseMetric
    from deepeval.test_case import MultiTurnParams, SingleTurnParams
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trajcheck.adapters.deepeval needs DeepEval 4.3: pip install 'trajcheck[deepeval]'"
    ) from _e

from trajcheck.errors import MetricInputError, TrajcheckError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _case, _catalog, _convert

__all__ = [
    "TrajcheckMetric",
    "ToolCallF1Metric",
    "TrajectoryMatchMetric",
    "ArgumentAccuracyMetric",
    "SchemaValidityMetric",
    "OrderingAccuracyMetric",
    "ForbiddenCallsMetric",
    "FinalStateMetric",
    "CompositeMetric",
    "ConversationalTrajcheckMetric",
    "deepeval_mode",
    "test_case_from_trace",
    "suite_figures",
]


def deepeval_mode(should_exact_match: bool = False, should_consider_ordering: bool = False) -> str:
    """The neutral mode for DeepEval ``ToolCorrectnessMetric`` flags, via
    ``trajcheck.metrics.trajectory.MODE_TABLE`` (dialect ``deepeval``).

    ``should_exact_match`` wins over ``should_consider_ordering`` (as in DeepEval):
    exact -> ``exact``; ordering -> ``in_order``; neither -> ``recall`` (the fraction of
    expected calls found; extras not penalised).
    """
    from trajcheck.metrics import trajectory as _t

    return _t.normalize_mode(_t.deepeval_mode(should_consider_ordering=bool(should_consider_ordering),
                                              should_exact_match=bool(should_exact_match)), "deepeval")


def _verbose(result: MetricResult) -> str:
    lines = [f"{result.name}: score={result.score!r} passed={result.passed!r}", result.reason]
    lines += [f"{k}: {v!r}" for k, v in result.parts.items()]
    return "\n".join(lines)


#: Constructor settings that are case fields (``threshold`` is DeepEval's pass mark here).
_CASE_ARGS = tuple(k for k in _catalog.CASE_KEYS if k != "threshold")


#: Constructor arguments that are case fields, and the metric options (one list for both classes).
_SETTING_ARGS = ("expected_calls", "optional_calls", "forbidden_calls", "forbidden_sequences", "precedence",
                 "expected_final_state", "response_must_include", "max_steps", "optimal_steps",
                 "args_mode", "user", "tools", "expected_route", "initial_state", "faults",
                 "read_only_calls", "claim_patterns", "negation_patterns")
_OPTION_ARGS = ("match", "weights", "ignore", "id_args", "retry_budget", "semantic_scorer", "judge")


class _Common:
    """Shared behaviour of the single-turn and conversational metrics (no DeepEval base)."""

    metric: str
    threshold: float
    strict_mode: bool
    include_reason: bool
    verbose_mode: bool
    score: float | None
    reason: str | None
    success: bool | None
    error: str | None
    result: MetricResult | None
    skipped: bool
    _display: str

    _fixed: str | None = None
    _display_prefix = ""

    def __init__(self, metric: str = "tool_call_f1", threshold: float | None = None, *,
                 mode: str | None = None, dialect: str | None = None,
                 should_exact_match: bool | None = None,
                 should_consider_ordering: bool | None = None,
                 expected_calls: Sequence[Any] | None = None,
                 optional_calls: Sequence[str] | None = None,
                 forbidden_calls: Sequence[str] | None = None,
                 forbidden_sequences: Sequence[Mapping[str, Any]] | None = None,
                 precedence: Sequence[Sequence[str]] | None = None,
                 expected_final_state: Mapping[str, Any] | None = None,
                 response_must_include: Sequence[str] | None = None,
                 max_steps: int | None = None, optimal_steps: int | None = None,
                 args_mode: str | None = None, user: Mapping[str, Any] | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 expected_route: Any = None, initial_state: str | None = None,
                 faults: Sequence[Mapping[str, Any]] | None = None,
                 read_only_calls: Sequence[str] | None = None,
                 claim_patterns: Sequence[str] | None = None,
                 negation_patterns: Sequence[str] | None = None,
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                 id_args: Sequence[str] | None = None, retry_budget: int | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None,
                 strict_mode: bool = False, async_mode: bool = True,
                 verbose_mode: bool = False, include_reason: bool = True, **unknown: Any) -> None:
        """One constructor for both metric classes (arguments: see :class:`TrajcheckMetric`).
        An unknown keyword raises ``MetricInputError`` naming the closest known one."""
        if unknown:
            import inspect

            from trajcheck.model import did_you_mean

            known = [p for p in inspect.signature(_Common.__init__).parameters
                     if p not in ("self", "unknown")]
            k = sorted(unknown)[0]
            raise MetricInputError(f"{type(self).__name__}: unknown option {k!r}{did_you_mean(k, known)}; "
                                   f"known: {', '.join(known)}")
        given = locals()
        settings = {k: given[k] for k in _SETTING_ARGS}
        options = {k: given[k] for k in _OPTION_ARGS}
        self._init_common(self._fixed or metric, threshold, mode=mode, dialect=dialect,
                          should_exact_match=should_exact_match,
                          should_consider_ordering=should_consider_ordering, settings=settings,
                          options=options, strict_mode=strict_mode, async_mode=async_mode,
                          verbose_mode=verbose_mode, include_reason=include_reason)
        self._display = self._display_prefix + self._display

    def _init_common(self, metric: str, threshold: float | None, *, mode: str | None,
                     dialect: str | None, should_exact_match: bool | None,
                     should_consider_ordering: bool | None, settings: Mapping[str, Any],
                     options: Mapping[str, Any], strict_mode: bool, async_mode: bool,
                     verbose_mode: bool, include_reason: bool) -> None:
        where = type(self).__name__
        row = _catalog.row_metric(metric, where)
        self._row = row
        self.metric = metric
        _case.check_settings(settings, where)
        for k, v in settings.items():
            setattr(self, k, v)
        for k, v in options.items():
            _catalog.check_option(k, v, where)
            setattr(self, k, v)
        _catalog.check_option("threshold", threshold, where)
        self.mode, self.dialect = mode, dialect
        self.should_exact_match = should_exact_match
        self.should_consider_ordering = should_consider_ordering
        _catalog.check_option("mode", mode, where)
        _catalog.check_option("dialect", dialect, where)
        if (row.key == "trajectory_match" and mode is None and dialect is None
                and should_exact_match is None and should_consider_ordering is None):
            # no mode given: DeepEval's own default (both flags False), so that the metric
            # with DeepEval's defaults spelled out is the same metric
            should_exact_match = should_consider_ordering = False
        if should_exact_match is not None or should_consider_ordering is not None:
            if row.key != "trajectory_match":
                raise MetricInputError(f"{where}: should_exact_match/should_consider_ordering apply "
                                       "to trajectory_match only")
            if mode is not None or dialect is not None:
                raise MetricInputError(f"{where}: give either mode/dialect or DeepEval's "
                                       "should_exact_match/should_consider_ordering, not both")
            from trajcheck.metrics import trajectory as _t

            self._mode_name: str | None = _t.deepeval_mode(
                should_consider_ordering=bool(should_consider_ordering),
                should_exact_match=bool(should_exact_match))
            self._mode_dialect: str | None = "deepeval"
        elif (mode is not None or dialect is not None) and row.key != "trajectory_match":
            raise MetricInputError(f"{where}: mode/dialect apply to trajectory_match only")
        else:
            self._mode_name = mode if mode is not None or row.key != "trajectory_match" else "superset"
            self._mode_dialect = dialect
        self._display = _catalog.display_name(row.key, self._mode_name, self._mode_dialect)
        base = row.threshold if threshold is None else float(threshold)
        if strict_mode:
            base = 0.0 if row.lower_is_better else 1.0
        self.threshold = base
        # a pass mark the user set here (or strict_mode's); a test case's own threshold must
        # then agree with it, else it replaces the default for that test case (_pass_mark)
        self._threshold_given = threshold is not None or strict_mode
        self._pass_mark = base
        self.strict_mode = strict_mode
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self.include_reason = include_reason
        self.evaluation_model = None
        self.model = None
        self.using_native_model = False
        self.score = None
        self.reason = None
        self.success = None
        self.error = None
        self.result = None
        self.skipped = False

    def _settings(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _CASE_ARGS if getattr(self, k, None) is not None}

    def _case(self, test_case: Any, case_id: str, case_input: Any, expected: Any,
              expected_given: bool) -> tuple[Case, frozenset[str], dict[str, Any]]:
        from . import _settings

        meta = _case.metadata_settings(getattr(test_case, "metadata", None), "test_case.metadata")
        own = dict(self._settings())
        if getattr(self, "match", None):
            own["match"] = self.match
        where = f"{type(self).__name__}(...)"
        r = _settings.resolve(case_id, case_input, expected,
                              [_settings.Layer("test_case.metadata", meta),
                               _settings.Layer(where, _settings.read(own, where), per_case=False)],
                              expected_given=expected_given, flat_run=True)
        return r.case, r.provided, dict(r.settings)

    def _run(self, traj: Trajectory, case: Case, provided: frozenset[str],
             meta: Mapping[str, Any]) -> float | None:
        from deepeval.errors import MissingTestCaseParamsError

        self.error = None
        self.skipped = False
        try:
            res = _catalog.compute(
                self._row.key, traj, case,
                _catalog.Options(mode=self._mode_name, dialect=self._mode_dialect,
                                 args_mode=getattr(self, "args_mode", None),
                                 semantic_scorer=getattr(self, "semantic_scorer", None),
                                 judge=getattr(self, "judge", None),
                                 weights=getattr(self, "weights", None),
                                 before_state=meta.get("before_state"),
                                 after_state=meta.get("after_state"),
                                 ignore=getattr(self, "ignore", None),
                                 id_args=getattr(self, "id_args", None),
                                 retry_budget=getattr(self, "retry_budget", None) or 2),
                provided, "give it to the metric's constructor or in test_case.metadata['trajcheck'] "
                "(expected calls: expected_tools)")
        except _catalog.MissingReference as e:
            self.error = str(e)
            raise MissingTestCaseParamsError(str(e)) from e
        except TrajcheckError as e:
            self.error = f"{type(e).__name__}: {e}"
            raise
        self.result = res
        score = res.score
        self._pass_mark = self._case_pass_mark(case)
        ok = _catalog.passed(self._row, res, self._pass_mark)
        if score is not None and self.strict_mode and not ok:
            score = 1.0 if self._row.lower_is_better else 0.0
        self.score = score
        self.reason = res.reason if self.include_reason else None
        self.score_breakdown = dict(res.parts)
        self.skipped = score is None  # DeepEval's convention for a score that does not apply
        # None is DeepEval's "no verdict": the sync runner, which records a skipped metric's
        # row, then neither passes nor fails the test case on it (async records no row)
        self.success = None if ok is None else bool(ok)
        if self.verbose_mode:
            self.verbose_logs = _verbose(res)
        return score

    def _case_pass_mark(self, case: Case) -> float:
        """The pass mark for this test case: ``threshold`` in its ``metadata["trajcheck"]``
        when set (a different pass mark given to the constructor is an error, as for any
        scalar set in both places), else the metric's."""
        if case.threshold is None:
            return float(self.threshold)
        t = float(case.threshold)
        if self._threshold_given and t != float(self.threshold):
            from trajcheck.errors import DatasetError

            how = "strict_mode=True" if self.strict_mode else f"threshold={self.threshold:g}"
            self.error = (f"case {case.id!r}: threshold is {t:g} in test_case.metadata['trajcheck'] and "
                          f"{how} on {type(self).__name__}(...); set it in one place")
            raise DatasetError(self.error)
        return t

    def is_successful(self) -> bool | None:
        """The metric's verdict.

        Returns:
            False on error or when never measured; None when skipped (the core score is None:
            DeepEval's "no verdict", which fails no test case); for a rate
            ``score <= threshold``; else ``score >= threshold``.
        """
        if self.error is not None or self.result is None:
            self.success = False
        elif self.score is None:
            self.success = None
        else:
            self.success = bool(_catalog.passed(self._row, replace(self.result, score=self.score),
                                                self._pass_mark))
        return self.success

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self._display


class TrajcheckMetric(_Common, BaseMetric):  # type: ignore[misc]
    """Any trajcheck metric on a DeepEval ``LLMTestCase`` (see the module doc).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS``. ``threshold``: pass
    mark (default: the row's, 1.0 for most, 0.8 for the composite, 0.0 for rates).
    ``mode``/``dialect`` (or DeepEval's ``should_exact_match``/``should_consider_ordering``):
    for ``trajectory_match``. Case settings: ``expected_calls``, ``optional_calls``,
    ``forbidden_calls``, ``precedence``, ``forbidden_sequences``, ``expected_final_state``,
    ``response_must_include``, ``max_steps``, ``optimal_steps``, ``args_mode``, ``user``,
    ``tools``, ``expected_route``, ``initial_state``, ``faults``; ``match`` (``{tool or "*":
    {arg: spec}}``); ``weights`` (composite), ``ignore`` (final-state volatile columns),
    ``id_args`` (provenance), ``retry_budget`` (recovery); ``semantic_scorer``/``judge``
    (matcher backends); DeepEval's ``strict_mode``, ``async_mode``, ``verbose_mode``,
    ``include_reason``.
    Raises ``MetricInputError`` for an unknown metric or a wrong-typed option here,
    ``DatasetError`` naming the field for a malformed case setting (a list of names given a
    string, say) here too, and at measure time ``MissingTestCaseParamsError`` for a missing reference, ``DatasetError``
    for an unknown/misspelled/wrong-typed setting in the metadata.
    """

    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED]  # type: ignore[assignment]

    def _check(self, test_case: Any) -> None:
        from deepeval.metrics.utils import check_llm_test_case_params

        check_llm_test_case_params(test_case, self._required_params, None, None, self)

    def to_trajcheck(self, test_case: Any) -> tuple[Trajectory, Case]:
        """The ``(Trajectory, Case)`` this metric scores for ``test_case``."""
        return self._convert(test_case)[:2]  # type: ignore[return-value]

    def _convert(self, test_case: Any) -> tuple[Trajectory, Case, frozenset[str], dict[str, Any]]:
        traj = _convert.deepeval_trajectory(test_case)
        exp_tools = getattr(test_case, "expected_tools", None)
        expected = _convert.deepeval_expected(exp_tools)
        case, provided, meta = self._case(test_case, getattr(test_case, "name", None) or "deepeval",
                                          test_case.input, expected, exp_tools is not None)
        return traj, self._typed_expected(case, exp_tools), provided, meta

    def _typed_expected(self, case: Case, exp_tools: Any) -> Case:
        """``case`` with each expected call named by its DeepEval ``type`` when this metric is
        a trajectory match in a dialect that pairs calls of the same tool type only (DeepEval's
        ToolCorrectness since 4.1.9: an expected MCP tool matches an MCP call, never a function
        call of the same name); the expected calls must be ``expected_tools`` themselves (not
        replaced by an ``expected_calls`` setting, whose calls are function tools)."""
        from trajcheck.metrics.trajectory import lookup_mode, typed_name

        if self._row.key != "trajectory_match" or not exp_tools:
            return case
        row = lookup_mode(self._mode_name or "superset", self._mode_dialect)
        if row is None or not row.compares_tool_type or len(exp_tools) != len(case.expected_calls):
            return case
        types = [_convert.call_type(t) for t in exp_tools]
        if [e.name for e in case.expected_calls] != [getattr(t, "name", None) for t in exp_tools]:
            return case
        return replace(case, expected_calls=tuple(replace(e, name=typed_name(e.name, ty))
                                                  for e, ty in zip(case.expected_calls, types)))

    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Score ``test_case``; returns ``self.score`` (the core's score, see the module doc)."""
        self._check(test_case)
        traj, case, provided, meta = self._convert(test_case)
        return self._run(traj, case, provided, meta)  # type: ignore[return-value]

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Same as ``measure`` (deterministic; nothing to await)."""
        return self.measure(test_case, *args, **kwargs)


def _fixed(key: str, doc: str) -> type[TrajcheckMetric]:
    """A ``TrajcheckMetric`` subclass with ``metric`` fixed to ``key``; ``threshold`` may
    still be given first, positionally."""

    class _M(TrajcheckMetric):
        _fixed = key

        def __init__(self, threshold: float | None = None, **kwargs: Any) -> None:
            kwargs.pop("metric", None)  # DeepEval's copy passes every stored __init__ argument
            super().__init__(key, threshold, **kwargs)

    _M.__doc__ = doc
    return _M


ToolCallF1Metric = _fixed("tool_call_f1", "Tool-call F1 (``metrics.calls.tool_call_prf``): maximum "
                          "one-to-one matching; duplicates count, unmatched optional calls and "
                          "retried failures are left out of precision; extra calls lower the score.")
ToolCallF1Metric.__name__ = ToolCallF1Metric.__qualname__ = "ToolCallF1Metric"
TrajectoryMatchMetric = _fixed("trajectory_match", "Trajectory match (1.0/0.0; ``recall``/``f1`` "
                               "graded) in ``mode`` (neutral, or a framework's with ``dialect``, or "
                               "DeepEval's flags): ``metrics.trajectory.trajectory_match``.")
TrajectoryMatchMetric.__name__ = TrajectoryMatchMetric.__qualname__ = "TrajectoryMatchMetric"
ArgumentAccuracyMetric = _fixed("argument_accuracy", "Argument accuracy "
                                "(``metrics.calls.argument_accuracy``), deterministic; skipped when "
                                "no expected tool was called.")
ArgumentAccuracyMetric.__name__ = ArgumentAccuracyMetric.__qualname__ = "ArgumentAccuracyMetric"
SchemaValidityMetric = _fixed("schema_validity", "Schema validity (``metrics.calls.schema_errors``) "
                              "against ``tools`` (constructor or metadata).")
SchemaValidityMetric.__name__ = SchemaValidityMetric.__qualname__ = "SchemaValidityMetric"
OrderingAccuracyMetric = _fixed("ordering_accuracy", "Ordering accuracy over ``precedence`` "
                                "(``metrics.sequences.ordering_accuracy``); skipped when no rule "
                                "applies.")
OrderingAccuracyMetric.__name__ = OrderingAccuracyMetric.__qualname__ = "OrderingAccuracyMetric"
ForbiddenCallsMetric = _fixed("forbidden_calls", "Forbidden calls and sequences "
                              "(``metrics.sequences.check_forbidden_sequences``): 1.0 unless a "
                              "critical rule is violated.")
ForbiddenCallsMetric.__name__ = ForbiddenCallsMetric.__qualname__ = "ForbiddenCallsMetric"
FinalStateMetric = _fixed("final_state", "Final state (``metrics.outcome.check_final_state``) on "
                          "metadata ``before_state``/``after_state`` and ``expected_final_state``.")
FinalStateMetric.__name__ = FinalStateMetric.__qualname__ = "FinalStateMetric"
CompositeMetric = _fixed("composite", "Composite score (``metrics.composite.score_trajectory``); "
                         "default threshold 0.80.")
CompositeMetric.__name__ = CompositeMetric.__qualname__ = "CompositeMetric"


class ConversationalTrajcheckMetric(_Common, BaseConversationalMetric):  # type: ignore[misc]
    """Any trajcheck metric on a DeepEval ``ConversationalTestCase``.

    The run is every assistant ``Turn.tools_called`` in turn order; the expected calls come
    from ``metadata["trajcheck"]["expected_calls"]`` (``[{"name", "args"}...]``;
    ConversationalTestCase has no ``expected_tools``) or the ``expected_calls`` argument.
    Arguments, conventions and errors as for :class:`TrajcheckMetric`.
    """

    _required_test_case_params: list[Any] = [MultiTurnParams.ROLE, MultiTurnParams.CONTENT]

    _display_prefix = "Conversational "


    def to_trajcheck(self, test_case: Any) -> tuple[Trajectory, Case]:
        """The ``(Trajectory, Case)`` this metric scores for a ``ConversationalTestCase``."""
        return self._convert(test_case)[:2]  # type: ignore[return-value]

    def _convert(self, test_case: Any) -> tuple[Trajectory, Case, frozenset[str], dict[str, Any]]:
        traj = _convert.deepeval_conversation_trajectory(test_case)
        first_user = next((t.content for t in test_case.turns if t.role == "user"), "")
        case, provided, meta = self._case(test_case, getattr(test_case, "name", None) or "deepeval",
                                          first_user, (), False)
        return traj, case, provided, meta

    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Score the conversation; returns ``self.score``."""
        from deepeval.metrics.utils import check_conversational_test_case_params

        check_conversational_test_case_params(test_case, self._required_test_case_params, self)
        traj, case, provided, meta = self._convert(test_case)
        return self._run(traj, case, provided, meta)  # type: ignore[return-value]

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Same as ``measure``."""
        return self.measure(test_case, *args, **kwargs)


def test_case_from_trace(trace: Any, *, expected_tools: Sequence[Any] | None = None,
                         name: str | None = None, format: str = "auto",
                         error_pattern: str | None = None, **settings: Any) -> Any:
    """A DeepEval ``LLMTestCase`` from one recorded run in any format ``trajcheck.read.traces.load``
    reads (or a ``Trajectory``).

    ``input`` is the run's first user message, ``actual_output`` its final response,
    ``tools_called`` its calls (``input_parameters`` = the parsed arguments, ``{}`` when they
    did not parse; ``output`` = the result); ``metadata["trajcheck"]`` carries
    ``failed_calls`` (indices of calls whose result failed, read from the source's error flag
    or marked by ``error_pattern``), ``parallel_calls`` (calls issued in one step) and the
    run's recorded database snapshots as ``before_state``/``after_state``, plus the case
    ``settings`` given here (checked like any metadata: unknown keys raise).
    ``expected_tools``: DeepEval ``ToolCall``s, or ``{"name", "args"}`` dicts / names
    (converted); None leaves the field unset. ``name`` defaults to the run's
    ``metadata["case_id"]``. Raises ``TraceFormatError`` when ``trace`` is not exactly one run.
    """
    from deepeval.test_case import LLMTestCase, ToolCall

    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    called = []
    for call, res in traj.pairs():
        called.append(ToolCall(name=call.name, input_parameters=dict(call.args) if call.args else {},
                               output=None if res is None else res.output))
    block: dict[str, Any] = {**_traces.state_settings(traj), **settings}
    failed = _traces.failed_indices(traj)
    if failed:
        block["failed_calls"] = failed
    groups = _traces.parallel_groups(traj)
    if groups:
        block["parallel_calls"] = groups
    _catalog.check_keys(block, _case.SETTING_KEYS, "test_case_from_trace settings")
    exp = None
    if expected_tools is not None:
        exp = [e if isinstance(e, ToolCall) else
               ToolCall(name=e, input_parameters=None) if isinstance(e, str) else
               ToolCall(name=e["name"], input_parameters=e.get("args")) for e in expected_tools]
    cid = name or traj.metadata.get("case_id")
    return LLMTestCase(input=str(traj.user_input or ""), actual_output=traj.final_response or "",
                       tools_called=called, expected_tools=exp,
                       metadata={"trajcheck": block}, name=str(cid) if cid is not None else None)


def suite_figures(test_cases: Sequence[Any], metric: TrajcheckMetric | None = None, *,
                  figures: Sequence[str] = ("pass_hat_k", "pass_at_k", "success_rate",
                                            "routing_macro_f1"),
                  k: int | None = None, confidence: float = 0.95, n_boot: int = 2000,
                  seed: int = 0) -> dict[str, MetricResult]:
    """pass^k, pass@k, the success rate and routing macro-F1 over DeepEval test cases
    (DeepEval has no suite-level metric, so this reads the same test cases you evaluate).

    Runs are grouped into tasks by ``test_case.name`` (give the trials of one task the same
    name); a run succeeds when ``metric`` (default ``TrajcheckMetric("task_success")``)
    passes on it (a missing reference or a skipped score is a failure). Returns
    ``{figure: MetricResult}`` from ``trajcheck.adapters._suite.compute_figures`` (core
    ``metrics.reliability`` and ``metrics.routing``)."""
    from deepeval.errors import MissingTestCaseParamsError

    from . import _suite

    m = metric if metric is not None else TrajcheckMetric("task_success")
    rows: list[tuple[str, Any, Any, MetricResult | None]] = []
    for i, tc in enumerate(test_cases):
        traj, case, provided, meta = m._convert(tc)
        try:
            m._run(traj, case, provided, meta)
            res: MetricResult | None = m.result if m.score is not None else None
            if res is not None:
                res = replace(res, passed=m.is_successful())
        except MissingTestCaseParamsError:  # no reference: never a success
            res = None
        rows.append((str(getattr(tc, "name", None) or i), traj, case, res))
    return _suite.compute_figures(_suite.records_from(rows), figures, k=k, confidence=confidence,
                                  n_boot=n_boot, seed=seed)
