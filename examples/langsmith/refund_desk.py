"""Every trajcheck metric inside LangSmith's evaluate() on the eight recorded refund-desk runs
(offline: upload_results=False, a client pointed at 127.0.0.1, no API key).

One command, from the repository root:  python examples/langsmith/refund_desk.py

The runs are read with trajcheck's trace reader; ``example_from_trace`` makes each LangSmith
Example (reference settings under ``"trajcheck"``) and ``outputs_from_trace`` the run output a
replaying target returns. Every metric of the README table and every trajectory mode of every
dialect is a row evaluator; the suite figures are summary evaluators over two repetitions.
The evaluation runs inside ``tracing_context(enabled=False)``: with no LangSmith server,
LangSmith's background tracer would otherwise wait at exit (minutes, for LangGraph targets).
Then final state from a sandbox fixture: three more cases whose database starts from
``examples/refund_desk/shop.sql`` (``initial_state``) and whose runs were replayed on a real
trajcheck sandbox; the Example's reference carries the database after the run (``after_state``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LANGSMITH_TRACING", "false")
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
from langsmith import Client, tracing_context  # noqa: E402

from trajcheck.adapters.langsmith import (  # noqa: E402
    TrajcheckEvaluator,
    example_from_trace,
    outputs_from_trace,
    suite_summary,
)


def main() -> None:
    examples = [example_from_trace(RUNS[cid], expected_calls=expected(c), **settings(c))
                for cid, c in CASES.items()]
    outputs = {cid: outputs_from_trace(t) for cid, t in RUNS.items()}
    evaluators = [TrajcheckEvaluator(k) for k in METRICS]
    evaluators += [TrajcheckEvaluator("trajectory_match", mode=m, dialect=d) for d, m in MODES]
    summaries = [suite_summary(TrajcheckEvaluator("task_success"))]
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")  # nothing is sent
    with tracing_context(enabled=False):
        results = client.evaluate(lambda inputs: outputs[inputs["case_id"]], data=examples,
                                  evaluators=evaluators, summary_evaluators=summaries,
                                  num_repetitions=2, upload_results=False, max_concurrency=0)
        rows = list(results)
    seen = set()
    for row in rows:
        cid = row["example"].inputs["case_id"]
        if cid in seen:  # the second repetition scores the same recorded run
            continue
        seen.add(cid)
        print(f"== {cid}")
        for r in row["evaluation_results"]["results"]:
            print(f"  {r.key}: {r.score!r} - {r.comment}")
    print("== suite figures (two runs per task)")
    for r in results._summary_results["results"]:
        print(f"  {r.key}: {r.score!r} - {r.comment}")
    print("== final state from the sandbox fixture examples/refund_desk/shop.sql")
    fixture_examples = [example_from_trace(FIXTURE_RUNS[cid], expected_calls=expected(c), **fixture_settings(c))
                        for cid, c in FIXTURE_CASES.items()]
    fixture_outputs = {cid: outputs_from_trace(t) for cid, t in FIXTURE_RUNS.items()}
    with tracing_context(enabled=False):
        rows = list(client.evaluate(lambda inputs: fixture_outputs[inputs["case_id"]], data=fixture_examples,
                                    evaluators=[TrajcheckEvaluator("final_state")], upload_results=False,
                                    max_concurrency=0))
    for row in rows:
        print(f"== {row['example'].inputs['case_id']}")
        for r in row["evaluation_results"]["results"]:
            print(f"  {r.key}: {r.score!r} - {r.comment}")


if __name__ == "__main__":
    main()
