"""Every trajcheck metric inside RAGAS on the eight recorded refund-desk runs (offline, no API key).

One command, from the repository root:  python examples/ragas/refund_desk.py

The runs are read with trajcheck's trace reader and turned into RAGAS ``MultiTurnSample``s by
``sample_from_trace`` (settings on the first HumanMessage, failed results flagged on their
ToolMessage, parallel calls in one AIMessage); every metric of the README table, and every
trajectory mode of every dialect, runs in ``ragas.evaluate``; NaN is RAGAS's "no score" (the
metric does not apply to that run); the suite figures come from ``suite_figures``.
Then final state from a sandbox fixture: three more cases whose database starts from
``examples/refund_desk/shop.sql`` (``initial_state``) and whose runs were replayed on a real
trajcheck sandbox; the sample's settings block carries the database after the run (``after_state``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

from data import (  # noqa: E402
    CASES,
    FIXTURE_CASES,
    FIXTURE_RUNS,
    METRICS,
    MODES,
    RUNS,
    expected,
    fixture_settings,
    settings,
)
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
    print("== final state from the sandbox fixture examples/refund_desk/shop.sql")
    fixture_samples = [sample_from_trace(FIXTURE_RUNS[cid], reference_tool_calls=expected(c), **fixture_settings(c))
                       for cid, c in FIXTURE_CASES.items()]
    final_state = TrajcheckRagasMetric(metric="final_state")
    df = evaluate(EvaluationDataset(samples=fixture_samples), metrics=[final_state], show_progress=False,
                  raise_exceptions=True).to_pandas()
    for i, cid in enumerate(FIXTURE_CASES):
        print(f"== {cid}")
        print(f"  {final_state.name}: {float(df[final_state.name][i])!r}")


if __name__ == "__main__":
    main()
