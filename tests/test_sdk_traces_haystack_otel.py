"""Haystack's own OpenTelemetry spans (issue 28): what haystack-ai 3.4.1 wrote through
opentelemetry-haystack's ``OpenTelemetryTracer`` for the scripted scenario
(``scripts/sdk_traces/haystack_otel_run.py``). The exact reading against the scenario's truth is
``test_sdk_traces_messages.test_sdk_artifact_reads_exactly[haystack/otel_spans]``; here: the
file holds Haystack's tags only (no GenAI key), so the reading comes from the Haystack layout,
and the same run with content tracing off still names its four calls and the failure."""

from __future__ import annotations

import json
from pathlib import Path

from trajcheck.read.traces import load

DATA = Path(__file__).parent / "data" / "sdk_traces" / "haystack"
CONTENT_TAGS = ("haystack.agent.step.tool.input", "haystack.agent.step.tool.output", "haystack.agent.step.llm.input",
                "haystack.agent.step.llm.output", "haystack.agent.input", "haystack.agent.output")


def _spans(doc: dict) -> list[dict]:
    return [sp for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def test_the_artifact_is_haystack_tags_only() -> None:
    spans = _spans(json.loads((DATA / "otel_spans.json").read_text(encoding="utf-8")))
    keys = {a["key"] for sp in spans for a in sp.get("attributes", [])}
    assert not any(k.startswith("gen_ai.") for k in keys)
    assert sorted(sp["name"] for sp in spans).count("haystack.agent.step.tool") == 4
    assert {sp["name"] for sp in spans} == {"haystack.agent.run", "haystack.agent.step", "haystack.agent.step.llm",
                                            "haystack.agent.step.tool"}
    assert all(not sp.get("status") for sp in spans)  # the failure is only haystack.tool.error


def test_same_run_as_the_message_list() -> None:
    spans, msgs = load(DATA / "otel_spans.json")[0], load(DATA / "messages.json")[0]
    assert [(c.name, c.args, c.call_id) for c in spans.tool_calls()] == [
        (c.name, c.args, c.call_id) for c in msgs.tool_calls()]
    assert [(r.call_id, r.output, r.is_error) for r in spans.tool_results()] == [
        (r.call_id, r.output, r.is_error) for r in msgs.tool_results()]
    assert spans.final_response == msgs.final_response
    assert (spans.total_usage.input_tokens, spans.total_usage.output_tokens) == (850, 146)
    err = spans.tool_results()[2]
    assert err.error is not None and err.error.endswith("Error: Kein Zimmer frei vom 24. bis 26. Dezember")


def test_content_tracing_off_still_names_every_call_and_the_failure(tmp_path) -> None:
    doc = json.loads((DATA / "otel_spans.json").read_text(encoding="utf-8"))
    for sp in _spans(doc):
        sp["attributes"] = [a for a in sp.get("attributes", []) if a["key"] not in CONTENT_TAGS]
    p = tmp_path / "spans.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    res = load(p)
    t = res[0]
    assert [(c.name, c.args) for c in t.tool_calls()] == [
        ("get_weather", None), ("get_time", None), ("book_hotel", None), ("book_hotel", None)]
    assert [r.is_error for r in t.tool_results()] == [False, False, True, False]
    probs = t.metadata["problems"]
    assert len([m for m in probs if "records no arguments" in m and "HAYSTACK_CONTENT_TRACING_ENABLED=true" in m]) == 4
    assert t.final_response is None and t.total_usage is None


def test_a_pipelines_chat_generator_component_span_is_a_model_turn() -> None:
    # haystack-ai 3.4.1 Pipeline with one OpenAIChatGenerator offered the tools: the model's first
    # turn of the scenario (the parallel pair) is in its haystack.component.run span only
    res = load(DATA / "otel_pipeline_spans.json")
    assert res.problems == [] and res.unread == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Zürich", "units": {"temp": "°C", "wind": ["km/h", "Bft"]}}, "call_w1"),
        ("get_time", {"tz": "Europe/Zurich"}, "call_t1")]
    assert [s.kind for s in t.steps] == ["user", "tool_call"]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (120, 40)
    assert t.steps[1].model == "gpt-4o-mini"
    assert t.user_input.startswith("Plane Zoës Reise nach Zürich")
