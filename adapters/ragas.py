"""trajcheck's metrics as RAGAS 0.4.x metrics.

User guide (every settings key, the sample shape, errors): docs/hosts/ragas.md.

Two forms of every metric, with identical numbers:

* **Legacy** (``ragas.metrics.base.MultiTurnMetric`` dataclasses), the only form
  ``ragas.evaluate()`` accepts for an ``EvaluationDataset`` of ``MultiTurnSample``:
  ``TrajcheckRagasMetric(metric=<key>)`` for any row of the metric table
  (``trajcheck.adapters._catalog.ROW_METRICS``), and with the key fixed
  ``TrajcheckToolCallF1``, ``TrajcheckToolCallAccuracy``, ``TrajcheckTrajectoryMatch``,
  ``TrajcheckArgumentAccuracy``, ``TrajcheckOrderingAccuracy``, ``TrajcheckForbiddenCalls``,
  ``TrajcheckSchemaValidity``, ``TrajcheckComposite``. The result column (``name``) is
  ``trajcheck_<metric>``; a trajectory match names its mode and dialect
  (``trajcheck_trajectory_in_order``, ``trajcheck_trajectory_exact_agentevals_strict``).
  They read the sample's ``user_input`` (Human/AI/Tool messages; every ``AIMessage.tool_calls``
  in order is the run) and ``reference_tool_calls`` (the expected calls, ``args`` compared
  under ``args_mode``, default ``expected_keys``).
* **Collections** (``ragas.metrics.collections.base.BaseMetric``), for direct use or in
  ``@experiment``: ``metric.as_collections()`` or ``TrajcheckCollectionsMetric(kind, ...)``;
  ``await m.ascore(user_input=..., reference_tool_calls=...)`` returns
  ``MetricResult(value=<core score>, reason=<core reason>)``.

RAGAS strips a sample to the metric's required columns and ``MultiTurnSample`` has no
metadata field, so settings (mode, optional/forbidden calls, matchers, forbidden
sequences, weights) live on the metric instance; case settings that differ per sample
(``optional_calls``, ``forbidden_calls``, ``precedence``, ``forbidden_sequences``,
``max_steps``, ``optimal_steps``, ``args_mode``, ``user``, ``tools``, ``match``,
``expected_calls`` with per-call matchers, ``before_state``/``after_state`` for the final
state) may instead ride on the sample's first ``HumanMessage(metadata={"trajcheck": {...}})``,
which RAGAS keeps; with the instance's: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error. Every key there is checked: an unknown or
misspelled one raises ``DatasetError`` naming the closest known key. A metric whose reference
is missing (``reference_tool_calls`` None and no ``expected_calls``, no ``precedence`` for
ordering accuracy, ...) raises ``MissingReference``; ``ragas.evaluate`` records that as NaN
(its own convention for a score that could not be computed) unless ``raise_exceptions=True``. A failed tool result is ``ToolMessage(metadata={"is_error": True})`` (RAGAS
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
    from ragas.messages import AIMessage as _AIMessage
    from ragas.messages import HumanMessage as _HumanMessage
    from ragas.messages import ToolCall as _RagasToolCall
    from ragas.messages import ToolMessage as _ToolMessage
    from ragas.metrics.base import MetricType, MultiTurnMetric
    from ragas.metrics.collections.base import BaseMetric as _CollectionsBase
    from ragas.metrics.result import MetricResult as RagasMetricResult
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trajcheck.adapters.ragas needs RAGAS 0.4: pip install 'trajcheck[ragas]'"
    ) from _e

from trajcheck.errors import DatasetError, MetricInputError, TraceFormatError, TrajcheckError
from trajcheck.metrics.prf_dicts import tool_call_figures_dicts, tool_call_prf_dicts
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _case, _catalog, _convert

__all__ = [
    "TrajcheckRagasMetric",
    "TrajcheckToolCallF1",
    "TrajcheckToolCallAccuracy",
    "TrajcheckTrajectoryMatch",
    "TrajcheckArgumentAccuracy",
    "TrajcheckOrderingAccuracy",
    "TrajcheckForbiddenCalls",
    "TrajcheckSchemaValidity",
    "TrajcheckComposite",
    "TrajcheckCollectionsMetric",
    "ragas_mode",
    "to_trajcheck",
    "sample_from_trace",
    "suite_figures",
]

#: Instance settings that are case fields (RAGAS samples carry no metadata of their own).
_SETTINGS = ("optional_calls", "forbidden_calls", "forbidden_sequences", "precedence",
             "args_mode", "max_steps", "optimal_steps", "response_must_include", "tools",
             "expected_final_state", "user", "expected_route", "faults", "read_only_calls",
             "claim_patterns", "negation_patterns")
#: Other instance options (not case fields).
_OPTIONS = ("match", "weights", "ignore", "id_args", "retry_budget", "semantic_scorer", "judge")


def ragas_mode(strict_order: bool) -> str:
    """The neutral mode for RAGAS ``ToolCallAccuracy(strict_order=...)``, via MATCH's table:
    True -> ``exact``, False -> ``unordered``."""
    from trajcheck.metrics import trajectory as _t

    return _t.normalize_mode(_t.ragas_mode("ToolCallAccuracy", bool(strict_order)), "ragas")


def _sample_name(user_input: Sequence[Any] | None) -> str:
    """How messages name a sample: ``sample "<first user message, cut at 60 characters>"``
    (RAGAS hands a metric no row index or id)."""
    for m in user_input or ():
        g = _convert._getter(m)
        if _convert._msg_role(m, g) == "user":
            text = _convert._msg_text(m, g) or ""
            text = " ".join(text.split())
            return f"sample {text[:57] + '...' if len(text) > 60 else text!r}"
    return "sample with no user message"


def _resolve(user_input: Sequence[Any], reference_tool_calls: Sequence[Any] | None,
             settings: Mapping[str, Any], match: Mapping[str, Any] | None,
             case_id: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The case (``_settings.resolve``: the sample's first HumanMessage metadata, then the
    metric's settings) and the sample's own settings."""
    from . import _settings

    cid = case_id or _sample_name(user_input)
    per_sample = _convert.message_settings(user_input)
    own = dict(settings)
    if match:
        own["match"] = match
    r = _settings.resolve(cid, None, _convert.ragas_expected(reference_tool_calls),
                          [_settings.Layer("the sample's HumanMessage metadata", per_sample),
                           _settings.Layer("the metric", _settings.read(own, "the metric"), per_case=False)],
                          expected_given=reference_tool_calls is not None)
    return r, per_sample


