"""Bench: loading N overlapping OTel tool spans under one parent (issue 28: the grouping of
overlapping tool spans was quadratic, 8,000 spans took 3.3 s; the target is < 0.2 s).

Run: ``python bench/otel_overlap.py [N ...]`` (default 1000 2000 4000 8000). It builds one
OTLP document of N ``execute_tool`` spans, all children of one agent span, each starting 1 ms
after the previous one and lasting 10 s (so every span overlaps the group), reads it with
``trajcheck.read.traces.load`` and checks that the spans became one tool_call step of N calls.
Each figure is the best of 5 runs, wall and process CPU time (this host is shared: the CPU
time is the steadier one):

- grouping: ``_turns.build`` on the N tool runs alone (the part that was quadratic);
- load: ``load(document)``; from a JSON file: ``load(path)``, parsing included (what
  ``trajcheck eval FILE`` pays);
- after a model turn: the same N tool spans with call ids, after an LLM span that requested
  the N calls in reverse order (the pairing of runs with requested calls, ``_turns._order``);
- floor: plain Python reading the same document to the same groups -- attributes flattened,
  times and arguments parsed (``json.loads``), spans sorted by start and swept into groups by
  their running latest end -- and the ratio load / floor (CPU).

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
AGENT = "00000000000000ff"
LLM = "00000000000000fe"


def _attr(k: str, v: str) -> dict:
    return {"key": k, "value": {"stringValue": v}}


def document(n: int, model_turn: bool = False) -> dict:
    """One OTLP document: an agent span and N overlapping ``execute_tool`` spans under it;
    with ``model_turn``, an LLM span first that requested the N calls (in reverse order) and
    tool spans that carry the call ids."""
    spans = [{"traceId": "ab" * 16, "spanId": AGENT, "name": "invoke_agent",
              "startTimeUnixNano": str(T0 - 2), "endTimeUnixNano": str(T0 + 20 * 10**9),
              "attributes": [_attr("gen_ai.operation.name", "invoke_agent")]}]
    if model_turn:
        asked = [{"type": "tool_call", "id": f"call_{i}", "name": "lookup", "arguments": {"i": i}}
                 for i in reversed(range(n))]
        spans.append({"traceId": "ab" * 16, "spanId": LLM, "parentSpanId": AGENT, "name": "chat m",
                      "startTimeUnixNano": str(T0 - 1), "endTimeUnixNano": str(T0),
                      "attributes": [_attr("gen_ai.operation.name", "chat"),
                                     _attr("gen_ai.output.messages",
                                           json.dumps([{"role": "assistant", "parts": asked}]))]})
    for i in range(n):
        a = [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", "lookup"),
             _attr("gen_ai.tool.call.arguments", f'{{"i": {i}}}')]
        if model_turn:
            a.append(_attr("gen_ai.tool.call.id", f"call_{i}"))
        spans.append({"traceId": "ab" * 16, "spanId": f"{i + 1:016x}", "parentSpanId": AGENT,
                      "name": "execute_tool lookup", "startTimeUnixNano": str(T0 + i * 10**6),
                      "endTimeUnixNano": str(T0 + i * 10**6 + 10 * 10**9), "attributes": a})
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def runs(n: int) -> list[ToolRun]:
    return [ToolRun(call=ToolCall(name="lookup", args={"i": i}), result=ToolResult(call_id=None, name="lookup", output=i),
                    start=i / 1000, end=i / 1000 + 10.0, parent_id="ff") for i in range(n)]


def floor(doc: dict) -> list[list[tuple]]:
    """The plain-Python floor: the document's tool spans as (start, end, parent, name, args)
    rows, grouped as trajcheck groups them (sorted by start and end, a span joins the group
    when it starts under the group's parent before the group's latest end)."""
    rows = []
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                a = {kv["key"]: kv["value"].get("stringValue") for kv in sp.get("attributes", ())}
                if a.get("gen_ai.operation.name") != "execute_tool":
                    continue
                rows.append((int(sp["startTimeUnixNano"]) / 1e9, int(sp["endTimeUnixNano"]) / 1e9,
                             sp.get("parentSpanId"), a.get("gen_ai.tool.name"),
                             json.loads(a.get("gen_ai.tool.call.arguments") or "{}")))
    rows.sort(key=lambda r: (r[0], r[1]))
    groups: list[list[tuple]] = []
    end, parent = 0.0, None
    for r in rows:
        if groups and r[2] == parent and r[0] < end:
            groups[-1].append(r)
            end = max(end, r[1])
        else:
            groups.append([r])
            end, parent = r[1], r[2]
    return groups


def best_of(fn, k: int = 5) -> tuple[float, float]:
    """Best wall and best process CPU time of ``k`` calls of ``fn``, in seconds."""
    wall = cpu = float("inf")
    for _ in range(k):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu = min(cpu, time.process_time() - c)
        wall = min(wall, time.perf_counter() - w)
    return wall, cpu


def main(sizes: list[int]) -> None:
    for n in sizes:
        doc = document(n)
        res = load(doc)
        steps = [s for s in res[0].steps if s.kind == "tool_call"]
        assert len(steps) == 1 and len(steps[0].tool_calls) == n, (len(steps), res.problems[:3])
        assert [len(g) for g in floor(doc)] == [n]
        rs = runs(n)
        sl = StepList()
        build(rs, sl)
        assert [len(s.tool_calls) for s in sl.steps if s.kind == "tool_call"] == [n]
        turn_doc = document(n, model_turn=True)
        (t,) = load(turn_doc)
        (step,) = [s for s in t.steps if s.kind == "tool_call"]
        assert [c.call_id for c in step.tool_calls] == [f"call_{i}" for i in reversed(range(n))]
        grouping = best_of(lambda rs=rs: build(rs, StepList()))
        whole = best_of(lambda doc=doc: load(doc))
        turn = best_of(lambda d=turn_doc: load(d))
        fl = best_of(lambda doc=doc: floor(doc))
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "spans.json"
            f.write_text(json.dumps(doc), encoding="utf-8")
            from_file = best_of(lambda f=f: load(f))
        print(f"{n:>6} overlapping tool spans (wall / CPU s): grouping {grouping[0]:.3f} / {grouping[1]:.3f}, "
              f"load {whole[0]:.3f} / {whole[1]:.3f}, from a JSON file {from_file[0]:.3f} / {from_file[1]:.3f}, "
              f"after a model turn {turn[0]:.3f} / {turn[1]:.3f}; floor {fl[0]:.3f} / {fl[1]:.3f}, "
              f"load / floor {whole[1] / fl[1]:.1f}x (CPU)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 2000, 4000, 8000])
