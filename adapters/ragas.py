"""trajcheck's metrics as RAGAS 0.4.x metrics.

Two forms of every metric, with identical numbers:

* **Legacy** (``ragas.metrics.base.MultiTurnMetric`` dataclasses), the only form
  ``ragas.evaluate()`` accepts for an ``EvaluationDataset`` of ``MultiTurnSample``:
  ``TrajcheckToolCallF1``, ``TrajcheckToolCallAccuracy``, ``TrajcheckTrajectoryMatch``,
  ``TrajcheckArgumentCorrectness``, ``TrajcheckForbiddenCalls``, ``TrajcheckSchemaValidity``,
  ``TrajcheckComposite``.
  They read the sample's ``user_input`` (Human/AI/Tool messages; every ``AIMessage.tool_calls``
  in order is the run) and ``reference_tool_calls`` (the expected calls, ``args`` compared
  under ``args_mode``, default ``exact_keys``).
* **Collections** (``ragas.metrics.collections.base.BaseMetric``), for direct use or in
  ``@experiment``: ``metric.as_collections()`` or ``TrajcheckCollectionsMetric(kind, ...)``;
  ``await m.ascore(user_input=..., reference_tool_calls=...)`` returns
  ``MetricResult(value=<core score>, reason=<core reason>)``.

RAGAS strips a sample to the metric's required columns and ``MultiTurnSample`` has no
metadata field, so settings (mode, optional/forbidden calls, matchers, forbidden
sequences, weights) live on the metric instance; case settings that differ per sample
(``optional_calls``, ``forbidden_calls``, ``precedence``, ``forbidden_sequences``,
``max_steps``, ``optimal_steps``, ``args_mode``, ``user``, ``tools``, ``match``,
``expected_calls`` with per-call matchers) may instead ride on the sample's first
``HumanMessage(metadata={"trajcheck": {...}})``, which RAGAS keeps; the instance's
settings win. A failed tool result is ``ToolMessage(metadata={"is_error": True})`` (RAGAS
messages have no error flag), so a failed call that was retried is not counted. Scores are the core's verbatim (no
rounding). A core score of None (not applicable) becomes NaN in the legacy form (RAGAS's
"no score") and ``value=None`` in the collections form; the reason says why.

Mode names (``TrajcheckToolCallAccuracy``, ``TrajcheckTrajectoryMatch(dialect="ragas")``),
mapped through ``trajcheck.metrics.trajectory.normalize_mode(..., "ragas")``:
``strict_order=True`` -> ``exact`` (same calls in the same order, no extras);
``strict_order=False`` -> ``unordered`` (same multiset, any order, no extras). The ordering
flag means what its name says; the score is 1.0/0.0 with arguments matched under
``args_mode`` (RAGAS's own metric gives partial argument credit and pairs unordered calls
by sort-and-zip; see tests/test_differential.py).
"""

from __future__ import annotations

import math
import typing as t
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

try:
    from ragas.metrics.base import MetricType, MultiTurnMetric
    from ragas.metrics.collections.base import BaseMetric as _CollectionsBase
    from ragas.metrics.result import MetricResult as RagasMetricResult
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trajcheck.adapters.ragas needs RAGAS 0.4: pip install 'trajcheck[ragas]'"
    ) from _e

from trajcheck.errors import MetricInputError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _convert, _metrics

__all__ = [
    "TrajcheckRagasMetric",
    "TrajcheckToolCallF1",
    "TrajcheckToolCallAccuracy",
    "TrajcheckTrajectoryMatch",
    "TrajcheckArgumentCorrectness",
    "TrajcheckForbiddenCalls",
    "TrajcheckSchemaValidity",
    "TrajcheckComposite",
    "TrajcheckCollectionsMetric",
    "ragas_mode",
    "to_trajcheck",
]

_SETTINGS = ("optional_calls", "forbidden_calls", "forbidden_sequences", "precedence",
             "args_mode", "max_steps", "optimal_steps", "response_must_include", "tools")


