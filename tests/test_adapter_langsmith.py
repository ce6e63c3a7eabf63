"""trajcheck.adapters.langsmith against the real langsmith 0.15 (offline, no API key)."""

from __future__ import annotations

import json
import os
import uuid
import warnings

import pytest

os.environ["LANGSMITH_TEST_TRACKING"] = "false"
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"
os.environ.pop("LANGSMITH_API_KEY", None)
warnings.filterwarnings("ignore")

langsmith = pytest.importorskip("langsmith")

from langsmith import Client  # noqa: E402
from langsmith.schemas import Example  # noqa: E402

from trajcheck.adapters import langsmith as al  # noqa: E402
from trajcheck.metrics.calls import tool_call_prf  # noqa: E402
from trajcheck.metrics.reliability import bootstrap_ci, pass_at_k, pass_hat_k  # noqa: E402
from trajcheck.metrics.trajectory import trajectory_match  # noqa: E402
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory  # noqa: E402

DS = uuid.uuid4()
# a client that never reaches the network (its one /info probe goes to a closed local port)
OFFLINE = Client(api_key="offline", api_url="http://127.0.0.1:9")


def msgs(text, calls):
    out = [{"role": "user", "content": text}]
    for i, (n, a) in enumerate(calls):
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    out.append({"role": "assistant", "content": "done"})
    return out


def core_pair(text, calls, expected, **kw):
    steps = [Step(0, "user", content=text)] + [
        Step(i + 1, "tool_call", tool_calls=(ToolCall(n, dict(a)),)) for i, (n, a) in enumerate(calls)]
    return (Trajectory(steps=tuple(steps), final_response="done"),
            Case(id="x", input=text, expected_calls=tuple(ExpectedCall(n, dict(a)) for n, a in expected), **kw))


# Task A always calls the right tool; task B gets the argument right on its 1st trial only.
EXAMPLES = [
    Example(id=uuid.uuid4(), dataset_id=DS, inputs={"input": "ticket INC-1"},
            outputs={"expected_calls": [{"name": "get_ticket", "args": {"id": "INC-1"}}]}),
    Example(id=uuid.uuid4(), dataset_id=DS, inputs={"input": "ticket INC-2"},
            outputs={"expected_calls": [{"name": "get_ticket", "args": {"id": "INC-2"}}],
                     "optional_calls": ["search_docs"]}),
]


def make_target():
    seen: dict[str, int] = {}

    def target(inputs):
        text = inputs["input"]
        n = seen[text] = seen.get(text, 0) + 1
        tid = text.split()[-1]
        if tid == "INC-2" and n > 1:
            tid = "INC-3"
        return {"messages": msgs(text, [("search_docs", {"q": text}), ("get_ticket", {"id": tid})])}

    return target


def rows_by_example(res):
    out: dict[str, list] = {}
    for row in res:
        out.setdefault(str(row["example"].id), []).append(row)
    return out


def test_evaluate_offline_rows_and_summary_equal_core():
    f1 = al.TrajcheckEvaluator("tool_call_f1", key="tool_f1")
    tm = al.TrajcheckEvaluator("trajectory_match", mode="superset", dialect="agentevals", key="traj")
    res = OFFLINE.evaluate(make_target(), data=EXAMPLES, evaluators=[f1, tm, tm.as_function()],
                           summary_evaluators=[al.pass_k_summary(tm, 3), al.pass_k_summary(tm, 1)],
                           upload_results=False, num_repetitions=3, max_concurrency=0)
    rows = rows_by_example(res)
    assert sorted(len(v) for v in rows.values()) == [3, 3]
    trials: dict[str, list[bool]] = {}
    for ex in EXAMPLES:
        for row in rows[str(ex.id)]:
            calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for m in row["run"].outputs["messages"] for c in (m.get("tool_calls") or [])]
            exp = [(e["name"], e["args"]) for e in ex.outputs["expected_calls"]]
            traj, case = core_pair(ex.inputs["input"], calls, exp,
                                   optional_calls=tuple(ex.outputs.get("optional_calls", ())))
            prf = tool_call_prf(traj, case)
            tmr = trajectory_match(traj, case, "superset")
            got = {r.key: (r.score, r.comment) for r in row["evaluation_results"]["results"]}
            assert got["tool_f1"] == (prf.f1, prf.reason)
            assert got["tool_f1_precision"][0] == prf.precision
            assert got["tool_f1_recall"][0] == prf.recall
            assert got["traj"] == (tmr.score, tmr.reason)
            trials.setdefault(str(ex.id), []).append(bool(tmr.passed))
    # hand-computed: task A has search_docs as an unexpected extra (P = 1/2, R = 1, F1 = 2/3);
    # task B declares it optional, so trial 1 scores 1.0 and trials 2-3 score 0.
    a, b = (rows[str(e.id)] for e in EXAMPLES)
    assert {round(next(r.score for r in row["evaluation_results"]["results"] if r.key == "tool_f1"), 12)
            for row in a} == {round(2 / 3, 12)}
    assert sorted(next(r.score for r in row["evaluation_results"]["results"] if r.key == "tool_f1")
                  for row in b) == [0.0, 0.0, 1.0]
    summary = {r.key: r for r in res._summary_results["results"]}
    # pass^3 = (C(3,3)/C(3,3) + C(1,3)/C(3,3)) / 2 = 0.5; pass@3 = 1.0; pass^1 = (1 + 1/3)/2
    assert summary["traj_pass^3"].score == 0.5 == pass_hat_k(trials, 3)
    assert summary["traj_pass@3"].score == 1.0 == pass_at_k(trials, 3)
    assert summary["traj_pass^1"].score == pytest.approx(2 / 3) and summary["traj_pass^1"].score == pass_hat_k(trials, 1)
    ci = bootstrap_ci(trials, lambda r: pass_hat_k(r, 3), seed=0)
    assert f"[{ci.lo:.4f}, {ci.hi:.4f}]" in summary["traj_pass^3"].comment


