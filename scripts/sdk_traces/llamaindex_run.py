"""llama-index writes the trace: a ``FunctionAgent`` on ``llama_index.llms.openai.OpenAI``
(pointed at a scripted server on 127.0.0.1) with three function tools. Artifact: the agent's
chat memory (``ChatMessage.model_dump(mode="json")`` each), as users save it: tool calls in
``additional_kwargs.tool_calls`` / ``blocks``, results as ``role: tool`` messages.

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): llama-index-core==0.14.25,
llama-index-llms-openai.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import llama_index.core  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.workflow import Context  # noqa: E402
from llama_index.llms.openai import OpenAI  # noqa: E402


def get_weather(city: str, units: dict) -> str:
    """Weather of a city."""
    return S.WEATHER_OUT


def get_time(tz: str) -> str:
    """Local time of a time zone."""
    return S.TIME_OUT


def book_hotel(guest: dict, dates: list[str]) -> str:
    """Book a hotel."""
    return S.book_hotel_impl(guest, dates)


def _reply(i: int, message: dict, usage: tuple[int, int], finish: str) -> dict:
    return {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": 1765000000 + i, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


async def _run(url: str) -> list:
    llm = OpenAI(model="gpt-4o-mini", api_key="test-key", api_base=url + "/v1")
    agent = FunctionAgent(tools=[get_weather, get_time, book_hotel], llm=llm, streaming=False)
    ctx = Context(agent)
    out = await agent.run(S.USER, ctx=ctx)
    assert str(out) == S.FINAL, str(out)
    memory = await ctx.store.get("memory")
    return await memory.aget_all()


def main() -> None:
    replies = [
        _reply(0, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_w1", "get_weather", S.WEATHER_ARGS), _call("call_t1", "get_time", S.TIME_ARGS)]},
            S.USAGE[0], "tool_calls"),
        _reply(1, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b1", "book_hotel", S.BOOK_FAIL_ARGS)]}, S.USAGE[1], "tool_calls"),
        _reply(2, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b2", "book_hotel", S.BOOK_OK_ARGS)]}, S.USAGE[2], "tool_calls"),
        _reply(3, {"role": "assistant", "content": S.FINAL}, S.USAGE[3], "stop"),
    ]
    srv = S.Scripted(replies)
    try:
        msgs = asyncio.run(_run(srv.url))
    finally:
        srv.close()
    dumped = json.loads(json.dumps([m.model_dump(mode="json") for m in msgs], default=str))
    S.write("llamaindex", "memory", dumped, S.truth(
        "llama-index (FunctionAgent, llms.openai.OpenAI)", llama_index.core.__version__,
        "the agent's memory, ChatMessage.model_dump(mode='json') each",
        ids=["call_w1", "call_t1", "call_b1", "call_b2"], usage=None,
        usage_note="the memory keeps no usage", error_flags=[None, None, None, None]))


if __name__ == "__main__":
    main()
