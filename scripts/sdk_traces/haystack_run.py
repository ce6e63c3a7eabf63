"""haystack-ai writes the trace: a Haystack ``Agent`` with ``OpenAIChatGenerator`` against a
scripted OpenAI-compatible server on 127.0.0.1 and three function tools; the failing booking
is caught by the agent's tool invoker (``raise_on_tool_invocation_failure=False``, the
default). Artifact: the agent's ``messages`` (``ChatMessage.to_dict()`` each), as users save
them: ``tool_call`` parts, ``tool_call_result`` parts with ``error``, ``meta.usage``.

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): haystack-ai==3.4.1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import haystack  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat.openai import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import create_tool_from_function  # noqa: E402
from haystack.utils import Secret  # noqa: E402


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


def scripted_replies() -> list[dict]:
    """The scripted model's four chat completions (also played by haystack_otel_run.py)."""
    return [
        _reply(0, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_w1", "get_weather", S.WEATHER_ARGS), _call("call_t1", "get_time", S.TIME_ARGS)]},
            S.USAGE[0], "tool_calls"),
        _reply(1, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b1", "book_hotel", S.BOOK_FAIL_ARGS)]}, S.USAGE[1], "tool_calls"),
        _reply(2, {"role": "assistant", "content": None, "tool_calls": [
            _call("call_b2", "book_hotel", S.BOOK_OK_ARGS)]}, S.USAGE[2], "tool_calls"),
        _reply(3, {"role": "assistant", "content": S.FINAL}, S.USAGE[3], "stop"),
    ]


def main() -> None:
    replies = scripted_replies()
    srv = S.Scripted(replies)
    try:
        gen = OpenAIChatGenerator(api_key=Secret.from_token("test-key"), model="gpt-4o-mini",
                                  api_base_url=srv.url + "/v1")
        agent = Agent(chat_generator=gen, tools=[create_tool_from_function(f) for f in
                                                 (get_weather, get_time, book_hotel)])
        agent.warm_up()
        out = agent.run(messages=[ChatMessage.from_user(S.USER)])
    finally:
        srv.close()
    msgs = [m.to_dict() for m in out["messages"]]
    assert out["messages"][-1].text == S.FINAL
    S.write("haystack", "messages", json.loads(json.dumps(msgs, default=str)), S.truth(
        "haystack-ai (Agent, OpenAIChatGenerator)", haystack.__version__.__version__
        if hasattr(haystack.__version__, "__version__") else str(haystack.__version__),
        "the Agent's messages, ChatMessage.to_dict() each", ids=["call_w1", "call_t1", "call_b1", "call_b2"],
        usage=S.USAGE, usage_note="each assistant message carries its model call's usage in meta.usage",
        error_flags=[False, False, True, False]))


if __name__ == "__main__":
    main()
