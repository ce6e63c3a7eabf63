"""trajcheck's benchmark against the frameworks' own tool metrics (issue 8), in one process.

Run from the repository root::

    .venv/bin/python bench/run.py            # full run, a few minutes on 2 cores
    .venv/bin/python bench/run.py --quick    # smaller workload, for a smoke test

It prints Markdown tables and writes them to ``bench/last_run.md`` (and the raw figures to
``bench/last_run.json``). Sections:

1. per-trajectory scoring in this process on the seeded workload (``bench/workload.py``,
   2,000 trajectories): trajcheck ``tool_call_prf`` / ``trajectory_match`` (each mode) /
   ``score_trajectory``; RAGAS ToolCallF1 and ToolCallAccuracy (collections ``ascore`` and
   the legacy ``multi_turn_ascore`` that ``ragas.evaluate`` uses); DeepEval
   ``ToolCorrectnessMetric.measure`` (no available tools, so no LLM); agentevals and openevals
   trajectory match evaluators; a naive multiset baseline. Each is timed "from plain dicts"
   (building the library's own objects from the workload dicts is inside the timed loop) and
   "prebuilt" (objects built beforehand). Best of ``--repeat`` passes.
2. the same trajcheck metrics through each adapter inside ``ragas.evaluate()``,
   ``deepeval.evaluate()`` and ``langsmith``'s ``Client.evaluate(upload_results=False)`` on
   200 cases, next to the framework's own deterministic tool metric in the same runner.
3. scaling of ``tool_call_prf`` for n x n calls with an ``ignore`` matcher (every pair is a
   candidate edge), n = 10, 100, 1000.
4. ``trajcheck eval`` on the tau-bench airline file (whole process) and ``python -c "import
   trajcheck"`` (median of runs; ``-X importtime`` self-report).

Network: every outgoing connection and DNS lookup to a non-loopback address is refused and
counted while the frameworks run (the count is printed; it must be 0). No timing is asserted
anywhere; this is a report, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

# Offline, quiet frameworks. The dummy key only lets DeepEval build its (unused) model object.
os.environ.update({
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1", "RAGAS_DO_NOT_TRACK": "true",
    "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TEST_TRACKING": "false", "OPENAI_API_KEY": "sk-offline-dummy",
    "TOKENIZERS_PARALLELISM": "false",
})
os.environ.pop("LANGSMITH_API_KEY", None)
warnings.filterwarnings("ignore")

import workload as W  # noqa: E402

# ----------------------------------------------------------------------------- network guard

NETWORK_ATTEMPTS: list[str] = []


def _is_local(host: Any) -> bool:
    h = str(host)
    return h in ("localhost", "::1", "") or h.startswith("127.")


def install_network_guard() -> None:
    """Refuse (and record) connections and DNS lookups to anything but loopback."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def addr_host(address: Any) -> Any:
        return address[0] if isinstance(address, tuple) else address

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(addr_host(address)):
            NETWORK_ATTEMPTS.append(f"connect {address}")
            raise OSError("network blocked by bench/run.py")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(addr_host(address)):
            NETWORK_ATTEMPTS.append(f"connect_ex {address}")
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *a: Any, **k: Any) -> Any:
        if host is not None and not _is_local(host if not isinstance(host, bytes) else host.decode()):
            NETWORK_ATTEMPTS.append(f"getaddrinfo {host}")
            raise socket.gaierror("network blocked by bench/run.py")
        return real_getaddrinfo(host, *a, **k)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]


# ----------------------------------------------------------------------------- timing


def best_rate(fn: Callable[[], list[Any]], n: int, repeat: int) -> tuple[float, list[Any]]:
    """(items per second of the fastest of ``repeat`` passes, the last pass's scores).

    The garbage collector is paused during a pass (as ``timeit`` does), so the size of the
    prebuilt inputs kept alive does not tax one library more than another."""
    best = float("inf")
    out: list[Any] = []
    for _ in range(repeat):
        out = []
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return n / best, out


def mean_score(scores: Sequence[Any]) -> float | None:
    vals = [float(s) for s in scores if s is not None and not (isinstance(s, float) and s != s)]
    return sum(vals) / len(vals) if vals else None


