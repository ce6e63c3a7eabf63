"""The refund desk's tools on a real trajcheck sandbox, for the final-state cases that start
from a sandbox fixture (``shop.sql``, the cases of ``fixture_cases.jsonl``).

``replay(run_id)`` opens a ``trajcheck.run.SQLiteSandbox`` loaded from the fixture, runs the
recorded run's tool calls through the tools below (a call whose recorded result failed -- the
503 -- changed nothing and is not run), and returns the run with its recorded database
snapshots replaced by the sandbox's snapshot after the run (``state_after``). The state before
the run is not given: each host takes it from the case's fixture (``initial_state``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from trajcheck.match.matching import is_failed
from trajcheck.model import Trajectory
from trajcheck.run import SQLiteSandbox

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "shop.sql"
#: fixture case -> the recorded run (runs.jsonl) its agent replays
REPLAYS = {"fixture_kept": "order_kept", "fixture_duplicate": "duplicate", "fixture_deleted": "forbidden"}


def _tools(sb: SQLiteSandbox) -> dict[str, Any]:
    def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
        sb.execute("INSERT INTO refunds (order_id, amount) VALUES (?, ?)", (order_id, amount))
        return {"status": "ok"}

    def delete_order(order_id: str) -> dict[str, Any]:
        sb.execute("DELETE FROM orders WHERE id = ?", (order_id,))
        return {"status": "ok"}

    def lookup_order(order_id: str) -> list[dict[str, Any]]:
        return sb.execute("SELECT * FROM orders WHERE id = ?", (order_id,))

    def read_only(**_: Any) -> dict[str, Any]:  # e-mail, FAQ, customer lookup: no table changes
        return {"status": "ok"}

    return {"issue_refund": issue_refund, "delete_order": delete_order, "lookup_order": lookup_order,
            "lookup_customer": read_only, "send_refund_email": read_only, "search_faq": read_only}


def replay(run: Trajectory, case_id: str, fixture: str | Path = FIXTURE) -> Trajectory:
    """``run`` with ``metadata = {"case_id": case_id, "state_after": ...}``: its calls run on a
    sandbox loaded from ``fixture``; ``state_after`` is the sandbox's snapshot after them
    (``{table: [row, ...]}``). Raises RuntimeError when a tool fails on the sandbox."""
    with SQLiteSandbox(fixture) as sb:
        tools = _tools(sb)
        for call, result in run.pairs():
            if result is not None and is_failed(result):
                continue
            out = sb.call_tool(tools[call.name], call.args, name=call.name, call_id=call.call_id)
            if out.is_error:
                raise RuntimeError(f"replaying {call.name}: {out.error}")
        after = sb.snapshot()
    return replace(run, metadata={"case_id": case_id, "state_after": after})
