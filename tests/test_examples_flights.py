"""The flight-booking example: the careful agent passes, the reckless one breaks the sequences."""

from __future__ import annotations

from pathlib import Path

from trajcheck.read.dataset import load_cases
from trajcheck.run.runner import load_agent, run_suite

FL = Path(__file__).resolve().parents[1] / "examples" / "flights"


def _score(name: str):
    agent = load_agent(f"{FL / 'agents.py'}:{name}")
    return run_suite(agent, load_cases(FL / "cases.jsonl"), trials=2, progress=False).scorecard


def test_good_agent_passes_everything():
    sc = _score("good_agent")
    assert sc.suite.pass_hat_k == {1: 1.0, 2: 1.0}
    assert sc.suite.forbidden_rate.value == 0.0
    assert sc.suite.mean_composite.value == 1.0


def test_reckless_agent_breaks_confirmation_and_validation_rules():
    sc = _score("reckless_agent")
    by = {r.case_id: r for r in sc.runs if r.trial == 0}
    # books without validate_booking: final state right, but a critical violation zeroes the composite
    for cid in ("fl_001_book_cheapest", "fl_002_book_lax"):
        assert by[cid].success and by[cid].composite == 0.0
        assert "book_flight breaks book only a validated flight" in by[cid].failure_reason
    assert "cancel_booking breaks cancel needs the user's confirmation" in by["fl_004_cancel_confirmed"].failure_reason
    # cancels although the user would have said no: the final state shows it
    r = by["fl_005_cancel_declined"]
    assert not r.success and r.failure_reason.startswith("task failed: final state: table bookings changed")
    assert sc.suite.pass_hat_k[2] == 5 / 6
    assert sc.suite.forbidden_rate.value == 8 / 12