def test_both_calling_styles_and_feedback_keys():
    ev = al.TrajcheckEvaluator("trajectory_match", mode="strict", dialect="openevals", key="strict")
    out = {"messages": msgs("q", [("a", {"x": 1}), ("b", {})])}
    ref_traj = {"messages": msgs("q", [("a", {"x": 1}), ("b", {})])}  # agentevals-style reference
    r = ev(inputs={"input": "q"}, outputs=out, reference_outputs=ref_traj)
    assert r["key"] == "strict" and r["score"] == 1.0
    swapped = {"messages": msgs("q", [("b", {}), ("a", {"x": 1})])}
    assert ev(outputs=swapped, reference_outputs=ref_traj)["score"] == 0.0
    fn = ev.as_function()
    assert fn.__name__ == "strict" and fn(outputs=swapped, reference_outputs=ref_traj)["score"] == 0.0
    assert al.TrajcheckEvaluator("tool_call_f1").feedback_keys == [
        "trajcheck_tool_call_f1", "trajcheck_tool_call_f1_precision", "trajcheck_tool_call_f1_recall"]
    assert al.agentevals_mode("strict") == "exact" and al.agentevals_mode("superset") == "superset"


def test_outputs_shapes_list_langchain_and_calls_dict():
    from langchain_core.messages import AIMessage, HumanMessage

    ev = al.TrajcheckEvaluator("tool_call_f1")
    ref = {"expected_calls": [{"name": "a", "args": {"x": 1}}]}
    lc = [HumanMessage(content="q"), AIMessage(content="", tool_calls=[{"name": "a", "args": {"x": 1}, "id": "1"}])]
    as_list = msgs("q", [("a", {"x": 1})])
    plain = {"tool_calls": [{"name": "a", "args": {"x": 1}}, {"name": "a", "args": {"x": 1}}]}
    assert ev(outputs=lc, reference_outputs=ref)["results"][0]["score"] == 1.0
    assert ev(outputs=as_list, reference_outputs=ref)["results"][0]["score"] == 1.0
    # duplicate call counts: P = 1/2, R = 1 -> F1 = 2/3
    assert ev(outputs=plain, reference_outputs=ref)["results"][0]["score"] == pytest.approx(2 / 3)
    from trajcheck.errors import TraceFormatError

    with pytest.raises(TraceFormatError):
        ev(outputs=None, reference_outputs=ref)


def test_error_feedback_keeps_keys():
    ev = al.TrajcheckEvaluator("tool_call_f1", key="k")
    ex = Example(id=uuid.uuid4(), dataset_id=DS, inputs={"input": "q"},
                 outputs={"expected_calls": [{"name": "a"}]})
    res = OFFLINE.evaluate(lambda inputs: {"answer": 42}, data=[ex], evaluators=[ev],
                           upload_results=False)
    keys = {r.key for row in res for r in row["evaluation_results"]["results"]}
    assert keys == {"k", "k_precision", "k_recall"}


@pytest.fixture
def test_item(request):
    # (a marked test cannot take ``request`` itself: with tracking off, langsmith's wrapper
    # swallows that keyword and calls the test without it)
    return request.node