class Table:
    """Rows of the direct-scoring section."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, metric: str, impl: str, dicts: float | None, prebuilt: float | None,
            scores: Sequence[Any], ref: str | None, note: str = "") -> None:
        self.rows.append({"metric": metric, "impl": impl, "dicts": dicts, "prebuilt": prebuilt,
                          "mean_score": mean_score(scores), "ref": ref, "note": note})
        d = f"{dicts:>10,.0f}/s" if dicts else " " * 12
        p = f"{prebuilt:>10,.0f}/s" if prebuilt else " " * 12
        print(f"  {impl:<48} dicts {d}  prebuilt {p}  mean {mean_score(scores)}", flush=True)

    def get(self, impl: str) -> dict[str, Any]:
        return next(r for r in self.rows if r["impl"] == impl)


# ----------------------------------------------------------------------------- section 1


def naive_multiset_f1(item: dict[str, Any]) -> float:
    """F1 of two multisets of (name, canonical JSON args): no matchers, no matching."""
    def key(c: dict[str, Any]) -> tuple[str, str]:
        return c["name"], json.dumps(c["args"], sort_keys=True)

    p, e = Counter(map(key, item["calls"])), Counter(map(key, item["expected"]))
    tp = sum((p & e).values())
    n_p, n_e = len(item["calls"]), len(item["expected"])
    prec = tp / n_p if n_p else (1.0 if not n_e else 0.0)
    rec = tp / n_e if n_e else 1.0
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def section_direct(items: list[dict[str, Any]], repeat: int, table: Table,
                   with_frameworks: bool) -> None:
    from trajcheck.metrics.calls import tool_call_prf
    from trajcheck.metrics.composite import score_trajectory
    from trajcheck.metrics.prf_dicts import tool_call_prf_dicts
    from trajcheck.metrics.trajectory import trajectory_match

    n = len(items)
    print(f"\n== direct scoring, {n} trajectories, best of {repeat}")

    # --- trajcheck
    pre = [W.to_trajcheck(it) for it in items]
    pre_t = [W.to_trajcheck_trajectory(it) for it in items]
    r_d, s = best_rate(lambda: [tool_call_prf(*W.to_trajcheck(it)).f1 for it in items], n, repeat)
    r_p, s = best_rate(lambda: [tool_call_prf(c, k).f1 for c, k in pre], n, repeat)
    table.add("F1", "trajcheck tool_call_prf (list of ToolCall)", r_d, r_p, s, None,
              "dicts: ToolCall(...), ExpectedCall(...), Case(...)")
    r_d, s = best_rate(lambda: [tool_call_prf_dicts(it["calls"], it["expected"]).f1 for it in items],
                       n, repeat)
    table.add("F1", "trajcheck tool_call_prf_dicts (plain dicts)", r_d, None, s, None,
              "no model objects built")
    r_d, s = best_rate(lambda: [tool_call_prf(*W.to_trajcheck_from_dict(it)).f1 for it in items],
                       n, repeat)
    table.add("F1", "trajcheck tool_call_prf (from_dict conversion)", r_d, None, s, None,
              "dicts: ToolCall.from_dict, Case.from_dict")
    r_d, s = best_rate(lambda: [tool_call_prf(*W.to_trajcheck_trajectory(it)).f1 for it in items],
                       n, repeat)
    r_p, s = best_rate(lambda: [tool_call_prf(t, k).f1 for t, k in pre_t], n, repeat)
    table.add("F1", "trajcheck tool_call_prf (Trajectory)", r_d, r_p, s, None)
    for mode in ("exact", "in_order", "unordered", "superset", "subset"):
        r_d, s = best_rate(lambda mode=mode: [trajectory_match(*W.to_trajcheck(it), mode).score
                                              for it in items], n, repeat)
        r_p, s = best_rate(lambda mode=mode: [trajectory_match(c, k, mode).score for c, k in pre],
                           n, repeat)
        table.add(f"match {mode}", f"trajcheck trajectory_match {mode}", r_d, r_p, s, None)
    r_d, s = best_rate(lambda: [score_trajectory(*W.to_trajcheck_trajectory(it)).score
                                for it in items], n, repeat)
    r_p, s = best_rate(lambda: [score_trajectory(t, k).score for t, k in pre_t], n, repeat)
    table.add("composite", "trajcheck score_trajectory", r_d, r_p, s, None)
    r_d, s = best_rate(lambda: [naive_multiset_f1(it) for it in items], n, repeat)
    table.add("F1", "naive multiset F1 (Counter of name + JSON args)", r_d, None, s,
              "trajcheck tool_call_prf (list of ToolCall)", "no matchers, no matching")
    if not with_frameworks:
        return

    # --- RAGAS 0.4
    from ragas.metrics._tool_call_f1 import ToolCallF1 as LegacyF1
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    def ragas_loop(metric: Any, src: Sequence[Any], build: bool) -> list[Any]:
        async def go() -> list[Any]:
            out = []
            for x in src:
                u, r = W.to_ragas(x) if build else x
                out.append((await metric.ascore(user_input=u, reference_tool_calls=r)).value)
            return out
        return asyncio.run(go())

    rg_pre = [W.to_ragas(it) for it in items]
    f1m = ToolCallF1()
    r_d, s = best_rate(lambda: ragas_loop(f1m, items, True), n, repeat)
    r_p, s = best_rate(lambda: ragas_loop(f1m, rg_pre, False), n, repeat)
    table.add("F1", "RAGAS ToolCallF1 (collections ascore)", r_d, r_p, s,
              "trajcheck tool_call_prf (list of ToolCall)", "sets: duplicates collapse")

    legacy = LegacyF1()

    def legacy_loop(src: Sequence[Any], build: bool) -> list[Any]:
        async def go() -> list[Any]:
            return [await legacy.multi_turn_ascore(W.to_ragas_sample(x) if build else x)
                    for x in src]
        return asyncio.run(go())

    samples = [W.to_ragas_sample(it) for it in items]
    r_d, s = best_rate(lambda: legacy_loop(items, True), n, repeat)
    r_p, s = best_rate(lambda: legacy_loop(samples, False), n, repeat)
    table.add("F1", "RAGAS ToolCallF1 (legacy multi_turn_ascore)", r_d, r_p, s,
              "trajcheck tool_call_prf (list of ToolCall)", "what ragas.evaluate runs")
    for strict, mode in ((True, "exact"), (False, "unordered")):
        m = ToolCallAccuracy(strict_order=strict)
        r_d, s = best_rate(lambda m=m: ragas_loop(m, items, True), n, repeat)
        r_p, s = best_rate(lambda m=m: ragas_loop(m, rg_pre, False), n, repeat)
        table.add(f"match {mode}", f"RAGAS ToolCallAccuracy(strict_order={strict})", r_d, r_p, s,
                  f"trajcheck trajectory_match {mode}", "graded argument credit")

    # --- DeepEval 4.3
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.test_case import ToolCallParams

    tcm = ToolCorrectnessMetric(evaluation_params=[ToolCallParams.INPUT_PARAMETERS],
                                async_mode=False)
    assert not tcm.available_tools  # no tool-selection LLM step
    de_pre = [W.to_deepeval(it) for it in items]
    r_d, s = best_rate(lambda: [tcm.measure(W.to_deepeval(it), _show_indicator=False)
                                for it in items], n, repeat)
    r_p, s = best_rate(lambda: [tcm.measure(tc, _show_indicator=False) for tc in de_pre], n, repeat)
    table.add("recall", "DeepEval ToolCorrectnessMetric.measure (args compared)", r_d, r_p, s,
              "trajcheck tool_call_prf (list of ToolCall)",
              "no available_tools: no LLM step; async_mode=False")

    # --- agentevals / openevals
    import agentevals.trajectory.match as ae
    import openevals.trajectory.match as oe

    msgs_pre = [(W.openai_messages(it, "calls"), W.openai_messages(it, "expected")) for it in items]
    for lib, mod in (("agentevals", ae), ("openevals", oe)):
        for mode, neutral in (("strict", "exact"), ("unordered", "unordered"),
                              ("superset", "superset")):
            ev = mod.create_trajectory_match_evaluator(trajectory_match_mode=mode)
            r_d, s = best_rate(lambda ev=ev: [
                ev(outputs=W.openai_messages(it, "calls"),
                   reference_outputs=W.openai_messages(it, "expected"))["score"] for it in items],
                n, repeat)
            r_p, s = best_rate(lambda ev=ev: [ev(outputs=o, reference_outputs=r)["score"]
                                              for o, r in msgs_pre], n, repeat)
            table.add(f"match {neutral}", f"{lib} trajectory match {mode}", r_d, r_p, s,
                      f"trajcheck trajectory_match {neutral}", "greedy pairing")


# ----------------------------------------------------------------------------- section 2


def _runner_time(fn: Callable[[], Any], repeat: int) -> float:
    """Seconds of the fastest of ``repeat`` runner calls (GC paused, the runner's own printing
    sent to /dev/null)."""
    import contextlib

    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return best


def section_runners(items: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    n = len(items)
    rows: list[dict[str, Any]] = []
    print(f"\n== inside the frameworks' runners, {n} cases, best of {repeat}")

    def add(framework: str, metric: str, secs: float, builtin: bool) -> None:
        rows.append({"framework": framework, "metric": metric, "seconds": secs,
                     "per_s": n / secs, "builtin": builtin})
        print(f"  {framework:<10} {metric:<58} {secs:8.3f} s  {n / secs:10,.0f}/s", flush=True)

    # --- ragas.evaluate
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics._tool_call_f1 import ToolCallF1 as LegacyF1

    from trajcheck.adapters.ragas import TrajcheckToolCallF1

    ds = EvaluationDataset(samples=[W.to_ragas_sample(it) for it in items])
    for metric, builtin in ((LegacyF1(), True), (TrajcheckToolCallF1(), False)):
        secs = _runner_time(lambda metric=metric: evaluate(
            ds, metrics=[metric], show_progress=False, raise_exceptions=True), repeat)
        add("RAGAS", f"ragas.evaluate + {type(metric).__name__}", secs, builtin)

    # --- deepeval.evaluate
    from deepeval import evaluate as de_evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.test_case import ToolCallParams

    from trajcheck.adapters.deepeval import ToolCallF1Metric

    cases = [W.to_deepeval(it, name=it["id"]) for it in items]
    quiet = DisplayConfig(show_indicator=False, print_results=False)
    with tempfile.TemporaryDirectory() as tmp:
        old = os.getcwd()
        os.chdir(tmp)
        os.environ["DEEPEVAL_RESULTS_FOLDER"] = str(Path(tmp) / "results")
        try:
            for make, builtin in (
                (lambda: ToolCorrectnessMetric(evaluation_params=[ToolCallParams.INPUT_PARAMETERS]),
                 True),
                (lambda: ToolCallF1Metric(), False),
            ):
                for run_async in (True, False):
                    secs = _runner_time(lambda make=make, run_async=run_async: de_evaluate(
                        cases, [make()], display_config=quiet,
                        async_config=AsyncConfig(run_async=run_async),
                        cache_config=CacheConfig(write_cache=False, use_cache=False)), repeat)
                    add("DeepEval", f"deepeval.evaluate({'async' if run_async else 'sync'}) + "
                        f"{type(make()).__name__}", secs, builtin)
        finally:
            os.chdir(old)
            os.environ.pop("DEEPEVAL_RESULTS_FOLDER", None)

    # --- langsmith evaluate(upload_results=False)
    import uuid

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

    ls_metrics = [
        ("agentevals trajectory match superset", True,
         lambda: create_trajectory_match_evaluator(trajectory_match_mode="superset")),
        ("trajcheck TrajcheckEvaluator trajectory_match superset", False,
         lambda: TrajcheckEvaluator("trajectory_match", mode="superset", dialect="agentevals")),
        ("agentevals trajectory match strict", True,
         lambda: create_trajectory_match_evaluator(trajectory_match_mode="strict")),
        ("trajcheck TrajcheckEvaluator trajectory_match strict", False,
         lambda: TrajcheckEvaluator("trajectory_match", mode="strict", dialect="agentevals")),
        ("trajcheck TrajcheckEvaluator tool_call_f1", False,
         lambda: TrajcheckEvaluator("tool_call_f1")),
    ]
    for label, builtin, make_ev in ls_metrics:
        secs = _runner_time(lambda make_ev=make_ev: client.evaluate(
            target, data=examples, evaluators=[make_ev()], upload_results=False,
            max_concurrency=0), repeat)
        add("LangSmith", f"evaluate(upload_results=False) + {label}", secs, builtin)
    return rows


# ----------------------------------------------------------------------------- section 3, 4


def section_scaling() -> list[dict[str, Any]]:
    from trajcheck.metrics.calls import tool_call_prf
    from trajcheck.model import Case, ExpectedCall, ToolCall

    print("\n== scaling: tool_call_prf on n x n calls, every pair a candidate")
    rows = []
    for n in (10, 100, 1000):
        pred, exp = W.scaling_pair(n)
        calls = [ToolCall.from_dict(c) for c in pred]
        case = Case(id=f"scale-{n}", input="x",
                    expected_calls=tuple(ExpectedCall.from_dict(e) for e in exp))
        reps = 3 if n >= 1000 else 20
        times = []
        for _ in range(reps):
            gc.collect()
            t0 = time.perf_counter()
            r = tool_call_prf(calls, case)
            times.append(time.perf_counter() - t0)
        assert r.tp == n
        rows.append({"n": n, "edges": n * n, "seconds_median": statistics.median(times),
                     "seconds_max": max(times)})
        print(f"  n={n:>5}: median {statistics.median(times) * 1e3:10.3f} ms "
              f"(max {max(times) * 1e3:.3f} ms)", flush=True)
    return rows


def section_processes(runs: int) -> dict[str, Any]:
    py = sys.executable
    print(f"\n== processes (median of {runs})")

    def wall(cmd: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0

    bare = statistics.median(wall([py, "-c", "pass"]) for _ in range(runs))
    imp = statistics.median(wall([py, "-c", "import trajcheck"]) for _ in range(runs))
    selfs = []
    for _ in range(runs):
        err = subprocess.run([py, "-X", "importtime", "-c", "import trajcheck"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stderr
        line = [ln for ln in err.splitlines() if ln.rstrip().endswith("| trajcheck")][-1]
        selfs.append(int(line.split("|")[1]) / 1e6)
    self_import = statistics.median(selfs)
    tj = str(Path(py).parent / "trajcheck")
    tau = str(ROOT / "examples/tau_bench_airline/gpt-4o-airline.json")
    ev = statistics.median(wall([tj, "eval", tau]) for _ in range(max(3, runs // 2)))
    out = {"python_bare_s": bare, "import_trajcheck_s": imp,
           "import_trajcheck_importtime_s": self_import, "trajcheck_eval_tau_airline_s": ev}
    for k, v in out.items():
        print(f"  {k:<34} {v * 1e3:9.1f} ms", flush=True)
    return out


# ----------------------------------------------------------------------------- report


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for p in ("trajcheck", "ragas", "deepeval", "langsmith", "agentevals", "openevals",
              "langchain-core", "pydantic"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:,.0f}"


def render(res: dict[str, Any]) -> str:
    L: list[str] = []
    v = res["versions"]
    L.append(f"Machine: {res['machine']}; Python {v['python']}; "
             + ", ".join(f"{k} {v[k]}" for k in v if k != "python") + f". Run: {res['date']}.")
    L.append(f"Workload: `bench/workload.py`, seed {res['seed']}, {res['n']} trajectories "
             f"(3-12 calls, 8 tools), best of {res['repeat']} passes. Network attempts "
             f"refused during the run: {res['network_attempts']}.")
    L.append("")
    L.append("### Scoring in one process (trajectories per second)")
    L.append("")
    L.append("| metric | implementation | from plain dicts | prebuilt objects | peer time / "
             "trajcheck time (dicts, prebuilt) | mean score | note |")
    L.append("|---|---|---:|---:|---:|---:|---|")
    rows = res["direct"]
    by = {r["impl"]: r for r in rows}
    for r in rows:
        ratio = ""
        if r["ref"] and r["ref"] in by:
            t = by[r["ref"]]
            parts = []
            for k in ("dicts", "prebuilt"):
                parts.append(f"{t[k] / r[k]:.2f}x" if r[k] and t[k] else "-")
            ratio = ", ".join(parts)
        ms = "" if r["mean_score"] is None else f"{r['mean_score']:.3f}"
        L.append(f"| {r['metric']} | {r['impl']} | {_fmt(r['dicts'])} | {_fmt(r['prebuilt'])} | "
                 f"{ratio} | {ms} | {r['note']} |")
    if res.get("runners"):
        L.append("")
        L.append(f"### Inside the frameworks' runners ({res['runner_n']} cases, whole runner call)")
        L.append("")
        L.append("| framework | runner + metric | seconds | cases/s | time / built-in's |")
        L.append("|---|---|---:|---:|---:|")
        rr = res["runners"]
        for r in rr:
            ratio = ""
            if not r["builtin"]:
                base = _runner_baseline(rr, r)
                if base:
                    ratio = f"{r['seconds'] / base['seconds']:.2f}x"
            L.append(f"| {r['framework']} | {r['metric']}{' (built-in)' if r['builtin'] else ''} "
                     f"| {r['seconds']:.3f} | {r['per_s']:,.0f} | {ratio} |")
    L.append("")
    L.append("### Scaling: `tool_call_prf` on n predicted x n expected calls (ignore matcher)")
    L.append("")
    L.append("| n | candidate pairs | median seconds | max seconds |")
    L.append("|---:|---:|---:|---:|")
    for r in res["scaling"]:
        L.append(f"| {r['n']:,} | {r['edges']:,} | {r['seconds_median']:.4f} | "
                 f"{r['seconds_max']:.4f} |")
    p = res["processes"]
    L.append("")
    L.append("### Processes (median wall time)")
    L.append("")
    L.append("| what | ms |")
    L.append("|---|---:|")
    L.append(f"| `python -c pass` (interpreter start) | {p['python_bare_s'] * 1e3:.0f} |")
    L.append(f"| `python -c \"import trajcheck\"` (whole process) | {p['import_trajcheck_s'] * 1e3:.0f} |")
    L.append(f"| `import trajcheck` cumulative, `python -X importtime` | "
             f"{p['import_trajcheck_importtime_s'] * 1e3:.1f} |")
    L.append(f"| `trajcheck eval examples/tau_bench_airline/gpt-4o-airline.json` (whole process) | "
             f"{p['trajcheck_eval_tau_airline_s'] * 1e3:.0f} |")
    return "\n".join(L) + "\n"


def _runner_baseline(rows: list[dict[str, Any]], r: dict[str, Any]) -> dict[str, Any] | None:
    same = [b for b in rows if b["builtin"] and b["framework"] == r["framework"]]
    if r["framework"] == "DeepEval":
        mode = "(async)" if "(async)" in r["metric"] else "(sync)"
        same = [b for b in same if mode in b["metric"]]
    if r["framework"] == "LangSmith":
        mode = "strict" if "strict" in r["metric"] else "superset"
        same = [b for b in same if mode in b["metric"]]
    return same[0] if same else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="trajectories in the workload")
    ap.add_argument("--runner-n", type=int, default=200, help="cases per framework runner")
    ap.add_argument("--repeat", type=int, default=3, help="passes per measurement (best kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="n=300, runner-n=50, repeat=1")
    ap.add_argument("--core-only", action="store_true", help="skip the frameworks")
    ap.add_argument("--out", default=str(HERE / "last_run.md"))
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.runner_n, args.repeat = 300, 50, 1
    install_network_guard()
    items = W.make_workload(args.n, args.seed)
    t_start = time.perf_counter()
    res: dict[str, Any] = {
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, {platform.system()}",
        "date": time.strftime("%Y-%m-%d"), "versions": versions(), "seed": args.seed,
        "n": args.n, "runner_n": args.runner_n, "repeat": args.repeat,
    }
    table = Table()
    section_direct(items, args.repeat, table, not args.core_only)
    res["direct"] = table.rows
    res["runners"] = [] if args.core_only else section_runners(items[: args.runner_n],
                                                               max(1, args.repeat - 1))
    res["scaling"] = section_scaling()
    res["processes"] = section_processes(3 if args.quick else 7)
    res["network_attempts"] = len(NETWORK_ATTEMPTS)
    res["network_attempt_list"] = NETWORK_ATTEMPTS[:20]
    res["total_seconds"] = time.perf_counter() - t_start
    md = render(res)
    print("\n" + md)
    print(f"total {res['total_seconds']:.0f} s; network attempts refused: {len(NETWORK_ATTEMPTS)}")
    Path(args.out).write_text(md)
    Path(args.out).with_suffix(".json").write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
