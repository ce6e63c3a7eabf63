"""Every deterministic trajcheck metric a host can show, in one table, and the strict reading
of the settings that configure them.

The host adapters (DeepEval, RAGAS, LangSmith, promptfoo) name a metric by its *key* (a row of
:data:`ROW_METRICS`) and get the core's ``MetricResult`` back from :func:`compute`; they never
recompute anything. A row says what reference the metric needs; when the host's test case
does not carry it, :func:`compute` raises :class:`MissingReference` and each host turns that
into its own convention for a metric that cannot run (DeepEval ``MissingTestCaseParamsError``,
RAGAS an exception / NaN, LangSmith error feedback, promptfoo a failed assertion) -- never a
pass. A core score of None (not applicable by the metric's own definition, e.g. ordering
accuracy with no applicable rule) is a *skipped* score in each host.

Settings are read strictly (:func:`check_keys`): an unknown key is an error naming it and the
closest known key; a wrong type is an error from ``Case.from_dict`` or :func:`check_option`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from trajcheck.errors import DatasetError, MetricInputError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory, did_you_mean

#: Case fields a host may carry in its reference / metadata / config (``Case`` field names).
CASE_KEYS: tuple[str, ...] = (
    "expected_calls", "optional_calls", "forbidden_calls", "precedence", "forbidden_sequences",
    "expected_final_state", "response_must_include", "max_steps", "optimal_steps", "args_mode",
    "threshold", "user", "tools", "expected_route", "initial_state", "faults", "read_only_calls",
    "claim_patterns", "negation_patterns",
)
#: Per-row keys besides the case fields: the database before/after the run (final state),
#: argument matchers per tool (``{tool or "*": {arg: spec}}``) and, for hosts whose flat call
#: lists have no error flag or step grouping, the indices of failed calls and the groups of
#: calls issued together in one step.
ROW_KEYS: tuple[str, ...] = ("before_state", "after_state", "match", "failed_calls", "parallel_calls")


class MissingReference(DatasetError):
    """A metric's reference (expected calls, tool definitions, precedence rules, ...) is not in
    the test case. Hosts map this to their own "cannot score" convention; never a pass."""


def check_keys(d: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    """Raise ``DatasetError`` for the first key of ``d`` not in ``known``, naming ``where``,
    the key and the closest known key (``'expected_call'`` -> did you mean
    ``'expected_calls'``?). Non-string keys are errors too."""
    known_set = frozenset(known)
    for k in d:
        if not isinstance(k, str):
            raise DatasetError(f"{where}: keys must be strings, got {k!r}")
        if k not in known_set:
            raise DatasetError(f"{where}: unknown key {k!r}{did_you_mean(k, known_set)}; "
                               f"known: {', '.join(sorted(known_set))}")


_OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "mode": (str,), "dialect": (str,), "args_mode": (str,), "threshold": (int, float),
    "weights": (Mapping,), "ignore": (list, tuple), "id_args": (list, tuple),
    "retry_budget": (int,), "key": (str,), "match": (Mapping,), "error_pattern": (str,),
}


#: Options that are lists of names (volatile columns, ID-like argument names): a wrong type
#: is a ``DatasetError``, as for the case's list-of-names fields.
_NAME_LISTS = frozenset({"ignore", "id_args"})


def check_option(name: str, value: Any, where: str) -> None:
    """Type check of one metric option (None means unset and is always fine); raises
    ``MetricInputError`` naming ``where`` and the option, or ``DatasetError`` for a
    list-of-names option (``ignore``, ``id_args``) that is not a list of non-empty strings or
    a ``match`` not keyed by tool name (or ``"*"``), then argument."""
    if value is None or name not in _OPTION_TYPES:
        return
    types = _OPTION_TYPES[name]
    bad = isinstance(value, bool) and bool not in types
    if bad or not isinstance(value, types):
        want = " or ".join(t.__name__ for t in types)
        err = DatasetError if name in _NAME_LISTS else MetricInputError
        raise err(f"{where}: {name} must be {want}, got {type(value).__name__} {value!r}")
    if name in _NAME_LISTS:
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise DatasetError(f"{where}: {name} item {i} must be a non-empty string, got {item!r}")
    if name == "threshold" and not 0.0 <= float(value) <= 1.0:
        raise MetricInputError(f"{where}: threshold must be in [0, 1], got {value!r}")
    if name == "retry_budget" and value < 0:
        raise MetricInputError(f"{where}: retry_budget must be >= 0, got {value!r}")
    if name == "match":
        # keyed by tool, then argument: {"order_id": "ignore"} is an error here, when the
        # metric is made, not an AttributeError at the first row
        from ._settings import check_match

        check_match(value, f"{where}: match", per_case=False)


@dataclass(frozen=True)
class Options:
    """What a metric may need besides ``(trajectory, case)``: ``mode``/``dialect``
    (trajectory match), ``args_mode``, matcher backends, composite ``weights``, final-state
    ``before_state``/``after_state``/``ignore``, provenance ``id_args``, recovery
    ``retry_budget``."""

    mode: str | None = None
    dialect: str | None = None
    args_mode: str | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, Any, Any], bool] | None = None
    weights: Mapping[str, float] | None = None
    before_state: Any = None
    after_state: Any = None
    ignore: Sequence[str] | None = None
    id_args: Sequence[str] | None = None
    retry_budget: int = 2


@dataclass(frozen=True)
class RowMetric:
    """One row of the metric x host table.

    ``key``: the name every host uses (DeepEval ``metric=``, RAGAS/LangSmith key, promptfoo
    ``metric:``); ``title``: display name; ``needs``: the reference fields of which at least
    one must be given (empty: the run alone suffices); ``core``: the core function(s), for the
    docs; ``lower_is_better``: a rate where 0 is best (hosts pass at ``score <= threshold``);
    ``threshold``: default pass mark."""

    key: str
    title: str
    needs: tuple[str, ...]
    core: str
    lower_is_better: bool = False
    threshold: float = 1.0


ROW_METRICS: tuple[RowMetric, ...] = (
    RowMetric("tool_selection", "Tool Selection", ("expected_calls",),
              "metrics.calls.selection_accuracy on this one run"),
    RowMetric("tool_call_f1", "Tool Call F1", ("expected_calls",), "metrics.calls.tool_call_prf (F1)"),
    RowMetric("tool_call_precision", "Tool Call Precision", ("expected_calls",),
              "metrics.calls.tool_call_prf (precision)"),
    RowMetric("tool_call_recall", "Tool Call Recall", ("expected_calls",),
              "metrics.calls.tool_call_prf (recall)"),
    RowMetric("trajectory_match", "Trajectory Match", ("expected_calls",),
              "metrics.trajectory.trajectory_match (mode, dialect)"),
    RowMetric("argument_accuracy", "Argument Accuracy", ("expected_calls",),
              "metrics.calls.argument_accuracy"),
    RowMetric("call_exact_correct", "Call Exact Correct", ("expected_calls",),
              "metrics.calls.call_exact_correct"),
    RowMetric("call_correctness", "Call Correctness", ("expected_calls",),
              "metrics.calls.call_correctness"),
    RowMetric("schema_validity", "Schema Validity", ("tools",), "metrics.calls.schema_errors"),
    RowMetric("argument_provenance", "Argument Provenance", (), "metrics.provenance.argument_provenance"),
    RowMetric("ordering_accuracy", "Ordering Accuracy", ("precedence",),
              "metrics.sequences.ordering_accuracy"),
    RowMetric("forbidden_calls", "Forbidden Calls", ("forbidden_calls", "forbidden_sequences"),
              "metrics.sequences.check_forbidden_sequences"),
    RowMetric("unnecessary_call_rate", "Unnecessary Call Rate", ("expected_calls",),
              "metrics.sequences.call_rates (unnecessary_rate)", lower_is_better=True, threshold=0.0),
    RowMetric("duplicate_call_rate", "Duplicate Call Rate", ("expected_calls",),
              "metrics.sequences.call_rates (duplicate_rate)", lower_is_better=True, threshold=0.0),
    RowMetric("error_recovery", "Error Recovery", (), "metrics.sequences.error_recovery"),
    RowMetric("false_success", "False Success", (),
              "metrics.recovery.is_false_success on a run with a failed call",
              lower_is_better=True, threshold=0.0),
    RowMetric("response_includes", "Response Includes", ("response_must_include",),
              "metrics.outcome.response_includes"),
    RowMetric("final_state", "Final State", ("expected_final_state",),
              "metrics.final_state.check_final_state"),
    RowMetric("task_success", "Task Success", ("expected_calls", "expected_final_state",
                                              "response_must_include"),
              "suite.run_outcome"),
    RowMetric("efficiency", "Step Efficiency", ("optimal_steps", "max_steps"),
              "metrics.composite.efficiency_score"),
    RowMetric("composite", "Trajectory Composite", ("expected_calls", "expected_final_state",
                                                   "response_must_include"),
              "metrics.composite.score_trajectory", threshold=0.8),
)
BY_KEY: dict[str, RowMetric] = {m.key: m for m in ROW_METRICS}
#: Old names kept working (the adapters' earlier kinds).
ALIASES: dict[str, str] = {"argument_correctness": "argument_accuracy", "forbidden": "forbidden_calls",
                           "f1": "tool_call_f1"}


def row_metric(key: str, where: str = "metric") -> RowMetric:
    """The :data:`ROW_METRICS` row for ``key`` (or an alias); ``MetricInputError`` naming the
    closest key otherwise."""
    if not isinstance(key, str):
        raise MetricInputError(f"{where}: a metric name must be a string, got {key!r}")
    k = ALIASES.get(key, key)
    if k not in BY_KEY:
        raise MetricInputError(f"{where}: unknown trajcheck metric {key!r}"
                               f"{did_you_mean(key, list(BY_KEY) + list(ALIASES))}; "
                               f"known: {', '.join(BY_KEY)}")
    return BY_KEY[k]


def mode_label(mode: str | None, dialect: str | None) -> str:
    """``"in_order"``, or ``"promptfoo tool-sequence -> in_order"`` for a dialect's name:
    the mode part of a trajectory metric's display name and key."""
    from trajcheck.metrics.trajectory import normalize_mode

    m = mode or "superset"
    neutral = normalize_mode(m, dialect)
    if dialect is None and m == neutral:
        return neutral
    return f"{dialect or 'any'} {m} -> {neutral}"


