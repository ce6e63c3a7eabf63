"""What the tools of tau-bench and tau2-bench do, per domain, as trajcheck case settings.

The tau-bench and tau2-bench readers build one ``Case`` per task from the file's expected
actions. Whether a run reached the task's database is judged from its calls
(``metrics.outcome.outcome_from_calls``), so a case must know, per tool:

- whether it is read-only (it becomes one of the case's ``optional_calls``: calling it is
  free, and it is never a write);
- which arguments the tool's code reads in a way that ignores their order or some of their
  keys: those become ordinary argument matchers in ``ExpectedCall.match`` (a user sees
  them in the case and can override them).

Every entry below says why, from the tool's code in sierra-research/tau-bench (commit
59a200c, ``tau_bench/envs/<domain>/tools/*.py``) and sierra-research/tau2-bench (commit
a2c0247, ``src/tau2/domains/<domain>/tools.py``, where ``@is_tool(ToolType.READ)`` /
``GENERIC`` mark tools that change nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ArgRule:
    """A matcher for one argument of one tool and the reason, from the tool's code."""

    matcher: Any
    why: str


@dataclass(frozen=True)
class Domain:
    """One benchmark domain: its read-only tools (name -> why) and argument rules
    (tool -> argument -> ``ArgRule``)."""

    benchmark: str
    name: str
    read_only: Mapping[str, str]
    args: Mapping[str, Mapping[str, ArgRule]] = field(default_factory=dict)
    preconditions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def matchers(self, tool: str) -> dict[str, Any]:
        """The ``ExpectedCall.match`` entries for calls of ``tool`` (empty when none)."""
        return {a: r.matcher for a, r in self.args.get(tool, {}).items()}


_LOOKUP = "reads the database and returns it; changes nothing"
_CALC = "evaluates an arithmetic expression; changes nothing"
_THINK = "logs a thought; changes nothing"
_TRANSFER = "ends the conversation with a message; changes nothing in the database"

# retail: return / exchange only act on a delivered order (both benchmarks' code returns an
# error for any other status); written as a case precondition the outcome can check against
# the order as the run first read it (metrics.outcome, PRECONDITIONS_KEY)
_DELIVERED = {"key": "order_id", "field": "status", "allowed": ["delivered"],
              "why": "the tool rejects an order whose status is not 'delivered'"}
_RETAIL_PRE = {"return_delivered_order_items": _DELIVERED, "exchange_delivered_order_items": _DELIVERED}

# retail: return / exchange store the item lists sorted
_SORTED_RETURN = ArgRule("unordered", "the tool stores sorted(item_ids) as the order's return_items, "
                                      "so their order is lost (duplicates still count)")
_SORTED_EXCHANGE = ArgRule("unordered", "the tool stores sorted(item_ids) and sorted(new_item_ids); "
                                        "the pairing only validates each new item's product and the "
                                        "price difference is a sum")

_RETAIL_READS = {
    "find_user_id_by_email": _LOOKUP, "find_user_id_by_name_zip": _LOOKUP,
    "get_order_details": _LOOKUP, "get_product_details": _LOOKUP, "get_user_details": _LOOKUP,
    "list_all_product_types": _LOOKUP, "calculate": _CALC, "transfer_to_human_agents": _TRANSFER,
}
_RETAIL_ARGS = {
    "return_delivered_order_items": {"item_ids": _SORTED_RETURN},
    "exchange_delivered_order_items": {"item_ids": _SORTED_EXCHANGE, "new_item_ids": _SORTED_EXCHANGE},
    # modify_pending_order_items: item_ids[i] becomes new_item_ids[i] in place, so the two lists
    # stay ordered (their pairing decides the result).
}
_AIRLINE_READS = {
    "get_user_details": _LOOKUP, "get_reservation_details": _LOOKUP,
    "search_direct_flight": _LOOKUP, "search_onestop_flight": _LOOKUP,
    "list_all_airports": _LOOKUP, "calculate": _CALC, "transfer_to_human_agents": _TRANSFER,
}

# tau-bench airline: each flights[] item is kept as sent, but price, origin and destination
# are overwritten from the flight database (both for kept and for new segments).
_TB_FLIGHTS = ArgRule({"type": "fields", "ignore": ["price", "origin", "destination"]},
                      "the tool overwrites each item's price, origin and destination from the "
                      "flight database; other keys are stored as sent")
