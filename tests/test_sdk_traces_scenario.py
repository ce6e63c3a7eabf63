"""Traces that real SDKs wrote running the scripted scenario (scripts/sdk_traces/scenario.py;
producers beside it, ``make sdk-traces``), read exactly: each artifact under
tests/data/sdk_traces/<sdk>/ is compared with the truth.json the producer wrote from the
scenario (calls and their arguments in order, the parallel grouping, each result's error flag
and output, the final answer, the summed usage, the user's request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.read.traces import load

D = Path(__file__).parent / "data" / "sdk_traces"

# (sdk folder, artifact, format it must be read as, what the artifact records): "outputs" when
# each call's output text is recorded as the tool returned it; "usage" = per-turn token usage is
# recorded; "user" = the request is recorded; "no error flag" = the format has no error field
# (results' is_error must then be None, never a guess); "2 runs" = the file holds the scenario
# run twice (per-call records that must be grouped into runs)
ARTIFACTS: list[tuple[str, str, str, set[str]]] = [
    ("smolagents", "run_result.json", "smolagents", {"outputs", "usage", "user"}),
    ("smolagents", "memory_steps.json", "smolagents", {"outputs", "usage", "user"}),
    ("autogen", "task_result.json", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "run_stream.jsonl", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "team_state.json", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "agent_state.json", "autogen", {"outputs", "user"}),  # a model context has no usage
    ("langchain", "astream_events.jsonl", "langchain_events", {"outputs", "usage", "user"}),
    ("litellm", "standard_logging.jsonl", "litellm", {"outputs", "usage", "user", "no error flag", "2 runs"}),
]


def truth(sdk: str) -> dict[str, Any]:
    return json.loads((D / sdk / "truth.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("sdk", "name", "fmt", "has"), ARTIFACTS, ids=[f"{a[0]}/{a[1]}" for a in ARTIFACTS])
def test_sdk_artifact_reads_as_the_scenario(sdk: str, name: str, fmt: str, has: set[str]) -> None:
    want = truth(sdk)
    res = load(D / sdk / name)
    runs = 2 if "2 runs" in has else 1
    assert res.formats == {fmt: runs}, (res.formats, res.problems)
    assert res.problems == []
    for t in res:
        check_run(t, want, has)


def check_run(t, want: dict[str, Any], has: set[str]) -> None:
    assert [(c.name, c.args) for c in t.tool_calls()] == [(c["name"], c["args"]) for c in want["calls"]]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == want["call_steps"]
    results = t.tool_results()
    assert [r.is_error for r in results] == (
        [None] * len(results) if "no error flag" in has else [c["is_error"] for c in want["calls"]])
    if "outputs" in has:
        for r, c in zip(results, want["calls"]):
            if c["is_error"] and "no error flag" not in has:
                assert c["output"] in str(r.output)
            else:
                assert r.output == c["output"]
    # results joined to their calls by id (or position)
    assert [c.name for c, _ in t.pairs()] == [c["name"] for c in want["calls"]]
    assert t.final_response == want["final_response"]
    if "usage" in has:
        assert t.total_usage is not None
        assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (
            want["usage"]["input_tokens"], want["usage"]["output_tokens"])
    if "user" in has:
        assert t.user_input == want["user"]


def test_autogen_run_stream_of_two_runs_splits_at_the_second_task(tmp_path: Path) -> None:
    lines = (D / "autogen" / "run_stream.jsonl").read_text(encoding="utf-8").splitlines()
    p = tmp_path / "two.jsonl"
    p.write_text("\n".join(lines + lines) + "\n", encoding="utf-8")
    res = load(p)
    assert res.formats == {"autogen": 2} and res.problems == []
    want = truth("autogen")
    for t in res:
        assert [c.name for c in t.tool_calls()] == [c["name"] for c in want["calls"]]
        assert t.final_response == want["final_response"]


def test_litellm_calls_without_shared_trace_ids_grouped_by_message_chain(tmp_path: Path) -> None:
    # no litellm_trace_id / session given: LiteLLM writes a new trace id per call; each call's
    # prompt is the previous call's prompt and response, so the calls still form the two runs
    recs = [json.loads(x) for x in (D / "litellm" / "standard_logging.jsonl").read_text(encoding="utf-8").splitlines()]
    for i, r in enumerate(recs):
        r["trace_id"], r["session_id"] = f"uuid-{i}", ""
    p = tmp_path / "calls.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in recs), encoding="utf-8")
    res = load(p)
    assert res.formats == {"litellm": 2}
    assert [t.metadata["model_calls"] for t in res] == [4, 4]
    assert {t.metadata["grouped_by"] for t in res} == {"message chain"}
    assert "8 records grouped into 2 runs by message chain" in res.sources[str(p)].describe()
    for t in res:
        check_run(t, truth("litellm"), {"outputs", "usage", "user", "no error flag"})