def display_name(key: str, mode: str | None = None, dialect: str | None = None) -> str:
    """The name a host shows: ``"Ordering Accuracy (trajcheck)"``; a trajectory match names
    its mode and dialect: ``"Trajectory Match [agentevals strict -> exact] (trajcheck)"``."""
    m = row_metric(key)
    if m.key == "trajectory_match":
        return f"{m.title} [{mode_label(mode, dialect)}] (trajcheck)"
    return f"{m.title} (trajcheck)"


def default_key(key: str, mode: str | None = None, dialect: str | None = None) -> str:
    """A feedback/column key: ``"trajcheck_ordering_accuracy"``; a trajectory match adds its
    neutral mode and, for a dialect's name, the dialect and that name:
    ``"trajcheck_trajectory_in_order"``, ``"trajcheck_trajectory_exact_agentevals_strict"``."""
    import re

    m = row_metric(key)
    if m.key != "trajectory_match":
        return f"trajcheck_{m.key}"
    from trajcheck.metrics.trajectory import normalize_mode

    md = mode or "superset"
    neutral = normalize_mode(md, dialect)
    k = f"trajcheck_trajectory_{neutral}"
    if dialect is not None or md != neutral:
        k += "_" + re.sub(r"[^a-z0-9]+", "_", f"{dialect or ''} {md}".lower()).strip("_")
    return k


