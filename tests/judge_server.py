"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the judge tests:
``reply(prompt)`` gives each answer from the last message's text (with ``echo`` (default), a
reply that is one JSON object gets the request's nonce, as a model following the judges'
reply format writes it: ``fencing.echo_nonce``; ``echo=False`` sends it as scripted); every
reply reports ``usage`` (fixed ``prompt_tokens``/``completion_tokens``, and ``cost`` when
given) as chat-completions servers do. ``requests`` records every request body.
``unfenced(text)`` is a prompt with the judges' data markers taken out, for scripted judges
that answer by what the prompt says."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trajcheck.judges.fencing import echo_nonce


class ChatServer:
    def __init__(self, reply: Callable[[str], str], *, prompt_tokens: int = 100,
                 completion_tokens: int = 20, cost: float | None = None,
                 echo: bool = True) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        def _answer(messages: list[dict[str, Any]]) -> str:
            got = reply(messages[-1]["content"])
            return echo_nonce(messages, got) if echo else got

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append(body)
                usage: dict[str, Any] = {"prompt_tokens": prompt_tokens,
                                         "completion_tokens": completion_tokens,
                                         "total_tokens": prompt_tokens + completion_tokens}
                if cost is not None:
                    usage["cost"] = cost
                data = json.dumps({"id": "c", "object": "chat.completion", "model": body["model"],
                                   "usage": usage,
                                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                       "role": "assistant",
                                       "content": _answer(body["messages"])}}]}).encode()
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

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


_MARK = re.compile(r"</?data-[0-9a-f]{16}>")


def unfenced(text: str) -> str:
    """``text`` without the judges' ``<data-NONCE>``/``</data-NONCE>`` markers."""
    return _MARK.sub("", text)


def wilson(p: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson interval of p successes in n, written out for the tests' expectations."""
    ph = p / n
    centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (ph * (1 - ph) / n + z * z / (4 * n * n)) ** 0.5
    return centre - half, centre + half
