"""`trajcheck run --judge`: the rubric and task-completion judges in the run's scorecard, per
check over runs and trials with Wilson intervals; with --scenarios, after each simulated
conversation, beside its final-state and response checks. The judge is a scripted
OpenAI-compatible server on 127.0.0.1; the agents and scenarios are examples/helpdesk's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import ChatServer, unfenced, wilson

from trajcheck.cli.app import main
from trajcheck.judges.rubrics import TRAJECTORY_CHECKS

NAMES = [n for n, _ in TRAJECTORY_CHECKS]
HELPDESK = Path(__file__).resolve().parents[1] / "examples" / "helpdesk"


def _judge(prompt: str) -> str:
    """Trajectory checks: a repeated create_ticket is an unnecessary call, a 503 claimed as
    created is unfaithful. Task completion: the first criterion fails when two tickets were
    filed, every other one is met."""
    prompt = unfenced(prompt)
    trace, _, final = prompt.partition("FINAL RESPONSE:")
    dup = len(re.findall(r"CALL create_ticket", trace)) > 1
    if "Success criteria:" in prompt:
        crit = re.findall(r"^\d+\. (.*)$", prompt.split("Success criteria:")[1], re.M)
        return json.dumps({"criteria": [
            {"criterion": c, "met": not (dup and i == 0),
             "evidence": "two tickets were filed" if dup and i == 0 else "see the last step"}
            for i, c in enumerate(crit)]})
    checks: dict[str, Any] = {n: {"pass": True, "reason": "fine"} for n in NAMES}
    if "ERROR" not in trace:
        checks["failure_handled"] = {"pass": "n/a", "reason": "no tool failed"}
    elif "has been created" in final:
        checks["failure_handled"] = {"pass": False, "reason": "ignored the 503"}
        checks["response_faithful"] = {"pass": False, "reason": "claims a ticket that does not exist"}
    if dup:
        checks["no_unnecessary_calls"] = {"pass": False, "reason": "create_ticket twice"}
    return json.dumps({"checks": checks})


def test_run_cases_with_judge_over_trials(tmp_path: Path) -> None:
    srv = ChatServer(_judge, prompt_tokens=120, completion_tokens=30, cost=0.0002)
    j = tmp_path / "card.json"
    r = CliRunner().invoke(main, [
        "run", "--agent", f"{HELPDESK / 'agents.py'}:false_success_agent",
        "--cases", str(HELPDESK / "cases.jsonl"), "--trials", "2", "--no-progress",
        "--judge", f"{srv.url}#judge-mini", "--judge-cache", "", "--json", str(j)])
    srv.close()
    assert r.exit_code == 0, r.output
    js = json.loads(j.read_text())["meta"]["judges"]
    assert js["runs"] == 50 and len(srv.requests) == 50  # 25 cases x 2 trials, no cache
    rows = {c["check"]: c for c in js["checks"]}
    # per trial: 4 runs with a failed call, 3 of them claimed as created (see test_judges_cli)
    for name, (p, n) in {"response_faithful": (44, 50), "failure_handled": (2, 8),
                         "no_unnecessary_calls": (50, 50)}.items():
        assert (rows[name]["passed"], rows[name]["applicable"]) == (p, n), name
        assert rows[name]["interval"] == pytest.approx(list(wilson(p, n)), abs=1e-9)
    lo, hi = wilson(44, 50)
    assert "44/50" in r.output and f"0.880 [{lo:.3f}, {hi:.3f}]" in r.output
    # the judge's cost as the server reported it: 50 x $0.0002; tokens 50 x (120, 30)
    assert js["usage"] == {"input_tokens": 6000, "output_tokens": 1500, "calls": 50,
                           "cost_usd": pytest.approx(0.01), "cost_source": "reported"}
    assert ("judge usage (not counted in the agent's): 50 call(s), 6,000 input + 1,500 output "
            "tokens, cost $0.010000 (as the server reported)") in r.output


def test_run_scenarios_with_judge_adds_transcript_judges_and_final_state(tmp_path: Path) -> None:
    srv = ChatServer(_judge)
    j, h, m = (tmp_path / f"card.{x}" for x in ("json", "html", "md"))
    r = CliRunner().invoke(main, [
        "run", "--agent", f"{HELPDESK / 'agents.py'}:duplicate_agent",
        "--scenarios", str(HELPDESK / "scenarios.yaml"),
        "--user-model", f"{HELPDESK / 'users.py'}:scripted_user", "--trials", "2",
        "--judge", f"{srv.url}#judge-mini", "--judge-cache", str(tmp_path / "cache.sqlite"),
        "--json", str(j), "--html", str(h), "--md", str(m)])
    srv.close()
    assert r.exit_code == 0, r.output
    js = json.loads(j.read_text())["meta"]["judges"]
    # 2 scenarios x 2 seeds; each conversation gets the trajectory judge and, the scenarios
    # having success criteria, the task-completion judge. Both seeds of a scenario play the
    # same conversation here (scripted user and agent), so the second seed's replies come
    # from the cache: 4 requests, 4 cached replies.
    assert js["runs"] == 4 and len(srv.requests) == 4 and js["cached_replies"] == 4
    rows = {(c["judge"], c["check"]): (c["passed"], c["applicable"]) for c in js["checks"]}
    # duplicate_agent files the docking-station ticket twice (sim_clarify_then_file, both
    # seeds): the final-state check fails there, the judge calls the second create_ticket
    # unnecessary and the first criterion unmet; sim_update_after_asking passes everything
    assert rows == {
        ("trajectory", "tool_results_used"): (4, 4),
        ("trajectory", "no_unnecessary_calls"): (2, 4),
        ("trajectory", "no_unrequested_actions"): (4, 4),
        ("trajectory", "response_faithful"): (4, 4),
        ("outcome", "final_state"): (2, 4),
        ("outcome", "response"): (4, 4),
        ("task_completion", "all criteria met"): (2, 4),
    }
    # the task-completion judge got each scenario's own criteria (2 and 1 of them)
    tc = [v for run in js["verdicts"] for v in run["verdicts"] if v["judge"] == "task_completion"]
    assert [len(v["items"]) for v in tc] == [2, 2, 1, 1]
    shown = "0.500 [{:.3f}, {:.3f}]".format(*wilson(2, 4))
    md, html = m.read_text(), h.read_text()
    for out in (r.output, md, html):
        assert "final_state" in out and "all criteria met" in out and shown in out
    assert f"| outcome | final_state | 2/4 | {shown} |" in md
    assert 'id="judge-task_completion-all-criteria-met">' in html


def test_bad_judge_settings_stop_before_any_run(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    for extra, said in ((["--judge", "http://127.0.0.1:9/v1#m", "--judge-price", "cheap"],
                         "--judge-price 'cheap': expected IN,OUT"),
                        (["--judge", "http://127.0.0.1:9/v1"], "needs its model name after '#'")):
        r = CliRunner().invoke(main, [
            "run", "--agent", f"{HELPDESK / 'agents.py'}:good_agent",
            "--cases", str(HELPDESK / "cases.jsonl"), "--out", str(out), "--no-progress",
            "--judge-cache", str(tmp_path / "cache.sqlite"), *extra])
        assert r.exit_code == 2 and said in r.output, r.output
        assert not out.exists()  # no agent was run
    r = CliRunner().invoke(main, ["eval", str(HELPDESK / "cases.jsonl"), "--judge",
                                  "http://127.0.0.1:9/v1#m", "--judge-price", "1,-2",
                                  "--judge-cache", str(tmp_path / "cache.sqlite")])
    assert r.exit_code == 2 and "--judge-price '1,-2': expected IN,OUT" in r.output


def test_openai_usage_counting_ignores_malformed_fields() -> None:
    from trajcheck.judges import OpenAICompatibleModel

    m = OpenAICompatibleModel("http://127.0.0.1:9/v1", "m")
    reply = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    for usage in ({"prompt_tokens": 10, "completion_tokens": 3, "cost": 0.5},
                  {"prompt_tokens": True, "completion_tokens": -4, "cost": "free"}, None):
        assert m._parse(200, json.dumps({**reply, "usage": usage})) == "ok"
    assert m.usage == {"input_tokens": 10, "output_tokens": 3, "calls": 3, "reported_cost_usd": 0.5}