def _given(case: Case, provided: Iterable[str], field_name: str) -> bool:
    if field_name in provided:
        return True
    v = getattr(case, field_name)
    return v is not None and v != () and v != {}


def require(metric: RowMetric, case: Case, provided: Iterable[str], how: str = "") -> None:
    """Raise :class:`MissingReference` when none of ``metric.needs`` is given for ``case``.

    ``provided``: the reference fields the host test case carried explicitly (an explicit
    empty ``expected_calls`` is a reference: the no-tool case); a non-empty case field counts
    as given too. ``how``: where the host expects them (appended to the message)."""
    if not metric.needs:
        return
    prov = frozenset(provided)
    if any(_given(case, prov, f) for f in metric.needs):
        return
    need = " or ".join(repr(f) for f in metric.needs)
    raise MissingReference(f"case {case.id!r}: {metric.title} needs {need}, which this test case "
                           f"does not give{'; ' + how if how else ''}")


def fixture_snapshot(fixture: str) -> dict[str, list[dict[str, Any]]]:
    """The database a run started from when the case names a sandbox fixture
    (``initial_state``, a ``.sql`` file): the fixture loaded into a fresh in-memory
    ``sandbox.SQLiteSandbox`` and snapshotted (``{table: [row, ...]}``), as ``trajcheck run``
    snapshots it before the agent starts. A relative path is taken from the working directory
    (the path comes from the host code or case file the user wrote; a case file read with
    ``load_cases`` has already made it absolute against its own folder). Cached per file
    path, size and modification time. Raises ``SandboxError`` naming the file (missing, or
    the statement and line that failed)."""
    import os

    from trajcheck.errors import SandboxError

    try:
        st = os.stat(fixture)
    except OSError as e:
        raise SandboxError(f"fixture {fixture!r} (initial_state) cannot be read: {e}") from e
    snap = _fixture_cached(os.path.abspath(fixture), st.st_size, st.st_mtime_ns)
    return {t: [dict(r) for r in rows] for t, rows in snap.items()}


