"""semantic-kernel writes the trace: a ``ChatCompletionAgent`` on ``OpenAIChatCompletion``
(its ``AsyncOpenAI`` client pointed at a scripted server on 127.0.0.1) with a plugin of three
kernel functions, auto function calling. Artifact: the thread's ``ChatHistory``
(``model_dump(mode="json")``): ``items`` with ``FunctionCallContent`` / ``FunctionResultContent``.

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): semantic-kernel==1.45.0.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import semantic_kernel  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402


class Travel:
    @kernel_function(description="Weather of a city.")
    def get_weather(self, city: str, units: Annotated[dict, "units"]) -> str:
        return S.WEATHER_OUT

    @kernel_function(description="Local time of a time zone.")
    def get_time(self, tz: str) -> str:
        return S.TIME_OUT

    @kernel_function(description="Book a hotel.")
    def book_hotel(self, guest: Annotated[dict, "guest"], dates: Annotated[list[str], "dates"]) -> str:
        return S.book_hotel_impl(guest, dates)


def _reply(i: int, message: dict, usage: tuple[int, int], finish: str) -> dict:
    return {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1765000000 + i, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


async def _run(url: str) -> ChatHistoryAgentThread:
    svc = OpenAIChatCompletion(ai_model_id="gpt-4o-mini",
                               async_client=AsyncOpenAI(api_key="test-key", base_url=url + "/v1"))
    agent = ChatCompletionAgent(service=svc, name="travel", instructions="Du planst Reisen.", plugins=[Travel()])
    thread = ChatHistoryAgentThread()
    resp = await agent.get_response(messages=S.USER, thread=thread)
    assert str(resp.content) == S.FINAL, str(resp.content)
    return resp.thread


def main() -> None:
    replies = [
        _reply(0, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_w1", "Travel-get_weather", S.WEATHER_ARGS), _call("call_t1", "Travel-get_time", S.TIME_ARGS)]},
            S.USAGE[0], "tool_calls"),
        _reply(1, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b1", "Travel-book_hotel", S.BOOK_FAIL_ARGS)]}, S.USAGE[1], "tool_calls"),
        _reply(2, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b2", "Travel-book_hotel", S.BOOK_OK_ARGS)]}, S.USAGE[2], "tool_calls"),
        _reply(3, {"role": "assistant", "content": S.FINAL}, S.USAGE[3], "stop"),
    ]
    srv = S.Scripted(replies)
    try:
        thread = asyncio.run(_run(srv.url))
    finally:
        srv.close()
    hist = thread._chat_history.model_dump(mode="json", exclude_none=True)
    S.write("semantic_kernel", "chat_history", hist, S.truth(
        "semantic-kernel (ChatCompletionAgent, OpenAIChatCompletion)", semantic_kernel.__version__,
        "the agent thread's ChatHistory, model_dump(mode='json', exclude_none=True)",
        ids=["call_w1", "call_t1", "call_b1", "call_b2"], usage=S.USAGE,
        usage_note="each assistant message carries its model call's usage in metadata.usage",
        error_flags=[None, None, None, None],
        extra={"result_note": "Semantic Kernel's FunctionResultContent has no error field: auto function "
                              "calling writes the failure as text (an --error-pattern can mark it); calls "
                              "are named by function_name, the plugin ('Travel') is dropped",
               "error_text_prefix": "An error occurred while invoking the function Travel-book_hotel: "}))


if __name__ == "__main__":
    main()
