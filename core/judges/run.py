"""Judges as part of ``trajcheck eval``: a model spec, judging every run, per-check pass rates.

``model_from_spec`` turns ``--judge MODEL_SPEC`` into a judge model; ``judge_runs`` runs the
trajectory judge (seed 000 §3.3) on every run and the task-completion judge on runs whose
case has ``metadata.success_criteria``, and ``summarise`` gives each check's pass rate over
the runs where it applied with a Wilson interval (seed 000 §3.3: "report the pass rate for
each binary check"). The summary goes into ``Scorecard.meta["judges"]``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import JudgeError
from ..model import Case, Trajectory
from .audit import RUBRIC_VERSION, CachedModel, model_identity
from .models import OpenAICompatibleModel, as_model
from .rubrics import Verdict, judge_task_completion, judge_trajectory


def model_from_spec(spec: str) -> Any:
    """The judge model for ``spec``.

    ``anthropic:MODEL``: :class:`~trajcheck.judges.anthropic_model.AnthropicModel` (the
    official SDK; key and base URL from ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``).
    ``http(s)://HOST/v1#MODEL``: an OpenAI-compatible chat-completions endpoint and model
    name (API key from ``OPENAI_API_KEY`` when set; temperature 0). ``module:attr``: a Python
    object importable as ``attr`` of ``module`` (a model with complete/acomplete, a LangChain
    or DeepEval model, or a function from messages to text). Raises JudgeError for any other
    shape, a missing ``#MODEL``, or an import that fails."""
    if not isinstance(spec, str) or not spec.strip():
        raise JudgeError(f"--judge: expected a model spec, got {spec!r}")
    if spec.startswith(("http://", "https://")):
        url, sep, name = spec.partition("#")
        if not sep or not name:
            raise JudgeError(f"--judge {spec!r}: an endpoint needs its model name after '#', "
                             "e.g. http://127.0.0.1:8000/v1#judge-model")
        return OpenAICompatibleModel(url, name, api_key=os.environ.get("OPENAI_API_KEY"))
    if spec.startswith("anthropic:"):
        from .anthropic_model import AnthropicModel

        name = spec[len("anthropic:"):]
        if not name:
            raise JudgeError(f"--judge {spec!r}: expected anthropic:MODEL")
        return AnthropicModel(name)
    mod, sep, attr = spec.partition(":")
    if not sep or not mod or not attr:
        raise JudgeError(f"--judge {spec!r}: expected http(s)://HOST/v1#MODEL or module:attr")
    try:
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise JudgeError(f"--judge {spec!r}: cannot import: {type(e).__name__}: {e}") from e
    return as_model(obj)


def judge_runs(model: Any, runs: Iterable[Trajectory], cases: Mapping[str, Case], *,
               error_pattern: Any = None) -> list[dict[str, Any]]:
    """One row per run: ``{"run_id", "case_id", "trial", "verdicts": [Verdict...]}``. Each run
    gets the trajectory judge (with its case's tools and expected calls when the case is
    known) and, when its case has ``metadata["success_criteria"]``, the task-completion
    judge. A judge failure is a verdict with ``error`` set, never an exception."""
    rows = []
    for t in runs:
        cid = t.metadata.get("case_id")
        case = cases.get(str(cid)) if cid is not None else None
        vs = [judge_trajectory(model, t, case, error_pattern=error_pattern)]
        if case is not None and case.metadata.get("success_criteria"):
            vs.append(judge_task_completion(model, t, case))
        rows.append({"run_id": t.metadata.get("run_id"), "case_id": cid,
                     "trial": t.metadata.get("trial"), "verdicts": vs})
    return rows


