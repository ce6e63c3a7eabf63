"""OTel argument, result, error and final-answer layouts (issue 28, build item 3), each in the
shape its emitter writes (attribute and event names from the instrumentations' sources):
``{"args": [], "kwargs": {...}}`` inputs (Traceloop / OpenInference function decorators),
arguments and results in span events (Strands' default and the GenAI conventions' details
event), Strands' tool.status and Logfire's level as error flags, the final answer carried only
on the agent span, and smolagents' final_answer tool."""

from __future__ import annotations

import json
from typing import Any

from trajcheck.read.traces import load

T0 = 1_760_000_000_000_000_000
TID = "5b" * 16
STAY = {"nights": 2, "guests": [{"name": "Zoë", "age": 34}], "prefs": {"tags": ["ruhig"]}}


def kv(k: str, v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"key": k, "value": {"boolValue": v}}
    if isinstance(v, int):
        return {"key": k, "value": {"intValue": str(v)}}
    return {"key": k, "value": {"stringValue": v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}}


def span(sid: int, name: str, start_ms: int, end_ms: int, attrs: dict[str, Any], *, parent: int | None = 1,
         events: list[tuple[str, dict[str, Any]]] = (), error: bool = False) -> dict[str, Any]:
    sp: dict[str, Any] = {"traceId": TID, "spanId": f"{sid:016x}", "name": name,
                          "startTimeUnixNano": str(T0 + start_ms * 10**6), "endTimeUnixNano": str(T0 + end_ms * 10**6),
                          "attributes": [kv(k, v) for k, v in attrs.items()],
                          "events": [{"name": n, "timeUnixNano": str(T0 + start_ms * 10**6),
                                      "attributes": [kv(k, v) for k, v in a.items()]} for n, a in events]}
    if parent is not None:
        sp["parentSpanId"] = f"{parent:016x}"
    if error:
        sp["status"] = {"code": 2, "message": "tool failed"}
    return sp


def doc(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def calls(t) -> list[tuple[str, Any]]:
    return [(c.name, c.args) for c in t.tool_calls()]


def test_traceloop_args_kwargs_wrapper() -> None:
    d = doc(span(1, "agent.workflow", 0, 100, {"traceloop.span.kind": "workflow"}, parent=None),
            span(2, "get_weather.tool", 10, 20, {"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather",
                                                  "traceloop.entity.input": {"args": [], "kwargs": {"city": "Zürich"}},
                                                  "traceloop.entity.output": "12 °C"}),
            span(3, "book_hotel.tool", 30, 40, {"traceloop.span.kind": "tool", "traceloop.entity.name": "book_hotel",
                                                 "traceloop.entity.input": {"args": [], "kwargs": {"city": "Zürich",
                                                                                                   "stay": STAY}}}))
    (t,) = load(d)
    assert calls(t) == [("get_weather", {"city": "Zürich"}), ("book_hotel", {"city": "Zürich", "stay": STAY})]
    assert [r.output for r in t.tool_results()] == ["12 °C", None]


def test_openinference_positional_args_named_from_the_recorded_signature() -> None:
    params = {"city": {"type": "string", "description": "city"}, "stay": {"type": "object", "description": "stay"}}
    d = doc(span(1, "run", 0, 100, {"openinference.span.kind": "CHAIN"}, parent=None),
            span(2, "book_hotel", 10, 20, {"openinference.span.kind": "TOOL", "tool.name": "book_hotel",
                                            "input.value": {"args": ["Zürich"], "kwargs": {"stay": STAY}},
                                            "tool.parameters": params, "output.value": "ok"}),
            span(3, "get_weather", 30, 40, {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                                             "input.value": {"args": ["São Paulo"], "kwargs": {}}}))
    res = load(d)
    (t,) = res
    # named from tool.parameters; the second span records no signature: kept under 'args', reported
    assert calls(t) == [("book_hotel", {"city": "Zürich", "stay": STAY}), ("get_weather", {"args": ["São Paulo"]})]
    assert any("1 positional argument(s) with no recorded parameter names" in p for p in res.problems)


def test_strands_default_layout_args_and_results_in_span_events() -> None:
    d = doc(
        span(1, "invoke_agent Strands Agents", 0, 1000, {"gen_ai.operation.name": "invoke_agent",
                                                          "gen_ai.agent.name": "Strands Agents"}, parent=None,
             events=[("gen_ai.user.message", {"content": json.dumps([{"text": "Wetter?"}])}),
                     ("gen_ai.choice", {"message": "In Zürich 12 °C; gebucht.", "finish_reason": "end_turn"})]),
        span(2, "chat", 10, 100, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100,
                                  "gen_ai.usage.output_tokens": 20},
             events=[("gen_ai.choice", {"message": json.dumps([{"toolUse": {"toolUseId": "t1", "name": "get_weather",
                                                                             "input": {"city": "Zürich"}}}]),
                                         "finish_reason": "tool_use"})]),
        span(3, "execute_tool get_weather", 110, 120, {"gen_ai.operation.name": "execute_tool",
                                                       "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "t1",
                                                       "tool.status": "success"},
             events=[("gen_ai.tool.message", {"role": "tool", "content": json.dumps({"city": "Zürich"}), "id": "t1"}),
                     ("gen_ai.choice", {"message": json.dumps([{"text": "12 °C"}]), "id": "t1"})]),
        span(4, "chat", 130, 200, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 150,
                                   "gen_ai.usage.output_tokens": 25},
             events=[("gen_ai.choice", {"message": json.dumps([{"toolUse": {"toolUseId": "t2", "name": "book_hotel",
                                                                             "input": {"city": "Zürich", "stay": STAY}}}]),
                                         "finish_reason": "tool_use"})]),
        span(5, "execute_tool book_hotel", 210, 220, {"gen_ai.operation.name": "execute_tool",
                                                      "gen_ai.tool.name": "book_hotel", "gen_ai.tool.call.id": "t2",
                                                      "tool.status": "error"},
             events=[("gen_ai.tool.message", {"role": "tool", "content": json.dumps({"city": "Zürich", "stay": STAY}),
                                              "id": "t2"}),
                     ("gen_ai.choice", {"message": json.dumps([{"text": "Error: kein Zimmer"}]), "id": "t2"})]),
    )
    res = load(d)
    (t,) = res
    assert calls(t) == [("get_weather", {"city": "Zürich"}), ("book_hotel", {"city": "Zürich", "stay": STAY})]
    assert [(r.call_id, r.is_error) for r in t.tool_results()] == [("t1", False), ("t2", True)]
    # Strands' text blocks read as their text, as in its message list (strands/otel_spans artifact)
    assert t.tool_results()[0].output == "12 °C"
    assert t.final_response == "In Zürich 12 °C; gebucht."  # only the agent span carries it
    assert t.total_usage is not None and (t.total_usage.input_tokens, t.total_usage.output_tokens) == (250, 45)


