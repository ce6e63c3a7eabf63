"""Every trajcheck metric inside MLflow 3's mlflow.genai.evaluate() on the eight recorded
refund-desk runs (offline: a local file store in a temporary folder, no server, no model).

One command, from the repository root:  python examples/mlflow/refund_desk.py

The runs are read with trajcheck's trace reader and replayed as real MLflow traces
(``log_trace``: an AGENT span, a CHAT_MODEL span per model turn, a TOOL span per call, ERROR
status for the failed call); ``evaluate`` scores those traces, which trajcheck's MLflow trace
reader reads back. Expectations (expected calls and case settings) ride in each row's
``expectations["trajcheck"]``. Every metric of the README table and every trajectory mode of
every dialect is a ``TrajcheckScorer``; MLflow's own view is printed: each assessment's value
and rationale per trace, then MLflow's aggregate metrics, then the suite figures.
Then final state from a sandbox fixture: three more cases whose database starts from
``examples/refund_desk/shop.sql`` (``initial_state``) and whose runs were replayed on a real
trajcheck sandbox; the row's expectations carry the database after the run (``after_state``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

import mlflow  # noqa: E402
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

from trajcheck.adapters.mlflow import TrajcheckScorer, log_trace, row_from_trace, suite_figures  # noqa: E402


def main() -> None:
    store = Path(tempfile.mkdtemp(prefix="trajcheck-mlflow-"))
    mlflow.set_tracking_uri((store / "mlruns").as_uri())
    mlflow.set_experiment("refund-desk")
    scorers = [TrajcheckScorer(k) for k in METRICS]
    scorers += [TrajcheckScorer("trajectory_match", mode=m, dialect=d) for d, m in MODES]
    rows = []
    for cid, case in CASES.items():
        ref = row_from_trace(RUNS[cid], expected_calls=expected(case), **settings(case))["expectations"]
        rows.append({"trace": mlflow.get_trace(log_trace(RUNS[cid])), "expectations": ref})
    result = mlflow.genai.evaluate(data=rows, scorers=scorers)
    df = result.result_df
    names = [s.name for s in scorers] + ["trajcheck_tool_call_f1_precision", "trajcheck_tool_call_f1_recall"]
    for i, req in enumerate(df["request"]):
        print(f"== {req['case_id']}  (MLflow trace {df['trace_id'].iloc[i]})")
        for n in names:
            print(f"  {n}: {float(df[f'{n}/value'].iloc[i])!r} - {df[f'{n}/rationale'].iloc[i]}")
    print("== aggregates (MLflow's metrics: mean of each assessment over the traces)")
    for k in ("trajcheck_tool_call_f1/mean", "trajcheck_task_success/mean", "trajcheck_composite/mean"):
        print(f"  {k}: {float(result.metrics[k])!r}")
    print("== suite figures (two runs per task)")
    rows2 = [row_from_trace(RUNS[cid], expected_calls=expected(c), **settings(c))
             for cid, c in CASES.items() for _trial in range(2)]
    for fig, r in suite_figures(rows2).items():
        print(f"  {fig}: {r.score!r} - {r.reason}")
    print("== final state from the sandbox fixture examples/refund_desk/shop.sql")
    rows3 = []
    for cid, case in FIXTURE_CASES.items():
        ref = row_from_trace(FIXTURE_RUNS[cid], expected_calls=expected(case), **fixture_settings(case))
        rows3.append({"trace": mlflow.get_trace(log_trace(FIXTURE_RUNS[cid])), "expectations": ref["expectations"]})
    final_state = TrajcheckScorer("final_state")
    df = mlflow.genai.evaluate(data=rows3, scorers=[final_state]).result_df
    for i, req in enumerate(df["request"]):
        print(f"== {req['case_id']}  (MLflow trace {df['trace_id'].iloc[i]})")
        n = final_state.name
        print(f"  {n}: {float(df[f'{n}/value'].iloc[i])!r} - {df[f'{n}/rationale'].iloc[i]}")


if __name__ == "__main__":
    main()
