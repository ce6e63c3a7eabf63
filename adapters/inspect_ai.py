"""trajcheck's metrics as Inspect AI scorers, and pass^k / pass@k as epoch reducers.

``trajcheck_scorer(metric=<key>)`` is an Inspect ``@scorer``: it reads the sample's
``TaskState.messages`` (assistant ``tool_calls`` are the calls, a ``tool`` message with an
``error`` a failed result, calls of one assistant message one parallel step -- read by
trajcheck's Inspect AI reader, ``trajcheck.read.traces.inspect_ai.read_sample``) and returns a
``Score`` whose ``value`` is the core's score and ``explanation`` the core's reason, with
``metadata`` ``{"passed": True/False/None, "metric", "route", "expected_route", "parts"}``.
Its metrics are Inspect's ``mean()`` and ``stderr()`` unless ``metrics=`` says otherwise.

The reference rides in the sample's metadata, ``Sample(metadata={"trajcheck": {...}})``:
``expected_calls`` (names or ``{"name", "args"}``), any case setting (``optional_calls``,
``forbidden_calls``, ``precedence``, ``expected_final_state`` with ``before_state``/``after_state``,
``response_must_include``, ``max_steps``, ``tools``, ``match``, ...); unknown keys raise
``DatasetError`` naming the closest known one. Scorer settings win. A metric whose reference is
missing scores ``NaN`` with ``reason="scoring_failed"`` and the message as explanation; a score
that does not apply (error recovery with no failed call) scores ``NaN`` with
``reason="not_applicable"``. NaN is Inspect's "unscored": reducers and metrics skip it; it is
never a pass.

Reducers over epochs (``Epochs(4, [pass_hat_k(2), pass_at_k(2)])``): a trial succeeds when the
epoch's score has ``metadata["passed"] is True`` (the trajcheck verdict at the metric's
threshold; an unscored epoch is a failure). ``pass_hat_k(k)`` = C(c, k) / C(n, k) (tau-bench
pass^k, Yao et al. 2024) and ``pass_at_k(k)`` = 1 - C(n - c, k) / C(n, k) (unbiased pass@k, Chen
et al. 2021), both from ``trajcheck.metrics.reliability``. Fewer than k epochs give no
number: the reduced score is NaN (unscored) with an explanation, as Inspect's own
``pass_k``/``pass_at`` do, and ``trajcheck_epochs(n, k)`` (an ``Epochs`` with both reducers)
raises ``MetricInputError`` for n < k up front.
Inspect's ``mean`` metric over the reduced scores is then the suite figure (mean over tasks).
``success_rate()`` and ``routing_macro_f1()`` are Inspect ``@metric(scores="unreduced")``s:
they count every run (sample x epoch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    from inspect_ai.scorer import (
        Metric,
        SampleScore,
        Score,
        Scorer,
        ScoreReducer,
        Target,
        mean,
        metric,
        score_reducer,
        scorer,
        stderr,
    )
    from inspect_ai.solver import TaskState
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("trajcheck.adapters.inspect_ai needs Inspect AI: pip install 'trajcheck[agent-sdks]'") from _e

from trajcheck.errors import MetricInputError
from trajcheck.model import Trajectory

from . import _catalog, _spec

__all__ = ["trajcheck_scorer", "pass_hat_k", "pass_at_k", "success_rate", "routing_macro_f1",
           "trajectory_of", "sample_metadata", "trajcheck_epochs"]


def trajectory_of(state: TaskState) -> Trajectory:
    """The run in a sample's state: its messages read by trajcheck's Inspect AI reader."""
    from trajcheck.read.traces.inspect_ai import read_sample

    return read_sample({"id": state.sample_id, "epoch": state.epoch,
                        "messages": [m.model_dump() for m in state.messages]})


def sample_metadata(traj: Trajectory | Any, expected_calls: Sequence[Any] | None = None, *,
                    format: str = "auto", error_pattern: str | None = None, **settings: Any) -> dict[str, Any]:
    """``{"trajcheck": {...}}`` for ``Sample(metadata=...)``: ``expected_calls`` and the case
    settings (checked now: an unknown key raises ``DatasetError``), plus the recorded run's
    database snapshots (``before_state``/``after_state``) when ``traj`` is a recorded run."""
    from . import _traces

    t = _traces.one_trajectory(traj, format=format, error_pattern=error_pattern)
    return {"trajcheck": _spec.row_settings(t, expected_calls, **settings)}


def _route(traj: Trajectory, case: Any) -> Any:
    from trajcheck.score.suite import run_route

    return run_route(traj, case)


def trajcheck_scorer(metric: str = "tool_call_f1", *, name: str | None = None, mode: str | None = None,
                     dialect: str | None = None, metrics: Sequence[Any] | None = None,
                     match: Mapping[str, Mapping[str, Any]] | None = None,
                     weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                     id_args: Sequence[str] | None = None, retry_budget: int | None = None,
                     semantic_scorer: Callable[[str, str], float] | None = None,
                     judge: Callable[[str, Any, Any], bool] | None = None, **settings: Any) -> Scorer:
    """One trajcheck metric as an Inspect scorer (see the module doc).

    ``metric``: a key of ``trajcheck.adapters._catalog.ROW_METRICS``; ``name``: the scorer's
    name in the log (default ``_catalog.default_key``: ``trajcheck_<metric>``, a trajectory
    match naming its mode and dialect); ``mode``/``dialect``: trajectory match; ``metrics``:
    Inspect metrics (default ``[mean(), stderr()]``); case settings as keywords; ``match``,
    ``weights``, ``ignore``, ``id_args``, ``retry_budget``, ``semantic_scorer``, ``judge`` as
    in the core. Raises ``MetricInputError`` for an unknown metric or setting, a wrong type or
    an unknown mode name."""
    spec = _spec.make_spec(metric, "trajcheck_scorer", key=name, mode=mode, dialect=dialect, match=match,
                           weights=weights, ignore=ignore, id_args=id_args, retry_budget=retry_budget,
                           semantic_scorer=semantic_scorer, judge=judge, **settings)

    def factory() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            traj = trajectory_of(state)
            md = state.metadata or {}
            ref = _spec.reference_block(md.get("trajcheck"), f"sample {state.sample_id!r} metadata['trajcheck']")
            cid = str(state.sample_id)
            case, _p = spec.case_for(traj, ref, case_id=cid)
            meta: dict[str, Any] = {"metric": spec.row.key, "route": _route(traj, case),
                                    "expected_route": case.expected_route}
            try:
                res = spec.score(traj, ref, case_id=cid,
                                 how="give it in Sample(metadata={'trajcheck': {...}}) or to the scorer")
            except _catalog.MissingReference as e:
                return Score(value=math.nan, explanation=str(e), reason="scoring_failed",
                             metadata={**meta, "passed": None})
            meta.update(passed=spec.passed(res), parts=_plain(res.parts))
            if res.score is None:
                return Score(value=math.nan, explanation=res.reason, reason="not_applicable", metadata=meta)
            return Score(value=float(res.score), explanation=res.reason, metadata=meta)

        return score

    ms = list(metrics) if metrics is not None else [mean(), stderr()]
    return scorer(metrics=ms, name=spec.key)(factory)()  # type: ignore[no-any-return]


def _plain(v: Any) -> Any:
    """Parts as JSON-able values (Inspect writes score metadata to the log)."""
    import json

    return json.loads(json.dumps(v, default=str))


def _trials(scores: list[Score]) -> list[bool]:
    return [bool((s.metadata or {}).get("passed") is True) for s in scores]


def _reduce(kind: str, k: int) -> ScoreReducer:
    from trajcheck.metrics import reliability

    fn = reliability.pass_hat_k if kind == "hat" else reliability.pass_at_k
    sym = "^" if kind == "hat" else "@"

    def reduce(scores: list[Score]) -> Score:
        trials = _trials(scores)
        first = scores[0].metadata or {} if scores else {}
        if len(trials) < k:  # undefined: unscored, never a number (also Inspect's live display
            # reduces the epochs finished so far); trajcheck_epochs refuses n < k up front
            return Score(value=math.nan, reason="scoring_failed",
                         explanation=f"pass{sym}{k} needs at least {k} epochs per sample; this sample has "
                                     f"{len(trials)} (run with epochs >= {k})",
                         metadata={"trials": trials, "k": k})
        v = fn({"task": trials}, k)
        c = sum(trials)
        return Score(value=float(v), explanation=f"pass{sym}{k} = {v:.4g}: {c}/{len(trials)} epochs passed",
                     metadata={"trials": trials, "k": k, "expected_route": first.get("expected_route")})

    return reduce


def _check_k(k: Any, where: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricInputError(f"{where}: k must be an integer >= 1, got {k!r}")


@score_reducer(name="pass_hat_k")
def pass_hat_k(k: int) -> ScoreReducer:
    """pass^k over a sample's epochs: C(c, k) / C(n, k), c = epochs whose trajcheck verdict
    passed, n = epochs (``trajcheck.metrics.reliability.pass_hat_k``; tau-bench, Yao et al.
    2024). Value in [0, 1]; NaN (unscored) with the reason when n < k."""
    _check_k(k, "pass_hat_k")
    return _reduce("hat", k)


@score_reducer(name="pass_at_k")
def pass_at_k(k: int) -> ScoreReducer:
    """pass@k over a sample's epochs: 1 - C(n - c, k) / C(n, k), the unbiased estimator of
    Chen et al. 2021 (``trajcheck.metrics.reliability.pass_at_k``). Value in [0, 1]; NaN
    (unscored) with the reason when n < k."""
    _check_k(k, "pass_at_k")
    return _reduce("at", k)


def trajcheck_epochs(epochs: int, k: int, reducers: Sequence[Any] = ("mean",)) -> Any:
    """``inspect_ai.Epochs(epochs, [*reducers, pass_hat_k(k), pass_at_k(k)])``; raises
    ``MetricInputError`` when ``epochs < k`` (pass^k and pass@k are undefined then)."""
    from inspect_ai import Epochs

    _check_k(k, "trajcheck_epochs")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < k:
        raise MetricInputError(f"trajcheck_epochs: pass^{k} and pass@{k} need epochs >= {k}, got {epochs!r}")
    return Epochs(epochs, [*reducers, pass_hat_k(k), pass_at_k(k)])


@metric(name="success_rate", scores="unreduced")
def success_rate() -> Metric:
    """The share of runs (every sample x epoch: an ``unreduced`` Inspect metric) whose
    trajcheck verdict passed (``metrics.reliability.success_rate``; an unscored run is a
    failure). In [0, 1]."""
    from trajcheck.metrics.reliability import success_rate as core

    def compute(scores: list[SampleScore]) -> float:
        ok = [(s.score.metadata or {}).get("passed") is True for s in scores]
        return float(core(sum(ok), len(ok)).score or 0.0) if ok else math.nan

    return compute


@metric(name="routing_macro_f1", scores="unreduced")
def routing_macro_f1() -> Metric:
    """Routing macro-F1 (``metrics.routing.routing_metrics``) of the taken against the expected
    route over every run (sample x epoch) with an expected route; NaN when no run has one."""
    from trajcheck.metrics.routing import routing_metrics

    def lab(v: Any) -> Any:
        return "+".join(map(str, v)) if isinstance(v, (list, tuple)) else ("(none)" if v is None else v)

    def compute(scores: list[SampleScore]) -> float:
        mds = [s.score.metadata or {} for s in scores]
        pairs = [(lab(md["expected_route"]), lab(md.get("route"))) for md in mds
                 if md.get("expected_route") is not None]
        if not pairs:
            return math.nan
        return float(routing_metrics([e for e, _g in pairs], [g for _e, g in pairs]).macro_f1)

    return compute
