"""mistralai writes the trace: a Mistral chat tool loop (``client.chat.complete``) against a
scripted API on 127.0.0.1. Artifact: the ``messages`` list (SDK message objects dumped) as
Mistral's function-calling guide builds it.

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): mistralai==3.7.0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
from mistralai.client import Mistral  # noqa: E402  (mistralai 2+: the client package)

TOOLS = {"get_weather": lambda a: S.WEATHER_OUT, "get_time": lambda a: S.TIME_OUT,
         "book_hotel": lambda a: S.book_hotel_impl(a["guest"], a["dates"])}


def _reply(i: int, message: dict, usage: tuple[int, int], finish: str) -> dict:
    return {"id": f"cmpl-{i}", "object": "chat.completion", "model": "mistral-large-latest", "created": 1765000000 + i,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def _call(cid: str, name: str, args: dict, i: int) -> dict:
    return {"id": cid, "type": "function", "index": i,
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def main() -> None:
    replies = [
        _reply(0, {"role": "assistant", "content": "", "tool_calls": [
            _call("w1xYz0001", "get_weather", S.WEATHER_ARGS, 0), _call("t1xYz0002", "get_time", S.TIME_ARGS, 1)]},
            S.USAGE[0], "tool_calls"),
        _reply(1, {"role": "assistant", "content": "", "tool_calls": [
            _call("b1xYz0003", "book_hotel", S.BOOK_FAIL_ARGS, 0)]}, S.USAGE[1], "tool_calls"),
        _reply(2, {"role": "assistant", "content": "", "tool_calls": [
            _call("b2xYz0004", "book_hotel", S.BOOK_OK_ARGS, 0)]}, S.USAGE[2], "tool_calls"),
        _reply(3, {"role": "assistant", "content": S.FINAL}, S.USAGE[3], "stop"),
    ]
    srv = S.Scripted(replies)
    try:
        client = Mistral(api_key="test-key", server_url=srv.url)
        tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in TOOLS]
        messages: list = [{"role": "user", "content": S.USER}]
        usage = [0, 0]
        while True:
            resp = client.chat.complete(model="mistral-large-latest", messages=messages, tools=tools)
            usage[0] += resp.usage.prompt_tokens
            usage[1] += resp.usage.completion_tokens
            msg = resp.choices[0].message
            messages.append(msg)
            if not msg.tool_calls:
                break
            for tc in msg.tool_calls:
                args = json.loads(tc.function.arguments)
                try:
                    out = TOOLS[tc.function.name](args)
                except Exception as e:
                    out = f"Error: {e}"
                messages.append({"role": "tool", "name": tc.function.name, "content": out, "tool_call_id": tc.id})
    finally:
        srv.close()
    dumped = [m.model_dump(mode="json", exclude_none=True) if hasattr(m, "model_dump") else m for m in messages]
    import mistralai.client as mistralai

    ids = ["w1xYz0001", "t1xYz0002", "b1xYz0003", "b2xYz0004"]
    S.write("mistral", "messages", dumped, S.truth(
        "mistralai (chat.complete)", getattr(mistralai, "__version__", "3.7.0"),
        "the messages list of the tool loop (model_dump)", ids=ids, usage=None,
        usage_note="a messages list records no usage", error_flags=[None, None, None, None],
        extra={"result_note": "Mistral tool messages have no error field: the failure is only the "
                              "text 'Error: ...' (an --error-pattern can mark it)",
               "error_text_prefix": "Error: "}))


if __name__ == "__main__":
    main()