@lru_cache(maxsize=64)
def _fixture_cached(path: str, size: int, mtime_ns: int) -> dict[str, list[dict[str, Any]]]:
    from trajcheck.run.sandbox import SQLiteSandbox

    with SQLiteSandbox(path) as sb:
        return sb.snapshot()


def _states(case: Case, traj: Trajectory, opts: Options) -> tuple[Any, Any]:
    """(before, after) databases of the run: given by the host, else recorded in the trace
    (``state_before``/``state_after``); with neither before state, the case's sandbox fixture
    (``initial_state``, :func:`fixture_snapshot`)."""
    before, after = opts.before_state, opts.after_state
    meta = traj.metadata or {}
    if before is None:
        before = meta.get("state_before")
    if after is None:
        after = meta.get("state_after")
    if before is None and isinstance(case.initial_state, str) and isinstance(after, Mapping):
        before = fixture_snapshot(case.initial_state)
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        raise MissingReference(f"case {case.id!r}: Final State needs the database after the run "
                               "(after_state: {table: [row, ...]}) and the one before it (before_state, "
                               "or the case's sandbox fixture initial_state)")
    return before, after


def _ctx(case: Case, opts: Options) -> Any:
    """The matchers' context: None (the core then builds it from the case, as when a metric
    is called directly) unless a semantic scorer or judge backend is given."""
    if opts.semantic_scorer is None and opts.judge is None:
        return None
    from trajcheck.match.matchers import MatchContext

    inp = case.input if isinstance(case.input, str) else None
    return MatchContext(case_input=inp, user=case.user, semantic_scorer=opts.semantic_scorer,
                        judge=opts.judge)


