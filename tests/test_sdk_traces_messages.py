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
    check_exact(res[0], truth)


def check_exact(t, truth: dict) -> None:
    """``t`` read as the scenario's truth: calls, groups, results, answer, request, usage."""
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


# Bedrock model-invocation logs: boto3's requests and the model's answers of two interleaved
# trials, one record per call in the envelope Bedrock writes (scripts/sdk_traces/bedrock_converse_run.py)
INVOCATIONS = DATA / "bedrock_converse" / "invocation_log.jsonl"


def _invocation_records() -> list[dict]:
    return [json.loads(x) for x in INVOCATIONS.read_text(encoding="utf-8").splitlines()]


def test_bedrock_invocation_log_reads_each_trial_exactly() -> None:
    truth = json.loads(INVOCATIONS.with_name("invocation_log.truth.json").read_text(encoding="utf-8"))
    res = load(INVOCATIONS)
    assert res.formats == {"bedrock_invocations": 2} and res.problems == [] and res.unread == []
    # records A1 B1 A2 B2 ...: each call continues its own trial's conversation
    assert [t.trace_id for t in res] == ["req-A-1", "req-B-1"]
    for t in res:
        check_exact(t, truth)
        assert t.metadata["case_id"] == truth["case_id"] and t.metadata["model_calls"] == 4
        assert t.metadata["grouped_by"] == "message chain"
        assert [s.model for s in t.steps if s.kind in ("tool_call", "final_response")] == [
            "anthropic.claude-3-5-sonnet-20240620-v1:0"] * 4
    # per call usage, summed: (120+190+240+300, 40+30+31+45)
    assert (res[0].total_usage.input_tokens, res[0].total_usage.output_tokens) == (850, 146)


def test_bedrock_invocation_log_in_any_order_and_grouped_by_session_key(tmp_path: Path) -> None:
    recs = _invocation_records()
    shuffled = tmp_path / "shuffled.json"  # a JSON list, records out of time order
    shuffled.write_text(json.dumps(list(reversed(recs)), ensure_ascii=False), encoding="utf-8")
    res = load(shuffled)
    assert res.formats == {"bedrock_invocations": 2} and res.problems == []
    assert sorted(t.trace_id for t in res) == ["req-A-1", "req-B-1"]
    # a session key in requestMetadata groups by that key, whatever the messages say
    for r in recs:
        r["requestMetadata"]["session_id"] = "sess-" + r["requestMetadata"]["trial"]
    keyed = tmp_path / "keyed.jsonl"
    keyed.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    res = load(keyed)
    assert [t.trace_id for t in res] == ["requestMetadata.session_id=sess-A", "requestMetadata.session_id=sess-B"]
    assert {t.metadata["grouped_by"] for t in res} == {"requestMetadata.session_id"}
    assert all(len(t.tool_calls()) == 4 for t in res)


def test_bedrock_invocation_record_not_read_is_named_and_the_rest_kept(tmp_path: Path) -> None:
    recs = _invocation_records()
    titan = dict(recs[0], requestId="req-titan", operation="InvokeModel", modelId="amazon.titan-text-express-v1",
                 input={"inputBodyJson": {"inputText": "Hallo"}, "inputTokenCount": 2},
                 output={"outputBodyJson": {"results": [{"outputText": "Grüezi"}]}, "outputTokenCount": 2})
    failed = dict(recs[-1], errorCode="ThrottlingException")
    p = tmp_path / "mixed.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in [titan, *recs[:-1], failed]), encoding="utf-8")
    res = load(p)
    assert res.formats == {"bedrock_invocations": 2}
    assert len(res.problems) == 2
    assert "record 0 (requestId req-titan): operation 'InvokeModel', model 'amazon.titan-text-express-v1'" in \
        res.problems[0] and "not read" in res.problems[0]
    assert "model call failed: ThrottlingException" in res.problems[1]
    assert [len(t.tool_calls()) for t in res] == [4, 4]


def test_bedrock_invocation_log_of_anthropic_messages_bodies() -> None:
    # InvokeModel with Anthropic's Messages body: tool_use / tool_result blocks, is_error
    from trajcheck.read.traces import read

    def rec(i: int, msgs: list, answer: list, usage: tuple[int, int]) -> dict:
        return {"schemaType": "ModelInvocationLog", "schemaVersion": "1.0", "timestamp": f"2026-12-06T11:00:0{i}Z",
                "requestId": f"r{i}", "operation": "InvokeModel", "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
                "input": {"inputBodyJson": {"anthropic_version": "bedrock-2023-05-31", "messages": msgs}},
                "output": {"outputBodyJson": {"role": "assistant", "content": answer, "stop_reason": "end_turn",
                                              "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}}}

    user = {"role": "user", "content": "Storniere Buchung ZÜ-4711"}
    call = [{"type": "tool_use", "id": "tu1", "name": "cancel", "input": {"ref": "ZÜ-4711", "opts": {"refund": True}}}]
    res1 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "locked",
                                         "is_error": True}]}
    call2 = [{"type": "tool_use", "id": "tu2", "name": "cancel", "input": {"ref": "ZÜ-4711", "opts": {"refund": True}}}]
    res2 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu2", "content": "ok"}]}
    a1, a2 = {"role": "assistant", "content": call}, {"role": "assistant", "content": call2}
    t = read([rec(0, [user], call, (10, 5)), rec(1, [user, a1, res1], call2, (20, 6)),
              rec(2, [user, a1, res1, a2, res2], [{"type": "text", "text": "Storniert."}], (30, 7))],
             "bedrock_invocations")
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("cancel", {"ref": "ZÜ-4711", "opts": {"refund": True}}, "tu1"),
        ("cancel", {"ref": "ZÜ-4711", "opts": {"refund": True}}, "tu2")]
    # Anthropic's is_error defaults to false: a result without it is a success
    assert [(r.is_error, r.output) for r in t.tool_results()] == [(True, "locked"), (False, "ok")]
    assert t.final_response == "Storniert." and t.user_input == "Storniere Buchung ZÜ-4711"
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (60, 18)