def test_latest_conventions_details_event_on_tool_and_agent_spans() -> None:
    inp = [{"role": "tool", "parts": [{"type": "tool_call", "id": "t1", "name": "get_weather",
                                       "arguments": [{"content": {"city": "São Paulo"}}]}]}]
    out = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "t1", "response": "21 °C"}]}]
    d = doc(span(1, "invoke_agent a", 0, 500, {"gen_ai.operation.name": "invoke_agent",
                                                "gen_ai.output.messages": [{"role": "assistant", "parts": [
                                                    {"type": "text", "content": "São Paulo: 21 °C."}]}]}, parent=None),
            span(2, "execute_tool get_weather", 10, 20, {"gen_ai.operation.name": "execute_tool",
                                                         "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "t1"},
                 events=[("gen_ai.client.inference.operation.details", {"gen_ai.input.messages": inp,
                                                                        "gen_ai.output.messages": out})]))
    (t,) = load(d)
    assert calls(t) == [("get_weather", {"city": "São Paulo"})]
    assert [(r.output, r.is_error) for r in t.tool_results()] == [("21 °C", False)]
    assert t.final_response == "São Paulo: 21 °C."


def test_smolagents_final_answer_tool_is_the_answer_not_a_call() -> None:
    d = doc(span(1, "ToolCallingAgent.run", 0, 900, {"openinference.span.kind": "AGENT",
                                                      "output.value": "Réservé."}, parent=None),
            span(2, "Step 1", 10, 400, {"openinference.span.kind": "CHAIN"}),
            span(3, "get_weather", 100, 110, {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                                              "input.value": {"args": [], "kwargs": {"city": "Zürich"}},
                                              "output.value": "12 °C"}, parent=2),
            span(4, "final_answer", 500, 510, {"openinference.span.kind": "TOOL", "tool.name": "final_answer",
                                               "input.value": {"args": [], "kwargs": {"answer": "Réservé à Zürich."}}},
                 parent=1))
    (t,) = load(d)
    assert calls(t) == [("get_weather", {"city": "Zürich"})]
    assert t.final_response == "Réservé à Zürich."  # the final_answer call's answer
    assert [s.kind for s in t.steps][-1] == "final_response"


def test_logfire_error_level_on_a_custom_tool_span() -> None:
    d = doc(span(1, "agent run", 0, 100, {"logfire.span_type": "span"}, parent=None),
            span(2, "running tool: book_hotel", 10, 20, {"gen_ai.tool.name": "book_hotel", "logfire.level_num": 17,
                                                         "logfire.msg": "book_hotel failed: kein Zimmer",
                                                         "tool_arguments": {"city": "Zürich"}}),
            span(3, "running tool: get_weather", 30, 40, {"gen_ai.tool.name": "get_weather", "logfire.level_num": 9,
                                                          "tool_arguments": {"city": "Zürich"}}))
    (t,) = load(d)
    assert [(r.is_error, r.error) for r in t.tool_results()] == [(True, "book_hotel failed: kein Zimmer"), (False, None)]