def ragas_mode(strict_order: bool) -> str:
    """The neutral mode for RAGAS ``ToolCallAccuracy(strict_order=...)``, via MATCH's table:
    True -> ``exact``, False -> ``unordered``."""
    from trajcheck.metrics import trajectory as _t

    return _t.normalize_mode(_t.ragas_mode("ToolCallAccuracy", bool(strict_order)), "ragas")


def to_trajcheck(user_input: Sequence[Any], reference_tool_calls: Sequence[Any] | None,
                 settings: Mapping[str, Any], match: Mapping[str, Any] | None,
                 case_id: str = "ragas") -> tuple[Trajectory, Case]:
    """``(Trajectory, Case)`` for a RAGAS sample's ``user_input`` and
    ``reference_tool_calls`` under a metric's settings (``_convert`` conventions).

    Per-sample settings come from the first ``HumanMessage``'s ``metadata["trajcheck"]``
    (``_convert.message_settings``); the metric's own (non-None) settings win over them, and
    its ``match`` entries over the sample's. An ``expected_calls`` list there (dataset-row
    form, with per-call ``match``/``args_mode``) replaces ``reference_tool_calls``.
    """
    traj = _convert.ragas_trajectory(user_input)
    per_sample = _convert.message_settings(user_input)
    merged_match = dict(per_sample.get("match") or {})
    merged_match.update(match or {})
    case = _convert.build_case(case_id, traj.user_input, _convert.ragas_expected(reference_tool_calls),
                               per_sample, settings)
    if not merged_match:  # apply_match would return the same calls
        return traj, case
    from dataclasses import replace

    return traj, replace(case, expected_calls=_convert.apply_match(case.expected_calls, merged_match))


def _compute(kind: str, user_input: Any, reference_tool_calls: Any, opts: Mapping[str, Any]) -> MetricResult:
    settings = {k: v for k in _SETTINGS if (v := opts.get(k)) is not None}  # build_case drops None
    traj, case = to_trajcheck(user_input, reference_tool_calls, settings, opts.get("match"))
    return _metrics.compute(kind, traj, case, mode=opts.get("mode"), dialect=opts.get("dialect"),
                            args_mode=opts.get("args_mode"),
                            semantic_scorer=opts.get("semantic_scorer"), judge=opts.get("judge"),
                            weights=opts.get("weights"))


@dataclass
class TrajcheckRagasMetric(MultiTurnMetric):  # type: ignore[misc]
    """Base of the legacy RAGAS metrics (see the module doc). Fields (all on the instance):
    ``optional_calls``/``forbidden_calls`` (tool names), ``forbidden_sequences`` (rule
    dicts), ``precedence`` (``[A, B]`` pairs), ``match`` (``{tool or "*": {arg: spec}}``),
    ``args_mode``, ``max_steps``, ``optimal_steps``, ``response_must_include``, ``tools``,
    ``weights``, ``semantic_scorer``, ``judge``. ``last_result`` keeps the core result of the
    most recent score (RAGAS's legacy API has no place for a reason)."""

    name: str = "trajcheck_metric"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.MULTI_TURN: {"user_input", "reference_tool_calls"}})
    optional_calls: list[str] | None = None
    forbidden_calls: list[str] | None = None
    forbidden_sequences: list[dict[str, t.Any]] | None = None
    precedence: list[list[str]] | None = None
    match: dict[str, dict[str, t.Any]] | None = None
    args_mode: str | None = None
    max_steps: int | None = None
    optimal_steps: int | None = None
    response_must_include: list[str] | None = None
    tools: list[dict[str, t.Any]] | None = None
    weights: dict[str, float] | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, t.Any, t.Any], bool] | None = None
    last_result: MetricResult | None = field(default=None, repr=False, compare=False)

    _kind: t.ClassVar[str] = ""

    def init(self, run_config: Any) -> None:
        """Nothing to initialise (no model)."""

    def _opts(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in _SETTINGS}
        d.update(match=self.match, weights=self.weights, semantic_scorer=self.semantic_scorer,
                 judge=self.judge)
        d["mode"], d["dialect"] = self._mode()
        return d

    def _mode(self) -> tuple[str | None, str | None]:
        return None, None

    def compute(self, user_input: Any, reference_tool_calls: Any) -> MetricResult:
        """The core ``MetricResult`` for one sample's messages and reference calls."""
        res = _compute(self._kind, user_input, reference_tool_calls, self._opts())
        self.last_result = res
        return res

    async def _multi_turn_ascore(self, sample: Any, callbacks: Any) -> float:
        res = self.compute(sample.user_input, sample.reference_tool_calls)
        return math.nan if res.score is None else float(res.score)

    def as_collections(self) -> TrajcheckCollectionsMetric:
        """The same metric, same settings, in RAGAS's collections form."""
        opts = self._opts()
        mode, dialect = opts.pop("mode"), opts.pop("dialect")
        return TrajcheckCollectionsMetric(self._kind, name=self.name, mode=mode or "superset",
                                          dialect=dialect, **opts)


