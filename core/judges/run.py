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


def summarise(model: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON-ready judge summary for ``Scorecard.meta["judges"]``: ``model`` (identity),
    ``rubric_version``, ``runs``, ``errors`` (verdicts with a judge error, per judge),
    ``cached_replies``, ``usage`` (the judge adapter's own token counts when it keeps them,
    e.g. AnthropicModel; None otherwise), ``checks`` (per judge and check: ``passed``, ``applicable`` = runs
    where it was answered and applied, ``rate`` = passed / applicable or None,
    ``interval`` = 95% Wilson interval or None) and ``verdicts`` (per run)."""
    from ..metrics.reliability import wilson_interval

    tally: dict[tuple[str, str], list[int]] = {}
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
    inner = getattr(model, "inner", model)
    usage = getattr(inner, "usage", None)  # the judge's own tokens, kept apart from the agent's
    return {"model": model_identity(model), "rubric_version": RUBRIC_VERSION, "runs": len(rows),
            "usage": dict(usage) if isinstance(usage, dict) else None,
            "errors": errors, "cached_replies": cached, "checks": checks,
            "verdicts": [{"run_id": r["run_id"], "case_id": r["case_id"], "trial": r["trial"],
                          "verdicts": [v.to_dict() for v in r["verdicts"]]} for r in rows]}


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


__all__ = ["cached", "judge_runs", "model_from_spec", "summarise", "table_rows", "verdicts_of"]
