"""Haystack 2.x OpenTelemetry spans (issue 28): what haystack-ai 2.31.0 wrote through its built-in
``haystack.tracing.OpenTelemetryTracer`` for the scripted scenario
(``scripts/sdk_traces/haystack2_toolinvoker_run.py``: an Agent whose ToolInvoker runs the tools).
Haystack 2.x opens no span per tool call: the calls and results are only in the ToolInvoker's
``haystack.component.run`` content tags. Before this reading the file read as 4 calls with 0
failed (the results came from the next prompt's tool messages, which carry no error flag).
``test_sdk_traces_messages.test_sdk_artifact_reads_exactly[haystack2_toolinvoker/otel_spans]``
checks it against the truth file too; here the values are spelled out, with content tracing
off (never 0 calls quietly) and with tool spans inside the components (no double count)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli import main
from trajcheck.read.traces import load

DATA = Path(__file__).parent / "data" / "sdk_traces"
SPANS = DATA / "haystack2_toolinvoker" / "otel_spans.json"
CONTENT_TAGS = ("haystack.component.input", "haystack.component.output", "haystack.agent.input",
                "haystack.agent.output")
WEATHER = {"city": "Zürich", "units": {"temp": "°C", "wind": ["km/h", "Bft"]}}
BOOK_FAIL = {"guest": {"name": "Zoë Müller", "nights": 2}, "dates": ["2026-12-24", "2026-12-26"]}
BOOK_OK = {"guest": {"name": "Zoë Müller", "nights": 2}, "dates": ["2026-12-27", "2026-12-29"]}
FINAL = "Zürich: 3 °C, leichter Schneefall, 14:05 MEZ. Hotel Storchen ist für Zoë vom 27. bis 29. Dezember gebucht (ZÜ-4711)."


def _doc() -> dict:
    return json.loads(SPANS.read_text(encoding="utf-8"))


def _spans(doc: dict) -> list[dict]:
    return [sp for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def _attr(sp: dict, key: str):
    return next((a["value"].get("stringValue") for a in sp.get("attributes", []) if a["key"] == key), None)


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "spans.json"
    p.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return p


def test_the_artifact_is_component_spans_only() -> None:
    spans = _spans(_doc())
    assert {sp["name"] for sp in spans} == {"haystack.agent.run", "haystack.component.run"}
    types = [_attr(sp, "haystack.component.type") for sp in spans if sp["name"] == "haystack.component.run"]
    assert types == ["OpenAIChatGenerator", "ToolInvoker"] * 3 + ["OpenAIChatGenerator"]
    keys = {a["key"] for sp in spans for a in sp.get("attributes", [])}
    assert not any(k.startswith("gen_ai.") for k in keys) and "haystack.tool.name" not in keys
    assert all(not sp.get("status") for sp in spans)  # the failure is only the result's error flag


def test_reads_exactly_from_the_component_spans() -> None:
    res = load(SPANS)
    assert res.formats == {"otel": 1} and res.problems == [] and res.unread == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", WEATHER, "call_w1"), ("get_time", {"tz": "Europe/Zurich"}, "call_t1"),
        ("book_hotel", BOOK_FAIL, "call_b1"), ("book_hotel", BOOK_OK, "call_b2")]
    # the parallel pair is one step, each turn's step carries its model call's usage
    assert [[c.call_id for c in s.tool_calls] for s in t.steps if s.tool_calls] == [
        ["call_w1", "call_t1"], ["call_b1"], ["call_b2"]]
    assert [(s.usage.input_tokens, s.usage.output_tokens) for s in t.steps if s.usage is not None] == [
        (120, 40), (190, 30), (240, 31), (300, 45)]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (850, 146)
    results = t.tool_results()
    assert [(r.call_id, r.name, r.is_error) for r in results] == [
        ("call_w1", "get_weather", False), ("call_t1", "get_time", False), ("call_b1", "book_hotel", True),
        ("call_b2", "book_hotel", False)]
    assert [results[i].output for i in (0, 1, 3)] == [
        "3 °C, leichter Schneefall", "14:05 MEZ", "Gebucht: Hotel Storchen, Bestätigung ZÜ-4711"]
    failed = ("Failed to invoke Tool `book_hotel` with parameters {'guest': {'name': 'Zoë Müller', 'nights': 2}, "
              "'dates': ['2026-12-24', '2026-12-26']}. Error: Kein Zimmer frei vom 24. bis 26. Dezember")
    assert results[2].output == failed and results[2].error == failed
    assert [r.error for r in results if r is not results[2]] == [None, None, None]
    assert t.final_response == FINAL and t.steps[-1].kind == "final_response"
    assert t.user_input.startswith("Plane Zoës Reise nach Zürich")
    assert {s.model for s in t.steps if s.kind in ("tool_call", "final_response")} == {"gpt-4o-mini"}
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "tool_result", "tool_call",
                                        "tool_result", "tool_call", "tool_result", "final_response"]


def test_same_calls_as_the_haystack_message_list() -> None:
    two, msgs = load(SPANS)[0], load(DATA / "haystack" / "messages.json")[0]
    assert [(c.name, c.args, c.call_id) for c in two.tool_calls()] == [
        (c.name, c.args, c.call_id) for c in msgs.tool_calls()]
    assert [(r.call_id, r.is_error) for r in two.tool_results()] == [
        (r.call_id, r.is_error) for r in msgs.tool_results()]
    assert two.final_response == msgs.final_response


def test_content_tracing_off_names_every_component_span_never_zero_calls_quietly(tmp_path: Path) -> None:
    doc = _doc()
    for sp in _spans(doc):
        sp["attributes"] = [a for a in sp.get("attributes", []) if a["key"] not in CONTENT_TAGS]
    p = _write(tmp_path, doc)
    res = load(p)
    t = res[0]
    assert t.tool_calls() == []  # nothing records them: said, not guessed
    probs = t.metadata["problems"]
    assert len(probs) == 7 and all("HAYSTACK_CONTENT_TRACING_ENABLED=true" in m for m in probs)
    assert len([m for m in probs if "ToolInvoker span records no content" in m]) == 3
    assert len([m for m in probs if "OpenAIChatGenerator span records no output" in m]) == 4
    assert len(res.problems) == 7 and all(any(m in q for q in res.problems) for m in probs)
    out = CliRunner().invoke(main, ["inspect", str(p)])
    assert re.search(r"problems\s*\S\s*7\b", out.output), out.output


def test_a_tool_invoker_span_without_output_gives_its_calls_and_says_results_are_unknown(tmp_path: Path) -> None:
    doc = _doc()
    inv = [sp for sp in _spans(doc) if _attr(sp, "haystack.component.type") == "ToolInvoker"]
    inv[0]["attributes"] = [a for a in inv[0]["attributes"] if a["key"] != "haystack.component.output"]
    t = load(_write(tmp_path, doc))[0]
    assert [c.call_id for c in t.tool_calls()] == ["call_w1", "call_t1", "call_b1", "call_b2"]
    assert [c.args for c in t.tool_calls()][:2] == [WEATHER, {"tz": "Europe/Zurich"}]
    assert [r.call_id for r in t.tool_results()] == ["call_b1", "call_b2"]
    probs = t.metadata["problems"]
    assert len(probs) == 1 and "ToolInvoker span records no tool_messages" in probs[0] \
        and "the 2 call(s) of its input are read without results" in probs[0] and inv[0]["spanId"] in probs[0]


def test_tool_spans_inside_the_tool_invoker_are_not_counted_twice(tmp_path: Path) -> None:
    # another instrumentation (or a Haystack that opens tool spans) records each call as a GenAI
    # tool span below the ToolInvoker's component span: the calls are read once, from those spans
    doc = _doc()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    inv = [sp for sp in spans if _attr(sp, "haystack.component.type") == "ToolInvoker"]
    calls = [[("call_w1", "get_weather", WEATHER, "3 °C"), ("call_t1", "get_time", {"tz": "Europe/Zurich"}, "14:05")],
             [("call_b1", "book_hotel", BOOK_FAIL, "voll")], [("call_b2", "book_hotel", BOOK_OK, "ok")]]
    for n, (sp, cs) in enumerate(zip(inv, calls)):
        for k, (cid, name, args, out) in enumerate(cs):
            spans.append({"traceId": sp["traceId"], "spanId": f"{0xabc0 + 10 * n + k:016x}", "parentSpanId": sp["spanId"],
                          "name": f"execute_tool {name}", "startTimeUnixNano": str(int(sp["startTimeUnixNano"]) + 1),
                          "endTimeUnixNano": str(int(sp["endTimeUnixNano"]) - 1),
                          "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                                         {"key": "gen_ai.tool.name", "value": {"stringValue": name}},
                                         {"key": "gen_ai.tool.call.id", "value": {"stringValue": cid}},
                                         {"key": "gen_ai.tool.call.arguments",
                                          "value": {"stringValue": json.dumps(args, ensure_ascii=False)}},
                                         {"key": "gen_ai.tool.call.result", "value": {"stringValue": out}}],
                          "status": {"code": 2, "message": "voll"} if out == "voll" else {}})
    res = load(_write(tmp_path, doc))
    assert res.problems == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", WEATHER, "call_w1"), ("get_time", {"tz": "Europe/Zurich"}, "call_t1"),
        ("book_hotel", BOOK_FAIL, "call_b1"), ("book_hotel", BOOK_OK, "call_b2")]
    assert [(r.output, r.is_error) for r in t.tool_results()] == [
        ("3 °C", False), ("14:05", False), ("voll", True), ("ok", False)]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (850, 146) and t.final_response == FINAL


def test_a_pipelines_tool_invoker_runs_the_parallel_pair() -> None:
    # haystack-ai 2.31.0 Pipeline llm (OpenAIChatGenerator) -> tools (ToolInvoker), the scenario's
    # first model turn: the two calls are one step, with their results, under haystack.pipeline.run
    res = load(DATA / "haystack2_toolinvoker" / "otel_pipeline_spans.json")
    assert res.problems == [] and res.unread == []
    t = res[0]
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "tool_result"]
    assert [(c.name, c.args, c.call_id) for c in t.steps[1].tool_calls] == [
        ("get_weather", WEATHER, "call_w1"), ("get_time", {"tz": "Europe/Zurich"}, "call_t1")]
    assert [(r.call_id, r.output, r.is_error) for r in t.tool_results()] == [
        ("call_w1", "3 °C, leichter Schneefall", False), ("call_t1", "14:05 MEZ", False)]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (120, 40)
    assert t.final_response is None and t.user_input.startswith("Plane Zoës Reise nach Zürich")


def test_a_tool_invoker_that_raised_gives_its_call_failed_and_says_so() -> None:
    # the same Pipeline on the failing booking, the ToolInvoker's default raise_on_failure=True:
    # its span has the error status, an exception event and no output tag
    p = DATA / "haystack2_toolinvoker" / "otel_pipeline_raised_spans.json"
    inv = [sp for sp in _spans(json.loads(p.read_text(encoding="utf-8")))
           if _attr(sp, "haystack.component.type") == "ToolInvoker"]
    assert len(inv) == 1 and inv[0]["status"]["code"] == "STATUS_CODE_ERROR"
    assert _attr(inv[0], "haystack.component.output") is None
    res = load(p)
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [("book_hotel", BOOK_FAIL, "call_b1")]
    (r,) = t.tool_results()
    assert (r.call_id, r.output, r.is_error) == ("call_b1", None, True)
    assert r.error.startswith("PipelineRuntimeError: The following component failed to run:") and \
        r.error.endswith("Error: Kein Zimmer frei vom 24. bis 26. Dezember")
    (prob,) = t.metadata["problems"]
    assert inv[0]["spanId"] in prob and "it raised: PipelineRuntimeError" in prob and \
        "its one call is read as failed with that error, its output unknown" in prob
    assert len(res.problems) == 1 and res.unread == []
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (190, 30)
