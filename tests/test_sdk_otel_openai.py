"""The OpenAI client traced by real instrumentations (OpenInference, OpenTelemetry GenAI
``openai-v2``) against a scripted OpenAI server on 127.0.0.1; the OTLP JSON the OTel SDK's
own encoder writes is read back by trajcheck exactly.

The scripted run: the model asks for two weather lookups at once (Oslo, Atlantis); the
Atlantis lookup fails ("Error: unknown city"); the model retries it as "Atlantis, GA" and
then answers. Usage per model call is scripted, so totals are known.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
pytest.importorskip("opentelemetry.sdk.trace")
json_format = pytest.importorskip("google.protobuf.json_format")
trace_encoder = pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")
log_encoder = pytest.importorskip("opentelemetry.exporter.otlp.proto.common._log_encoder")

from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from trajcheck.match.matching import retried_failures  # noqa: E402
from trajcheck.model import Usage  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402


def _call(cid: str, city: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}


_SCRIPT = [
    ({"role": "assistant", "content": None, "tool_calls": [_call("call_1", "Oslo"), _call("call_2", "Atlantis")]},
     "tool_calls", (50, 20)),
    ({"role": "assistant", "content": None, "tool_calls": [_call("call_3", "Atlantis, GA")]}, "tool_calls", (80, 10)),
    ({"role": "assistant", "content": "Oslo: 12C. Atlantis, GA: 25C."}, "stop", (100, 12)),
]
_WEATHER = {"Oslo": "12C", "Atlantis": "Error: unknown city", "Atlantis, GA": "25C"}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


class _Server(ThreadingHTTPServer):
    turn = 0


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        srv = self.server
        assert isinstance(srv, _Server)
        msg, finish, (pin, pout) = _SCRIPT[srv.turn]
        srv.turn += 1
        body = json.dumps({"id": f"chatcmpl-{srv.turn}", "object": "chat.completion", "created": 1_700_000_000 + srv.turn,
                           "model": "gpt-4o-mini-2024-07-18",
                           "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
                           "usage": {"prompt_tokens": pin, "completion_tokens": pout,
                                     "total_tokens": pin + pout}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


def _agent(base_url: str, tp: TracerProvider) -> None:
    """A plain tool loop on the OpenAI client: run the requested tools, send the results back.
    The run is one trace under the app's own root span (without it every model call would be a
    trace of its own)."""
    with tp.get_tracer("weather-app").start_as_current_span("invoke_agent weather"):
        _loop(base_url)


def _loop(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo and Atlantis?"}]
    for _ in range(5):
        resp = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        msg = resp.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            return
        for tc in msg.tool_calls:
            city = json.loads(tc.function.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": _WEATHER[city]})


def _otlp_spans(exporter: InMemorySpanExporter) -> dict[str, Any]:
    return json_format.MessageToDict(trace_encoder.encode_spans(exporter.get_finished_spans()))


def _otlp_logs(exporter: InMemoryLogRecordExporter) -> dict[str, Any]:
    return json_format.MessageToDict(log_encoder.encode_logs(exporter.get_finished_logs()))


def _check(t) -> None:
    """What the scripted run holds, read from any of the instrumentations' output."""
    assert t.user_input == "Weather in Oslo and Atlantis?"
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "call_1"), ("get_weather", {"city": "Atlantis"}, "call_2"),
        ("get_weather", {"city": "Atlantis, GA"}, "call_3")]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == [2, 1]  # the parallel pair
    assert [(c.call_id, r.output if r else None) for c, r in t.pairs()] == [
        ("call_1", "12C"), ("call_2", "Error: unknown city"), ("call_3", "25C")]
    # no error channel in chat messages; the declared convention marks the failure
    assert [r.is_error for r in t.tool_results()] == [None, True, None]
    assert retried_failures(t) == frozenset({1})
    assert t.final_response == "Oslo: 12C. Atlantis, GA: 25C."
    assert t.total_usage is not None
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (50 + 80 + 100, 20 + 10 + 12)
    assert [s.usage.input_tokens for s in t.steps if s.usage is not None] == [50, 80, 100]


def test_openinference_openai_instrumentation(server: str, tmp_path: Path) -> None:
    oi = pytest.importorskip("openinference.instrumentation.openai")
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    inst = oi.OpenAIInstrumentor()
    inst.instrument(tracer_provider=tp)
    try:
        _agent(server, tp)
    finally:
        inst.uninstrument()
    p = tmp_path / "openinference.json"
    p.write_text(json.dumps(_otlp_spans(exporter)))
    res = load(p, error_pattern="^Error")
    assert res.formats == {"otel": 1}, res.problems
    (t,) = res.trajectories
    _check(t)
    assert t.total_usage == Usage(input_tokens=230, output_tokens=42, total_tokens=272)
    # the same spans as the SDK's console exporter prints them (ReadableSpan.to_json, one JSON
    # object after another: "0x" hex ids, ISO times, flat attributes)
    q = tmp_path / "console.txt.json"
    q.write_text("\n".join(sp.to_json() for sp in exporter.get_finished_spans()))
    (t2,) = load(q, error_pattern="^Error").trajectories
    _check(t2)
    assert t2.trace_id == t.trace_id


@pytest.mark.parametrize("mode", ["SPAN_ONLY", "EVENT_ONLY"])
def test_opentelemetry_genai_openai_v2_instrumentation(server: str, tmp_path: Path, mode: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    v2 = pytest.importorskip("opentelemetry.instrumentation.openai_v2")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", mode)
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(spans))
    lp = LoggerProvider()
    lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
    inst = v2.OpenAIInstrumentor()
    inst.instrument(tracer_provider=tp, logger_provider=lp)
    try:
        _agent(server, tp)
    finally:
        inst.uninstrument()
    p = tmp_path / "export.jsonl"
    lines = [_otlp_spans(spans)]
    if mode == "EVENT_ONLY":
        assert logs.get_finished_logs(), "EVENT_ONLY writes the messages to log events"
        lines.append(_otlp_logs(logs))
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = load(p, error_pattern="^Error")
    assert res.formats == {"otel": 1}, res.problems
    (t,) = res.trajectories
    _check(t)
    assert all(s.model == "gpt-4o-mini-2024-07-18" for s in t.steps if s.usage is not None)
    if mode == "EVENT_ONLY":
        # the log events alone (no spans) hold the whole run too
        q = tmp_path / "logs.json"
        q.write_text(json.dumps(_otlp_logs(logs)))
        (t2,) = load(q, error_pattern="^Error").trajectories
        _check(t2)
