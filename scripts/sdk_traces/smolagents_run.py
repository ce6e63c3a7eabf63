"""Producer: the scenario (scenario.py) run by a real smolagents ToolCallingAgent with a
scripted model (a ``smolagents.Model`` subclass answering from the scenario's turns; no
network). Writes under tests/data/sdk_traces/smolagents/:

- ``run_result.json``: ``agent.run(..., return_full_result=True)``'s ``RunResult`` (output,
  state, steps, token_usage, timing) as its fields;
- ``memory_steps.json``: ``agent.memory.get_full_steps()``;
- ``truth.json``.

Run with the pinned environment: ``make sdk-traces`` (requirements in
requirements/smolagents.txt).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import smolagents
from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from smolagents.monitoring import TokenUsage

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "smolagents"


@tool
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: the city's name.
    """
    return scenario.get_weather(city)


@tool
def book_hotel(city: str, stay: dict) -> str:
    """Book a hotel.

    Args:
        city: the city's name.
        stay: nights, guests (a list of {name, age}) and prefs.
    """
    return scenario.book_hotel(city, stay)


class ScriptedModel(Model):
    """Answers turn by turn from scenario.TURNS; the last turn calls ``final_answer``."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted-model")
        self.turn = 0

    def generate(self, messages: list[Any], stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        calls, (tin, tout) = scenario.TURNS[self.turn]
        self.turn += 1
        if not calls:
            calls = [("final_answer", {"answer": scenario.FINAL})]
        tcs = [ChatMessageToolCall(id=f"call_{self.turn}_{i}", type="function",
                                   function=ChatMessageToolCallFunction(name=n, arguments=a))
               for i, (n, a) in enumerate(calls)]
        return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=tcs,
                           token_usage=TokenUsage(input_tokens=tin, output_tokens=tout))


def main() -> None:
    agent = ToolCallingAgent(tools=[get_weather, book_hotel], model=ScriptedModel(), max_steps=8)
    res = agent.run(scenario.USER, return_full_result=True)
    run = {"output": res.output, "state": res.state, "steps": res.steps,
           "token_usage": asdict(res.token_usage) if res.token_usage else None,
           "timing": res.timing.dict() if res.timing else None}
    scenario.write_json(OUT / "run_result.json", json.loads(json.dumps(run, default=str)))
    scenario.write_json(OUT / "memory_steps.json", json.loads(json.dumps(agent.memory.get_full_steps(), default=str)))
    scenario.write_truth(OUT, sdk="smolagents", version=smolagents.__version__, final_as_tool=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
