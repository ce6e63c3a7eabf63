"""The matching fast paths (issue 8) give exactly the general path's answers.

``exact_equal``'s same-type shortcut is checked against the general iterative walk, and the
all-``exact`` argument check (``compile_all`` pass-through and ``exact_args``) against the
general per-matcher loop, on random JSON-like values built so that equal, nearly equal and
type-confusable values (``1`` / ``1.0`` / ``True`` / ``"1"``, list / tuple, NaN) are common.
No timing is asserted here (see bench/).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.matchers import DEFAULT_CONTEXT, _exact_equal_walk, exact_equal
from trajcheck.matching import (
    _args_ok,
    _exact_args_ok,
    compatibility,
    compile_all,
    compile_expected,
)
from trajcheck.model import ARGS_MODES, ExpectedCall, ToolCall

scalars = st.sampled_from([0, 1, 1.0, 2, 2.0, True, False, "1", "a", "A", "", None,
                           float("nan"), -0.0, 0.0, 10**20, 1e20])
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.sampled_from("abc"), inner, max_size=3)), max_leaves=6)


@settings(max_examples=600, deadline=None)
@given(values, values)
def test_exact_equal_same_as_general_walk(a, b):
    assert exact_equal(a, b) == _exact_equal_walk(a, b)
    assert exact_equal(a, a) == _exact_equal_walk(a, a)


def test_exact_equal_worked_examples():
    # the DESIGN rule, by hand: numbers by value, bools apart, strings apart, NaN never
    assert exact_equal(2, 2.0) and exact_equal([1, "x"], (1.0, "x"))
    assert not exact_equal(True, 1) and not exact_equal([True], [1]) and not exact_equal("1", 1)
    assert not exact_equal(float("nan"), float("nan"))
    assert exact_equal({"a": [1, {"b": False}]}, {"a": [1.0, {"b": False}]})
    assert not exact_equal({"a": 1}, {"a": 1, "b": 2})


args_dicts = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)


@settings(max_examples=600, deadline=None)
@given(args_dicts, args_dicts, st.sampled_from(ARGS_MODES[:2]))
def test_exact_args_fast_check_same_as_general_loop(pargs, eargs, mode):
    cc = compile_expected(ExpectedCall("t", eargs))
    general = _args_ok(pargs, replace(cc, exact_args=None), mode, DEFAULT_CONTEXT)
    assert _exact_args_ok(pargs, eargs, mode) == general


calls = st.lists(st.tuples(st.sampled_from(["s", "t"]), st.one_of(args_dicts, st.none())),
                 max_size=5)
exp_calls = st.lists(st.tuples(st.sampled_from(["s", "t"]), st.one_of(args_dicts, st.none()),
                               st.sampled_from([None, *ARGS_MODES])), max_size=5)


@settings(max_examples=400, deadline=None)
@given(calls, exp_calls, st.sampled_from([None, *ARGS_MODES]), st.sampled_from([None, *ARGS_MODES]))
def test_compatibility_fast_paths_same_as_general(pred, exp, args_mode, default_mode):
    pcalls = [ToolCall(n, a) for n, a in pred]
    ecalls = [ExpectedCall(n, a, args_mode=m) for n, a, m in exp]
    fast = compatibility(pcalls, compile_all(ecalls), args_mode, DEFAULT_CONTEXT,
                         default_mode=default_mode)
    # the general path: every call compiled, exact_args switched off, modes as the original
    # code set them (the case default copied onto calls without their own mode)
    general_cexp = []
    for e in ecalls:
        cc = replace(compile_expected(e), exact_args=None)
        if args_mode is None and default_mode is not None and cc.args_mode is None:
            cc = replace(cc, args_mode=default_mode)
        general_cexp.append(cc)
    general = compatibility(pcalls, general_cexp, args_mode, DEFAULT_CONTEXT)
    assert fast == general