def judge_usage(model: Any, price: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """The judge's own usage, apart from the agent's: the adapter's ``usage`` counts
    (OpenAICompatibleModel, AnthropicModel; None for an adapter that keeps none) with
    ``cost_usd``: from ``price`` = (USD per million input tokens, USD per million output
    tokens) when given (``cost_source`` "price"), else the cost the server reported
    (OpenAI-compatible gateways' ``usage.cost``; "reported"), else None. Replies served from
    the cache cost nothing and count no tokens."""
    inner = getattr(model, "inner", model)
    usage = getattr(inner, "usage", None)
    if not isinstance(usage, dict):
        return None
    out: dict[str, Any] = {k: usage.get(k, 0) for k in ("input_tokens", "output_tokens", "calls")}
    reported = usage.get("reported_cost_usd")
    if price is not None:
        out["cost_usd"] = (out["input_tokens"] * price[0] + out["output_tokens"] * price[1]) / 1e6
        out["cost_source"] = "price"
        out["price_per_mtok"] = [price[0], price[1]]
    elif isinstance(reported, (int, float)):
        out["cost_usd"], out["cost_source"] = float(reported), "reported"
    else:
        out["cost_usd"], out["cost_source"] = None, None
    return out


def parse_price(spec: str | None) -> tuple[float, float] | None:
    """``--judge-price IN,OUT`` (USD per million input / output tokens, each >= 0) as a
    pair; None for None. Raises JudgeError for any other shape."""
    if spec is None:
        return None
    parts = spec.split(",")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        vals = []
    if len(vals) != 2 or any(not (v >= 0.0) or v == float("inf") for v in vals):
        raise JudgeError(f"--judge-price {spec!r}: expected IN,OUT in USD per million input and "
                         "output tokens, e.g. 0.15,0.60")
    return vals[0], vals[1]


def state_checks(scorecard: Any) -> list[tuple[str, str, bool]]:
    """``("outcome", part, passed)`` for each run of ``scorecard`` and each deterministic
    outcome check that applied to it: ``final_state`` (the sandbox's end state against the
    case's ``expected_final_state``) and ``response`` (the final reply's required and
    forbidden text), from ``metrics["outcome"]["parts"]``. Shown beside the transcript
    judges for simulated conversations (seed 000 §7.1: "Final-state check + transcript
    judges")."""
    out = []
    for r in scorecard.runs:
        parts = ((r.metrics or {}).get("outcome") or {}).get("parts") or {}
        for name in ("final_state", "response"):
            if isinstance(parts.get(name), bool):
                out.append(("outcome", name, parts[name]))
    return out


def summarise(model: Any, rows: list[dict[str, Any]], *, price: tuple[float, float] | None = None,
              extra: Iterable[tuple[str, str, bool]] = ()) -> dict[str, Any]:
    """The JSON-ready judge summary for ``Scorecard.meta["judges"]``: ``model`` (identity),
    ``rubric_version``, ``runs``, ``errors`` (verdicts with a judge error, per judge),
    ``cached_replies``, ``usage`` (:func:`judge_usage`: the judge adapter's own tokens, calls
    and cost; None when the adapter keeps none), ``checks`` (per judge and check: ``passed``,
    ``applicable`` = runs where it was answered and applied, ``rate`` = passed / applicable,
    ``interval`` = 95% Wilson interval) and ``verdicts`` (per run). ``extra``: more
    ``(judge, check, passed)`` outcomes to count in ``checks`` (e.g. :func:`state_checks`)."""
    from ..metrics.reliability import wilson_interval

    tally: dict[tuple[str, str], list[int]] = {}
    for judge, check, ok in extra:
        c = tally.setdefault((judge, check), [0, 0])
        c[0] += int(ok)
        c[1] += 1
    errors: dict[str, int] = {}
    cached = 0
    for r in rows:
        for v in r["verdicts"]:
            cached += int(v.audit.get("cached_replies", 0))
            if v.error is not None:
                errors[v.judge] = errors.get(v.judge, 0) + 1
                continue
            for it in v.items if v.judge == "trajectory" else ():
                if it.passed is not None:
                    c = tally.setdefault((v.judge, it.name), [0, 0])
                    c[0] += int(it.passed)
                    c[1] += 1
            if v.judge == "task_completion" and v.passed is not None:
                c = tally.setdefault((v.judge, "all criteria met"), [0, 0])
                c[0] += int(v.passed)
                c[1] += 1
    from .rubrics import TRAJECTORY_CHECKS

    order = {("trajectory", n): i for i, (n, _) in enumerate(TRAJECTORY_CHECKS)}
    checks = []
    for (judge, check), (p, n) in sorted(tally.items(), key=lambda kv: order.get(kv[0], 99)):
        lo, hi = wilson_interval(p, n)
        checks.append({"judge": judge, "check": check, "passed": p, "applicable": n,
                       "rate": p / n, "interval": [lo, hi]})
    return {"model": model_identity(model), "rubric_version": RUBRIC_VERSION, "runs": len(rows),
            "usage": judge_usage(model, price),
            "errors": errors, "cached_replies": cached, "checks": checks,
            "verdicts": [{"run_id": r["run_id"], "case_id": r["case_id"], "trial": r["trial"],
                          "verdicts": [v.to_dict() for v in r["verdicts"]]} for r in rows]}


def judge_scorecard(sc: Any, model: Any, runs: Iterable[Trajectory], cases: Mapping[str, Case], *,
                    error_pattern: Any = None, price: tuple[float, float] | None = None,
                    with_state: bool = False) -> Any:
    """``sc`` (a Scorecard) with ``meta["judges"]``: every run of ``runs`` judged
    (:func:`judge_runs`) and summarised (:func:`summarise`); ``with_state`` also counts the
    scorecard's final-state checks (:func:`state_checks`, for simulated conversations)."""
    from dataclasses import replace

    rows = judge_runs(model, runs, cases, error_pattern=error_pattern)
    summary = summarise(model, rows, price=price, extra=state_checks(sc) if with_state else ())
    return replace(sc, meta={**sc.meta, "judges": summary})


def cached(model: Any, path: str | None) -> Any:
    """``model`` behind a :class:`CachedModel` on ``path`` (None: no cache)."""
    return model if path is None else CachedModel(model, path)


def verdicts_of(rows: list[dict[str, Any]]) -> list[Verdict]:
    """Every verdict of ``judge_runs`` rows, in order."""
    return [v for r in rows for v in r["verdicts"]]


def table_rows(summary: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(judge, check, passed/applicable, rate [lo, hi])`` strings for the reports."""
    out = []
    for c in summary.get("checks", []):
        lo, hi = c["interval"]
        out.append((str(c["judge"]), str(c["check"]), f"{c['passed']}/{c['applicable']}",
                    f"{c['rate']:.3f} [{lo:.3f}, {hi:.3f}]"))
    return out


__all__ = ["cached", "judge_runs", "judge_scorecard", "judge_usage", "model_from_spec",
           "parse_price", "state_checks", "summarise", "table_rows", "verdicts_of"]
