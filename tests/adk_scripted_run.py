"""Run a Google ADK agent on a scripted model and print its session as JSON.

Run by tests/test_sdk_traces_adk.py with the separate ADK environment's Python
(scripts/adk_venv.sh): google-adk pins OpenTelemetry versions the main environment does not
have. The model (an ADK ``BaseLlm``) asks for a parallel pair, then a booking that the tool
reports as failed (ADK's convention: a result with an ``error`` key), then its retry, then
answers; every turn carries its token usage.
"""

import asyncio
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

TURNS = [
    ([("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen"})], None, 50, 12),
    ([("book", {"day": "mon"})], None, 80, 9),
    ([("book", {"day": "tue"})], None, 95, 9),
    ([], "Booked Tuesday; Oslo is 12C.", 110, 7),
]



class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(self, llm_request, stream=False) -> AsyncGenerator[LlmResponse, None]:
        n = sum(1 for c in llm_request.contents if c.role == "model")
        calls, text, i, o = TURNS[n]
        parts = [types.Part.from_function_call(name=f, args=a) for f, a in calls] or [types.Part.from_text(text=text)]
        yield LlmResponse(content=types.Content(role="model", parts=parts),
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=i, candidates_token_count=o, total_token_count=i + o))



def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"temp": "12C"}



def book(day: str) -> dict:
    """Book a slot."""
    if day == "mon":
        return {"error": "Monday is full"}
    return {"status": "booked " + day}



async def main():
    agent = LlmAgent(name="booker", model=Scripted(), instruction="Book slots.", tools=[get_weather, book])
    runner = InMemoryRunner(agent=agent, app_name="t")
    s = await runner.session_service.create_session(app_name="t", user_id="u")
    msg = types.Content(role="user", parts=[types.Part.from_text(text="Book a slot and tell me the weather")])
    async for _ in runner.run_async(user_id="u", session_id=s.id, new_message=msg):
        pass
    s = await runner.session_service.get_session(app_name="t", user_id="u", session_id=s.id)
    print(s.model_dump_json(by_alias=True, exclude_none=True))



asyncio.run(main())
