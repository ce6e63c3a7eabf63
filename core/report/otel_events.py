"""Evaluation results into the observability pipeline: OpenTelemetry GenAI evaluation events.

For every scored run and metric, one ``gen_ai.evaluation.result`` event (a log record with
that event name; OpenTelemetry GenAI semantic conventions, "Events": attributes
``gen_ai.evaluation.name`` (required), ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation`` and, when the trace
carries it, ``gen_ai.response.id``). An event is attached to the scored trace -- its
record's trace id and span id are the run's ``Trajectory.trace_id`` and the span of its
root step (``Step.span_id`` of the first step without a parent) -- when the input carries
them, as the convention asks ("SHOULD be parented to GenAI operation span being
evaluated"). trajcheck's own ids ride along as ``trajcheck.case_id`` / ``trajcheck.run_id``.

Metrics sent (names as ``gen_ai.evaluation.name``): ``trajcheck.task_success`` (1/0,
label pass/fail, the outcome's reason), ``trajcheck.tool_call_f1`` (label pass when 1),
``trajcheck.tool_call_precision``, ``trajcheck.tool_call_recall``, ``trajcheck.composite``
(label pass/fail by its threshold) and ``trajcheck.ordering_accuracy`` where it applies.

The task_success explanation (the outcome's reason) may quote the case's expected values -- an
expected argument, a required phrase, a final-state field -- and events leave for a shared
collector, so by default it is withheld and the event says so (:data:`WITHHELD`);
``explanations=True`` (``trajcheck eval --events-explanations``) sends it.

Sinks: an OTLP JSON file (one ``ExportLogsServiceRequest`` per line, ids in hex as the OTLP
JSON encoding requires: ``OtlpJsonFileExporter``), an OTLP/HTTP endpoint (the SDK's
``OTLPLogExporter``), or any ``LogRecordExporter`` (tests use the SDK's in-memory one).
Needs opentelemetry-sdk (extra ``otel``; the HTTP exporter for endpoints). An endpoint on this
machine (``localhost``, 127.0.0.0/8, ``::1``) is reached directly: ``http_proxy`` and the like
would hand every event, and the collector's ``Authorization`` header, to the proxy.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EngineError
from .scorecard import RunResult

if TYPE_CHECKING:  # pragma: no cover
    from ..model import Trajectory

EVENT_NAME = "gen_ai.evaluation.result"
SCOPE = "trajcheck"
#: The explanation sent in place of the outcome's reason unless explanations are asked for.
WITHHELD = ("withheld: the reason may quote the case's expected values "
            "(trajcheck eval --events-explanations sends it)")


def _sdk() -> Any:
    try:
        from opentelemetry.sdk import _logs as logs
    except ImportError as e:  # pragma: no cover - the 'otel' extra installs it
        raise EngineError("evaluation events need opentelemetry-sdk: "
                          "pip install 'trajcheck[otel]'") from e
    return logs


def result_events(r: RunResult | ResultRow, *,
                  explanations: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events of one run.

    Args:
        r: the run's result (a local ``RunResult`` or an engine's ``ResultRow``).
        explanations: send the outcome's reason as task_success's explanation; when False
            :data:`WITHHELD` is sent in its place (module docstring).

    Returns:
        ``(evaluation name, attributes)`` per event, names and attributes as in the module
        docstring.
    """
    def attrs(name: str, value: float | None, label: str | None,
              why: str | None = None) -> dict[str, Any]:
        a: dict[str, Any] = {"gen_ai.evaluation.name": name,
                             "trajcheck.case_id": r.case_id, "trajcheck.run_id": r.run_id}
        if value is not None:
            a["gen_ai.evaluation.score.value"] = float(value)
        if label is not None:
            a["gen_ai.evaluation.score.label"] = label
        if why:
            a["gen_ai.evaluation.explanation"] = why
        return a

    why = r.outcome_reason if explanations or not r.outcome_reason else WITHHELD
    yield "trajcheck.task_success", attrs("trajcheck.task_success", 1.0 if r.success else 0.0,
                                          "pass" if r.success else "fail", why)
    if r.f1 is not None:
        yield "trajcheck.tool_call_f1", attrs("trajcheck.tool_call_f1", r.f1,
                                              "pass" if r.f1 == 1 else "fail")
    if r.precision is not None:
        yield "trajcheck.tool_call_precision", attrs("trajcheck.tool_call_precision", r.precision, None)
    if r.recall is not None:
        yield "trajcheck.tool_call_recall", attrs("trajcheck.tool_call_recall", r.recall, None)
    if r.composite is not None:
        lab = None if r.composite_passed is None else ("pass" if r.composite_passed else "fail")
        yield "trajcheck.composite", attrs("trajcheck.composite", r.composite, lab)
    order = (r.metrics.get("ordering") or {}).get("score")
    if isinstance(order, (int, float)):
        yield "trajcheck.ordering_accuracy", attrs("trajcheck.ordering_accuracy", order, None)


