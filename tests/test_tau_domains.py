"""Per-domain tool knowledge of tau-bench / tau2 (trajcheck.read.traces.tau_domains) and the
``fields`` matcher it uses; gzip result files read as they are published."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from trajcheck.errors import MatcherError, TraceFormatError
from trajcheck.match.matchers import get_matcher, known_matchers
from trajcheck.model import Case, Step, ToolCall, ToolResult, Trajectory
from trajcheck.read.traces import load
from trajcheck.read.traces.tau_domains import TAU2, TAU_BENCH, domain
from trajcheck.score.suite import evaluate

RETAIL = Path(__file__).parent / "data" / "tau_bench" / "more" / "retail_gpt-4.1-mini_user-gpt-4.1_shahabeddin.json.gz"


def test_fields_matcher_compares_only_the_named_keys() -> None:
    m = get_matcher({"type": "fields", "keys": ["flight_number", "date"]})
    exp = [{"flight_number": "HAT1", "date": "2024-05-01"}, {"flight_number": "HAT2", "date": "2024-05-02"}]
    extra = [{"flight_number": "HAT1", "date": "2024-05-01", "price": 9}, {"flight_number": "HAT2", "date": "2024-05-02"}]
    assert m(exp, extra) is True
    assert m(exp, list(reversed(extra))) is False  # ordered by default
    assert m(exp, extra[:1]) is False
    assert m(exp, [{"flight_number": "HAT1"}, exp[1]]) is False  # a named key missing on one side
    assert get_matcher({"type": "fields", "keys": ["flight_number", "date"], "ordered": False})(
        exp, list(reversed(extra))) is True
    ig = get_matcher({"type": "fields", "ignore": ["price"]})
    assert ig([{"a": 1, "price": 3}], [{"a": 1.0}]) is True
    assert ig([{"a": 1}], [{"a": 1, "cabin": "x"}]) is False  # other keys still count
    assert m("HAT1", "HAT1") is True and m("HAT1", ["HAT1"]) is False  # not lists of objects: exact
    assert "fields" in known_matchers()


@pytest.mark.parametrize("spec, msg", [
    ({"type": "fields"}, "exactly one of 'keys'"),
    ({"type": "fields", "keys": ["a"], "ignore": ["b"]}, "exactly one of 'keys'"),
    ({"type": "fields", "keys": "a"}, "'keys' must be a list of key names"),
    ({"type": "fields", "keys": ["a"], "ordered": "no"}, "'ordered' must be true or false"),
])
def test_fields_matcher_rejects_bad_specs(spec: dict, msg: str) -> None:
    with pytest.raises(MatcherError, match=msg):
        get_matcher(spec)


def test_every_rule_has_a_reason_and_read_only_lists_are_right() -> None:
    for d in list(TAU_BENCH.values()) + list(TAU2.values()):
        assert all(isinstance(w, str) and w for w in d.read_only.values())
        for rules in d.args.values():
            assert all(r.why for r in rules.values())
    # tau2 airline adds get_flight_status; retail adds get_item_details (ToolType.READ in tau2)
    assert "get_flight_status" in TAU2["airline"].read_only and "get_flight_status" not in TAU_BENCH["airline"].read_only
    assert "get_item_details" in TAU2["retail"].read_only
    assert "book_reservation" not in TAU2["airline"].read_only
    assert domain("tau2", "telecom") is not None and domain("tau2", "banking") is None


def _write(name: str, args: dict, out: str) -> tuple[Step, Step]:
    return (Step(0, "tool_call", tool_calls=(ToolCall(name, args, call_id="c"),)),
            Step(0, "tool_result", tool_result=ToolResult("c", name, out, is_error=False)))


def test_item_ids_in_any_order_match_a_sorting_tool() -> None:
    lr = load(RETAIL)
    c = lr.cases["2"]
    ret = next(e for e in c.expected_calls if e.name == "return_delivered_order_items")
    assert ret.match == {"item_ids": "unordered"}
    args = dict(ret.args or {})
    steps = _write(ret.name, {**args, "item_ids": list(reversed(args["item_ids"]))}, "{}")
    t = Trajectory(steps=tuple(Step(i, s.kind, tool_calls=s.tool_calls, tool_result=s.tool_result)
                               for i, s in enumerate(steps)), metadata={"case_id": "2"})
    one = Case(id="2", input="x", expected_calls=(ret,), args_mode="exact_keys")
    assert evaluate([t], [one], n_boot=10).runs[0].success is True


def test_tau_bench_retail_agreement() -> None:
    """115 gpt-4.1-mini retail runs; 114 agree with the recorded reward. 64-0 skipped an
    expected exchange of an order the run read as 'pending': the tool rejects non-delivered
    orders (the case's precondition), so the write is not required. Left: 36-0 exchanged two
    items for themselves inside modify_pending_order_items (the pairs (x, x) change nothing;
    a per-argument matcher cannot see how item_ids pairs with new_item_ids)."""
    sc = evaluate(load(RETAIL), n_boot=20)
    rr = sc.recorded_reward
    assert rr is not None and (rr.n, rr.agree) == (115, 114)
    assert {d.run_id for d in rr.disagreements} == {"36-0"}
    assert (rr.checks["r_actions"].agree, rr.checks["r_actions"].n) == (77, 77)
    r64 = next(r for r in sc.runs if r.run_id == "64-0")
    assert r64.success and ("expected call 6 (exchange_delivered_order_items) not required: the run's first "
                            "read of order_id '#W7464385' shows status 'pending'") in r64.outcome_reason


def test_gz_files_and_folders(tmp_path: Path) -> None:
    recs = json.loads(gzip.decompress(RETAIL.read_bytes()))[:3]
    p = tmp_path / "runs.json.gz"
    p.write_bytes(gzip.compress(json.dumps(recs).encode()))
    assert len(load(p)) == 3 and len(load(tmp_path)) == 3
    jl = tmp_path / "more.jsonl.gz"
    jl.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in recs).encode()))
    assert len(load(jl)) == 3
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(TraceFormatError, match="bad.json.gz: cannot be read .*not a gzip file"):
        load(bad)


def test_docs_table_is_the_tool_knowledge() -> None:
    from trajcheck.read.traces.tau_domains import markdown_rows

    doc = (Path(__file__).parents[1] / "docs" / "benchmark_tools.md").read_text()
    rows = [ln for ln in doc.splitlines() if ln.startswith("| ") and not ln.startswith(("| benchmark", "| ---"))]
    assert rows == markdown_rows()
