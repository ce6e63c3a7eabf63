"""promptfoo_provider/provider.py: call_api with the example agent, OTLP spans to a local receiver."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

try:
    import promptfoo_provider  # noqa: F401
except ImportError:  # pytest run without the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from promptfoo_provider.provider import call_api, tool_spans
from trajcheck.model import Trajectory

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "promptfoo"
TRACEPARENT = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"


def opts(**config):
    return {"id": "file://provider.py", "config": {"agent": "agent.py:run", "basePath": str(EXAMPLE), **config}}


def test_call_api_runs_the_agent_and_returns_the_trajectory():
    r = call_api("Book a flight from SFO to JFK", opts(), {"vars": {}})
    assert "error" not in r
    assert r["output"]["role"] == "assistant"
    assert r["output"]["content"] == "Booked FL100 from SFO to JFK; confirmation CNF-7."
    assert [(c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in r["output"]["tool_calls"]] == [
        ("function", "search_flights", {"origin": "SFO", "destination": "JFK"}),
        ("function", "book_flight", {"flight_id": "FL100", "seats": 1})]
    md = r["metadata"]
    assert md["source_format"] == "openai_chat"
    traj = Trajectory.from_dict(md["trajectory"])
    assert [c.name for c in traj.tool_calls()] == ["search_flights", "book_flight"]
    assert traj.tool_calls()[1].args == {"flight_id": "FL100", "seats": 1}
    assert [tc["name"] for tc in md["toolCalls"]] == ["search_flights", "book_flight"]
    assert md["toolCalls"][0]["input"] == {"origin": "SFO", "destination": "JFK"}
    assert md["toolCalls"][1]["output"] == json.dumps({"confirmation": "CNF-7", "status": "booked"})
    assert r["latencyMs"] >= 0 and "spans" not in md  # no traceparent -> nothing sent
    json.dumps(r)


def test_agent_keyword_arguments_and_trajectory_return(tmp_path):
    (tmp_path / "ag.py").write_text(
        "from trajcheck.model import Trajectory, Step, ToolCall, Usage\n"
        "def run(prompt, vars):\n"
        "    return Trajectory(steps=(Step(0, 'tool_call', tool_calls=(ToolCall(vars['tool'], {}),)),),\n"
        "                      final_response=prompt.upper(), total_usage=Usage(10, 5), total_cost_usd=0.25)\n")
    r = call_api("hi", {"config": {"agent": "ag.py:run", "basePath": str(tmp_path)}}, {"vars": {"tool": "t1"}})
    assert r["output"]["content"] == "HI" and r["metadata"]["toolCalls"][0]["name"] == "t1"
    assert r["tokenUsage"] == {"numRequests": 1, "prompt": 10, "completion": 5, "total": 15}
    assert r["cost"] == 0.25


def test_output_always_carries_tool_calls_even_when_the_run_made_none(tmp_path):
    """An empty run's output has ``tool_calls: []`` (issue 29: omitting it broke promptfoo checks
    such as ``output.tool_calls.length === 0``); a run with calls lists them in order."""
    (tmp_path / "ag.py").write_text(
        "from trajcheck.model import Trajectory, Step, ToolCall\n"
        "def run(prompt, vars):\n"
        "    calls = tuple(ToolCall(n, {'q': 'Zürich'}, call_id=f'c{i}') for i, n in enumerate(vars['tools']))\n"
        "    steps = (Step(0, 'tool_call', tool_calls=calls),) if calls else ()\n"
        "    return Trajectory(steps=steps, final_response='ok')\n")
    cfg = {"config": {"agent": "ag.py:run", "basePath": str(tmp_path)}}
    empty = call_api("hi", cfg, {"vars": {"tools": []}})["output"]
    assert empty == {"role": "assistant", "content": "ok", "tool_calls": []}
    two = call_api("hi", cfg, {"vars": {"tools": ["a", "b"]}})["output"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in two] == \
        [("c0", "a", {"q": "Zürich"}), ("c1", "b", {"q": "Zürich"})]


@pytest.mark.parametrize("config,needle", [
    ({"agent": "nocolon"}, "must be 'module:callable'"),
    ({"agent": "missing.py:run"}, "does not exist"),
    ({"agent": "agent.py:nope"}, "has no attribute 'nope'"),
    ({"agent": "no_such_module_xyz:run"}, "importing 'no_such_module_xyz' failed"),
])
def test_bad_agent_spec_gives_error(config, needle):
    r = call_api("x", {"config": {**config, "basePath": str(EXAMPLE)}}, {})
    assert set(r) == {"error"} and needle in r["error"], r


def test_agent_that_raises_or_returns_garbage(tmp_path):
    (tmp_path / "bad.py").write_text("def boom(p):\n    raise RuntimeError('kaput')\n"
                                     "def junk(p):\n    return 42\n")
    r = call_api("x", {"config": {"agent": "bad.py:boom", "basePath": str(tmp_path)}}, {})
    assert "RuntimeError: kaput" in r["error"]
    r = call_api("x", {"config": {"agent": "bad.py:junk", "basePath": str(tmp_path)}}, {})
    assert "output (int) has no tool calls" in r["error"]


def test_tool_spans_shape_and_order():
    traj = Trajectory.from_dict(call_api("Book a flight from SFO to JFK", opts(), {})["metadata"]["trajectory"])
    payload = tool_spans(traj, TRACEPARENT, now_ns=1_000_000_000)
    spans = payload["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == 2
    for i, (sp, name) in enumerate(zip(spans, ["search_flights", "book_flight"])):
        assert sp["traceId"] == "ab" * 16 and sp["parentSpanId"] == "cd" * 8 and len(sp["spanId"]) == 16
        assert int(sp["startTimeUnixNano"]) == 1_000_000_000 + i * 1_000_000
        attrs = {a["key"]: a["value"]["stringValue"] for a in sp["attributes"]}
        assert attrs["tool.name"] == name and attrs["gen_ai.tool.name"] == name
    assert json.loads({a["key"]: a["value"]["stringValue"] for a in spans[0]["attributes"]}["tool.arguments"]) == \
        {"origin": "SFO", "destination": "JFK"}
    with pytest.raises(ValueError, match="malformed traceparent"):
        tool_spans(traj, "00-xyz")


def test_spans_are_posted_to_the_receiver_when_tracing_is_on():
    got: list[tuple[str, str, dict]] = []

    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append((self.path, self.headers["Content-Type"], json.loads(body)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        ep = f"http://127.0.0.1:{srv.server_port}/v1/traces"
        r = call_api("Cancel booking B42", opts(otlp_endpoint=ep), {"traceparent": TRACEPARENT})
    finally:
        srv.shutdown()
        srv.server_close()
    assert r["metadata"]["spans"] == {"endpoint": ep, "sent": 2, "status": 200}
    path, ctype, payload = got[0]
    assert path == "/v1/traces" and ctype == "application/json"
    names = [next(a["value"]["stringValue"] for a in s["attributes"] if a["key"] == "tool.name")
             for s in payload["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    assert names == ["search_bookings", "cancel_booking"]


def test_unreachable_receiver_is_recorded_not_fatal():
    r = call_api("Book a flight from SFO to JFK", opts(otlp_endpoint="http://127.0.0.1:9/v1/traces"),
                 {"traceparent": TRACEPARENT})
    assert "error" not in r and r["metadata"]["spans"]["sent"] == 0
    assert "error" in r["metadata"]["spans"]


def test_provider_config_is_strict_error_pattern_applies_and_text_output():
    from trajcheck.promptfoo.provider import call_api

    def opts(**cfg):
        return {"config": {"agent": "agent.py:run", "basePath": str(EXAMPLE), **cfg}}

    r = call_api("Book a flight from SFO to JFK", opts(error_patern="x"), {})
    assert "unknown provider config key 'error_patern'" in r["error"] and "did you mean 'error_pattern'" in r["error"]
    r = call_api("Book a flight from SFO to JFK", opts(send_spans="no"), {})
    assert "send_spans" in r["error"]
    # error_pattern marks the booking result (its text has "booked") as failed
    r = call_api("Book a flight from SFO to JFK", opts(error_pattern='"status": "booked"', output="text"), {})
    assert r["output"] == "Booked FL100 from SFO to JFK; confirmation CNF-7."
    assert [c.get("is_error") for c in r["metadata"]["toolCalls"]] == [None, True]


def test_module_command_help_typo_and_init(tmp_path):
    """``python -m trajcheck.promptfoo``: --help exits 0 (it exited 2, issue 29), a misspelled
    command names the right one, init writes the four entry files, each importing its entry."""
    import subprocess
    import sys

    def run(*args):
        return subprocess.run([sys.executable, "-m", "trajcheck.promptfoo", *args], capture_output=True,
                              text=True, timeout=60)
    h = run("--help")
    assert h.returncode == 0 and "{path,init}" in h.stdout
    typo = run("inti")
    assert typo.returncode == 2 and "did you mean 'init'?" in typo.stderr
    i = run("init", str(tmp_path))
    assert i.returncode == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["trajcheck_assert.py", "trajcheck_provider.py", "trajcheck_scoring.py",
                       "trajcheck_summary.py"]
    assert "from trajcheck.promptfoo.scoring import score_test" in (tmp_path / "trajcheck_scoring.py").read_text()
    assert run("init", str(tmp_path)).stdout == ""  # existing files left alone without --force
