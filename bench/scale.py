"""Production-volume benchmark: `trajcheck eval` beside the plain-Python floor on generated
files of N runs (bench/volume.py), whole processes, one run each (no timing in tests).

    python bench/scale.py --runs 100000 1000000 [--dir /tmp/trajcheck-vol] [--engines] [--varied]

For each N: generates the runs and cases once (kept in --dir), then runs the floor
(`bench/volume.py floor`) and `trajcheck eval RUNS --cases CASES -q --json OUT`, each as a
child process, and reports wall seconds, CPU seconds and peak RSS (the kernel's accounting
of the finished child, `os.wait4`), the ratio eval/floor, and the scorecard's run count.
With --engines it also scores the file with `--engine spark` (local[2]) and `--engine ray`
(2 CPUs) and checks that their scorecards equal the local one. Results are printed as a
Markdown table and written to bench/scale_last_run.md. With --varied the files are
bench/volume.py's varied ones (each case its own argument names and value types; same floor).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAJCHECK = Path(sys.executable).with_name("trajcheck")


def measure(cmd: list[str], log: Path) -> dict:
    """Run ``cmd`` to completion: wall and CPU seconds, peak RSS in MiB, exit code."""
    with log.open("w") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    return {"wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "peak_mib": round(ru.ru_maxrss / 1024, 1), "exit": os.waitstatus_to_exitcode(status)}


def one_size(n: int, d: Path, engines: bool, varied: bool = False) -> dict:
    sub = d / (f"v{n}" if varied else f"n{n}")
    runs, cases = sub / "runs.jsonl", sub / "cases.jsonl"
    if not runs.exists():
        subprocess.run([sys.executable, str(HERE / "volume.py"), "generate", "--runs", str(n),
                        "--out", str(sub), *(["--varied"] if varied else [])], check=True)
    row: dict = {"runs": n, "file_mb": round(runs.stat().st_size / 1e6)}
    row["floor"] = measure([sys.executable, str(HERE / "volume.py"), "floor", str(runs), str(cases)],
                           sub / "floor.log")
    out = sub / "scorecard.json"
    row["eval"] = measure([str(TRAJCHECK), "eval", str(runs), "--cases", str(cases), "-q",
                           "--json", str(out)], sub / "eval.log")
    sc = json.loads(out.read_text())
    row["scored"] = sc["suite"]["n_runs"]
    row["ratio_wall"] = round(row["eval"]["wall_s"] / row["floor"]["wall_s"], 2)
    row["ratio_cpu"] = round(row["eval"]["cpu_s"] / max(row["floor"]["cpu_s"], 1e-9), 2)
    if engines:
        for eng in ("spark", "ray"):
            eo = sub / f"scorecard_{eng}.json"
            row[eng] = measure([str(TRAJCHECK), "eval", str(runs), "--cases", str(cases), "-q",
                                "--engine", eng, "--workers", "2", "--json", str(eo)],
                               sub / f"{eng}.log")
            if row[eng]["exit"] == 0:
                got = json.loads(eo.read_text())
                row[eng]["equal"] = all(got[k] == sc[k] for k in ("suite", "cases", "runs"))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/trajcheck-vol"))
    ap.add_argument("--engines", action="store_true")
    ap.add_argument("--varied", action="store_true",
                    help="cases each with their own argument names and value types")
    a = ap.parse_args()
    rows = [one_size(n, a.dir, a.engines, a.varied) for n in a.runs]
    lines = ["| runs | file | floor wall / peak | eval wall / cpu / peak | eval / floor (wall, cpu) | scored |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        f, e = r["floor"], r["eval"]
        lines.append(f"| {r['runs']:,} | {r['file_mb']} MB | {f['wall_s']} s / {f['peak_mib']} MiB | "
                     f"{e['wall_s']} s / {e['cpu_s']} s / {e['peak_mib']} MiB | "
                     f"{r['ratio_wall']}x, {r['ratio_cpu']}x | {r['scored']:,} |")
        for eng in ("spark", "ray"):
            if eng in r:
                x = r[eng]
                lines.append(f"| {r['runs']:,} | --engine {eng} | | {x['wall_s']} s / {x['peak_mib']} MiB "
                             f"(driver) | equal to local: {x.get('equal')} | |")
    text = "\n".join(lines)
    print(text)
    (HERE / "scale_last_run.md").write_text(text + "\n\n```json\n" + json.dumps(rows, indent=1) + "\n```\n")


if __name__ == "__main__":
    main()
