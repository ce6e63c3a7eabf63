"""Producer: Traceloop / OpenLLMetry (``traceloop-sdk``): a plain agent loop (``@agent``) over
the OpenAI client against the scripted model on 127.0.0.1 (``_scripted.Scripted``, the
scenario's four chat completions), the three tools as traceloop ``@tool`` functions (their
arguments recorded as ``{"args": [], "kwargs": {...}}`` in ``traceloop.entity.input``), the
OpenAI instrumentation on, telemetry off, spans to the SDK's in-memory exporter (no network).
The failing booking raises inside its ``@tool`` span; the loop sends its message back as the
tool result. Artifact: tests/data/sdk_traces/traceloop/otel_spans.json (OTLP JSON, hex ids)
and its ``.truth.json``.

Run with the pinned environment: ``make sdk-traces`` (requirements/traceloop.txt; installed
without traceloop-sdk's dependency list, which names every instrumentation it knows).
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

os.environ["TRACELOOP_TELEMETRY"] = "false"
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
from openai import OpenAI  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from traceloop.sdk import Traceloop  # noqa: E402
from traceloop.sdk.decorators import agent, tool  # noqa: E402
from traceloop.sdk.instruments import Instruments  # noqa: E402

exporter = InMemorySpanExporter()
Traceloop.init(app_name="trip-planner", exporter=exporter, disable_batch=True, telemetry_enabled=False,
               instruments={Instruments.OPENAI}, api_endpoint="http://127.0.0.1:9")


@tool(name="get_weather")
def get_weather(city: str, units: dict) -> str:
    return S.WEATHER_OUT


@tool(name="get_time")
def get_time(tz: str) -> str:
    return S.TIME_OUT


@tool(name="book_hotel")
def book_hotel(guest: dict, dates: list[str]) -> str:
    return S.book_hotel_impl(guest, dates)


TOOLS = {"get_weather": get_weather, "get_time": get_time, "book_hotel": book_hotel}
SPECS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in TOOLS]


@agent(name="trip_planner")
def run(client: OpenAI) -> str:
    messages: list[dict] = [{"role": "user", "content": S.USER}]
    while True:
        r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPECS)
        msg = r.choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        messages.append(msg.model_dump(exclude_none=True))
        for c in msg.tool_calls:
            try:
                out = TOOLS[c.function.name](**json.loads(c.function.arguments))
            except RuntimeError as e:
                out = f"Error: {e}"
            messages.append({"role": "tool", "tool_call_id": c.id, "content": out})


def main() -> None:
    srv = S.Scripted(S.chat_completion_replies())
    try:
        answer = run(OpenAI(api_key="test-key", base_url=srv.url + "/v1"))
    finally:
        srv.close()
    assert answer == S.FINAL, answer
    doc = S.otlp_json(exporter.get_finished_spans())
    S.write("traceloop", "otel_spans", doc, S.truth(
        "traceloop-sdk (@agent loop, @tool functions, OpenAI instrumentation)", version("traceloop-sdk"),
        "OTLP JSON TracesData of the run's spans (in-memory exporter)",
        ids=["call_w1", "call_t1", "call_b1", "call_b2"], usage=S.USAGE,
        usage_note="each openai.chat span's gen_ai.usage.* (the OpenAI instrumentation)",
        error_flags=[False, False, True, False],
        extra={"result_ids_from": "the tool span records no id: the model's requested call it matches",
               "result_outputs": [S.WEATHER_OUT, S.TIME_OUT, None, S.BOOK_OUT],
               "cannot_know": "the failed call's output: the raising @tool span has no traceloop.entity.output "
                              "(its error is the span's status message and exception event)"}))


if __name__ == "__main__":
    main()
