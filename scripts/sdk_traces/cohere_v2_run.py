"""cohere writes the trace: a Cohere v2 chat tool loop (``ClientV2.chat``) against a scripted
API on 127.0.0.1. Artifact: the ``messages`` list (the SDK's message objects dumped), as the
Cohere tool-use guide builds it: ``response.message`` appended, then ``role: tool`` messages
with document content.

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): cohere==7.3.1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import cohere  # noqa: E402

TOOLS = {"get_weather": lambda a: S.WEATHER_OUT, "get_time": lambda a: S.TIME_OUT,
         "book_hotel": lambda a: S.book_hotel_impl(a["guest"], a["dates"])}


def _reply(i: int, message: dict, usage: tuple[int, int], finish: str) -> dict:
    return {"id": f"resp-{i}", "finish_reason": finish, "message": message,
            "usage": {"billed_units": {"input_tokens": usage[0], "output_tokens": usage[1]},
                      "tokens": {"input_tokens": usage[0] + 50, "output_tokens": usage[1]}}}


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def main() -> None:
    replies = [
        _reply(0, {"role": "assistant", "tool_plan": "Ich prüfe Wetter und Uhrzeit.",
                   "tool_calls": [_call("get_weather_w1", "get_weather", S.WEATHER_ARGS),
                                  _call("get_time_t1", "get_time", S.TIME_ARGS)]}, S.USAGE[0], "TOOL_CALL"),
        _reply(1, {"role": "assistant", "tool_plan": "Jetzt buche ich.",
                   "tool_calls": [_call("book_hotel_b1", "book_hotel", S.BOOK_FAIL_ARGS)]}, S.USAGE[1], "TOOL_CALL"),
        _reply(2, {"role": "assistant", "tool_plan": "Andere Daten.",
                   "tool_calls": [_call("book_hotel_b2", "book_hotel", S.BOOK_OK_ARGS)]}, S.USAGE[2], "TOOL_CALL"),
        _reply(3, {"role": "assistant", "content": [{"type": "text", "text": S.FINAL}]}, S.USAGE[3], "COMPLETE"),
    ]
    srv = S.Scripted(replies)
    try:
        co = cohere.ClientV2(api_key="test-key", base_url=srv.url)
        tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in TOOLS]
        messages: list = [{"role": "user", "content": S.USER}]
        while True:
            resp = co.chat(model="command-a-03-2025", messages=messages, tools=tools)
            messages.append(resp.message)
            if not resp.message.tool_calls:
                break
            for tc in resp.message.tool_calls:
                args = json.loads(tc.function.arguments)
                try:
                    out = {"result": TOOLS[tc.function.name](args)}
                except Exception as e:
                    out = {"error": str(e)}
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": [
                    {"type": "document", "document": {"data": json.dumps(out, ensure_ascii=False)}}]})
    finally:
        srv.close()
    dumped = [m.model_dump(mode="json", exclude_none=True) if hasattr(m, "model_dump") else m for m in messages]
    ids = ["get_weather_w1", "get_time_t1", "book_hotel_b1", "book_hotel_b2"]
    S.write("cohere_v2", "messages", dumped, S.truth(
        "cohere (ClientV2.chat)", cohere.__version__, "the v2 messages list of the tool loop (model_dump)",
        ids=ids, usage=None, usage_note="a messages list records no usage",
        error_flags=[None, None, None, None],
        extra={"result_note": "Cohere v2 tool messages have no error field: each result is a document whose "
                              "data is the tool loop's JSON text, {'result': ...} or {'error': ...}; an "
                              "--error-pattern can mark the second failed",
               "result_outputs": [json.dumps(o, ensure_ascii=False) for o in (
                   {"result": S.WEATHER_OUT}, {"result": S.TIME_OUT}, {"error": S.BOOK_ERROR},
                   {"result": S.BOOK_OUT})]}))


if __name__ == "__main__":
    main()
