"""pydantic-ai writes the trace: a real ``Agent`` run on pydantic-ai's own ``FunctionModel`` (a
scripted model, no network) with a parallel pair, a call that fails with ``ModelRetry`` and is
retried, and usage per model call; trajcheck reads ``all_messages_json()`` exactly."""

from __future__ import annotations

import json
import warnings

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from trajcheck.model import Usage
from trajcheck.read.traces import detect, load, read

# the model's four turns: a parallel pair, a failing call, its retry, the answer
_TURNS = [
    ([ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="w1"),
      ToolCallPart("get_time", '{"tz": "CET"}', tool_call_id="t1")], 50, 12),
    ([ToolCallPart("book", {"day": "mon"}, tool_call_id="b1")], 80, 9),
    ([ToolCallPart("book", {"day": "tue"}, tool_call_id="b2")], 95, 9),
    ([TextPart("Booked Tuesday; Oslo is 12C.")], 110, 7),
]


def _script(messages, info: AgentInfo) -> ModelResponse:
    turn = sum(1 for m in messages if m.kind == "response")
    parts, inp, out = _TURNS[turn]
    return ModelResponse(parts=parts, usage=RequestUsage(input_tokens=inp, output_tokens=out))


def _run(**kw):
    agent = Agent(FunctionModel(_script), instructions="You book slots.", **kw)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return "12C"

    @agent.tool_plain
    def get_time(tz: str) -> str:
        return "10:00"

    @agent.tool_plain
    def book(day: str) -> str:
        if day == "mon":
            raise ModelRetry("Monday is full")
        return f"booked {day}"

    return agent.run_sync("Book a slot and tell me the weather")


def test_pydantic_ai_message_history_read_exactly(tmp_path) -> None:
    result = _run()
    p = tmp_path / "history.json"
    p.write_bytes(result.all_messages_json())
    res = load(p)
    assert res.formats == {"pydantic_ai": 1} and res.problems == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "w1"), ("get_time", {"tz": "CET"}, "t1"),
        ("book", {"day": "mon"}, "b1"), ("book", {"day": "tue"}, "b2")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]  # the pair is one step
    assert [(r.call_id, r.output, r.is_error, r.error) for r in t.tool_results()] == [
        ("w1", "12C", False, None), ("t1", "10:00", False, None),
        ("b1", "Monday is full", True, "Monday is full"), ("b2", "booked tue", False, None)]
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=i, output_tokens=o, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0)
        for _, i, o in _TURNS]
    # equals the SDK's own run usage
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (
        result.usage.input_tokens, result.usage.output_tokens) == (335, 37)
    assert t.final_response == result.output == "Booked Tuesday; Oslo is 12C."
    assert [s.kind for s in t.steps][:2] == ["system", "user"] and t.user_input == "Book a slot and tell me the weather"


def test_pydantic_ai_message_objects_read_in_memory() -> None:
    result = _run()
    msgs = result.all_messages()
    assert detect(msgs) == "pydantic_ai"
    t = read(msgs)
    assert [c.name for c in t.tool_calls()] == ["get_weather", "get_time", "book", "book"]
    assert t.to_dict() == read(json.loads(result.all_messages_json())).to_dict()


@pytest.mark.parametrize("version", [2, 5])
def test_pydantic_ai_otel_spans_read_exactly(tmp_path, version) -> None:
    """The same run traced by pydantic-ai's own OpenTelemetry instrumentation (what Logfire
    receives): tool arguments under ``tool_arguments`` (data format 2) or
    ``gen_ai.tool.call.arguments`` (5), and the run's total usage repeated on the agent span
    under the standard ``gen_ai.usage.*`` names, which must not be counted again."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = InstrumentationSettings(tracer_provider=provider, version=version,
                                       use_aggregated_usage_attribute_names=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # version 2 is deprecated, still emitted by older apps
        result = _run(capabilities=[Instrumentation(settings=settings)])
    spans = [json.loads(s.to_json()) for s in exporter.get_finished_spans()]
    agent_span = next(s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent")
    assert agent_span["attributes"]["gen_ai.usage.input_tokens"] == 335
    arg_key = "tool_arguments" if version == 2 else "gen_ai.tool.call.arguments"
    assert sum(1 for s in spans if arg_key in s["attributes"]) == 4
    p = tmp_path / "spans.json"
    p.write_text(json.dumps(spans))
    res = load(p)
    assert res.formats == {"otel": 1} and res.problems == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "w1"), ("get_time", {"tz": "CET"}, "t1"),
        ("book", {"day": "mon"}, "b1"), ("book", {"day": "tue"}, "b2")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    assert [(r.call_id, r.is_error) for r in t.tool_results()] == [("w1", False), ("t1", False), ("b1", True),
                                                                   ("b2", False)]
    assert t.tool_results()[2].error == "Monday is full"
    assert [(s.usage.input_tokens, s.usage.output_tokens) for s in t.steps if s.usage] == [(i, o) for _, i, o in _TURNS]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (335, 37)
    assert t.final_response == result.output