def root_span(traj: Trajectory | None) -> tuple[str | None, str | None]:
    """(trace id, span id of the run's root step -- the first step with a span and no
    parent, else the first with a span) as the trace carries them, or Nones."""
    if traj is None or not traj.trace_id:
        return None, None
    span = next((s.span_id for s in traj.steps if s.span_id and not s.parent_id), None)
    span = span or next((s.span_id for s in traj.steps if s.span_id), None)
    return str(traj.trace_id), (str(span) if span else None)


def _ids(trace_id: str | None, span_id: str | None) -> tuple[int, int] | None:
    """(trace id, span id) as integers when both are non-zero hex, else None."""
    if not trace_id:
        return None
    try:
        tid = int(trace_id, 16)
        sid = int(span_id, 16) if span_id else 0
    except ValueError:
        return None
    return (tid, sid) if tid and sid else None


def _span_context(traj: Trajectory | None) -> tuple[int, int] | None:
    """(trace id, span id) of the run's root span, as integers, when the trace has them."""
    return _ids(*root_span(traj))


class ResultRow:
    """The figures ``result_events`` reads, from one row of an engine's per-run results
    (``engines.batch.RESULT_FIELDS``), so that engines emit the events a local eval emits."""

    def __init__(self, row: Any) -> None:
        self.case_id: str = row["case_id"]
        self.run_id: str = row["run_id"]
        self.success: bool = row["success"]
        self.outcome_reason: str | None = row["outcome_reason"]
        self.f1: float | None = row["f1"]
        self.precision: float | None = row["precision"]
        self.recall: float | None = row["recall"]
        self.composite: float | None = row["composite"]
        self.composite_passed: bool | None = row["composite_passed"]
        o = row["ordering"]
        self.metrics: dict[str, Any] = {"ordering": {"score": o}} if o is not None else {}


class OtlpJsonFileExporter:
    """A ``LogRecordExporter`` writing OTLP JSON: one ``ExportLogsServiceRequest`` per line,
    trace and span ids as hex strings (the OTLP JSON encoding), appended to ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.write_text("", encoding="utf-8")
        self._lock = threading.Lock()

    def export(self, batch: Sequence[Any]) -> Any:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        msg = MessageToDict(encode_logs(batch))
        for rl in msg.get("resourceLogs", ()):
            for sl in rl.get("scopeLogs", ()):
                for rec in sl.get("logRecords", ()):
                    for k in ("traceId", "spanId"):
                        if k in rec:  # protobuf JSON writes bytes as base64; OTLP JSON wants hex
                            import base64

                            rec[k] = base64.b64decode(rec[k]).hex()
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(msg, ensure_ascii=False) + "\n")
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Writes are synchronous."""
        return True


