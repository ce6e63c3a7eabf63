"""trajcheck evaluators in langsmith.evaluate(), offline (no API key, nothing uploaded).

Run from the repository root:  python examples/langsmith/langsmith_helpdesk.py
"""

from __future__ import annotations

import json
import logging
import os
import uuid

os.environ.setdefault("LANGSMITH_TRACING", "false")
# The client's background thread probes the (unreachable) server once and logs a warning;
# nothing is uploaded with upload_results=False, so keep that warning out of the output.
logging.getLogger("langsmith").setLevel(logging.ERROR)

from langsmith import Client  # noqa: E402
from langsmith.schemas import Example  # noqa: E402

from trajcheck.adapters.langsmith import TrajcheckEvaluator, pass_k_summary  # noqa: E402

DATASET = uuid.uuid4()
examples = [
    Example(id=uuid.uuid4(), dataset_id=DATASET, inputs={"input": "status of INC-1042?"},
            outputs={"expected_calls": [{"name": "get_ticket", "args": {"id": "INC-1042"}}],
                     "optional_calls": ["search_docs"]}),
    Example(id=uuid.uuid4(), dataset_id=DATASET, inputs={"input": "status of INC-7?"},
            outputs={"expected_calls": [{"name": "get_ticket", "args": {"id": "INC-7"}}]}),
]

trial = {"n": 0}


def agent(inputs: dict) -> dict:
    """A stand-in agent: returns its OpenAI-style message list (misreads INC-7 every 3rd run)."""
    trial["n"] += 1
    tid = inputs["input"].split()[-1].rstrip("?")
    if tid == "INC-7" and trial["n"] % 3 == 0:
        tid = "INC-1"
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_ticket", "arguments": json.dumps({"id": tid})}}
    return {"messages": [{"role": "user", "content": inputs["input"]},
                         {"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "c1", "content": "closed"},
                         {"role": "assistant", "content": f"{tid} is closed."}]}


f1 = TrajcheckEvaluator("tool_call_f1", key="tool_f1")
strict = TrajcheckEvaluator("trajectory_match", mode="strict", dialect="agentevals", key="traj_strict")

if __name__ == "__main__":
    # a client pointed nowhere: with upload_results=False nothing is sent
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    results = client.evaluate(agent, data=examples, evaluators=[f1, strict],
                              summary_evaluators=[pass_k_summary(strict, k=3, keys={"pass_hat_k": "pass^3", "pass_at_k": "pass@3"})],
                              num_repetitions=3, upload_results=False,
                              max_concurrency=0)  # one run at a time: deterministic order
    for row in results:
        print(row["example"].inputs["input"],
              {r.key: r.score for r in row["evaluation_results"]["results"]})
    for r in results._summary_results["results"]:
        print(r.key, r.score, "-", r.comment)