def _to_trajcheck(user_input: Sequence[Any], reference_tool_calls: Sequence[Any] | None,
                  settings: Mapping[str, Any], match: Mapping[str, Any] | None,
                  case_id: str | None = None) -> tuple[Trajectory, Case, frozenset[str], dict[str, Any]]:
    traj = _convert.ragas_trajectory(user_input)
    r, _per_sample = _resolve(user_input, reference_tool_calls, settings, match, case_id)
    from dataclasses import replace

    return traj, replace(r.case, input=traj.user_input), r.provided, dict(r.settings)


def to_trajcheck(user_input: Sequence[Any], reference_tool_calls: Sequence[Any] | None,
                 settings: Mapping[str, Any], match: Mapping[str, Any] | None,
                 case_id: str | None = None) -> tuple[Trajectory, Case]:
    """``(Trajectory, Case)`` for a RAGAS sample's ``user_input`` and
    ``reference_tool_calls`` under a metric's settings (``_convert`` conventions).

    Per-sample settings come from the first ``HumanMessage``'s ``metadata["trajcheck"]``
    (``_convert.message_settings``; an unknown or misspelled key raises ``DatasetError``
    naming the closest known key); joined with the metric's own settings by
    ``_settings.merge`` (lists joined, ``match`` per tool and argument, a scalar set
    differently in both a ``DatasetError``). An ``expected_calls`` list there (dataset-row
    form, with per-call ``match``/``args_mode``) replaces ``reference_tool_calls``.
    """
    return _to_trajcheck(user_input, reference_tool_calls, settings, match, case_id)[:2]  # type: ignore[return-value]


