"""Producer: the scenario (scenario.py) played by AG2 (the AutoGen 0.2 line, ``import autogen``):
a ``ConversableAgent`` assistant on the scripted OpenAI-compatible server
(scripted_openai_server.py, 127.0.0.1) whose tools (``register_function``) a second agent
executes; ``initiate_chat`` runs the conversation and returns a ``ChatResult``. Two
conversations are written, the two ways AG2 users keep chat histories as JSON Lines:

- ``chat_results.jsonl``: one ``ChatResult`` per line (``dataclasses.asdict``: ``chat_id``,
  ``chat_history``, ``summary``, ``cost``, ``human_input``);
- ``chat_messages.jsonl``: one ``chat_history`` message per line, each with its
  conversation's ``chat_id`` added;

and AG2's own runtime log of both (``autogen.runtime_logging.start(logger_type="file")``):
``runtime.log``, JSON lines of agent events, model calls and tool runs, with the few plain-text
lines the file logger writes itself (its session banner, "Failed to log ..." notes).

AG2 runs a raising tool itself and answers ``"Error: <message>"`` in the tool response; its
messages carry no error flag. Writes ``truth.json`` from the scenario.

Run with the pinned environment: ``make sdk-traces`` (requirements/ag2.txt).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import autogen
from autogen import ConversableAgent, register_function

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402
import scripted_openai_server  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "ag2"


def get_weather(city: Annotated[str, "the city"]) -> str:
    """The weather in a city."""
    return scenario.get_weather(city)


def book_hotel(city: Annotated[str, "the city"], stay: Annotated[dict[str, Any], "nights, guests, prefs"]) -> str:
    """Book a hotel (raises when no room fits)."""
    return scenario.book_hotel(city, stay)


def converse(base: str) -> Any:
    llm_config = {"config_list": [{"model": "scripted-model", "api_key": "none", "base_url": base,
                                   "price": [0.0, 0.0]}], "cache_seed": None}
    assistant = ConversableAgent("assistant", system_message="Du bist ein Reiseassistent.", llm_config=llm_config)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER",
                            is_termination_msg=lambda m: bool(m.get("content")) and not m.get("tool_calls"))
    for f in (get_weather, book_hotel):
        register_function(f, caller=assistant, executor=user, description=f.__doc__ or "")
    return user.initiate_chat(assistant, message=scenario.USER, max_turns=8)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    srv, base = scripted_openai_server.start()
    (OUT / "runtime.log").unlink(missing_ok=True)  # the file logger appends
    autogen.runtime_logging.start(logger_type="file", config={"filename": str(OUT / "runtime.log")})
    try:
        results = [converse(base), converse(base)]
    finally:
        autogen.runtime_logging.stop()
        srv.shutdown()
    for r in results:
        assert r.chat_history[-1]["content"] == scenario.FINAL, r.chat_history[-1]
    with (OUT / "chat_results.jsonl").open("w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(dataclasses.asdict(r), ensure_ascii=False, default=str) + "\n")
    with (OUT / "chat_messages.jsonl").open("w", encoding="utf-8") as f:
        for r in results:
            for m in r.chat_history:
                f.write(json.dumps({"chat_id": r.chat_id, **m}, ensure_ascii=False, default=str) + "\n")
    truth = scenario.truth(sdk="ag2 (ConversableAgent.initiate_chat, ChatResult)", version=version("ag2"))
    for c in truth["calls"]:  # AG2 answers a raising tool with "Error: <message>" and no flag
        if c["is_error"]:
            c["output"] = f"Error: {c['output']}"
        c["is_error"] = None
    truth["conversations"] = 2
    truth["usage_note"] = "ChatResult.cost (usage_including_cached_inference) sums the model calls; " \
                          "a message per line carries no usage"
    scenario.write_json(OUT / "truth.json", truth)
    print(f"wrote {OUT} (autogen {autogen.__version__})")


if __name__ == "__main__":
    main()
