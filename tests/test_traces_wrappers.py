"""Envelopes and span-to-step rules on small documented shapes the real files do not cover.

(The real files are in test_real_traces.py; these are the other shapes each wrapper or rule
documents: Phoenix's paged REST body, ADK's legacy test file, LangSmith tool runs under one
model turn, model spans without tool spans, a tool span without arguments.)
"""

from __future__ import annotations

import json

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.model import Usage
from trajcheck.read.traces import load, read
from trajcheck.read.traces.wrappers import unwrap


def _span(sid: str, name: str, start: int, end: int, attrs: dict, parent: str | None = "aa00000000000001",
          status: str = "OK") -> dict:
    return {"name": name, "context": {"trace_id": "t" * 32, "span_id": sid}, "parent_id": parent,
            "span_kind": attrs.pop("_kind", "UNKNOWN"), "start_time": f"2026-01-01T00:00:{start:02d}Z",
            "end_time": f"2026-01-01T00:00:{end:02d}Z", "status_code": status, "status_message": "",
            "attributes": attrs, "events": []}


def test_phoenix_rest_page_is_read_as_spans(tmp_path) -> None:
    spans = [
        _span("aa00000000000001", "agent", 0, 9, {"_kind": "AGENT", "input.value": "Weather in Oslo?"}, parent=None),
        _span("aa00000000000002", "llm", 1, 2, {"_kind": "LLM", "llm.token_count.prompt": 10,
                                                 "llm.token_count.completion": 3}),
        _span("aa00000000000003", "get_weather", 3, 4, {"_kind": "TOOL", "tool.name": "get_weather",
                                                         "input.value": '{"city": "Oslo"}', "output.value": "12C"}),
        _span("aa00000000000004", "llm", 5, 6, {"_kind": "LLM", "llm.output_messages.0.message.content": "12C."}),
    ]
    p = tmp_path / "page.json"
    p.write_text(json.dumps({"data": spans, "next_cursor": None}))
    res = load(p)
    assert res.formats == {"otel": 1} and res.sources[str(p)].wrappers == ["Phoenix REST response"]
    (t,) = res.trajectories
    assert [(c.name, c.args) for c in t.tool_calls()] == [("get_weather", {"city": "Oslo"})]
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "final_response"]
    assert t.steps[1].usage == Usage(input_tokens=10, output_tokens=3)
    # a body that only has a "data" list of something else is not cut open
    assert unwrap({"data": [{"a": 1}], "next_cursor": None}) is None


def test_adk_legacy_test_file(tmp_path) -> None:
    turns = [{"query": "hi", "expected_tool_use": [], "expected_intermediate_agent_responses": [],
              "reference": "Hello! What can I do for you?\n"},
             {"query": "roll a die for me", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
              "expected_intermediate_agent_responses": [], "reference": "I rolled a 4."}]
    p = tmp_path / "hello.test.json"
    p.write_text(json.dumps(turns))
    res = load(p)
    assert res.formats == {"vertex": 1} and res.sources[str(p)].wrappers == ["ADK legacy test file"]
    (t,) = res.trajectories
    assert [(c.name, c.args) for c in t.tool_calls()] == [("roll_die", {"sides": 6})]
    assert [s.content for s in t.steps if s.kind == "user"] == ["hi", "roll a die for me"]
    assert t.final_response == "I rolled a 4." and t.metadata["trajectory"] == "reference"
    # the older named form: one run per named conversation, named as the case
    named = [{"name": "roll", "data": turns}, {"name": "greet", "data": turns[:1]}]
    p2 = tmp_path / "evalset.json"
    p2.write_text(json.dumps(named))
    res2 = load(p2)
    assert [t.metadata["case_id"] for t in res2] == ["roll", "greet"]
    assert [len(t.tool_calls()) for t in res2] == [1, 0]


def test_adk_eval_set_with_two_cases_needs_load() -> None:
    case = {"eval_id": "c1", "conversation": [{"invocation_id": "i", "user_content": {"parts": [{"text": "x"}]},
                                               "intermediate_data": {"tool_uses": [{"name": "a", "args": {}}]}}]}
    doc = {"eval_set_id": "s", "eval_cases": [case, dict(case, eval_id="c2")]}
    res = load(doc)
    assert [t.metadata["case_id"] for t in res] == ["c1", "c2"]
    assert res.sources["<input>"].wrappers == ["ADK EvalSet"]
    with pytest.raises(TraceFormatError, match="ADK EvalSet holds 2 traces; read it with load"):
        read(doc)
    assert read({"eval_set_id": "s", "eval_cases": [case]}).metadata["case_id"] == "c1"