#: Metrics that read only the calls: on a run with no failed tool result they are computed
#: from the calls alone (``_convert.messages_calls``), without building the trajectory.
_CALLS_ONLY = frozenset({"tool_call_f1", "tool_call_precision", "tool_call_recall", "f1"})
_HOW = ("give it as reference_tool_calls, on the metric, or in the first HumanMessage's "
        "metadata['trajcheck']")


def _plain_calls(calls: Any) -> list[dict[str, Any]] | None:
    """RAGAS ``ToolCall`` objects as ``{"name", "args"}`` dicts (the args dict itself, not a
    copy), or None unless each is a RAGAS ``ToolCall`` with a non-empty name and dict args."""
    out = []
    for c in calls:
        if type(c) is not _RagasToolCall:
            return None
        name, args = c.name, c.args
        if type(name) is not str or not name or type(args) is not dict:
            return None
        out.append({"name": name, "args": args})
    return out


def _plain_sample(user_input: Any, reference_tool_calls: Any
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """``(calls, expected)`` as plain dicts, read straight from a sample made of RAGAS's own
    message and ``ToolCall`` objects -- or None when the general reader is needed: no
    reference, any message metadata (per-sample settings on a HumanMessage are checked by
    the general reader; a ToolMessage's may flag a failed call), a message of another type,
    or a call that is not a plain RAGAS ``ToolCall``. Same calls, in the same order, as
    ``_convert.messages_calls`` reads from such a sample."""
    if type(user_input) is not list or type(reference_tool_calls) is not list:
        return None
    calls: list[dict[str, Any]] = []
    for m in user_input:
        tm = type(m)
        if tm is _AIMessage:
            if m.tool_calls:
                got = _plain_calls(m.tool_calls)
                if got is None:
                    return None
                calls += got
        elif tm is not _HumanMessage and tm is not _ToolMessage:
            return None
        if m.metadata:
            return None
    expected = _plain_calls(reference_tool_calls)
    return None if expected is None else (calls, expected)


def _prepare(opts: Mapping[str, Any]) -> tuple[dict[str, Any], _catalog.Options]:
    """A metric's case settings (None values dropped: ``build_case`` skips them) and its
    ``Options``; computed once per metric instance (``TrajcheckRagasMetric.compute``)."""
    settings = {k: v for k in _SETTINGS if (v := opts.get(k)) is not None}
    o = _catalog.Options(mode=opts.get("mode"), dialect=opts.get("dialect"),
                         args_mode=opts.get("args_mode"), semantic_scorer=opts.get("semantic_scorer"),
                         judge=opts.get("judge"), weights=opts.get("weights"), ignore=opts.get("ignore"),
                         id_args=opts.get("id_args"), retry_budget=opts.get("retry_budget") or 2)
    return settings, o


_FIGURE = {"tool_call_precision": 0, "tool_call_recall": 1, "tool_call_f1": 2}


def _figure_only(kind: str, user_input: Any, reference_tool_calls: Any, opts: Mapping[str, Any],
                 prepared: tuple[dict[str, Any], _catalog.Options]) -> float | None:
    """The score alone of a tool-call P/R/F1 row on a plain RAGAS sample
    (``tool_call_figures_dicts``: no reason or parts built), or None when the sample or the
    settings need ``_compute``. The same figure as ``_compute(...).score``."""
    settings, o = prepared
    if (kind not in _CALLS_ONLY or opts.get("match") or o.semantic_scorer is not None
            or o.judge is not None):
        return None
    plain = _plain_sample(user_input, reference_tool_calls)
    if plain is None:
        return None
    figs = tool_call_figures_dicts(plain[0], plain[1], optional_calls=settings.get("optional_calls") or (),
                                   args_mode=o.args_mode)
    return None if figs is None else figs[_FIGURE[_catalog.row_metric(kind).key]]


def _compute(kind: str, user_input: Any, reference_tool_calls: Any, opts: Mapping[str, Any],
             prepared: tuple[dict[str, Any], _catalog.Options] | None = None,
             arg_note: bool = True) -> MetricResult:
    try:
        return _compute_sample(kind, user_input, reference_tool_calls, opts, prepared, arg_note)
    except (DatasetError, TraceFormatError) as e:
        # RAGAS hands a metric no row index or id: the error names the sample by its input
        name = _sample_name(user_input)
        if name in str(e):
            raise
        raise type(e)(f"{name}: {e}") from e


def _compute_sample(kind: str, user_input: Any, reference_tool_calls: Any, opts: Mapping[str, Any],
                    prepared: tuple[dict[str, Any], _catalog.Options] | None,
                    arg_note: bool) -> MetricResult:
    settings, o = prepared if prepared is not None else _prepare(opts)
    match = opts.get("match")
    if kind in _CALLS_ONLY and not match and o.semantic_scorer is None and o.judge is None:
        plain = _plain_sample(user_input, reference_tool_calls)
        if plain is not None:  # RAGAS's own objects, nothing per sample: score the dicts
            return _catalog.prf_row(kind, tool_call_prf_dicts(plain[0], plain[1],
                                                              optional_calls=settings.get("optional_calls") or (),
                                                              args_mode=o.args_mode, arg_note=arg_note))
    if kind in _CALLS_ONLY and not match:
        fast = _convert.messages_calls(user_input)
        if fast is not None:
            calls, text = fast
            r, per_sample = _resolve(user_input, reference_tool_calls, settings, None)
            if not r.settings.get("match"):
                from dataclasses import replace

                return _catalog.compute(kind, list(calls), replace(r.case, input=text), o,  # type: ignore[arg-type]
                                        r.provided, _HOW)
    traj, case, provided, merged = _to_trajcheck(user_input, reference_tool_calls, settings, match)
    if merged.get("before_state") is not None or merged.get("after_state") is not None:
        from dataclasses import replace

        o = replace(o, before_state=merged.get("before_state"), after_state=merged.get("after_state"))
    return _catalog.compute(kind, traj, case, o, provided, _HOW)


def _check_opts(obj: Any, where: str) -> None:
    for k in _OPTIONS + ("args_mode",):
        _catalog.check_option(k, getattr(obj, k, None), where)


@dataclass
class TrajcheckRagasMetric(MultiTurnMetric):  # type: ignore[misc]
    """Any trajcheck metric as a legacy RAGAS metric (see the module doc).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS`` (the named subclasses
    fix it); ``name`` (the result column) defaults to ``trajcheck_<metric>``
    (``_catalog.default_key``; a trajectory match names its mode and dialect).
    ``match_mode``/``dialect``: for ``trajectory_match``. Fields (all on the instance):
    ``optional_calls``/``forbidden_calls`` (tool names), ``forbidden_sequences`` (rule
    dicts), ``precedence`` (``[A, B]`` pairs), ``match`` (``{tool or "*": {arg: spec}}``),
    ``args_mode``, ``max_steps``, ``optimal_steps``, ``response_must_include``, ``tools``,
    ``expected_final_state``, ``user``, ``expected_route``, ``faults``, ``weights``,
    ``ignore``, ``id_args``, ``retry_budget``, ``semantic_scorer``, ``judge``.
    ``last_result`` keeps the core result of the most recent score (RAGAS's legacy API has
    no place for a reason). A missing reference raises ``MissingReference`` (``ragas.evaluate``
    records NaN for it unless ``raise_exceptions=True``); a core score of None is NaN.
    """

    name: str = ""
    metric: str = "tool_call_f1"
    match_mode: str | None = None
    dialect: str | None = None
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.MULTI_TURN: {"user_input", "reference_tool_calls:optional"}})
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
    expected_final_state: dict[str, t.Any] | None = None
    user: dict[str, t.Any] | None = None
    expected_route: t.Any = None
    faults: list[dict[str, t.Any]] | None = None
    read_only_calls: list[str] | None = None
    claim_patterns: list[str] | None = None
    negation_patterns: list[str] | None = None
    weights: dict[str, float] | None = None
    ignore: list[str] | None = None
    id_args: list[str] | None = None
    retry_budget: int | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, t.Any, t.Any], bool] | None = None

    _kind: t.ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # the dataclass __init__ would raise a bare TypeError for a misspelled keyword
        from dataclasses import fields

        init = {f.name for f in fields(cls) if f.init}
        unknown = {k: v for k, v in kwargs.items() if k not in init}
        if unknown:  # named against the public fields (``_required_columns`` is RAGAS's)
            try:
                _catalog.check_keys(unknown, sorted(n for n in init if not n.startswith("_")),
                                    f"{cls.__name__} settings")
            except TrajcheckError as e:
                raise MetricInputError(str(e)) from e
        return super().__new__(cls)

    def __post_init__(self) -> None:
        where = type(self).__name__
        if self._kind:
            if self.metric not in ("tool_call_f1", self._kind):
                raise MetricInputError(f"{where} is metric {self._kind!r}, not {self.metric!r}")
            self.metric = self._kind
        _catalog.row_metric(self.metric, where)
        _check_opts(self, where)
        _case.check_settings({k: getattr(self, k) for k in _SETTINGS}, where)
        mode, dialect = self._mode()
        if (mode is not None or dialect is not None) and _catalog.row_metric(self.metric).key != "trajectory_match":
            raise MetricInputError(f"{where}: match_mode/dialect apply to trajectory_match only")
        if not self.name:
            self.name = _catalog.default_key(self.metric, mode, dialect)
        super().__post_init__()
        # RAGAS scans vars(metric) on every row (utils.get_metric_language looks for prompts):
        # settings left unset are read from their class default (None) instead
        for k in _SETTINGS + _OPTIONS:
            if self.__dict__.get(k, 0) is None:
                del self.__dict__[k]

    def init(self, run_config: Any) -> None:
        """Nothing to initialise (no model)."""

    def _opts(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in _SETTINGS + _OPTIONS}
        d["mode"], d["dialect"] = self._mode()
        return d

    def _mode(self) -> tuple[str | None, str | None]:
        if self.match_mode is None and self.dialect is None:
            return None, None
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(self.match_mode or "superset", self.dialect)  # unknown names fail here
        return self.match_mode or "superset", self.dialect

    def __setattr__(self, name: str, value: Any) -> None:
        # any change of a setting drops the prepared settings (``compute`` rebuilds them)
        if name != "last_result":
            self.__dict__.pop("_prepared", None)
        object.__setattr__(self, name, value)

    @property
    def last_result(self) -> MetricResult | None:
        """The core ``MetricResult`` of the most recent score (None before the first)."""
        pending = self.__dict__.pop("_pending", None)
        if pending is not None:  # scored inside ragas.evaluate: build the full result now
            ui, ref, prep = pending
            self.__dict__["_last"] = _compute(self.metric, ui, ref, prep[0], prep[1])
        return self.__dict__.get("_last")

    @last_result.setter
    def last_result(self, value: MetricResult | None) -> None:
        self.__dict__.pop("_pending", None)
        self.__dict__["_last"] = value

    def _prep(self) -> tuple[dict[str, Any], tuple[dict[str, Any], _catalog.Options]]:
        prep = self.__dict__.get("_prepared")
        if prep is None:
            opts = self._opts()
            prep = self.__dict__["_prepared"] = (opts, _prepare(opts))
        return prep  # type: ignore[no-any-return]

    def compute(self, user_input: Any, reference_tool_calls: Any) -> MetricResult:
        """The core ``MetricResult`` for one sample's messages and reference calls."""
        prep = self._prep()
        res = _compute(self.metric, user_input, reference_tool_calls, prep[0], prep[1])
        self.last_result = res
        return res

    async def _multi_turn_ascore(self, sample: Any, callbacks: Any) -> float:
        prep = self._prep()
        ui, ref = sample.user_input, sample.reference_tool_calls
        if self.metric in _CALLS_ONLY:
            # RAGAS keeps only the score: the figures alone are computed here (no reason or
            # parts); last_result builds the full result if and when it is read
            fig = _figure_only(self.metric, ui, ref, prep[0], prep[1])
            if fig is None:
                score = _compute(self.metric, ui, ref, prep[0], prep[1], arg_note=False).score
                fig = math.nan if score is None else float(score)
            self.__dict__["_pending"] = (ui, ref, prep)  # set only once this sample scored
            return fig
        res = _compute(self.metric, ui, ref, prep[0], prep[1])
        self.last_result = res
        return math.nan if res.score is None else float(res.score)

    def as_collections(self) -> TrajcheckCollectionsMetric:
        """The same metric, same settings, in RAGAS's collections form."""
        opts = self._opts()
        mode, dialect = opts.pop("mode"), opts.pop("dialect")
        opts = {k: v for k, v in opts.items() if v is not None}
        return TrajcheckCollectionsMetric(self.metric, name=self.name, mode=mode or "superset",
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
    (``metrics.trajectory.trajectory_match``). Column ``trajcheck_tool_call_accuracy_exact``
    or ``..._unordered``."""

    strict_order: bool = True
    _kind: t.ClassVar[str] = "trajectory_match"

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"trajcheck_tool_call_accuracy_{ragas_mode(self.strict_order)}"
        super().__post_init__()

    def _mode(self) -> tuple[str | None, str | None]:
        from trajcheck.metrics import trajectory as _t

        return _t.ragas_mode("ToolCallAccuracy", bool(self.strict_order)), "ragas"


@dataclass
class TrajcheckTrajectoryMatch(TrajcheckRagasMetric):
    """Trajectory match in any mode (``metrics.trajectory.trajectory_match``): ``match_mode``
    is a neutral name, or a framework's name with ``dialect`` (e.g.
    ``"ToolCallAccuracy(strict_order=False)"`` with ``dialect="ragas"``, ``"superset"`` with
    ``dialect="agentevals"``). (Not called ``mode``: ``ragas.evaluate()`` renames the result
    column of any metric with a ``mode`` attribute to ``name(mode=...)``.) The column name
    carries the mode (``trajcheck_trajectory_in_order``)."""

    _kind: t.ClassVar[str] = "trajectory_match"

    def _mode(self) -> tuple[str | None, str | None]:
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(self.match_mode or "superset", self.dialect)  # unknown names fail here
        return self.match_mode or "superset", self.dialect


@dataclass
class TrajcheckArgumentAccuracy(TrajcheckRagasMetric):
    """Argument accuracy (``metrics.calls.argument_accuracy``); NaN when no expected tool
    was called (not applicable)."""

    name: str = "trajcheck_argument_accuracy"
    _kind: t.ClassVar[str] = "argument_accuracy"


@dataclass
class TrajcheckOrderingAccuracy(TrajcheckRagasMetric):
    """Ordering accuracy over ``precedence`` (``metrics.sequences.ordering_accuracy``); NaN
    when no rule applies."""

    name: str = "trajcheck_ordering_accuracy"
    _kind: t.ClassVar[str] = "ordering_accuracy"


@dataclass
class TrajcheckForbiddenCalls(TrajcheckRagasMetric):
    """Forbidden calls and sequences (``metrics.sequences.check_forbidden_sequences``):
    1.0 unless a critical rule is violated."""

    name: str = "trajcheck_forbidden_calls"
    _kind: t.ClassVar[str] = "forbidden_calls"


@dataclass
class TrajcheckSchemaValidity(TrajcheckRagasMetric):
    """Schema validity (``metrics.calls.schema_errors``): the fraction of calls whose
    arguments validate against their tool's JSON Schema in ``tools`` (OpenAI, Anthropic or
    plain definitions, on the instance or in the sample's per-sample settings). A sample
    with no ``tools`` raises ``MissingReference``. ``reference_tool_calls`` is not needed."""

    name: str = "trajcheck_schema_validity"
    _kind: t.ClassVar[str] = "schema_validity"


@dataclass
class TrajcheckComposite(TrajcheckRagasMetric):
    """Composite score (``metrics.composite.score_trajectory``); the outcome comes from the
    calls, or from ``before_state``/``after_state`` in the sample's per-sample settings."""

    name: str = "trajcheck_composite"
    _kind: t.ClassVar[str] = "composite"


