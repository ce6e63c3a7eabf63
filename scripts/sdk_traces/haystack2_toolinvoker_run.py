"""haystack-ai 2.x writes the trace as OpenTelemetry spans: a Haystack 2.x ``Agent``
(``OpenAIChatGenerator`` against the scripted OpenAI-compatible server on 127.0.0.1, the three
function tools of ``haystack_run.py``, the failing booking caught by the Agent's ``ToolInvoker``)
with Haystack 2.x's built-in ``haystack.tracing.OpenTelemetryTracer`` and content tracing on
(``HAYSTACK_CONTENT_TRACING_ENABLED=true``). The SDK's in-memory exporter collects the spans; they
are written as an OTLP JSON ``TracesData`` document (``_scripted.otlp_json``).

Haystack 2.x opens no span of its own per tool call: the Agent runs its chat generator and its
``ToolInvoker`` as pipeline components, so the trace is ``haystack.agent.run`` > one
``haystack.component.run`` per component run (``haystack.component.type`` ``OpenAIChatGenerator``
or ``ToolInvoker``), the calls and results only in their ``haystack.component.input`` /
``haystack.component.output`` content tags. Artifact:
``haystack2_toolinvoker/otel_spans.json`` and its truth. Two Pipelines of ``OpenAIChatGenerator`` ->
``ToolInvoker`` (no truth file: one model turn each, checked in tests/test_sdk_traces_haystack2.py):
``otel_pipeline_spans.json``, the first turn (the parallel pair) run by the invoker, and
``otel_pipeline_raised_spans.json``, the failing booking with the invoker's default
``raise_on_failure=True``: the invoker raises, its span has the error status and no output.

Run with its own venv (``run.sh haystack2_toolinvoker``, requirements/haystack2_toolinvoker.txt):
haystack-ai==2.31.0, opentelemetry-sdk==1.45.2.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

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
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


def _traced() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "haystack2-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with warnings.catch_warnings():  # 2.x warns that the tracer moves to opentelemetry-haystack in 3.0
        warnings.simplefilter("ignore", FutureWarning)
        tracer = tracing.OpenTelemetryTracer(provider.get_tracer("haystack"))
    tracing.enable_tracing(tracer)
    return exporter, provider


def _pipeline(reply: int, raise_on_failure: bool) -> tuple[InMemorySpanExporter, TracerProvider, Any]:
    """A Pipeline ``llm`` (OpenAIChatGenerator offered the tools) -> ``tools`` (ToolInvoker) run on
    the scenario's model turn ``reply``; returns the exporter, provider and the run's output
    (the exception when the pipeline raised)."""
    from haystack import Pipeline
    from haystack.components.tools import ToolInvoker

    exporter, provider = _traced()
    srv = S.Scripted(H.scripted_replies()[reply:reply + 1])
    tools = [create_tool_from_function(f) for f in (H.get_weather, H.get_time, H.book_hotel)]
    try:
        pipe = Pipeline()
        pipe.add_component("llm", OpenAIChatGenerator(api_key=Secret.from_token("test-key"), model="gpt-4o-mini",
                                                      api_base_url=srv.url + "/v1", tools=tools))
        pipe.add_component("tools", ToolInvoker(tools=tools, raise_on_failure=raise_on_failure))
        pipe.connect("llm.replies", "tools.messages")
        try:
            out: Any = pipe.run({"llm": {"messages": [ChatMessage.from_user(S.USER)]}})
        except Exception as e:  # noqa: BLE001 -- the raised run is the artifact
            out = e
    finally:
        srv.close()
        tracing.disable_tracing()
    provider.force_flush()
    return exporter, provider, out


def _save(name: str, exporter: InMemorySpanExporter) -> None:
    path = S.DATA / "haystack2_toolinvoker" / f"{name}.json"
    path.write_text(json.dumps(S.otlp_json(exporter.get_finished_spans()), ensure_ascii=False, indent=1) + "\n",
                    encoding="utf-8")
    print(f"wrote {path}")


def pipeline_runs() -> None:
    """The two Pipeline artifacts of the module docstring."""
    exporter, _, out = _pipeline(0, raise_on_failure=False)
    assert [m.tool_call_result.origin.id for m in out["tools"]["tool_messages"]] == ["call_w1", "call_t1"]
    _save("otel_pipeline_spans", exporter)
    exporter, _, out = _pipeline(1, raise_on_failure=True)
    assert isinstance(out, Exception) and S.BOOK_ERROR in str(out), out
    _save("otel_pipeline_raised_spans", exporter)


def main() -> None:
    exporter, provider = _traced()
    srv = S.Scripted(H.scripted_replies())
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
    assert len(srv.requests) == 4
    provider.force_flush()
    spans = exporter.get_finished_spans()
    types = [(s.attributes or {}).get("haystack.component.type") for s in spans]
    assert types.count("ToolInvoker") == 3 and types.count("OpenAIChatGenerator") == 4, types
    doc = S.otlp_json(spans)
    version = str(getattr(haystack.__version__, "__version__", haystack.__version__))
    S.write("haystack2_toolinvoker", "otel_spans", doc, S.truth(
        "haystack-ai 2.x (Agent, OpenAIChatGenerator, ToolInvoker) with haystack.tracing.OpenTelemetryTracer",
        version, "OTLP JSON TracesData of the run's spans (in-memory exporter, content tracing on)",
        ids=["call_w1", "call_t1", "call_b1", "call_b2"], usage=S.USAGE,
        usage_note="each OpenAIChatGenerator haystack.component.run span's output tag holds the replies "
                   "with meta.usage",
        error_flags=[False, False, True, False],
        extra={"result_ids_from": "the ToolInvoker span's output tag: tool_call_result parts with origin "
                                  "(the requested call and its id) and error",
               "error_text_prefix": "Failed to invoke Tool `book_hotel` with parameters "
                                    "{'guest': {'name': 'Zoë Müller', 'nights': 2}, "
                                    "'dates': ['2026-12-24', '2026-12-26']}. Error: "}))


if __name__ == "__main__":
    main()
    pipeline_runs()
