"""trajcheck metrics in ragas.evaluate() and in the collections API (offline, no API key).

Run from the repository root:  python examples/ragas/ragas_helpdesk.py
"""

from __future__ import annotations

import asyncio
import os
import warnings

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore", category=DeprecationWarning)

from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.dataset_schema import MultiTurnSample  # noqa: E402
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage  # noqa: E402

from trajcheck.adapters.ragas import (  # noqa: E402
    TrajcheckComposite,
    TrajcheckToolCallAccuracy,
    TrajcheckToolCallF1,
)

sample = MultiTurnSample(
    user_input=[
        HumanMessage(content="Weather in Shanghai and New York?"),
        AIMessage(content="", tool_calls=[ToolCall(name="weather", args={"city": "Shanghai"}),
                                          ToolCall(name="weather", args={"city": "Shanghai"})]),
        ToolMessage(content="21C"),
        ToolMessage(content="21C"),
        AIMessage(content="Shanghai is 21C."),
    ],
    reference_tool_calls=[ToolCall(name="weather", args={"city": "New York"}),
                          ToolCall(name="weather", args={"city": "Shanghai"})],
)

metrics = [
    TrajcheckToolCallF1(),                                   # duplicates count: F1 0.5
    TrajcheckToolCallAccuracy(strict_order=False),          # same calls, any order: 0.0
    TrajcheckComposite(),
]

if __name__ == "__main__":
    result = evaluate(EvaluationDataset(samples=[sample]), metrics=metrics, show_progress=False)
    row = result.to_pandas().iloc[0]
    for m in metrics:  # full precision: the same floats trajcheck's core returns
        print(f"{m.name}: {float(row[m.name])!r}")
    # the same metric in the collections API, with its reason
    r = asyncio.run(metrics[0].as_collections().ascore(
        user_input=sample.user_input, reference_tool_calls=sample.reference_tool_calls))
    print(r.value, "-", r.reason)