# tau2 airline: items are parsed into pydantic models, which drop keys they do not declare.
_T2_FLIGHTS = ArgRule({"type": "fields", "keys": ["flight_number", "date"]},
                      "the tool builds FlightInfo(flight_number, date) from each item; other keys "
                      "are dropped (and price, origin, destination come from the database)")
_T2_PASSENGERS = ArgRule({"type": "fields", "keys": ["first_name", "last_name", "dob"]},
                         "the tool builds Passenger(first_name, last_name, dob) from each item; "
                         "other keys are dropped")
_T2_PAYMENTS = ArgRule({"type": "fields", "keys": ["payment_id", "amount"]},
                       "the tool builds Payment(payment_id, amount) from each item; other keys "
                       "are dropped")

TAU_BENCH: dict[str, Domain] = {
    "airline": Domain("tau-bench", "airline",
                      {**_AIRLINE_READS, "think": _THINK},
                      {"update_reservation_flights": {"flights": _TB_FLIGHTS},
                       "book_reservation": {"flights": _TB_FLIGHTS}}),
    "retail": Domain("tau-bench", "retail", {**_RETAIL_READS, "think": _THINK}, _RETAIL_ARGS,
                     _RETAIL_PRE),
}

_TELECOM_READS = {
    "get_customer_by_phone": _LOOKUP, "get_customer_by_id": _LOOKUP,
    "get_customer_by_name": _LOOKUP, "get_details_by_id": _LOOKUP,
    "get_bills_for_customer": _LOOKUP, "get_data_usage": _LOOKUP,
    "transfer_to_human_agents": _TRANSFER,
}

TAU2: dict[str, Domain] = {
    "airline": Domain("tau2", "airline",
                      {**_AIRLINE_READS, "get_flight_status": _LOOKUP},
                      {"update_reservation_flights": {"flights": _T2_FLIGHTS},
                       "book_reservation": {"flights": _T2_FLIGHTS, "passengers": _T2_PASSENGERS,
                                            "payment_methods": _T2_PAYMENTS},
                       "update_reservation_passengers": {"passengers": _T2_PASSENGERS}}),
    "retail": Domain("tau2", "retail", {**_RETAIL_READS, "get_item_details": _LOOKUP}, _RETAIL_ARGS,
                     _RETAIL_PRE),
    # The user's device tools (check_*, toggle_*, ...) are the simulated user's, not the
    # agent's: the tau2 reader keeps them out of the agent's calls.
    "telecom": Domain("tau2", "telecom", _TELECOM_READS),
}


def domain(benchmark: str, name: str | None) -> Domain | None:
    """The ``Domain`` of ``benchmark`` (``"tau-bench"`` or ``"tau2"``) named ``name``, or None
    when either is unknown (the case then gets no tool knowledge and says so)."""
    table = TAU_BENCH if benchmark == "tau-bench" else TAU2 if benchmark == "tau2" else {}
    return table.get(name or "")


def markdown_rows() -> list[str]:
    """One Markdown table row per tool fact: ``| benchmark | domain | tool | argument |
    setting | why |`` (read-only tools with argument ``-`` and setting ``optional call``),
    in table order; docs/benchmark_tools.md is this table (a test keeps them equal)."""
    import json

    rows = []
    for d in list(TAU_BENCH.values()) + list(TAU2.values()):
        for tool, why in d.read_only.items():
            rows.append(f"| {d.benchmark} | {d.name} | `{tool}` | - | optional call (read-only) | {why} |")
        for tool, rules in d.args.items():
            for arg, r in rules.items():
                spec = r.matcher if isinstance(r.matcher, str) else json.dumps(r.matcher)
                rows.append(f"| {d.benchmark} | {d.name} | `{tool}` | `{arg}` | `{spec}` | {r.why} |")
        for tool, pre in d.preconditions.items():
            cond = f"precondition: {pre['field']} in {pre['allowed']}"
            rows.append(f"| {d.benchmark} | {d.name} | `{tool}` | `{pre['key']}` | {cond} | {pre['why']} |")
    return rows


__all__ = ["TAU2", "TAU_BENCH", "ArgRule", "Domain", "domain", "markdown_rows"]
