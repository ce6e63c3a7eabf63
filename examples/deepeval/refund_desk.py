"""Every trajcheck metric inside DeepEval on the eight recorded refund-desk runs (offline, no API key).

One command, from the repository root:  python examples/deepeval/refund_desk.py

The runs are read with trajcheck's trace reader and turned into DeepEval test cases by
``test_case_from_trace`` (failed calls and parallel steps carried in the metadata); every
metric of the README table, and every trajectory mode of every dialect, runs in
``deepeval.evaluate``; the suite figures come from ``suite_figures`` over the same test cases.
Then final state from a sandbox fixture: three more cases whose database starts from
``examples/refund_desk/shop.sql`` (``initial_state``) and whose runs were replayed on a real
trajcheck sandbox; the test case carries the database after the run (``after_state``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
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
from deepeval import evaluate  # noqa: E402
from deepeval.evaluate.configs import DisplayConfig  # noqa: E402

from trajcheck.adapters.deepeval import TrajcheckMetric, suite_figures, test_case_from_trace  # noqa: E402


def show(result, metrics) -> None:  # type: ignore[no-untyped-def]
    """deepeval's own view: each test result's metrics data (score, success, reason)."""
    for tr in result.test_results:
        print(f"== {tr.name}: {'PASS' if tr.success else 'FAIL'}")
        shown = {md.name for md in tr.metrics_data or ()}
        for md in tr.metrics_data or ():
            print(f"  {md.name}: {md.score!r} ({'pass' if md.success else 'FAIL'}) - {md.reason}")
        for m in metrics:
            if m.__name__ not in shown:
                print(f"  {m.__name__}: skipped (not applicable to this run)")


def main() -> None:
    display = DisplayConfig(show_indicator=False, print_results=False)
    test_cases = [test_case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
                  for cid, c in CASES.items()]
    metrics = [TrajcheckMetric(k) for k in METRICS]
    metrics += [TrajcheckMetric("trajectory_match", mode=m, dialect=d) for d, m in MODES]
    show(evaluate(test_cases, metrics, display_config=display), metrics)
    print("== suite figures (one run per task)")
    for fig, r in suite_figures(test_cases).items():
        print(f"  {fig}: {r.score!r} - {r.reason}")
    print("== final state from the sandbox fixture examples/refund_desk/shop.sql")
    fixture_cases = [test_case_from_trace(FIXTURE_RUNS[cid], expected_tools=expected(c), name=cid,
                                          **fixture_settings(c)) for cid, c in FIXTURE_CASES.items()]
    final_state = [TrajcheckMetric("final_state")]
    show(evaluate(fixture_cases, final_state, display_config=display), final_state)


if __name__ == "__main__":
    main()
