"""Writes runs.jsonl and cases.jsonl: eight recorded runs of a scripted refund-desk agent and
the cases they are scored against (the shared data of the DeepEval, RAGAS, LangSmith and
promptfoo examples). Each run exercises one situation the metric table must get right:

* ``optional``   an optional lookup (search_faq) before the expected calls
* ``duplicate``  the refund issued twice
* ``retry``      the refund fails (503) and is retried successfully
* ``parallel``   two lookups issued together in one step
* ``order_broken`` / ``order_kept``  the refund e-mail sent before / after the refund
* ``forbidden``  the order deleted (a forbidden call)
* ``no_tool``    a question that needs no tool, answered without one

``fixture_cases.jsonl`` holds three more cases whose database starts from the sandbox fixture
``shop.sql`` (final state from a fixture; see ``sandbox_replay.py``).

Run ``python examples/refund_desk/make_data.py`` to rewrite the three files (they are committed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFUND = {"name": "issue_refund", "args": {"order_id": "981", "amount": 40}}
LOOKUP = {"name": "lookup_order", "args": {"order_id": "981"}}
CUSTOMER = {"name": "lookup_customer", "args": {"customer_id": "C7"}}
EMAIL = {"name": "send_refund_email", "args": {"order_id": "981"}}
FAQ = {"name": "search_faq", "args": {"q": "refund policy"}}
DELETE = {"name": "delete_order", "args": {"order_id": "981"}}
ASK = "Refund order 981 (customer C7, 40 USD) and e-mail the customer."
TOOLS = [{"name": n, "parameters": {"type": "object", "properties": props, "required": list(props),
                                     "additionalProperties": False}}
         for n, props in (("issue_refund", {"order_id": {"type": "string"}, "amount": {"type": "number"}}),
                          ("lookup_order", {"order_id": {"type": "string"}}),
                          ("lookup_customer", {"customer_id": {"type": "string"}}),
                          ("send_refund_email", {"order_id": {"type": "string"}}),
                          ("search_faq", {"q": {"type": "string"}}),
                          ("delete_order", {"order_id": {"type": "string"}}))]
BEFORE = {"refunds": []}
REFUNDED = {"refunds": [{"order_id": "981", "amount": 40}]}


def run(case_id: str, steps: list[list[tuple[dict[str, Any], Any]]], final: str, *,
        refunded: bool = True, user: str = ASK) -> dict[str, Any]:
    """A trajcheck trajectory dict: the user message, then each step's calls (several calls =
    one parallel step) followed by their results (``Exception`` text = a failed result)."""
    out: list[dict[str, Any]] = [{"kind": "user", "content": user}]
    k = 0
    for group in steps:
        calls = []
        results = []
        for call, result in group:
            k += 1
            cid = f"call_{k}"
            calls.append({"name": call["name"], "args": call["args"], "call_id": cid})
            failed = isinstance(result, str) and result.startswith("Error")
            results.append({"call_id": cid, "name": call["name"], "output": result,
                            "is_error": failed, **({"error": result} if failed else {})})
        out.append({"kind": "tool_call", "tool_calls": calls})
        out += [{"kind": "tool_result", "tool_result": r} for r in results]
    out.append({"kind": "final_response", "content": final})
    for i, s in enumerate(out):
        s["index"] = i
    return {"steps": out, "final_response": final,
            "metadata": {"case_id": case_id, "state_before": BEFORE,
                         "state_after": REFUNDED if refunded else BEFORE}}


def case(case_id: str, expected: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": case_id, "input": extra.pop("input", ASK), "expected_calls": expected,
                         "optional_calls": ["search_faq", "lookup_order", "lookup_customer"],
                         "forbidden_calls": ["delete_order"],
                         "precedence": [["issue_refund", "send_refund_email"]],
                         "expected_final_state": {"refunds": [{"order_id": "981"}]},
                         "response_must_include": ["refund"], "max_steps": 4, "tools": TOOLS}
    d.update(extra)
    return d


OK = {"status": "ok"}
DONE = "Your refund of 40 USD for order 981 has been issued and you will get an e-mail."
RUNS = [
    run("optional", [[(FAQ, "Refunds within 30 days.")], [(LOOKUP, {"order_id": "981"})],
                     [(REFUND, OK)], [(EMAIL, OK)]], DONE),
    run("duplicate", [[(REFUND, OK)], [(REFUND, OK)], [(EMAIL, OK)]], DONE),
    run("retry", [[(REFUND, "Error: 503 service unavailable")], [(REFUND, OK)], [(EMAIL, OK)]], DONE),
    run("parallel", [[(LOOKUP, {"order_id": "981"}), (CUSTOMER, {"customer_id": "C7"})],
                     [(REFUND, OK)], [(EMAIL, OK)]], DONE),
    run("order_broken", [[(EMAIL, OK)], [(REFUND, OK)]], DONE),
    run("order_kept", [[(REFUND, OK)], [(EMAIL, OK)]], DONE),
    run("forbidden", [[(LOOKUP, {"order_id": "981"})], [(DELETE, OK)], [(REFUND, OK)], [(EMAIL, OK)]],
        DONE),
    run("no_tool", [], "We are open 9:00-17:00, Monday to Friday.", refunded=False,
        user="When is your support desk open?"),
]
CASES = [
    case("optional", [REFUND, EMAIL]),
    case("duplicate", [REFUND, EMAIL]),
    case("retry", [REFUND, EMAIL]),
    case("parallel", [LOOKUP, CUSTOMER, REFUND, EMAIL], optional_calls=["search_faq"]),
    case("order_broken", [REFUND, EMAIL]),
    case("order_kept", [REFUND, EMAIL]),
    case("forbidden", [REFUND, EMAIL]),
    case("no_tool", [], input="When is your support desk open?", expected_final_state={"refunds": []},
         response_must_include=["9:00"], max_steps=1),
]

#: Final state from a sandbox fixture: the database before the run is shop.sql (two orders, a
#: refund for order 900); each case's agent replays a recorded run on it (sandbox_replay.py).
FIXTURE_CASES = [case(cid, [REFUND, EMAIL], initial_state="shop.sql",
                      expected_final_state={"refunds": [{"order_id": "981", "amount": 40}]})
                 for cid in ("fixture_kept", "fixture_duplicate", "fixture_deleted")]

if __name__ == "__main__":
    (HERE / "fixture_cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in FIXTURE_CASES))
    (HERE / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    (HERE / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    print(f"wrote {len(RUNS)} runs, {len(CASES)} cases and {len(FIXTURE_CASES)} fixture cases to {HERE}")
