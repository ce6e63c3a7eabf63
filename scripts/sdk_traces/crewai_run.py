"""Producer: the scenario (scenario.py) played by a CrewAI crew (one agent, one task) on the
scripted OpenAI-compatible server (scripted_openai_server.py, 127.0.0.1), its event bus logged
the way a team keeps it: a ``BaseEventListener`` whose handler for ``BaseEvent`` writes every
event as ``event.to_json()`` (CrewAI's own serialisation), one per line. Two kickoffs of the
crew are logged into one file (``events.jsonl``). The booking tool raises once (CrewAI emits
``tool_usage_error``), the retry succeeds. Writes ``truth.json`` from the scenario.

Run with the pinned environment: ``make sdk-traces`` (requirements/crewai.txt).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import typing
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.events import BaseEventListener  # noqa: E402
from crewai.events.base_events import BaseEvent  # noqa: E402
from crewai.events.event_types import EventTypes  # noqa: E402
from crewai.tools import tool  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402
import scripted_openai_server  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "crewai"


# fields holding live objects (the agent, task, crew; each serialised whole on every event)
_OBJECTS = {"agent", "task", "crew", "from_task", "from_agent", "callbacks", "available_functions"}


class JsonLinesLog(BaseEventListener):
    """Every event of the bus as one JSON line (``event.to_json()``)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()
        super().__init__()

    def setup_listeners(self, crewai_event_bus: Any) -> None:
        def _log(source: Any, event: BaseEvent) -> None:
            # pydantic's JSON dump: ``event.to_json()`` turns values nested past a few levels into
            # their repr strings (a tool's nested arguments arrive as "{'name': 'Zoë', ...}")
            line = event.model_dump_json(exclude=_OBJECTS, fallback=str)
            with self.lock:
                self.lines.append(line)

        for cls in typing.get_args(EventTypes):  # the bus calls a handler for its exact class
            crewai_event_bus.on(cls)(_log)


@tool("get_weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return scenario.get_weather(city)


@tool("book_hotel")
def book_hotel(city: str, stay: dict) -> str:
    """Book a hotel for a stay: nights, guests (name, age), prefs."""
    return scenario.book_hotel(city, stay)


def kickoff(base: str) -> Any:
    llm = LLM(model="openai/scripted-model", base_url=base, api_key="none")
    agent = Agent(role="Reiseassistent", goal="Reisen planen", backstory="Hilft Reisenden.", llm=llm,
                  tools=[get_weather, book_hotel], allow_delegation=False, verbose=False)
    task = Task(description=scenario.USER, expected_output="Die Antwort an den Reisenden.", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False).kickoff()


def main() -> None:
    log = JsonLinesLog()
    srv, base = scripted_openai_server.start()
    try:
        outs = [kickoff(base), kickoff(base)]
    finally:
        srv.shutdown()
    for o in outs:
        assert str(o) == scenario.FINAL, str(o)
    time.sleep(1)  # the bus runs sync handlers in its thread pool: let the last ones finish
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "events.jsonl").write_text("".join(line + "\n" for line in log.lines), encoding="utf-8")
    truth = scenario.truth(sdk="crewai (Crew.kickoff, event bus events as model_dump_json lines)", version=version("crewai"))
    truth["runs"] = 2
    scenario.write_json(OUT / "truth.json", truth)
    print(f"wrote {OUT}: {len(log.lines)} events")


if __name__ == "__main__":
    main()
