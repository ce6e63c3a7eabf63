"""trajcheck's metrics as Inspect AI scorers, and pass^k / pass@k as epoch reducers.

User guide (every settings key, the sample shape, errors): docs/hosts/inspect_ai.md.

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
``DatasetError`` naming the closest known one. Scorer and sample settings: lists (forbidden, optional, read-only calls, ...) are joined, a setting given in both with different values is an error. A metric whose reference is
missing scores ``NaN`` with ``reason="scoring_failed"`` and the message as explanation; a score
that does not apply (error recovery with no failed call) scores ``NaN`` with
``reason="not_applicable"``. NaN is Inspect's "unscored": reducers and metrics skip it; it is
never a pass.

Reducers over epochs (``Epochs(4, [pass_hat_k(2), pass_at_k(2)])``) work on any scorer's
values, as Inspect's own ``pass_k``/``pass_at`` do: an epoch of a ``trajcheck_scorer`` passes on
trajcheck's verdict (``metadata["passed"]``: a rate at or below its threshold, a composite at or
above its own), an epoch of another scorer when ``value_to_float(value) >= value`` (Inspect's
defaults: "C" is 1, ``value=1.0``); unscored epochs (NaN: not applicable, scoring failed) are
left out of n, exactly as Inspect's reducers leave them out; dict and list values are reduced
key by key. ``pass_hat_k(k)`` = C(c, k) / C(n, k) (tau-bench pass^k, Yao et al. 2024) and
``pass_at_k(k)`` = 1 - C(n - c, k) / C(n, k) (unbiased pass@k, Chen et al. 2021), both from
``trajcheck.metrics.reliability``. Fewer than k scored epochs give no number: the reduced score
is NaN (unscored) with an explanation, as Inspect's own ``pass_k``/``pass_at`` do, and
``trajcheck_epochs(n, k)`` (an ``Epochs`` with both reducers) raises ``MetricInputError`` for
n < k up front.
Inspect's ``mean`` metric over the reduced scores is then the suite figure (mean over tasks).
``success_rate()`` and ``routing_macro_f1()`` are Inspect ``@metric(scores="unreduced")``s:
they count every run (sample x epoch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

try:
    from inspect_ai.scorer import (
        Metric,
        SampleScore,
        Score,
        Scorer,
        ScoreReducer,
        Target,
        ValueToFloat,
        mean,
        metric,
        score_reducer,
        scorer,
        stderr,
    )
    from inspect_ai.scorer import value_to_float as inspect_value_to_float
    from inspect_ai.solver import TaskState
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("trajcheck.adapters.inspect_ai needs Inspect AI: pip install 'trajcheck[agent-sdks]'") from _e

from trajcheck.errors import MetricInputError
from trajcheck.model import Trajectory

from . import _catalog, _settings, _spec

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
            ref = _settings.namespaced(md, f"sample {state.sample_id!r} metadata")
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
            meta.update(passed=spec.passed(res, case), parts=_plain(res.parts))
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


def _unscored(v: Any) -> bool:
    """Inspect's unscored sentinel: a NaN value (at the root, or of one key or index)."""
    return isinstance(v, float) and math.isnan(v)


def _own_verdict(s: Score) -> bool | None:
    """trajcheck's verdict on one epoch when ``s`` came from a ``trajcheck_scorer`` (its
    metadata names the metric and holds ``passed``), else None."""
    md = s.metadata or {}
    passed = md.get("passed")
    return passed if isinstance(passed, bool) and isinstance(md.get("metric"), str) else None


def _trials_of(values: Sequence[Any], verdicts: Sequence[bool | None], value: float,
               to_float: Callable[[Any], float]) -> list[bool]:
    """One trial per scored epoch: trajcheck's own verdict where the epoch has one (a rate
    passes at or below its threshold, a composite at or above its own), else
    ``to_float(v) >= value`` as Inspect's ``pass_k``; unscored epochs (NaN) are left out."""
    out: list[bool] = []
    for v, own in zip(values, verdicts):
        if _unscored(v):
            continue
        if own is not None:
            out.append(own)
            continue
        f = to_float(v)
        if not _unscored(f):
            out.append(f >= value)
    return out


def _reduce(kind: str, k: int, value: float, to_float: Callable[[Any], float]) -> ScoreReducer:
    from trajcheck.metrics import reliability

    fn = reliability.pass_hat_k if kind == "hat" else reliability.pass_at_k
    sym = "^" if kind == "hat" else "@"

    def figure(trials: list[bool]) -> float:
        # fewer than k scored epochs: undefined, unscored (Inspect's pass_k/pass_at do the same)
        return math.nan if len(trials) < k else float(fn({"task": trials}, k))

    def reduce(scores: list[Score]) -> Score:
        scored = [s for s in scores if not _unscored(s.value)]
        first = scored[0] if scored else None
        if first is not None and isinstance(first.value, (dict, list)):
            # key by key (index by index), as Inspect's reducers treat dict and list values
            same = [s for s in scored if type(s.value) is type(first.value)]
            keys = list(first.value) if isinstance(first.value, dict) else range(len(first.value))
            out = {kk: figure(_trials_of([cast(Any, s.value)[kk] for s in same], [None] * len(same), value, to_float))
                   for kk in keys}
            red: Any = out if isinstance(first.value, dict) else [out[i] for i in keys]
            return Score(value=red, explanation=f"pass{sym}{k} per {'key' if isinstance(red, dict) else 'index'} "
                                                f"over {len(same)} scored epochs", metadata={"k": k})
        trials = _trials_of([s.value for s in scores], [_own_verdict(s) for s in scores], value, to_float)
        skipped = len(scores) - len(trials)
        md = {"trials": trials, "k": k, "skipped": skipped,
              "expected_route": (first.metadata or {}).get("expected_route") if first is not None else None}
        note = f" ({skipped} unscored epoch(s) left out)" if skipped else ""
        if len(trials) < k:  # also Inspect's live display reduces the epochs finished so far;
            # trajcheck_epochs refuses n < k up front
            return Score(value=math.nan, reason="scoring_failed", metadata=md,
                         explanation=f"pass{sym}{k} needs at least {k} scored epochs per sample; this sample has "
                                     f"{len(trials)}{note} (run with epochs >= {k})")
        v = figure(trials)
        return Score(value=v, metadata=md,
                     explanation=f"pass{sym}{k} = {v:.4g}: {sum(trials)}/{len(trials)} scored epochs passed{note}")

    return reduce