class EvaluationEmitter:
    """Emits the events of scored runs through an OpenTelemetry ``LoggerProvider``.

    ``exporters``: ``LogRecordExporter`` objects (``OtlpJsonFileExporter``, the SDK's
    ``OTLPLogExporter`` or ``InMemoryLogRecordExporter``). Call ``emit(result, trajectory)``
    per run (the pipeline's ``on_result`` hook) and ``close()`` at the end (flushes).
    ``explanations``: send outcome reasons (see :func:`result_events`).
    """

    def __init__(self, exporters: Sequence[Any], *, batch: bool = True,
                 explanations: bool = False) -> None:
        logs = _sdk()
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, SimpleLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        from .. import __version__

        self.provider = logs.LoggerProvider(resource=Resource.create(
            {"service.name": "trajcheck", "service.version": __version__}))
        for e in exporters:
            self.provider.add_log_record_processor(
                BatchLogRecordProcessor(e) if batch else SimpleLogRecordProcessor(e))
        self.logger = self.provider.get_logger(SCOPE, __version__)
        self.explanations = explanations
        self.n = 0

    def emit(self, r: RunResult, traj: Trajectory | None = None) -> None:
        """Emit one event per metric of ``r``, attached to ``traj``'s span when known."""
        resp = traj.metadata.get("response_id") if traj is not None else None
        self._emit(r, _span_context(traj), resp)

    def emit_rows(self, rows: Iterable[Any]) -> None:
        """Emit the events of an engine's per-run result rows (mappings with the
        ``engines.batch.RESULT_FIELDS`` keys), in the order given (engines sort by ``seq``):
        the events a local eval emits for the same runs."""
        for row in rows:
            self._emit(ResultRow(row), _ids(row["trace_id"], row["span_id"]), row["response_id"])

    def _emit(self, r: RunResult | ResultRow, ids: tuple[int, int] | None, resp: Any) -> None:
        from opentelemetry import trace
        from opentelemetry._logs import SeverityNumber

        ctx = None
        if ids is not None:
            sc = trace.SpanContext(ids[0], ids[1], is_remote=True,
                                   trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED))
            ctx = trace.set_span_in_context(trace.NonRecordingSpan(sc))
        for _, a in result_events(r, explanations=self.explanations):
            if isinstance(resp, str):
                a["gen_ai.response.id"] = resp
            self.logger.emit(event_name=EVENT_NAME, attributes=a, context=ctx,
                             severity_number=SeverityNumber.INFO)
            self.n += 1

    def close(self) -> None:
        """Flush and shut the exporters down."""
        self.provider.force_flush()
        self.provider.shutdown()


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine: ``localhost``, 127.0.0.0/8 or ``::1``."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def emitter_for(path: str | None = None, endpoint: str | None = None, *,
                explanations: bool = False) -> EvaluationEmitter:
    """An emitter for the CLI's ``--events`` / ``--otlp-endpoint``.

    Args:
        path: write OTLP JSON lines here.
        endpoint: send OTLP/HTTP here (the full logs URL, e.g.
            ``http://127.0.0.1:4318/v1/logs``); a loopback endpoint ignores proxy settings.
        explanations: send the outcome's reason (it may quote expected values).

    Returns:
        An ``EvaluationEmitter`` over those sinks.

    Raises:
        EngineError: neither sink given, or the HTTP exporter not installed.
    """
    exporters: list[Any] = []
    if path:
        exporters.append(OtlpJsonFileExporter(path))
    if endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        except ImportError as e:  # pragma: no cover
            raise EngineError("--otlp-endpoint needs opentelemetry-exporter-otlp-proto-http: "
                              "pip install 'trajcheck[otel]'") from e
        session = None
        if is_loopback_url(endpoint):
            import requests  # the exporter's own HTTP client

            session = requests.Session()
            session.trust_env = False  # no http_proxy / netrc for this machine's collector
        exporters.append(OTLPLogExporter(endpoint=endpoint, timeout=10, session=session))
    if not exporters:
        raise EngineError("evaluation events need a file or an endpoint")
    return EvaluationEmitter(exporters, explanations=explanations)


__all__ = ["EVENT_NAME", "WITHHELD", "EvaluationEmitter", "OtlpJsonFileExporter", "ResultRow",
           "emitter_for", "is_loopback_url", "result_events", "root_span"]
