"""trajcheck's metrics as DeepEval 4.3.x metrics (``deepeval.metrics.BaseMetric``).

Use them like any DeepEval metric: in ``evaluate()`` (async or sync), in ``assert_test``
under pytest, or on a span with ``@observe(metrics=[...])``. No LLM and no API key is
involved. Each metric translates the ``LLMTestCase`` into ``(Trajectory, Case)``
(``trajcheck.adapters._convert``), runs one core metric (``trajcheck.adapters._metrics``)
and copies the core result back: ``metric.score`` and ``metric.reason`` are the core's
``score`` and ``reason`` verbatim, ``metric.score_breakdown`` its ``parts``.

Reading the test case:

* ``tools_called`` -> the run's calls (``input_parameters=None`` = called with no
  arguments); ``output`` -> the call's result; ``input``/``actual_output`` -> user input
  and final response.
* ``expected_tools`` -> ``Case.expected_calls``; an expected ``input_parameters=None``
  means "no argument constraint".
* Case settings (``optional_calls``, ``forbidden_calls``, ``precedence``,
  ``forbidden_sequences``, ``expected_final_state``, ``response_must_include``,
  ``max_steps``, ``optimal_steps``, ``args_mode``, ``tools``, ``user``, ``expected_calls``)
  come from ``test_case.metadata`` (or ``metadata["trajcheck"]`` when present) and from the
  metric's constructor, the constructor winning. ``match`` (``{tool or "*": {arg: matcher
  spec}}``) attaches argument matchers. Final-state metrics read ``before_state`` and
  ``after_state`` (``{table: [row, ...]}``) from the metadata.

DeepEval re-creates a metric for every test case in async ``evaluate()`` from the attributes
named like its ``__init__`` parameters; every setting here is such a parameter, stored
under its own name. ``strict_mode=True`` sets the threshold to 1.0 and a score below it to
0.0 (DeepEval's convention); otherwise the score is the core's. A metric whose core score is
None (not applicable) reports ``score=None`` and counts as a success.

Mode names (``TrajectoryMatchMetric``): ``mode`` is a neutral name (``exact``,
``in_order``, ``unordered``, ``superset``, ``subset``) or any framework name with
``dialect=``; DeepEval's own flags are accepted too and mapped through
``trajcheck.metrics.trajectory.normalize_mode(..., "deepeval")``:
``should_exact_match=True`` -> ``exact``; ``should_consider_ordering=True`` ->
``in_order``; both False -> ``recall`` (DeepEval's default scores the fraction of expected
tools found, ignoring extra calls and order; trajcheck's recall uses one-to-one matching).
Each metric's docstring names the core function it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    from deepeval.metrics import BaseConversationalMetric, BaseMetric
    from deepeval.test_case import MultiTurnParams, SingleTurnParams
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trajcheck.adapters.deepeval needs DeepEval 4.3: pip install 'trajcheck[deepeval]'"
    ) from _e

from trajcheck.errors import TrajcheckError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _convert, _metrics

__all__ = [
    "TrajcheckMetric",
    "ToolCallF1Metric",
    "TrajectoryMatchMetric",
    "ArgumentCorrectnessMetric",
    "SchemaValidityMetric",
    "ForbiddenCallsMetric",
    "FinalStateMetric",
    "CompositeMetric",
    "ConversationalTrajcheckMetric",
    "deepeval_mode",
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


class _Common:
    """Shared behaviour of the single-turn and conversational metrics (no DeepEval base)."""

    _kind: str = ""
    _display: str = ""
    threshold: float
    strict_mode: bool
    include_reason: bool
    verbose_mode: bool
    score: float | None
    reason: str | None
    success: bool | None
    error: str | None
    result: MetricResult | None

    def _init_common(self, *, threshold: float, strict_mode: bool, async_mode: bool,
                     verbose_mode: bool, include_reason: bool) -> None:
        self.threshold = 1.0 if strict_mode else threshold
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

    def _settings(self) -> dict[str, Any]:
        keys = _convert.CASE_KEYS
        return {k: getattr(self, k) for k in keys if getattr(self, k, None) is not None}

    def _case(self, test_case: Any, case_id: str, case_input: Any, expected: Any) -> Case:
        meta = _convert.metadata_settings(getattr(test_case, "metadata", None))
        case = _convert.build_case(case_id, case_input, expected, meta, self._settings())
        match = dict(meta.get("match") or {})
        match.update(getattr(self, "match", None) or {})
        from dataclasses import replace

        return replace(case, expected_calls=_convert.apply_match(case.expected_calls, match))

    def _states(self, test_case: Any) -> tuple[Any, Any]:
        meta = _convert.metadata_settings(getattr(test_case, "metadata", None))
        return meta.get("before_state"), meta.get("after_state")

    def _run(self, traj: Trajectory, case: Case, test_case: Any) -> float | None:
        before, after = self._states(test_case)
        if self._kind == "final_state" and (before is None or after is None):
            from trajcheck.errors import DatasetError

            raise DatasetError(f"case {case.id!r}: {self._display} needs metadata['before_state'] "
                               "and metadata['after_state']")
        self.error = None
        try:
            res = _metrics.compute(
                self._kind, traj, case, mode=getattr(self, "_mode_name", None),
                dialect=getattr(self, "_mode_dialect", None),
                args_mode=getattr(self, "args_mode", None),
                semantic_scorer=getattr(self, "semantic_scorer", None),
                judge=getattr(self, "judge", None), weights=getattr(self, "weights", None),
                before_state=before, after_state=after, ignore=getattr(self, "ignore", None))
        except TrajcheckError as e:
            self.error = f"{type(e).__name__}: {e}"
            raise
        self.result = res
        score = res.score
        if score is not None and self.strict_mode and score < self.threshold:
            score = 0.0
        self.score = score
        self.reason = res.reason if self.include_reason else None
        self.score_breakdown = dict(res.parts)
        self.success = True if score is None else score >= self.threshold
        if self.verbose_mode:
            self.verbose_logs = _verbose(res)
        return score

    def is_successful(self) -> bool:
        """False on error; True when the core score is None (not applicable); else
        ``score >= threshold``."""
        if self.error is not None:
            self.success = False
        elif self.score is None:
            self.success = self.result is not None
        else:
            try:
                self.success = self.score >= self.threshold
            except TypeError:
                self.success = False
        return bool(self.success)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self._display


class TrajcheckMetric(_Common, BaseMetric):  # type: ignore[misc]
    """Base of the single-turn metrics: reads an ``LLMTestCase`` (see the module doc).

    Constructor arguments shared by every subclass: ``threshold`` (pass mark in [0, 1]),
    ``optional_calls``/``forbidden_calls`` (tool names), ``forbidden_sequences`` (rule
    dicts), ``precedence`` (``[A, B]`` pairs), ``match`` (``{tool or "*": {arg: spec}}``),
    ``args_mode`` (``exact_keys``/``expected_keys``/``ignore``), ``expected_final_state``,
    ``response_must_include``, ``max_steps``, ``optimal_steps``, ``tools`` (tool
    definitions with JSON Schemas), ``semantic_scorer`` and ``judge`` (matcher backends),
    ``strict_mode``, ``async_mode``, ``verbose_mode``, ``include_reason``.
    Raises ``deepeval.errors.MissingTestCaseParamsError`` when ``tools_called`` (or, for
    metrics that need it, ``expected_tools``) is None, and trajcheck errors for bad settings.
    """

    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED]  # type: ignore[assignment]

    def __init__(self, threshold: float = 0.5, *, optional_calls: Sequence[str] | None = None,
                 forbidden_calls: Sequence[str] | None = None,
                 forbidden_sequences: Sequence[Mapping[str, Any]] | None = None,
                 precedence: Sequence[Sequence[str]] | None = None,
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 args_mode: str | None = None,
                 expected_final_state: Mapping[str, Any] | None = None,
                 response_must_include: Sequence[str] | None = None,
                 max_steps: int | None = None, optimal_steps: int | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None,
                 strict_mode: bool = False, async_mode: bool = True,
                 verbose_mode: bool = False, include_reason: bool = True) -> None:
        self.optional_calls = optional_calls
        self.forbidden_calls = forbidden_calls
        self.forbidden_sequences = forbidden_sequences
        self.precedence = precedence
        self.match = match
        self.args_mode = args_mode
        self.expected_final_state = expected_final_state
        self.response_must_include = response_must_include
        self.max_steps = max_steps
        self.optimal_steps = optimal_steps
        self.tools = tools
        self.semantic_scorer = semantic_scorer
        self.judge = judge
        self._init_common(threshold=threshold, strict_mode=strict_mode, async_mode=async_mode,
                          verbose_mode=verbose_mode, include_reason=include_reason)

    def _check(self, test_case: Any) -> None:
        from deepeval.metrics.utils import check_llm_test_case_params

        check_llm_test_case_params(test_case, self._required_params, None, None, self)

    def to_trajcheck(self, test_case: Any) -> tuple[Trajectory, Case]:
        """The ``(Trajectory, Case)`` this metric scores for ``test_case``."""
        traj = _convert.deepeval_trajectory(test_case)
        expected = _convert.deepeval_expected(getattr(test_case, "expected_tools", None))
        return traj, self._case(test_case, getattr(test_case, "name", None) or "deepeval",
                                test_case.input, expected)

    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Score ``test_case``; returns ``self.score`` (the core's score, see the module doc)."""
        self._check(test_case)
        traj, case = self.to_trajcheck(test_case)
        return self._run(traj, case, test_case)  # type: ignore[return-value]

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Same as ``measure`` (deterministic; nothing to await)."""
        return self.measure(test_case, *args, **kwargs)


class ToolCallF1Metric(TrajcheckMetric):
    """Tool-call F1: ``trajcheck.metrics.calls.tool_call_prf``; ``score`` = F1 in [0, 1].

    Maximum one-to-one matching of ``tools_called`` to ``expected_tools``; duplicates count,
    unmatched optional calls and retried failures are left out of precision (DESIGN.md).
    Unlike DeepEval's ``ToolCorrectnessMetric`` default, extra calls lower the score.
    """

    _kind = "tool_call_f1"
    _display = "Tool Call F1 (trajcheck)"
    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED,
                        SingleTurnParams.EXPECTED_TOOLS]


class TrajectoryMatchMetric(TrajcheckMetric):
    """Trajectory match (1.0 / 0.0): ``trajcheck.metrics.trajectory.trajectory_match``.

    ``mode`` is a neutral mode or, with ``dialect``, a framework's mode name (e.g.
    ``mode="strict", dialect="agentevals"`` -> exact). DeepEval's flags are accepted too:
    ``should_exact_match=True`` -> ``exact``; ``should_consider_ordering=True`` ->
    ``in_order``; both False -> ``recall`` (a graded score, not 1/0); when either flag is
    given it decides the mode and ``mode`` must be left at its default. Neutral meanings: ``exact`` same length, pairwise match; ``in_order``
    expected is a subsequence; ``unordered`` same multiset; ``superset`` every expected
    present, extras allowed; ``subset`` every call expected. Unmatched optional calls are
    ignored in every mode.
    """

    _kind = "trajectory_match"
    _display = "Trajectory Match (trajcheck)"
    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED,
                        SingleTurnParams.EXPECTED_TOOLS]

    def __init__(self, threshold: float = 1.0, *, mode: str = "superset",
                 dialect: str | None = None, should_exact_match: bool | None = None,
                 should_consider_ordering: bool | None = None, **kwargs: Any) -> None:
        super().__init__(threshold, **kwargs)
        self.mode = mode
        self.dialect = dialect
        self.should_exact_match = should_exact_match
        self.should_consider_ordering = should_consider_ordering
        from trajcheck.errors import MetricInputError
        from trajcheck.metrics import trajectory as _t

        if should_exact_match is not None or should_consider_ordering is not None:
            if (mode, dialect) != ("superset", None):
                raise MetricInputError("TrajectoryMatchMetric: give either mode/dialect or "
                                       "DeepEval's should_exact_match/should_consider_ordering, not both")
            self._mode_name = _t.deepeval_mode(should_consider_ordering=bool(should_consider_ordering),
                                               should_exact_match=bool(should_exact_match))
            self._mode_dialect: str | None = "deepeval"
        else:
            self._mode_name, self._mode_dialect = mode, dialect
        _t.normalize_mode(self._mode_name, self._mode_dialect)  # unknown names fail here


class ArgumentCorrectnessMetric(TrajcheckMetric):
    """Argument correctness: ``trajcheck.metrics.calls.argument_accuracy`` (deterministic,
    per-argument matchers; unlike DeepEval's LLM-judged metric of the same name)."""

    _kind = "argument_correctness"
    _display = "Argument Correctness (trajcheck)"
    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED,
                        SingleTurnParams.EXPECTED_TOOLS]


