"""The scorecard data model: what scoring a suite produces, and its JSON form.

- ``Estimate``: a reported figure with its interval (Wilson, rule of three or bootstrap);
- ``RunResult``: everything measured on one run (one trajectory of one case);
- ``CaseResult``: per-case trials and successes;
- ``Disagreement`` and ``RecordedReward``: the source's own reward (tau-bench) summarised
  like ours, with the 2x2 agreement matrix (``AGREEMENT_CELLS``) and every disagreement;
- ``SuiteMetrics``: the suite-level figures;
- ``Scorecard``: all of the above plus problems and meta.

Every class is a frozen dataclass with ``to_dict``/``from_dict``; a scorecard's JSON
round-trips exactly (``Scorecard.load(p).to_dict() == json.load(p)``). The JSON layout is
fixed by ``trajcheck/schemas/scorecard.schema.json`` (``SCHEMA_VERSION``;
``scorecard_schema``, ``validate_scorecard_json``). Figures keep full float precision here
and in the JSON (2/3 is stored as 0.6666666666666666); only the reports a person reads
(terminal, Markdown, HTML) round, at display time (``trajcheck.report.fmt``).

The scoring that fills these classes (``score_run``, ``score_runs``, ``evaluate``,
``compare_scorecards``) lives in ``trajcheck.score.suite``, which also re-exports every name here.
Standard library only at import time (jsonschema is imported inside
``validate_scorecard_json``).
"""

from __future__ import annotations

import copy
import gc
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import TrajcheckError

SCHEMA_VERSION = "1"


def _r(x: float | None) -> float | None:
    """A figure as stored in results and JSON: a plain float at full precision, never rounded
    (rounding belongs to the reports a person reads). None and non-finite values become None
    (JSON has no NaN or infinity); -0.0 becomes 0.0."""
    if x is None:
        return None
    x = float(x)
    return x + 0.0 if math.isfinite(x) else None


def _usd(x: float | None) -> float | None:
    """A US-dollar amount as stored in results and JSON: full precision, like ``_r``."""
    return _r(x)


def fmt_num(x: float | None) -> str:
    """A reported number as short text (None -> "n/a")."""
    return "n/a" if x is None else f"{x:g}"


def _kmap_to_json(m: Mapping[int, Any]) -> dict[str, Any]:
    return {str(k): (list(v) if isinstance(v, tuple) else v) for k, v in sorted(m.items())}


