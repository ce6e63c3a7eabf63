"""Real trace files of the formats with their own readers (tests/data/real_traces/other,
origins in SOURCES.md there): what each file really holds, counted from the file itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.model import Usage
from trajcheck.read.traces import detect, load

D = Path(__file__).parent / "data" / "real_traces" / "other"


def _one(name: str, fmt: str):
    res = load(D / name)
    assert res.formats == {fmt: 1}
    assert res.skipped == [] and res.faults == []
    return res[0]


def _calls(t):
    return [(c.name, c.args, c.call_id) for c in t.tool_calls()]


def _results(t):
    return [(r.call_id, r.is_error) for r in t.tool_results()]


def test_every_file_is_read() -> None:
    names = sorted(p.name for p in D.iterdir() if p.suffix in (".json", ".jsonl"))
    assert len(names) == 5
    for n in names:
        res = load(D / n)
        assert len(res) == 1 and res[0].tool_calls(), n


def test_inspect_ai_json_log() -> None:
    raw = json.loads((D / "inspect_ai_browser_log.json").read_text())
    sample = raw["samples"][0]
    t = _one("inspect_ai_browser_log.json", "inspect_ai")
    # the assistant messages' tool calls, in order, one call per model turn
    want = [(tc["function"], tc["arguments"], tc["id"]) for m in sample["messages"] if m["role"] == "assistant"
            for tc in m.get("tool_calls") or ()]
    assert _calls(t) == want == [
        ("web_browser_go", {"url": "https://www.aisi.gov.uk/"}, "call_35FTpd6shR9efioDgeEBZ33s"),
        ("web_browser_click", {"element_id": 151}, "call_O6fzXOPUvPtYflWdOH94RTWy"),
        ("web_browser_click", {"element_id": 884}, "call_53eNweGanOHt6jGWAo2UuNCG"),
        ("web_browser_click", {"element_id": 903}, "call_C0cGhnh5y5RCIBs9vTJCLgxW")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [1, 1, 1, 1]
    assert _results(t) == [(c, False) for _, _, c in want]  # tool messages with error null
    assert all(r is not None for _, r in t.pairs())
    # usage once per model call: the 5 model events add up to the sample's model_usage
    assert [s.usage.input_tokens for s in t.steps if s.usage] == [1124, 1568, 2732, 3896, 5915]
    mu = sample["model_usage"]["openai/gpt-4o-mini"]
    assert t.total_usage == Usage(input_tokens=mu["input_tokens"], output_tokens=mu["output_tokens"],
                                  total_tokens=mu["total_tokens"], cache_read_tokens=mu["input_tokens_cache_read"],
                                  reasoning_tokens=0)
    assert t.total_usage.input_tokens == 15235 and t.total_usage.output_tokens == 281
    assert t.final_response == sample["output"]["choices"][0]["message"]["content"]
    assert t.final_response.startswith("The AI Security Institute (AISI) is the premier")
    assert t.metadata["case_id"] == "1" and t.metadata["trial"] == 1 and t.metadata["run_id"] == sample["uuid"]
    assert t.total_latency_ms == pytest.approx(18517.0)


def test_langfuse_export_of_an_agents_sdk_run() -> None:
    t = _one("langfuse_export_openai_agents.json", "langfuse")
    assert _calls(t) == [("get_weather", {"city": "Tokyo"}, "call_Kud0j0DxWSmLzv9W5m6qVqXn")]
    assert [(r.call_id, r.output, r.is_error) for r in t.tool_results()] == [
        ("call_Kud0j0DxWSmLzv9W5m6qVqXn", "The weather in Tokyo is sunny.", False)]
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "final_response"]
    assert t.user_input == "What's the weather in Tokyo?"
    # two GENERATION observations: 55+85 input, 15+29 output; cost 0.00023 + 0.000402
    assert t.total_usage == Usage(input_tokens=140, output_tokens=44, total_tokens=184, cache_read_tokens=0,
                                  reasoning_tokens=0)
    assert t.total_cost_usd == pytest.approx(0.000632)
    assert t.final_response == ("The weather in Tokyo is currently sunny. If you need more details like "
                                "temperature or forecast for the upcoming days, just let me know!")
    assert t.total_latency_ms == pytest.approx(2190.0) and t.trace_id == "fee618f96dc31e0ca38b2f7b26eb8b29"


def test_openai_agents_sdk_ingest_payload() -> None:
    t = _one("openai_agents_sdk_traces_ingest_payload.json", "openai_agents")
    assert _calls(t) == [("get_city_info", {"city_name": "London"}, None)]
    r = t.tool_results()[0]
    assert (r.output, r.is_error) == ("City: London, Population: 9000000, Country: United Kingdom, "
                                      "Description: Capital city with rich history", False)
    # the response span carries only its id: no usage, no text in this trace
    assert t.total_usage is None and t.final_response is None
    assert t.trace_id == "trace_1b9cc6269f8041efbb685fb644225e16"
    assert t.metadata["workflow_name"] == "Agent workflow"
    # 07:54:17.605928 -> 07:54:20.927968
    assert t.total_latency_ms == pytest.approx(3322.04, abs=0.01)


def test_anthropic_managed_agents_events() -> None:
    t = _one("anthropic_managed_agents_session_events_custom_tools.jsonl", "anthropic_managed")
    assert _calls(t) == [("get_weather", {"location": "Prague"}, "sevt_018iPB2RYrthWNKugV6ehDxH")]
    assert t.tool_calls()[0].tool_type == "custom"
    # the result appears twice in the file (sent, then echoed by the stream); read once
    assert [(r.call_id, r.output, r.is_error) for r in t.tool_results()] == [
        ("sevt_018iPB2RYrthWNKugV6ehDxH", "It's 23°C and sunny in Prague.", False)]
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "final_response"]
    # two span.model_request_end events: inputs 2 + cache reads 7201 / 7271, outputs 50 / 30
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=7203, output_tokens=50, cache_read_tokens=7201, cache_write_tokens=0),
        Usage(input_tokens=7273, output_tokens=30, cache_read_tokens=7271, cache_write_tokens=0)]
    assert t.total_usage == Usage(input_tokens=14476, output_tokens=80, cache_read_tokens=14472, cache_write_tokens=0)
    assert t.final_response == "It's currently **23°C and sunny** in Prague — a nice, warm day overall!"
    assert t.session_id == "sesn_014fc5Q6rWwrXD3vWBfPRUes" and t.user_input == "What's the weather in Prague?"


def test_atif_trajectory() -> None:
    t = _one("atif_harbor_openhands.json", "atif")
    assert _calls(t) == [
        ("str_replace_editor", {"command": "create", "path": "/app/hello.txt", "file_text": "Hello, world!",
                                "security_risk": "LOW"}, "call_fake_1"),
        ("finish", {"message": "Task complete. Created /app/hello.txt with 'Hello, world!'"}, "call_fake_2")]
    # ATIF has no error flag on observations
    assert [(r.call_id, r.output, r.is_error) for r in t.tool_results()] == [
        ("call_fake_1", "File created successfully at: /app/hello.txt", None)]
    assert [s.kind for s in t.steps] == ["system", "user", "system", "system", "tool_call", "tool_result", "tool_call"]
    # step metrics 100+120 prompt, 50+30 completion = final_metrics; cost 0.00075 + 0.0006
    assert t.total_usage == Usage(input_tokens=220, output_tokens=80)
    assert t.total_cost_usd == pytest.approx(0.00135)
    assert t.final_response == "All done! What's next on the agenda?"
    assert t.session_id == "harbor-openhands-hello-world"


def test_detection_needs_no_format_name() -> None:
    for name, fmt in [("inspect_ai_browser_log.json", "inspect_ai"), ("atif_harbor_openhands.json", "atif"),
                      ("langfuse_export_openai_agents.json", "langfuse"),
                      ("openai_agents_sdk_traces_ingest_payload.json", "openai_agents")]:
        assert detect(json.loads((D / name).read_text())) == fmt
    lines = [json.loads(x) for x in (D / "anthropic_managed_agents_session_events_custom_tools.jsonl").read_text().splitlines()]
    assert all(detect(x) == "anthropic_managed" for x in lines)
