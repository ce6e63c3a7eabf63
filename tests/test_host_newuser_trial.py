"""What a new user met trying trajcheck inside RAGAS, LangSmith, Inspect AI and promptfoo from the
wheel and docs/hosts/<host>.md (issue 29's re-run), each in the real host, offline.

- promptfoo: a ``cases`` file row's forbidden calls were replaced by the assertion config's
  (``forbidden_calls: drop_db`` in ``defaultTest`` lifted each row's own); an agent returning ``{"tool_calls": [...], "final_response": ...}`` (the plain output
  shape the host pages document) lost its final response in the assertion's reader, so a run
  that claimed a failed restart succeeded passed ``false_success``; and an assertion without a
  ``metric:`` label was a named score under the core function's name (``outcome_from_calls``),
  so the summary hook's default ``task_success`` counted every run as a failure.
- Inspect AI (and every ``_spec`` host): ``trajcheck_scorer(match={"order_id": ...})`` was
  accepted and raised ``AttributeError`` on every sample.
- RAGAS: a misspelled keyword was a bare ``TypeError``; a bad per-sample setting did not name
  the sample.
- LangSmith: the suite summary counted an example whose reference raised as failed runs without
  saying so.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from trajcheck.errors import DatasetError, MetricInputError

ROOT = Path(__file__).resolve().parents[1]

# ----------------------------------------------------------------------------- promptfoo

_PF_AGENT = """
RUNS = {
    "restart": {"tool_calls": [{"name": "restart_service", "args": {"name": "api"},
                                "is_error": True, "output": "permission denied"}],
                "final_response": "The service was restarted successfully."},
    "good": {"tool_calls": [{"name": "restart_service", "args": {"name": "api"}, "output": "ok"}],
             "final_response": "The service was restarted successfully."},
}


def run(prompt, vars):
    return RUNS[vars["run"]]
