"""Every trajcheck metric inside DeepEval on the eight recorded refund-desk runs (offline, no API key).

One command, from the repository root:  python examples/deepeval/refund_desk.py

The runs are read with trajcheck's trace reader and turned into DeepEval test cases by
``test_case_from_trace`` (failed calls and parallel steps carried in the metadata); every
metric of the README table, and every trajectory mode of every dialect, runs in
``deepeval.evaluate``; the suite figures come from ``suite_figures`` over the same test cases.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

from data import CASES, METRICS, MODES, RUNS, expected, settings  # noqa: E402
from deepeval import evaluate  # noqa: E402
from deepeval.evaluate.configs import DisplayConfig  # noqa: E402

from trajcheck.adapters.deepeval import TrajcheckMetric, suite_figures, test_case_from_trace  # noqa: E402


def main() -> None:
    test_cases = [test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
                  for cid, c in CASES.items()]
    metrics = [TrajcheckMetric(k) for k in METRICS]
    metrics += [TrajcheckMetric("trajectory_match", mode=m, dialect=d) for d, m in MODES]
    result = evaluate(test_cases, metrics,
                      display_config=DisplayConfig(show_indicator=False, print_results=False))
    for tr in result.test_results:
        print(f"== {tr.name}: {'PASS' if tr.success else 'FAIL'}")
        shown = {md.name for md in tr.metrics_data or ()}
        for md in tr.metrics_data or ():
            print(f"  {md.name}: {md.score!r} ({'pass' if md.success else 'FAIL'}) - {md.reason}")
        for m in metrics:
            if m.__name__ not in shown:
                print(f"  {m.__name__}: skipped (not applicable to this run)")
    print("== suite figures (one run per task)")
    for fig, r in suite_figures(test_cases).items():
        print(f"  {fig}: {r.score!r} - {r.reason}")


if __name__ == "__main__":
    main()
