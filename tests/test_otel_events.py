"""OpenTelemetry gen_ai.evaluation.result events (trajcheck.report.otel_events): one per run and
metric, attached to the scored trace's root span, into the SDK's in-memory exporter, an
OTLP JSON file and a loopback OTLP/HTTP endpoint."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

pytest.importorskip("opentelemetry.sdk._logs")

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
)
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter  # noqa: E402

from trajcheck.cli.app import main  # noqa: E402
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory  # noqa: E402
from trajcheck.report.otel_events import (  # noqa: E402
    EVENT_NAME,
    WITHHELD,
    EvaluationEmitter,
    emitter_for,
)
from trajcheck.score.pipeline import evaluate_stream  # noqa: E402

TRACE = "0af7651916cd43dd8448eb211c80319c"
ROOT = "b7ad6b7169203331"
CASE = Case(id="c1", input="book flight 7", expected_calls=(ExpectedCall("book", {"flight": 7}),))


def run(flight: int, trial: int, trace: str | None = TRACE) -> Trajectory:
    call = ToolCall("book", {"flight": flight}, call_id="k1")
    steps = (Step(0, "user", "book flight 7", span_id=ROOT if trace else None),
             Step(1, "tool_call", tool_calls=(call,), span_id="00f067aa0ba902b7", parent_id=ROOT),
             Step(2, "tool_result", tool_result=ToolResult("k1", "book", "ok", is_error=False)),
             Step(3, "final_response", "Booked."))
    return Trajectory(steps=steps, final_response="Booked.", trace_id=trace,
                      metadata={"case_id": "c1", "trial": trial, "run_id": f"c1-{trial}",
                                "response_id": f"resp-{trial}"})


def test_events_in_memory_carry_the_conventions_attributes_and_the_span():
    mem = InMemoryLogRecordExporter()
    em = EvaluationEmitter([mem], batch=False)
    sc = evaluate_stream([run(7, 0), run(8, 1, trace=None)], [CASE], n_boot=50, on_result=em.emit)
    em.close()
    recs = [x.log_record for x in mem.get_finished_logs()]
    assert sc.suite.n_runs == 2 and em.n == len(recs) == 10  # 5 metrics x 2 runs
    assert {r.event_name for r in recs} == {EVENT_NAME}
    by = {(r.attributes["trajcheck.run_id"], r.attributes["gen_ai.evaluation.name"]): r for r in recs}
    ok = by[("c1-0", "trajcheck.task_success")]
    assert ok.attributes["gen_ai.evaluation.score.value"] == 1.0
    assert ok.attributes["gen_ai.evaluation.score.label"] == "pass"
    assert ok.attributes["gen_ai.response.id"] == "resp-0"
    assert format(ok.trace_id, "032x") == TRACE and format(ok.span_id, "016x") == ROOT
    bad = by[("c1-1", "trajcheck.tool_call_f1")]
    assert bad.attributes["gen_ai.evaluation.score.value"] == 0.0
    assert bad.attributes["gen_ai.evaluation.score.label"] == "fail"
    assert not bad.trace_id  # no trace id in the input: not attached to any span
    # The failing run's reason names the expected flight (7); it stays home unless asked for.
    assert by[("c1-1", "trajcheck.task_success")].attributes["gen_ai.evaluation.explanation"] == WITHHELD


def test_explanations_are_sent_only_when_asked():
    def explanation(**kw) -> str:
        mem = InMemoryLogRecordExporter()
        em = EvaluationEmitter([mem], batch=False, **kw)
        evaluate_stream([run(8, 0)], [CASE], n_boot=20, on_result=em.emit)
        em.close()
        recs = [x.log_record for x in mem.get_finished_logs()]
        return next(r.attributes["gen_ai.evaluation.explanation"] for r in recs
                    if r.attributes["gen_ai.evaluation.name"] == "trajcheck.task_success")

    withheld, sent = explanation(), explanation(explanations=True)
    assert withheld == WITHHELD and "7" not in withheld
    assert "book" in sent and "7" in sent and "8" in sent


def test_events_as_otlp_json_lines_from_the_cli(tmp_path, capsys):
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(run(7, i).to_dict()) + "\n" for i in range(3)))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE.to_dict()) + "\n")
    out = tmp_path / "events.jsonl"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(runs), "--cases", str(cases), "-q", "--events", str(out)])
    assert ei.value.code in (0, None)
    assert "wrote 15 evaluation events" in capsys.readouterr().err
    recs = [r for line in out.read_text().splitlines()
            for rl in json.loads(line)["resourceLogs"] for sl in rl["scopeLogs"]
            for r in sl["logRecords"]]
    assert len(recs) == 15
    assert {r["eventName"] for r in recs} == {EVENT_NAME}
    assert {r["traceId"] for r in recs} == {TRACE} and {r["spanId"] for r in recs} == {ROOT}
    names = {a["key"] for a in recs[0]["attributes"]}
    assert {"gen_ai.evaluation.name", "gen_ai.evaluation.score.value"} <= names


def _task_explanations(path) -> list[str]:
    return [a["value"]["stringValue"] for line in path.read_text().splitlines()
            for rl in json.loads(line)["resourceLogs"] for sl in rl["scopeLogs"]
            for r in sl["logRecords"]
            if {"key": "gen_ai.evaluation.name", "value": {"stringValue": "trajcheck.task_success"}}
            in r["attributes"]
            for a in r["attributes"] if a["key"] == "gen_ai.evaluation.explanation"]


def test_cli_sends_explanations_only_with_the_flag(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run(8, 0).to_dict()) + "\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE.to_dict()) + "\n")
    for flag, out in (([], tmp_path / "plain.jsonl"), (["--events-explanations"], tmp_path / "full.jsonl")):
        with pytest.raises(SystemExit):
            main(["eval", str(runs), "--cases", str(cases), "-q", "--events", str(out), *flag])
    assert _task_explanations(tmp_path / "plain.jsonl") == [WITHHELD]
    [full] = _task_explanations(tmp_path / "full.jsonl")
    assert full != WITHHELD and "7" in full


def _recording_server(got: list[bytes]) -> HTTPServer:
    """A loopback HTTP server answering 200 to every POST and keeping the bodies."""
    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            got.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_events_reach_a_loopback_otlp_http_endpoint(monkeypatch):
    # A proxy in the environment (common in CI) must not see events meant for this machine.
    proxied: list[bytes] = []
    proxy = _recording_server(proxied)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(var, f"http://127.0.0.1:{proxy.server_port}")
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    got: list[bytes] = []
    srv = _recording_server(got)
    try:
        em = emitter_for(endpoint=f"http://127.0.0.1:{srv.server_port}/v1/logs")
        evaluate_stream([run(7, 0)], [CASE], n_boot=20, on_result=em.emit)
        em.close()
    finally:
        srv.shutdown()
        proxy.shutdown()
    assert proxied == []
    recs = []
    for body in got:
        req = ExportLogsServiceRequest()
        req.ParseFromString(body)
        recs += [r for rl in req.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert len(recs) == 5
    assert {r.event_name for r in recs} == {EVENT_NAME}
    assert {r.trace_id.hex() for r in recs} == {TRACE}
    names = {next(a.value.string_value for a in r.attributes if a.key == "gen_ai.evaluation.name")
             for r in recs}
    assert "trajcheck.task_success" in names and "trajcheck.composite" in names
