"""tau-bench reader on the real gpt-4o airline result file (issue 2 done-when)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from trajcheck.model import ExpectedCall
from trajcheck.read.traces import load
from trajcheck.read.traces.tau_bench import READ_ONLY_TOOLS

DATA = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


def _res():
    return load(DATA)


def test_counts_match_published_file() -> None:
    res = _res()
    assert res.formats == {"tau_bench": 200}
    assert len(res) == 200
    assert len({t.metadata["case_id"] for t in res}) == 50
    assert len(res.cases) == 50
    per_tool = Counter(c.name for t in res for c in t.tool_calls())
    assert sum(per_tool.values()) == 1164
    assert len(per_tool) == 14
    assert per_tool["get_reservation_details"] == 377
    assert sum(1 for t in res if t.metadata["reward"] == 1.0) == 84
    # 200 system + 1,490 user + 2,454 assistant + 1,164 tool messages
    assert sum(len(t.steps) for t in res) == 200 + 1490 + 2454 + 1164
    assert res.problems == []


def test_pairs_follow_reused_ids() -> None:
    res = _res()
    pairs = [p for t in res for p in t.pairs()]
    assert len(pairs) == 1164
    assert all(r is not None and r.name == c.name for c, r in pairs)
    # ids are reused within trajectories in this data; position-after-id still pairs correctly
    reused = sum(
        1 for t in res for n in Counter(c.call_id for c in t.tool_calls()).values() if n > 1)
    assert reused > 0


def test_error_convention_and_metadata() -> None:
    res = _res()
    results = [r for t in res for r in t.tool_results()]
    errs = [r for r in results if r.is_error]
    assert all(isinstance(r.output, str) and r.output.startswith("Error:") for r in errs)
    assert all(r.is_error is False for r in results if not (isinstance(r.output, str) and r.output.startswith("Error:")))
    assert len(errs) == sum(1 for r in results if isinstance(r.output, str) and r.output.startswith("Error:"))
    t0 = res[0]
    assert t0.metadata["case_id"] == "0" and t0.metadata["trial"] == 0 and t0.metadata["run_id"] == "0-0"
    assert t0.metadata["reward"] == 0.0 and t0.metadata["reward_info"] == {"r_actions": 0.0}
    assert t0.steps[0].kind == "system" and t0.steps[1].kind == "user"
    assert t0.final_response is not None and t0.final_response.startswith("Your flight from New York")
    # five runs ended without reward_info
    assert sum(1 for t in res if "reward_info" not in t.metadata) == 5


def test_case_from_task() -> None:
    c = _res().cases["0"]
    assert c.user == {"id": "mia_li_3668"}
    assert c.input.startswith("You are mia_li_3668.")
    assert len(c.expected_calls) == 1
    ec = c.expected_calls[0]
    assert isinstance(ec, ExpectedCall) and ec.name == "book_reservation"
    assert ec.args is not None and ec.args["payment_methods"] == [
        {"payment_id": "certificate_7504069", "amount": 250}, {"payment_id": "credit_card_4421486", "amount": 5}]
    assert c.optional_calls == READ_ONLY_TOOLS["airline"]
    assert c.metadata["domain"] == "airline"
    with_outputs = [c for c in _res().cases.values() if c.response_must_include]
    assert len(with_outputs) == 4
    assert sum(len(c.expected_calls) for c in _res().cases.values()) == 158