@dataclass
class TrajcheckToolCallF1(TrajcheckRagasMetric):
    """Tool-call F1 (``metrics.calls.tool_call_prf``): maximum one-to-one matching, so
    duplicate calls count (unlike RAGAS ToolCallF1's sets); unmatched ``optional_calls`` and
    retried failures are not counted. Score in [0, 1], not rounded."""

    name: str = "trajcheck_tool_call_f1"
    _kind: t.ClassVar[str] = "tool_call_f1"


@dataclass
class TrajcheckToolCallAccuracy(TrajcheckRagasMetric):
    """Trajectory accuracy (1.0/0.0) with an ordering flag that means what it says:
    ``strict_order=True`` -> neutral ``exact``; False -> ``unordered``
    (``metrics.trajectory.trajectory_match``)."""

    name: str = "trajcheck_tool_call_accuracy"
    strict_order: bool = True
    _kind: t.ClassVar[str] = "trajectory_match"

    def _mode(self) -> tuple[str | None, str | None]:
        from trajcheck.metrics import trajectory as _t

        return _t.ragas_mode("ToolCallAccuracy", bool(self.strict_order)), "ragas"


@dataclass
class TrajcheckTrajectoryMatch(TrajcheckRagasMetric):
    """Trajectory match in any mode (``metrics.trajectory.trajectory_match``): ``match_mode``
    is a neutral name, or a framework's name with ``dialect`` (e.g.
    ``"ToolCallAccuracy(strict_order=False)"`` with ``dialect="ragas"``, ``"superset"`` with
    ``dialect="agentevals"``). (Not called ``mode``: ``ragas.evaluate()`` renames the result
    column of any metric with a ``mode`` attribute to ``name(mode=...)``.)"""

    name: str = "trajcheck_trajectory_match"
    match_mode: str = "superset"
    dialect: str | None = None
    _kind: t.ClassVar[str] = "trajectory_match"

    def _mode(self) -> tuple[str | None, str | None]:
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(self.match_mode, self.dialect)  # unknown names fail here
        return self.match_mode, self.dialect


@dataclass
class TrajcheckArgumentCorrectness(TrajcheckRagasMetric):
    """Argument correctness (``metrics.calls.argument_accuracy``); NaN when no expected tool
    was called (not applicable)."""

    name: str = "trajcheck_argument_correctness"
    _kind: t.ClassVar[str] = "argument_correctness"


