"""google-adk writes the trace: an ``LlmAgent`` run by ADK's ``InMemoryRunner`` on a scripted
``BaseLlm`` (ADK's model interface; no network), the shared scenario of ``_scripted``.

Artifacts:

- ``events.jsonl``: the events ``runner.run_async`` yields, one per line
  (``event.model_dump(mode="json", exclude_none=True)``), a run whose failing tool *raises*
  and is caught by ADK's ``ReflectAndRetryToolPlugin`` (the failure's response is the
  plugin's ``ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN`` record);
- ``session_status_error.json``: the session (``get_session(...).model_dump``) of a run whose
  failing tool *returns* ADK's documented failure shape ``{"status": "error",
  "error_message": ...}``.

Run with its own venv (``make sdk-traces``, requirements/adk.txt): google-adk==2.13.0.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
from google.adk import version as adk_version  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

CALLS = [[("get_weather", S.WEATHER_ARGS, "adk-w1"), ("get_time", S.TIME_ARGS, "adk-t1")],
         [("book_hotel", S.BOOK_FAIL_ARGS, "adk-b1")], [("book_hotel", S.BOOK_OK_ARGS, "adk-b2")]]
IDS = [c for turn in CALLS for _, _, c in turn]


class Scripted(BaseLlm):
    """Answers by the number of model turns so far: the scenario's calls, then the answer."""

    model: str = "scripted-gemini"

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        n = sum(1 for c in llm_request.contents if c.role == "model")
        i, o = S.USAGE[n]
        if n < len(CALLS):
            parts = [types.Part(function_call=types.FunctionCall(id=cid, name=f, args=a)) for f, a, cid in CALLS[n]]
        else:
            parts = [types.Part.from_text(text=S.FINAL)]
        yield LlmResponse(content=types.Content(role="model", parts=parts),
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=i, candidates_token_count=o, total_token_count=i + o))


def get_weather(city: str, units: dict) -> str:
    """The weather in a city."""
    return S.WEATHER_OUT


def get_time(tz: str) -> str:
    """The local time in a time zone."""
    return S.TIME_OUT


def book_hotel_raising(guest: dict, dates: list[str]) -> str:
    """Book a hotel (raises when full)."""
    return S.book_hotel_impl(guest, dates)


def book_hotel_status(guest: dict, dates: list[str]) -> dict:
    """Book a hotel (ADK's failure shape when full)."""
    try:
        return {"status": "success", "report": S.book_hotel_impl(guest, dates)}
    except RuntimeError as e:
        return {"status": "error", "error_message": str(e)}


async def _run(book: Any, plugins: list[Any]) -> tuple[list[dict], dict]:
    book.__name__ = "book_hotel"
    agent = LlmAgent(name="reiseplaner", model=Scripted(), instruction="Plane Reisen.",
                     tools=[get_weather, get_time, book])
    runner = InMemoryRunner(agent=agent, app_name="reise", plugins=plugins)
    s = await runner.session_service.create_session(app_name="reise", user_id="zoe")
    msg = types.Content(role="user", parts=[types.Part.from_text(text=S.USER)])
    events = []
    async for ev in runner.run_async(user_id="zoe", session_id=s.id, new_message=msg):
        events.append(ev.model_dump(mode="json", exclude_none=True))
    sess = await runner.session_service.get_session(app_name="reise", user_id="zoe", session_id=s.id)
    return events, sess.model_dump(mode="json", exclude_none=True)


def main() -> None:
    # two runs, their events interleaved as two concurrent sessions' log lines would be
    ev_a, _ = asyncio.run(_run(book_hotel_raising, [ReflectAndRetryToolPlugin(max_retries=2)]))
    ev_b, _ = asyncio.run(_run(book_hotel_raising, [ReflectAndRetryToolPlugin(max_retries=2)]))
    assert len(ev_a) == len(ev_b) and ev_a[0]["invocation_id"] != ev_b[0]["invocation_id"]
    events = [e for pair in zip(ev_a, ev_b) for e in pair]
    _, session = asyncio.run(_run(book_hotel_status, []))
    out = S.DATA / "adk"
    out.mkdir(parents=True, exist_ok=True)
    (out / "events.jsonl").write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
                                      encoding="utf-8")
    v = adk_version.__version__
    plugin_out = {"call": 2, "response_type": "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"}
    (out / "events.truth.json").write_text(json.dumps(S.truth(
        "google-adk (InMemoryRunner.run_async events, ReflectAndRetryToolPlugin)", v,
        "the events run_async yields, one per line, two runs interleaved", ids=IDS, usage=S.USAGE,
        usage_note="each model event's usage_metadata", error_flags=[None, None, True, None],
        extra={"runs": 2, "plugin_failure": plugin_out,
               "error_note": "ADK marks no success: a plain result has no flag (None); the raised "
                             "tool's failure is the plugin's record", "user_input": None,
               "user_note": "run_async yields the agent's events, not the user's message"}), ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")
    (out / "session_status_error.json").write_text(json.dumps(session, ensure_ascii=False, indent=1) + "\n",
                                                   encoding="utf-8")
    (out / "session_status_error.truth.json").write_text(json.dumps(S.truth(
        "google-adk (session of a tool returning {status: error})", v,
        "InMemorySessionService session model_dump", ids=IDS, usage=S.USAGE,
        usage_note="each model event's usage_metadata", error_flags=[None, None, True, False],
        extra={"error_note": "book_hotel returns {status: error | success}; the others return plain "
                             "values (no mark: None)",
               # ADK wraps a non-dict return as {"result": value}; a dict return is kept as is
               "result_outputs": [{"result": S.WEATHER_OUT}, {"result": S.TIME_OUT},
                                  {"status": "error", "error_message": S.BOOK_ERROR},
                                  {"status": "success", "report": S.BOOK_OUT}]}),
        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
