"""Message lists that real SDKs wrote (issue 28): google-genai, Bedrock Converse (boto3),
Cohere v2, Mistral, Haystack, Semantic Kernel and LlamaIndex, each driven by its producer under scripts/sdk_traces/ against a scripted
model on 127.0.0.1 (``make sdk-traces``), read exactly: calls and nested non-ASCII arguments,
call ids, the parallel pair as one step, the failure then the retry with each format's own
error flag, the final answer, usage where the artifact records it. The truth beside each
artifact was written from the scenario, not from trajcheck."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.read.traces import load

DATA = Path(__file__).parent / "data" / "sdk_traces"
ARTIFACTS = sorted(p for p in DATA.glob("*/*.json") if not p.name.endswith(".truth.json")
                   and p.with_name(p.stem + ".truth.json").exists())


def test_the_producers_artifacts_are_there() -> None:
    names = {f"{p.parent.name}/{p.name}" for p in ARTIFACTS}
    assert {"google_genai/chat_history.json", "google_genai/response.json", "bedrock_converse/messages.json",
            "cohere_v2/messages.json", "mistral/messages.json", "haystack/messages.json",
            "semantic_kernel/chat_history.json", "llamaindex/memory.json"} <= names


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_sdk_artifact_reads_exactly(path: Path) -> None:
    truth = json.loads(path.with_name(path.stem + ".truth.json").read_text(encoding="utf-8"))
    res = load(path)
    assert len(res) == 1 and res.problems == [] and res.unread == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        (c["name"], c["args"], c["call_id"]) for c in truth["calls"]]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [len(g) for g in truth["parallel_groups"]]
    results = t.tool_results()
    assert [r.call_id for r in results] == [truth["calls"][x["call"]]["call_id"] for x in truth["results"]]
    assert [r.is_error for r in results] == [x["is_error"] for x in truth["results"]]
    outs = truth.get("result_outputs")
    for i, (r, want) in enumerate(zip(results, truth["results"])):
        if outs is not None:
            assert r.output == outs[i]
        elif want["is_error"] or (i == 2 and truth.get("error_text_prefix")):
            # the failure's text as the SDK wrote it: the tool's message, maybe wrapped
            assert want["output"] in str(r.output)
            if truth.get("error_text_prefix"):
                assert r.output == truth["error_text_prefix"] + want["output"]
        else:
            assert r.output == want["output"]
    assert t.final_response == truth["final_response"]
    assert t.user_input == truth["user_input"]
    if truth["usage"] is None:
        assert t.total_usage is None
    else:
        assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (
            truth["usage"]["input_tokens"], truth["usage"]["output_tokens"])


def test_same_scenario_reads_the_same_whatever_the_provider() -> None:
    """One normaliser: every provider's list gives the same calls, groups and answer."""
    seen = set()
    for p in ARTIFACTS:
        t = load(p)[0]
        seen.add((tuple((c.name, json.dumps(c.args, sort_keys=True)) for c in t.tool_calls()),
                  tuple(len(s.tool_calls) for s in t.steps if s.tool_calls), t.final_response))
    assert len(seen) == 1


def test_cohere_and_mistral_failures_have_no_flag_but_the_hint_names_a_pattern(tmp_path) -> None:
    from trajcheck.hints import error_pattern_hint

    for sdk in ("cohere_v2", "mistral"):
        t = load(DATA / sdk / "messages.json")[0]
        hint = error_pattern_hint([t])
        assert hint is not None and "1 of 4 tool results" in hint
