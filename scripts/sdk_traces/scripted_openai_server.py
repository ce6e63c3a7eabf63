"""A scripted OpenAI-compatible chat completions server on 127.0.0.1 (standard library only),
for producers whose SDK talks to a model over HTTP (LiteLLM). ``POST /v1/chat/completions``
answers the scenario's turn number k, where k is the number of assistant messages already in the
request (so it is stateless and any number of runs can share it): the turn's tool calls
(``call_<k>_<i>``) or the final answer, with the turn's usage."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import scenario


def completion(messages: list[dict[str, Any]]) -> dict[str, Any]:
    k = sum(1 for m in messages if m.get("role") == "assistant")
    calls, (tin, tout) = scenario.TURNS[k]
    msg: dict[str, Any] = {"role": "assistant", "content": None if calls else scenario.FINAL}
    if calls:
        msg["tool_calls"] = [{"id": f"call_{k}_{i}", "type": "function",
                              "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                             for i, (n, a) in enumerate(calls)]
    return {"id": f"chatcmpl-scripted-{k}", "object": "chat.completion", "created": 1_760_000_000 + k,
            "model": "scripted-model", "choices": [{"index": 0, "message": msg,
                                                    "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        out = json.dumps(self.server.answer(body)).encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a: Any) -> None:
        pass


def start(answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> tuple[ThreadingHTTPServer, str]:
    """A running server on a free loopback port and its base URL (``http://127.0.0.1:<port>/v1``);
    ``answer`` (request body -> completion) replaces the scenario's ``completion`` (a producer
    with several scripted conversations)."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.answer = answer or (lambda body: completion(body.get("messages") or []))  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/v1"
