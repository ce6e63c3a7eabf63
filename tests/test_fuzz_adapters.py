"""The adapters' conversions on hostile input: only TrajcheckError subclasses escape
(README "Security model"). Random JSON-like values shaped after the frameworks' fields."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajcheck.adapters import _case, _convert
from trajcheck.errors import TrajcheckError

KEYS = ["role", "content", "name", "args", "arguments", "tool_calls", "type", "function", "id", "input",
        "input_parameters", "output", "messages", "expected_calls", "tool_call_id", "parallel_calls",
        "failed_calls", "match", "metadata", "trajectory"]
LEAF = (st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 400)
        | st.floats() | st.text(max_size=12) | st.sampled_from(["[/bold]", "\ud800", "{\"a\": ", "NaN"]))
VALUE = st.recursive(LEAF, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(KEYS), c,
                                                                                 max_size=5),
                     max_leaves=25)

FUNCS = {
    "any_trajectory": lambda v: _convert.any_trajectory(v),
    "expected_from_reference": lambda v: _convert.expected_from_reference(v),
    "messages_trajectory": lambda v: _convert.messages_trajectory(v if isinstance(v, list) else [v]),
    "ragas_expected": lambda v: _convert.ragas_expected(v if isinstance(v, list) else [v]),
    "deepeval_called": lambda v: _convert.deepeval_called(v if isinstance(v, list) else [v]),
    "deepeval_expected": lambda v: _convert.deepeval_expected(v if isinstance(v, list) else [v]),
    "metadata_settings": lambda v: _case.metadata_settings(v),
    "parallel_call_groups": lambda v: _convert.parallel_call_groups(v, 3),
    "failed_call_indices": lambda v: _convert.failed_call_indices(v, 3),
}


@pytest.mark.parametrize("fn", sorted(FUNCS))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          database=None)
@given(value=VALUE)
def test_conversions_raise_only_trajcheck_errors(fn: str, value: Any) -> None:
    try:
        FUNCS[fn](value)
    except TrajcheckError:
        pass
