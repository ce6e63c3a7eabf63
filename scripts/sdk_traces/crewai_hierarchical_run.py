"""Producer: a HIERARCHICAL CrewAI crew (``Process.hierarchical``) on the scripted
OpenAI-compatible server (scripted_openai_server.py, 127.0.0.1), its event bus logged by ``crewai_run.JsonLinesLog``.

The manager (CrewAI's own "Crew Manager" agent, its LLM the scripted server) delegates with
CrewAI's delegation tool ("Delegate work to coworker") to two workers, each with its own tools:
a researcher (get_weather, get_time; a parallel pair) and a booker (book_hotel, which fails on a
high floor, then the retry succeeds). Each conversation is scripted by whose tools it is offered
(the manager is offered the coworker tools) and its turn number (assistant messages so far), so
the run is deterministic. Writes ``hierarchical_events.jsonl`` and ``hierarchical_truth.json``.

Run with the pinned environment (requirements/crewai.txt).
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import crewai_run  # noqa: E402  (sets CrewAI's telemetry switches before importing it)
import scenario  # noqa: E402
import scripted_openai_server  # noqa: E402
from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402

OUT = crewai_run.OUT
# CrewAI's delegation tool "Delegate work to coworker" as offered to the model (sanitize_tool_name)
DELEGATE = "delegate_work_to_coworker"
TIMES = {"Zürich": "Zürich: 14:05 MEZ", "São Paulo": "São Paulo: 10:05 BRT"}
RESEARCH = "São Paulo: 21 °C, ensolarado; Zürich: 12 °C, bewölkt, 14:05 MEZ."
BOOKED = "Buchung bestätigt: ZH-4711 (Zürich, 2 Nächte, 2 Gäste)"
D_RESEARCH = {"task": "Wetter in São Paulo und Zürich, Uhrzeit in Zürich", "context": scenario.USER,
              "coworker": "Researcher"}
D_BOOK = {"task": "Hotel in Zürich für Zoë und Łukasz buchen, 2 Nächte", "context": scenario.USER,
          "coworker": "Booker"}
# conversation -> turns: (calls as (name, args), usage) ; no calls = the text answer
SCRIPT: dict[str, list[tuple[list[tuple[str, dict[str, Any]]], tuple[int, int], str | None]]] = {
    "manager": [([(DELEGATE, D_RESEARCH)], (400, 50), None),
                ([(DELEGATE, D_BOOK)], (520, 55), None),
                ([], (640, 30), scenario.FINAL)],
    "researcher": [([("get_weather", {"city": "São Paulo"}), ("get_weather", {"city": "Zürich"}),
                     ("get_time", {"city": "Zürich"})], (150, 40), None),
                   ([], (260, 20), RESEARCH)],
    "booker": [([("book_hotel", {"city": "Zürich", "stay": scenario.STAY_HIGH})], (180, 40), None),
               ([("book_hotel", {"city": "Zürich", "stay": scenario.STAY_ANY})], (240, 45), None),
               ([], (300, 20), BOOKED)],
}
ORDER = [("manager", 0), ("researcher", 0), ("researcher", 1), ("manager", 1), ("booker", 0), ("booker", 1),
         ("booker", 2), ("manager", 2)]  # the order the turns run in
AGENT = {"manager": "Crew Manager", "researcher": "Researcher", "booker": "Booker"}


def _who(body: dict[str, Any]) -> str:
    names = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    if DELEGATE in names:
        return "manager"
    if "book_hotel" in names:
        return "booker"
    if "get_weather" in names:
        return "researcher"
    raise ValueError(f"unscripted conversation, tools {sorted(map(str, names))}")


def completion(body: dict[str, Any]) -> dict[str, Any]:
    who = _who(body)
    k = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    calls, (tin, tout), text = SCRIPT[who][k]
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = [{"id": f"call_{who}_{k}_{i}", "type": "function",
                              "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                             for i, (n, a) in enumerate(calls)]
    return {"id": f"chatcmpl-{who}-{k}", "object": "chat.completion", "created": 1_760_000_000 + k,
            "model": "scripted-model", "choices": [{"index": 0, "message": msg,
                                                    "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}


@tool("get_weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return scenario.get_weather(city)


@tool("get_time")
def get_time(city: str) -> str:
    """The local time in a city."""
    return TIMES[city]


def kickoff(base: str) -> Any:
    llm = LLM(model="openai/scripted-model", base_url=base, api_key="none")
    researcher = Agent(role="Researcher", goal="Wetter und Uhrzeit herausfinden", backstory="Recherchiert.",
                       llm=llm, tools=[get_weather, get_time], allow_delegation=False, verbose=False)
    booker = Agent(role="Booker", goal="Hotels buchen", backstory="Bucht Hotels.", llm=llm,
                   tools=[crewai_run.book_hotel], allow_delegation=False, verbose=False)
    task = Task(description=scenario.USER, expected_output="Die Antwort an den Reisenden.")
    return Crew(agents=[researcher, booker], tasks=[task], process=Process.hierarchical,
                manager_llm=LLM(model="openai/scripted-model", base_url=base, api_key="none"),
                verbose=False).kickoff()


def truth() -> dict[str, Any]:
    calls = []
    for who, k in ORDER:
        for name, args in SCRIPT[who][k][0]:
            if name == "get_time":
                out, err = TIMES[args["city"]], False
            elif name == DELEGATE:
                out, err = RESEARCH if args["coworker"] == "Researcher" else BOOKED, False
            else:
                out, err = scenario.result_of(name, args)
            calls.append({"name": name, "agent_name": AGENT[who], "args": args, "is_error": err, "output": out})
    turns = [SCRIPT[w][k] for w, k in ORDER]
    return {"sdk": "crewai (Crew.kickoff, Process.hierarchical, event bus events as model_dump_json lines)",
            "version": version("crewai"), "user": scenario.USER, "runs": 1, "calls": calls,
            "call_steps": [len(c) for c, _, _ in turns if c], "final_response": scenario.FINAL,
            "usage": {"input_tokens": sum(u[0] for _, u, _ in turns),
                      "output_tokens": sum(u[1] for _, u, _ in turns)}}


def main() -> None:
    log = crewai_run.JsonLinesLog()
    srv, base = scripted_openai_server.start(completion)
    try:
        out = kickoff(base)
    finally:
        srv.shutdown()
    assert str(out) == scenario.FINAL, str(out)
    time.sleep(1)  # the bus runs sync handlers in its thread pool: let the last ones finish
    (OUT / "hierarchical_events.jsonl").write_text("".join(line + "\n" for line in log.lines), encoding="utf-8")
    scenario.write_json(OUT / "hierarchical_truth.json", truth())
    print(f"wrote {OUT}: {len(log.lines)} events")


if __name__ == "__main__":
    main()