class TrajcheckCollectionsMetric(_CollectionsBase):  # type: ignore[misc]
    """A trajcheck metric in RAGAS's collections form.

    ``kind``: a key of ``trajcheck.adapters._catalog.ROW_METRICS``; ``mode``/``dialect`` for
    ``trajectory_match``; other keyword settings as on the legacy classes (an unknown one
    raises ``MetricInputError`` naming the closest). ``ascore(user_input, reference_tool_calls)``
    returns ``ragas.metrics.result.MetricResult(value=score, reason=reason)``; ``score``
    is the sync form (not inside a running event loop).
    """

    def __init__(self, kind: str = "tool_call_f1", *, name: str | None = None,
                 mode: str = "superset", dialect: str | None = None, **settings: Any) -> None:
        where = "TrajcheckCollectionsMetric"
        row = _catalog.row_metric(kind, where)
        try:
            _catalog.check_keys(settings, _SETTINGS + _OPTIONS, where)
        except TrajcheckError as e:
            raise MetricInputError(str(e)) from e
        for k, v in settings.items():
            _catalog.check_option(k, v, where)
        _case.check_settings({k: v for k, v in settings.items() if k in _SETTINGS}, where)
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(mode, dialect)  # unknown names fail here
        is_traj = row.key == "trajectory_match"
        super().__init__(name=name or _catalog.default_key(kind, mode if is_traj else None,
                                                           dialect if is_traj else None),
                         allowed_values=(0.0, 1.0))
        self.kind = kind
        self.opts = dict(settings, mode=mode, dialect=dialect)

    async def ascore(self, user_input: Any = None, reference_tool_calls: Any = None,
                     **kwargs: Any) -> RagasMetricResult:
        """Score one sample; ``value`` and ``reason`` are the core's."""
        if user_input is None:
            raise MetricInputError(f"{self.name}: user_input (a list of RAGAS messages) is required")
        res = _compute(self.kind, user_input, reference_tool_calls, self.opts)
        return RagasMetricResult(value=res.score, reason=res.reason)

    def score(self, user_input: Any = None, reference_tool_calls: Any = None,
              **kwargs: Any) -> RagasMetricResult:
        """Synchronous ``ascore``."""
        import asyncio

        return asyncio.run(self.ascore(user_input=user_input, reference_tool_calls=reference_tool_calls))


