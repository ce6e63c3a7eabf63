"""A real LangGraph agent traced by the real LangSmith SDK, read back exactly.

The graph (LangGraph's own ``ToolNode`` and ``tools_condition``) runs on LangChain's scripted
``GenericFakeChatModel``; LangChain's ``LangChainTracer`` sends the runs through a real
``langsmith.Client`` to a capturing LangSmith API on 127.0.0.1 (``POST /runs`` and
``PATCH /runs/{id}``, the SDK's non-batch path). The captured bodies are written as the SDK's
``{"post": [...], "patch": [...]}`` payload and read with ``trajcheck.read.traces.load``.

The scripted run: two weather lookups at once (Oslo, Atlantis); the Atlantis tool raises and
LangGraph turns it into an error ToolMessage; the model retries as "Atlantis, GA", then answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
langsmith = pytest.importorskip("langsmith")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_core.tracers.langchain import LangChainTracer  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, tools_condition  # noqa: E402

from trajcheck.match.matching import retried_failures  # noqa: E402
from trajcheck.model import Usage  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402


class _Api(ThreadingHTTPServer):
    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.posts: list[dict[str, Any]] = []
        self.patches: list[dict[str, Any]] = []
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    def _body(self) -> Any:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        return json.loads(raw) if raw else None

    def _reply(self, code: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        srv = self.server
        assert isinstance(srv, _Api)
        body = self._body()
        if self.path.rstrip("/").endswith("/runs"):
            with srv.lock:
                srv.posts.append(body)
        self._reply(200, {})

    def do_PATCH(self) -> None:  # noqa: N802
        srv = self.server
        assert isinstance(srv, _Api)
        body = self._body()
        run_id = self.path.rstrip("/").rsplit("/", 1)[-1]
        with srv.lock:
            srv.patches.append({"id": run_id, **body})
        self._reply(200, {})

    def do_GET(self) -> None:  # noqa: N802
        self._reply(404, {"detail": "not found"})

    def log_message(self, *a: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[_Api]:
    srv = _Api(("127.0.0.1", 0), _Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


_WEATHER = {"Oslo": "12C", "Atlantis, GA": "25C"}


@tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    if city not in _WEATHER:
        raise ValueError(f"unknown city {city}")
    return _WEATHER[city]


class _ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model; tools are bound by the script, not by the model."""

    def bind_tools(self, tools: Any, **kw: Any) -> _ScriptedModel:
        return self


def _usage(i: int, o: int) -> dict[str, int]:
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}


_SCRIPT = [
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"},
                              {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_2"}],
              usage_metadata=_usage(50, 20)),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Atlantis, GA"}, "id": "call_3"}],
              usage_metadata=_usage(80, 10)),
    AIMessage("Oslo: 12C. Atlantis, GA: 25C.", usage_metadata=_usage(100, 12)),
]


def _graph() -> Any:
    model = _ScriptedModel(messages=iter([m.model_copy() for m in _SCRIPT])).bind_tools([get_weather])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([get_weather], handle_tool_errors=True))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile()


def test_langgraph_run_traced_by_langsmith(api: _Api, tmp_path: Path) -> None:
    client = langsmith.Client(api_url=f"http://127.0.0.1:{api.server_address[1]}", api_key="test-key",
                              auto_batch_tracing=False)
    tracer = LangChainTracer(client=client, project_name="trajcheck-test")
    out = _graph().invoke({"messages": [HumanMessage("Weather in Oslo and Atlantis?")]},
                          config={"callbacks": [tracer]})
    tracer.wait_for_futures()
    assert out["messages"][-1].content == "Oslo: 12C. Atlantis, GA: 25C."
    assert api.posts and api.patches
    p = tmp_path / "langsmith_payload.json"
    p.write_text(json.dumps({"post": api.posts, "patch": api.patches}))

    res = load(p)
    assert res.formats == {"langsmith": 1}, res.problems
    assert res.sources[str(p)].wrappers == ["LangSmith run payload"]
    (t,) = res.trajectories
    assert t.user_input == "Weather in Oslo and Atlantis?"
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "call_1"), ("get_weather", {"city": "Atlantis"}, "call_2"),
        ("get_weather", {"city": "Atlantis, GA"}, "call_3")]
    # the two tool runs of the first model turn are one step
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == [2, 1]
    pairs = [(c.call_id, r.output if r else None, r.is_error if r else None) for c, r in t.pairs()]
    assert [(cid, err) for cid, _, err in pairs] == [("call_1", False), ("call_2", True), ("call_3", False)]
    assert pairs[0][1] == "12C" and pairs[2][1] == "25C"
    assert "unknown city Atlantis" in (t.pairs()[1][1].error or "")
    assert retried_failures(t) == frozenset({1})
    assert t.final_response == "Oslo: 12C. Atlantis, GA: 25C."
    assert t.total_usage == Usage(input_tokens=230, output_tokens=42, total_tokens=272)
    assert [s.usage.input_tokens for s in t.steps if s.usage is not None] == [50, 80, 100]