def test_promptfoo_output_result_without_response_is_listed() -> None:
    doc = {"evalId": "e", "results": {"version": 3, "results": [
        {"id": "r0", "testIdx": 0, "promptIdx": 0, "provider": {"id": "openai:x"}, "success": True,
         "response": {"output": "hi", "tokenUsage": {"total": 3}}, "vars": {"case_id": "c7"}},
        {"id": "r1", "testIdx": 1, "promptIdx": 0, "error": "API error: 429", "success": False}]}}
    res = load(doc)
    assert len(res) == 1 and res[0].metadata["case_id"] == "c7" and res[0].final_response == "hi"
    assert res.skipped == ["<input> results.results[1]: no provider response (error: API error: 429); skipped"]


def _run(rid: str, rt: str, name: str, start: int, end: int, parent: str | None = "root", **kw) -> dict:
    return {"id": rid, "run_type": rt, "name": name, "parent_run_id": parent,
            "start_time": f"2026-01-01T00:00:{start:02d}+00:00", "end_time": f"2026-01-01T00:00:{end:02d}+00:00",
            "dotted_order": f"2026010{1}T0000{start:02d}000000Z{rid}", **kw}


def test_langsmith_parallel_tool_runs_are_one_step() -> None:
    ask = {"generations": [[{"message": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",
                                                                             "AIMessage"],
                                          "kwargs": {"content": "", "tool_calls": [
                                              {"name": "get", "args": {"id": 2}, "id": "c2"},
                                              {"name": "get", "args": {"id": 1}, "id": "c1"}]}}}]]}
    runs = [
        _run("root", "chain", "agent", 0, 9, parent=None, inputs={"messages": [["hi"]], "model": "m"}),
        _run("l1", "llm", "ChatModel", 1, 2, outputs=ask),
        # executed in the other order, no call ids on the runs: ids come from the model's request
        _run("t1", "tool", "get", 3, 4, inputs={"id": 1}, outputs={"output": "one"}),
        _run("t2", "tool", "get", 3, 5, inputs={"id": 2}, error="boom"),
        _run("l2", "llm", "ChatModel", 6, 7, outputs={"generations": [[{"text": "done"}]]}),
    ]
    t = read(runs, "langsmith")
    assert [s.kind for s in t.steps] == ["tool_call", "tool_result", "tool_result", "final_response"]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [("get", {"id": 2}, "c2"), ("get", {"id": 1}, "c1")]
    assert [(r.call_id, r.output, r.is_error) for r in t.tool_results()] == [("c2", None, True), ("c1", "one", False)]
    assert t.final_response == "done"


def test_langsmith_tool_run_without_inputs_has_unknown_args() -> None:
    t = read([_run("r", "tool", "get", 0, 1, parent=None, outputs={"output": "x"})], "langsmith")
    (c,) = t.tool_calls()
    assert c.args is None and c.args_parse_error == "no arguments recorded"
    assert any("tool run has no 'inputs'" in p for p in t.metadata["problems"])


def _otlp(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}


def _kv(d: dict) -> list[dict]:
    out = []
    for k, v in d.items():
        val = {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}
        out.append({"key": k, "value": val})
    return out


def _ospan(sid: str, start: int, attrs: dict, name: str = "chat gpt-4o", parent: str = "") -> dict:
    return {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": sid, "parentSpanId": parent, "name": name,
            "startTimeUnixNano": str(start * 10**9), "endTimeUnixNano": str(start * 10**9 + 5 * 10**8),
            "attributes": _kv(attrs), "status": {}}


def test_otel_model_spans_only_take_calls_from_the_request_and_results_from_the_next_prompt() -> None:
    doc = _otlp([
        _ospan("0000000000000001", 1, {
            "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 9,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                {"type": "tool_call", "id": "c2", "name": "get_time", "arguments": {"tz": "CET"}}]}])}),
        _ospan("0000000000000002", 2, {
            "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 5,
            "gen_ai.input.messages": json.dumps([
                {"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": "09:00"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "12C"}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                {"type": "text", "content": "12C at 09:00."}]}])}),
    ])
    t = read(doc)
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "tool_result", "final_response"]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [("get_weather", {"city": "Oslo"}, "c1"),
                                                                     ("get_time", {"tz": "CET"}, "c2")]
    assert [(c.name, r.output) for c, r in t.pairs()] == [("get_weather", "12C"), ("get_time", "09:00")]
    assert t.total_usage == Usage(input_tokens=60, output_tokens=14) and t.user_input == "Oslo?"


