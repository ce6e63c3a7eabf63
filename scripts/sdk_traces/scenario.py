"""The scripted scenario every SDK producer in this folder runs, and its truth file.

One user request; the scripted model answers in four turns:

1. a parallel pair: ``get_weather`` for São Paulo and for Zürich;
2. ``book_hotel`` with nested arguments (a list of guests, a preferences object) that the tool
   refuses (it raises: no room on a high floor);
3. the retry with ``prefs`` empty, which succeeds;
4. the final answer (non-ASCII text).

Each turn has its own token usage. ``truth()`` is what a reader must get from any trace of
this run: the calls in order with their arguments, the parallel grouping, each result's error
flag, the final answer and the summed usage. Producers run against it and write it beside
their artifacts (``write_truth``); the tests compare the read trajectories with it exactly.
Standard library only (each SDK has its own virtual environment).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

USER = "Wie ist das Wetter in São Paulo und Zürich? Dann buche ein Hotel in Zürich für Zoë und Łukasz."
GUESTS = [{"name": "Zoë", "age": 34}, {"name": "Łukasz", "age": 29}]
STAY_HIGH = {"nights": 2, "guests": GUESTS, "prefs": {"floor": "high", "tags": ["ruhig", "Frühstück"]}}
STAY_ANY = {"nights": 2, "guests": GUESTS, "prefs": {}}
FINAL = "Réservé à Zürich (ZH-4711) ; à São Paulo il fait 21 °C, à Zürich 12 °C."
BOOK_ERROR = "Kein Zimmer im oberen Stock frei"

# (calls of the turn as (name, args), usage (input, output)); the last turn is the answer
TURNS: list[tuple[list[tuple[str, dict[str, Any]]], tuple[int, int]]] = [
    ([("get_weather", {"city": "São Paulo"}), ("get_weather", {"city": "Zürich"})], (120, 30)),
    ([("book_hotel", {"city": "Zürich", "stay": STAY_HIGH})], (200, 40)),
    ([("book_hotel", {"city": "Zürich", "stay": STAY_ANY})], (260, 45)),
    ([], (300, 25)),
]


def get_weather(city: str) -> str:
    """The scripted weather tool's answer."""
    return {"São Paulo": "São Paulo: 21 °C, ensolarado", "Zürich": "Zürich: 12 °C, bewölkt"}[city]


def book_hotel(city: str, stay: dict[str, Any]) -> str:
    """The scripted booking tool: raises ``ValueError(BOOK_ERROR)`` when a high floor is asked."""
    if (stay.get("prefs") or {}).get("floor") == "high":
        raise ValueError(BOOK_ERROR)
    return f"Buchung bestätigt: ZH-4711 ({city}, {stay['nights']} Nächte, {len(stay['guests'])} Gäste)"


def result_of(name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """(output text or error message, is_error) of one scripted call."""
    try:
        return (get_weather(**args) if name == "get_weather" else book_hotel(**args)), False
    except ValueError as e:
        return str(e), True


def truth(*, sdk: str, version: str, final_as_tool: bool = False) -> dict[str, Any]:
    """The truth of the scenario: ``calls`` (name, args, is_error, output), ``call_steps``
    (calls per parallel step), ``final_response``, ``usage``; ``final_as_tool`` notes SDKs
    whose final answer is itself a tool call (smolagents' ``final_answer``), which is not a
    call of the run."""
    calls = []
    for cs, _ in TURNS:
        for name, args in cs:
            out, err = result_of(name, args)
            calls.append({"name": name, "args": args, "is_error": err, "output": out})
    return {"sdk": sdk, "version": version, "user": USER, "calls": calls,
            "call_steps": [len(cs) for cs, _ in TURNS if cs], "final_response": FINAL,
            "final_as_tool": final_as_tool,
            "usage": {"input_tokens": sum(u[0] for _, u in TURNS), "output_tokens": sum(u[1] for _, u in TURNS)}}


def write_json(path: Path, obj: Any) -> None:
    """``obj`` as indented UTF-8 JSON (non-ASCII kept) at ``path``, folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1, default=str) + "\n", encoding="utf-8")


def write_truth(out: Path, **kw: Any) -> None:
    """``truth(**kw)`` as ``out / truth.json``."""
    write_json(out / "truth.json", truth(**kw))
