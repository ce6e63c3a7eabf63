"""A small deterministic, scripted "travel desk" agent for the promptfoo example (no model, no network).

``run(prompt)`` returns the conversation an OpenAI-style tool-calling agent would produce, as a
list of Chat Completions messages (trajcheck's provider reads it with the ``openai_chat``
reader). The script, chosen by keywords in the prompt:

* "book ... from X to Y": ``search_flights(origin=X, destination=Y)``, then
  ``book_flight(flight_id="FL100", seats=1)`` -- the correct behaviour;
* "cancel booking B..": ``search_bookings(query=<booking id>)`` then
  ``cancel_booking(booking_id=<id>)`` -- it skips the expected ``get_booking`` lookup and uses
  an unexpected search instead (the example's failing case);
* anything else: a plain answer with no tool call.
"""

from __future__ import annotations

import json
import re
from typing import Any


def _call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _tool(i: int, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps(content)}


def run(prompt: str) -> list[dict[str, Any]]:
    """The scripted conversation for ``prompt`` (OpenAI chat messages, user message first)."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    route = re.search(r"from\s+([A-Z]{3})\s+to\s+([A-Z]{3})", prompt)
    booking = re.search(r"\b(B\d+)\b", prompt)
    if "book" in prompt.lower() and route:
        origin, dest = route.groups()
        msgs += [
            {"role": "assistant", "content": None,
             "tool_calls": [_call(1, "search_flights", {"origin": origin, "destination": dest})]},
            _tool(1, [{"flight_id": "FL100", "price": 320}, {"flight_id": "FL200", "price": 410}]),
            {"role": "assistant", "content": None,
             "tool_calls": [_call(2, "book_flight", {"flight_id": "FL100", "seats": 1})]},
            _tool(2, {"confirmation": "CNF-7", "status": "booked"}),
            {"role": "assistant", "content": f"Booked FL100 from {origin} to {dest}; confirmation CNF-7."},
        ]
    elif "cancel" in prompt.lower() and booking:
        bid = booking.group(1)
        msgs += [
            {"role": "assistant", "content": None,
             "tool_calls": [_call(1, "search_bookings", {"query": bid})]},
            _tool(1, [{"booking_id": bid, "status": "confirmed"}]),
            {"role": "assistant", "content": None,
             "tool_calls": [_call(2, "cancel_booking", {"booking_id": bid})]},
            _tool(2, {"status": "cancelled"}),
            {"role": "assistant", "content": f"Booking {bid} is cancelled."},
        ]
    else:
        msgs.append({"role": "assistant", "content": "I can book or cancel flights."})
    return msgs