def _kmap_from_json(m: Mapping[str, Any] | None, *, pair: bool = False) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for k, v in (m or {}).items():
        out[int(k)] = (tuple(v) if (pair and v is not None) else v)
    return out


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class Estimate:
    """A reported figure with its interval.

    ``value`` in the metric's units (a rate in [0, 1] for rates); ``lo``/``hi`` the
    interval bounds or None when no interval applies; ``method`` one of ``"wilson"``,
    ``"rule_of_three"`` (zero events: upper bound 3/n), ``"bootstrap"`` (seeded
    percentile bootstrap over tasks) or None; ``n`` the denominator (runs or tasks).
    """

    value: float | None
    lo: float | None = None
    hi: float | None = None
    method: str | None = None
    n: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: all five keys, None as null."""
        return {"value": self.value, "lo": self.lo, "hi": self.hi, "method": self.method,
                "n": self.n}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Estimate | None:
        """Inverse of ``to_dict`` (None stays None)."""
        if d is None:
            return None
        return cls(d.get("value"), d.get("lo"), d.get("hi"), d.get("method"), d.get("n"))


def _est_json(e: Estimate | None) -> dict[str, Any] | None:
    return None if e is None else e.to_dict()


@dataclass(frozen=True)
class RunResult:
    """Everything trajcheck measured on one run (one trajectory of one case).

    ``success`` is trajcheck's own outcome (see ``score_run``), ``outcome_reason`` says
    why; ``failure_reason`` is one line naming the first thing that went wrong (None for a
    success). ``precision``/``recall``/``f1`` come from ``metrics.calls.tool_call_prf``;
    ``composite`` from ``metrics.composite.score_trajectory``. ``steps`` (agent turns),
    ``n_calls``, ``tokens``, ``cost_usd`` (US dollars) and ``latency_ms`` (milliseconds) are
    ``metrics.efficiency.run_stats``' figures (None where the source has no figure).
    ``route`` is the route the run took (``run_route``), ``expected_route`` the case's. ``recorded_reward`` is the source's own reward
    (tau-bench), ``fault_run`` whether faults were injected, ``false_success`` whether the
    final response claimed an action that did not happen (``metrics.recovery.is_false_success``;
    None when faults were not injected and no call failed: nothing to hide).
    ``expected_tools``/``called_tools`` list tool names; ``matched`` the (expected, called)
    tool-name pairs of the maximum matching. ``metrics`` holds every metric's
    ``MetricResult.to_dict()`` by name; ``transcript`` the steps of a failing run for the
    HTML report (contents cut at 2,000 characters), else None. ``forbidden_checked``: whether
    the case defines ``forbidden_calls`` or ``forbidden_sequences`` (None in scorecards
    written before this field existed). ``case_hash``: ``fingerprint.case_hash`` of the case
    definition the run was scored against (None in older scorecards); ``calls``: the
    expected-vs-called table of ``run_detail.call_detail`` (None when not kept). ``gate_failed`` (property): the task succeeded but
    the composite score is below its threshold (``composite_passed`` False).
    ``recorded_checks``: the source's own verdicts on the run's writes beside its reward,
    each next to trajcheck's verdict on the writes alone (the outcome without the response
    check): ``{name: {"recorded": bool, "ours": bool, "reason": str}}`` for tau2's
    ``db_match`` and tau-bench's ``r_actions`` (None when the source records none).
    ``recorded_group``: the task id the source's own pass^k counts the run under when it
    differs from ``case_id`` (a tau2 simulation re-keyed for a data defect), else None.
    ``category``: the case's ``metadata["category"]`` (BFCL's test category), else None.
    ``lcs_f1``: in-order partial credit, ``metrics.trajectory_scores.lcs_prf`` F1 under the
    case's argument modes (1.0 exactly when ``exact`` holds); ``name_f1``: the multiset F1
    over tool names, ``multiset_prf`` (1.0 exactly when the called names equal the expected
    ones as multisets). Both None in scorecards written before they existed.
    """

    run_id: str
    case_id: str
    trial: int | None
    success: bool
    outcome_reason: str
    failure_reason: str | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    composite: float | None = None
    composite_passed: bool | None = None
    steps: int = 0
    n_calls: int = 0
    tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    route: Any = None
    expected_route: Any = None
    recorded_reward: float | None = None
    fault_run: bool = False
    false_success: bool | None = None
    expected_tools: tuple[str, ...] = ()
    called_tools: tuple[str, ...] = ()
    matched: tuple[tuple[str, str], ...] = ()
    metrics: dict[str, Any] = field(default_factory=dict)
    transcript: tuple[dict[str, Any], ...] | None = None
    forbidden_checked: bool | None = None
    case_hash: str | None = None
    calls: dict[str, Any] | None = None
    recorded_checks: dict[str, dict[str, Any]] | None = None
    recorded_group: str | None = None
    category: str | None = None
    lcs_f1: float | None = None
    name_f1: float | None = None

    @property
    def gate_failed(self) -> bool:
        """True when the task succeeded but the run fails the composite gate (DESIGN: e.g. a
        critical forbidden-sequence violation makes the composite 0). pass^k stays on task
        success; reports list such runs next to the failed ones, marked "composite gate"."""
        return self.success and self.composite_passed is False

    def to_dict(self) -> dict[str, Any]:
        """JSON form (see the schema's ``run`` definition)."""
        return self.json_view(copy.deepcopy)

    def json_view(self, nested: Any = None) -> dict[str, Any]:
        """``to_dict``'s dict, its nested dicts (``metrics``, ``calls``,
        ``recorded_checks``) passed through ``nested`` (default: shared with this result,
        for writing it out without copying)."""
        if nested is None:
            def nested(x: Any) -> Any:
                return x
        return {
            "run_id": self.run_id, "case_id": self.case_id, "trial": self.trial,
            "success": self.success, "outcome_reason": self.outcome_reason,
            "failure_reason": self.failure_reason, "precision": self.precision,
            "recall": self.recall, "f1": self.f1, "composite": self.composite,
            "composite_passed": self.composite_passed, "steps": self.steps,
            "n_calls": self.n_calls, "tokens": self.tokens, "cost_usd": self.cost_usd,
            "latency_ms": self.latency_ms, "route": self.route,
            "expected_route": self.expected_route, "recorded_reward": self.recorded_reward,
            "fault_run": self.fault_run, "false_success": self.false_success,
            "expected_tools": list(self.expected_tools), "called_tools": list(self.called_tools),
            "matched": [list(p) for p in self.matched], "metrics": nested(self.metrics),
            "transcript": None if self.transcript is None else list(self.transcript),
            "forbidden_checked": self.forbidden_checked,
            "case_hash": self.case_hash, "calls": nested(self.calls),
            "recorded_checks": nested(self.recorded_checks),
            "recorded_group": self.recorded_group, "category": self.category,
            "lcs_f1": self.lcs_f1, "name_f1": self.name_f1,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunResult:
        """Inverse of ``to_dict``."""
        return cls(
            run_id=d["run_id"], case_id=d["case_id"], trial=d.get("trial"),
            success=bool(d["success"]), outcome_reason=d.get("outcome_reason", ""),
            failure_reason=d.get("failure_reason"), precision=d.get("precision"),
            recall=d.get("recall"), f1=d.get("f1"), composite=d.get("composite"),
            composite_passed=d.get("composite_passed"), steps=d.get("steps", 0),
            n_calls=d.get("n_calls", 0), tokens=d.get("tokens"), cost_usd=d.get("cost_usd"),
            latency_ms=d.get("latency_ms"), route=d.get("route"),
            expected_route=d.get("expected_route"), recorded_reward=d.get("recorded_reward"),
            fault_run=bool(d.get("fault_run", False)), false_success=d.get("false_success"),
            expected_tools=tuple(d.get("expected_tools") or ()),
            called_tools=tuple(d.get("called_tools") or ()),
            matched=tuple((a, b) for a, b in d.get("matched") or ()),
            metrics=dict(d.get("metrics") or {}),
            transcript=None if d.get("transcript") is None else tuple(d["transcript"]),
            forbidden_checked=d.get("forbidden_checked"),
            case_hash=d.get("case_hash"), calls=d.get("calls"),
            recorded_checks=d.get("recorded_checks"), recorded_group=d.get("recorded_group"),
            category=d.get("category"), lcs_f1=d.get("lcs_f1"), name_f1=d.get("name_f1"),
        )


#: RunResult's fields in order (``run_result_of`` builds one from a dict of exactly these)
RUN_FIELDS = tuple(f.name for f in fields(RunResult))
_new_object = object.__new__
_set_attr = object.__setattr__


def run_result_of(values: dict[str, Any]) -> RunResult:
    """A ``RunResult`` holding ``values``, a dict of every field in field order (the dict
    becomes the result's own: not to be changed after). The same object
    ``RunResult(**values)`` gives, without the frozen ``__init__``'s per-field
    ``object.__setattr__`` (the fast scorer builds one per run; its test checks the
    field names and order)."""
    r = _new_object(RunResult)
    _set_attr(r, "__dict__", values)
    return r


@dataclass(frozen=True)
class CaseResult:
    """Per-case aggregate: ``trials`` runs, ``successes`` of them successful (own outcome),
    ``recorded_successes`` by the source's reward (None when it records none),
    ``mean_f1`` over the case's runs, ``run_ids`` in trial order, ``case_hash`` the hash of
    the case definition its runs were scored against (``fingerprint.case_hash``; None in
    older scorecards)."""

    case_id: str
    trials: int
    successes: int
    mean_f1: float | None = None
    recorded_successes: int | None = None
    run_ids: tuple[str, ...] = ()
    case_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"case_id": self.case_id, "trials": self.trials, "successes": self.successes,
                "mean_f1": self.mean_f1, "recorded_successes": self.recorded_successes,
                "run_ids": list(self.run_ids), "case_hash": self.case_hash}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CaseResult:
        """Inverse of ``to_dict``."""
        return cls(d["case_id"], d["trials"], d["successes"], d.get("mean_f1"),
                   d.get("recorded_successes"), tuple(d.get("run_ids") or ()),
                   d.get("case_hash"))


@dataclass(frozen=True)
class Disagreement:
    """One run where trajcheck's outcome and the recorded reward differ, with our reason."""

    run_id: str
    case_id: str
    trial: int | None
    ours: bool
    recorded: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"run_id": self.run_id, "case_id": self.case_id, "trial": self.trial,
                "ours": self.ours, "recorded": self.recorded, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Disagreement:
        """Inverse of ``to_dict``."""
        return cls(d["run_id"], d["case_id"], d.get("trial"), bool(d["ours"]),
                   bool(d["recorded"]), d.get("reason", ""))


AGREEMENT_CELLS = ("ours_pass_recorded_pass", "ours_pass_recorded_fail",
                   "ours_fail_recorded_pass", "ours_fail_recorded_fail")


@dataclass(frozen=True)
class CheckAgreement:
    """Agreement of trajcheck's verdict on a run's writes with one verdict the source
    records (``name``: ``db_match``, ``r_actions``), over the ``n`` runs that record it:
    ``matrix`` keyed by ``AGREEMENT_CELLS`` (``recorded`` = the source's verdict), ``agree``
    the diagonal, ``disagreements`` every off-diagonal run with both reasons."""

    name: str
    n: int
    matrix: dict[str, int]
    agree: int
    disagreements: tuple[Disagreement, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"n": self.n, "matrix": dict(self.matrix), "agree": self.agree,
                "rate": _r(self.agree / self.n) if self.n else None,
                "disagreements": [x.to_dict() for x in self.disagreements]}

    @classmethod
    def from_dict(cls, name: str, d: Mapping[str, Any]) -> CheckAgreement:
        """Inverse of ``to_dict``."""
        return cls(name, d["n"], dict(d.get("matrix") or {}), d.get("agree", 0),
                   tuple(Disagreement.from_dict(x) for x in d.get("disagreements") or ()))


@dataclass(frozen=True)
class RecordedReward:
    """The source's own reward, summarised the same way as ours.

    ``pass_hat_k`` {k: value} over the runs that carry a reward (success = reward within
    1e-6 of 1, tau-bench's rule), ``pass_hat_k_ci`` {k: (lo, hi)} seeded bootstrap over
    tasks; ``mean`` the mean reward; ``matrix`` the 2x2 agreement counts keyed by
    ``AGREEMENT_CELLS``; ``agree`` = diagonal, ``n`` = runs compared; ``disagreements``
    every off-diagonal run with trajcheck's reason. pass^k groups runs by their
    ``recorded_group`` when set (the source's own grouping), else by case. ``checks``: the
    source's other recorded verdicts (``db_match``, ``r_actions``) against trajcheck's
    verdict on the writes, by name (``CheckAgreement``).
    """

    n: int
    mean: float | None
    pass_hat_k: dict[int, float]
    pass_hat_k_ci: dict[int, tuple[float, float] | None]
    matrix: dict[str, int]
    agree: int
    disagreements: tuple[Disagreement, ...] = ()
    checks: dict[str, CheckAgreement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (k keys become strings)."""
        return {"n": self.n, "mean": self.mean, "pass_hat_k": _kmap_to_json(self.pass_hat_k),
                "pass_hat_k_ci": _kmap_to_json(self.pass_hat_k_ci),
                "agreement": {"matrix": dict(self.matrix), "agree": self.agree, "n": self.n,
                              "rate": _r(self.agree / self.n) if self.n else None},
                "disagreements": [x.to_dict() for x in self.disagreements],
                "checks": {k: v.to_dict() for k, v in self.checks.items()}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> RecordedReward | None:
        """Inverse of ``to_dict``."""
        if d is None:
            return None
        ag = d.get("agreement") or {}
        return cls(n=d["n"], mean=d.get("mean"), pass_hat_k=_kmap_from_json(d.get("pass_hat_k")),
                   pass_hat_k_ci=_kmap_from_json(d.get("pass_hat_k_ci"), pair=True),
                   matrix=dict(ag.get("matrix") or {}), agree=ag.get("agree", 0),
                   disagreements=tuple(Disagreement.from_dict(x)
                                       for x in d.get("disagreements") or ()),
                   checks={k: CheckAgreement.from_dict(k, v) for k, v in (d.get("checks") or {}).items()})


@dataclass(frozen=True)
class SuiteMetrics:
    """Suite-level figures (see the module docstring for their definitions).

    ``pass_hat_k``/``pass_at_k`` map k -> value for k = 1..min trials per case, with
    ``*_ci`` k -> (lo, hi) (seeded percentile bootstrap over tasks). Rates are Estimates
    with Wilson intervals (rule of three when no event was seen). ``efficiency`` and
    ``routing`` are the JSON-ready blocks built by ``_efficiency`` (over successful runs;
    cost per successful task over all runs) and ``_routing`` (None when no case carries an
    ``expected_route``). ``tool_confusion`` = {"labels": [...], "matrix": [[...]]}: rows are
    expected tools plus "(none)" for extra calls, columns called tools plus "(none)" for
    missed expected calls. ``composite_pass_rate``: share of runs whose composite score
    passes its threshold (over runs with a composite score; Wilson). ``forbidden_rate`` is
    None when no case defines forbidden calls or forbidden sequences (a rate of 0 would be
    vacuous). ``ordering_accuracy``: mean of the runs' ``metrics.sequences.ordering_accuracy``
    over runs with an applicable precedence rule (per-case means, bootstrap over cases, as
    ``mean_f1``); None when no run has one. ``mean_lcs_f1`` / ``mean_name_f1``: the runs'
    ``lcs_f1`` / ``name_f1`` (graded trajectory scores, ``metrics.trajectory_scores``),
    per-case means, bootstrap over cases, as ``mean_f1``.
    """

    n_runs: int
    n_cases: int
    n_successes: int
    task_success_rate: Estimate
    pass_hat_k: dict[int, float] = field(default_factory=dict)
    pass_hat_k_ci: dict[int, tuple[float, float] | None] = field(default_factory=dict)
    pass_at_k: dict[int, float] = field(default_factory=dict)
    pass_at_k_ci: dict[int, tuple[float, float] | None] = field(default_factory=dict)
    mean_f1: Estimate | None = None
    mean_composite: Estimate | None = None
    forbidden_rate: Estimate | None = None
    duplicate_rate: Estimate | None = None
    false_success_rate: Estimate | None = None
    n_fault_runs: int = 0
    efficiency: dict[str, Any] | None = None
    routing: dict[str, Any] | None = None
    tool_confusion: dict[str, Any] = field(default_factory=dict)
    composite_pass_rate: Estimate | None = None
    ordering_accuracy: Estimate | None = None
    mean_lcs_f1: Estimate | None = None
    mean_name_f1: Estimate | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (k keys become strings)."""
        return {
            "n_runs": self.n_runs, "n_cases": self.n_cases, "n_successes": self.n_successes,
            "task_success_rate": self.task_success_rate.to_dict(),
            "pass_hat_k": _kmap_to_json(self.pass_hat_k),
            "pass_hat_k_ci": _kmap_to_json(self.pass_hat_k_ci),
            "pass_at_k": _kmap_to_json(self.pass_at_k),
            "pass_at_k_ci": _kmap_to_json(self.pass_at_k_ci),
            "mean_f1": _est_json(self.mean_f1), "mean_composite": _est_json(self.mean_composite),
            "composite_pass_rate": _est_json(self.composite_pass_rate),
            "ordering_accuracy": _est_json(self.ordering_accuracy),
            "mean_lcs_f1": _est_json(self.mean_lcs_f1),
            "mean_name_f1": _est_json(self.mean_name_f1),
            "forbidden_rate": _est_json(self.forbidden_rate),
            "duplicate_rate": _est_json(self.duplicate_rate),
            "false_success_rate": _est_json(self.false_success_rate),
            "n_fault_runs": self.n_fault_runs, "efficiency": copy.deepcopy(self.efficiency),
            "routing": copy.deepcopy(self.routing),
            "tool_confusion": copy.deepcopy(self.tool_confusion),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SuiteMetrics:
        """Inverse of ``to_dict``."""
        tsr = Estimate.from_dict(d["task_success_rate"])
        if tsr is None:
            raise TrajcheckError("scorecard: suite.task_success_rate is null")
        return cls(
            n_runs=d["n_runs"], n_cases=d["n_cases"], n_successes=d["n_successes"],
            task_success_rate=tsr,
            pass_hat_k=_kmap_from_json(d.get("pass_hat_k")),
            pass_hat_k_ci=_kmap_from_json(d.get("pass_hat_k_ci"), pair=True),
            pass_at_k=_kmap_from_json(d.get("pass_at_k")),
            pass_at_k_ci=_kmap_from_json(d.get("pass_at_k_ci"), pair=True),
            mean_f1=Estimate.from_dict(d.get("mean_f1")),
            mean_composite=Estimate.from_dict(d.get("mean_composite")),
            composite_pass_rate=Estimate.from_dict(d.get("composite_pass_rate")),
            ordering_accuracy=Estimate.from_dict(d.get("ordering_accuracy")),
            mean_lcs_f1=Estimate.from_dict(d.get("mean_lcs_f1")),
            mean_name_f1=Estimate.from_dict(d.get("mean_name_f1")),
            forbidden_rate=Estimate.from_dict(d.get("forbidden_rate")),
            duplicate_rate=Estimate.from_dict(d.get("duplicate_rate")),
            false_success_rate=Estimate.from_dict(d.get("false_success_rate")),
            n_fault_runs=d.get("n_fault_runs", 0), efficiency=d.get("efficiency"),
            routing=d.get("routing"), tool_confusion=dict(d.get("tool_confusion") or {}),
        )


@dataclass(frozen=True)
class Scorecard:
    """The result of scoring a suite: ``suite`` figures, ``cases``, ``runs``, the source's
    ``recorded_reward`` (None when it records none), ``problems`` (unknown case ids, cases
    without traces, reader problems), and ``meta`` (source, seed, trajcheck version).

    ``to_dict``/``from_dict``/``to_json``/``load`` round-trip; the JSON form is described
    by ``trajcheck/schemas/scorecard.schema.json`` (``validate_scorecard_json``).
    """

    suite: SuiteMetrics
    cases: tuple[CaseResult, ...] = ()
    runs: tuple[RunResult, ...] = ()
    recorded_reward: RecordedReward | None = None
    problems: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (see ``trajcheck/schemas/scorecard.schema.json``)."""
        return {
            "schema_version": self.schema_version,
            "meta": copy.deepcopy(self.meta),
            "suite": self.suite.to_dict(),
            "recorded_reward": None if self.recorded_reward is None else self.recorded_reward.to_dict(),
            "cases": [c.to_dict() for c in self.cases],
            "runs": [r.to_dict() for r in self.runs],
            "problems": list(self.problems),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scorecard:
        """Inverse of ``to_dict``; raises ``TrajcheckError`` when ``d`` is not a scorecard."""
        if not isinstance(d, Mapping) or "suite" not in d or "runs" not in d:
            raise TrajcheckError("not a trajcheck scorecard (expected keys 'suite' and 'runs')")
        try:
            return cls(
                suite=SuiteMetrics.from_dict(d["suite"]),
                cases=tuple(CaseResult.from_dict(c) for c in d.get("cases") or ()),
                runs=tuple(RunResult.from_dict(r) for r in d.get("runs") or ()),
                recorded_reward=RecordedReward.from_dict(d.get("recorded_reward")),
                problems=tuple(d.get("problems") or ()),
                meta=dict(d.get("meta") or {}),
                schema_version=str(d.get("schema_version", SCHEMA_VERSION)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise TrajcheckError(f"malformed scorecard: {e!r}") from e

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 2) -> str:
        """The JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    def write_json(self, path: str | Path, *, indent: int = 2) -> None:
        """Write ``to_json(indent=indent)``'s text and a newline to ``path``, the same bytes,
        one case and one run at a time: the JSON of a scorecard over hundreds of thousands of
        cases is never held in memory whole.

        The cyclic garbage collector is paused while writing (when it was on): every object
        made here is a row's dicts, lists and strings, freed by reference counting, and in
        an eval's full heap its passes cost about as much as the writing itself."""
        was_on = gc.isenabled()
        gc.disable()
        try:
            self._write_json(path, indent)
        finally:
            if was_on:
                gc.enable()

    def _write_json(self, path: str | Path, indent: int) -> None:
        def dumps(v: Any, level: int) -> str:
            text = _indented(v, indent)
            # JSON text escapes every newline inside strings: each one here starts a line
            return text.replace("\n", "\n" + " " * (indent * level)) if level else text

        pad = " " * indent
        items = list(self.to_dict_head().items())
        with Path(path).open("w", encoding="utf-8") as out:
            out.write("{")
            for i, (k, v) in enumerate(items):
                out.write(("," if i else "") + "\n" + pad + json.dumps(k, ensure_ascii=False) + ": ")
                rows: tuple[Any, ...] | None = (self.cases if k == "cases" else self.runs if k == "runs"
                                                else None)
                if rows is None or not rows:
                    out.write(dumps(v, 1))
                    continue
                out.write("[")
                # rows a batch at a time: one encoder call per batch, not per row
                size = 32 if k == "runs" else 512
                json_rows = getattr(rows, "json_rows", None)  # aggregate.CaseRows: from columns
                # the keys where its rows may hold floats, when it vouches every other value
                # is a plain JSON value (aggregate.CaseRows.json_float_keys)
                fkeys = rows.json_float_keys() if json_rows is not None else None  # type: ignore[attr-defined]
                for j in range(0, len(rows), size):
                    batch = json_rows(j, j + size) if json_rows is not None else [
                        row.json_view() if isinstance(row, RunResult) else row.to_dict()
                        for row in rows[j:j + size]]
                    text = _indented_rows(batch, indent, _plain_floats(batch) if fkeys is None
                                          else [d[fk] for d in batch for fk in fkeys])
                    if text is None:
                        text = "".join(("," if q else "") + "\n" + pad * 2 + dumps(d, 2)
                                       for q, d in enumerate(batch))
                    out.write(("," if j else "") + text)
                out.write("\n" + pad + "]")
            out.write("\n}\n")

    def to_dict_head(self) -> dict[str, Any]:
        """``to_dict`` with empty ``cases`` and ``runs`` lists (``write_json`` fills them)."""
        return {
            "schema_version": self.schema_version,
            "meta": copy.deepcopy(self.meta),
            "suite": self.suite.to_dict(),
            "recorded_reward": None if self.recorded_reward is None else self.recorded_reward.to_dict(),
            "cases": [],
            "runs": [],
            "problems": list(self.problems),
        }

    @classmethod
    def load(cls, path: str | Path) -> Scorecard:
        """Read a scorecard JSON file; raises ``TrajcheckError`` naming the file when unreadable."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise TrajcheckError(f"{path}: cannot read scorecard JSON ({e})") from e
        try:
            return cls.from_dict(data)
        except TrajcheckError as e:
            raise TrajcheckError(f"{path}: {e}") from e

    def run(self, run_id: str) -> RunResult:
        """The run with this id; raises ``KeyError`` when absent."""
        for r in self.runs:
            if r.run_id == run_id:
                return r
        raise KeyError(run_id)


try:
    import orjson as _orjson

    _ORJSON_OPTS = (_orjson.OPT_NON_STR_KEYS | _orjson.OPT_PASSTHROUGH_DATACLASS
                    | _orjson.OPT_PASSTHROUGH_DATETIME | _orjson.OPT_PASSTHROUGH_SUBCLASS)
except ImportError:  # pragma: no cover - orjson is a core dependency
    _orjson = None  # type: ignore[assignment]
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _indented(v: Any, indent: int) -> str:
    """``json.dumps(v, indent=indent, ensure_ascii=False, default=str)``, the same text.

    With an indent, ``json`` encodes in pure Python; orjson writes the same layout (for
    2 spaces) in C but may spell some values differently (a float as ``1e-07`` or ``1e-7``,
    NaN as ``null``, big integers not at all). So orjson's compact text is compared with
    the ``json`` C encoder's compact text of the same value: when they are equal, every
    value is spelled alike and orjson's indented text is ``json``'s; otherwise ``json``
    writes it."""
    if _orjson is not None and indent == 2:
        try:
            if _orjson.dumps(v, default=str, option=_ORJSON_OPTS).decode() == _COMPACT.encode(v):
                return _orjson.dumps(v, default=str, option=_ORJSON_OPTS | _orjson.OPT_INDENT_2).decode()  # type: ignore[no-any-return]
        except (TypeError, ValueError):  # e.g. an int past 64 bits, a lone surrogate
            pass
    return json.dumps(v, indent=indent, ensure_ascii=False, default=str)


def _plain_floats(v: Any) -> list[float] | None:
    """Every float in ``v`` (depth first), when ``v`` holds nothing but dicts with exact
    ``str`` keys, lists, tuples and exact ``str``, ``int``, ``bool``, ``float`` and None
    values -- what ``_indented_rows`` needs vouched; None otherwise (or nested past the
    recursion limit). A Python walk takes about a third of the ``json`` encoder's pass
    over a run's transcript, which escapes every character."""
    out: list[float] = []
    try:
        return out if _walk(v, out) else None
    except RecursionError:
        return None


def _walk(v: Any, out: list[float]) -> bool:
    t = type(v)
    if t is dict:
        for k in v:
            if type(k) is not str:
                return False
        items: Any = v.values()
    elif t is list or t is tuple:
        items = v
    elif t is float:
        out.append(v)
        return True
    else:
        return t is str or t is int or v is None or t is bool
    for x in items:
        tx = type(x)
        if tx is str or tx is int or x is None or tx is bool:
            continue
        if tx is float:
            out.append(x)
        elif not _walk(x, out):
            return False
    return True


def _indented_rows(rows: list[Any], indent: int, floats: list[Any] | None = None) -> str | None:
    """The rows of a list two levels down in ``json.dumps(..., indent=indent)``'s text,
    each after a newline and joined by commas -- what writing each row alone at that level
    gives -- from one orjson call when orjson spells every value of the batch as ``json``
    does (``_indented``); None otherwise (the caller writes the rows one by one).

    ``floats``: given when the caller vouches that the rows hold nothing but dicts with
    exact ``str`` keys, lists, tuples, and exact ``str``, ``int``, ``bool`` and None values,
    besides the floats (or None) listed, which are every float of the rows (``_plain_floats``
    finds them in any rows, ``aggregate.CaseRows`` knows where its are). On such values orjson and
    ``json`` can differ only in a float's spelling (an exponent, NaN or infinity), an integer
    past 64 bits or a lone surrogate; orjson refuses the last two (TypeError), so comparing
    the listed floats' compact texts proves the batch's text is ``json``'s, without the
    ``json`` encoder's pass over every row. Every other character is spelled alike: the
    escapes of each code point are the same in both (tests/test_scorecard_json.py checks
    them all)."""
    if _orjson is None or indent != 2:
        return None
    try:
        if floats is not None:
            if _orjson.dumps(floats).decode() != _COMPACT.encode(floats):
                return None
        elif _orjson.dumps(rows, default=str, option=_ORJSON_OPTS).decode() != _COMPACT.encode(rows):
            return None
        text = _orjson.dumps(rows, default=str, option=_ORJSON_OPTS | _orjson.OPT_INDENT_2).decode()
    except (TypeError, ValueError):
        return None
    # "[\n  row,\n  row\n]": each row's lines one level in; two levels wanted
    return "\n  " + text[2:-2].replace("\n", "\n  ")


def scorecard_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``Scorecard.to_dict()``, shipped in the package."""
    p = Path(__file__).parent.parent / "schemas" / "scorecard.schema.json"
    return json.loads(p.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def validate_scorecard_json(data: Mapping[str, Any]) -> None:
    """Validate a scorecard dict against the schema; raises ``SchemaError`` naming the path."""
    import jsonschema

    from ..errors import SchemaError

    v = jsonschema.Draft202012Validator(scorecard_schema())
    errs = sorted(v.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errs:
        # inside a oneOf (null or object) name the object's own fault, not the whole value
        e = jsonschema.exceptions.best_match([errs[0]])
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise SchemaError(f"scorecard JSON invalid at {where}: {e.message}")


__all__ = [
    "AGREEMENT_CELLS",
    "SCHEMA_VERSION",
    "CaseResult",
    "CheckAgreement",
    "Disagreement",
    "Estimate",
    "RecordedReward",
    "RunResult",
    "Scorecard",
    "SuiteMetrics",
    "fmt_num",
    "scorecard_schema",
    "validate_scorecard_json",
]
