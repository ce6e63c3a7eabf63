"""Writes that change nothing (metrics.outcome.outcome_from_calls): the three rules, each
with the case where it must not apply. Hand-built runs; the real files are in test_tau2.py."""

from __future__ import annotations

import json

from trajcheck.metrics.outcome import (
    NO_EFFECT_KEY,
    REPLAYED_KEY,
    outcome_from_calls,
    unchanged_writes,
)
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

READS = ("get",)


def _traj(calls: list[tuple[str, dict, str, bool]], meta: dict | None = None) -> Trajectory:
    """calls: (name, args, output, failed)."""
    steps = [Step(0, "user", "go")]
    for i, (name, args, out, failed) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=f"c{i}"),)))
        steps.append(Step(len(steps), "tool_result",
                          tool_result=ToolResult(f"c{i}", name, out, is_error=failed)))
    return Trajectory(steps=tuple(steps), metadata=meta or {})


def _case(expected: list[tuple[str, dict]], replay: bool) -> Case:
    return Case(id="t", input="go", expected_calls=tuple(ExpectedCall(n, a) for n, a in expected),
                optional_calls=READS, args_mode="exact_keys",
                metadata={REPLAYED_KEY: True} if replay else {})


def test_an_expected_write_the_tool_rejected_is_not_required_only_in_a_replay_benchmark() -> None:
    t = _traj([("cancel", {"id": 1}, "Error: not pending", True), ("update", {"id": 2}, "{}", False)])
    exp = [("cancel", {"id": 1}), ("update", {"id": 2})]
    r = outcome_from_calls(t, _case(exp, replay=True))
    assert r.passed is True and r.parts["not_required"] == {
        "0": "call 0 of the run made it and the tool rejected it, so it changes nothing"}
    # elsewhere a failed expected write is a failure (it may be a transient or injected fault)
    r2 = outcome_from_calls(t, _case(exp, replay=False))
    assert r2.passed is False and r2.parts["missing_expected"] == [0]


def test_a_rejection_caused_by_the_agents_own_earlier_write_proves_nothing() -> None:
    # the agent modified the items first, so the expected address change (expected first) failed
    t = _traj([("items", {"o": 1}, "{}", False), ("address", {"o": 1}, "Error: not pending", True)])
    r = outcome_from_calls(t, _case([("address", {"o": 1}), ("items", {"o": 1})], replay=True))
    assert r.passed is False and r.parts["missing_expected"] == [0]


def test_source_evidence_waives_an_expected_write() -> None:
    t = _traj([], meta={NO_EFFECT_KEY: [{"name": "refund", "args": {"id": 3}, "evidence": "the DB matched without it"}]})
    r = outcome_from_calls(t, _case([("refund", {"id": 3})], replay=True))
    assert r.passed is True and "not required: the DB matched without it" in r.reason
    other = _traj([], meta={NO_EFFECT_KEY: [{"name": "refund", "args": {"id": 4}}]})
    assert outcome_from_calls(other, _case([("refund", {"id": 3})], replay=True)).passed is False


def test_a_write_that_returned_the_record_as_it_was_is_not_a_side_effect() -> None:
    rec = json.dumps({"reservation_id": "R1", "bags": 2})
    after = json.dumps({"reservation_id": "R1", "bags": 3})
    same = _traj([("get", {"id": "R1"}, rec, False), ("bags", {"id": "R1", "n": 2}, rec, False)])
    assert unchanged_writes(same, [1]) == {1: 0}
    r = outcome_from_calls(same, _case([], replay=True))
    assert r.passed is True and "changed nothing: its result equals call 0's" in r.reason
    changed = _traj([("get", {"id": "R1"}, rec, False), ("bags", {"id": "R1", "n": 3}, after, False)])
    assert unchanged_writes(changed, [1]) == {}
    assert outcome_from_calls(changed, _case([], replay=True)).passed is False
    # another record's result proves nothing; a non-JSON result proves nothing
    other = _traj([("get", {"id": "R2"}, json.dumps({"reservation_id": "R2", "bags": 2}), False),
                   ("bags", {"id": "R1"}, rec, False), ("note", {}, "ok", False)])
    assert unchanged_writes(other, [1, 2]) == {}


def test_a_tool_precondition_the_first_read_fails_waives_the_expected_write() -> None:
    order = json.dumps({"order_id": "#W1", "status": "pending"})
    pre = {"exchange": {"key": "order_id", "field": "status", "allowed": ["delivered"],
                        "why": "the tool rejects an order that is not delivered"}}
    case = Case(id="t", input="go", expected_calls=(ExpectedCall("exchange", {"order_id": "#W1"}),),
                optional_calls=READS, args_mode="exact_keys",
                metadata={REPLAYED_KEY: True, "preconditions": pre})
    t = _traj([("get", {"order_id": "#W1"}, order, False)])
    r = outcome_from_calls(t, case)
    assert r.passed is True and ("not required: the run's first read of order_id '#W1' shows status "
                                 "'pending', and the tool rejects an order that is not delivered") in r.reason
    delivered = _traj([("get", {"order_id": "#W1"}, order.replace("pending", "delivered"), False)])
    assert outcome_from_calls(delivered, case).passed is False
    # an expected write before it names the same order: the record may have changed by then
    case2 = Case(id="t", input="go", expected_calls=(ExpectedCall("modify", {"order_id": "#W1"}),
                                                     ExpectedCall("exchange", {"order_id": "#W1"})),
                 optional_calls=READS, args_mode="exact_keys",
                 metadata={REPLAYED_KEY: True, "preconditions": pre})
    t2 = _traj([("get", {"order_id": "#W1"}, order, False), ("modify", {"order_id": "#W1"}, "{}", False)])
    assert outcome_from_calls(t2, case2).parts["missing_expected"] == [1]
