"""The OpenAI Agents SDK writes the trace: a real ``Runner.run_sync`` with the SDK's own
Responses model talking to a scripted OpenAI server on 127.0.0.1. The model asks for a
parallel pair, then a call whose tool raises, then its retry, then answers; the SDK's tracer
hands every span to a processor that keeps ``span.export()`` / ``trace.export()`` (what the
SDK POSTs to ``/v1/traces/ingest``), and trajcheck reads that exactly, usage once per model
call although the SDK also puts it on turn and task spans."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


def _import_sdk() -> None:
    """Import the SDK's ``agents`` package even when another test put a folder holding an
    ``agents.py`` (examples/helpdesk, via the runner's ``load_agent``) first on ``sys.path``."""
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if not (Path(p or ".") / "agents.py").is_file()]
    try:
        mod = sys.modules.get("agents")
        if mod is not None and not hasattr(mod, "Runner"):
            del sys.modules["agents"]
        import agents  # noqa: F401
    finally:
        sys.path[:] = saved


_import_sdk()
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool  # noqa: E402
from agents.tracing import TracingProcessor, set_trace_processors  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from trajcheck.model import Usage  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402


def _fc(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name,
            "arguments": json.dumps(args), "status": "completed"}


# (output items, input tokens, cached, output tokens) of the model's four responses
_TURNS = [
    ([_fc("get_weather", {"city": "Oslo"}, "call_w"), _fc("get_time", {"tz": "CET"}, "call_t")], 120, 0, 30),
    ([_fc("book", {"day": "mon"}, "call_b1")], 200, 64, 12),
    ([_fc("book", {"day": "tue"}, "call_b2")], 260, 128, 12),
    ([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "Booked Tuesday; Oslo is 12C.", "annotations": []}]}], 300, 128, 9),
]


def _chat_body(i: int) -> dict[str, Any]:
    """Turn ``i`` as a Chat Completions response (the SDK's OpenAIChatCompletionsModel)."""
    out, inp, cached, outp = _TURNS[i]
    calls = [{"id": o["call_id"], "type": "function", "function": {"name": o["name"], "arguments": o["arguments"]}}
             for o in out if o["type"] == "function_call"]
    text = next((o["content"][0]["text"] for o in out if o["type"] == "message"), None)
    return {"id": f"chatcmpl_{i}", "object": "chat.completion", "created": 1700000000 + i, "model": "gpt-scripted",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": {"role": "assistant", "content": text, "tool_calls": calls or None}}],
            "usage": {"prompt_tokens": inp, "completion_tokens": outp, "total_tokens": inp + outp,
                      "prompt_tokens_details": {"cached_tokens": cached},
                      "completion_tokens_details": {"reasoning_tokens": 0}}}


