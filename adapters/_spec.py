"""One configured trajcheck metric, shared by the MLflow, Inspect AI and pydantic-evals adapters.

Those hosts all hand a scorer the run (a trajectory in some form) and, per row or sample, a
reference (expected calls and case settings). :class:`MetricSpec` holds what the user gave
the scorer's constructor -- the metric key, the mode and dialect of a trajectory match, case
settings, argument matchers and the options of ``_catalog.Options`` -- checked strictly when
it is built, and :meth:`MetricSpec.score` turns one run plus the row's reference into the
core's ``MetricResult`` through ``_catalog.compute``. Nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trajcheck.errors import MetricInputError, TrajcheckError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _case, _catalog, _convert


@dataclass(frozen=True)
class MetricSpec:
    """A metric as configured on a host scorer (see :func:`make_spec`)."""

    row: _catalog.RowMetric
    key: str
    title: str
    mode: str | None = None
    dialect: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    match: Mapping[str, Any] | None = None
    weights: Mapping[str, float] | None = None
    ignore: Sequence[str] | None = None
    id_args: Sequence[str] | None = None
    retry_budget: int | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, Any, Any], bool] | None = None

    @property
    def threshold(self) -> float:
        """The scorer's pass mark: its ``threshold`` setting, else the row's default (1.0;
        composite 0.8; 0 for the lower-is-better rates)."""
        t = self.settings.get("threshold")
        return float(t) if t is not None else self.row.threshold

    def pass_mark(self, case: Case | None) -> float:
        """The pass mark for one row: the case's ``threshold`` (the row's reference joined
        with the scorer's settings by ``_settings.merge``, so a different value in both is
        already an error), else :attr:`threshold`."""
        if case is not None and case.threshold is not None:
            return float(case.threshold)
        return self.threshold

    def passed(self, res: MetricResult, case: Case | None = None) -> bool | None:
        """The host verdict (``_catalog.passed``) at :meth:`pass_mark` of ``case``: None for a
        skipped (None) score."""
        return _catalog.passed(self.row, res, self.pass_mark(case))

    def case_for(self, traj: Trajectory, reference: Mapping[str, Any] | None, *, case_id: str,
                 case_input: Any = None, expected_given: bool | None = None) -> tuple[Case, frozenset[str]]:
        """The ``Case`` for one run and which reference fields were given (see :meth:`score`)."""
        from . import _settings

        ref = dict(reference or {})
        ref_expected = ref.pop("expected_calls", None)
        if ref_expected is not None:
            ref["expected_calls"] = [e.to_dict() for e in _convert.expected_from_reference(
                ref_expected, where=f"case {case_id!r}: expected_calls")]
        given = expected_given if expected_given is not None else ref_expected is not None
        own = dict(self.settings)
        if self.match:
            own["match"] = self.match
        r = _settings.resolve(case_id, case_input if case_input is not None else traj.user_input, (),
                              [_settings.Layer(f"case {case_id!r} reference", ref),
                               _settings.Layer("the scorer's settings", own, per_case=False)],
                              expected_given=given)
        return r.case, r.provided

    def score(self, traj: Trajectory, reference: Mapping[str, Any] | None, *, case_id: str,
              case_input: Any = None, expected_given: bool | None = None, how: str = "") -> MetricResult:
        """The core result for one run (:meth:`score_case` without the case)."""
        return self.score_case(traj, reference, case_id=case_id, case_input=case_input,
                               expected_given=expected_given, how=how)[1]

    def score_case(self, traj: Trajectory, reference: Mapping[str, Any] | None, *, case_id: str,
                   case_input: Any = None, expected_given: bool | None = None,
                   how: str = "") -> tuple[Case, MetricResult]:
        """The run's ``Case`` and the core result for it (the case gives :meth:`passed` the
        row's pass mark).

        ``reference``: the row's settings (any of ``_case.SETTING_KEYS``, checked strictly:
        an unknown key raises ``DatasetError`` naming the closest), with ``expected_calls``
        as names or ``{"name", "args"}`` dicts; joined with the constructor's settings by
        ``_settings.merge`` (lists joined, a scalar set differently in both an error).
        ``expected_given``: whether the host gave expected calls (default: ``expected_calls``
        is a key of ``reference``; an explicit empty list is the no-tool case).
        ``before_state``/``after_state`` for the final state are read from ``reference``,
        then from the run's recorded snapshots. Raises ``MissingReference`` when the metric's
        reference is missing (``how`` says where the host expects it)."""
        case, provided = self.case_for(traj, reference, case_id=case_id, case_input=case_input,
                                       expected_given=expected_given)
        ref = reference or {}
        meta = traj.metadata or {}
        before = ref.get("before_state", meta.get("state_before"))
        after = ref.get("after_state", meta.get("state_after"))
        o = _catalog.Options(mode=self.mode, dialect=self.dialect, args_mode=self.settings.get("args_mode"),
                             semantic_scorer=self.semantic_scorer, judge=self.judge, weights=self.weights,
                             before_state=before, after_state=after, ignore=self.ignore,
                             id_args=self.id_args,
                             retry_budget=self.retry_budget if self.retry_budget is not None else 2)
        return case, _catalog.compute(self.row.key, traj, case, o, provided, how)


def suite_records(rows: Sequence[tuple[str, Trajectory, Case, MetricResult | None]],
                  spec: MetricSpec) -> list[Any]:
    """``_suite.RunRecord``s for ``(task, run, case, core result or None)``: a run succeeds
    when ``spec.passed`` is True for its result at its case's pass mark (None: missing
    reference, a failure)."""
    from . import _suite

    return _suite.records_from([(t, tr, c, None if r is None else replace(r, passed=spec.passed(r, c)))
                                for t, tr, c, r in rows])


def make_spec(metric: str, where: str, *, key: str | None = None, mode: str | None = None,
              dialect: str | None = None, match: Mapping[str, Mapping[str, Any]] | None = None,
              weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
              id_args: Sequence[str] | None = None, retry_budget: int | None = None,
              semantic_scorer: Callable[[str, str], float] | None = None,
              judge: Callable[[str, Any, Any], bool] | None = None, **settings: Any) -> MetricSpec:
    """Check a scorer's constructor arguments and build its :class:`MetricSpec`.

    ``metric``: a key of ``_catalog.ROW_METRICS`` (or an alias); ``key``: the name the host
    shows (default ``_catalog.default_key``: ``trajcheck_<metric>``, a trajectory match naming
    its mode and dialect); ``mode``/``dialect``: trajectory match only (an unknown mode name
    raises); ``settings``: case fields (``_catalog.CASE_KEYS``). Raises ``MetricInputError``
    naming ``where`` for an unknown metric, setting (with the closest known one), a wrong type
    (options) or a mode given to another metric; ``DatasetError`` naming ``where`` and the
    field for a malformed case setting or list of names (``_case.check_settings``: the
    checks of ``Case.from_dict``, when the scorer is made, not at the first row)."""
    row = _catalog.row_metric(metric, where)
    try:
        _catalog.check_keys(settings, _catalog.CASE_KEYS, f"{where} settings")
    except TrajcheckError as e:
        raise MetricInputError(str(e)) from e
    for k, v in (("key", key), ("mode", mode), ("dialect", dialect), ("match", match),
                 ("weights", weights), ("ignore", ignore), ("id_args", id_args),
                 ("retry_budget", retry_budget), ("args_mode", settings.get("args_mode")),
                 ("threshold", settings.get("threshold"))):
        _catalog.check_option(k, v, where)
    _case.check_settings(settings, where)
    if row.key == "trajectory_match":
        from trajcheck.metrics.trajectory import normalize_mode

        mode = mode or "superset"
        normalize_mode(mode, dialect)  # an unknown mode or dialect name fails here
    elif mode is not None or dialect is not None:
        raise MetricInputError(f"{where}: mode/dialect apply to trajectory_match only")
    settings = {k: v for k, v in settings.items() if v is not None}
    return MetricSpec(row=row, key=key or _catalog.default_key(row.key, mode, dialect),
                      title=_catalog.display_name(row.key, mode, dialect), mode=mode, dialect=dialect,
                      settings=settings, match=match, weights=weights, ignore=ignore, id_args=id_args,
                      retry_budget=retry_budget, semantic_scorer=semantic_scorer, judge=judge)


def reference_block(ref: Any, where: str, host_keys: Sequence[str] = ()) -> dict[str, Any]:
    """The trajcheck settings in a host's reference mapping: its ``"trajcheck"`` block when it
    has one (the host's own keys may sit beside it), else the whole mapping, whose keys must
    be settings or one of ``host_keys`` (the host's own reference names, left out). None is
    ``{}``. Read by ``_settings.read``: unknown keys (also inside expected calls and
    ``match``) raise ``DatasetError`` naming ``where`` and the closest known key."""
    from . import _settings

    if ref is None:
        return {}
    if not isinstance(ref, Mapping):
        from trajcheck.errors import DatasetError

        raise DatasetError(f"{where}: expected a dict of trajcheck settings, got {type(ref).__name__}")
    if "trajcheck" in ref:
        return _settings.read(ref["trajcheck"], f"{where}['trajcheck']")
    out = _settings.read(ref, f"{where} (put other keys beside a 'trajcheck' block)", extra_keys=host_keys)
    return {k: v for k, v in out.items() if k not in host_keys}


def row_settings(traj: Trajectory, expected_calls: Sequence[Any] | None, **settings: Any) -> dict[str, Any]:
    """The reference block for one recorded run: ``expected_calls`` (names, ``{"name",
    "args"}`` dicts or ``ExpectedCall``s; None leaves them out), the case ``settings``, and
    the run's recorded database snapshots as ``before_state``/``after_state``. Checked now
    (an unknown key raises ``DatasetError``)."""
    from . import _traces

    ref: dict[str, Any] = {**_traces.state_settings(traj), **settings}
    if expected_calls is not None:
        ref["expected_calls"] = [e if isinstance(e, (str, Mapping)) else e.to_dict() for e in expected_calls]
    _catalog.check_keys(ref, _case.SETTING_KEYS, "trajcheck settings")
    return ref
