"""MLflow writes the trace: an agent loop traced with MLflow's own tracing API
(``mlflow.trace`` / ``mlflow.start_span``, a local file store under tmp_path, no server) around
a scripted chat model that asks for a parallel pair, a call whose tool raises, its retry, and
answers, each model call recording its token usage. trajcheck reads ``Trace.to_json()`` and the
``search_traces()`` results exactly."""

from __future__ import annotations

import json

import mlflow
import pytest
from mlflow.entities import SpanType
from mlflow.tracing.constant import SpanAttributeKey

from trajcheck.model import Usage
from trajcheck.read.traces import load

_TURNS = [  # (tool calls, text, input tokens, output tokens)
    ([("get_weather", {"city": "Oslo"}, "c1"), ("get_time", {"tz": "CET"}, "c2")], None, 50, 12),
    ([("book", {"day": "mon"}, "c3")], None, 80, 9),
    ([("book", {"day": "tue"}, "c4")], None, 95, 9),
    ([], "Booked Tuesday; Oslo is 12C.", 110, 7),
]


def _chat(messages: list, turn: int) -> dict:
    calls, text, inp, out = _TURNS[turn]
    with mlflow.start_span(name="chat", span_type=SpanType.CHAT_MODEL) as span:
        span.set_inputs({"messages": messages})
        msg = {"role": "assistant", "content": text,
               "tool_calls": [{"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                              for n, a, cid in calls] or None}
        span.set_outputs({"choices": [{"index": 0, "message": msg}]})
        span.set_attribute(SpanAttributeKey.CHAT_USAGE, {"input_tokens": inp, "output_tokens": out,
                                                         "total_tokens": inp + out})
    return msg


@mlflow.trace(span_type=SpanType.TOOL)
def get_weather(city: str) -> str:
    return "12C"


@mlflow.trace(span_type=SpanType.TOOL)
def get_time(tz: str) -> str:
    return "10:00"


@mlflow.trace(span_type=SpanType.TOOL)
def book(day: str) -> str:
    if day == "mon":
        raise ValueError("Monday is full")
    return f"booked {day}"


_TOOLS = {"get_weather": get_weather, "get_time": get_time, "book": book}


@mlflow.trace(span_type=SpanType.AGENT)
def agent(question: str) -> str:
    messages: list = [{"role": "user", "content": question}]
    for turn in range(len(_TURNS)):
        msg = _chat(messages, turn)
        messages.append(msg)
        if not msg["tool_calls"]:
            return msg["content"]
        for tc in msg["tool_calls"]:
            try:
                out = _TOOLS[tc["function"]["name"]](**json.loads(tc["function"]["arguments"]))
            except ValueError as e:
                out = f"Error: {e}"
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": out})
    return ""


@pytest.fixture()
def traced(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    before = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    # an experiment of this store: an earlier test's set_experiment leaves its id active,
    # and that experiment does not exist in this fresh store (trace not logged)
    mlflow.set_experiment("sdk-traces")
    try:
        assert agent("Book a slot and tell me the weather") == "Booked Tuesday; Oslo is 12C."
        trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
        assert trace is not None
        yield trace
    finally:
        mlflow.set_tracking_uri(before)


def _check(t) -> None:
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "c1"), ("get_time", {"tz": "CET"}, "c2"),
        ("book", {"day": "mon"}, "c3"), ("book", {"day": "tue"}, "c4")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    assert [(r.call_id, r.output, r.is_error, r.error) for r in t.tool_results()] == [
        ("c1", "12C", False, None), ("c2", "10:00", False, None), ("c3", None, True, "Monday is full"),
        ("c4", "booked tue", False, None)]
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=i, output_tokens=o, total_tokens=i + o) for _, _, i, o in _TURNS]
    # the trace-level aggregate MLflow also stores is not added again
    assert t.total_usage == Usage(input_tokens=335, output_tokens=37, total_tokens=372)
    assert t.final_response == "Booked Tuesday; Oslo is 12C." and t.user_input == "Book a slot and tell me the weather"


def test_mlflow_trace_to_json_read_exactly(traced, tmp_path) -> None:
    assert json.loads(traced.info.trace_metadata["mlflow.trace.tokenUsage"])["input_tokens"] == 335
    p = tmp_path / "trace.json"
    p.write_text(traced.to_json())
    res = load(p)
    assert res.formats == {"mlflow": 1} and res.problems == []
    _check(res[0])
    assert res[0].trace_id == traced.info.trace_id


def test_mlflow_search_traces_read_exactly(traced) -> None:
    for found in (mlflow.search_traces(return_type="list"), mlflow.search_traces()):  # list, DataFrame
        res = load(found)
        assert res.formats == {"mlflow": 1} and res.problems == []
        _check(res[0])
