"""OpenAICompatibleModel end to end against a chat-completions server on 127.0.0.1.

The server (http.server in a thread) plays a script of replies per test: a 429 with
Retry-After then success, a reply slower than the client timeout, a malformed reply, a 400.
The real httpx client code runs up to the socket.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("httpx")

from trajcheck.errors import JudgeError  # noqa: E402
from trajcheck.judges import OpenAICompatibleModel, judge_trajectory, parse_retry_after  # noqa: E402
from trajcheck.model import Step, Trajectory  # noqa: E402


def _completion(content: str) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "model": "judge-1",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}]}


class _Server:
    def __init__(self) -> None:
        self.script: list[tuple[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                outer.times.append(time.monotonic())
                kind, arg = outer.script.pop(0) if outer.script else ("ok", "default")
                if kind == "sleep":
                    time.sleep(arg)
                    kind, arg = "ok", "late"
                if kind == "ok":
                    self._send(200, json.dumps(_completion(arg)).encode())
                elif kind == "status":
                    code, headers = arg
                    self._send(code, b'{"error": {"message": "slow down"}}', headers)
                elif kind == "raw":
                    self._send(200, arg.encode())

            def _send(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


MSGS = [{"role": "system", "content": "judge"}, {"role": "user", "content": "hello"}]


def test_request_shape_and_reply(server: _Server) -> None:
    server.script = [("ok", "hi there")]
    m = OpenAICompatibleModel(server.url + "/", model="judge-1", api_key="sk-test", timeout=5)
    assert m.complete(MSGS) == "hi there"
    r = server.requests[0]
    assert r["path"] == "/v1/chat/completions"
    assert r["auth"] == "Bearer sk-test"
    assert r["body"] == {"model": "judge-1", "messages": MSGS, "temperature": 0.0}


def test_429_with_retry_after_then_success(server: _Server) -> None:
    server.script = [("status", (429, {"Retry-After": "0.3"})), ("ok", "second time")]
    m = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=2, backoff=0.001)
    assert m.complete(MSGS) == "second time"
    assert len(server.requests) == 2
    # Retry-After (0.3 s) was honoured instead of the 0.001 s backoff
    assert server.times[1] - server.times[0] >= 0.29


def test_5xx_retried_with_backoff_async(server: _Server) -> None:
    server.script = [("status", (503, {})), ("status", (500, {})), ("ok", "async ok")]
    m = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=2, backoff=0.05)
    assert asyncio.run(m.acomplete(MSGS)) == "async ok"
    assert len(server.requests) == 3
    gaps = [b - a for a, b in zip(server.times, server.times[1:])]
    assert gaps[0] >= 0.049 and gaps[1] >= 0.099  # 0.05 * 2**0, 0.05 * 2**1


def test_timeout_retried_then_judge_error(server: _Server) -> None:
    server.script = [("sleep", 0.6), ("sleep", 0.6)]
    m = OpenAICompatibleModel(server.url, model="j", timeout=0.2, max_retries=1, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(JudgeError, match=r"gave up after 2 attempts; last: timed out after 0.2s"):
        m.complete(MSGS)
    assert time.monotonic() - t0 < 1.0
    assert len(server.requests) == 2


def test_malformed_reply_is_judge_error_not_retried(server: _Server) -> None:
    server.script = [("raw", '{"choices": []}')]
    m = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=3, backoff=0.001)
    with pytest.raises(JudgeError, match="malformed chat completions reply"):
        m.complete(MSGS)
    assert len(server.requests) == 1
    server.script = [("raw", "<html>gateway</html>")]
    with pytest.raises(JudgeError, match="malformed"):
        m.complete(MSGS)


def test_400_not_retried_and_exhausted_429(server: _Server) -> None:
    server.script = [("status", (400, {}))]
    m = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=3, backoff=0.001)
    with pytest.raises(JudgeError, match="HTTP 400"):
        m.complete(MSGS)
    assert len(server.requests) == 1
    server.script = [("status", (429, {}))] * 3
    m2 = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=2, backoff=0.001)
    with pytest.raises(JudgeError, match="gave up after 3 attempts; last: HTTP 429"):
        m2.complete(MSGS)


def test_judge_over_http_turns_malformed_judgement_into_error(server: _Server) -> None:
    server.script = [("ok", "looks fine to me"), ("ok", "still no json")]
    m = OpenAICompatibleModel(server.url, model="j", timeout=5, max_retries=0)
    traj = Trajectory(steps=(Step(0, "user", "hi"),), final_response="hello")
    v = judge_trajectory(m, traj, retries=1)
    assert v.passed is None and "unusable after 2 attempts" in (v.error or "")
    assert len(server.requests) == 2
    # the re-ask carries the bad reply back as an assistant turn
    assert server.requests[1]["body"]["messages"][-2] == {"role": "assistant",
                                                           "content": "looks fine to me"}


def test_parse_retry_after_and_validation() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    with pytest.raises(JudgeError, match="base_url"):
        OpenAICompatibleModel("localhost:8000", model="j")
    with pytest.raises(JudgeError, match="max_retries"):
        OpenAICompatibleModel("http://127.0.0.1:1", model="j", max_retries=-1)
