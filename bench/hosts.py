"""Adapter overhead inside each host's own runner: trajcheck's metric against the host's own
deterministic tool metric on the same cases, in the same runner call (the issue's target is
at most 1.1x). One command:

    .venv/bin/python bench/hosts.py [--runner-n 200] [--rounds 15]

Pairs (one runner call each, over the same ``--runner-n`` cases of ``bench/workload.py``):

* ``ragas.evaluate``: RAGAS's legacy ``ToolCallF1`` vs ``TrajcheckToolCallF1``;
* ``deepeval.evaluate`` (async and sync): ``ToolCorrectnessMetric`` vs ``ToolCallF1Metric``;
* LangSmith ``Client.evaluate(upload_results=False)``: agentevals' trajectory match
  (superset, strict) vs ``TrajcheckEvaluator`` in the same mode, and vs
  ``TrajcheckEvaluator("tool_call_f1")`` (LangSmith has no F1 of its own; agentevals'
  superset match is its nearest deterministic tool metric).

The machine these runs share has ~8 other jobs on 2 cores, so wall time moves by 2-5x from one
pass to the next. Each round therefore runs the built-in and the adapter back to back
(alternating which goes first) and the figure kept is the best of ``--rounds`` in process CPU
time (``time.process_time``: all threads of this process, not the other jobs'), with the
garbage collector paused; the ratio is adapter / built-in of those bests. Beside it: the
median over rounds of each round's own adapter / built-in CPU ratio (the two runs of a round
see about the same load), and the ratio of the wall-clock bests.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as R  # noqa: E402  (bench/run.py: network guard, environment)
import workload as W  # noqa: E402

TARGET = 1.10


def _once(fn: Callable[[], Any]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call, GC paused, the runner's printing discarded."""
    gc.collect()
    gc.disable()
    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), \
                contextlib.redirect_stderr(null):
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            return time.process_time() - c0, time.perf_counter() - w0
    finally:
        gc.enable()


def pair(builtin: Callable[[], Any], adapter: Callable[[], Any], rounds: int) -> dict[str, float]:
    """Best CPU and wall seconds of each side over ``rounds`` interleaved rounds (one warm-up
    call each first)."""
    _once(builtin)
    _once(adapter)
    best = {"b_cpu": float("inf"), "b_wall": float("inf"), "a_cpu": float("inf"), "a_wall": float("inf")}
    paired: list[float] = []
    for r in range(rounds):
        order = (("b", builtin), ("a", adapter)) if r % 2 == 0 else (("a", adapter), ("b", builtin))
        got = {}
        for side, fn in order:
            cpu, wall = _once(fn)
            got[side] = cpu
            best[f"{side}_cpu"] = min(best[f"{side}_cpu"], cpu)
            best[f"{side}_wall"] = min(best[f"{side}_wall"], wall)
        paired.append(got["a"] / got["b"])
    # the median of the per-round ratios: each round's two runs saw about the same load
    best["median_ratio"] = statistics.median(paired)
    return best


def ragas_pairs(items: list[dict[str, Any]]) -> list[tuple[str, str, Callable[[], Any], Callable[[], Any]]]:
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics._tool_call_f1 import ToolCallF1 as LegacyF1

    from trajcheck.adapters.ragas import TrajcheckToolCallF1

    ds = EvaluationDataset(samples=[W.to_ragas_sample(it) for it in items])

    def run(make: Callable[[], Any]) -> Callable[[], Any]:
        return lambda: evaluate(ds, metrics=[make()], show_progress=False, raise_exceptions=True)
    return [("RAGAS", "ragas.evaluate: ToolCallF1 (legacy) vs TrajcheckToolCallF1",
             run(LegacyF1), run(TrajcheckToolCallF1))]


