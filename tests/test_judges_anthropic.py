"""AnthropicModel on the official anthropic SDK against a mock Messages API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("anthropic")

from trajcheck.judges import AnthropicModel, judge_trajectory  # noqa: E402
from trajcheck.judges.fencing import echo_nonce, request_nonce  # noqa: E402
from trajcheck.judges.rubrics import TRAJECTORY_CHECKS  # noqa: E402
from trajcheck.judges.run import model_from_spec  # noqa: E402
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory  # noqa: E402

REPLY = json.dumps({"checks": {n: {"pass": True, "reason": "ok"} for n, _ in TRAJECTORY_CHECKS}})


class _Messages:
    def __init__(self, status: int = 200) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append({"path": self.path, "body": body,
                                       "key": self.headers.get("x-api-key")})
                if status != 200:
                    data = json.dumps({"type": "error", "error": {
                        "type": "invalid_request_error", "message": "bad model"}}).encode()
                else:
                    data = json.dumps({
                        "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                        "content": [{"type": "text", "text": echo_nonce(
                            [{"role": "system", "content": body.get("system", "")}], REPLY)}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None, "usage": {"input_tokens": 321, "output_tokens": 45}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()


def _traj() -> Trajectory:
    return Trajectory(steps=(
        Step(0, "user", "Open a ticket"),
        Step(1, "tool_call", tool_calls=(ToolCall("create_ticket", {"p": "high"}, "c1"),)),
        Step(2, "tool_result", tool_result=ToolResult("c1", "create_ticket", "INC-7", False)),
    ), final_response="Opened INC-7.")


def test_anthropic_judge_over_the_sdk() -> None:
    srv = _Messages()
    m = AnthropicModel("claude-test", api_key="k-test", base_url=srv.url, max_tokens=300)
    v = judge_trajectory(m, _traj())
    assert v.passed is True and json.loads(v.raw) == {"nonce": "<nonce>", **json.loads(REPLY)}
    req = srv.requests[0]
    assert req["path"] == "/v1/messages" and req["key"] == "k-test"
    body = req["body"]
    assert body["model"] == "claude-test" and body["max_tokens"] == 300 and body["temperature"] == 0.0
    assert body["system"].startswith("You are a strict evaluator")
    assert [t["role"] for t in body["messages"]] == ["user"]
    n = request_nonce([{"role": "system", "content": body["system"]}])
    assert body["messages"][0]["content"].startswith(f"USER REQUEST: <data-{n}>Open a ticket</data-{n}>")
    assert m.usage == {"input_tokens": 321, "output_tokens": 45, "calls": 1}
    assert v.audit["model"] == {"adapter": "AnthropicModel", "model": "claude-test",
                                "sampling": {"temperature": 0.0, "max_tokens": 300},
                                "base_url": srv.url}
    va = asyncio.run(__import__("trajcheck.judges", fromlist=["ajudge_trajectory"])
                     .ajudge_trajectory(m, _traj()))
    assert va.passed is True and m.usage["calls"] == 2 and m.usage["input_tokens"] == 642


def test_anthropic_error_is_a_judge_error_verdict() -> None:
    srv = _Messages(status=400)
    m = AnthropicModel("claude-bad", api_key="k", base_url=srv.url, max_retries=0)
    v = judge_trajectory(m, _traj())
    assert v.passed is None and v.error is not None
    assert v.error.startswith("AnthropicModel claude-bad: BadRequestError")
    assert len(srv.requests) == 1
    spec = model_from_spec("anthropic:claude-x")
    assert isinstance(spec, AnthropicModel) and spec.model == "claude-x"
