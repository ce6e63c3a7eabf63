"""boto3 writes the trace: a Bedrock Converse tool loop (the loop AWS's documentation shows)
against a scripted bedrock-runtime on 127.0.0.1. Artifacts: the ``messages`` list the loop
built (``toolUse`` / ``toolResult`` blocks, ``status: error`` on the failed call), as users
save it; Strands agents keep the same list (``agent.messages``). And ``invocation_log.jsonl``:
two such loops run interleaved (two trials of one case, ``requestMetadata`` naming it), one
model-invocation log record per call as Bedrock writes them to CloudWatch / S3. Bedrock itself
writes those records, so this script writes each one around the request body boto3 sent and
the response body the model returned, in the envelope AWS documents (schemaType
ModelInvocationLog 1.0; ``requestMetadata`` top level).

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): boto3==1.44.18.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import boto3  # noqa: E402
import botocore  # noqa: E402

TOOLS = {"get_weather": lambda a: S.WEATHER_OUT, "get_time": lambda a: S.TIME_OUT,
         "book_hotel": lambda a: S.book_hotel_impl(a["guest"], a["dates"])}


def _reply(content: list[dict], usage: tuple[int, int], stop: str) -> dict:
    return {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
            "usage": {"inputTokens": usage[0], "outputTokens": usage[1], "totalTokens": sum(usage)},
            "metrics": {"latencyMs": 12}}


def _replies() -> list[dict]:
    return [
        _reply([{"text": "Ich prüfe Wetter und Uhrzeit."},
                {"toolUse": {"toolUseId": "tooluse_w1", "name": "get_weather", "input": S.WEATHER_ARGS}},
                {"toolUse": {"toolUseId": "tooluse_t1", "name": "get_time", "input": S.TIME_ARGS}}],
               S.USAGE[0], "tool_use"),
        _reply([{"toolUse": {"toolUseId": "tooluse_b1", "name": "book_hotel", "input": S.BOOK_FAIL_ARGS}}],
               S.USAGE[1], "tool_use"),
        _reply([{"toolUse": {"toolUseId": "tooluse_b2", "name": "book_hotel", "input": S.BOOK_OK_ARGS}}],
               S.USAGE[2], "tool_use"),
        _reply([{"text": S.FINAL}], S.USAGE[3], "end_turn"),
    ]


def _results(msg: dict) -> list[dict]:
    """The toolResult blocks answering the toolUse blocks of ``msg`` (the documented way to
    report a failed tool: ``status: "error"``)."""
    results = []
    for block in msg["content"]:
        if "toolUse" not in block:
            continue
        tu = block["toolUse"]
        try:
            out = TOOLS[tu["name"]](tu["input"])
            results.append({"toolResult": {"toolUseId": tu["toolUseId"], "content": [{"text": out}]}})
        except Exception as e:
            results.append({"toolResult": {"toolUseId": tu["toolUseId"], "content": [{"text": str(e)}],
                                           "status": "error"}})
    return results


MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}} for n in TOOLS]}


def main() -> None:
    messages_list()
    invocation_logs()


def invocation_logs() -> None:
    """Two trials of the scenario, their calls interleaved (A1 B1 A2 B2 ...), one log record
    per call."""
    replies = [r for r in _replies() for _ in range(2)]
    srv = S.Scripted(replies)
    records = []
    try:
        client = boto3.client("bedrock-runtime", region_name="eu-central-1", endpoint_url=srv.url,
                              aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
        convs = {t: [{"role": "user", "content": [{"text": S.USER}]}] for t in ("A", "B")}
        done: set[str] = set()
        n = 0
        while len(done) < 2:
            for trial, messages in convs.items():
                if trial in done:
                    continue
                resp = client.converse(modelId=MODEL, messages=messages, toolConfig=TOOL_CONFIG,
                                       requestMetadata={"case_id": "trip-zurich", "trial": trial})
                body = dict(srv.requests[-1])  # the request body boto3 sent
                meta = body.pop("requestMetadata")
                resp_body = srv.replies[len(srv.requests) - 1]
                u = resp["usage"]
                records.append({
                    "schemaType": "ModelInvocationLog", "schemaVersion": "1.0",
                    "timestamp": f"2026-12-06T10:{n // 60:02d}:{n % 60:02d}Z", "accountId": "000000000000",
                    "identity": {"arn": "arn:aws:iam::000000000000:user/trajcheck-tests"},
                    "region": "eu-central-1", "requestId": f"req-{trial}-{len(messages) // 2 + 1}",
                    "operation": "Converse", "modelId": MODEL,
                    "input": {"inputContentType": "application/json", "inputBodyJson": body,
                              "inputTokenCount": u["inputTokens"]},
                    "output": {"outputContentType": "application/json", "outputBodyJson": resp_body,
                               "outputTokenCount": u["outputTokens"]},
                    "requestMetadata": meta})
                n += 1
                msg = resp["output"]["message"]
                messages.append(msg)
                if resp["stopReason"] != "tool_use":
                    done.add(trial)
                else:
                    messages.append({"role": "user", "content": _results(msg)})
    finally:
        srv.close()
    out = S.DATA / "bedrock_converse"
    path = out / "invocation_log.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"wrote {path}")
    truth = S.truth(
        "boto3 (bedrock-runtime converse), Bedrock's model-invocation log envelope",
        f"boto3 {boto3.__version__}, botocore {botocore.__version__}",
        "model-invocation log records (JSON Lines) of two interleaved trials, one per model call",
        ids=["tooluse_w1", "tooluse_t1", "tooluse_b1", "tooluse_b2"], usage=S.USAGE,
        usage_note="each record's response usage", error_flags=[False, False, True, False],
        extra={"runs": 2, "case_id": "trip-zurich"})
    (out / "invocation_log.truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n",
                                                  encoding="utf-8")


def messages_list() -> None:
    srv = S.Scripted(_replies())
    try:
        client = boto3.client("bedrock-runtime", region_name="eu-central-1", endpoint_url=srv.url,
                              aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
        messages: list[dict] = [{"role": "user", "content": [{"text": S.USER}]}]
        usage = [0, 0]
        while True:
            resp = client.converse(modelId=MODEL, messages=messages, toolConfig=TOOL_CONFIG)
            usage[0] += resp["usage"]["inputTokens"]
            usage[1] += resp["usage"]["outputTokens"]
            msg = resp["output"]["message"]
            messages.append(msg)
            if resp["stopReason"] != "tool_use":
                break
            messages.append({"role": "user", "content": _results(msg)})
    finally:
        srv.close()
    assert messages[-1]["content"][0]["text"] == S.FINAL
    assert usage == [sum(i for i, _ in S.USAGE), sum(o for _, o in S.USAGE)]
    ids = ["tooluse_w1", "tooluse_t1", "tooluse_b1", "tooluse_b2"]
    S.write("bedrock_converse", "messages", json.loads(json.dumps(messages, default=str)), S.truth(
        "boto3 (bedrock-runtime converse)", f"boto3 {boto3.__version__}, botocore {botocore.__version__}",
        "the Converse messages list of the tool loop", ids=ids, usage=None,
        usage_note="a messages list records no usage (each converse response has its own)",
        error_flags=[False, False, True, False]))


if __name__ == "__main__":
    main()
