"""Trace files real tools wrote (tests/data/real_traces, origins in its SOURCES.md), read exactly.

Each test counts what the file holds from the raw JSON (calls in order with names, args and
ids; results joined with their error flags; parallel grouping; usage; the final answer) and
checks that ``trajcheck.read.traces.load`` returns exactly that, plus the hand-checked values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.metrics.efficiency import agent_steps
from trajcheck.model import Usage
from trajcheck.read.traces import load

D = Path(__file__).parent / "data" / "real_traces"


def raw(rel: str) -> Any:
    return json.loads((D / rel).read_text(encoding="utf-8"))


def only(rel: str, fmt: str, wrapper: str | None = None):
    res = load(D / rel)
    assert len(res) == 1, res.problems
    assert res.formats == {fmt: 1}
    src = res.sources[str(D / rel)]
    assert src.wrappers == ([wrapper] if wrapper else [])
    return res, res[0]


def calls(t) -> list[tuple[str, Any, str | None]]:
    return [(c.name, c.args, c.call_id) for c in t.tool_calls()]


def results(t) -> list[tuple[str | None, Any, bool | None]]:
    return [(r.call_id, r.output, r.is_error) for r in t.tool_results()]


def call_steps(t) -> list[int]:
    """Number of calls per tool_call step (the parallel grouping)."""
    return [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"]


def joined(t) -> list[tuple[str, Any]]:
    return [(c.name, r.output if r is not None else None) for c, r in t.pairs()]


# --------------------------------------------------------------------------- anthropic


def test_anthropic_message_with_two_tool_use_blocks() -> None:
    rel = "anthropic/message_two_tool_use_blocks.json"
    msg = raw(rel)
    uses = [b for b in msg["content"] if b["type"] == "tool_use"]
    _, t = only(rel, "anthropic")
    assert calls(t) == [(b["name"], b["input"], b["id"]) for b in uses]
    assert calls(t) == [("get_weather", {"location": "New York, NY", "unit": "fahrenheit"}, "toolu_012r6TBCWjRHG71j6zruYyUL"),
                        ("get_time", {"timezone": "America/New_York"}, "toolu_01SkeBKkLCNYWNuivqFerGDd")]
    assert call_steps(t) == [2]  # both blocks of one message: one parallel step
    assert t.steps[0].content == msg["content"][0]["text"]
    assert t.total_usage == Usage(input_tokens=514, output_tokens=152)
    assert t.tool_results() == [] and t.final_response is None


def test_anthropic_request_history_plus_response() -> None:
    rel = "anthropic/langchain_anthropic_request_plus_response.json"
    _, t = only(rel, "anthropic")
    assert calls(t) == [("get_weather", {"location": "San Francisco"}, "toolu_016q9vtSd8CY2vnZSpEp1j4o"),
                        ("get_news", {"location": "San Francisco"}, "toolu_012guEZNJ5yH5jxHKWAkzCzh")]
    assert results(t) == [("toolu_016q9vtSd8CY2vnZSpEp1j4o", "Sunny as always!", False)]  # is_error: false
    assert joined(t) == [("get_weather", "Sunny as always!"), ("get_news", None)]
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "tool_call"]
    assert t.user_input == "Hey, what's the weather in San Francisco? Also, any news in town?"
    # usage only on the real response (cache fields 0 added into input)
    assert t.total_usage == Usage(input_tokens=471, output_tokens=66, cache_read_tokens=0, cache_write_tokens=0)
    assert t.final_response is None  # the run stops at a tool call


# --------------------------------------------------------------------------- openai chat


def test_openai_chat_completion_with_parallel_calls() -> None:
    rel = "openai_chat/chatcompletion_parallel_tool_calls.json"
    tcs = raw(rel)["choices"][0]["message"]["tool_calls"]
    _, t = only(rel, "openai_chat")
    assert calls(t) == [(tc["function"]["name"], json.loads(tc["function"]["arguments"]), tc["id"]) for tc in tcs]
    assert [c[1] for c in calls(t)] == [{"location": "San Francisco"}, {"location": "Boston"}]
    assert call_steps(t) == [2]
    assert t.total_usage == Usage(input_tokens=70, output_tokens=46, total_tokens=116, cache_read_tokens=0,
                                  reasoning_tokens=0)
    assert t.final_response is None


def test_openai_chat_langchain_agentexecutor_request() -> None:
    rel = "openai_chat/langchain_agentexecutor_request_with_tool_result.json"
    msgs = raw(rel)["messages"]
    _, t = only(rel, "openai_chat")
    assert [s.kind for s in t.steps] == ["system", "user", "tool_call", "tool_result"]
    assert calls(t) == [("tavily_search_results_json", {"query": "OpenLLMetry"}, "call_Do41uhRCrKGPKQuMeRWhVg7A")]
    # OpenAI chat has no error channel: is_error None
    assert results(t) == [("call_Do41uhRCrKGPKQuMeRWhVg7A", msgs[3]["content"], None)]
    assert t.pairs()[0][1] is not None and t.user_input == "What is OpenLLMetry?"


# --------------------------------------------------------------------------- openai responses


def test_openai_response_function_call() -> None:
    rel = "openai_responses/response_function_call_agents_sdk.json"
    _, t = only(rel, "openai_responses")
    # the call id is call_id, not the item id fc_...
    assert calls(t) == [("get_city_info", {"city_name": "London"}, "call_veL3ZXS1QhDqzKYs3kbmi9e2")]
    assert t.total_usage == Usage(input_tokens=72, output_tokens=17, total_tokens=89, cache_read_tokens=0,
                                  reasoning_tokens=0)
    assert t.final_response is None


def test_openai_responses_input_plus_output_items() -> None:
    rel = "openai_responses/agents_sdk_recipe_input_plus_output_items.json"
    items = raw(rel)
    fcs = [i for i in items if i.get("type") == "function_call"]
    outs = [i for i in items if i.get("type") == "function_call_output"]
    _, t = only(rel, "openai_responses")
    assert calls(t) == [(i["name"], json.loads(i["arguments"]), i["call_id"]) for i in fcs]
    assert [c[0] for c in calls(t)] == ["search_recipes", "plan_and_apply_recipe_modifications"]
    assert results(t) == [(o["call_id"], o["output"], None) for o in outs]
    assert call_steps(t) == [1, 1]
    assert t.final_response == items[-1]["content"][0]["text"]
    assert t.user_input == "Can you edit the carbonara recipe to be vegetarian?"


def test_openai_response_hosted_web_search() -> None:
    rel = "openai_responses/response_web_search_call.json"
    _, t = only(rel, "openai_responses")
    (c,) = t.tool_calls()
    assert (c.name, c.args, c.call_id) == ("web_search", {"type": "search", "query": "latest news on AI"},
                                           "ws_689f74c0b48c819e88dacf43bbde701702d985ee604595f2")
    assert t.final_response.startswith("Here are some recent developments in the field of artificial intelligence")
    assert t.total_usage == Usage(input_tokens=319, output_tokens=650, total_tokens=969, cache_read_tokens=0,
                                  reasoning_tokens=0)


def test_openai_response_reasoning_summary() -> None:
    rel = "openai_responses/response_reasoning_summary.json"
    doc = raw(rel)
    _, t = only(rel, "openai_responses")
    assert [s.kind for s in t.steps] == ["reasoning", "final_response"]
    summary = [p["text"] for p in doc["output"][0]["summary"]]
    assert len(summary) == 5 and t.steps[0].content == "\n".join(summary)
    assert t.tool_calls() == []
    assert t.total_usage == Usage(input_tokens=12, output_tokens=841, total_tokens=853, cache_read_tokens=0,
                                  reasoning_tokens=576)


# --------------------------------------------------------------------------- langchain


def test_langgraph_state_three_parallel_calls() -> None:
    rel = "langchain/langgraph_state_messages_via_deepeval.json"
    msgs = raw(rel)["messages"]
    ai = msgs[1]
    _, t = only(rel, "langchain")
    assert calls(t) == [(tc["name"], tc["args"], tc["id"]) for tc in ai["tool_calls"]]
    assert call_steps(t) == [3]
    assert results(t) == [(m["tool_call_id"], m["content"], False) for m in msgs[2:5]]
    assert joined(t) == [("get_weather", "Cloudy, 68°F"), ("get_population", "13,960,000"),
                         ("get_timezone", "JST (UTC+9)")]
    assert t.total_usage == Usage(input_tokens=205 + 303, output_tokens=195 + 58, total_tokens=400 + 361,
                                  cache_read_tokens=0, reasoning_tokens=128)
    assert t.final_response == msgs[-1]["content"]


def test_langgraph_state_tool_result_with_non_text_parts() -> None:
    rel = "langchain/langgraph_state_messages_via_langfuse.json"
    msgs = raw(rel)["messages"]
    _, t = only(rel, "langchain")
    assert calls(t) == [("Web-Search", {"query": "example"}, "call_1oGK863sxQHlPreFhDdEs3yl")]
    # the result is a list of search-hit objects, not text: kept as the list, never None
    assert results(t) == [("call_1oGK863sxQHlPreFhDdEs3yl",
                           [{"url": "https://example.com", "title": "Example Result", "q": "example"}], False)]
    assert results(t)[0][1] == msgs[2]["content"]
    assert t.total_usage == Usage(input_tokens=168, output_tokens=66, total_tokens=234, cache_read_tokens=0,
                                  reasoning_tokens=0)
    assert t.final_response == msgs[3]["content"]


# --------------------------------------------------------------------------- langsmith


def test_langsmith_post_patch_payload_root_llm_run() -> None:
    rel = "langsmith/langsmith_py_wrap_openai_post_patch.json"
    _, t = only(rel, "langsmith", "LangSmith run payload")
    # the root run is the wrap_openai LLM call: its model step, usage and answer are kept, and
    # the user's message comes from inputs.messages, not inputs.model
    assert [s.kind for s in t.steps] == ["user", "final_response"]
    assert t.user_input == "howdy"
    assert t.final_response == "Howdy! How can I assist you today?"
    assert t.steps[1].model == "gpt-4o-mini"
    assert t.total_usage == Usage(input_tokens=9, output_tokens=9, total_tokens=18, cache_read_tokens=0,
                                  reasoning_tokens=0)
    # start from the post, end from the patch
    assert t.total_latency_ms == pytest.approx((24.417106 - 23.298773) * 1000.0)
    assert t.trace_id == "d0d84d31-923d-4cb5-94a8-40a0a0087578"


# --------------------------------------------------------------------------- otel


def _any_agent_expected(rel: str) -> tuple[list[tuple[str, Any]], list[Any], Usage, float]:
    spans = raw(rel)["spans"]
    spans = sorted(spans, key=lambda s: s["start_time"])
    tools = [s["attributes"] for s in spans if s["attributes"]["gen_ai.operation.name"] == "execute_tool"]
    llms = [s["attributes"] for s in spans if s["attributes"]["gen_ai.operation.name"] == "call_llm"]
    usage = Usage(input_tokens=sum(a["gen_ai.usage.input_tokens"] for a in llms),
                  output_tokens=sum(a["gen_ai.usage.output_tokens"] for a in llms))
    cost = sum(a["gen_ai.usage.input_cost"] + a["gen_ai.usage.output_cost"] for a in llms)
    return ([(a["gen_ai.tool.name"], json.loads(a["gen_ai.tool.args"])) for a in tools],
            [a["gen_ai.output"] for a in tools], usage, cost)


@pytest.mark.parametrize("name", ["any_agent_OPENAI_trace.json", "any_agent_LANGCHAIN_trace.json"])
def test_any_agent_span_dump(name: str) -> None:
    rel = f"otel/{name}"
    exp_calls, exp_out, usage, cost = _any_agent_expected(rel)
    _, t = only(rel, "otel", "span dump")
    # gen_ai.tool.args is read (never {}), call_llm spans give usage and cost
    assert [(c.name, c.args) for c in t.tool_calls()] == exp_calls
    assert exp_calls == [("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"})]
    assert [r.output for r in t.tool_results()] == exp_out
    assert [r.is_error for r in t.tool_results()] == [False, False]
    assert t.total_usage == usage and t.total_cost_usd == pytest.approx(cost)
    # each model turn and the tool it ran is one agent step
    assert call_steps(t) == [1, 1]
    assert t.steps[1].usage is not None and t.steps[1].model == "mistral/mistral-small-latest"
    assert t.user_input.startswith("Find what year it is in the America/New_York timezone")
    final = json.loads(t.final_response)
    assert final == raw(rel)["final_output"]
    # integer SDK ids become hex
    tid = raw(rel)["spans"][0]["context"]["trace_id"]
    assert t.trace_id == format(tid, "032x")


def test_any_agent_openai_counts() -> None:
    _, t = only("otel/any_agent_OPENAI_trace.json", "otel", "span dump")
    assert t.total_usage == Usage(input_tokens=269 + 359 + 392, output_tokens=16 + 14 + 46)
    assert t.total_cost_usd == pytest.approx(2.69e-05 + 4.8e-06 + 3.59e-05 + 4.2e-06 + 3.92e-05 + 1.38e-05)
    assert agent_steps(t) == 3


def test_phoenix_span_export() -> None:
    rel = "otel/phoenix_pxi_turn_trace_spans.json"
    spans = raw(rel)
    tools = sorted((s for s in spans if s["span_kind"] == "TOOL"), key=lambda s: s["start_time"])
    llms = [s for s in spans if s["span_kind"] == "LLM"]
    _, t = only(rel, "otel")
    assert [c.name for c in t.tool_calls()] == [s["attributes"]["tool.name"] for s in tools]
    assert [c.name for c in t.tool_calls()] == ["list_datasets", "list_datasets", "ask_user", "create_dataset",
                                                "add_spans_to_dataset", "bash", "add_spans_to_dataset",
                                                "get_route_info"]
    assert [c.args for c in t.tool_calls()] == [json.loads(s["attributes"]["input.value"]) for s in tools]
    assert [c.call_id for c in t.tool_calls()] == [f"call-{i:02d}" for i in range(4, 12)]
    # one failed call (status ERROR), then a different tool, then the same tool again
    assert [r.is_error for r in t.tool_results()] == [s["status_code"] == "ERROR" for s in tools]
    assert [r.is_error for r in t.tool_results()].count(True) == 1
    assert t.tool_results()[4].error.startswith("Error fetching GraphQL query")
    assert call_steps(t) == [1] * 8 and agent_steps(t) == len(llms) == 9
    tok = [s["attributes"] for s in llms]
    assert t.total_usage.input_tokens == sum(a["llm.token_count.prompt"] for a in tok) == 310222
    assert t.total_usage.output_tokens == sum(a["llm.token_count.completion"] for a in tok) == 1895
    assert t.final_response.startswith("Done! I created the dataset")
    assert t.user_input == "can you save this trace to a dataset?"


# --------------------------------------------------------------------------- vertex / ADK / Gemini


def test_adk_eval_set() -> None:
    rel = "vertex/adk_home_automation_dependent_tool_calls.test.json"
    case = raw(rel)["eval_cases"][0]
    _, t = only(rel, "vertex", "ADK EvalSet")
    uses = [u for inv in case["conversation"] for u in inv["intermediate_data"]["tool_uses"]]
    assert calls(t) == [(u["name"], u["args"], None) for u in uses]
    assert calls(t) == [("set_device_info", {"location": "Bedroom", "status": "OFF", "device_id": "device_2"}, None),
                        ("get_device_info", {"device_id": "device_2"}, None)]
    assert [s.content for s in t.steps if s.kind == "user"] == ["Turn off device_2 in the Bedroom.",
                                                                "What's the status of device_2 in the Bedroom?"]
    assert t.final_response == "Status of device_2 is off."
    assert t.metadata["case_id"] == case["eval_id"]


def test_adk_session_dump() -> None:
    rel = "vertex/adk_flow_complex_spark_sample.session.json"
    ev = raw(rel)["events"]
    _, t = only(rel, "vertex", "ADK Session")
    fcs = [p["function_call"] for e in ev for p in e["content"]["parts"] if p.get("function_call")]
    assert calls(t) == [(f["name"], f["args"], None) for f in fcs]
    assert [c[1] for c in calls(t)] == [{"agent_name": "research_assistant"}, {"agent_name": "spark_assistant"}]
    frs = [p["function_response"]["response"] for e in ev for p in e["content"]["parts"] if p.get("function_response")]
    assert [r.output for r in t.tool_results()] == frs
    assert t.user_input == "Research on the factors that affect floods in Florida. "
    assert [s.agent_name for s in t.steps if s.kind in ("assistant", "final_response")] == [
        "research_plan_agent", "question_generation_agent", "information_retrieval_agent", "summary_agent"]
    assert t.final_response.startswith("## Flooding in Florida: A Comprehensive Analysis")
    assert t.total_latency_ms == pytest.approx((ev[-1]["timestamp"] - ev[0]["timestamp"]) * 1000.0)
    assert t.session_id == raw(rel)["id"]


def test_gemini_generate_content_request() -> None:
    rel = "vertex/gemini_generatecontent_request_from_adk_run.json"
    _, t = only(rel, "vertex", "Gemini generateContent request")
    assert [s.kind for s in t.steps] == ["system", "user", "tool_call", "tool_result"]
    assert calls(t) == [("get_weather", {"city": "New York"}, None)]
    # ADK's documented result shape: status "success" is a known success (was None: no flag read)
    assert results(t) == [(None, {"status": "success", "report": "Sunny, 25C in New York."}, False)]
    assert joined(t) == [("get_weather", {"status": "success", "report": "Sunny, 25C in New York."})]
    assert t.user_input == "What is the weather in New York?"


# --------------------------------------------------------------------------- deepeval


def test_deepeval_trace_langgraph() -> None:
    rel = "deepeval/deepeval_trace_langgraph_multiple_tools.json"
    doc = raw(rel)
    _, t = only(rel, "deepeval")
    requested = next(s for s in doc["llmSpans"] if s["output"]["tool_calls"])["output"]["tool_calls"]
    # calls in the order the model requested them, with its call ids, in one parallel step
    assert calls(t) == [(c["name"], c["args"], c["id"]) for c in requested]
    assert call_steps(t) == [3]
    assert joined(t) == [("get_weather", "Cloudy, 68°F"), ("get_population", "13,960,000"),
                         ("get_timezone", "JST (UTC+9)")]
    assert [r.is_error for r in t.tool_results()] == [False, False, False]
    # llmSpans usage: 205/195 and 303/58
    assert t.total_usage == Usage(input_tokens=508, output_tokens=253)
    assert t.user_input == "Tell me about Tokyo - what's the weather, population, and timezone?"
    assert t.final_response == doc["output"]["messages"][-1]["content"]
    assert t.session_id == "multi-tool-123"


def test_deepeval_trace_pydanticai_parallel() -> None:
    rel = "deepeval/deepeval_trace_pydanticai_parallel_tools.json"
    doc = raw(rel)
    _, t = only(rel, "deepeval")
    asked = [m["content"] for s in doc["llmSpans"] for m in s["output"] if isinstance(m["content"], dict)]
    assert calls(t) == [(c["name"], json.loads(c["arguments"]), c["id"]) for c in asked]
    assert calls(t) == [("get_weather", {"city": "Paris"}, "call_KCo0CJkQKiERmhujOkavOhEA"),
                        ("get_time", {"city": "Paris"}, "call_yUkAxOMa9FnCe1p2dAJYwW7o")]
    assert call_steps(t) == [2]
    assert results(t) == [("call_KCo0CJkQKiERmhujOkavOhEA", "Cloudy, 62F", False),
                          ("call_yUkAxOMa9FnCe1p2dAJYwW7o", "8:00 AM CET", False)]
    assert t.total_usage == Usage(input_tokens=185 + 254, output_tokens=44 + 26)
    assert t.final_response == doc["output"] and agent_steps(t) == 2
    assert t.total_latency_ms == pytest.approx(3005.0)


# --------------------------------------------------------------------------- promptfoo


def test_promptfoo_provider_response() -> None:
    _, t = only("promptfoo/promptfoo_provider_response_from_eval_output.json", "promptfoo")
    assert t.final_response == "Bonjour ! Comment puis-je vous aider aujourd'hui ?"
    assert t.total_usage == Usage(input_tokens=14, output_tokens=10, total_tokens=24, reasoning_tokens=0)
    assert t.total_cost_usd == 8.1e-06 and t.total_latency_ms == 1352 and t.tool_calls() == []


def test_promptfoo_eval_output_file() -> None:
    rel = "promptfoo/promptfoo_eval_output_french_greeting.json"
    row = raw(rel)["results"]["results"][0]
    _, t = only(rel, "promptfoo", "promptfoo eval output")
    assert t.final_response == row["response"]["output"]
    assert t.user_input == "Greet the user in French."
    assert t.total_usage == Usage(input_tokens=14, output_tokens=10, total_tokens=24, reasoning_tokens=0)
    assert t.total_cost_usd == 8.1e-06 and t.total_latency_ms == 1352
    assert t.metadata["provider"] == "openai:gpt-4o-mini" and t.metadata["success"] is False
    assert t.metadata["test_idx"] == 0 and t.metadata["promptfoo_result_id"] == row["id"]


# --------------------------------------------------------------------------- tau-bench


def test_tau_bench_record_with_error_result_and_python_literal_args() -> None:
    rel = "tau_bench/avaljotsingh_task_38.json"
    rec = raw(rel)[0]
    tcs = [tc for m in rec["traj"] for tc in m.get("tool_calls") or ()]
    res = load(D / rel)
    (t,) = res.trajectories
    assert [c.name for c in t.tool_calls()] == [tc["function"]["name"] for tc in tcs]
    assert [c.call_id for c in t.tool_calls()] == [tc["id"] for tc in tcs]
    think = t.tool_calls()[4]
    # the fork wrote this call's arguments as a Python literal: kept raw, never parsed to {}
    assert think.name == "think" and think.args is None and think.raw_args == tcs[4]["function"]["arguments"]
    assert [c.args for i, c in enumerate(t.tool_calls()) if i != 4] == [
        json.loads(tc["function"]["arguments"]) for i, tc in enumerate(tcs) if i != 4]
    assert [r.is_error for r in t.tool_results()] == [True, False, False, False, False, False]
    assert t.tool_results()[0].output == "Error: user not found"
    assert t.metadata["reward"] == 0.0 and "38" in res.cases


def test_tau_bench_crash_records_are_not_runs() -> None:
    rel = "tau_bench/avaljotsingh_assertions-agent_range_90-100.json"
    recs = raw(rel)
    crashed = [i for i, r in enumerate(recs) if "error" in r["info"]]
    assert crashed == [0, 2, 4, 6, 9]
    res = load(D / rel)
    # 5 complete runs read; the 5 crash records are listed with their own reason, never scored
    assert len(res) == 5 and res.formats == {"tau_bench": 5}
    assert [t.metadata["case_id"] for t in res] == ["91", "93", "95", "97", "98"]
    assert len(res.skipped) == 5
    for i, msg in zip(crashed, res.skipped):
        assert msg.startswith(f"{D / rel} record {i}: crashed before finishing (info.error: ")
        assert "not an agent run" in msg
    assert "Token limit is exceeded" in res.skipped[0] and "Rate Limit Exceeded" in res.skipped[4]
    assert [len(t.tool_calls()) for t in res] == [sum(len(m.get("tool_calls") or ()) for m in r["traj"])
                                                  for r in recs if r["traj"]]


def test_tau_bench_file_of_one_crash_record() -> None:
    rel = "tau_bench/sierra_deepseek-v3_error_record.json"
    res = load(D / rel)
    assert len(res) == 0 and res.cases == {}
    assert res.skipped == [f"{D / rel} record 0: crashed before finishing (info.error: EOF when reading a line); "
                           "not an agent run; skipped"]


# --------------------------------------------------------------------------- forced formats


@pytest.mark.parametrize(("fmt", "rel", "why"), [
    ("anthropic", "openai_chat/chatcompletion_parallel_tool_calls.json", "anthropic: expected a list of messages"),
    ("openai_chat", "anthropic/message_two_tool_use_blocks.json", "expected a list of chat messages"),
    ("otel", "langsmith/langsmith_py_wrap_openai_post_patch.json", "is not an OTLP document or span; it reads as langsmith"),
    ("tau_bench", "otel/any_agent_OPENAI_trace.json", "no 'task_id'"),
    ("plain", "deepeval/deepeval_trace_pydanticai_parallel_tools.json", "plain: expected a list of {name, args}"),
])
def test_forced_format_that_does_not_fit_is_an_error(fmt: str, rel: str, why: str) -> None:
    with pytest.raises(TraceFormatError) as e:
        load(D / rel, format=fmt)
    assert f"does not fit --format {fmt}" in str(e.value) and why in str(e.value)
    assert str(D / rel) in str(e.value)


def test_forced_format_dropping_calls_is_an_error() -> None:
    msgs = raw("openai_chat/langchain_agentexecutor_request_with_tool_result.json")["messages"]
    with pytest.raises(TraceFormatError, match="reads 0 tool call.s. as anthropic but 1 as openai_chat"):
        load(msgs, format="anthropic")


def test_forced_format_that_fits_is_read() -> None:
    # LangChain vs RAGAS is the user's choice: both read the same calls
    res = load(D / "langchain/langgraph_state_messages_via_deepeval.json", format="ragas")
    assert res.formats == {"ragas": 1} and len(res[0].tool_calls()) == 3


def test_every_real_trace_file_is_read() -> None:
    """No file in the collection is refused or read empty."""
    res = load(D)
    files = sorted(str(p) for p in D.rglob("*") if p.suffix in (".json", ".jsonl"))
    assert sorted(res.sources) == files
    for f in files:
        info = res.sources[f]
        if f.endswith("sierra_deepseek-v3_error_record.json"):
            assert info.formats == {}  # its only record is a crash record (listed, not read)
            continue
        assert info.formats, f
    assert all(t.steps for t in res)