@dataclass
class TrajcheckForbiddenCalls(TrajcheckRagasMetric):
    """Forbidden calls and sequences (``metrics.sequences.check_forbidden_sequences``):
    1.0 unless a critical rule is violated."""

    name: str = "trajcheck_forbidden_calls"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.MULTI_TURN: {"user_input", "reference_tool_calls:optional"}})
    _kind: t.ClassVar[str] = "forbidden"

    def compute(self, user_input: Any, reference_tool_calls: Any) -> MetricResult:
        """As the base, but ``reference_tool_calls`` may be None (not needed)."""
        return super().compute(user_input, reference_tool_calls or [])


@dataclass
class TrajcheckSchemaValidity(TrajcheckRagasMetric):
    """Schema validity (``metrics.calls.schema_errors``): the fraction of calls whose
    arguments validate against their tool's JSON Schema in ``tools`` (OpenAI, Anthropic or
    plain definitions, on the instance or in the sample's per-sample settings). A sample
    with no ``tools`` raises ``DatasetError``. ``reference_tool_calls`` is not needed."""

    name: str = "trajcheck_schema_validity"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.MULTI_TURN: {"user_input", "reference_tool_calls:optional"}})
    _kind: t.ClassVar[str] = "schema_validity"

    def compute(self, user_input: Any, reference_tool_calls: Any) -> MetricResult:
        """As the base, but ``reference_tool_calls`` may be None (not needed)."""
        return super().compute(user_input, reference_tool_calls or [])


@dataclass
class TrajcheckComposite(TrajcheckRagasMetric):
    """Composite score (``metrics.composite.score_trajectory``) without an outcome check
    (RAGAS samples carry no state): selection, arguments and efficiency, renormalised."""

    name: str = "trajcheck_composite"
    _kind: t.ClassVar[str] = "composite"


class TrajcheckCollectionsMetric(_CollectionsBase):  # type: ignore[misc]
    """A trajcheck metric in RAGAS's collections form.

    ``kind``: ``tool_call_f1``, ``trajectory_match``, ``argument_correctness``,
    ``schema_validity``, ``forbidden`` or ``composite``; ``mode``/``dialect`` for
    ``trajectory_match``; other keyword settings as on the legacy classes. ``ascore(user_input, reference_tool_calls)``
    returns ``ragas.metrics.result.MetricResult(value=score, reason=reason)``; ``score``
    is the sync form (not inside a running event loop).
    """

    def __init__(self, kind: str = "tool_call_f1", *, name: str | None = None,
                 mode: str = "superset", dialect: str | None = None, **settings: Any) -> None:
        if kind not in _metrics.KINDS:
            raise MetricInputError(f"unknown trajcheck metric {kind!r} (known: {', '.join(_metrics.KINDS)})")
        unknown = sorted(set(settings) - set(_SETTINGS) - {"match", "weights", "semantic_scorer", "judge"})
        if unknown:
            raise MetricInputError(f"TrajcheckCollectionsMetric: unknown setting {unknown[0]!r}")
        super().__init__(name=name or f"trajcheck_{kind}", allowed_values=(0.0, 1.0))
        self.kind = kind
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(mode, dialect)  # unknown names fail here
        self.opts = dict(settings, mode=mode, dialect=dialect)

    async def ascore(self, user_input: Any = None, reference_tool_calls: Any = None,
                     **kwargs: Any) -> RagasMetricResult:
        """Score one sample; ``value`` and ``reason`` are the core's."""
        if user_input is None:
            raise MetricInputError(f"{self.name}: user_input (a list of RAGAS messages) is required")
        if reference_tool_calls is None and self.kind in ("forbidden", "schema_validity"):
            reference_tool_calls = []
        res = _compute(self.kind, user_input, reference_tool_calls, self.opts)
        return RagasMetricResult(value=res.score, reason=res.reason)

    def score(self, user_input: Any = None, reference_tool_calls: Any = None,
              **kwargs: Any) -> RagasMetricResult:
        """Synchronous ``ascore``."""
        import asyncio

        return asyncio.run(self.ascore(user_input=user_input, reference_tool_calls=reference_tool_calls))
