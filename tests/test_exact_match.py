"""Matching by canonical arguments (trajcheck.match.exact_match) and tool_call_prf from plain dicts:
the same pairs, figures, reasons and parts as the general path (maximum matching over the
pairwise compatibility) on any calls, and the general path's errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trajcheck.match.exact_match as X
import trajcheck.match.matching as M
from trajcheck.errors import DatasetError, MatcherError
from trajcheck.match.matchers import DEFAULT_CONTEXT
from trajcheck.match.matching import retried_failures
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.metrics.prf_dicts import tool_call_figures_dicts, tool_call_prf_dicts
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

scalars = st.one_of(st.none(), st.booleans(), st.integers(-1, 2), st.sampled_from([1.0, 2.5]),
                    st.sampled_from(["a", "b", "1"]), st.just(float("nan")))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=2), st.tuples(c),
                                                   st.dictionaries(st.sampled_from("xy"), c, max_size=2)),
                      max_leaves=3)
args = st.dictionaries(st.sampled_from(["id", "q", "n"]), values, max_size=3)
names = st.sampled_from(["get", "put", "search"])
modes = st.sampled_from([None, None, "exact_keys", "expected_keys", "ignore"])
expected_calls = st.lists(st.builds(ExpectedCall, name=names, args=st.one_of(st.none(), args),
                                    args_mode=modes), max_size=6)


@st.composite
def runs(draw: Any) -> tuple[list[ToolCall], list[ExpectedCall]]:
    exp = draw(expected_calls)
    calls = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 5))
        if exp and kind <= 2:  # a copy of an expected call, maybe with an extra or a lost key
            e = draw(st.sampled_from(exp))
            a = dict(e.args or {})
            if kind == 1:
                a["n"] = draw(values)
            elif kind == 2 and a:
                a.pop(sorted(a)[0])
            calls.append(ToolCall(e.name, a))
        elif kind == 3:
            calls.append(ToolCall(draw(names), None, raw_args="{bad"))
        else:
            calls.append(ToolCall(draw(names), draw(args)))
    return calls, exp


@settings(max_examples=300, deadline=None)
@given(keyed_from=st.sampled_from([1, 8]), run=runs(), case_mode=modes,
       over=st.sampled_from([None, None, "exact_keys", "ignore"]),
       optional=st.lists(names, max_size=2), fail=st.lists(st.booleans(), max_size=8))
def test_key_matching_equals_the_general_path(keyed_from, run, case_mode, over, optional, fail):
    calls, exp = run
    case = Case(id="c", input="i", expected_calls=tuple(exp), optional_calls=tuple(optional),
                args_mode=case_mode)
    # a trajectory where some calls failed (and are retried when the tool is called again)
    steps = []
    for i, c in enumerate(calls):
        steps.append(Step(2 * i, "tool_call", tool_calls=(c,)))
        steps.append(Step(2 * i + 1, "tool_result", tool_result=ToolResult(
            call_id=None, name=c.name, output="x", is_error=bool(fail[i]) if i < len(fail) else False)))
    traj = Trajectory(steps=tuple(steps))
    kept = [i for i in range(len(calls)) if i not in retried_failures(traj)]
    want = M.match_calls([calls[i] for i in kept], exp, args_mode=over)  # the general path
    ml = [-1] * len(kept)
    for i, j in want.pairs:
        ml[i] = j
    items = [(e.name, e.args, e.args_mode) for e in exp]
    # the rows and the matching by key equal the general path's (keyed where it can be, or not)
    p = X.plan_of(items, over, None, keyed_from=keyed_from)
    m = X.match_items(p, [(calls[i].name, calls[i].args) for i in kept], len(exp))
    got = X.rows_of(p, [(calls[i].name, calls[i].args) for i in kept])
    if m is None:  # a predicted value without a canonical key (nested NaN): the caller falls back
        assert got is None
    else:
        assert m == ml
        assert got is not None and got[0] == M.compatibility(
            [calls[i] for i in kept], M.compile_all(exp), over, DEFAULT_CONTEXT)
    if case_mode is None:
        d = tool_call_prf_dicts([c.to_dict() for c in calls], [e.to_dict() for e in exp],
                                optional_calls=list(optional), args_mode=over)
        assert d == tool_call_prf(calls, case, args_mode=over)
        figs = tool_call_figures_dicts([c.to_dict() for c in calls], [e.to_dict() for e in exp],
                                       optional_calls=list(optional), args_mode=over)
        assert figs is None or figs == (d.precision, d.recall, d.f1)


def plan(exp, keyed_from=1):
    return X.plan_of([(e.name, e.args, e.args_mode) for e in exp], keyed_from=keyed_from)


def test_plan_scope():
    # a matcher spec: no plan (the general path)
    assert X.exact_plan([ExpectedCall("t", {"a": "x"}, match={"a": "contains"})]) is None
    # one tool keyed on two argument sets, with and without args, or a NaN: compared one
    # by one (a list), not keyed
    for exp in ([ExpectedCall("t", {"a": 1}), ExpectedCall("t", {"b": 1})],
                [ExpectedCall("t", {"a": 1}), ExpectedCall("t", None)],
                [ExpectedCall("t", {"a": float("nan")})],
                [ExpectedCall("t", {"a": 1}), ExpectedCall("t", {"a": 1}, args_mode="exact_keys")]):
        assert type(plan(exp)["t"]) is list
    # few calls of a tool: compared one by one unless keyed_from says otherwise
    assert type(plan([ExpectedCall("t", {"a": 1})], keyed_from=8)["t"]) is list
    # same argument set: one block per key; 1 and 1.0 share a key, True does not
    exp = [ExpectedCall("t", {"a": 1}), ExpectedCall("t", {"a": 1.0}),
           ExpectedCall("t", {"a": True}), ExpectedCall("u", None)]
    p = plan(exp)
    assert p["t"] == (("a",), False, {(("n", 1),): [0, 1], (("b", True),): [2]})
    calls = [ToolCall("t", {"a": 1.0, "z": 0}), ToolCall("t", {"a": 1}), ToolCall("t", {"a": 1}),
             ToolCall("t", {"a": True}), ToolCall("u", {"k": []}), ToolCall("u", None)]
    assert X.exact_match(p, calls, 4) == [0, 1, -1, 2, 3, -1]
    assert X.exact_match(plan(exp, keyed_from=9), calls, 4) == [0, 1, -1, 2, 3, -1]


def test_seed_worked_example_from_dicts():
    # seed 000 §2.3: P 0.5, R 1.0, F1 0.667 with optional search_docs/get_ticket
    calls = [{"name": "search_docs", "args": {"q": "vpn"}}, {"name": "get_ticket", "args": {"id": 1}},
             {"name": "create_ticket", "args": {"priority": "medium"}},
             {"name": "create_ticket", "args": {"priority": "high"}}]
    r = tool_call_prf_dicts(calls, [{"name": "create_ticket", "args": {"priority": "high"}}],
                            optional_calls=["search_docs", "get_ticket"])
    assert (r.precision, r.recall, round(r.f1, 3)) == (0.5, 1.0, 0.667)
    assert r.reason.endswith("unexpected: create_ticket; create_ticket: priority: expected 'high', "
                             "got 'medium'")


def test_dicts_errors_are_the_general_paths():
    with pytest.raises(DatasetError, match="expected_calls\\[0\\]"):
        tool_call_prf_dicts([], [{"name": "t", "bogus": 1}])
    with pytest.raises(DatasetError, match="optional_calls"):
        tool_call_prf_dicts([], [], optional_calls="t")  # type: ignore[arg-type]
    with pytest.raises(MatcherError, match="args_mode"):
        tool_call_prf_dicts([{"name": "t", "args": {}}], [{"name": "t", "args": {}}], args_mode="loose")
    # a matcher spec takes the general path and gives its answer
    r = tool_call_prf_dicts([{"name": "t", "args": {"q": "VPN mac"}}],
                            [{"name": "t", "args": {"q": "vpn"}, "match": {"q": "contains"}}])
    assert r.f1 == 1.0


def test_many_same_name_exact_calls():
    n = 3000
    exp = [{"name": "get", "args": {"id": i}} for i in range(n)]
    calls = [{"name": "get", "args": {"id": n - 1 - i}} for i in range(n)]
    r = tool_call_prf_dicts(calls, exp)
    assert r.tp == n and r.parts["pairs"][0] == [0, n - 1]


def test_figures_alone_equal_the_full_result_and_decline_outside_the_plain_scope():
    # seed 000 §2.3's worked example: one expected call, an extra optional lookup and one
    # unexpected call: P 1/2, R 1, F1 2/3 -- the figures without a reason
    calls = [{"name": "search", "args": {"q": "paris"}}, {"name": "get_user", "args": {"id": 1}},
             {"name": "book", "args": {"id": 7}}]
    exp = [{"name": "search", "args": {"q": "paris"}}]
    full = tool_call_prf_dicts(calls, exp, optional_calls=["get_user"])
    figs = tool_call_figures_dicts(calls, exp, optional_calls=["get_user"])
    assert figs == (full.precision, full.recall, full.f1) == (0.5, 1.0, 2 / 3)
    # a loose matcher, an unknown mode or a bad optional list: None (the caller takes the
    # general path, which also raises the errors)
    assert tool_call_figures_dicts(calls, [{"name": "search", "args": {"q": "par"},
                                            "match": {"q": "contains"}}]) is None
    assert tool_call_figures_dicts(calls, exp, args_mode="loose") is None
    assert tool_call_figures_dicts(calls, exp, optional_calls="get_user") is None  # type: ignore[arg-type]
