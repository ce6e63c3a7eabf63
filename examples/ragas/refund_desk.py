"""Every trajcheck metric inside RAGAS on the eight recorded refund-desk runs (offline, no API key).

One command, from the repository root:  python examples/ragas/refund_desk.py

The runs are read with trajcheck's trace reader and turned into RAGAS ``MultiTurnSample``s by
``sample_from_trace`` (settings on the first HumanMessage, failed results flagged on their
ToolMessage, parallel calls in one AIMessage); every metric of the README table, and every
trajectory mode of every dialect, runs in ``ragas.evaluate``; NaN is RAGAS's "no score" (the
metric does not apply to that run); the suite figures come from ``suite_figures``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

from data import CASES, METRICS, MODES, RUNS, expected, settings  # noqa: E402
from ragas import EvaluationDataset, evaluate  # noqa: E402

from trajcheck.adapters.ragas import TrajcheckRagasMetric, sample_from_trace, suite_figures  # noqa: E402


def main() -> None:
    samples = [sample_from_trace(RUNS[cid], reference_tool_calls=expected(c), **settings(c))
               for cid, c in CASES.items()]
    metrics = [TrajcheckRagasMetric(metric=k) for k in METRICS]
    metrics += [TrajcheckRagasMetric(metric="trajectory_match", match_mode=m, dialect=d) for d, m in MODES]
    df = evaluate(EvaluationDataset(samples=samples), metrics=metrics, show_progress=False,
                  raise_exceptions=True).to_pandas()
    for i, cid in enumerate(CASES):
        print(f"== {cid}")
        for m in metrics:
            print(f"  {m.name}: {float(df[m.name][i])!r}")
    print("== suite figures (one run per task)")
    for fig, r in suite_figures(samples, tasks=list(CASES)).items():
        print(f"  {fig}: {r.score!r} - {r.reason}")


if __name__ == "__main__":
    main()
