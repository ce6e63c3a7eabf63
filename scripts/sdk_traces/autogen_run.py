"""Producer: the scenario (scenario.py) run by a real AutoGen AgentChat ``AssistantAgent`` with
autogen-ext's ``ReplayChatCompletionClient`` (AutoGen's own scripted model; no network).
Writes under tests/data/sdk_traces/autogen/:

- ``task_result.json``: ``await agent.run(task=...)``'s ``TaskResult.model_dump()``;
- ``agent_state.json``: ``await agent.save_state()`` after that run;
- ``run_stream.jsonl``: the events and messages ``team.run_stream(task=...)`` yields (one
  ``model_dump()`` per line; the closing ``TaskResult`` is not written) for a
  ``RoundRobinGroupChat`` of one such agent;
- ``team_state.json``: ``await team.save_state()`` after that run;
- ``truth.json``.

Run with the pinned environment: ``make sdk-traces`` (requirements in requirements/autogen.txt).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import autogen_agentchat
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import TaskResult
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "autogen"


def get_weather(city: str) -> str:
    """The current weather in a city."""
    return scenario.get_weather(city)


def book_hotel(city: str, stay: dict[str, Any]) -> str:
    """Book a hotel: nights, guests (a list of {name, age}) and prefs."""
    return scenario.book_hotel(city, stay)


def scripted() -> ReplayChatCompletionClient:
    out: list[Any] = []
    for t, (calls, (tin, tout)) in enumerate(scenario.TURNS):
        usage = RequestUsage(prompt_tokens=tin, completion_tokens=tout)
        if calls:
            fcs = [FunctionCall(id=f"call_{t}_{i}", name=n, arguments=json.dumps(a, ensure_ascii=False))
                   for i, (n, a) in enumerate(calls)]
            out.append(CreateResult(finish_reason="function_calls", content=fcs, usage=usage, cached=False))
        else:
            out.append(CreateResult(finish_reason="stop", content=scenario.FINAL, usage=usage, cached=False))
    return ReplayChatCompletionClient(out, model_info={"vision": False, "function_calling": True, "json_output": False,
                                                       "family": "unknown", "structured_output": False})


def agent() -> AssistantAgent:
    return AssistantAgent("planner", model_client=scripted(), tools=[get_weather, book_hotel],
                          max_tool_iterations=len(scenario.TURNS), reflect_on_tool_use=False)


def dump(m: Any) -> Any:
    return json.loads(json.dumps(m.model_dump(mode="json"), default=str))


async def main() -> None:
    a = agent()
    res = await a.run(task=scenario.USER)
    scenario.write_json(OUT / "task_result.json", dump(res))
    scenario.write_json(OUT / "agent_state.json", json.loads(json.dumps(await a.save_state(), default=str)))
    team = RoundRobinGroupChat([agent()], termination_condition=MaxMessageTermination(2))
    lines = []
    async for ev in team.run_stream(task=scenario.USER):
        if not isinstance(ev, TaskResult):
            lines.append(json.dumps(dump(ev), ensure_ascii=False))
    (OUT / "run_stream.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    scenario.write_json(OUT / "team_state.json", json.loads(json.dumps(await team.save_state(), default=str)))
    scenario.write_truth(OUT, sdk="autogen-agentchat", version=autogen_agentchat.__version__)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
