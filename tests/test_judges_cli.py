"""`trajcheck eval --judge` against a scripted OpenAI-compatible server on 127.0.0.1: per-check
pass rates with Wilson intervals in the terminal, JSON and HTML reports; the second run is
served from the SQLite cache with identical verdicts and no request."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trajcheck.cli import main
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


class _Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append(body)
                reply = _judge_reply(body["messages"][-1]["content"])
                data = json.dumps({"id": "c", "object": "chat.completion", "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                       "role": "assistant", "content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()


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
    assert j1["runs"] == 3 and j1["errors"] == {} and j1["cached_replies"] == 0 and j1["usage"] is None
    assert j2["cached_replies"] == 6
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
