"""trajcheck metrics inside a DeepEval suite (offline, no API key).

Run either way from the repository root:
    python examples/deepeval/test_helpdesk_deepeval.py        # deepeval.evaluate()
    python -m pytest examples/deepeval/test_helpdesk_deepeval.py   # assert_test under pytest
"""

from __future__ import annotations

import os

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCall  # noqa: E402

from trajcheck.adapters.deepeval import (  # noqa: E402
    CompositeMetric,
    ForbiddenCallsMetric,
    ToolCallF1Metric,
    TrajectoryMatchMetric,
)

EXPECTED = [ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"}),
            ToolCall(name="create_ticket", input_parameters={"priority": "high", "group": "IT"})]

# What the agent did (in a real suite: the calls your agent made for this input).
GOOD_RUN = LLMTestCase(
    name="reopen_laptop_ticket",
    input="My laptop still won't boot after INC-1042 was closed. Open a new high-priority ticket.",
    actual_output="I opened INC-2001 with high priority for IT.",
    tools_called=[ToolCall(name="get_ticket", input_parameters={"id": "INC-1042"}),
                  ToolCall(name="search_docs", input_parameters={"q": "laptop boot"}),
                  ToolCall(name="create_ticket", input_parameters={"priority": "high", "group": "IT"})],
    expected_tools=EXPECTED,
    # trajcheck reads case settings from the test case's metadata
    metadata={"optional_calls": ["search_docs"], "forbidden_calls": ["update_ticket"]},
)

METRICS = [
    ToolCallF1Metric(threshold=0.8),
    TrajectoryMatchMetric(should_consider_ordering=True),     # DeepEval's flag -> in_order
    ForbiddenCallsMetric(),
    CompositeMetric(threshold=0.8),
]


def test_reopen_laptop_ticket():
    assert_test(GOOD_RUN, METRICS)


if __name__ == "__main__":
    result = evaluate([GOOD_RUN], METRICS)
    for md in result.test_results[0].metrics_data:
        print(f"{md.name}: {md.score} ({'pass' if md.success else 'FAIL'}) - {md.reason}")
