"""Suite figures for a promptfoo run: an ``afterAll`` extension hook (promptfoo 0.123.x).

promptfoo assertions score one test at a time; pass^k, pass@k, the success rate and routing
macro-F1 need the whole run (``promptfoo eval --repeat N`` for k > 1). Add to the config::

    extensions:
      - file://trajcheck_summary.py:extension_hook   # from python -m trajcheck.promptfoo init

After the run the hook groups the results into tasks by the test's ``description`` (else its
``vars.case_id``), counts a run as a success when the named score ``task_success`` (a
trajcheck assertion with ``config: {metric: task_success}``, or one labelled ``metric:
task_success``; ``TRAJCHECK_SUMMARY_METRIC`` names another) is 1,
takes the route from trajcheck's provider metadata and the expected route from
``vars.expected_route``, computes the figures with ``trajcheck.adapters._suite`` (core
``metrics.reliability`` and ``metrics.routing``), prints them and writes them to
``trajcheck-summary.json`` (``TRAJCHECK_SUMMARY_OUT``). ``TRAJCHECK_SUMMARY_K`` sets k
(default: the smallest number of runs of a task; the figure's reason says so when tasks
have unequal run counts).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any


def _get(obj: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(p)
    return obj


def records(results: list[Any], metric: str) -> tuple[list[Any], list[str]]:
    """``(RunRecord list, problems)`` from promptfoo's result rows."""
    from trajcheck.adapters._suite import RunRecord
    from trajcheck.model import Case, Trajectory
    from trajcheck.score.suite import run_route

    out, problems = [], []
    for i, r in enumerate(results):
        desc = _get(r, "testCase", "description")
        vars_ = _get(r, "vars") or _get(r, "testCase", "vars") or {}
        task = desc or vars_.get("case_id") or f"test {_get(r, 'testIdx') if _get(r, 'testIdx') is not None else i}"
        named = _get(r, "namedScores") or {}
        if metric not in named:
            problems.append(f"{task}: no named score {metric!r} (add a trajcheck assertion with "
                            f"config metric: {metric}, or name another in TRAJCHECK_SUMMARY_METRIC); "
                            "counted as a failure")
            success = None
        else:
            success = named[metric] == 1
        exp_route = vars_.get("expected_route")
        route = None
        tdict = _get(r, "response", "metadata", "trajectory")
        if exp_route is not None and isinstance(tdict, Mapping):
            route = run_route(Trajectory.from_dict(tdict), Case(id=str(task), input="", expected_route=exp_route))
        out.append(RunRecord(str(task), success, route, exp_route))
    return out, problems


def extension_hook(hook_name: str, context: Mapping[str, Any]) -> None:
    """promptfoo's extension entry point; acts on ``afterAll`` only (returns nothing, so
    promptfoo's context is left as it was)."""
    if hook_name != "afterAll":
        return None
    from trajcheck.adapters._suite import compute_figures

    metric = os.environ.get("TRAJCHECK_SUMMARY_METRIC", "task_success")
    k_env = os.environ.get("TRAJCHECK_SUMMARY_K")
    recs, problems = records(list(context.get("results") or []), metric)
    if not recs:
        return None
    figs = compute_figures(recs, k=int(k_env) if k_env else None)
    data = {"success_metric": metric, "runs": len(recs), "problems": problems,
            "figures": {f: {"name": r.name, "score": r.score, "reason": r.reason}
                        for f, r in figs.items()}}
    path = os.environ.get("TRAJCHECK_SUMMARY_OUT", "trajcheck-summary.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    for r in figs.values():
        print(f"trajcheck {r.name}: {r.score} - {r.reason}", file=sys.stderr)
    if problems:  # in the JSON too; said here so a figure lowered by them is not silent
        print(f"trajcheck summary: {len(problems)} problem(s), first: {problems[0]}", file=sys.stderr)
    return None
