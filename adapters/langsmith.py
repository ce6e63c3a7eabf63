"""trajcheck's metrics as LangSmith 0.15.x evaluators (row and summary).

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
  Constructor settings win. ``before_state``/``after_state`` for final-state metrics are
  read from the outputs first, then the reference.
* ``inputs`` (``example.inputs``): the case input is ``inputs["input"]`` (or the only value,
  or the whole dict); the case id is the example id.

Feedback keys: ``key`` (default ``trajcheck_<metric>``); ``tool_call_f1`` also emits
``<key>_precision`` and ``<key>_recall``.

Summary evaluators (``pass_k_summary``): pass^k and pass@k over ``num_repetitions``,
grouping runs by example id; a trial succeeds when the row metric's ``passed`` is True;
each comes with its percentile bootstrap interval over tasks (``metrics.reliability``).

Mode names (``metric="trajectory_match"``): neutral names, or a framework's with
``dialect`` via ``trajcheck.metrics.trajectory.normalize_mode``; agentevals/openevals
``trajectory_match_mode`` names map as ``strict`` -> ``exact`` (flattened calls; agentevals
compares the message skeleton), ``unordered`` -> ``unordered``, ``superset`` -> ``superset``,
``subset`` -> ``subset`` (``dialect="agentevals"`` or ``"openevals"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    from langsmith.evaluation import EvaluationResult, EvaluationResults, RunEvaluator
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "trajcheck.adapters.langsmith needs langsmith 0.15: pip install 'trajcheck[langsmith]'"
    ) from _e

from trajcheck.errors import DatasetError, MetricInputError, TrajcheckError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _convert, _metrics

__all__ = ["TrajcheckEvaluator", "pass_k_summary", "log_feedback", "to_trajcheck",
           "agentevals_mode"]


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


def to_trajcheck(inputs: Any, outputs: Any, reference_outputs: Any, *,
                 settings: Mapping[str, Any] | None = None, match: Mapping[str, Any] | None = None,
                 case_id: str = "langsmith") -> tuple[Trajectory, Case]:
    """``(Trajectory, Case)`` for one LangSmith row (see the module doc for the shapes)."""
    traj = _convert.any_trajectory(outputs, where="outputs")
    ref = reference_outputs if reference_outputs is not None else {}
    if not isinstance(ref, Mapping):
        expected = _convert.expected_from_reference(ref)
        ref_settings: Mapping[str, Any] = {}
    else:
        ref_settings = ref
        if "expected_calls" in ref:
            expected = _convert.expected_from_reference(ref["expected_calls"],
                                                        where="reference_outputs.expected_calls")
        elif any(k in ref for k in ("trajectory", "messages", "output")):
            expected = _convert.expected_from_reference(
                {k: ref[k] for k in ("trajectory", "messages", "output") if k in ref})
        else:
            expected = ()
    merged_match = dict(ref_settings.get("match") or {}) if isinstance(ref_settings, Mapping) else {}
    merged_match.update(match or {})
    case = _convert.build_case(case_id, _case_input(inputs), (),
                               {k: v for k, v in ref_settings.items() if k != "expected_calls"},
                               settings)
    expected = _convert.apply_match(case.expected_calls or expected, merged_match)
    from dataclasses import replace

    return traj, replace(case, expected_calls=expected)


def log_feedback(result: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> None:
    """Log an evaluator's result dict(s) with ``langsmith.testing.log_feedback`` (inside a
    ``@pytest.mark.langsmith`` test; a no-op there when ``LANGSMITH_TEST_TRACKING=false``)."""
    from langsmith import testing as t

    items = result.get("results", [result]) if isinstance(result, Mapping) else list(result)
    for r in items:
        t.log_feedback(key=r["key"], score=r.get("score"), comment=r.get("comment"))


class TrajcheckEvaluator(RunEvaluator):  # type: ignore[misc]
    """One trajcheck metric as a LangSmith evaluator.

    ``metric``: ``tool_call_f1``, ``trajectory_match``, ``argument_correctness``,
    ``schema_validity``, ``forbidden``, ``final_state`` or ``composite``
    (``trajcheck.adapters._metrics``). ``key``: feedback key (default
    ``trajcheck_<metric>``). ``mode``/``dialect``: for ``trajectory_match``. Case settings
    (``optional_calls``, ``forbidden_calls``, ``forbidden_sequences``, ``precedence``,
    ``args_mode``, ``expected_final_state``, ``response_must_include``, ``max_steps``,
    ``optimal_steps``, ``tools``) override the reference's; ``match`` adds argument
    matchers; ``weights``, ``ignore``, ``semantic_scorer``, ``judge`` as in the core.

    Errors: a trajcheck error (bad trajectory, bad case) propagates; LangSmith then records
    error feedback under this evaluator's keys.
    """

    def __init__(self, metric: str = "tool_call_f1", *, key: str | None = None,
                 mode: str = "superset", dialect: str | None = None,
                 match: Mapping[str, Mapping[str, Any]] | None = None,
                 weights: Mapping[str, float] | None = None, ignore: Sequence[str] | None = None,
                 semantic_scorer: Callable[[str, str], float] | None = None,
                 judge: Callable[[str, Any, Any], bool] | None = None,
                 **settings: Any) -> None:
        if metric not in _metrics.KINDS:
            raise MetricInputError(f"unknown trajcheck metric {metric!r} (known: {', '.join(_metrics.KINDS)})")
        bad = sorted(set(settings) - set(_convert.CASE_KEYS))
        if bad:
            raise MetricInputError(f"TrajcheckEvaluator: unknown setting {bad[0]!r}")
        from trajcheck.metrics.trajectory import normalize_mode

        normalize_mode(mode, dialect)  # unknown names fail here
        self.metric, self.key = metric, key or f"trajcheck_{metric}"
        self.mode, self.dialect, self.match = mode, dialect, match
        self.weights, self.ignore = weights, ignore
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
        traj, case = to_trajcheck(inputs, outputs, reference_outputs, settings=self.settings,
                                  match=self.match, case_id=case_id)
        before = after = None
        for src in (outputs, reference_outputs):
            if isinstance(src, Mapping):
                before = before if before is not None else src.get("before_state")
                after = after if after is not None else src.get("after_state")
        if self.metric == "final_state" and (before is None or after is None):
            raise DatasetError(f"case {case.id!r}: final_state needs before_state and after_state "
                               "in the outputs or reference outputs")
        return _metrics.compute(self.metric, traj, case, mode=self.mode, dialect=self.dialect,
                                args_mode=self.settings.get("args_mode"),
                                semantic_scorer=self.semantic_scorer, judge=self.judge,
                                weights=self.weights, before_state=before, after_state=after,
                                ignore=self.ignore)

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

    def evaluate_run(self, run: Any, example: Any = None,
                     evaluator_run_id: Any = None) -> EvaluationResult | EvaluationResults:
        """LangSmith's row hook: reads ``run.outputs``, ``example.outputs``/``inputs``."""
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


