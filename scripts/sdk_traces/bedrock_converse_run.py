"""boto3 writes the trace: a Bedrock Converse tool loop (the loop AWS's documentation shows)
against a scripted bedrock-runtime on 127.0.0.1. Artifact: the ``messages`` list the loop
built (``toolUse`` / ``toolResult`` blocks, ``status: error`` on the failed call), as users
save it; Strands agents keep the same list (``agent.messages``).

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


def main() -> None:
    replies = [
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
    srv = S.Scripted(replies)
    try:
        client = boto3.client("bedrock-runtime", region_name="eu-central-1", endpoint_url=srv.url,
                              aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
        tool_config = {"tools": [{"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}}
                                 for n in TOOLS]}
        messages: list[dict] = [{"role": "user", "content": [{"text": S.USER}]}]
        usage = [0, 0]
        while True:
            resp = client.converse(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0", messages=messages,
                                   toolConfig=tool_config)
            usage[0] += resp["usage"]["inputTokens"]
            usage[1] += resp["usage"]["outputTokens"]
            msg = resp["output"]["message"]
            messages.append(msg)
            if resp["stopReason"] != "tool_use":
                break
            results = []
            for block in msg["content"]:
                if "toolUse" not in block:
                    continue
                tu = block["toolUse"]
                try:
                    out = TOOLS[tu["name"]](tu["input"])
                    results.append({"toolResult": {"toolUseId": tu["toolUseId"], "content": [{"text": out}]}})
                except Exception as e:  # the documented way to report a failed tool
                    results.append({"toolResult": {"toolUseId": tu["toolUseId"], "content": [{"text": str(e)}],
                                                   "status": "error"}})
            messages.append({"role": "user", "content": results})
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