def forbidden_rules(case: Case) -> list[dict[str, Any]]:
    """The case's ``forbidden_sequences`` followed by ``{"tool": name}`` (never allowed,
    critical) for each ``forbidden_calls`` entry, as ``check_forbidden_sequences`` reads."""
    rules = [dict(r) for r in case.forbidden_sequences]
    rules += [{"tool": name, "name": f"forbidden_calls[{i}]"} for i, name in enumerate(case.forbidden_calls)]
    return rules


def _rate(res: MetricResult, part: str, name: str) -> MetricResult:
    v = res.parts.get(f"{part}_rate")
    n = res.parts.get("n_counted", 0)
    if not n:
        return MetricResult(name, None, "not applicable: no counted calls", dict(res.parts), None)
    return MetricResult(name, float(v), f"{res.parts.get(part, 0)}/{n} counted calls {part}: {res.reason}",
                        dict(res.parts), v == 0)


def _outcome(traj: Trajectory, case: Case, opts: Options) -> MetricResult:
    """``suite.run_outcome``, with the database before/after given by the host (``opts``)
    taking the place of snapshots recorded in the trace."""
    if opts.before_state is not None or opts.after_state is not None:
        from trajcheck.metrics.outcome import check_final_state, response_includes, task_success

        before, after = _states(case, traj, opts)
        fs = check_final_state(before, after, case.expected_final_state, **_ignore(opts))
        resp = response_includes(traj, case.response_must_include) if case.response_must_include else None
        return task_success(fs, resp)
    from trajcheck.score.suite import run_outcome

    return run_outcome(traj, case, context=_ctx(case, opts))


def _ignore(opts: Options) -> dict[str, Any]:
    return {} if opts.ignore is None else {"ignore": tuple(opts.ignore)}


def prf_row(key: str, r: MetricResult) -> MetricResult:
    """The row ``key`` (``tool_call_f1``/``_precision``/``_recall`` or an alias) of a
    ``tool_call_prf`` result: the result itself for F1, else a ``MetricResult`` named after the
    row with that figure as ``score`` and the result's parts."""
    k = row_metric(key).key
    if k == "tool_call_f1":
        return r
    fig = k.rsplit("_", 1)[1]
    val = getattr(r, fig)
    return MetricResult(k, val, f"{fig} {val:.4g}: {r.reason}", dict(r.parts), val == 1.0)


