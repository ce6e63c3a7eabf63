"""What process isolation of agents costs (README "Security model"): ``run_suite`` of an
honest agent on the two hostile-input cases, in worker processes and inline, with the
number of workers started.

Run: ``.venv/bin/python bench/isolation.py [TRIALS]``. Prints the seconds of each mode, the
per-run overhead of a worker and how many workers were started (one per concurrent slot:
workers are reused from run to run).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from trajcheck.read.dataset import load_cases
from trajcheck.run import worker_pool
from trajcheck.run.runner import load_agent, run_suite

HERE = Path(__file__).resolve().parents[1] / "tests" / "data" / "hostile"


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    cases = load_cases(HERE / "cases.jsonl")
    agent = load_agent(f"{HERE / 'agents.py'}:honest")
    started: list[int] = []
    orig = worker_pool.WorkerPool.close

    def close(self: worker_pool.WorkerPool) -> None:
        started.append(self.started)
        orig(self)

    worker_pool.WorkerPool.close = close  # type: ignore[method-assign]
    secs = {}
    for mode in ("inline", "process"):
        t = time.perf_counter()
        res = run_suite(agent, cases, trials=trials, base_dir=HERE, progress=False, isolation=mode)
        secs[mode] = time.perf_counter() - t
        assert res.scorecard.suite.n_successes == 2 * trials
    n = 2 * trials
    print(f"{n} runs: inline {secs['inline']:.2f} s, process {secs['process']:.2f} s "
          f"(ratio {secs['process'] / secs['inline']:.2f}; {1000 * (secs['process'] - secs['inline']) / n:.1f} ms "
          f"per run more), workers started: {started[0]}")


if __name__ == "__main__":
    main()
