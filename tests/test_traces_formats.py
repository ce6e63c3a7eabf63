"""Every reader on a realistic sample (tests/data/traces), asserting calls, args, ids, errors, usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajcheck.model import Usage
from trajcheck.read.traces import detect, load, read

D = Path(__file__).parent / "data" / "traces"


def one(name: str):
    res = load(D / name)
    assert len(res) == 1
    return res, res[0]


def calls(t):
    return [(c.name, c.args, c.call_id) for c in t.tool_calls()]


def results(t):
    return [(r.call_id, r.output, r.is_error) for r in t.tool_results()]


def test_openai_chat() -> None:
    res, t = one("openai_chat.json")
    assert res.formats == {"openai_chat": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_a1"), ("get_weather", None, "call_b2")]
    bad = t.tool_calls()[1]
    assert bad.raw_args == '{"city":"Bergen"' and bad.args_parse_error.startswith("arguments are not valid JSON")
    assert len(t.steps[2].tool_calls) == 2  # parallel calls stay in one step
    assert results(t) == [("call_a1", "12C, rain", None), ("call_b2", "ERROR: upstream timeout", None),
                          ("call_zz", "orphan", None)]
    assert t.total_usage == Usage(input_tokens=120, output_tokens=40, total_tokens=160, cache_read_tokens=64,
                                  reasoning_tokens=0)
    assert t.final_response == "Oslo is 12C and rainy; Bergen's forecast is unavailable."
    assert [s.kind for s in t.steps] == ["system", "user", "tool_call", "tool_result", "tool_result",
                                         "tool_result", "final_response"]
    assert len(res.problems) == 3
    assert "messages[2].tool_calls[1]" in res.problems[0] and "openai_chat.json" in res.problems[0]
    assert "'call_zz' matches no earlier call" in res.problems[1]
    assert "unknown role 'critic'" in res.problems[2]
    pairs = t.pairs()
    assert [r.output for _, r in pairs] == ["12C, rain", "ERROR: upstream timeout"]


def test_openai_legacy_function_call() -> None:
    _, t = one("openai_legacy.json")
    assert calls(t) == [("get_weather", {"city": "Oslo"}, None)]
    assert results(t) == [(None, "12C, rain", None)]
    assert t.pairs()[0][1].name == "get_weather"


def test_openai_responses_links_by_call_id() -> None:
    res, t = one("openai_responses.json")
    assert res.formats == {"openai_responses": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_77")]  # call_id, not the item id fc_01
    assert results(t) == [("call_77", "12C, rain", None)]
    assert [s.kind for s in t.steps] == ["user", "reasoning", "tool_call", "tool_result", "final_response"]
    assert t.total_usage == Usage(input_tokens=50, output_tokens=20, total_tokens=70, cache_read_tokens=10,
                                  reasoning_tokens=8)


def test_anthropic() -> None:
    res, t = one("anthropic.json")
    assert res.formats == {"anthropic": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "toolu_01"),
                        ("get_weather", {"city": "Oslo", "retry": True}, "toolu_02")]
    assert results(t) == [("toolu_01", "upstream timeout", True), ("toolu_02", "12C, rain", False)]
    # tool_result blocks in user messages are not user turns
    assert [s.kind for s in t.steps].count("user") == 1
    # cache read + write added into input tokens: (100+500+20) + 150 + 170
    assert t.total_usage == Usage(input_tokens=940, output_tokens=52, cache_read_tokens=500, cache_write_tokens=20)
    assert t.steps[0].kind == "system" and t.steps[2].kind == "reasoning"
    assert t.final_response == "It is 12C and raining in Oslo."


@pytest.mark.parametrize("name", ["langchain_messages_to_dict.json", "langchain_dumpd.json"])
def test_langchain_dict_forms(name: str) -> None:
    res, t = one(name)
    assert res.formats == {"langchain": 1}
    # the tool_use content block duplicates tool_calls[0] (same id) and is dropped
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "toolu_1"), ("get_time", None, "call_bad")]
    assert t.tool_calls()[1].raw_args == "{tz:" and t.tool_calls()[1].args_parse_error == "Malformed args."
    assert results(t) == [("toolu_1", "boom: API down", True)]
    assert t.total_usage == Usage(input_tokens=80, output_tokens=16, total_tokens=96, cache_read_tokens=12)
    assert t.steps[2].model == "claude-x"
    assert t.final_response == "The weather API is down."


def test_langchain_objects() -> None:
    msgs_mod = pytest.importorskip("langchain_core.messages")
    msgs = [msgs_mod.HumanMessage("Weather in Oslo?"),
            msgs_mod.AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"},
                                               {"name": "get_weather", "args": {"city": "Bergen"}, "id": "c2"}],
                               usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}),
            msgs_mod.ToolMessage("12C", tool_call_id="c1"),
            msgs_mod.ToolMessage("timeout", tool_call_id="c2", status="error"),
            msgs_mod.AIMessage("Oslo 12C.")]
    assert detect(msgs) == "langchain"
    t = read(msgs)
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "c1"), ("get_weather", {"city": "Bergen"}, "c2")]
    assert results(t) == [("c1", "12C", False), ("c2", "timeout", True)]
    assert t.total_usage == Usage(input_tokens=10, output_tokens=5, total_tokens=15)
    assert t.final_response == "Oslo 12C."


def test_langsmith_run_tree() -> None:
    res, t = one("langsmith.json")
    assert res.formats == {"langsmith": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_1"), ("get_weather", {"city": "Atlantis"}, "call_2")]
    assert results(t) == [("call_1", "12C, rain", False), ("call_2", None, True)]
    assert t.tool_results()[1].error == "ValueError('unknown city')"
    assert t.total_usage == Usage(input_tokens=65, output_tokens=17, total_tokens=82)
    assert t.total_cost_usd == pytest.approx(0.0005)
    assert t.total_latency_ms == pytest.approx(3000.0)
    assert t.steps[0].kind == "user" and t.steps[0].content == "Weather in Oslo and Atlantis?"
    # the model turn and the two tool runs it led to are one step (the turn's latency); each
    # result step keeps its tool run's latency
    tool_step = next(s for s in t.steps if s.kind == "tool_call")
    assert len(tool_step.tool_calls) == 2 and tool_step.latency_ms == pytest.approx(400.0)
    assert t.steps[2].kind == "tool_result" and t.steps[2].latency_ms == pytest.approx(300.0)
    assert t.final_response == "Oslo 12C; Atlantis unknown."
    assert t.trace_id == "9f00" and t.session_id == "sess-1"


def test_langsmith_flat_runs_ordered_by_dotted_order() -> None:
    import json

    tree = json.loads((D / "langsmith.json").read_text())
    kids = tree.pop("child_runs")
    flat = [tree] + list(reversed(kids))
    t = read(flat, "langsmith")
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_1"), ("get_weather", {"city": "Atlantis"}, "call_2")]


def test_otel_genai_jsonl() -> None:
    res, t = one("otel_genai.jsonl")
    assert res.formats == {"otel": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_1"), ("get_weather", {"city": "Oslo"}, "call_2")]
    assert results(t) == [("call_1", None, True), ("call_2", "12C, rain", False)]
    assert t.tool_results()[0].error == "upstream timeout"
    assert t.trace_id == "e4ecaf846c3a09488595f12775f26388"  # upper-case hex normalised, spans of 2 lines merged
    assert t.steps[1].span_id == "13133e5aa8bb900a" and t.steps[1].parent_id == "7bc5e78af438528f"
    assert t.total_usage == Usage(input_tokens=52, output_tokens=14, cache_read_tokens=10)
    assert t.session_id == "conv-9"
    assert res.problems == [f"{D / 'otel_genai.jsonl'}:2: not valid JSON: Expecting value (column 1); line skipped"]


def test_otel_openinference_snake_case() -> None:
    res, t = one("otel_openinference_snake.json")
    assert calls(t) == [("get_weather", {"city": "Oslo"}, "call_123")]  # input.value, not the tool.parameters schema
    assert results(t) == [("call_123", "12C, rain", False)]
    assert t.total_usage == Usage(input_tokens=132, output_tokens=24, total_tokens=156)
    assert t.total_cost_usd == pytest.approx(0.001)
    assert t.total_latency_ms == pytest.approx(2000.0)
    assert t.steps[0].kind == "user" and t.steps[0].content == "What is the weather in Oslo?"
    assert t.final_response == "It is 12C and raining in Oslo."
    assert t.session_id == "s-42"


def test_vertex_and_adk() -> None:
    res, t = one("vertex.json")
    assert res.formats == {"vertex": 1}
    assert calls(t) == [("loc_to_lat_long", {"location": "London"}, None),
                        ("lat_long_to_weather", {"latitude": "51.5", "longitude": "-0.12"}, None)]
    assert t.metadata["reference_trajectory"] == [{"name": "loc_to_lat_long", "args": {"location": "London"}}]
    assert t.final_response == "Cloudy, 14C."
    _, a = one("adk_evalcase.json")
    assert calls(a) == [("get_weather", {"city": "Oslo"}, "adk-1")]
    assert results(a) == [("adk-1", {"result": "12C, rain"}, None)]
    assert a.final_response == "12C and rainy." and a.total_latency_ms == 1500.0
    assert a.metadata["case_id"] == "case1"


def test_deepeval() -> None:
    res, t = one("deepeval.json")
    assert res.formats == {"deepeval": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, None), ("get_time", {"tz": "Europe/Oslo"}, None)]
    assert results(t) == [(None, "12C, rain", None)]
    assert t.total_usage == Usage(input_tokens=30, output_tokens=12)
    assert t.total_cost_usd == 0.00042 and t.total_latency_ms == 1250.0
    assert t.final_response == "12C, rain."
    bare = [{"name": "a", "input_parameters": {"x": 1}}]
    assert detect(bare) == "deepeval" and calls(read(bare)) == [("a", {"x": 1}, None)]


def test_ragas() -> None:
    res, t = one("ragas.json")
    assert res.formats == {"ragas": 1}
    assert calls(t) == [("get_weather", {"city": "Oslo"}, None)]
    assert results(t) == [(None, "12C, rain", None)]
    assert t.pairs()[0][1] is not None
    assert t.final_response == "It is 12C and raining."


def test_promptfoo() -> None:
    res, t = one("promptfoo_toolcalls.json")
    assert res.formats == {"promptfoo": 1}
    assert calls(t) == [("book_room", {"room": "A1", "date": "2026-03-01"}, "call_1"),
                        ("book_room", {"room": "A2", "date": "2026-03-01"}, "call_2")]
    assert results(t) == [("call_1", "Error: room taken", True), ("call_2", "ok", False)]
    assert t.total_usage == Usage(input_tokens=120, output_tokens=30, total_tokens=150, cache_read_tokens=40)
    assert t.total_cost_usd == 0.00011 and t.total_latency_ms == 812.0
    _, o = one("promptfoo_output.json")
    assert calls(o) == [("get_weather", {"city": "Oslo"}, "call_1")]
    assert o.final_response is None and o.total_latency_ms == 640.0


def test_plain() -> None:
    res, t = one("plain.json")
    assert res.formats == {"plain": 1}
    assert calls(t) == [("search", {"q": "oslo weather"}, None), ("fetch", {"url": "https://yr.no"}, None),
                        ("fetch", None, None)]
    assert t.tool_calls()[2].raw_args == "{bad"
    assert len(res.problems) == 1 and "calls[2] (fetch)" in res.problems[0]


def test_native_roundtrip_through_jsonl(tmp_path: Path) -> None:
    src = load(D / "anthropic.json")[0]
    p = tmp_path / "t.jsonl"
    import json

    p.write_text(json.dumps(src.to_dict()) + "\n" + json.dumps(src.to_dict()) + "\n")
    back = load(p)
    assert back.formats == {"trajcheck": 2}
    assert back[0] == src and back[1] == src


def test_directory_load() -> None:
    res = load(D)
    assert len(res) == 16
    assert res.formats == {"vertex": 2, "anthropic": 1, "deepeval": 1, "langchain": 2, "langsmith": 1,
                           "openai_chat": 2, "openai_responses": 1, "otel": 2, "plain": 1, "promptfoo": 2,
                           "ragas": 1}