def deepeval_pairs(items: list[dict[str, Any]], folder: str) -> list[tuple[str, str, Callable[[], Any], Callable[[], Any]]]:
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.test_case import ToolCallParams

    from trajcheck.adapters.deepeval import ToolCallF1Metric

    cases = [W.to_deepeval(it, name=it["id"]) for it in items]
    quiet = DisplayConfig(show_indicator=False, print_results=False)
    os.environ["DEEPEVAL_RESULTS_FOLDER"] = folder

    def run(make: Callable[[], Any], run_async: bool) -> Callable[[], Any]:
        return lambda: evaluate(cases, [make()], display_config=quiet,
                                async_config=AsyncConfig(run_async=run_async),
                                cache_config=CacheConfig(write_cache=False, use_cache=False))

    def theirs() -> Any:
        return ToolCorrectnessMetric(evaluation_params=[ToolCallParams.INPUT_PARAMETERS])
    return [("DeepEval", f"deepeval.evaluate({'async' if a else 'sync'}): ToolCorrectnessMetric vs "
             "ToolCallF1Metric", run(theirs, a), run(ToolCallF1Metric, a)) for a in (True, False)]


def langsmith_pairs(items: list[dict[str, Any]]) -> list[tuple[str, str, Callable[[], Any], Callable[[], Any]]]:
    from agentevals.trajectory.match import create_trajectory_match_evaluator
    from langsmith import Client
    from langsmith.schemas import Example

    from trajcheck.adapters.langsmith import TrajcheckEvaluator

    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    ds_id = uuid.uuid4()
    examples = [Example(id=uuid.uuid4(), dataset_id=ds_id, inputs={"input": it["input"], "i": k},
                        outputs={"messages": W.openai_messages(it, "expected")})
                for k, it in enumerate(items)]
    outputs = [{"messages": W.openai_messages(it, "calls")} for it in items]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return outputs[inputs["i"]]

    def run(make: Callable[[], Any]) -> Callable[[], Any]:
        return lambda: client.evaluate(target, data=examples, evaluators=[make()],
                                       upload_results=False, max_concurrency=0)

    def agentevals(mode: str) -> Callable[[], Any]:
        return run(lambda: create_trajectory_match_evaluator(trajectory_match_mode=mode))
    return [
        ("LangSmith", "evaluate: agentevals superset vs TrajcheckEvaluator trajectory_match superset",
         agentevals("superset"),
         run(lambda: TrajcheckEvaluator("trajectory_match", mode="superset", dialect="agentevals"))),
        ("LangSmith", "evaluate: agentevals strict vs TrajcheckEvaluator trajectory_match strict",
         agentevals("strict"),
         run(lambda: TrajcheckEvaluator("trajectory_match", mode="strict", dialect="agentevals"))),
        ("LangSmith", "evaluate: agentevals superset vs TrajcheckEvaluator tool_call_f1",
         agentevals("superset"), run(lambda: TrajcheckEvaluator("tool_call_f1"))),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runner-n", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("ragas", "deepeval", "langsmith"), default=None)
    args = ap.parse_args(argv)
    R.install_network_guard()
    items = W.make_workload(args.runner_n, args.seed)
    print(f"== adapter / built-in inside each runner, {args.runner_n} cases, best of {args.rounds} "
          f"interleaved rounds (target <= {TARGET:.2f}x)")
    print(f"  {'host':<10} {'pair':<84} {'built-in ms':>11} {'adapter ms':>10} {'CPU ratio':>9} "
          f"{'median':>7} {'wall ratio':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        old = os.getcwd()
        os.chdir(tmp)
        try:
            groups = {"ragas": lambda: ragas_pairs(items),
                      "deepeval": lambda: deepeval_pairs(items, str(Path(tmp) / "results")),
                      "langsmith": lambda: langsmith_pairs(items)}
            for name, make in groups.items():
                if args.only not in (None, name):
                    continue
                for host, label, builtin, adapter in make():
                    b = pair(builtin, adapter, args.rounds)
                    ratio = b["a_cpu"] / b["b_cpu"]
                    print(f"  {host:<10} {label:<84} {b['b_cpu'] * 1e3:11.1f} {b['a_cpu'] * 1e3:10.1f} "
                          f"{ratio:8.2f}x {b['median_ratio']:6.2f}x {b['a_wall'] / b['b_wall']:9.2f}x  "
                          f"{'ok' if ratio <= TARGET else 'ABOVE TARGET'}", flush=True)
        finally:
            os.chdir(old)
            os.environ.pop("DEEPEVAL_RESULTS_FOLDER", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
