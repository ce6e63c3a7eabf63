"""OTel span rows for the engine tests: GenAI-convention spans of 12 traces (a chat span and
one or two ``execute_tool get_weather`` spans each, some failing, some with the wrong city),
one span per row with its trace id, case id and position, rows of different traces
interleaved; the cases they belong to; and the local scorecard of the same spans read from
a JSONL file (``traces.load`` groups spans by trace id)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from trajcheck.cli.eval_cmd import _note_reading
from trajcheck.engines.batch import with_case_id
from trajcheck.model import Case, ExpectedCall
from trajcheck.read.traces import load
from trajcheck.score.pipeline import evaluate_stream


def _attr(k: str, v: object) -> dict:
    return {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}


def span_rows(n_traces: int = 12, seed: int = 3) -> list[dict]:
    """Rows ``{trace_id, span, case_id, pos}``; ``span`` is one span's OTLP JSON text."""
    rnd = random.Random(seed)
    per_trace: list[list[dict]] = []
    t0 = 1_795_975_116_000_000_000
    for i in range(n_traces):
        tid = f"{i + 1:032x}"
        root = f"{i + 1:08x}00000000"
        start = t0 + i * 10_000_000_000
        spans = [{"traceId": tid, "spanId": root, "name": "chat gpt-4o", "kind": 3,
                  "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 400_000_000),
                  "attributes": [_attr("gen_ai.operation.name", "chat"),
                                 _attr("gen_ai.request.model", "gpt-4o"),
                                 _attr("gen_ai.usage.input_tokens", 50 + i),
                                 _attr("gen_ai.usage.output_tokens", 10)], "status": {}}]
        cities = ["Oslo" if i % 3 else "Paris"] + (["Bergen"] if i % 4 == 1 else [])
        for j, city in enumerate(cities):
            s = start + 500_000_000 + j * 100_000_000
            sp = {"traceId": tid, "spanId": f"{i + 1:08x}{j + 1:08x}", "parentSpanId": root,
                  "name": "execute_tool get_weather", "kind": 1,
                  "startTimeUnixNano": str(s), "endTimeUnixNano": str(s + 50_000_000),
                  "attributes": [_attr("gen_ai.operation.name", "execute_tool"),
                                 _attr("gen_ai.tool.name", "get_weather"),
                                 _attr("gen_ai.tool.call.id", f"call_{j}"),
                                 _attr("gen_ai.tool.call.arguments", json.dumps({"city": city}))],
                  "status": {}}
            if i % 5 == 2:
                sp["attributes"].append(_attr("error.type", "TimeoutError"))
                sp["status"] = {"code": 2, "message": "timed out"}
            spans.append(sp)
        per_trace.append(spans)
    # interleave the traces' spans, each trace's own spans staying in order
    rows: list[dict] = []
    queues = [list(s) for s in per_trace]
    while any(queues):
        q = rnd.choice([q for q in queues if q])
        sp = q.pop(0)
        i = int(sp["traceId"], 16) - 1
        rows.append({"trace_id": sp["traceId"], "span": json.dumps(sp), "case_id": f"w{i % 4}",
                     "pos": len(rows)})
    return rows


def span_cases() -> dict[str, Case]:
    return {f"w{k}": Case(id=f"w{k}", input="weather in Oslo?",
                          expected_calls=(ExpectedCall("get_weather", {"city": "Oslo"}),))
            for k in range(4)}


def local_scorecard(rows: list[dict], tmp: Path, n_boot: int = 200):
    """The local eval of the same spans: a JSONL file of the spans in row order, read by
    ``traces.load`` (one trajectory per trace id), each run given its trace's case id."""
    p = tmp / "spans.jsonl"
    p.write_text("".join(r["span"] + "\n" for r in rows))
    case_of = {r["trace_id"]: r["case_id"] for r in rows}
    res = load(p)
    trajs = [with_case_id(t, case_of[t.trace_id]) for t in res]
    sc = evaluate_stream(trajs, span_cases(), n_boot=n_boot)
    _note_reading(sc, res)  # how `trajcheck eval` notes the formats read
    return sc


def span_runs_file(tmp: Path) -> tuple[Path, Path]:
    """The span rows' traces as a trajcheck JSONL file of runs (with their trace and span
    ids and case ids) and its cases file, for ``eval --events`` on an engine and locally."""
    rows = span_rows()
    p = tmp / "spans.jsonl"
    p.write_text("".join(r["span"] + "\n" for r in rows))
    case_of = {r["trace_id"]: r["case_id"] for r in rows}
    runs = tmp / "span_runs.jsonl"
    runs.write_text("".join(json.dumps(with_case_id(t, case_of[t.trace_id]).to_dict()) + "\n"
                            for t in load(p)))
    cases = tmp / "span_cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in span_cases().values()))
    return runs, cases


def event_records(path: Path) -> list[tuple]:
    """The evaluation events of an OTLP JSON lines file as comparable tuples (trace id,
    span id, event name, attributes), in file order; timestamps left out."""
    out = []
    for line in path.read_text().splitlines():
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    out.append((r.get("traceId"), r.get("spanId"), r.get("eventName"),
                                json.dumps(r["attributes"], sort_keys=True)))
    return out
