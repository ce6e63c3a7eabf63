"""Linear matching when every expected call is exact (trajcheck.match.matching's index): the
adjacency, and so the matching, equal the pairwise loop's on any calls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trajcheck.match.matching as M
from trajcheck.match.matchers import DEFAULT_CONTEXT
from trajcheck.model import ExpectedCall, ToolCall

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, 2.5]),
                    st.sampled_from(["a", "b", "1"]), st.just(float("nan")))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=2),
                                                   st.dictionaries(st.sampled_from("xy"), c, max_size=2)),
                      max_leaves=4)
args = st.dictionaries(st.sampled_from(["id", "q", "n"]), values, max_size=3)


@settings(max_examples=150, deadline=None)
@given(exp_args=st.lists(st.one_of(st.none(), args), min_size=8, max_size=14),
       modes=st.lists(st.sampled_from([None, "exact_keys", "expected_keys", "ignore"]),
                      min_size=14, max_size=14),
       pred_args=st.lists(args, max_size=12), call_mode=st.sampled_from([None, "exact_keys"]))
def test_index_rows_equal_the_pairwise_loop(exp_args, modes, pred_args, call_mode):
    exp = [ExpectedCall("t", a, args_mode=m) for a, m in zip(exp_args, modes)]
    pred = [ToolCall("t", a) for a in pred_args] + [ToolCall("u", {})]
    cexp = M.compile_all(exp)
    fast = M.compatibility(pred, cexp, call_mode, DEFAULT_CONTEXT)
    old = M._INDEX_MIN
    M._INDEX_MIN = 10**9  # the pairwise loop only
    try:
        slow = M.compatibility(pred, cexp, call_mode, DEFAULT_CONTEXT)
        slow_m = M.match_calls(pred, exp, args_mode=call_mode)
    finally:
        M._INDEX_MIN = old
    assert fast == slow
    assert M.match_calls(pred, exp, args_mode=call_mode) == slow_m


def test_loose_matchers_keep_the_loop():
    exp = [ExpectedCall("t", {"q": "a"}, match={"q": "contains"})] * 9
    assert M._ExactIndex.build(range(9), M.compile_all(exp), ["expected_keys"] * 9) is None


@pytest.mark.parametrize("n", [3000])
def test_many_distinct_exact_calls_pair_one_to_one(n):
    exp = [ExpectedCall("get", {"id": i}) for i in range(n)]
    pred = [ToolCall("get", {"id": n - 1 - i}) for i in range(n)]
    m = M.match_calls(pred, exp)
    assert len(m.pairs) == n and all(i + j == n - 1 for i, j in m.pairs)