def sample_from_trace(trace: Any, *, reference_tool_calls: Sequence[Any] | None = None,
                      format: str = "auto", error_pattern: str | None = None,
                      **settings: Any) -> Any:
    """A RAGAS ``MultiTurnSample`` from one recorded run in any format
    ``trajcheck.read.traces.load`` reads (or a ``Trajectory``).

    ``user_input``: the first user message as a ``HumanMessage`` carrying
    ``metadata={"trajcheck": settings}`` (plus the run's recorded database snapshots as
    ``before_state``/``after_state``) (checked like any per-sample block: unknown keys
    raise), each call step as one ``AIMessage`` (calls of one parallel step stay in one
    message), each result as a ``ToolMessage`` (text; a failed result -- from the source's
    error flag or ``error_pattern`` -- has ``metadata={"is_error": True}``), and the final
    response as an ``AIMessage``. ``reference_tool_calls``: RAGAS ``ToolCall``s or ``{"name",
    "args"}`` dicts / names. Raises ``TraceFormatError`` unless ``trace`` is one run."""
    import json

    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    from trajcheck.match.matching import is_failed

    from . import _traces

    traj = _traces.one_trajectory(trace, format=format, error_pattern=error_pattern)
    settings = {**_traces.state_settings(traj), **settings}
    _catalog.check_keys(settings, _case.SETTING_KEYS, "sample_from_trace settings")
    msgs: list[Any] = []
    first_user = True
    for s in traj.steps:
        if s.kind == "user" and first_user:
            msgs.append(HumanMessage(content=str(s.content or ""),
                                     metadata={"trajcheck": dict(settings)} if settings else None))
            first_user = False
        elif s.kind == "user":
            msgs.append(HumanMessage(content=str(s.content or "")))
        elif s.tool_calls:
            msgs.append(AIMessage(content=str(s.content or ""),
                                  tool_calls=[ToolCall(name=c.name, args=dict(c.args or {}))
                                              for c in s.tool_calls]))
        elif s.tool_result is not None:
            out = s.tool_result.output
            text = out if isinstance(out, str) else json.dumps(out, default=str)
            msgs.append(ToolMessage(content=text, metadata={"is_error": True}
                                    if is_failed(s.tool_result) else None))
        elif s.kind in ("final_response", "assistant") and s.content:
            msgs.append(AIMessage(content=str(s.content)))
    if first_user:  # no user message recorded: the settings still need a carrier
        msgs.insert(0, HumanMessage(content="", metadata={"trajcheck": dict(settings)} if settings else None))
    ref = None
    if reference_tool_calls is not None:
        ref = [r if isinstance(r, ToolCall) else
               ToolCall(name=r, args={}) if isinstance(r, str) else
               ToolCall(name=r["name"], args=dict(r.get("args") or {})) for r in reference_tool_calls]
    return MultiTurnSample(user_input=msgs, reference_tool_calls=ref)


