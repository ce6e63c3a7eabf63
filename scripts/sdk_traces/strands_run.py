"""Producer: Strands Agents (``strands-agents``) with its OpenAI model provider (``OpenAIModel``,
non-streaming) against the scripted model on 127.0.0.1 (``_scripted.Scripted``, the scenario's
four chat completions), three ``@tool`` functions, Strands' default concurrent tool executor.
Strands' own tracer writes the spans (default conventions: ``invoke_agent`` > ``execute_event_loop_cycle``
> ``chat`` / ``execute_tool``; a tool's arguments in its ``gen_ai.tool.message`` event, the answer
in the agent span's ``gen_ai.choice`` event); the OTel SDK's in-memory exporter collects them and
they are written as an OTLP JSON ``TracesData`` document (hex ids). Artifacts under
tests/data/sdk_traces/strands/: ``otel_spans.json`` and ``messages.json`` (``agent.messages``:
Bedrock-style ``toolUse`` / ``toolResult`` blocks), each with its ``.truth.json``.

Run with the pinned environment: ``make sdk-traces`` (requirements/strands.txt).
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)  # Strands' default (legacy) span layout
sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "strands-agent"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402


@tool
def get_weather(city: str, units: dict) -> str:
    """Weather of a city.

    Args:
        city: the city
        units: the units to answer in
    """
    return S.WEATHER_OUT


@tool
def get_time(tz: str) -> str:
    """Local time of a time zone.

    Args:
        tz: an IANA time zone
    """
    return S.TIME_OUT


@tool
def book_hotel(guest: dict, dates: list[str]) -> str:
    """Book a hotel.

    Args:
        guest: who stays, and how long
        dates: arrival and departure
    """
    return S.book_hotel_impl(guest, dates)


def main() -> None:
    srv = S.Scripted(S.chat_completion_replies())
    try:
        model = OpenAIModel(client_args={"api_key": "test-key", "base_url": srv.url + "/v1"},
                            model_id="gpt-4o-mini", stream=False)
        agent = Agent(model=model, tools=[get_weather, get_time, book_hotel], callback_handler=None,
                      name="trip_planner")
        result = agent(S.USER)
    finally:
        srv.close()
    assert str(result).strip() == S.FINAL, str(result)
    provider.force_flush()
    ver = version("strands-agents")
    ids = ["call_w1", "call_t1", "call_b1", "call_b2"]
    doc = S.otlp_json(exporter.get_finished_spans())
    S.write("strands", "otel_spans", doc, S.truth(
        "strands-agents (Agent, OpenAIModel) with its own OpenTelemetry tracer (default conventions)", ver,
        "OTLP JSON TracesData of the run's spans (in-memory exporter)", ids=ids, usage=S.USAGE,
        usage_note="each chat span's gen_ai.usage.input_tokens / output_tokens (the invoke_agent span sums them)",
        error_flags=[False, False, True, False], extra={"error_text_prefix": "Error: RuntimeError - "}))
    S.write("strands", "messages", json.loads(json.dumps(agent.messages, ensure_ascii=False, default=str)), S.truth(
        "strands-agents (Agent, OpenAIModel)", ver, "agent.messages after the run (toolUse / toolResult blocks)",
        ids=ids, usage=S.USAGE, usage_note="each assistant message's metadata.usage (inputTokens / outputTokens)",
        error_flags=[False, False, True, False], extra={"error_text_prefix": "Error: RuntimeError - "}))


if __name__ == "__main__":
    main()
