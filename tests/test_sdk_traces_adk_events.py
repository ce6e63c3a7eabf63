"""Google ADK's own output read exactly (issue 28): the events run_async yields, logged one per
line (two runs interleaved: grouped by invocation_id), with a tool that raised caught by ADK's
ReflectAndRetryToolPlugin; and a session whose tool returned ADK's documented
{"status": "error"} failure. Written by google-adk 2.13.0 (scripts/sdk_traces/adk_run.py, a
scripted BaseLlm, no network); the truth beside each file comes from the scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.read.traces import load
from trajcheck.read.traces.stream import read_row, stream

DATA = Path(__file__).parent / "data" / "sdk_traces" / "adk"


def _check(t, truth: dict) -> None:
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        (c["name"], c["args"], c["call_id"]) for c in truth["calls"]]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [len(g) for g in truth["parallel_groups"]]
    results = t.tool_results()
    assert [r.call_id for r in results] == [truth["calls"][x["call"]]["call_id"] for x in truth["results"]]
    assert [r.is_error for r in results] == [x["is_error"] for x in truth["results"]]
    for r, want in zip(results, truth["results"]):
        assert want["output"] in json.dumps(r.output, ensure_ascii=False)
        if want["is_error"]:
            assert want["output"] in r.error
    assert t.final_response == truth["final_response"]
    assert t.user_input == truth["user_input"]
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (
        truth["usage"]["input_tokens"], truth["usage"]["output_tokens"])


@pytest.mark.parametrize("how", ["load", "stream"])
def test_event_log_reads_one_run_per_invocation(how: str) -> None:
    truth = json.loads((DATA / "events.truth.json").read_text(encoding="utf-8"))
    p = DATA / "events.jsonl"
    if how == "load":
        res = load(p)
        assert res.sources[str(p)].grouped == {"vertex": "14 ADK events grouped into 2 runs by invocation_id"}
        runs, problems, unread = list(res), res.problems, res.unread
    else:
        s = stream(p)
        runs, problems, unread = list(s), s.problems, s.unread
    assert len(runs) == truth["runs"] == 2 and problems == [] and unread == []
    invs = [json.loads(x)["invocation_id"] for x in p.read_text(encoding="utf-8").splitlines()[:2]]
    assert [t.metadata["invocation_id"] for t in runs] == invs
    for t in runs:
        _check(t, truth)
    failed = runs[0].tool_results()[2]
    assert failed.output["response_type"] == truth["plugin_failure"]["response_type"]
    assert failed.error == "RuntimeError: Kein Zimmer frei vom 24. bis 26. Dezember"


def test_session_with_status_error_reads_exactly() -> None:
    truth = json.loads((DATA / "session_status_error.truth.json").read_text(encoding="utf-8"))
    res = load(DATA / "session_status_error.json")
    assert len(res) == 1 and res.problems == [] and res.unread == []
    _check(res[0], truth)


def test_one_event_in_an_engine_row_is_named_not_read_alone() -> None:
    line = (DATA / "events.jsonl").read_text(encoding="utf-8").splitlines()[0]
    got: list[str] = []
    trajs, problems = read_row(line, "row 0", unread=got)
    assert trajs == [] and "not one row at a time; skipped" in problems[0]
    assert got and "2 tool call(s): function_call (2)" in got[0]