@pytest.mark.langsmith
def test_in_langsmith_pytest_marker(test_item):
    from langsmith import testing as t

    # LangSmith's pytest plugin (entry point langsmith.pytest_plugin) really ran this test:
    # it replaced the test function by langsmith.testing's wrapper around it
    assert test_item.config.pluginmanager.hasplugin("langsmith_plugin")
    assert test_item.obj is not test_in_langsmith_pytest_marker
    assert test_item.obj.__wrapped__ is test_in_langsmith_pytest_marker
    ev = al.TrajcheckEvaluator("tool_call_f1", key="tool_f1")
    out = {"messages": msgs("q", [("a", {"x": 1})])}
    t.log_inputs({"input": "q"})
    t.log_outputs(out)
    r = ev(outputs=out, reference_outputs={"expected_calls": [{"name": "a", "args": {"x": 1}}]})
    al.log_feedback(r)
    assert r["results"][0]["score"] == 1.0


def test_pytest_marker_example_runs_offline_as_the_readme_says(tmp_path):
    """examples/langsmith/test_helpdesk_langsmith.py under LangSmith's pytest plugin, in a
    fresh process with the README's environment (no key, LANGSMITH_TEST_TRACKING=false)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env["LANGSMITH_TEST_TRACKING"] = "false"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "examples/langsmith/test_helpdesk_langsmith.py"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout


def _helpdesk_tool_defs():
    from pathlib import Path

    from trajcheck.run.runner import load_agent

    agents = Path(__file__).resolve().parent.parent / "examples" / "helpdesk" / "agents.py"
    return load_agent(f"{agents}:good_agent").tools.definitions("openai")


def test_schema_arguments_forbidden_final_state_in_evaluate():
    """Hand-computed values for the evaluators the other tests do not pin, through
    evaluate(..., upload_results=False)."""
    defs = _helpdesk_tool_defs()
    # get_ticket's ticket_id must be a string "INC-<n>" (1043 is not); update_ticket's
    # priority must be low/medium/high/critical ("urgent" is not): 0 of 2 calls valid;
    # per-argument accuracy (seed 000 §2.2): get_ticket 0/1, update_ticket 1/2 -> 0.25. The state: the ticket
    # was closed although it should have been raised to high priority -> final state 0.
    calls = [("get_ticket", {"ticket_id": 1043}), ("update_ticket", {"ticket_id": "INC-1043", "priority": "urgent"})]
    expected = [("get_ticket", {"ticket_id": "INC-1043"}), ("update_ticket", {"ticket_id": "INC-1043", "priority": "high"})]
    before = {"tickets": [{"id": 1, "key": "INC-1043", "priority": "low", "status": "open"}]}
    after = {"tickets": [{"id": 1, "key": "INC-1043", "priority": "low", "status": "closed"}]}
    ex = Example(id=uuid.uuid4(), dataset_id=DS, inputs={"input": "raise INC-1043 to high"},
                 outputs={"expected_calls": [{"name": n, "args": a} for n, a in expected],
                          "forbidden_calls": ["update_ticket"],
                          "expected_final_state": {"tickets": [{"key": "INC-1043", "priority": "high"}]}})

    def target(inputs):
        return {"messages": msgs(inputs["input"], calls), "before_state": before, "after_state": after}

    evs = [al.TrajcheckEvaluator("schema_validity", tools=defs), al.TrajcheckEvaluator("argument_correctness"),
           al.TrajcheckEvaluator("forbidden"), al.TrajcheckEvaluator("final_state")]
    res = OFFLINE.evaluate(target, data=[ex], evaluators=evs, upload_results=False)
    got = {r.key: (r.score, r.comment) for row in res for r in row["evaluation_results"]["results"]}
    assert {k: v[0] for k, v in got.items()} == {
        "trajcheck_schema_validity": 0.0, "trajcheck_argument_accuracy": 0.25,
        "trajcheck_forbidden_calls": 0.0, "trajcheck_final_state": 0.0}
    from trajcheck.metrics.calls import argument_accuracy, schema_errors
    from trajcheck.metrics.outcome import check_final_state
    from trajcheck.metrics.sequences import check_forbidden_sequences

    traj, case = core_pair(ex.inputs["input"], calls, expected)
    assert got["trajcheck_schema_validity"] == (schema_errors(traj, defs).score, schema_errors(traj, defs).reason)
    assert got["trajcheck_argument_accuracy"][1] == argument_accuracy(traj, case).reason
    fb = check_forbidden_sequences(traj, [{"tool": "update_ticket", "name": "forbidden_calls[0]"}])
    assert got["trajcheck_forbidden_calls"] == (fb.score, fb.reason)
    fs = check_final_state(before, after, ex.outputs["expected_final_state"])
    assert got["trajcheck_final_state"] == (fs.score, fs.reason)
    # the same row with schema-valid, expected arguments: both 1.0
    ok = al.TrajcheckEvaluator("schema_validity", tools=defs)(outputs={"messages": msgs("q", expected)})
    assert ok["score"] == 1.0
