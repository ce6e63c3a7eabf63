"""The native reader's one-pass path (``traces.native._read_plain``) gives exactly what the
general path gives (``as_plain`` -> ``is_native`` -> ``_step`` -> ``Trajectory.from_dict``),
and leaves every line it cannot take (anything the general path would report or refuse) to
the general path. No timing here (bench/stages.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import native

ROOT = Path(__file__).resolve().parent


def _general(obj):
    saved = native._read_plain
    native._read_plain = lambda d: None
    try:
        return native.read(obj)
    finally:
        native._read_plain = saved


def _same(obj) -> bool:
    """Both routes give equal trajectories (same field values and types) or the same error."""
    try:
        want = _general(obj)
    except TraceFormatError as e:
        with pytest.raises(TraceFormatError) as got:
            native.read(obj)
        assert str(got.value) == str(e)
        return False
    got_t = native.read(obj)
    assert got_t == want
    assert got_t.to_dict() == want.to_dict()
    assert [type(s.tool_calls) for s in got_t.steps] == [tuple] * len(got_t.steps)
    assert type(got_t.metadata) is dict and got_t.metadata is not obj.get("metadata")
    return native._read_plain(obj) is not None


odd = st.sampled_from([None, "", "x", 0, 1.5, True, [], {}, [1], {"a": 1}, ["x"]])
calls = st.one_of(odd, st.fixed_dictionaries(
    {"name": st.one_of(st.just("search"), odd)},
    optional={"args": st.one_of(st.just({"q": 1}), odd), "call_id": st.one_of(st.just("c1"), odd),
              "raw_args": odd, "tool_type": odd}))
steps = st.one_of(odd, st.fixed_dictionaries(
    {"index": st.integers(0, 3), "kind": st.sampled_from(["tool_call", "tool_result", "user"])},
    optional={"tool_calls": st.one_of(st.lists(calls, max_size=3), odd),
              "tool_result": st.one_of(st.just({"call_id": "c1", "name": "search", "output": "ok",
                                                "is_error": False}), odd),
              "usage": st.one_of(st.just({"input_tokens": 3, "output_tokens": 1, "extra": 2}), odd),
              "metadata": st.one_of(st.just({"k": "v"}), odd), "content": odd, "cost_usd": odd,
              "latency_ms": odd, "model": odd}))
trajs = st.fixed_dictionaries(
    {"steps": st.one_of(st.lists(steps, max_size=4), odd)},
    optional={"metadata": st.one_of(st.just({"case_id": "c", "problems": ["p"]}), odd),
              "total_usage": st.one_of(st.just({"total_tokens": 9}), odd), "final_response": odd,
              "trace_id": odd, "zzz": odd})


@settings(max_examples=800, deadline=None)
@given(trajs)
def test_one_pass_read_equals_the_general_read(obj):
    _same(obj)


def test_generated_volume_lines_take_the_one_pass_read():
    import sys

    sys.path.insert(0, str(ROOT.parent / "bench"))
    from volume import case_of, run_of

    taken = 0
    for i in range(40):
        case = case_of(0, i)
        for trial in range(4):
            obj = json.loads(json.dumps(run_of(0, case, trial)))
            taken += _same(obj)
    assert taken == 160