def pass_k_summary(evaluator: TrajcheckEvaluator, k: int | None = None, *,
                   n_boot: int = 2000, seed: int = 0,
                   confidence: float = 0.95) -> Callable[[Sequence[Any], Sequence[Any]], dict[str, Any]]:
    """A LangSmith summary evaluator ``f(runs, examples)`` giving pass^k and pass@k.

    Runs are grouped by ``example.id`` (``num_repetitions`` gives each example n runs); a
    trial succeeds when ``evaluator``'s core result has ``passed`` True (a row that raises a
    trajcheck error counts as a failure). ``k`` defaults to the smallest n. Returns
    ``{"results": [{"key": "pass^k", "score", "comment"}, {"key": "pass@k", ...}]}`` where
    ``k`` is the number, the comments give the bootstrap interval over tasks
    (``metrics.reliability.bootstrap_ci``, seeded). Definitions: pass^k = mean C(c,k)/C(n,k),
    pass@k = mean 1 - C(n-c,k)/C(n,k) (``metrics.reliability``); n < k raises
    ``MetricInputError`` naming the task.
    """
    from trajcheck.metrics.reliability import bootstrap_ci, pass_at_k, pass_hat_k

    def summary(runs: Sequence[Any], examples: Sequence[Any]) -> dict[str, Any]:
        trials: dict[str, list[bool]] = {}
        for run, ex in zip(runs, examples):
            ex_id = str(getattr(ex, "id", None))
            try:
                res = evaluator.compute(inputs=getattr(ex, "inputs", None), outputs=run.outputs,
                                        reference_outputs=getattr(ex, "outputs", None), case_id=ex_id)
                ok = res.passed is True
            except TrajcheckError:
                ok = False
            trials.setdefault(ex_id, []).append(ok)
        kk = k if k is not None else min(len(v) for v in trials.values())
        out = []
        for name, fn in (("pass^", pass_hat_k), ("pass@", pass_at_k)):
            est = fn(trials, kk)
            ci = bootstrap_ci(trials, lambda r, fn=fn: fn(r, kk), n_boot=n_boot, seed=seed,
                              confidence=confidence, name=f"{name}{kk}")
            out.append({"key": f"{name}{kk}", "score": est,
                        "comment": f"{name}{kk} = {est:.4f} over {len(trials)} tasks; "
                                   f"{confidence:.0%} bootstrap CI [{ci.lo:.4f}, {ci.hi:.4f}] "
                                   f"(seed {seed}, {n_boot} resamples of tasks)"})
        return {"results": out}

    summary.__name__ = f"{evaluator.key}_pass_k"
    return summary
