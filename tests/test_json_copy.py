"""json_copy and run_detail._cut_value take shortcuts past JSON text for plain values: the
result (value and type, all the way down) or the error must be the round trip's."""

from __future__ import annotations

import json
import math
from datetime import date
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.score import run_detail
from trajcheck.score.json_copy import json_copy

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-10**30, 10**30),
                    st.floats(), st.text(max_size=8), st.just(date(2026, 12, 2)),
                    st.just("\ud800"))
keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.booleans(), st.none(), st.floats(0, 2))
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.lists(kids, max_size=3).map(tuple),
    st.dictionaries(keys, kids, max_size=3)), max_leaves=12)


def typed(x: Any) -> Any:
    """``x`` with every value's type beside it (NaN as a marker: it equals nothing)."""
    if isinstance(x, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in x.items()])
    if isinstance(x, list):
        return ("list", [typed(v) for v in x])
    if isinstance(x, float) and math.isnan(x):
        return ("float", "nan")
    return (type(x).__name__, x)


def outcome(f: Any, x: Any) -> Any:
    try:
        return ("ok", typed(f(x)))
    except Exception as e:  # noqa: BLE001 -- the error's type and text are part of the result
        return ("error", type(e).__name__, str(e))


@settings(max_examples=500, deadline=None)
@given(x=values)
def test_json_copy_is_the_round_trip(x):
    assert outcome(json_copy, x) == outcome(lambda v: json.loads(json.dumps(v, default=str)), x)


@settings(max_examples=500, deadline=None)
@given(x=values)
def test_cut_value_is_the_round_trip(x):
    def slow(v: Any) -> Any:
        text = json.dumps(v, ensure_ascii=False, default=str)
        if len(text) <= run_detail.ARG_CHARS:
            return json.loads(text)
        return text[:run_detail.ARG_CHARS] + f" ...[{len(text) - run_detail.ARG_CHARS} more characters]"

    assert outcome(run_detail._cut_value, x) == outcome(slow, x)


@pytest.mark.parametrize("s", ["a" * 99, "a" * 600, "\n" * 99, "\x01" * 99, "\x01" * 120, '"' * 300])
def test_cut_value_long_and_escaped_text(s):
    text = json.dumps(s, ensure_ascii=False)
    want = json.loads(text) if len(text) <= 600 else text[:600] + f" ...[{len(text) - 600} more characters]"
    assert run_detail._cut_value(s) == want


def test_json_copy_of_a_cycle_raises_as_json_does():
    a: list[Any] = []
    a.append(a)
    with pytest.raises(ValueError, match="Circular reference"):
        json_copy(a)


@pytest.mark.parametrize("x", [10**4500, [1, {"a": -10**4500}], 10**4000 - 1],
                         ids=["huge", "nested", "largest-copied"])
def test_integers_past_the_text_limit_fail_as_json_does(x):
    def slow(v: Any) -> Any:
        return json.loads(json.dumps(v, default=str))

    assert outcome(json_copy, x) == outcome(slow, x)
    assert outcome(run_detail._cut_value, x)[0] == outcome(lambda v: json.dumps(v), x)[0]
