"""The sandbox's cost per run over process isolation (issue 27: at most 20 ms a run).

Runs the honest agent of tests/data/hostile on its two cases TRIALS times in each isolation
mode with one reused worker, and prints the median and mean of the runs' durations (the
first run of each mode, which starts the worker, reported apart), and the first run's
start-up. Usage: python bench/sandbox_cost.py [TRIALS]  (default 25).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from trajcheck.read.dataset import load_cases
from trajcheck.run.runner import load_agent, run_suite

HERE = Path(__file__).resolve().parents[1] / "tests" / "data" / "hostile"


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    tools = load_agent(f"{HERE / 'agents.py'}:TOOLS", want_callable=False)
    cases = load_cases(HERE / "cases.jsonl")
    got = {}
    for mode in ("process", "sandbox"):
        res = run_suite(f"{HERE / 'agents.py'}:honest", cases, trials=trials, tools=tools, base_dir=HERE,
                        progress=False, score=False, isolation=mode)
        durs = sorted((t.metadata["started_at"], t.metadata["duration_ms"]) for t, _c in res.runs)
        first, rest = durs[0][1], [d for _s, d in durs[1:]]
        got[mode] = statistics.median(rest)
        print(f"{mode:8s} first run (worker start) {first:8.1f} ms; later runs: median {statistics.median(rest):6.2f} ms, "
              f"mean {statistics.mean(rest):6.2f} ms over {len(rest)}  [{res.isolation}]")
    print(f"sandbox - process, median per run with a reused worker: {got['sandbox'] - got['process']:+.2f} ms")


if __name__ == "__main__":
    main()