class _Server(BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        i = type(self).calls
        type(self).calls += 1
        out, inp, cached, outp = _TURNS[i]
        body = _chat_body(i) if self.path.endswith("/chat/completions") else {"id": f"resp_{i}", "object": "response", "created_at": 1700000000 + i, "model": "gpt-scripted",
                "status": "completed", "output": out, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "usage": {"input_tokens": inp, "input_tokens_details": {"cached_tokens": cached},
                                       "output_tokens": outp, "output_tokens_details": {"reasoning_tokens": 0},
                                       "total_tokens": inp + outp}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a: Any) -> None:
        pass


class _Keep(TracingProcessor):
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def on_trace_start(self, trace: Any) -> None:
        self.items.append(trace.export())

    def on_trace_end(self, trace: Any) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        pass

    def on_span_end(self, span: Any) -> None:
        self.items.append(span.export())

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture()
def server():
    _Server.calls = 0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_agents_sdk_trace_read_exactly(server, tmp_path, api) -> None:
    keep = _Keep()
    set_trace_processors([keep])

    @function_tool
    def get_weather(city: str) -> str:
        return "12C"

    @function_tool
    def get_time(tz: str) -> str:
        return "10:00"

    @function_tool
    def book(day: str) -> str:
        if day == "mon":
            raise ValueError("Monday is full")
        return f"booked {day}"

    client = AsyncOpenAI(base_url=server, api_key="test", max_retries=0)
    model = (OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel)("gpt-scripted", client)
    agent = Agent(name="booker", instructions="Book slots.", model=model, tools=[get_weather, get_time, book])
    result = Runner.run_sync(agent, "Book a slot and tell me the weather")
    set_trace_processors([])
    assert _Server.calls == 4 and result.final_output == "Booked Tuesday; Oslo is 12C."

    p = tmp_path / "spans.jsonl"  # one exported item per line, as a processor would write them
    p.write_text("".join(json.dumps(x) + "\n" for x in keep.items))
    res = load(p)
    assert res.formats == {"openai_agents": 1} and res.problems == []
    t = res[0]
    assert [(c.name, c.args) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}), ("get_time", {"tz": "CET"}), ("book", {"day": "mon"}),
        ("book", {"day": "tue"})]
    # generation spans (Chat Completions) carry the model's call ids; response spans do not
    ids = ["call_w", "call_t", "call_b1", "call_b2"] if api == "chat" else [None] * 4
    assert [c.call_id for c in t.tool_calls()] == [r.call_id for r in t.tool_results()] == ids
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]  # the pair stays one step
    res_ = t.tool_results()
    assert [(r.name, r.output, r.is_error) for r in res_][:2] == [("get_weather", "12C", False), ("get_time", "10:00", False)]
    # the function span's error, as the SDK records it (it redacts the exception text by default)
    assert (res_[2].name, res_[2].output, res_[2].is_error, res_[2].error) == (
        "book", "An error occurred while running the tool. Please try again.", True,
        "Error running tool (non-fatal): Tool execution failed. Error details are redacted.")
    assert (res_[3].output, res_[3].is_error) == ("booked tue", False)
    # usage once per model call: 4 response spans, not also the turn / task spans that repeat it
    sd = [x["span_data"] for x in keep.items if x.get("object") == "trace.span"]
    model_span = "response" if api == "responses" else "generation"
    assert sum(1 for d in sd if d["type"] == model_span and d.get("usage")) == 4
    assert sum(1 for d in sd if d["type"] == "custom" and d["data"].get("usage")) >= 4
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=i, output_tokens=o, total_tokens=i + o, cache_read_tokens=c, reasoning_tokens=0)
        for _, i, c, o in _TURNS]
    assert t.total_usage == Usage(input_tokens=880, output_tokens=63, total_tokens=943, cache_read_tokens=320,
                                  reasoning_tokens=0)
    assert (result.context_wrapper.usage.input_tokens, result.context_wrapper.usage.output_tokens) == (880, 63)
    if api == "responses":  # response spans carry no text
        assert t.steps[-1].kind == "assistant" and t.final_response is None
    else:
        assert t.steps[-1].kind == "final_response" and t.final_response == result.final_output
    assert all(s.agent_name == "booker" for s in t.steps if s.tool_calls)

    # the same spans as one ingest body ({"data": [...]}) read the same
    body = tmp_path / "ingest.json"
    body.write_text(json.dumps({"data": keep.items}))
    assert load(body)[0].to_dict() == t.to_dict()


def test_agents_sdk_handoff_in_a_turn_with_a_tool(server, tmp_path) -> None:
    """The model requests a handoff before a tool in one turn (Chat Completions): the handoff
    runs no function span, so the tool's span takes its call's id by name, not by position."""
    turns = [
        ([{"type": "function_call", "call_id": "call_h", "name": "transfer_to_billing", "arguments": "{}"},
          _fc("get_weather", {"city": "Oslo"}, "call_w")], 40, 0, 8),
        ([{"type": "message", "content": [{"type": "output_text", "text": "Billing here: Oslo is 12C."}]}], 60, 0, 6),
    ]
    _TURNS[:0] = turns  # the server serves turns in order; restored below
    keep = _Keep()
    set_trace_processors([keep])
    try:
        @function_tool
        def get_weather(city: str) -> str:
            return "12C"

        client = AsyncOpenAI(base_url=server, api_key="test", max_retries=0)
        billing = Agent(name="billing", instructions="Billing.", model=OpenAIChatCompletionsModel("gpt-scripted", client))
        triage = Agent(name="triage", instructions="Route.", handoffs=[billing], tools=[get_weather],
                       model=OpenAIChatCompletionsModel("gpt-scripted", client))
        result = Runner.run_sync(triage, "Weather in Oslo, and a billing question")
    finally:
        set_trace_processors([])
        del _TURNS[:2]
    assert result.final_output == "Billing here: Oslo is 12C." and _Server.calls == 2
    res = load([x for x in keep.items])
    assert res.problems == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [("get_weather", {"city": "Oslo"}, "call_w")]
    assert t.metadata["handoffs"] == [{"from_agent": "triage", "to_agent": "billing"}]
    assert [s.agent_name for s in t.steps if s.kind in ("tool_call", "final_response")] == ["triage", "billing"]
    assert t.final_response == "Billing here: Oslo is 12C."
    assert t.total_usage == Usage(input_tokens=100, output_tokens=14, total_tokens=114, cache_read_tokens=0,
                                  reasoning_tokens=0)
