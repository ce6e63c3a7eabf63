"""Faults in the formats with their own readers, made by editing a copy of a real file: a call
whose arguments are not recorded keeps ``args=None`` with a problem naming the span, event or
record (never ``{}``); records that are not runs are listed with their reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import load

D = Path(__file__).parent / "data" / "real_traces" / "other"


def _raw(name: str):
    return json.loads((D / name).read_text(encoding="utf-8"))


def test_agents_sdk_function_span_without_input_and_with_error() -> None:
    doc = _raw("openai_agents_sdk_traces_ingest_payload.json")
    fn = doc["data"][2]
    del fn["span_data"]["input"]
    fn["error"] = {"message": "Error running tool (non-fatal)", "data": {"tool_name": "get_city_info", "error": "boom"}}
    res = load(doc)
    c, r = res[0].tool_calls()[0], res[0].tool_results()[0]
    assert (c.name, c.args, c.args_parse_error) == ("get_city_info", None, "arguments not recorded")
    assert res.faults == ["<input> trace trace_1b9cc6269f8041efbb685fb644225e16: span span_d57a7b9067894588b3a65c5e "
                          "(function): the span has no "
                          "'span_data.input'; arguments unknown"]
    assert (r.is_error, r.error) == (True, "Error running tool (non-fatal): boom")


def test_langfuse_tool_without_input() -> None:
    doc = _raw("langfuse_export_openai_agents.json")
    tool = next(o for o in doc["observations"] if o["type"] == "TOOL")
    tool["input"] = None
    tool["level"], tool["statusMessage"] = "ERROR", "timeout"
    res = load(doc)
    c, r = res[0].tool_calls()[0], res[0].tool_results()[0]
    assert (c.args, c.call_id) == (None, "call_Kud0j0DxWSmLzv9W5m6qVqXn")
    assert res.faults == ["<input>: observation 5b99c3e3411ed17b (get_weather): field 'input' is missing; "
                          "arguments unknown"]
    assert (r.is_error, r.error) == (True, "timeout")


def test_managed_agents_tool_use_without_input() -> None:
    lines = [json.loads(x) for x in (D / "anthropic_managed_agents_session_events_custom_tools.jsonl")
             .read_text(encoding="utf-8").splitlines()]
    use = next(ev for _, ev in lines if isinstance(ev, dict) and ev.get("type") == "agent.custom_tool_use")
    del use["input"]
    res = load(lines)
    assert res[0].tool_calls()[0].args is None
    assert len(res.faults) == 1 and "(sevt_018iPB2RYrthWNKugV6ehDxH): field 'input' is missing" in res.faults[0]


def test_atif_call_without_arguments() -> None:
    doc = _raw("atif_harbor_openhands.json")
    del doc["steps"][4]["tool_calls"][0]["arguments"]
    res = load(doc)
    assert res[0].tool_calls()[0].args is None
    assert res.faults == ["<input>: steps[4].tool_calls[0]: field 'arguments' is missing; arguments unknown"]


def test_inspect_samples_that_are_not_runs_are_listed() -> None:
    log = _raw("inspect_ai_browser_log.json")
    empty = copy.deepcopy(log["samples"][0])
    empty.update(id=2, messages=[m for m in empty["messages"] if m["role"] == "user"], events=[])
    crashed = copy.deepcopy(log["samples"][0])
    crashed.update(id=3, error={"message": "RuntimeError('sandbox died')\n  at ...", "traceback": ""})
    log["samples"] += [empty, crashed]
    res = load(log)
    assert [t.metadata["case_id"] for t in res] == ["1"]
    assert res.skipped == [
        "<input> sample 2 epoch 1: the sample has no model turn (no assistant message); skipped",
        "<input> sample 3 epoch 1: the sample failed with an error (RuntimeError('sandbox died')); "
        "not an agent run; skipped"]
    header_only = {k: v for k, v in log.items() if k != "samples"}
    res = load(header_only)
    assert len(res) == 0 and "the log holds no samples (status 'success'" in res.skipped[0]


def test_inspect_call_whose_arguments_did_not_parse() -> None:
    log = _raw("inspect_ai_browser_log.json")
    tc = log["samples"][0]["messages"][1]["tool_calls"][0]
    tc["arguments"] = {}
    tc["parse_error"] = "Expecting value: line 1 column 9"
    res = load(log)
    c = res[0].tool_calls()[0]
    assert (c.args, c.args_parse_error) == (None, "arguments did not parse: Expecting value: line 1 column 9")
    assert res.faults[0].endswith("messages[1].tool_calls[0]: arguments did not parse: Expecting value: line 1 column 9")


def test_pydantic_ai_arguments_that_are_not_json() -> None:
    msgs = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
            {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "get", "args": '{"id": 7',
                                            "tool_call_id": "c1"}]}]
    res = load(msgs)
    assert res.formats == {"pydantic_ai": 1}
    c = res[0].tool_calls()[0]
    assert (c.args, c.raw_args) == (None, '{"id": 7')
    assert "messages[1].parts[0]: arguments are not valid JSON" in res.faults[0]


def test_mlflow_tool_span_without_inputs() -> None:
    trace = {"info": {"trace_id": "tr-1", "execution_duration_ms": 5},
             "data": {"spans": [
                 {"trace_id": "AAAAAAAAAAAAAAAAAAAAAQ==", "span_id": "AAAAAAAAAAE=", "parent_span_id": None,
                  "name": "get", "start_time_unix_nano": 1, "end_time_unix_nano": 2,
                  "status": {"code": "STATUS_CODE_OK", "message": ""},
                  "attributes": {"mlflow.spanType": '"TOOL"', "mlflow.spanOutputs": '"x"'}}]}}
    res = load(trace)
    assert res.formats == {"mlflow": 1}
    assert res[0].tool_calls()[0].args is None
    assert res.faults == ["<input> trace tr-1: span 0000000000000001 (get): attribute 'mlflow.spanInputs' is missing; "
                          "arguments unknown"]


def test_forced_format_of_a_new_reader_that_does_not_fit_is_an_error() -> None:
    with pytest.raises(TraceFormatError, match=r"atif_harbor_openhands.json: does not fit --format inspect_ai: "
                                               r"not an Inspect AI log or sample; it reads as atif"):
        load(D / "atif_harbor_openhands.json", format="inspect_ai")
    for fmt, name in [("langfuse", "atif_harbor_openhands.json"), ("atif", "langfuse_export_openai_agents.json"),
                      ("openai_agents", "inspect_ai_browser_log.json"), ("mlflow", "inspect_ai_browser_log.json"),
                      ("pydantic_ai", "langfuse_export_openai_agents.json"),
                      ("anthropic_managed", "openai_agents_sdk_traces_ingest_payload.json")]:
        with pytest.raises(TraceFormatError, match=name):
            load(D / name, format=fmt)
