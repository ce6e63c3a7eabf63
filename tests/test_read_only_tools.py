"""Read-only tools (issue 29 item 4): ``read_only_calls`` and MCP ``readOnlyHint`` tool
annotations. An extra read-only call costs precision but does not fail task success, on the
general path and the fast (compact) path alike, and in a host (DeepEval) with the
constructor's list joined to the test case's."""

from __future__ import annotations

from typing import Any

import pytest

from trajcheck.errors import DatasetError
from trajcheck.model import (
    Case,
    ExpectedCall,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
    read_only_tools,
)
from trajcheck.score.case_plan import case_plan
from trajcheck.score.scoring import score_run

REFUND = ExpectedCall("refund", {"order": "A-17", "amount": 12.5})


def _run(calls: list[tuple[str, dict[str, Any], bool]], final: str = "Done.") -> Trajectory:
    steps: list[Step] = [Step(0, "user", content="Refund order A-17")]
    for n, a, failed in calls:
        i = len(steps)
        steps.append(Step(i, "tool_call", tool_calls=(ToolCall(n, a, call_id=f"x{i}"),)))
        steps.append(Step(i + 1, "tool_result", tool_result=ToolResult(
            f"x{i}", n, "error 503" if failed else "ok", is_error=failed)))
    steps.append(Step(len(steps), "final_response", content=final))
    return Trajectory(steps=tuple(steps), final_response=final,
                      metadata={"case_id": "r", "trial": 0, "run_id": "r-0"})


LOOKUP_THEN_REFUND = _run([("get_order", {"order": "A-17"}, False),
                           ("refund", {"order": "A-17", "amount": 12.5}, False)])
MCP_TOOLS = ({"name": "get_order", "inputSchema": {"type": "object"},
              "annotations": {"title": "Look up an order", "readOnlyHint": True}},
             {"name": "refund", "inputSchema": {"type": "object"},
              "annotations": {"readOnlyHint": False, "destructiveHint": False}})


@pytest.mark.parametrize("compact", [False, True])
def test_an_extra_read_only_call_costs_precision_but_not_task_success(compact: bool) -> None:
    plain = Case(id="r", input="x", expected_calls=(REFUND,))
    declared = Case(id="r", input="x", expected_calls=(REFUND,), read_only_calls=("get_order",))
    annotated = Case(id="r", input="x", expected_calls=(REFUND,), tools=MCP_TOOLS)
    optional = Case(id="r", input="x", expected_calls=(REFUND,), optional_calls=("get_order",))
    before = score_run(LOOKUP_THEN_REFUND, plain, compact=compact)
    assert not before.success
    assert before.outcome_reason == ("case 'r': unexpected state-changing call 0 of the run: "
                                     "get_order {'order': 'A-17'}")
    for case in (declared, annotated):
        r = score_run(LOOKUP_THEN_REFUND, case, compact=compact)
        assert r.success and r.outcome_reason == "the expected state-changing call made, no other write"
        # 1 of 2 counted calls matched: precision 1/2, F1 2*1/(2+1); composite
        # 0.5 (outcome) + 0.25 * 2/3 (name F1) + 0.15 (arguments) + 0.10 (efficiency) = 11/12
        assert (r.precision, r.recall, r.f1) == (0.5, 1.0, 2 / 3)
        assert r.composite == pytest.approx(11 / 12, abs=1e-12)
    # optional_calls makes the lookup free in precision too: the difference read-only keeps
    free = score_run(LOOKUP_THEN_REFUND, optional, compact=compact)
    assert free.success and (free.precision, free.f1, free.composite) == (1.0, 1.0, 1.0)


def test_read_only_cases_leave_the_fast_path_and_both_paths_agree() -> None:
    declared = Case(id="r", input="x", expected_calls=(REFUND,), read_only_calls=("get_order",))
    annotated = Case(id="r", input="x", expected_calls=(REFUND,), tools=MCP_TOOLS)
    unannotated = Case(id="r", input="x", expected_calls=(REFUND,),
                       tools=({"name": "get_order", "parameters": {"type": "object"}},))
    assert case_plan(declared) is None and case_plan(annotated) is None
    assert case_plan(unannotated) is not None  # tool definitions alone stay on the fast path
    for c in (declared, annotated, unannotated):
        full, compact = score_run(LOOKUP_THEN_REFUND, c), score_run(LOOKUP_THEN_REFUND, c, compact=True)
        assert (full.success, full.precision, full.f1, full.composite) == (
            compact.success, compact.precision, compact.f1, compact.composite)
    assert not score_run(LOOKUP_THEN_REFUND, unannotated, compact=True).success