def test_otel_openinference_model_spans_only() -> None:
    doc = _otlp([
        _ospan("0000000000000001", 1, {
            "openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Oslo?", "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Oslo"}'}),
        _ospan("0000000000000002", 2, {
            "openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Oslo?", "llm.input_messages.1.message.role": "tool",
            "llm.input_messages.1.message.tool_call_id": "c1", "llm.input_messages.1.message.content": "12C",
            "llm.output_messages.0.message.content": "12C."}),
    ])
    t = read(doc)
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [("get_weather", {"city": "Oslo"}, "c1")]
    assert [(r.call_id, r.output) for r in t.tool_results()] == [("c1", "12C")]
    assert t.final_response == "12C." and t.user_input == "Oslo?"


def test_otel_tool_span_without_arguments_is_not_a_no_argument_call() -> None:
    doc = _otlp([_ospan("0000000000000009", 1, {"gen_ai.operation.name": "execute_tool",
                                                "gen_ai.tool.name": "delete_all"}, name="execute_tool delete_all")])
    res = load(doc)
    (c,) = res[0].tool_calls()
    assert c.args is None and c.args_parse_error == "no arguments recorded"
    assert len(res.faults) == 1 and "span 0000000000000009 (execute_tool delete_all): tool span records no arguments" \
        in res.faults[0]


def test_otel_tool_spans_without_model_spans_group_by_overlap() -> None:
    doc = _otlp([
        _ospan("0000000000000001", 1, {"gen_ai.tool.name": "a", "gen_ai.tool.call.arguments": "{}"}, parent="p"),
        _ospan("0000000000000002", 1, {"gen_ai.tool.name": "b", "gen_ai.tool.call.arguments": "{}"}, parent="p"),
        _ospan("0000000000000003", 5, {"gen_ai.tool.name": "c", "gen_ai.tool.call.arguments": "{}"}, parent="p"),
    ])
    t = read(doc)
    assert [[c.name for c in s.tool_calls] for s in t.steps if s.kind == "tool_call"] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(("obj", "fmt", "where"), [
    ([{"role": "user", "content": "go"},
      {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "wipe"}}]}],
     "openai_chat", "messages[1].tool_calls[0] (wipe): no 'arguments' recorded"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "wipe"}]}],
     "anthropic", "(wipe): no 'input' recorded"),
    ([{"type": "function_call", "call_id": "c1", "name": "wipe"}], "openai_responses", "(wipe): no 'arguments'"),
    ({"output": "", "tokenUsage": {}, "metadata": {"toolCalls": [{"id": "c1", "name": "wipe"}]}},
     "promptfoo", "metadata.toolCalls[0] (wipe): no 'input' / 'arguments' recorded"),
])
def test_call_without_recorded_arguments_is_unknown_not_empty(obj, fmt: str, where: str) -> None:
    res = load(obj)
    assert res.formats == {fmt: 1}
    (c,) = res[0].tool_calls()
    assert c.name == "wipe" and c.args is None and c.args_parse_error == "no arguments recorded"
    assert any(where in p for p in res.faults), res.faults
    # an explicit empty object is a call without arguments
    assert read([{"type": "function_call", "call_id": "c1", "name": "wipe", "arguments": "{}"}]).tool_calls()[0].args == {}


def test_langsmith_user_message_from_role_pairs_and_not_from_model() -> None:
    run = _run("r", "chain", "LangGraph", 0, 1, parent=None,
               inputs={"messages": [["system", "be brief"], ["user", "Weather in Oslo?"]], "model": "gpt-4o"})
    assert read(run, "langsmith").user_input == "Weather in Oslo?"
    only_model = _run("r", "llm", "ChatOpenAI", 0, 1, parent=None, inputs={"model": "gpt-4o", "stream": False})
    assert read(only_model, "langsmith").user_input is None


def test_usage_sum_keeps_a_side_without_a_stated_total() -> None:
    # Anthropic usage has no total_tokens, OpenAI's has: the sum still counts both
    a, b = Usage(input_tokens=10, output_tokens=5), Usage(input_tokens=7, output_tokens=3, total_tokens=10)
    assert (a + b).total_tokens == 25 and (b + a).total_tokens == 25
    assert (a + a).total_tokens is None and (a + a).total == 30
