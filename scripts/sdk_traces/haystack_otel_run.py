"""haystack-ai writes the trace as OpenTelemetry spans: the Haystack ``Agent`` of
``haystack_run.py`` (``OpenAIChatGenerator`` against the scripted OpenAI-compatible server on
127.0.0.1, three function tools, the failing booking caught by the tool invoker) with
Haystack's OpenTelemetry tracer (``opentelemetry-haystack``'s ``OpenTelemetryTracer``) and
content tracing on (``HAYSTACK_CONTENT_TRACING_ENABLED=true``, without which no argument,
result or message is recorded). The SDK's in-memory exporter collects the spans; they are
written as an OTLP JSON ``TracesData`` document (the protobuf encoder of
``opentelemetry-exporter-otlp-proto-common``, ids as hex as the OTLP JSON encoding says).
Artifact: ``haystack/otel_spans.json``: ``haystack.agent.run`` > ``haystack.agent.step`` >
``haystack.agent.step.llm`` (the generator's input and replies as content tags) and one
``haystack.agent.step.tool`` per call (``haystack.tool.name``, ``...tool.input`` /
``...tool.output``, ``haystack.tool.error``).

Run with its own venv (``make sdk-traces``, requirements/haystack_otel.txt): haystack-ai==3.4.1,
opentelemetry-haystack==2.0.0, opentelemetry-sdk==1.45.2.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"  # read when haystack.tracing is imported
sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import haystack  # noqa: E402
import haystack_run as H  # noqa: E402
from haystack import tracing  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat.openai import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


def _traced() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "haystack-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))
    return exporter, provider


def pipeline_run() -> None:
    """A one-component Pipeline (the chat generator offered the tools; haystack-ai 3.x has no
    ToolInvoker component, the Agent runs tools): its ``haystack.component.run`` span holds the
    model's first turn, the parallel pair, as requested calls. Artifact ``otel_pipeline_spans.json``
    (no truth file: one model turn of the scenario, checked in tests/test_sdk_traces_haystack_otel.py)."""
    from haystack import Pipeline

    exporter, provider = _traced()
    srv = S.Scripted(H.scripted_replies()[:1])
    try:
        gen = OpenAIChatGenerator(api_key=Secret.from_token("test-key"), model="gpt-4o-mini",
                                  api_base_url=srv.url + "/v1",
                                  tools=[create_tool_from_function(f) for f in (H.get_weather, H.get_time)])
        pipe = Pipeline()
        pipe.add_component("llm", gen)
        out = pipe.run({"llm": {"messages": [ChatMessage.from_user(S.USER)]}})
    finally:
        srv.close()
        tracing.disable_tracing()
    assert [c.id for c in out["llm"]["replies"][0].tool_calls] == ["call_w1", "call_t1"]
    provider.force_flush()
    doc = S.otlp_json(exporter.get_finished_spans())
    path = S.DATA / "haystack" / "otel_pipeline_spans.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def openinference_run() -> None:
    """The same Agent, run in a Pipeline, traced by OpenInference's Haystack instrumentation
    (``openinference-instrumentation-haystack``, its ``HaystackInstrumentor`` patching the
    components; Haystack's own tracer off). Artifact ``otel_openinference_spans.json``: an LLM span
    per model call (``llm.output_messages.*.tool_calls`` without call ids, ``llm.token_count.*``)
    and CHAIN spans for the Agent and the Pipeline; the tools the Agent runs get no span and the
    prompt's tool messages carry no content, so results, their errors and call ids are not
    recorded (the truth says so)."""
    from haystack import Pipeline
    from openinference.instrumentation.haystack import HaystackInstrumentor

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "haystack-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    HaystackInstrumentor().instrument(tracer_provider=provider)
    srv = S.Scripted(H.scripted_replies())
    try:
        gen = OpenAIChatGenerator(api_key=Secret.from_token("test-key"), model="gpt-4o-mini",
                                  api_base_url=srv.url + "/v1")
        agent = Agent(chat_generator=gen, tools=[create_tool_from_function(f) for f in
                                                 (H.get_weather, H.get_time, H.book_hotel)])
        pipe = Pipeline()
        pipe.add_component("agent", agent)
        out = pipe.run({"agent": {"messages": [ChatMessage.from_user(S.USER)]}})
    finally:
        srv.close()
        HaystackInstrumentor().uninstrument()
    assert out["agent"]["messages"][-1].text == S.FINAL
    provider.force_flush()
    doc = S.otlp_json(exporter.get_finished_spans())
    version = str(getattr(haystack.__version__, "__version__", haystack.__version__))
    S.write("haystack", "otel_openinference_spans", doc, S.truth(
        "haystack-ai (Agent in a Pipeline) with openinference-instrumentation-haystack's HaystackInstrumentor",
        version, "OTLP JSON TracesData of the run's spans (in-memory exporter)",
        ids=[None, None, None, None], usage=S.USAGE,
        usage_note="each LLM span's llm.token_count.prompt / .completion",
        error_flags=[None, None, None, None],
        extra={"result_outputs": [None, None, None, None],
               "cannot_know": "tool outputs, their errors and call ids: no tool span, tool messages without content"}))


def main() -> None:
    exporter, provider = _traced()
    replies = H.scripted_replies()
    srv = S.Scripted(replies)
    try:
        gen = OpenAIChatGenerator(api_key=Secret.from_token("test-key"), model="gpt-4o-mini",
                                  api_base_url=srv.url + "/v1")
        agent = Agent(chat_generator=gen, tools=[create_tool_from_function(f) for f in
                                                 (H.get_weather, H.get_time, H.book_hotel)])
        agent.warm_up()
        out = agent.run(messages=[ChatMessage.from_user(S.USER)])
    finally:
        srv.close()
        tracing.disable_tracing()
    assert out["messages"][-1].text == S.FINAL
    provider.force_flush()
    doc = S.otlp_json(exporter.get_finished_spans())
    version = str(getattr(haystack.__version__, "__version__", haystack.__version__))
    S.write("haystack", "otel_spans", doc, S.truth(
        "haystack-ai (Agent, OpenAIChatGenerator) with opentelemetry-haystack's OpenTelemetryTracer",
        version, "OTLP JSON TracesData of the run's spans (in-memory exporter, content tracing on)",
        ids=["call_w1", "call_t1", "call_b1", "call_b2"], usage=S.USAGE,
        usage_note="each haystack.agent.step.llm span's output tag holds the replies with meta.usage",
        error_flags=[False, False, True, False],
        extra={"result_ids_from": "the tool span's input matched to the model's requested calls"}))


if __name__ == "__main__":
    main()
    pipeline_run()
    openinference_run()
