"""Tests for trajcheck.metrics.steps.step_eval: the per-call verdict table."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from trajbuild import run

from trajcheck.metrics.calls import argument_accuracy, tool_call_prf
from trajcheck.metrics.steps import VERDICTS, step_eval
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory


def test_table_worked_example():
    case = Case("c", "x",
                expected_calls=(ExpectedCall("get_ticket", {"id": 7}),
                                ExpectedCall("create_ticket", {"priority": "high"}),
                                ExpectedCall("notify", {"to": "it"})),
                optional_calls=("search_docs",), forbidden_calls=("update_*",))
    t = run([("search_docs", {"q": "vpn"}), ("get_ticket", {"id": 7})],
            [("get_ticket", {"id": 7})],
            [("create_ticket", {"priority": "low"})],
            [("update_ticket", {"id": 7})],
            [("book", {}, "err")], [("book", {})])
    ev = step_eval(t, case)
    verdicts = [(r.index, r.step, r.name, r.verdict, r.exp_index) for r in ev.predicted]
    assert verdicts == [
        (0, 1, "search_docs", "optional", None),
        (1, 1, "get_ticket", "matched", 0),
        (2, 4, "get_ticket", "duplicate", None),
        (3, 6, "create_ticket", "wrong_args", 1),
        (4, 8, "update_ticket", "forbidden", None),
        (5, 10, "book", "retried", None),
        (6, 12, "book", "unnecessary", None),
    ]
    assert ev.predicted[2].flags == ("duplicate", "unnecessary")
    assert ev.predicted[4].flags == ("forbidden", "unnecessary")
    assert [(r.name, r.made, r.args_ok, r.pred_index) for r in ev.expected] == [
        ("get_ticket", True, True, 1), ("create_ticket", True, False, 3), ("notify", False, None, None)]
    # 1 of 3 expected calls made with the right arguments
    assert ev.score == 1 / 3 and ev.passed is False
    assert ev.parts["name_matched"] == 2 and ev.parts["n_counted"] == 6 and ev.parts["n_calls"] == 7
    assert "missing notify" in ev.reason
    d = ev.to_dict()
    assert d["predicted"][3]["verdict"] == "wrong_args" and d["expected"][2]["made"] is False


def test_parse_error_row():
    t = Trajectory(steps=(Step(0, "tool_call", tool_calls=(
        ToolCall("f", None, raw_args="{bad", args_parse_error="Expecting value"),)),))
    ev = step_eval(t, Case("c", "x", expected_calls=(ExpectedCall("f"),)))
    assert ev.predicted[0].verdict == "parse_error"
    assert "Expecting value" in ev.predicted[0].reason
    assert ev.expected[0].made is False and ev.score == 0.0


def test_pairs_of_identical_calls_go_to_the_earliest():
    # expected one f(a=1); f(a=1) twice: the first is matched, the second duplicate
    ev = step_eval(run([("f", {"a": 1})], [("f", {"a": 1})]),
                   Case("c", "x", expected_calls=(ExpectedCall("f", {"a": 1}),)))
    assert [r.verdict for r in ev.predicted] == ["matched", "duplicate"]


def test_nothing_expected():
    assert step_eval(run(), Case("c", "x")).score is None
    assert step_eval(run(), Case("c", "x")).passed is True
    assert step_eval(run(["f"]), Case("c", "x")).passed is False


def test_case_args_mode_applies_when_call_sets_none():
    case = Case("c", "x", expected_calls=(ExpectedCall("f", {"a": 1}),), args_mode="expected_keys")
    assert step_eval(run([("f", {"a": 1, "b": 2})]), case).score == 1.0
    strict = Case("c", "x", expected_calls=(ExpectedCall("f", {"a": 1}, args_mode="exact_keys"),),
                  args_mode="expected_keys")
    assert step_eval(run([("f", {"a": 1, "b": 2})]), strict).score == 0.0


call_st = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([{}, {"x": 1}, {"x": 2}]),
                    st.sampled_from(["ok", "err", None]))
exp_st = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([None, {"x": 1}, {"x": 2}])),
                  max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(call_st, min_size=1, max_size=3), max_size=6), exp_st)
def test_table_agrees_with_prf_and_argument_accuracy(steps, exp):
    t = run(*steps)
    case = Case("c", "x", expected_calls=tuple(ExpectedCall(n, a) for n, a in exp),
                optional_calls=("c",))
    ev = step_eval(t, case)
    prf = tool_call_prf(t, case)
    names = tool_call_prf(t, case, args_mode="ignore")
    assert ev.parts["matched"] == prf.tp
    assert ev.parts["name_matched"] == names.tp
    aa = argument_accuracy(t, case)
    if names.tp:
        assert aa.score == prf.tp / names.tp
    # every call gets exactly one verdict from the list; counted = non-retried
    assert all(r.verdict in VERDICTS and r.verdict == r.flags[0] for r in ev.predicted)
    assert ev.parts["n_counted"] == sum("retried" not in r.flags for r in ev.predicted)
    # precision's counted calls = counted rows that are not unmatched optional calls
    assert prf.n_counted == sum("retried" not in r.flags and "optional" not in r.flags
                                for r in ev.predicted)
    assert ev.score is None or 0.0 <= ev.score <= 1.0