def test_a_read_only_expected_call_is_not_a_required_write_and_a_failed_write_still_fails() -> None:
    case = Case(id="r", input="x", read_only_calls=("get_order",),
                expected_calls=(ExpectedCall("get_order", {"order": "A-17"}), REFUND))
    skipped_lookup = _run([("refund", {"order": "A-17", "amount": 12.5}, False)])
    r = score_run(skipped_lookup, case)
    assert r.success and r.recall == 0.5
    # a read-only tool never makes a write: an extra refund still fails the outcome
    twice = _run([("get_order", {"order": "A-17"}, False),
                  ("refund", {"order": "A-17", "amount": 12.5}, False),
                  ("refund", {"order": "A-17", "amount": 1.0}, False)])
    r2 = score_run(twice, case)
    assert not r2.success and "unexpected state-changing call 2 of the run: refund" in r2.outcome_reason


def test_only_read_only_hint_true_declares_a_tool_read_only() -> None:
    c = Case(id="r", input="x", tools=MCP_TOOLS + (
        {"type": "function", "function": {"name": "list_orders", "parameters": {}},
         "annotations": {"readOnlyHint": True}},
        {"name": "append_note", "inputSchema": {}, "annotations": {"destructiveHint": False}},
        {"name": "ping", "inputSchema": {}, "annotations": {"idempotentHint": True}}))
    assert read_only_tools(c) == frozenset({"get_order", "list_orders"})
    assert read_only_tools(Case(id="r", input="x", read_only_calls=("a", "b"))) == frozenset({"a", "b"})


@pytest.mark.parametrize("row, msg", [
    ({"read_only_calls": ["refund"], "tools": [MCP_TOOLS[1]]},
     "read_only_calls names 'refund' but its definition says readOnlyHint: false"),
    ({"tools": [{"name": "t", "annotations": {"readOnlyHint": "yes"}}]},
     "tools[0] ('t'): annotations.readOnlyHint must be true or false, got 'yes'"),
    ({"tools": [{"name": "t", "annotations": ["readOnlyHint"]}]}, "'annotations' must be an object"),
    ({"read_only_calls": "get_order"}, "malformed field 'read_only_calls'"),
    ({"read_only_call": ["get_order"]}, "did you mean 'read_only_calls'?"),
])
def test_bad_read_only_declarations_are_errors_naming_the_case(row: dict[str, Any], msg: str) -> None:
    with pytest.raises(DatasetError) as e:
        Case.from_dict({"id": "r", "input": "x", **row})
    assert msg in str(e.value) and "'r'" in str(e.value)


def test_the_case_constructor_checks_the_same() -> None:
    with pytest.raises(DatasetError, match="readOnlyHint: false"):
        Case(id="r", input="x", read_only_calls=("refund",), tools=(MCP_TOOLS[1],))


def test_dataset_rows_round_trip_and_validate_against_the_schema(tmp_path: Any) -> None:
    import json

    from trajcheck.read.dataset import load_cases

    row = {"id": "r", "input": "x", "expected_calls": [{"name": "refund"}],
           "read_only_calls": ["get_order"], "tools": [MCP_TOOLS[0]]}
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (case,) = load_cases(p)
    assert case.read_only_calls == ("get_order",) and case.to_dict()["read_only_calls"] == ["get_order"]
    p.write_text(json.dumps({**row, "read_only_calls": [""]}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="read_only_calls"):
        load_cases(p)


def test_deepeval_joins_the_constructors_read_only_tools_with_the_test_cases() -> None:
    pytest.importorskip("deepeval")
    from deepeval.test_case import LLMTestCase
    from deepeval.test_case import ToolCall as DTC

    from trajcheck.adapters.deepeval import TrajcheckMetric

    calls = [DTC(name="get_order", input_parameters={"order": "A-17"}),
             DTC(name="search_kb", input_parameters={"q": "refund policy"}),
             DTC(name="refund", input_parameters={"order": "A-17", "amount": 12.5})]
    tc = LLMTestCase(input="Refund order A-17", actual_output="Refunded.", tools_called=calls,
                     expected_tools=[DTC(name="refund", input_parameters={"order": "A-17", "amount": 12.5})],
                     metadata={"trajcheck": {"read_only_calls": ["search_kb"]}})
    # the constructor declares get_order for the suite, the test case adds search_kb
    m = TrajcheckMetric("task_success", read_only_calls=["get_order"])
    assert m.measure(tc) == 1.0 and m.success
    alone = TrajcheckMetric("task_success")  # the test case's list alone: get_order is a write
    assert alone.measure(tc) == 0.0 and "get_order" in alone.reason
    p = TrajcheckMetric("tool_call_precision", read_only_calls=["get_order"])
    assert p.measure(tc) == pytest.approx(1 / 3)
