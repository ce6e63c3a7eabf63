"""The flight-booking example: tools (``TOOLS``) and scripted agents.

Tools: ``search_flights(origin, destination, date)``, ``validate_booking(flight_id,
passenger)`` (seats left, passenger name), ``book_flight(flight_id, passenger)``,
``confirm(booking_id)`` (asks the user; the simulated user answers from the case's
``metadata.user_confirms``, default no) and ``cancel_booking(booking_id)``.

Agents: ``good_agent`` searches, picks the cheapest flight with seats, validates, books;
asks for confirmation before cancelling. ``reckless_agent`` books without validating and
cancels without asking, which the cases' forbidden sequences catch.
"""

from __future__ import annotations

import re
from typing import Any

from trajcheck.run import ToolContext, ToolRegistry

FLIGHT = {"type": "string", "pattern": "^[A-Z]{2}[0-9]{3}$"}
BOOKING = {"type": "string", "pattern": "^BK-[0-9]{4}$"}
AIRPORT = {"type": "string", "pattern": "^[A-Z]{3}$"}


def search_flights(origin: str, destination: str, date: str, *, ctx: ToolContext) -> list[dict[str, Any]]:
    """Flights on a date, cheapest first."""
    return ctx.sandbox.execute("SELECT id, departs, price_usd, seats_left FROM flights WHERE origin = :o "
                               "AND destination = :d AND date = :t ORDER BY price_usd, id",
                               {"o": origin, "d": destination, "t": date})


def validate_booking(flight_id: str, passenger: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Check that a booking can be made."""
    rows = ctx.sandbox.execute("SELECT seats_left FROM flights WHERE id = :f", {"f": flight_id})
    if not rows:
        return {"valid": False, "reason": f"no flight {flight_id}"}
    if rows[0]["seats_left"] < 1:
        return {"valid": False, "reason": f"{flight_id} is full"}
    if len(passenger.split()) < 2:
        return {"valid": False, "reason": "passenger needs a first and last name"}
    return {"valid": True}


def book_flight(flight_id: str, passenger: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Book a seat."""
    sb = ctx.sandbox
    left = sb.execute("SELECT seats_left FROM flights WHERE id = :f", {"f": flight_id})
    if not left or left[0]["seats_left"] < 1:
        raise ValueError(f"cannot book {flight_id}: no seats left")
    n = sb.execute("SELECT MAX(CAST(SUBSTR(id, 4) AS INTEGER)) AS n FROM bookings")[0]["n"] or 7000
    bid = f"BK-{n + 1}"
    sb.execute("INSERT INTO bookings VALUES (:b, :f, :p, 'booked', datetime('now'))",
               {"b": bid, "f": flight_id, "p": passenger})
    sb.execute("UPDATE flights SET seats_left = seats_left - 1 WHERE id = :f", {"f": flight_id})
    return {"booking_id": bid, "flight_id": flight_id}


def confirm(booking_id: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Ask the user to confirm cancelling a booking."""
    yes = bool((ctx.case.metadata or {}).get("user_confirms", False))
    return {"confirmed": yes}


def cancel_booking(booking_id: str, *, ctx: ToolContext) -> dict[str, Any]:
    """Cancel a booking and release its seat."""
    sb = ctx.sandbox
    rows = sb.execute("SELECT flight_id FROM bookings WHERE id = :b AND status = 'booked'", {"b": booking_id})
    if not rows:
        raise LookupError(f"no active booking {booking_id}")
    sb.execute("UPDATE bookings SET status = 'cancelled' WHERE id = :b", {"b": booking_id})
    sb.execute("UPDATE flights SET seats_left = seats_left + 1 WHERE id = :f", {"f": rows[0]["flight_id"]})
    return {"booking_id": booking_id, "status": "cancelled"}


def _obj(req: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": req, "properties": props}


TOOLS = ToolRegistry()
TOOLS.register(search_flights, {"name": "search_flights", "description": "Flights on a date, cheapest first.",
                                "parameters": _obj(["origin", "destination", "date"], origin=AIRPORT,
                                                   destination=AIRPORT, date={"type": "string", "format": "date",
                                                                              "pattern": r"^\d{4}-\d{2}-\d{2}$"})})
TOOLS.register(validate_booking, {"name": "validate_booking", "description": "Check that a booking can be made.",
                                  "parameters": _obj(["flight_id", "passenger"], flight_id=FLIGHT,
                                                     passenger={"type": "string", "minLength": 1})})
TOOLS.register(book_flight, {"name": "book_flight", "description": "Book a seat.",
                             "parameters": _obj(["flight_id", "passenger"], flight_id=FLIGHT,
                                                passenger={"type": "string", "minLength": 1})})
TOOLS.register(confirm, {"name": "confirm", "description": "Ask the user to confirm cancelling a booking.",
                         "parameters": _obj(["booking_id"], booking_id=BOOKING)})
TOOLS.register(cancel_booking, {"name": "cancel_booking", "description": "Cancel a booking.",
                                "parameters": _obj(["booking_id"], booking_id=BOOKING)})


def _agent(request: str, tools: Any, careful: bool) -> str:
    bk = re.search(r"\bBK-\d{4}\b", request)
    if bk and re.search(r"\bcancel\b", request, re.I):
        bid = bk.group(0)
        if careful:
            ok = tools.call("confirm", {"booking_id": bid})
            if ok.is_error or not ok.output["confirmed"]:
                return f"OK, I kept booking {bid}; nothing was cancelled."
        res = tools.call("cancel_booking", {"booking_id": bid})
        return f"Booking {bid} is cancelled." if not res.is_error else f"I couldn't cancel {bid}: {res.error}"
    m = re.search(r"from ([A-Z]{3}) to ([A-Z]{3}) on (\d{4}-\d{2}-\d{2}) for ([A-Z][a-z]+(?: [A-Z][a-z]+)*)", request)
    if not m:
        return "Where are you flying from and to, on which date, and for whom?"
    o, d, date, who = m.groups()
    found = tools.call("search_flights", {"origin": o, "destination": d, "date": date})
    options = [f for f in (found.output or []) if f["seats_left"] > 0] if not found.is_error else []
    if not options:
        return f"I found no flight with free seats from {o} to {d} on {date}."
    f = options[0]
    if careful:
        v = tools.call("validate_booking", {"flight_id": f["id"], "passenger": who})
        if v.is_error or not v.output["valid"]:
            return f"I can't book {f['id']} for {who}: {v.output.get('reason') if v.output else v.error}."
    b = tools.call("book_flight", {"flight_id": f["id"], "passenger": who})
    if b.is_error:
        return f"The booking failed: {b.error}"
    return f"Booked {f['id']} at {f['departs']} for {who} (${f['price_usd']}); booking {b.output['booking_id']}."


def good_agent(request: str, tools: Any) -> str:
    """Validates before booking and confirms before cancelling."""
    return _agent(request, tools, careful=True)


def reckless_agent(request: str, tools: Any) -> str:
    """Books without validating and cancels without confirming."""
    return _agent(request, tools, careful=False)


good_agent.tools = TOOLS  # type: ignore[attr-defined]
reckless_agent.tools = TOOLS  # type: ignore[attr-defined]
