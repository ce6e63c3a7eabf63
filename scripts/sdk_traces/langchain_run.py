"""Producer: the scenario (scenario.py) as a LangChain agent loop (langchain-core's
``GenericFakeChatModel`` scripted with the scenario's turns, real ``@tool`` tools, the tool calls
of one turn run concurrently), recorded with ``astream_events(version="v2")``. Writes under
tests/data/sdk_traces/langchain/:

- ``astream_events.jsonl``: every event, one per line (``langchain_core.load.dumpd`` of the
  event's data, as a user logging the stream would write it);
- ``truth.json``.

langchain-core is one of trajcheck's own test dependencies, so this runs in the project's venv
(``make sdk-traces``; the pin is in requirements/langchain.txt).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import langchain_core
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import ToolException, tool

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "langchain"


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return scenario.get_weather(city)


@tool
def book_hotel(city: str, stay: dict) -> str:
    """Book a hotel: nights, guests (a list of {name, age}) and prefs."""
    try:
        return scenario.book_hotel(city, stay)
    except ValueError as e:
        raise ToolException(str(e)) from e


book_hotel.handle_tool_error = True
TOOLS = {"get_weather": get_weather, "book_hotel": book_hotel}


def model() -> GenericFakeChatModel:
    msgs = []
    for t, (calls, (tin, tout)) in enumerate(scenario.TURNS):
        usage = {"input_tokens": tin, "output_tokens": tout, "total_tokens": tin + tout}
        tcs = [{"name": n, "args": a, "id": f"call_{t}_{i}", "type": "tool_call"} for i, (n, a) in enumerate(calls)]
        msgs.append(AIMessage(content="" if calls else scenario.FINAL, tool_calls=tcs, usage_metadata=usage))
    return GenericFakeChatModel(messages=iter(msgs), disable_streaming=True)


async def loop(question: str) -> str:
    llm = model()
    history: list[Any] = [HumanMessage(question)]
    while True:
        ai = await llm.ainvoke(history)
        history.append(ai)
        if not ai.tool_calls:
            return str(ai.content)
        outs = await asyncio.gather(*(TOOLS[tc["name"]].ainvoke(tc) for tc in ai.tool_calls))
        history.extend(o if isinstance(o, ToolMessage) else ToolMessage(str(o), tool_call_id="?") for o in outs)


def plain(v: Any) -> Any:
    return json.loads(json.dumps(dumpd(v) if not isinstance(v, (str, int, float, type(None))) else v, default=str))


async def main() -> None:
    agent = RunnableLambda(loop).with_config(run_name="scenario_agent")
    lines = []
    async for ev in agent.astream_events(scenario.USER, version="v2"):
        ev = dict(ev)
        ev["data"] = {k: plain(v) for k, v in ev.get("data", {}).items()}
        lines.append(json.dumps(ev, ensure_ascii=False, default=str))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "astream_events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    scenario.write_truth(OUT, sdk="langchain-core", version=langchain_core.__version__)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
