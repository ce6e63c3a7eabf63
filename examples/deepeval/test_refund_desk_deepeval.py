"""The refund desk as a DeepEval test file: one ``assert_test`` per recorded run, with
trajcheck metrics (offline, no API key). Run it with DeepEval's own runner:

    deepeval test run examples/deepeval/test_refund_desk_deepeval.py

(or ``python -m pytest`` on it). Each test case is built from the recorded run by
``test_case_from_trace``; the final-state cases start from the sandbox fixture
``examples/refund_desk/shop.sql``. Several tests fail on purpose (the refund e-mail sent before
the refund, the duplicate refund, the deleted order...), so the command exits non-zero;
``.deepeval/.latest_run_full.json`` holds every score.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

from data import CASES, FIXTURE_CASES, FIXTURE_RUNS, RUNS, expected, fixture_settings, settings  # noqa: E402
from deepeval import assert_test  # noqa: E402

from trajcheck.adapters.deepeval import TrajcheckMetric  # noqa: E402
from trajcheck.adapters.deepeval import test_case_from_trace as case_from_trace  # noqa: E402  (not a test)

#: the metrics asserted on every recorded run (a not-applicable one is skipped by DeepEval)
KEYS = ("tool_call_f1", "ordering_accuracy", "duplicate_call_rate", "error_recovery", "forbidden_calls",
        "composite")


@pytest.mark.parametrize("cid", list(CASES))
def test_refund_desk_run(cid: str) -> None:
    c = CASES[cid]
    tc = case_from_trace(RUNS[cid], expected_tools=expected(c), name=cid, **settings(c))
    assert_test(tc, [TrajcheckMetric(k) for k in KEYS])


@pytest.mark.parametrize("cid", list(FIXTURE_CASES))
def test_final_state_from_the_sandbox_fixture(cid: str) -> None:
    c = FIXTURE_CASES[cid]
    tc = case_from_trace(FIXTURE_RUNS[cid], expected_tools=expected(c), name=cid, **fixture_settings(c))
    assert_test(tc, [TrajcheckMetric("final_state")])
