"""OpenAI Responses API calls logged one record per call and linked by previous_response_id
(issue 28): the real openai SDK (scripts/sdk_traces/openai_responses_run.py, a scripted
Responses API on 127.0.0.1, two conversations interleaved) wrote the logs; each chain reads as
one run, exactly as the truth written from the scenario says, by load and by the stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.read.traces import load
from trajcheck.read.traces.stream import read_row, stream

DATA = Path(__file__).parent / "data" / "sdk_traces" / "openai_responses"


def _truth(name: str) -> dict:
    return json.loads((DATA / f"{name}.truth.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["response_log", "responses_only"])
@pytest.mark.parametrize("how", ["load", "stream"])
def test_each_chain_reads_as_one_run_exactly(name: str, how: str) -> None:
    truth = _truth(name)
    p = DATA / f"{name}.jsonl"
    if how == "load":
        res = load(p)
        assert res.sources[str(p)].grouped == {
            "openai_responses": "8 responses grouped into 2 runs by previous_response_id"}
        runs, problems, unread = list(res), res.problems, res.unread
    else:
        s = stream(p)
        runs = list(s)
        problems, unread = s.problems, s.unread
    assert len(runs) == truth["runs"] == 2 and problems == [] and unread == []
    assert [t.metadata["response_ids"] for t in runs] == [[f"resp_{c}{i}" for i in range(4)] for c in "ab"]
    for t in runs:
        assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
            (c["name"], c["args"], c["call_id"]) for c in truth["calls"]]
        assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [len(g) for g in truth["parallel_groups"]]
        results = t.tool_results()
        assert [r.call_id for r in results] == [truth["calls"][x["call"]]["call_id"] for x in truth["results"]]
        assert [r.is_error for r in results] == [x["is_error"] for x in truth["results"]]
        for r, want in zip(results, truth["results"]):
            prefix = truth["error_text_prefix"] if want["output"].startswith("Kein Zimmer") else ""
            assert r.output == prefix + want["output"]
        assert t.final_response == truth["final_response"]
        assert t.user_input == truth["user_input"]
        assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (
            truth["usage"]["input_tokens"], truth["usage"]["output_tokens"])


def _records() -> list[dict]:
    return [json.loads(x) for x in (DATA / "response_log.jsonl").read_text(encoding="utf-8").splitlines()]


def test_case_id_from_the_root_response_metadata_and_a_missing_link_is_named(tmp_path: Path) -> None:
    recs = _records()
    recs[0]["metadata"] = {"case_id": "reise-zh"}
    p = tmp_path / "log.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    assert [t.metadata.get("case_id") for t in load(p)] == ["reise-zh", None]
    # the log of conversation b starts at its second call: what is there is read, the gap named
    q = tmp_path / "cut.jsonl"
    q.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for i, r in enumerate(recs) if i != 1),
                 encoding="utf-8")
    res = load(q)
    assert [len(t.tool_calls()) for t in res] == [4, 2]
    assert res.problems[0] == (f"{q}:3: response 'resp_b1' continues 'resp_b0', which is not among the records; "
                               "read without the calls before it")


def test_an_engine_row_never_reads_a_continuation_alone() -> None:
    recs = _records()
    got: list[str] = []
    trajs, problems = read_row(json.dumps(recs[2], ensure_ascii=False), "row 2", unread=got)
    assert trajs == [] and "not one row at a time; skipped" in problems[0]
    assert got and "which a row read alone cannot join into its openai_responses run" in got[0]
    # the whole chain in one row (an engine's group-by) reads as load reads it
    chain = [r for r in recs if r["id"].startswith("resp_a")]
    trajs, problems = read_row(json.dumps(chain, ensure_ascii=False), "row 0", whole=True)
    assert len(trajs) == 1 and len(trajs[0].tool_calls()) == 4 and problems == []


def test_a_json_list_of_the_logged_responses_reads_the_same(tmp_path: Path) -> None:
    p = tmp_path / "log.json"
    p.write_text(json.dumps(_records(), ensure_ascii=False), encoding="utf-8")
    res = load(p)
    want = load(DATA / "response_log.jsonl")
    assert res.problems == [] and [t.to_dict() for t in res] == [t.to_dict() for t in want]
