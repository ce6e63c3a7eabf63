"""LlamaIndex agent workflow events (issue 28: refused as not a trace): the events two
FunctionAgent runs streamed, serialised by the workflows package's own JsonSerializer, one per
line (scripts/sdk_traces/llamaindex_events_run.py: llama-index-core on llms.openai against a
scripted server on 127.0.0.1), read exactly -- one run per StopEvent, the raised booking failed
by the agent's own ToolOutput.is_error -- by load and by the stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.read.traces import load
from trajcheck.read.traces.stream import stream

DATA = Path(__file__).parent / "data" / "sdk_traces" / "llamaindex"


@pytest.mark.parametrize("how", ["load", "stream"])
def test_workflow_events_read_exactly(how: str) -> None:
    truth = json.loads((DATA / "workflow_events.truth.json").read_text(encoding="utf-8"))
    p = DATA / "workflow_events.jsonl"
    src = load(p) if how == "load" else stream(p)
    runs = list(src)
    assert src.formats == {"llamaindex_events": 2}
    assert len(runs) == truth["runs"] and src.problems == [] and src.unread == []
    for t in runs:
        assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
            (c["name"], c["args"], c["call_id"]) for c in truth["calls"]]
        assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [len(g) for g in truth["parallel_groups"]]
        results = t.tool_results()
        assert [(r.call_id, r.output, r.is_error) for r in results] == [
            (truth["calls"][x["call"]]["call_id"], x["output"], x["is_error"]) for x in truth["results"]]
        assert results[2].error == truth["results"][2]["output"]
        assert t.final_response == truth["final_response"]
        assert t.user_input == truth["user_input"]
        assert truth["usage"] is None and t.total_usage is None


def test_one_event_list_file_reads_the_same(tmp_path: Path) -> None:
    lines = (DATA / "workflow_events.jsonl").read_text(encoding="utf-8").splitlines()
    p = tmp_path / "events.json"
    p.write_text("[" + ",".join(lines) + "]", encoding="utf-8")
    assert [t.to_dict() for t in load(p)] == [t.to_dict() for t in load(DATA / "workflow_events.jsonl")]
