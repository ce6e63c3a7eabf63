"""call_matches, maximum matching (vs brute force), retries."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MatcherError, SchemaError
from trajcheck.match.matchers import MatchContext
from trajcheck.match.matching import (
    call_matches,
    is_failed,
    match_calls,
    max_matching,
    retried_failures,
)
from trajcheck.model import ExpectedCall, Step, ToolCall, ToolResult, Trajectory


def brute_force(adj, n_right):
    best = 0
    n_left = len(adj)
    for r in range(min(n_left, n_right), -1, -1):
        for lefts in itertools.combinations(range(n_left), r):
            for rights in itertools.permutations(range(n_right), r):
                if all(j in adj[i] for i, j in zip(lefts, rights)):
                    return r
    return best


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 7).flatmap(lambda n_r: st.tuples(
    st.just(n_r), st.lists(st.lists(st.integers(0, max(n_r - 1, 0)), max_size=7, unique=True)
                           if n_r else st.lists(st.just([]), max_size=0), max_size=7))))
def test_max_matching_equals_brute_force(data):
    n_right, adj = data
    ml = max_matching(adj, n_right)
    used = [j for j in ml if j != -1]
    assert len(used) == len(set(used))
    assert all(j == -1 or j in adj[i] for i, j in enumerate(ml))
    assert len(used) == brute_force(adj, n_right)


def test_max_matching_large():
    # speed is measured in bench/, not here: under a loaded CI machine a time bound is a coin toss
    ml = max_matching([list(range(1000))] * 1000, 1000)
    assert sorted(ml) == list(range(1000))
    # a shape where first-fit greedy is far from maximum: left i fits rights i..999, tried from the top
    adj = [list(range(999, i - 1, -1)) for i in range(1000)]
    assert -1 not in max_matching(adj, 1000)


def test_max_matching_bad_index():
    with pytest.raises(MatcherError, match="outside"):
        max_matching([[3]], 2)


def test_call_matches_args_modes():
    e = ExpectedCall("book", {"id": 1})
    assert call_matches(ToolCall("book", {"id": 1.0}), e)
    # default (seed 000 §3.2 ignore_extra_args=True): extra arguments allowed
    assert call_matches(ToolCall("book", {"id": 1, "x": 2}), e)
    assert not call_matches(ToolCall("book", {"id": 1, "x": 2}), e, args_mode="exact_keys")
    assert not call_matches(ToolCall("book", {"id": 1, "x": 2}), ExpectedCall("book", {"id": 1}, args_mode="exact_keys"))
    assert call_matches(ToolCall("book", {"id": 1, "x": 2}), e, args_mode="expected_keys")
    assert not call_matches(ToolCall("book", {}), e, args_mode="expected_keys")
    assert call_matches(ToolCall("book", {"zzz": 0}), e, args_mode="ignore")
    assert not call_matches(ToolCall("cancel", {"id": 1}), e, args_mode="ignore")
    assert call_matches(ToolCall("book", {"a": 1}), ExpectedCall("book", None))  # no constraint
    assert call_matches(ToolCall("book", {"id": 1, "x": 2}), ExpectedCall("book", {"id": 1}, args_mode="expected_keys"))
    with pytest.raises(MatcherError, match="args_mode"):
        call_matches(ToolCall("book", {"id": 1}), e, args_mode="loose")


def test_unparsed_args_never_match():
    bad = ToolCall("book", None, raw_args="{id: 1", args_parse_error="Expecting property name")
    for mode in ("exact_keys", "expected_keys", "ignore"):
        assert not call_matches(bad, ExpectedCall("book", None), args_mode=mode)
        assert not call_matches(bad, ExpectedCall("book", {"id": 1}), args_mode=mode)


def test_ignore_and_one_of_may_be_absent():
    e = ExpectedCall("s", {"q": "x", "limit": 10, "lang": ["en", ""]},
                     match={"limit": "ignore", "lang": "one_of"})
    assert call_matches(ToolCall("s", {"q": "x"}), e)
    assert call_matches(ToolCall("s", {"q": "x", "limit": 3, "lang": "en"}), e)
    assert not call_matches(ToolCall("s", {"q": "x", "lang": "fr"}), e)
    e2 = ExpectedCall("s", {"lang": ["en"]}, match={"lang": "one_of"})
    assert not call_matches(ToolCall("s", {}), e2)


def test_match_entry_without_expected_value_checks_case_input():
    e = ExpectedCall("create_ticket", {"priority": "high"}, match={"title": "semantic"})
    ctx = MatchContext(case_input="laptop will not boot",
                       semantic_scorer=lambda a, b: 1.0 if "laptop" in b.lower() else 0.0)
    assert call_matches(ToolCall("create_ticket", {"priority": "high", "title": "Laptop dead"}), e, context=ctx)
    assert not call_matches(ToolCall("create_ticket", {"priority": "high", "title": "Printer"}), e, context=ctx)
    assert not call_matches(ToolCall("create_ticket", {"priority": "high"}), e, context=ctx)  # absent
    assert not call_matches(ToolCall("create_ticket", {"priority": "high", "title": " "}), e, context=ctx)
    e2 = ExpectedCall("create_ticket", {"priority": "high"}, match={"title": "exact"})
    assert call_matches(ToolCall("create_ticket", {"priority": "high", "title": "x"}), e2)
    assert not call_matches(ToolCall("create_ticket", {"priority": "high", "title": ""}), e2)


def test_bad_matcher_spec_names_call_and_arg():
    with pytest.raises(MatcherError, match=r"expected call 0 \('f'\), argument 'q'.*unknown matcher"):
        match_calls([ToolCall("f", {"q": 1})], [ExpectedCall("f", {"q": 1}, match={"q": "fuzzy"})])
    with pytest.raises(SchemaError, match="argument 'q'"):
        match_calls([ToolCall("f", {"q": 1})],
                    [ExpectedCall("f", {"q": 1}, match={"q": {"type": "schema", "schema": {"type": 5}}})])


def test_contains_vpn_example_maximum_not_greedy():
    pred = [ToolCall("search_docs", {"q": "vpn mac"}), ToolCall("search_docs", {"q": "vpn"})]
    exp = [ExpectedCall("search_docs", {"q": "vpn"}, match={"q": "contains"}),
           ExpectedCall("search_docs", {"q": "vpn mac"}, match={"q": "contains"})]
    cm = match_calls(pred, exp)
    assert cm.pairs == ((0, 1), (1, 0)) and cm.unmatched_exp == () and cm.unmatched_pred == ()


def _traj(*items):
    steps = []
    for k, it in enumerate(items):
        if isinstance(it, ToolCall):
            steps.append(Step(k, "tool_call", tool_calls=(it,)))
        else:
            steps.append(Step(k, "tool_result", tool_result=it))
    return Trajectory(steps=tuple(steps))


def test_retried_failures_and_is_failed():
    assert is_failed(ToolResult("1", "f", is_error=True))
    assert is_failed(ToolResult("1", "f", error="timeout"))
    assert not is_failed(ToolResult("1", "f", output="ok"))
    assert not is_failed(None)
    t = _traj(ToolCall("book", {"d": 1}, call_id="a"), ToolResult("a", "book", is_error=True),
              ToolCall("search", {}, call_id="b"), ToolResult("b", "search", error="boom"),
              ToolCall("book", {"d": 2}, call_id="c"), ToolResult("c", "book", output="ok"),
              ToolCall("pay", {}, call_id="d"), ToolResult("d", "pay", is_error=True),
              ToolCall("notify", {}, call_id="e"))
    # book#0 failed and book came again -> retried; search failed, never again; pay failed then a different tool
    assert retried_failures(t) == frozenset({0})