def _check_k(k: Any, where: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricInputError(f"{where}: k must be an integer >= 1, got {k!r}")


@score_reducer(name="pass_hat_k")
def pass_hat_k(k: int, value: float = 1.0, value_to_float: ValueToFloat | None = None) -> ScoreReducer:
    """pass^k over a sample's epochs: C(c, k) / C(n, k) (``trajcheck.metrics.reliability.pass_hat_k``;
    tau-bench, Yao et al. 2024), for any scorer's values.

    Args:
        k: attempts, an int >= 1.
        value: the value at or above which an epoch of another scorer passes (Inspect's
            ``pass_k`` default, 1.0).
        value_to_float: how a value becomes a number (default Inspect's ``value_to_float()``:
            "C" 1, "I" 0, "P" 0.5, numbers as they are).

    Returns:
        An Inspect reducer. n = the sample's scored epochs (unscored ones, NaN such as
        trajcheck's not-applicable, are left out as Inspect's own ``pass_k`` leaves them), c =
        those that passed: trajcheck's own verdict (``metadata["passed"]``) for a
        ``trajcheck_scorer``'s epochs, ``value_to_float(v) >= value`` for any other scorer's.
        Dict and list values are reduced key by key. The value is in [0, 1]; NaN (unscored),
        with the reason, when n < k.

    Raises:
        MetricInputError: ``k`` is not an int >= 1, or ``value`` not a number.
    """
    _check_k(k, "pass_hat_k")
    return _reduce("hat", k, _check_value(value, "pass_hat_k"), value_to_float or inspect_value_to_float())


@score_reducer(name="pass_at_k")
def pass_at_k(k: int, value: float = 1.0, value_to_float: ValueToFloat | None = None) -> ScoreReducer:
    """pass@k over a sample's epochs: 1 - C(n - c, k) / C(n, k), the unbiased estimator of
    Chen et al. 2021 (``trajcheck.metrics.reliability.pass_at_k``), for any scorer's values.

    Args, Returns, Raises: as :func:`pass_hat_k` (n, c and the skipped epochs alike).
    """
    _check_k(k, "pass_at_k")
    return _reduce("at", k, _check_value(value, "pass_at_k"), value_to_float or inspect_value_to_float())


def _check_value(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise MetricInputError(f"{where}: value must be a number, got {value!r}")
    return float(value)


def trajcheck_epochs(epochs: int, k: int, reducers: Sequence[Any] = ("mean",)) -> Any:
    """``inspect_ai.Epochs(epochs, [*reducers, pass_hat_k(k), pass_at_k(k)])``; raises
    ``MetricInputError`` when ``epochs < k`` (pass^k and pass@k are undefined then)."""
    from inspect_ai import Epochs

    _check_k(k, "trajcheck_epochs")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < k:
        raise MetricInputError(f"trajcheck_epochs: pass^{k} and pass@{k} need epochs >= {k}, got {epochs!r}")
    return Epochs(epochs, [*reducers, pass_hat_k(k), pass_at_k(k)])


@metric(name="success_rate", scores="unreduced")
def success_rate(value: float = 1.0, value_to_float: ValueToFloat | None = None) -> Metric:
    """The share of runs (every sample x epoch: an ``unreduced`` Inspect metric) that passed
    (``metrics.reliability.success_rate``), for any scorer's values, as the reducers decide it.

    Args:
        value: the value at or above which a run of another scorer passes (1.0).
        value_to_float: how a value becomes a number (default Inspect's ``value_to_float()``).

    Returns:
        An Inspect metric in [0, 1]: a ``trajcheck_scorer``'s run passes on trajcheck's verdict
        (``metadata["passed"]``), another scorer's when ``value_to_float(v) >= value`` (on
        another scorer it read only ``metadata["passed"]`` and gave 0.0); an unscored run (NaN)
        is a failure. NaN with no runs.

    Raises:
        MetricInputError: ``value`` is not a number.
    """
    from trajcheck.metrics.reliability import success_rate as core

    v0 = _check_value(value, "success_rate")
    to_float = value_to_float or inspect_value_to_float()

    def passed(sc: Score) -> bool:
        own = _own_verdict(sc)
        if own is not None:
            return own
        if _unscored(sc.value) or isinstance(sc.value, (dict, list)):
            return False
        f = to_float(sc.value)
        return not _unscored(f) and f >= v0

    def compute(scores: list[SampleScore]) -> float:
        ok = [passed(s.score) for s in scores]
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
