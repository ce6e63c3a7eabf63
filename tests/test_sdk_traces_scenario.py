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
# each call's output text is recorded as the tool returned it; "errors" = the failed call's
# result is flagged; "usage" = per-turn token usage is recorded
ARTIFACTS: list[tuple[str, str, str, set[str]]] = [
    ("smolagents", "run_result.json", "smolagents", {"outputs", "usage", "user"}),
    ("smolagents", "memory_steps.json", "smolagents", {"outputs", "usage", "user"}),
    ("autogen", "task_result.json", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "run_stream.jsonl", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "team_state.json", "autogen", {"outputs", "usage", "user"}),
    ("autogen", "agent_state.json", "autogen", {"outputs", "user"}),  # a model context has no usage
    ("langchain", "astream_events.jsonl", "langchain_events", {"outputs", "usage", "user"}),
]


def truth(sdk: str) -> dict[str, Any]:
    return json.loads((D / sdk / "truth.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("sdk", "name", "fmt", "has"), ARTIFACTS, ids=[f"{a[0]}/{a[1]}" for a in ARTIFACTS])
def test_sdk_artifact_reads_as_the_scenario(sdk: str, name: str, fmt: str, has: set[str]) -> None:
    want = truth(sdk)
    res = load(D / sdk / name)
    assert res.formats == {fmt: 1}, (res.formats, res.problems)
    assert res.problems == []
    (t,) = res
    assert [(c.name, c.args) for c in t.tool_calls()] == [(c["name"], c["args"]) for c in want["calls"]]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == want["call_steps"]
    results = t.tool_results()
    assert [r.is_error for r in results] == [c["is_error"] for c in want["calls"]]
    if "outputs" in has:
        for r, c in zip(results, want["calls"]):
            if c["is_error"]:
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
