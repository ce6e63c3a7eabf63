"""Bench: loading N overlapping OTel tool spans under one parent (issue 28: the grouping of
overlapping tool spans was quadratic, 8,000 spans took 3.3 s; the target is < 0.2 s).

Run: ``python bench/otel_overlap.py [N ...]`` (default 1000 2000 4000 8000). It builds one
OTLP document of N ``execute_tool`` spans, all children of one agent span, each starting 1 ms
after the previous one and lasting 10 s (so every span overlaps the group), reads it with
``trajcheck.traces.load`` (best of 3 wall times, in seconds) and checks that the spans became
one tool_call step of N calls. It also times the grouping alone (``_turns.build`` on the N
tool runs, the part that was quadratic), apart from decoding the OTLP document, and the load
of the same document from a JSON file (parsing included: what ``trajcheck eval FILE`` pays).
Last recorded run: bench/otel_overlap_last_run.md.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from trajcheck.model import ToolCall, ToolResult
from trajcheck.read.traces import load
from trajcheck.read.traces._turns import ToolRun, build
from trajcheck.read.traces._util import StepList

T0 = 1_750_000_000_000_000_000  # ns


def document(n: int) -> dict:
    def attr(k: str, v: str) -> dict:
        return {"key": k, "value": {"stringValue": v}}

    spans = [{"traceId": "ab" * 16, "spanId": "00000000000000ff", "name": "invoke_agent",
              "startTimeUnixNano": str(T0 - 1), "endTimeUnixNano": str(T0 + 20 * 10**9),
              "attributes": [attr("gen_ai.operation.name", "invoke_agent")]}]
    for i in range(n):
        spans.append({"traceId": "ab" * 16, "spanId": f"{i + 1:016x}", "parentSpanId": "00000000000000ff",
                      "name": "execute_tool lookup", "startTimeUnixNano": str(T0 + i * 10**6),
                      "endTimeUnixNano": str(T0 + i * 10**6 + 10 * 10**9),
                      "attributes": [attr("gen_ai.operation.name", "execute_tool"),
                                     attr("gen_ai.tool.name", "lookup"),
                                     attr("gen_ai.tool.call.arguments", f'{{"i": {i}}}')]})
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def runs(n: int) -> list[ToolRun]:
    return [ToolRun(call=ToolCall(name="lookup", args={"i": i}), result=ToolResult(call_id=None, name="lookup", output=i),
                    start=i / 1000, end=i / 1000 + 10.0, parent_id="ff") for i in range(n)]


def best_of(fn, k: int = 3) -> float:
    best = float("inf")
    for _ in range(k):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(sizes: list[int]) -> None:
    for n in sizes:
        doc = document(n)
        res = load(doc)
        steps = [s for s in res[0].steps if s.kind == "tool_call"]
        assert len(steps) == 1 and len(steps[0].tool_calls) == n, (len(steps), res.problems[:3])
        rs = runs(n)
        sl = StepList()
        build(rs, sl)
        assert [len(s.tool_calls) for s in sl.steps if s.kind == "tool_call"] == [n]
        grouping = best_of(lambda rs=rs: build(rs, StepList()))
        whole = best_of(lambda doc=doc: load(doc))
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "spans.json"
            f.write_text(json.dumps(doc), encoding="utf-8")
            from_file = best_of(lambda f=f: load(f))
        print(f"{n:>6} overlapping tool spans: grouping {grouping:.3f} s, whole load {whole:.3f} s, "
              f"from a JSON file {from_file:.3f} s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 2000, 4000, 8000])
