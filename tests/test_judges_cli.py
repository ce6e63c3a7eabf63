"""`trajcheck eval --judge` against a scripted OpenAI-compatible server on 127.0.0.1: per-check
pass rates with Wilson intervals in the terminal, JSON and HTML reports; the second run is
served from the SQLite cache with identical verdicts and no request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import ChatServer, wilson

from trajcheck.cli.app import main
from trajcheck.errors import JudgeError
from trajcheck.judges.rubrics import TRAJECTORY_CHECKS
from trajcheck.judges.run import model_from_spec

NAMES = [n for n, _ in TRAJECTORY_CHECKS]


def _judge_reply(prompt: str) -> str:
    if '"criteria": [' in prompt:  # task completion: one criterion per case here
        met = "permission denied" not in prompt
        return json.dumps({"criteria": [{"criterion": "x", "met": met,
                                         "evidence": "step 2" if met else "delete failed"}]})
    checks = {n: {"pass": True, "reason": "fine"} for n in NAMES}
    if "permission denied" in prompt:
        checks["failure_handled"] = {"pass": False, "reason": "ignored the failure"}
        checks["response_faithful"] = {"pass": False, "reason": "claims the file was deleted"}
    return json.dumps({"checks": checks})


def _Server() -> ChatServer:
    return ChatServer(_judge_reply)


def _run(case_id: str, trial: int, output: str, final: str) -> dict[str, Any]:
    return {"metadata": {"case_id": case_id, "trial": trial}, "messages": [
        {"role": "user", "content": "Delete the old report"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "delete_file", "arguments": '{"path": "/r/old.pdf"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": final}]}


def _files(tmp: Path) -> tuple[Path, Path]:
    runs = [_run("del", 0, "deleted", "Deleted."), _run("del", 1, "deleted", "The report is deleted."),
            _run("del", 2, "Error: permission denied", "Deleted.")]
    traces = tmp / "runs.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in runs))
    cases = tmp / "cases.jsonl"
    cases.write_text(json.dumps({
        "id": "del", "input": "Delete the old report",
        "expected_calls": [{"name": "delete_file", "args": {"path": "/r/old.pdf"}}],
        "tools": [{"name": "delete_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}}}}],
        "metadata": {"success_criteria": ["the file is deleted"]}}) + "\n")
    return traces, cases


def test_eval_judge_reports_per_check_rates_and_reruns_from_cache(tmp_path: Path) -> None:
    srv = _Server()
    traces, cases = _files(tmp_path)
    db = tmp_path / "cache.sqlite"
    outs = []
    for i in (1, 2):
        j, h = tmp_path / f"r{i}.json", tmp_path / f"r{i}.html"
        r = CliRunner().invoke(main, ["eval", str(traces), "--cases", str(cases), "--judge",
                                      f"{srv.url}#judge-mini", "--judge-cache", str(db),
                                      "--json", str(j), "--html", str(h)])
        assert r.exit_code == 0, r.output
        outs.append((r.output, json.loads(j.read_text())["meta"]["judges"], h.read_text()))
        if i == 1:
            assert len(srv.requests) == 6  # 3 runs x (trajectory + task completion)
            assert srv.requests[0]["model"] == "judge-mini" and srv.requests[0]["temperature"] == 0.0
    assert len(srv.requests) == 6  # the second run asked nothing: every reply came from the cache
    (t1, j1, h1), (t2, j2, h2) = outs
    rows = {(c["judge"], c["check"]): c for c in j1["checks"]}
    # 3 runs: failure_handled applies only where a call failed... the source has no error
    # flag, so it applies only where the judge said false (run 3): 0/1
    assert rows[("trajectory", "failure_handled")]["passed"] == 0
    assert rows[("trajectory", "failure_handled")]["applicable"] == 1
    faithful = rows[("trajectory", "response_faithful")]
    assert (faithful["passed"], faithful["applicable"]) == (2, 3)
    assert faithful["rate"] == pytest.approx(2 / 3)
    # Wilson 95% for 2/3: centre (2/3 + z²/6)/(1 + z²/3), z = 1.959964
    z = 1.959964
    centre = (2 / 3 + z * z / 6) / (1 + z * z / 3)
    half = z / (1 + z * z / 3) * ((2 / 3 * 1 / 3) / 3 + z * z / 36) ** 0.5
    assert faithful["interval"] == pytest.approx([centre - half, centre + half], abs=1e-6)
    tc = rows[("task_completion", "all criteria met")]
    assert (tc["passed"], tc["applicable"]) == (2, 3)
    assert j1["runs"] == 3 and j1["errors"] == {} and j1["cached_replies"] == 0
    # the judge's own usage, from each reply's usage (100 prompt + 20 completion tokens)
    assert j1["usage"] == {"input_tokens": 600, "output_tokens": 120, "calls": 6,
                           "cost_usd": None, "cost_source": None}
    assert j2["cached_replies"] == 6
    assert j2["usage"]["calls"] == 0 and j2["usage"]["input_tokens"] == 0  # the cache cost nothing
    strip = lambda js: [[{k: v for k, v in x.items() if k != "audit"} for x in r["verdicts"]]  # noqa: E731
                        for r in js["verdicts"]]
    assert strip(j1) == strip(j2) and j1["checks"] == j2["checks"]
    a = j1["verdicts"][2]["verdicts"][0]["audit"]
    assert a["model"]["model"] == "judge-mini" and len(a["prompt_sha256"]) == 64
    for out in (t1, h1):
        assert "response_faithful" in out and "2/3" in out
    assert f"{2 / 3:.3f} [{centre - half:.3f}, {centre + half:.3f}]" in t1
    assert f'id="judge-trajectory-response_faithful">{2 / 3:.3f} [' in h1
    assert "Judge checks" in h2


def test_model_spec_errors() -> None:
    for bad in ("http://127.0.0.1:1/v1", "nonsense", "no_such_module_xyz:f"):
        with pytest.raises(JudgeError, match="--judge"):
            model_from_spec(bad)
    m = model_from_spec("tests.test_judges_cli:_judge_reply")
    assert m.complete([{"role": "user", "content": "x"}]).startswith('{"checks"')


def test_judge_endpoint_without_the_judges_extra_exits_2(tmp_path: Path, monkeypatch) -> None:
    # httpx not importable (the judges extra not installed): the endpoint judge fails at set-up
    # with the install command, exit 2, before anything is scored; not "judge errors: N", exit 0
    import sys

    monkeypatch.setitem(sys.modules, "httpx", None)
    traces, cases = _files(tmp_path)
    j = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["eval", str(traces), "--cases", str(cases), "-q", "--judge",
                                  "http://127.0.0.1:9/v1#judge-mini", "--json", str(j)])
    assert r.exit_code == 2, r.output
    assert "pip install 'trajcheck[judges]'" in r.output
    assert not j.exists()


# ---------------------------------------------------------------- the help-desk example

HELPDESK = Path(__file__).resolve().parents[1] / "examples" / "helpdesk"


def _helpdesk_judge(prompt: str) -> str:
    """A judge that reads the help-desk traces as a careful reader would: a failed call
    followed by "has been created" is an unhandled failure and an unfaithful reply."""
    checks: dict[str, Any] = {n: {"pass": True, "reason": "fine"} for n in NAMES}
    failed = "ERROR" in prompt.split("FINAL RESPONSE:")[0]
    if not failed:
        checks["failure_handled"] = {"pass": "n/a", "reason": "no tool failed"}
    elif "has been created" in prompt.split("FINAL RESPONSE:")[-1]:
        checks["failure_handled"] = {"pass": False, "reason": "ignored the 503"}
        checks["response_faithful"] = {"pass": False, "reason": "claims a ticket that does not exist"}
    return json.dumps({"checks": checks})


def test_eval_helpdesk_example_with_judge_then_from_cache(tmp_path: Path) -> None:
    """The done-when test: `trajcheck eval` of the help-desk example's recorded runs with
    --judge against a scripted OpenAI-compatible server: per-check pass rates in the terminal,
    JSON, HTML and Markdown reports; the judge's own usage and cost; a second run served from
    the cache with identical verdicts."""
    runs = tmp_path / "runs-false.jsonl"
    r = CliRunner().invoke(main, ["run", "--agent", f"{HELPDESK / 'agents.py'}:false_success_agent",
                                  "--cases", str(HELPDESK / "cases.jsonl"), "--out", str(runs),
                                  "-q", "--no-progress"])
    assert r.exit_code == 0, r.output
    srv = ChatServer(_helpdesk_judge, prompt_tokens=100, completion_tokens=20)
    db = tmp_path / "judge-cache.sqlite"
    outs = []
    for i in (1, 2):
        j, h, m = (tmp_path / f"r{i}.{x}" for x in ("json", "html", "md"))
        r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(HELPDESK / "cases.jsonl"),
                                      "--judge", f"{srv.url}#judge-mini", "--judge-cache", str(db),
                                      "--judge-price", "0.15,0.60",
                                      "--json", str(j), "--html", str(h), "--md", str(m)])
        assert r.exit_code == 0, r.output
        outs.append((r.output, json.loads(j.read_text())["meta"]["judges"], h.read_text(),
                     m.read_text()))
        assert len(srv.requests) == 25  # one trajectory judge per run; none on the second pass
    srv.close()
    (t1, j1, h1, m1), (t2, j2, h2, m2) = outs
    rows = {c["check"]: c for c in j1["checks"]}
    # 25 runs; 4 have a failed call (3 create_ticket 503s claimed as created, 1 search_docs
    # timeout answered from a retry): failure_handled applies to 4 and passed 1
    expect = {"tool_results_used": (25, 25), "no_unnecessary_calls": (25, 25),
              "no_unrequested_actions": (25, 25), "failure_handled": (1, 4),
              "response_faithful": (22, 25)}
    for name, (p, n) in expect.items():
        assert (rows[name]["passed"], rows[name]["applicable"]) == (p, n), name
        assert rows[name]["interval"] == pytest.approx(list(wilson(p, n)), abs=1e-9), name
    assert "task_completion" not in {c["judge"] for c in j1["checks"]}  # no success_criteria
    lo, hi = wilson(22, 25)
    shown = f"{22 / 25:.3f} [{lo:.3f}, {hi:.3f}]"
    assert shown == "0.880 [0.700, 0.958]"
    for out in (t1, h1, m1, t2, h2, m2):
        assert "response_faithful" in out and "22/25" in out and shown in out
    assert "| trajectory | failure_handled | 1/4 |" in m1
    assert f'id="judge-trajectory-response_faithful">{shown}' in h1
    # usage and cost of judging, apart from the agent's: 25 calls x (100 in, 20 out) tokens
    # at $0.15 / $0.60 per million = (2500 * 0.15 + 500 * 0.60) / 1e6 = $0.000675
    assert j1["usage"] == {"input_tokens": 2500, "output_tokens": 500, "calls": 25,
                           "cost_usd": pytest.approx(0.000675), "cost_source": "price",
                           "price_per_mtok": [0.15, 0.6]}
    line = ("judge usage (not counted in the agent's): 25 call(s), 2,500 input + 500 output "
            "tokens, cost $0.000675 (from --judge-price)")
    assert line in t1 and line in m1 and line.replace("'", "&#x27;") in h1
    # the second run: every reply from the cache, no call, nothing spent, the same verdicts
    assert j2["cached_replies"] == 25 and j2["usage"]["calls"] == 0 and j2["usage"]["cost_usd"] == 0
    strip = lambda js: [[{k: v for k, v in x.items() if k != "audit"} for x in r["verdicts"]]  # noqa: E731
                        for r in js["verdicts"]]
    assert strip(j1) == strip(j2) and j1["checks"] == j2["checks"]
