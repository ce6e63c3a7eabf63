"""Spark and Ray at volume: 1 vs 2 workers, equality with the local eval, and where the CPU
goes (driver, workers' scoring, the engine's own work). Whole processes, no timing in tests.

    python bench/engines.py --runs 1000000 [--dir /tmp/vol] [--engines spark ray]
                            [--workers 1 2] [--reuse-local]

For N runs: generates ``DIR/nN/{runs,cases}.jsonl`` with bench/volume.py unless present;
runs the local ``trajcheck eval`` once (the reference scorecard and the local CPU; skipped
with --reuse-local when ``DIR/nN/sc_local.json`` exists); then for each engine and worker
count, one child process that loads the cases as ``trajcheck eval`` does, starts the engine
(``local[W]`` / a local Ray of W CPUs), scores the file with ``engines.eval_files`` and writes
the scorecard. Before the Spark children, the driver JVM's class-data archive is written if
missing (``engines.jvm_archive``), as the first ``--engine spark`` eval on a machine does. Per child it reports:

- wall seconds of engine start-up and of the eval itself;
- CPU seconds of the driver's Python process during the eval (reading the partials,
  merging, bootstrap: what does not scale out), of the whole process tree (driver, JVM or
  Ray's processes, workers; sampled from /proc every 0.5 s, so exited workers count), and of the
  workers' scoring threads (``BatchPartial.cpu_s``, summed over the partials);
- the engine's own CPU = tree - driver - workers' scoring, per run (JVM, Arrow transfer,
  Ray's scheduling: the fixed cost that remains when scoring gets cheaper), and start-up CPU;
- the partials: count, bytes, the driver's merge-and-finalize CPU;
- whether the scorecard JSON equals the local one (every key).

Then the speed-up of the largest worker count over 1 worker on each engine (wall of the
eval; start-up excluded and shown apart), with ``uptime``'s load average before and after
each child. Prints a Markdown table and writes bench/engines_last_run.md. On a 2-core
machine the 2-worker figure is only meaningful when nothing else runs (load < 0.5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAJCHECK = Path(sys.executable).with_name("trajcheck")
TICK = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class TreeSampler:
    """Samples the CPU of every descendant of this process every ``period`` seconds and
    keeps each one's last figure (own utime + stime): processes that exit between samples
    still count up to their last sample, even when their parent does not wait for them
    (Spark's Python daemon ignores SIGCHLD, so its workers' CPU never reaches a cutime)."""

    def __init__(self, period: float = 0.5) -> None:
        import threading

        self.seen: dict[tuple[int, str], float] = {}
        self.stop = threading.Event()
        self.period = period
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        me = os.getpid()
        kids: dict[int, list[int]] = {}
        stats: dict[int, list[str]] = {}
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                raw = (d / "stat").read_text()
            except OSError:
                continue
            f = raw[raw.rindex(")") + 2:].split()
            stats[int(d.name)] = f
            kids.setdefault(int(f[1]), []).append(int(d.name))
        todo = list(kids.get(me, []))
        while todo:
            p = todo.pop()
            f = stats[p]
            self.seen[(p, f[19])] = (int(f[11]) + int(f[12])) / TICK  # key: pid + start time
            todo.extend(kids.get(p, []))

    def run(self) -> None:
        while not self.stop.wait(self.period):
            self.sample()

    def total(self) -> float:
        """CPU seconds of all descendants seen so far."""
        self.sample()
        return sum(self.seen.values())


def child(a: argparse.Namespace) -> None:
    """One engine run in this process, as ``trajcheck eval --engine`` runs it (the cases load
    in a thread while the engine starts); prints one JSON line of figures."""
    import resource

    from trajcheck.engines import eval_files
    from trajcheck.engines.case_load import CaseFile

    def self_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    sampler = TreeSampler()

    def tree() -> float:  # this process and every descendant, exited ones included
        return self_cpu() + sampler.total()

    cases = CaseFile(a.cases)  # as the CLI gives it: loaded while the engine starts

    c0, d0 = tree(), self_cpu()
    last: dict = {}  # what the evaluation reports of itself (engines.eval_files' stats)
    sc = eval_files(a.runs_file, cases, engine=a.engine, workers=a.workers, stats=last)
    c3, d3 = tree(), self_cpu()
    sc.write_json(a.out)
    t0, ready = last["started_at"], last["ready_at"]
    # the driver's case-load CPU (its thread's, before and after the engine's start) and
    # the workers' part, when they loaded one (engines.case_load)
    loaded = {"cpu": last.get("cases_driver_cpu_s", 0.0),
              "workers_cpu": last.get("cases_worker_cpu_s", 0.0),
              "front": last.get("cases_front_bytes", 0) / max(last.get("cases_bytes", 1), 1)}
    s0, s1, fin = last["scoring_from"], last["scoring_to"], last["finalized_at"]
    print(json.dumps({"cases_cpu_s": round(loaded["cpu"] + loaded["workers_cpu"], 2),
                      "cases_driver_cpu_s": round(loaded["cpu"], 2),
                      "cases_front": round(loaded["front"], 3),  # share the driver loaded
                      "start_s": round(ready - t0, 2),  # cases and engine start, overlapped
                      "eval_s": round(fin - ready, 2),  # first task to scorecard
                      "first_score_s": round(s0 - ready, 2),  # cases shipped, workers started
                      "scoring_s": round(s1 - s0, 2),  # first to last batch scored by any worker
                      "tail_s": round(fin - s1, 2),  # partials serialised, shipped, merged; finalize
                      "tree_cpu_s": round(c3 - c0, 2),
                      "driver_cpu_s": round(d3 - d0 - loaded["cpu"], 2),
                      "worker_score_cpu_s": round(last.get("worker_cpu_s", 0.0), 2),
                      "partials": last.get("partials"), "batches": last.get("batches"),
                      "partial_mb": round(last.get("partial_bytes", 0) / 1e6, 1),
                      "merge_cpu_s": round(last.get("merge_cpu_s", 0.0), 2),
                      "pending_cpu_s": round(last.get("pending_cpu_s", 0.0), 2),
                      "finalize_cpu_s": round(last.get("finalize_cpu_s", 0.0), 2),
                      "rows": last.get("rows")}), flush=True)
    # no session.stop(): `trajcheck eval --engine spark` exits with its session running
    # (pyspark's exit handler ends the JVM), and so does this child


def measure(cmd: list[str], log: Path) -> dict:
    """Run ``cmd``: wall and CPU seconds (the reaped tree), peak RSS MiB, exit code, and
    the load average before and after."""
    before = load()
    with log.open("w") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    return {"wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "peak_mib": round(ru.ru_maxrss / 1024, 1), "exit": os.waitstatus_to_exitcode(status),
            "load_before": before, "load_after": load()}


def ratio(rows: list[dict], key: str, w: int) -> tuple[float, str]:
    """Per round, the 1-worker row's ``key`` over the ``w``-worker row's: the median and
    each round's, sorted."""
    one = [r[key] for r in rows if r["workers"] == 1]
    many = [r[key] for r in rows if r["workers"] == w]
    rs = sorted(x / y for x, y in zip(one, many))
    return statistics.median(rs), " ".join(f"{x:.2f}" for x in rs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/vol"))
    ap.add_argument("--engines", nargs="+", default=["spark", "ray"], choices=["spark", "ray"])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--data", type=Path, help="an existing DIR with runs.jsonl and cases.jsonl "
                    "(read only; default DIR/nN, generated when missing)")
    ap.add_argument("--work", type=Path, help="where scorecards and logs go (default: the data DIR)")
    ap.add_argument("--reuse-local", action="store_true",
                    help="use DIR/nN/sc_local.json from an earlier run as the reference")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run each engine's worker counts this many times, alternating their "
                         "order; ratios are the medians of the rounds'")
    ap.add_argument("--head", type=int, default=2000,
                    help="also score the file's first HEAD runs on each engine (most workers): "
                         "the engine's fixed cost, apart from its per-run cost (0: skip)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("--runs-file", help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        a.workers = a.workers[0]
        child(a)
        return
    started = time.monotonic()
    data = a.data or a.dir / f"n{a.runs}"
    sub = a.work or data
    sub.mkdir(parents=True, exist_ok=True)
    runs, cases = data / "runs.jsonl", data / "cases.jsonl"
    if not runs.exists():
        subprocess.run([sys.executable, str(HERE / "volume.py"), "generate", "--runs",
                        str(a.runs), "--out", str(data)], check=True)
    ref = sub / "sc_local.json"
    local = None
    if not (a.reuse_local and ref.exists()):
        local = measure([str(TRAJCHECK), "eval", str(runs), "--cases", str(cases), "-q",
                         "--json", str(ref)], sub / "local.log")
        print(f"local eval: {local}", flush=True)
    want = json.loads(ref.read_text())
    want.get("meta", {}).pop("source", None)  # the path as typed: not a figure
    head = sub / f"head{a.head}.jsonl"
    if a.head:
        with runs.open("rb") as f, head.open("wb") as g:
            for _, line in zip(range(a.head), f):
                g.write(line)
    # rounds alternate the order of the worker counts, so a drift of the machine's load
    # weighs on both sides
    plan = [(eng, w, runs) for i in range(a.rounds) for eng in a.engines
            for w in (a.workers if i % 2 == 0 else a.workers[::-1])]
    if a.head:
        plan += [(eng, max(a.workers), head) for eng in a.engines]
    if "spark" in a.engines:
        # the Spark driver JVM's class-data archive, written now if missing, so that no
        # measured run writes it at its exit (engines.jvm_archive; TRAJCHECK_SPARK_CDS=0
        # measures without it)
        arch = subprocess.run([sys.executable, "-m", "trajcheck.engines.jvm_archive"],
                              capture_output=True, text=True, check=True)
        print(f"spark class-data archive: {arch.stdout.strip()}", flush=True)
    rows = []
    for eng, w, src in plan:
        tag = f"{eng}_{w}" + ("_head" if src == head else "") + (f"_r{len(rows)}" if a.rounds > 1 else "")
        out = sub / f"sc_{tag}.json"
        log = sub / f"{tag}.log"
        m = measure([sys.executable, __file__, "--child", "--engine", eng, "--workers",
                     str(w), "--runs-file", str(src), "--cases", str(cases),
                     "--out", str(out)], log)
        figs = {}
        for line in log.read_text().splitlines():
            if line.startswith("{") and '"eval_s"' in line:
                figs = json.loads(line)
        got = json.loads(out.read_text()) if m["exit"] == 0 and out.exists() else None
        if got is not None:  # meta.source is the path as typed (a reused reference may differ)
            got.get("meta", {}).pop("source", None)
        row = {"engine": eng, "workers": w, "head": src == head, **m, **figs,
               "equal": None if src == head else got is not None and got == want,
               "differs": [] if src == head else
               sorted(k for k in want if got is not None and got.get(k) != want[k])}
        if figs:
            n = max(figs["rows"] or 1, 1)
            eng_cpu = (figs["tree_cpu_s"] - figs["driver_cpu_s"] - figs["worker_score_cpu_s"]
                       - figs["cases_cpu_s"])
            row["engine_cpu_s"] = round(eng_cpu, 2)
            row["engine_us_per_run"] = round(eng_cpu / n * 1e6, 1)
            row["driver_share"] = round(figs["driver_cpu_s"] / max(figs["tree_cpu_s"], 1e-9), 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    lines = [f"{a.runs:,} runs ({runs.stat().st_size / 1e6:.0f} MB); load before/after each row",
             ""]
    if local:
        lines.append(f"local `trajcheck eval`: {local['wall_s']} s wall, {local['cpu_s']} s CPU, "
                     f"{local['peak_mib']} MiB peak (load {local['load_before']} / "
                     f"{local['load_after']})")
        lines.append("")
    lines += ["| engine | workers (runs) | process wall / CPU / peak | cases CPU (driver's, share of the file) | ready "
              "| eval wall: to first batch / scoring / tail | tree CPU | driver CPU (share) "
              "| workers' scoring CPU | engine CPU (per run) | partials (MB) | equal to local | load |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "eval_s" not in r:
            lines.append(f"| {r['engine']} | {r['workers']} | failed (exit {r['exit']}) |" + " |" * 10)
            continue
        lines.append(
            f"| {r['engine']} | {r['workers']} ({r['rows']:,}) | {r['wall_s']} s / {r['cpu_s']} s / "
            f"{r['peak_mib']} MiB | {r['cases_cpu_s']} s ({r['cases_driver_cpu_s']} s, "
            f"{r['cases_front']:.0%}) | {r['start_s']} s | "
            f"{r['eval_s']} s: {r['first_score_s']} / {r['scoring_s']} / {r['tail_s']} s | "
            f"{r['tree_cpu_s']} s | {r['driver_cpu_s']} s ({r['driver_share']:.1%}) | "
            f"{r['worker_score_cpu_s']} s | {r['engine_cpu_s']} s ({r['engine_us_per_run']} µs) | "
            f"{r['partials']} ({r['partial_mb']}) | {r['equal']} | {r['load_before']} / {r['load_after']} |")
    lines += ["", "Whole process = the child's wall from exec to exit (imports, cases, engine start, "
              "eval, scorecard written); ready = cases loaded (the driver's share while the engine "
              "started, the rest by the workers); tail = from "
              "the last batch scored to the scorecard (partials serialised, shipped, merged; "
              "finalize).", ""]
    for eng in a.engines:
        full = [r for r in rows if r["engine"] == eng and "eval_s" in r and not r["head"]]
        if 1 not in {r["workers"] for r in full} or len({r["workers"] for r in full}) < 2:
            continue
        w = max(r["workers"] for r in full)

        parts = []
        for key, what in (("wall_s", "whole process"), ("eval_s", "eval phase"),
                          ("scoring_s", "scoring phase")):
            med, each = ratio(full, key, w)
            parts.append(f"{what} {med:.2f}x" + (f" (rounds: {each})" if a.rounds > 1 else ""))
        one = [r for r in full if r["workers"] == 1][-1]
        many = [r for r in full if r["workers"] == w][-1]
        lines.append(f"- {eng}: {w} workers vs one: " + ", ".join(parts)
                     + f"; last round whole process {one['wall_s']} s vs {many['wall_s']} s wall, "
                       f"{one['cpu_s']} s vs {many['cpu_s']} s CPU")
        small = [r for r in rows if r["engine"] == eng and r["head"] and "eval_s" in r]
        if small:
            big, sm = many, small[0]
            per = (big["engine_cpu_s"] - sm["engine_cpu_s"]) / max(big["rows"] - sm["rows"], 1)
            lines.append(f"- {eng}: engine's own CPU {sm['engine_cpu_s']} s fixed (a {sm['rows']:,}-run "
                         f"eval) + {per * 1e6:.0f} µs per run; driver {sm['driver_cpu_s']} s fixed + "
                         f"{(big['driver_cpu_s'] - sm['driver_cpu_s']) / max(big['rows'] - sm['rows'], 1) * 1e6:.1f}"
                         " µs per run")
    lines.append(f"- whole benchmark: {time.monotonic() - started:.0f} s")
    text = "\n".join(lines)
    print(text)
    (HERE / "engines_last_run.md").write_text(text + "\n\n```json\n" + json.dumps(rows, indent=1)
                                              + "\n```\n")


if __name__ == "__main__":
    main()
