"""Produce the host exports that carry their own references, with each host's own runner,
offline (``make host-exports``; the artifacts are committed under tests/data/host_exports and
read by tests/test_host_exports.py, so CI never runs a host).

The refund-desk runs and cases (``examples/refund_desk``: an optional lookup, a duplicate
refund, a 503 failure then a retry, a parallel pair, order kept/broken, a forbidden call, a
no-tool question, non-ASCII text) go through each host's converter and evaluate loop with
trajcheck's adapter metrics beside the host's own metric:

* DeepEval 4.x ``evaluate`` (``ToolCorrectnessMetric`` + ``TrajcheckMetric`` rows, no LLM) writes
  ``.deepeval/.latest_run_full.json`` in a scratch directory: copied to
  ``deepeval_latest_run_full.json``; each test case carries its own metric scores there.
* RAGAS 0.4 ``evaluate`` on an ``EvaluationDataset`` of ``MultiTurnSample``s
  (``TrajcheckRagasMetric`` rows): the dataset as RAGAS exports it (``to_jsonl``) is
  ``ragas_dataset.jsonl``; RAGAS's result table (one row per sample, a column per metric)
  is ``ragas_scores.json``.
* Inspect AI ``eval`` of the samples, solver and mockllm model of
  ``examples/inspect_ai/refund_task.py`` with the KEYS scorers, two epochs,
  its own ``.eval`` log: ``inspect_refund_desk.eval`` (each sample's ``metadata["trajcheck"]`` holds its
  reference; the trajcheck scorers' values are in the log).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "host_exports"
sys.path.insert(0, str(ROOT / "examples" / "refund_desk"))
sys.path.insert(0, str(ROOT / "examples" / "inspect_ai"))

#: the adapter metrics run in every host (no reference beyond the case's own)
KEYS = ("tool_call_f1", "tool_call_precision", "tool_call_recall", "argument_accuracy",
        "task_success", "composite", "duplicate_call_rate", "unnecessary_call_rate",
        "forbidden_calls", "ordering_accuracy")


def deepeval() -> None:
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    os.environ.setdefault("OPENAI_API_KEY", "sk-offline")  # ToolCorrectness builds a client it never calls
    from data import CASES, RUNS, expected, settings  # type: ignore[import-not-found]
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
    from deepeval.metrics import ToolCorrectnessMetric

    from trajcheck.adapters.deepeval import TrajcheckMetric, test_case_from_trace

    cases = [test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
             for cid, c in CASES.items()]
    metrics = [ToolCorrectnessMetric()] + [TrajcheckMetric(k) for k in KEYS]
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            evaluate(cases, metrics=metrics, async_config=AsyncConfig(run_async=False),
                     display_config=DisplayConfig(show_indicator=False, print_results=False))
        finally:
            os.chdir(here)
        shutil.copy(Path(d) / ".deepeval" / ".latest_run_full.json", OUT / "deepeval_latest_run_full.json")


def ragas() -> None:
    from data import CASES, RUNS, expected, settings  # type: ignore[import-not-found]
    from ragas import EvaluationDataset, evaluate

    from trajcheck.adapters.ragas import TrajcheckRagasMetric, sample_from_trace

    samples = [sample_from_trace(RUNS[cid], reference_tool_calls=expected(c), **settings(c))
               for cid, c in CASES.items()]
    ds = EvaluationDataset(samples=samples)
    res = evaluate(ds, metrics=[TrajcheckRagasMetric(metric=k) for k in KEYS], show_progress=False,
                   raise_exceptions=True)
    ds.to_jsonl(str(OUT / "ragas_dataset.jsonl"))
    rows = []
    for r in res.scores:
        rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    (OUT / "ragas_scores.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def inspect() -> None:
    import refund_task  # type: ignore[import-not-found]
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.solver import generate

    from trajcheck.adapters.inspect_ai import trajcheck_scorer

    base = refund_task.refund_desk(epochs=2)
    # the task's samples, solver and mock model, scored by the KEYS rows only (the full task
    # scores every dialect's every mode too: a 6 MB log)
    small = Task(dataset=base.dataset, solver=[refund_task.replay_setup(), generate(tool_calls="loop")],
                 scorer=[trajcheck_scorer(k) for k in KEYS], epochs=2, model=base.model)
    with tempfile.TemporaryDirectory() as d:
        logs = inspect_eval(small, log_dir=d, display="none", log_format="eval")
        assert logs[0].status == "success", logs[0].error
        shutil.copy(logs[0].location, OUT / "inspect_refund_desk.eval")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    which = sys.argv[1:] or ["deepeval", "ragas", "inspect"]
    for w in which:
        {"deepeval": deepeval, "ragas": ragas, "inspect": inspect}[w]()
        print("wrote", w)
