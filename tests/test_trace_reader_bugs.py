"""Regressions for the trace-reader bugs of issue 28: each test builds the input that went
wrong from a real trace file (tests/data/real_traces) or a documented shape, and checks the
values read against the ones the input holds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from trajcheck.model import Usage
from trajcheck.read.traces import load

D = Path(__file__).parent / "data" / "real_traces"
PYDANTIC = "deepeval/deepeval_trace_pydanticai_parallel_tools.json"
WEATHER_ID, TIME_ID = "call_KCo0CJkQKiERmhujOkavOhEA", "call_yUkAxOMa9FnCe1p2dAJYwW7o"


def raw(rel: str) -> Any:
    return json.loads((D / rel).read_text(encoding="utf-8"))


def openai_style(doc: dict) -> dict:
    """The pydantic-ai payload with the tool-calling LLM span's output written as one OpenAI
    chat message with ``tool_calls[].function`` (what DeepEval records for OpenAI clients)."""
    doc = copy.deepcopy(doc)
    sp = next(s for s in doc["llmSpans"] if isinstance(s["output"][0]["content"], dict))
    asked = [m["content"] for m in sp["output"]]
    sp["output"] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in asked]}
    return doc


def test_deepeval_openai_tool_calls_without_tool_spans() -> None:
    doc = openai_style(raw(PYDANTIC))
    doc["toolSpans"] = []
    (t,) = load(doc)
    # the requested calls are the calls: names, parsed arguments and ids (were '' and {})
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Paris"}, WEATHER_ID), ("get_time", {"city": "Paris"}, TIME_ID)]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == [2]
    assert "problems" not in t.metadata


def test_deepeval_openai_tool_calls_order_tool_spans() -> None:
    doc = openai_style(raw(PYDANTIC))
    # the tool spans list get_time first; the model asked for get_weather first
    assert [s["name"] for s in doc["toolSpans"]] == ["get_time", "get_weather"]
    (t,) = load(doc)
    assert [(c.name, c.call_id) for c in t.tool_calls()] == [("get_weather", WEATHER_ID), ("get_time", TIME_ID)]
    assert [(r.call_id, r.output) for r in t.tool_results()] == [(WEATHER_ID, "Cloudy, 62F"), (TIME_ID, "8:00 AM CET")]


def test_deepeval_tool_span_in_the_same_millisecond_as_the_next_llm_span() -> None:
    doc = raw(PYDANTIC)
    final_llm = next(s for s in doc["llmSpans"] if isinstance(s["output"][0]["content"], str))
    for sp in doc["toolSpans"]:  # a quick tool: starts and ends in the ms the next model call starts
        sp["startTime"] = sp["endTime"] = final_llm["startTime"]
    (t,) = load(doc)
    kinds = [s.kind for s in t.steps]
    # the tools are the first turn's calls and results, before the final answer
    assert kinds == ["user", "tool_call", "tool_result", "tool_result", "final_response"], kinds
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == [2]
    assert [(r.call_id, r.output) for r in t.tool_results()] == [(WEATHER_ID, "Cloudy, 62F"), (TIME_ID, "8:00 AM CET")]
    step = next(s for s in t.steps if s.kind == "tool_call")
    assert step.usage == Usage(input_tokens=185, output_tokens=44)  # the requesting turn's usage
    assert t.final_response == doc["output"]


def _agents_bodies() -> list[dict]:
    """The real ingest body split as the SDK's batch exporter sends it: the trace item in one
    body, its spans in the next; and a second run (another trace id) in a third body."""
    body = raw("other/openai_agents_sdk_traces_ingest_payload.json")
    items = body["data"]
    trace = next(x for x in items if x["object"] == "trace")
    spans = [x for x in items if x["object"] == "trace.span"]
    other = copy.deepcopy(spans)
    for x in other:
        x["trace_id"] = "trace_second"
        x["id"] = x["id"] + "_2"
        if x.get("parent_id"):
            x["parent_id"] = x["parent_id"] + "_2"
    return [{"data": [trace]}, {"data": spans}, {"data": other}]


def test_openai_agents_json_list_of_export_bodies(tmp_path: Path) -> None:
    body = raw("other/openai_agents_sdk_traces_ingest_payload.json")
    (one,) = load(body)
    p = tmp_path / "bodies.json"
    p.write_text(json.dumps(_agents_bodies()), encoding="utf-8")
    res = load(p)  # was refused: "not a trace"
    assert res.formats == {"openai_agents": 2} and not res.problems
    first, second = res
    assert first.trace_id == one.trace_id and second.trace_id == "trace_second"
    for t in (first, second):
        assert [(c.name, c.args) for c in t.tool_calls()] == [(c.name, c.args) for c in one.tool_calls()]
        assert len(t.tool_calls()) == 1
    assert first.metadata.get("workflow_name", one.metadata.get("workflow_name")) == one.metadata.get("workflow_name")


def _adk_session(with_empty: bool) -> dict:
    """An ADK session: a model event calling a tool, the tool's response, a model event with
    no parts (content None: the model returned nothing, usage still billed), the answer."""
    ev = [
        {"author": "user", "content": {"role": "user", "parts": [{"text": "Météo à Paris ?"}]}},
        {"author": "meteo_agent", "content": {"role": "model", "parts": [
            {"function_call": {"id": "adk-1", "name": "get_weather", "args": {"city": "Paris"}}}]},
         "usage_metadata": {"prompt_token_count": 300, "candidates_token_count": 20, "total_token_count": 320}},
        {"author": "meteo_agent", "content": {"role": "user", "parts": [
            {"function_response": {"id": "adk-1", "name": "get_weather", "response": {"result": "nuageux"}}}]}},
        {"author": "meteo_agent", "content": {"role": "model", "parts": [{"text": "Nuageux.", "thought": True}]},
         "usage_metadata": {"prompt_token_count": 257, "candidates_token_count": 66, "total_token_count": 323}},
        {"author": "meteo_agent", "content": {"role": "model", "parts": [{"text": "Il fait nuageux à Paris."}]},
         "usage_metadata": {"prompt_token_count": 0, "candidates_token_count": 0}},
    ]
    if with_empty:
        ev.insert(3, {"author": "meteo_agent", "content": None,
                      "usage_metadata": {"prompt_token_count": 289, "candidates_token_count": 31,
                                         "total_token_count": 320}})
    return {"id": "s1", "app_name": "meteo", "user_id": "u", "events": ev}


def test_adk_usage_on_events_without_parts() -> None:
    (t,) = load(_adk_session(with_empty=True))
    # 300 + 289 + 257 + 0 in, 20 + 31 + 66 + 0 out: the part-less event and the thought-only one count
    assert t.total_usage is not None
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (846, 117)
    assert [(c.name, c.args) for c in t.tool_calls()] == [("get_weather", {"city": "Paris"})]
    assert t.final_response == "Il fait nuageux à Paris."
    (t0,) = load(_adk_session(with_empty=False))
    assert t0.total_usage is not None
    assert (t0.total_usage.input_tokens, t0.total_usage.output_tokens) == (557, 86)


def _deep(levels: int) -> str:
    return '{"x":' * levels + "1" + "}" * levels


def test_json_list_with_one_record_too_deep_loses_only_that_record(tmp_path: Path) -> None:
    recs = [json.dumps({"task_id": i, "reward": 1.0, "info": {},
                        "traj": [{"role": "user", "content": f"demande {i}"}]}) for i in range(3)]
    deep = recs[1][:-1] + ', "extra": ' + _deep(1100) + "}"
    p = tmp_path / "runs.json"
    p.write_text("[" + ",".join([recs[0], deep, recs[2]]) + "]", encoding="utf-8")
    res = load(p)
    assert [t.metadata["case_id"] for t in res] == ["0", "2"]
    assert res.skipped == [f"{p} record 1: JSON nested deeper than 100 levels; skipped"]
    # the same records as JSON Lines: the same loss, reported at its line
    q = tmp_path / "runs.jsonl"
    q.write_text("\n".join([recs[0], deep, recs[2]]), encoding="utf-8")
    res_l = load(q)
    assert [t.metadata["case_id"] for t in res_l] == ["0", "2"]
    assert len(res_l.skipped) == 1 and res_l.skipped[0].startswith(f"{q}:2: ")


def test_json_list_of_only_too_deep_records_is_refused(tmp_path: Path) -> None:
    import pytest

    from trajcheck.errors import TraceFormatError

    p = tmp_path / "deep.json"
    p.write_text("[" + _deep(1100) + "]", encoding="utf-8")
    with pytest.raises(TraceFormatError, match="nested deeper than 100 levels"):
        load(p)
