"""Runs tied to their cases in each format's own metadata place (docs/formats.md), written by
the real SDKs: a LangSmith ``RunTree`` (``extra.metadata.case_id``, else the run's
``reference_example_id``), an MLflow trace (``mlflow.update_current_trace`` metadata, else a
tag), OpenTelemetry spans from the OTel SDK (``trajcheck.case_id`` on a span, else on the
resource). And a LangSmith root run exported alone, its calls only in its outputs' messages,
reads those calls (not 0 calls with no problem)."""

from __future__ import annotations

import json
import uuid

import pytest

from trajcheck.read.traces import load


def _run_tree(**kw):
    from langsmith.run_trees import RunTree

    return RunTree(name="agent", run_type="chain", inputs={"question": "Réserve Zürich"}, **kw)


def test_langsmith_case_id_from_extra_metadata_then_example():
    r = _run_tree(extra={"metadata": {"case_id": "c-7"}})
    r.end(outputs={"output": "done"})
    t = load(json.loads(json.dumps(r.model_dump(), default=str))).trajectories[0]
    assert t.metadata["case_id"] == "c-7"
    ex = uuid.uuid4()
    r2 = _run_tree(reference_example_id=ex)
    r2.end(outputs={"output": "done"})
    assert load(json.loads(json.dumps(r2.model_dump(), default=str)))[0].metadata["case_id"] == str(ex)


def test_langsmith_root_run_alone_reads_calls_from_its_outputs():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict

    msgs = [HumanMessage("Réserve un vol pour Zürich"),
            AIMessage("", tool_calls=[{"name": "search", "args": {"q": {"to": "Zürich", "days": [1, 2]}}, "id": "a"},
                                      {"name": "weather", "args": {"city": "Zürich"}, "id": "b"}]),
            ToolMessage("[]", tool_call_id="a"), ToolMessage("12C", tool_call_id="b"),
            AIMessage("", tool_calls=[{"name": "book", "args": {"id": 3}, "id": "c"}]),
            ToolMessage("full", tool_call_id="c", status="error"),
            AIMessage("", tool_calls=[{"name": "book", "args": {"id": 4}, "id": "d"}]),
            ToolMessage("ok", tool_call_id="d"),
            AIMessage("Réservé.")]
    r = _run_tree(extra={"metadata": {"case_id": "fly"}})
    r.end(outputs={"messages": messages_to_dict(msgs)})
    res = load(json.loads(json.dumps(r.model_dump(), default=str)))
    t = res.trajectories[0]
    assert [(c.name, c.args) for c in t.tool_calls()] == [
        ("search", {"q": {"to": "Zürich", "days": [1, 2]}}), ("weather", {"city": "Zürich"}),
        ("book", {"id": 3}), ("book", {"id": 4})]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    assert [r.is_error for r in t.tool_results()] == [False, False, True, False]
    assert t.final_response == "Réservé." and t.metadata["case_id"] == "fly"
    assert t.user_input == "Réserve un vol pour Zürich"


@pytest.fixture()
def mlflow_store(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    before = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    mlflow.set_experiment("case-ids")
    try:
        yield mlflow
    finally:
        mlflow.set_tracking_uri(before)


def test_mlflow_case_id_from_trace_metadata_then_tags(mlflow_store):
    mlflow = mlflow_store
    from mlflow.entities import SpanType

    @mlflow.trace(span_type=SpanType.TOOL)
    def lookup(order_id: str) -> str:
        return "ok"

    @mlflow.trace(span_type=SpanType.AGENT)
    def agent(q: str, how: str) -> str:
        if how == "metadata":
            mlflow.update_current_trace(metadata={"case_id": "m-1"})
        else:
            mlflow.update_current_trace(tags={"case_id": "t-2"})
        lookup("981")
        return "done"

    ids = []
    for how in ("metadata", "tags"):
        agent("q", how)
        ids.append(mlflow.get_last_active_trace_id())
    got = [load(json.loads(mlflow.get_trace(i).to_json()))[0] for i in ids]
    assert [t.metadata["case_id"] for t in got] == ["m-1", "t-2"]
    assert [c.name for c in got[0].tool_calls()] == ["lookup"]


def _otel_spans(resource_case: str | None, span_case: str | None) -> list:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exp = InMemorySpanExporter()
    attrs = {"service.name": "agent"}
    if resource_case is not None:
        attrs["trajcheck.case_id"] = resource_case
    tp = TracerProvider(resource=Resource.create(attrs))
    tp.add_span_processor(SimpleSpanProcessor(exp))
    tr = tp.get_tracer("t")
    with tr.start_as_current_span("invoke_agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        if span_case is not None:
            root.set_attribute("trajcheck.case_id", span_case)
        with tr.start_as_current_span("execute_tool lookup") as s:
            s.set_attribute("gen_ai.operation.name", "execute_tool")
            s.set_attribute("gen_ai.tool.name", "lookup")
            s.set_attribute("gen_ai.tool.call.arguments", json.dumps({"order_id": "981"}))
    return [json.loads(s.to_json()) for s in exp.get_finished_spans()]


def test_otel_case_id_from_span_then_resource_attribute():
    t = load(_otel_spans("from-resource", "from-span"))[0]
    assert t.metadata["case_id"] == "from-span"
    t = load(_otel_spans("from-resource", None))[0]
    assert t.metadata["case_id"] == "from-resource" and [c.name for c in t.tool_calls()] == ["lookup"]
    assert "case_id" not in load(_otel_spans(None, None))[0].metadata