def suite_figures(samples: Sequence[Any], metric: TrajcheckRagasMetric | None = None, *,
                  tasks: Sequence[str] | None = None,
                  figures: Sequence[str] = ("pass_hat_k", "pass_at_k", "success_rate",
                                            "routing_macro_f1"),
                  k: int | None = None, confidence: float = 0.95, n_boot: int = 2000,
                  seed: int = 0) -> dict[str, MetricResult]:
    """pass^k, pass@k, the success rate and routing macro-F1 over RAGAS samples (RAGAS has no
    suite-level metric; this reads the samples you evaluate). ``tasks[i]`` names the task of
    sample i (default: each sample its own task); a run succeeds when ``metric`` (default
    ``TrajcheckRagasMetric(metric="task_success")``) has ``passed`` True (a missing
    reference is a failure). Returns ``{figure: MetricResult}``
    (``trajcheck.adapters._suite.compute_figures``)."""
    from . import _suite

    m = metric if metric is not None else TrajcheckRagasMetric(metric="task_success")
    if tasks is not None and len(tasks) != len(samples):
        raise MetricInputError(f"suite_figures: {len(tasks)} task names for {len(samples)} samples")
    rows: list[tuple[str, Any, Any, MetricResult | None]] = []
    for i, s in enumerate(samples):
        traj, case, _p, _ps = _to_trajcheck(s.user_input, s.reference_tool_calls,
                                            {k_: v for k_ in _SETTINGS if (v := getattr(m, k_)) is not None},
                                            m.match)
        try:
            res: MetricResult | None = m.compute(s.user_input, s.reference_tool_calls)
        except _catalog.MissingReference:
            res = None
        rows.append((str(tasks[i]) if tasks is not None else str(i), traj, case, res))
    return _suite.compute_figures(_suite.records_from(rows), figures, k=k, confidence=confidence,
                                  n_boot=n_boot, seed=seed)