class SchemaValidityMetric(TrajcheckMetric):
    """Schema validity: ``trajcheck.metrics.calls.schema_errors`` against the tool
    definitions in ``tools`` (constructor or metadata)."""

    _kind = "schema_validity"
    _display = "Schema Validity (trajcheck)"


class ForbiddenCallsMetric(TrajcheckMetric):
    """Forbidden calls and sequences: ``trajcheck.metrics.sequences.check_forbidden_sequences``
    over ``forbidden_sequences`` plus a never-allowed rule per ``forbidden_calls`` name.
    Score 1.0 unless a critical rule is violated (warnings are reported, not scored)."""

    _kind = "forbidden"
    _display = "Forbidden Calls (trajcheck)"

    def __init__(self, threshold: float = 1.0, **kwargs: Any) -> None:
        super().__init__(threshold, **kwargs)


class FinalStateMetric(TrajcheckMetric):
    """Final state: ``trajcheck.metrics.outcome.check_final_state`` on
    ``metadata["before_state"]``/``["after_state"]`` and ``expected_final_state``;
    ``ignore`` lists volatile columns (default id, created_at, updated_at)."""

    _kind = "final_state"
    _display = "Final State (trajcheck)"
    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.METADATA]

    def __init__(self, threshold: float = 1.0, *, ignore: Sequence[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(threshold, **kwargs)
        self.ignore = ignore


class CompositeMetric(TrajcheckMetric):
    """Composite score: ``trajcheck.metrics.composite.score_trajectory`` (outcome 0.50,
    selection 0.25, arguments 0.15, efficiency 0.10 by default; ``weights`` overrides; a
    critical forbidden-sequence violation gives 0). The outcome comes from the final state
    when the metadata has ``before_state``/``after_state``. Default threshold 0.80."""

    _kind = "composite"
    _display = "Trajectory Composite (trajcheck)"
    _required_params = [SingleTurnParams.INPUT, SingleTurnParams.TOOLS_CALLED,
                        SingleTurnParams.EXPECTED_TOOLS]

    def __init__(self, threshold: float = 0.8, *, weights: Mapping[str, float] | None = None,
                 ignore: Sequence[str] | None = None, **kwargs: Any) -> None:
        super().__init__(threshold, **kwargs)
        self.weights = weights
        self.ignore = ignore


_DISPLAY = {"tool_call_f1": ToolCallF1Metric._display,
            "trajectory_match": TrajectoryMatchMetric._display,
            "argument_correctness": ArgumentCorrectnessMetric._display,
            "schema_validity": SchemaValidityMetric._display,
            "forbidden": ForbiddenCallsMetric._display, "final_state": FinalStateMetric._display,
            "composite": CompositeMetric._display}


class ConversationalTrajcheckMetric(_Common, BaseConversationalMetric):  # type: ignore[misc]
    """Any trajcheck metric on a DeepEval ``ConversationalTestCase``.

    ``metric`` is the kind (``tool_call_f1``, ``trajectory_match``, ``argument_correctness``,
    ``schema_validity``, ``forbidden``, ``final_state``, ``composite``). The run is every
    assistant ``Turn.tools_called`` in turn order; the expected calls come from
    ``metadata["expected_calls"]`` (``[{"name", "args"}...]``; ConversationalTestCase has no
    ``expected_tools``) or the ``expected_calls`` argument. Other arguments as for
    ``TrajcheckMetric``/``TrajectoryMatchMetric``; the mode rules are the same.
    """

    _required_test_case_params: list[Any] = [MultiTurnParams.ROLE, MultiTurnParams.CONTENT]

    def __init__(self, metric: str = "tool_call_f1", threshold: float = 0.5, *,
                 expected_calls: Sequence[Any] | None = None, mode: str = "superset",
                 dialect: str | None = None, optional_calls: Sequence[str] | None = None,
                 forbidden_calls: Sequence[str] | None = None,
                 forbidden_sequences: Sequence[Mapping[str, Any]] | None = None,
                 precedence: Sequence[Sequence[str]] | None = None,
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 args_mode: str | None = None,
                 expected_final_state: Mapping[str, Any] | None = None,
                 response_must_include: Sequence[str] | None = None,
                 max_steps: int | None = None, optimal_steps: int | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None,
                 weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None,
                 strict_mode: bool = False, async_mode: bool = True,
                 verbose_mode: bool = False, include_reason: bool = True) -> None:
        from trajcheck.errors import MetricInputError
        from trajcheck.metrics.trajectory import normalize_mode

        if metric not in _metrics.KINDS:
            raise MetricInputError(f"unknown trajcheck metric {metric!r} (known: {', '.join(_metrics.KINDS)})")
        self.metric = metric
        self._kind = metric
        self._display = "Conversational " + _DISPLAY[metric]
        self.expected_calls = expected_calls
        self.mode = mode
        self.dialect = dialect
        normalize_mode(mode, dialect)  # unknown names fail here
        self._mode_name, self._mode_dialect = mode, dialect
        self.optional_calls = optional_calls
        self.forbidden_calls = forbidden_calls
        self.forbidden_sequences = forbidden_sequences
        self.precedence = precedence
        self.match = match
        self.args_mode = args_mode
        self.expected_final_state = expected_final_state
        self.response_must_include = response_must_include
        self.max_steps = max_steps
        self.optimal_steps = optimal_steps
        self.tools = tools
        self.weights = weights
        self.ignore = ignore
        self.semantic_scorer = semantic_scorer
        self.judge = judge
        self._init_common(threshold=threshold, strict_mode=strict_mode, async_mode=async_mode,
                          verbose_mode=verbose_mode, include_reason=include_reason)

    def to_trajcheck(self, test_case: Any) -> tuple[Trajectory, Case]:
        """The ``(Trajectory, Case)`` this metric scores for a ``ConversationalTestCase``."""
        traj = _convert.deepeval_conversation_trajectory(test_case)
        first_user = next((t.content for t in test_case.turns if t.role == "user"), "")
        return traj, self._case(test_case, getattr(test_case, "name", None) or "deepeval",
                                first_user, ())

    def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Score the conversation; returns ``self.score``."""
        from deepeval.metrics.utils import check_conversational_test_case_params

        check_conversational_test_case_params(test_case, self._required_test_case_params, self)
        traj, case = self.to_trajcheck(test_case)
        return self._run(traj, case, test_case)  # type: ignore[return-value]

    async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
        """Same as ``measure``."""
        return self.measure(test_case, *args, **kwargs)
