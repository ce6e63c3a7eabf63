"""The model snippets of docs/judges.md ("Models") run as written: against a chat-completions
server on 127.0.0.1 (OpenAI-compatible, LangChain's real ChatOpenAI), and with a stand-in for
DeepEval's GPTModel (a fake object with DeepEval's generate/a_generate shape)."""

from __future__ import annotations

import json
import re
import sys
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "judges.md").read_text()


def _model_blocks() -> list[str]:
    sec = DOC[DOC.index("## Models"):DOC.index("## Rubric judges")]
    return re.findall(r"```python\n(.*?)```", sec, re.S)


@pytest.fixture()
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            seen.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            data = json.dumps({"id": "c1", "object": "chat.completion", "created": 0,
                               "model": body.get("model"),
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "OK"}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                         "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    httpd.shutdown()
    httpd.server_close()


class FakeGPTModel:
    """DeepEval's model shape: ``generate(prompt)`` / ``a_generate(prompt)``."""

    prompts: list[str] = []

    def __init__(self, model: str) -> None:
        self.model = model

    def generate(self, prompt: str) -> tuple[str, float]:
        self.prompts.append(prompt)
        return "OK", 0.0  # native DeepEval models return (text, cost)

    async def a_generate(self, prompt: str) -> tuple[str, float]:
        return self.generate(prompt)


def test_model_snippets_run(server: tuple[str, list[dict[str, Any]]],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("httpx")
    pytest.importorskip("langchain_openai")
    url, seen = server
    monkeypatch.setenv("JUDGE_BASE_URL", url)
    monkeypatch.setenv("JUDGE_API_KEY", "sk-doc")
    fake = types.ModuleType("deepeval.models")
    fake.GPTModel = FakeGPTModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "deepeval.models", fake)
    blocks = _model_blocks()
    assert len(blocks) == 4
    ns: dict[str, Any] = {}
    replies = []
    for b in blocks:
        exec(compile(b, "docs/judges.md", "exec"), ns)
        replies.append(ns["reply"])
    assert replies == ["OK"] * 4
    # the OpenAI-compatible adapter and LangChain's ChatOpenAI both reached the local server
    assert [r["path"] for r in seen] == ["/v1/chat/completions"] * 2
    assert all(r["auth"] == "Bearer sk-doc" for r in seen)
    assert seen[0]["body"]["messages"] == [{"role": "user", "content": "Reply with OK."}]
    assert seen[1]["body"]["model"] == "gpt-4o-mini"
    assert FakeGPTModel.prompts == ["USER:\nReply with OK."]


def test_doc_mentions_the_cli_flags() -> None:
    for flag in ("--semantic", "--semantic-threshold", "--scenarios", "--user-model",
                 "--api-key-env", "openai:MODEL@BASE_URL"):
        assert flag in DOC, flag
