"""The simulated user's seed reaches the model's API (seed 000 §7.1: several seeds per scenario).

Chat-completions and Messages servers on 127.0.0.1 record every request. The chat server plays
the help-desk user (examples/helpdesk/users.py) and, like a sampling model, picks its closing
words from the request's ``seed``: the same seed gives the same conversation, another seed
another one. Each adapter that can send a seed is checked on the wire: OpenAICompatibleModel,
LangChain's ChatOpenAI, DeepEval's GPTModel, and a CachedModel around the first; Anthropic's
Messages API has no seed, so none is sent and the trajectory says so.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from trajcheck.judges import (  # noqa: E402
    AnthropicModel,
    CachedModel,
    OpenAICompatibleModel,
    ScriptedModel,
    seeded_model,
)
from trajcheck.run.runner import load_agent  # noqa: E402
from trajcheck.run.simulated_user import STOP_MARKER, load_scenarios, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HD = ROOT / "examples" / "helpdesk"
CLOSINGS = ("Great, thanks.", "Perfect, that is all.", "Thank you, bye.")


def _closing(seed: Any) -> str:
    return random.Random(seed).choice(CLOSINGS)


class _ChatServer:
    """Chat completions on 127.0.0.1 answering as the scripted help-desk user."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HD))
        import users  # examples/helpdesk/users.py

        self.bodies: list[dict[str, Any]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.bodies.append(body)
                msgs = body["messages"]
                if isinstance(msgs[-1].get("content"), list):  # DeepEval / LangChain blocks
                    msgs = [{"role": m["role"], "content": "".join(
                        b.get("text", "") for b in m["content"])} for m in msgs]
                text = users.helpdesk_user(msgs)
                if STOP_MARKER in text:  # the words vary with the sampling seed
                    text = f"{_closing(body.get('seed'))} {STOP_MARKER}"
                data = json.dumps({
                    "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
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


@pytest.fixture()
def chat() -> Iterator[_ChatServer]:
    s = _ChatServer()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def _scenario() -> Any:
    return load_scenarios(HD / "scenarios.yaml")[0]  # sim_clarify_then_file: 2 user-model turns


def _run(model: Any, seeds: list[int]) -> list[Any]:
    return simulate(_scenario(), load_agent(f"{HD / 'agents.py'}:good_agent"), model, seeds=seeds,
                    base_dir=HD)


def test_each_run_sends_its_seed_and_a_seed_reproduces_its_run(chat: _ChatServer) -> None:
    # seeds 0, 1, 5 pick three different closings (random.Random(seed).choice)
    assert len({_closing(s) for s in (0, 1, 5)}) == 3
    model = OpenAICompatibleModel(base_url=chat.url, model="user-sim")
    rs = _run(model, [0, 1, 5])
    # 3 runs x 2 user-model turns (the opening is the scenario's), each with its run's seed
    assert [b["seed"] for b in chat.bodies] == [0, 0, 1, 1, 5, 5]
    assert all(b["temperature"] == 0.0 for b in chat.bodies)
    assert [r.trajectory.metadata["user_model_seed"] for r in rs] == [0, 1, 5]
    assert [r.termination for r in rs] == ["goal_met"] * 3
    closings = [r.conversation[-1]["content"] for r in rs]
    assert closings == [_closing(0), _closing(1), _closing(5)] and len(set(closings)) == 3
    # the same seed again: the same requests and the same conversation
    again = _run(model, [1])
    assert chat.bodies[6:] == chat.bodies[2:4]
    assert again[0].conversation == rs[1].conversation
    assert model.seed is None  # the configured model is not changed


def test_cached_user_model_is_keyed_by_seed(chat: _ChatServer, tmp_path: Path) -> None:
    model = CachedModel(OpenAICompatibleModel(base_url=chat.url, model="user-sim"),
                        tmp_path / "cache.sqlite")
    first = _run(model, [0, 1])
    assert [b["seed"] for b in chat.bodies] == [0, 0, 1, 1]
    second = _run(model, [0, 1])  # served from the cache: no request, same conversations
    assert len(chat.bodies) == 4
    assert [r.conversation for r in second] == [r.conversation for r in first]
    assert [r.trajectory.metadata["user_model_seed"] for r in second] == [0, 1]


def test_langchain_chat_openai_sends_the_seed(chat: _ChatServer) -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="user-sim", base_url=chat.url, api_key="sk-local", temperature=0,
                     max_retries=0)
    rs = _run(llm, [3, 4])
    assert [b["seed"] for b in chat.bodies] == [3, 3, 4, 4]
    assert [r.trajectory.metadata["user_model_seed"] for r in rs] == [3, 4]
    assert llm.seed is None


def test_deepeval_gpt_model_sends_the_seed(chat: _ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("deepeval")
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from deepeval.models import GPTModel

        m = GPTModel(model="gpt-4o-mini", api_key="sk-local", base_url=chat.url, temperature=0)
    rs = _run(m, [7])
    # DeepEval sends the conversation as one prompt, which the scripted server cannot read
    # as turns, so the user never stops: 3 user-model turns after the opening (max_turns 4)
    assert [b["seed"] for b in chat.bodies] == [7, 7, 7]
    assert rs[0].trajectory.metadata["user_model_seed"] == 7
    assert "seed" not in m.generation_kwargs


class _Messages:
    """Anthropic Messages API on 127.0.0.1 answering as the help-desk user."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HD))
        import users

        self.bodies: list[dict[str, Any]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.bodies.append(body)
                msgs = [{"role": "system", "content": body.get("system", "")}, *body["messages"]]
                data = json.dumps({
                    "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                    "content": [{"type": "text", "text": users.helpdesk_user(msgs)}],
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()


def test_anthropic_has_no_seed_and_the_run_says_so() -> None:
    pytest.importorskip("anthropic")
    srv = _Messages()
    try:
        rs = _run(AnthropicModel("claude-x", api_key="k", base_url=srv.url), [0, 1])
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
    assert len(srv.bodies) == 4 and not any("seed" in b for b in srv.bodies)
    assert [r.termination for r in rs] == ["goal_met", "goal_met"]
    assert [r.trajectory.metadata["user_model_seed"] for r in rs] == [None, None]
    # the seed still varies the prompt
    assert "Variation seed: 1" in srv.bodies[2]["system"]


def test_seeded_model_per_adapter() -> None:
    base = OpenAICompatibleModel(base_url="http://127.0.0.1:9/v1", model="m")
    m, sent = seeded_model(base, 42)
    assert sent and m.seed == 42 and m._request([{"role": "user", "content": "x"}])[0]["seed"] == 42
    assert "seed" not in base._request([{"role": "user", "content": "x"}])[0]
    s = ScriptedModel(["hi"])
    assert seeded_model(s, 1) == (s, False)
    assert seeded_model(lambda msgs: "hi", 1)[1] is False
    with pytest.raises(Exception, match="seed must be an int"):
        OpenAICompatibleModel(base_url="http://127.0.0.1:9/v1", model="m", seed="1")  # type: ignore[arg-type]