"""


def test_promptfoo_plain_output_keeps_its_final_response_and_summary_finds_task_success(tmp_path):
    import yaml
    from test_promptfoo_cli import _install
    from test_promptfoo_hosts import EXAMPLE, _env

    paths = _install()
    (tmp_path / "agent.py").write_text(_PF_AGENT)
    # each case's own forbidden calls in a dataset file; the defaultTest forbids drop_db everywhere
    rows = [{"id": "restart", "input": "Restart the api service.", "forbidden_calls": ["restart_service"]},
            {"id": "good", "input": "Restart the api service.", "forbidden_calls": ["delete_namespace"]}]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    asserted = f"file://{EXAMPLE / 'trajcheck_assert.py'}"
    config = {
        "prompts": ["{{question}}"],
        "providers": [{"id": f"file://{EXAMPLE / 'trajcheck_provider.py'}", "config": {"agent": "agent.py:run"}}],
        "extensions": [f"file://{EXAMPLE / 'trajcheck_summary.py'}:extension_hook"],
        "defaultTest": {"assert": [
            # no metric: label, as docs/hosts/promptfoo.md writes them
            {"type": "python", "value": asserted, "config": {"metric": "false_success"}},
            {"type": "python", "value": asserted, "config": {"metric": "task_success"}},
            {"type": "python", "value": asserted,
             "config": {"metric": "forbidden_calls", "forbidden_calls": "drop_db", "cases": "cases.jsonl"}}]},
        "tests": [{"description": d, "vars": {"question": "Restart the api service.", "run": d,
                                              "expected_calls": '["restart_service"]'}}
                  for d in ("restart", "good")],
    }
    (tmp_path / "pf.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    out, summary = tmp_path / "results.json", tmp_path / "summary.json"
    env = _env(paths, tmp_path, sys.executable)
    env["TRAJCHECK_SUMMARY_OUT"] = str(summary)
    cmd = [paths["PROMPTFOO_BIN"], "eval", "-c", str(tmp_path / "pf.yaml"), "-o", str(out),
           "--no-cache", "--no-share", "--no-progress-bar", "--repeat", "2", "-j", "1"]
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 100, f"rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    rows = json.loads(out.read_text())["results"]["results"]
    assert len(rows) == 4
    for row in rows:
        d = row["testCase"]["description"]
        comps = {c["assertion"]["config"]["metric"]: c for c in row["gradingResult"]["componentResults"]}
        fs, ts, fb = comps["false_success"], comps["task_success"], comps["forbidden_calls"]
        # the row's list joined with the config's: restart_service is forbidden in 'restart' only
        named = row["namedScores"]
        assert (fb["pass"], named["forbidden_calls"]) == ((False, 0) if d == "restart" else (True, 1)), fb["reason"]
        if d == "restart":  # the failed restart claimed as done: false success 1, fails
            assert (fs["pass"], fs["score"], named["false_success"]) == (False, 0, 1), fs["reason"]
            assert "claims success while the task failed" in fs["reason"]
            assert (ts["pass"], named["task_success"]) == (False, 0)
        else:  # no failed call: false success does not apply (a pass, no named score)
            assert (fs["pass"], fs["score"]) == (True, 1) and "not applicable" in fs["reason"], fs["reason"]
            assert "false_success" not in named
            assert (ts["pass"], named["task_success"]) == (True, 1)
    data = json.loads(summary.read_text())
    assert data["problems"] == [] and data["runs"] == 4
    figs = data["figures"]
    # restart: 0 of 2, good: 2 of 2 -> pass^2 = (0 + 1) / 2, success rate 2/4
    assert figs["pass_hat_k"]["score"] == 0.5 and figs["pass_at_k"]["score"] == 0.5
    assert figs["success_rate"]["score"] == 0.5


def test_promptfoo_reader_plain_output_final_response():
    from trajcheck.promptfoo._read import read_output

    traj, how = read_output({"tool_calls": [{"name": "a", "args": {}, "output": "x"}], "final_response": "Done."})
    assert how == "plain" and traj.final_response == "Done."
    assert [s.kind for s in traj.steps] == ["tool_call", "tool_result", "final_response"]
    assert read_output({"tool_calls": [{"name": "a", "args": {}}]})[0].final_response is None


# ----------------------------------------------------------------------------- Inspect AI


def test_inspect_scorer_match_keyed_by_argument_is_an_error_and_star_works(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, get_model
    from inspect_ai.solver import solver
    from inspect_ai.tool import ToolCall

    from trajcheck.adapters.inspect_ai import trajcheck_scorer

    with pytest.raises(DatasetError, match=r"trajcheck_scorer: match\['order_id'\]: match is keyed by tool name"):
        trajcheck_scorer("argument_accuracy", match={"order_id": "ignore"})

    @solver
    def replay():
        async def solve(state, generate):
            call = ToolCall(id="c1", function="issue_refund", arguments={"order_id": "982"})
            state.messages += [ChatMessageAssistant(content="", tool_calls=[call]),
                               ChatMessageTool(content="ok", tool_call_id="c1", function="issue_refund"),
                               ChatMessageAssistant(content="Refunded.")]
            return state
        return solve

    ref = {"trajcheck": {"expected_calls": [{"name": "issue_refund", "args": {"order_id": "981"}}]}}
    task = Task(dataset=[Sample(id="s", input="Refund order 981.", metadata=ref)], solver=[replay()],
                scorer=[trajcheck_scorer("argument_accuracy", name="strict"),
                        trajcheck_scorer("argument_accuracy", name="star", match={"*": {"order_id": "ignore"}})])
    log = inspect_eval(task, model=get_model("mockllm/model"), display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    scores = log.samples[0].scores
    assert scores["strict"].value == 0.0 and scores["star"].value == 1.0


def test_inspect_success_rate_metric_on_another_scorer(tmp_path):
    """``success_rate()`` on a scorer of the user's own read only trajcheck's metadata and gave
    0.0; it counts that scorer's passes as the reducers do (here equal to Inspect's accuracy)."""
    pytest.importorskip("inspect_ai")
    from inspect_ai import Epochs, Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
    from inspect_ai.solver import solver

    from trajcheck.adapters.inspect_ai import success_rate

    pat = {"a": [True, False, False, False], "b": [True, True, False, True]}

    @solver
    def nothing():
        async def solve(state, generate):
            return state
        return solve

    @scorer(metrics=[accuracy(), success_rate()])
    def own():
        async def score(state, target):
            return Score(value=CORRECT if pat[state.sample_id][state.epoch - 1] else INCORRECT)
        return score

    task = Task(dataset=[Sample(id=s, input="q") for s in pat], solver=[nothing()], scorer=[own()],
                epochs=Epochs(4))
    log = inspect_eval(task, model=get_model("mockllm/model"), display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    got = {m: v.value for sc in log.results.scores for m, v in sc.metrics.items()}
    assert got == {"accuracy": 0.5, "success_rate": 0.5}  # 4 of 8 runs passed
    with pytest.raises(MetricInputError, match="value must be a number"):
        success_rate(value="high")


# ----------------------------------------------------------------------------- RAGAS


def test_ragas_misspelled_keyword_and_bad_sample_named(tmp_path):
    pytest.importorskip("ragas")
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    from trajcheck.adapters.ragas import TrajcheckForbiddenCalls, TrajcheckToolCallAccuracy

    with pytest.raises(MetricInputError, match=r"unknown key 'forbiden_calls' \(did you mean 'forbidden_calls'\?\)"):
        TrajcheckForbiddenCalls(forbiden_calls=["drop_db"])
    with pytest.raises(MetricInputError, match=r"did you mean 'strict_order'"):
        TrajcheckToolCallAccuracy(strict_ordr=False)
    with pytest.raises(DatasetError, match=r"match\['order_id'\]"):
        TrajcheckForbiddenCalls(match={"order_id": "ignore"})

    def sample(q, meta, tool_meta=None):
        return MultiTurnSample(user_input=[
            HumanMessage(content=q, metadata=meta),
            AIMessage(content="", tool_calls=[ToolCall(name="delete_customer", args={"id": "C7"})]),
            ToolMessage(content="ok", metadata=tool_meta), AIMessage(content="Done.")],
            reference_tool_calls=[])

    good = sample("Refund order 981.", {"trajcheck": {"forbidden_calls": ["delete_customer"]}})
    metric = TrajcheckForbiddenCalls(forbidden_calls=["drop_db"])  # joined with the sample's list
    r = evaluate(EvaluationDataset(samples=[good]), metrics=[metric], show_progress=False)
    assert r.to_pandas()["trajcheck_forbidden_calls"].tolist() == [0.0]
    for bad, where in ((sample("Refund order 982.", {"trajcheck": {"forbiden_calls": ["x"]}}),
                        r"did you mean 'forbidden_calls'"),
                       (sample("Refund order 982.", None, {"is_error": "yes"}), r"'is_error'\] is 'yes'")):
        with pytest.raises(DatasetError, match=r"^sample 'Refund order 982\.': .*" + where):
            evaluate(EvaluationDataset(samples=[good, bad]), metrics=[metric], show_progress=False,
                     raise_exceptions=True)
    # sample-level and direct scoring name it the same way
    with pytest.raises(DatasetError, match=r"^sample 'Refund order 982\.': messages\[2\]"):
        asyncio.run(metric.multi_turn_ascore(sample("Refund order 982.", None, {"error": True})))


# ----------------------------------------------------------------------------- LangSmith


def test_langsmith_summary_says_when_runs_had_no_verdict():
    pytest.importorskip("langsmith")
    from langsmith import Client, tracing_context
    from langsmith.schemas import Example

    from trajcheck.adapters.langsmith import TrajcheckEvaluator, suite_summary

    os.environ.setdefault("LANGSMITH_TRACING", "false")
    client = Client(api_key="offline", api_url="http://127.0.0.1:9")
    ds = uuid.uuid4()
    good = {"expected_calls": [{"name": "restart_service", "args": {"name": "api"}}]}
    typo = {"expected_calls": [{"name": "restart_service", "arg": {"name": "db"}}]}
    exs = [Example(id=uuid.uuid4(), dataset_id=ds, inputs={"input": "restart api"}, outputs=r) for r in (good, typo)]

    def target(inputs):
        return {"tool_calls": [{"name": "restart_service", "args": {"name": "api"}, "output": "ok"}],
                "final_response": "Restarted."}

    ev = TrajcheckEvaluator("task_success")
    with tracing_context(enabled=False):
        res = client.evaluate(target, data=exs, evaluators=[ev], summary_evaluators=[suite_summary(ev)],
                              upload_results=False, num_repetitions=2, max_concurrency=4)
        rows = list(res)
    from collections import Counter

    scores = Counter((r["example"].outputs == typo, fb.score, "write 'args'" in (fb.comment or ""))
                     for r in rows for fb in r["evaluation_results"]["results"])
    assert scores == {(False, 1.0, False): 2, (True, None, True): 2}, scores
    figs = {x.key: x for x in res._summary_results["results"]}
    p2 = figs["trajcheck_task_success_pass^2"]
    assert p2.score == 0.5 and "2 of 4 runs have no verdict" in p2.comment, p2.comment
    sr = figs["trajcheck_task_success_success_rate"]
    assert sr.score == 0.5 and "2 of 4 runs have no verdict" in sr.comment
    assert not math.isnan(sr.score)
