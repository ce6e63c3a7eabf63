"""google-genai writes the trace: a chat with automatic function calling against a scripted
Gemini API on 127.0.0.1. Artifacts: ``chat.get_history()`` (the chat history a user saves)
and the last ``GenerateContentResponse`` (with its ``automatic_function_calling_history``).

Run with its own venv (``make sdk-traces``, requirements/<sdk>.txt): google-genai==3.6.1.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
from google import genai  # noqa: E402
from google.genai import types  # noqa: E402


def get_weather(city: str, units: dict) -> str:
    """Weather of a city."""
    return S.WEATHER_OUT


def get_time(tz: str) -> str:
    """Local time of a time zone."""
    return S.TIME_OUT


def book_hotel(guest: dict, dates: list[str]) -> str:
    """Book a hotel."""
    return S.book_hotel_impl(guest, dates)


def _reply(parts: list[dict], usage: tuple[int, int]) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1],
                              "totalTokenCount": usage[0] + usage[1]},
            "modelVersion": "gemini-2.5-flash"}


def main() -> None:
    replies = [
        _reply([{"functionCall": {"name": "get_weather", "args": S.WEATHER_ARGS, "id": "fc-w1"}},
                {"functionCall": {"name": "get_time", "args": S.TIME_ARGS, "id": "fc-t1"}}], S.USAGE[0]),
        _reply([{"functionCall": {"name": "book_hotel", "args": S.BOOK_FAIL_ARGS, "id": "fc-b1"}}], S.USAGE[1]),
        _reply([{"functionCall": {"name": "book_hotel", "args": S.BOOK_OK_ARGS, "id": "fc-b2"}}], S.USAGE[2]),
        _reply([{"text": S.FINAL}], S.USAGE[3]),
    ]
    config = types.GenerateContentConfig(tools=[get_weather, get_time, book_hotel])
    srv = S.Scripted(replies)
    try:
        client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=srv.url))
        chat = client.chats.create(model="gemini-2.5-flash", config=config)
        assert chat.send_message(S.USER).text == S.FINAL
    finally:
        srv.close()
    srv = S.Scripted(replies)  # the same run through generate_content: the response keeps the history
    try:
        client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=srv.url))
        resp = client.models.generate_content(model="gemini-2.5-flash", contents=S.USER, config=config)
    finally:
        srv.close()
    assert resp.text == S.FINAL, resp.text
    version = genai.__version__ if hasattr(genai, "__version__") else "3.6.1"
    hist = [c.model_dump(mode="json", exclude_none=True) for c in chat.get_history()]
    ids = ["fc-w1", "fc-t1", "fc-b1", "fc-b2"]
    flags = [False, False, True, False]
    S.write("google_genai", "chat_history", hist, S.truth(
        "google-genai", version, "chat.get_history() dumped with model_dump(mode='json', exclude_none=True)",
        ids=ids, usage=None, usage_note="a chat history records no usage", error_flags=flags))
    S.write("google_genai", "response", resp.model_dump(mode="json", exclude_none=True,
                                                        exclude={"sdk_http_response"}), S.truth(
        "google-genai", version, "the GenerateContentResponse of models.generate_content (automatic_function_calling_history)",
        ids=ids, usage=[S.USAGE[3]], usage_note="a response carries the usage of its own (last) model call only",
        error_flags=flags))


if __name__ == "__main__":
    main()
