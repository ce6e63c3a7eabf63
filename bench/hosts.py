"""Adapter overhead inside each host's own runner: trajcheck's metric against the host's own
deterministic tool metric on the same cases, in the same runner call (the issue's target is
at most 1.1x). One command:

    .venv/bin/python bench/hosts.py [--runner-n 200] [--repeat 3]

Reuses ``bench/run.py``'s runner section (ragas.evaluate + ToolCallF1 vs TrajcheckToolCallF1;
deepeval.evaluate async/sync + ToolCorrectnessMetric vs ToolCallF1Metric; LangSmith
evaluate(upload_results=False) + agentevals trajectory match vs TrajcheckEvaluator) and prints
each adapter's time over its host's built-in. Ratios from one process on a busy machine move
with the load; compare them, not the absolute seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as R  # noqa: E402  (bench/run.py: network guard, environment, runner section)
import workload as W  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runner-n", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    R.install_network_guard()
    rows = R.section_runners(W.make_workload(args.runner_n, args.seed), args.repeat)
    print("\n== adapter time / built-in time (target <= 1.10x)")
    for r in rows:
        if r["builtin"]:
            continue
        base = R._runner_baseline(rows, r)
        if base:
            ratio = r["seconds"] / base["seconds"]
            print(f"  {r['framework']:<10} {r['metric']:<66} {ratio:5.2f}x  "
                  f"{'ok' if ratio <= 1.10 else 'ABOVE TARGET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