def compute(key: str, traj: Trajectory, case: Case, opts: Options | None = None,
            provided: Iterable[str] = (), how: str = "") -> MetricResult:
    """Run the core metric ``key`` (a :data:`ROW_METRICS` key) on one run.

    Returns the core ``MetricResult`` unchanged, except for the rows that pick one figure of
    a richer result (precision/recall of ``tool_call_prf``, one rate of ``call_rates``, the
    false-success verdict), which return a ``MetricResult`` named after the row with that
    figure as ``score`` and the core result's parts. Raises :class:`MissingReference` when
    the metric's reference is not given (see :func:`require`), ``MetricInputError`` for an
    unknown key, and the core's own errors for malformed input.
    """
    m = row_metric(key)
    o = opts or Options()
    require(m, case, provided, how)
    k = m.key
    am = o.args_mode
    if k in ("tool_call_f1", "tool_call_precision", "tool_call_recall"):
        from trajcheck.metrics.calls import tool_call_prf

        return prf_row(k, tool_call_prf(traj, case, args_mode=am, context=_ctx(case, o)))
    if k == "tool_selection":
        from trajcheck.metrics.calls import selection_accuracy

        r = selection_accuracy([(traj, case)])
        return MetricResult(k, r.score, r.reason, dict(r.parts["per_case"][0]), r.passed)
    if k == "trajectory_match":
        from trajcheck.metrics.trajectory import trajectory_match

        return trajectory_match(traj, case, o.mode or "superset", dialect=o.dialect, args_mode=am,
                                context=_ctx(case, o))
    if k == "argument_accuracy":
        from trajcheck.metrics.calls import argument_accuracy

        return argument_accuracy(traj, case, args_mode=am, context=_ctx(case, o))
    if k == "call_exact_correct":
        from trajcheck.metrics.calls import call_exact_correct

        return call_exact_correct(traj, case, args_mode=am, context=_ctx(case, o))
    if k == "call_correctness":
        from trajcheck.metrics.calls import call_correctness

        return call_correctness(traj, case, args_mode=am, context=_ctx(case, o))
    if k == "schema_validity":
        from trajcheck.metrics.calls import schema_errors

        return schema_errors(traj, list(case.tools))
    if k == "argument_provenance":
        from trajcheck.metrics.provenance import argument_provenance

        return argument_provenance(traj, case, o.id_args)
    if k == "ordering_accuracy":
        from trajcheck.metrics.sequences import ordering_accuracy

        return ordering_accuracy(traj, case.precedence)
    if k == "forbidden_calls":
        from trajcheck.metrics.sequences import check_forbidden_sequences

        return check_forbidden_sequences(traj, forbidden_rules(case))
    if k in ("unnecessary_call_rate", "duplicate_call_rate"):
        from trajcheck.metrics.sequences import call_rates

        r = call_rates(traj, case, args_mode=am, context=_ctx(case, o))
        return _rate(r, k.split("_", 1)[0], k)
    if k == "error_recovery":
        from trajcheck.metrics.sequences import error_recovery

        return error_recovery(traj, retry_budget=o.retry_budget, case=case)
    if k == "false_success":
        from trajcheck.metrics.recovery import ClaimDetector, is_false_success
        from trajcheck.metrics.sequences import error_recovery

        rec = error_recovery(traj, retry_budget=o.retry_budget, case=case)
        if not rec.parts.get("errors"):
            return MetricResult(k, None, "not applicable: no tool call failed in this run",
                                dict(rec.parts), None)
        out = _outcome(traj, case, o)
        fs = is_false_success((traj, bool(out.passed)), detector=ClaimDetector.for_case(case))
        why = ("the final response claims success while the task failed" if fs else
               "no false claim of success" + (" (task succeeded)" if out.passed else ""))
        return MetricResult(k, 1.0 if fs else 0.0, f"{why}; outcome: {out.reason}",
                            {"task_success": bool(out.passed), **rec.parts}, not fs)
    if k == "response_includes":
        from trajcheck.metrics.outcome import response_includes

        return response_includes(traj, case.response_must_include)
    if k == "final_state":
        from trajcheck.metrics.outcome import check_final_state

        before, after = _states(case, traj, o)
        return check_final_state(before, after, case.expected_final_state, **_ignore(o))
    if k == "task_success":
        return _outcome(traj, case, o)
    if k == "efficiency":
        from trajcheck.metrics.composite import efficiency_score

        val, how_ = efficiency_score(traj, case)
        return MetricResult(k, val, f"step efficiency {val:.4g}: {how_}", {"efficiency": val},
                            val == 1.0)
    # composite
    from trajcheck.metrics.composite import score_trajectory

    # the outcome as the suite judges it (suite.score_run): the final state when the database
    # before/after is known (given, or recorded in the trace), else the calls
    outcome = _outcome(traj, case, o)
    return score_trajectory(traj, case, outcome=outcome, context=_ctx(case, o), args_mode=am,
                            weights=dict(o.weights) if o.weights is not None else None)


def passed(metric: RowMetric, res: MetricResult, threshold: float) -> bool | None:
    """The host verdict: None when the score is None (skipped); for a rate (lower is
    better) ``score <= threshold``; else ``score >= threshold`` and not a failed core verdict
    for the binary gates (forbidden calls)."""
    if res.score is None:
        return None
    if metric.lower_is_better:
        return res.score <= threshold
    ok = res.score >= threshold
    if metric.key == "forbidden_calls" and res.passed is False:
        return False
    return ok
