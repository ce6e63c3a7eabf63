"""Round trip of the neutral model: from_dict(to_dict(x)) == x, also through JSON text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.model import (
    STEP_KINDS,
    Case,
    ExpectedCall,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
    Usage,
)

name = st.text(min_size=1, max_size=8)
scalar = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
jsonv = st.recursive(scalar, lambda i: st.lists(i, max_size=3) | st.dictionaries(st.text(max_size=5), i, max_size=3),
                     max_leaves=8)
jdict = st.dictionaries(st.text(max_size=5), jsonv, max_size=3)
opt_int = st.none() | st.integers(0, 10**9)
opt_str = st.none() | st.text(max_size=8)
opt_float = st.none() | st.floats(allow_nan=False, allow_infinity=False)

usage = st.builds(Usage, opt_int, opt_int, opt_int, opt_int, opt_int, opt_int)
call = st.builds(ToolCall, name=name, args=st.none() | jdict, call_id=opt_str, raw_args=opt_str,
                 args_parse_error=opt_str, tool_type=st.none() | st.sampled_from(["function", "mcp"]))
result = st.builds(ToolResult, call_id=opt_str, name=opt_str, output=jsonv, is_error=st.none() | st.booleans(),
                   error=opt_str)
step = st.builds(Step, index=st.integers(0, 100), kind=st.sampled_from(STEP_KINDS), content=opt_str,
                 tool_calls=st.lists(call, max_size=3).map(tuple), tool_result=st.none() | result,
                 usage=st.none() | usage, cost_usd=opt_float, latency_ms=opt_float, model=opt_str,
                 start_time=opt_float, end_time=opt_float, agent_name=opt_str, span_id=opt_str,
                 parent_id=opt_str, metadata=jdict)
traj = st.builds(Trajectory, steps=st.lists(step, max_size=4).map(tuple), final_response=opt_str,
                 total_usage=st.none() | usage, total_cost_usd=opt_float, total_latency_ms=opt_float,
                 source_format=opt_str, trace_id=opt_str, session_id=opt_str, metadata=jdict)
expected = st.builds(ExpectedCall, name=name, args=st.none() | jdict,
                     match=st.dictionaries(st.text(max_size=5), st.sampled_from(["exact", "normalized"]), max_size=2),
                     args_mode=st.none() | st.sampled_from(["exact_keys", "expected_keys", "ignore"]))
case = st.builds(
    Case, id=st.text(max_size=6), input=jsonv, user=st.none() | jdict, initial_state=opt_str,
    expected_calls=st.lists(expected, max_size=3).map(tuple), optional_calls=st.lists(name, max_size=3).map(tuple),
    forbidden_calls=st.lists(name, max_size=3).map(tuple),
    precedence=st.lists(st.tuples(name, name), max_size=2).map(tuple),
    expected_final_state=st.none() | jdict, response_must_include=st.lists(name, max_size=2).map(tuple),
    max_steps=opt_int, optimal_steps=opt_int, forbidden_sequences=st.lists(jdict, max_size=2).map(tuple),
    faults=st.lists(jdict, max_size=2).map(tuple), tools=st.lists(jdict, max_size=2).map(tuple),
    expected_route=jsonv, args_mode=st.none() | st.sampled_from(["exact_keys", "ignore"]),
    threshold=st.none() | st.floats(0, 1), metadata=jdict)


@settings(max_examples=200, deadline=None)
@given(traj)
def test_trajectory_roundtrip(t: Trajectory) -> None:
    assert Trajectory.from_dict(t.to_dict()) == t
    assert Trajectory.from_dict(json.loads(json.dumps(t.to_dict()))) == t


@settings(max_examples=200, deadline=None)
@given(case)
def test_case_roundtrip(c: Case) -> None:
    assert Case.from_dict(c.to_dict()) == c
    assert Case.from_dict(json.loads(json.dumps(c.to_dict()))) == c


@settings(max_examples=200, deadline=None)
@given(traj)
def test_trajcheck_reader_keeps_well_formed_trajectories_exactly(t: Trajectory) -> None:
    # the tolerant reader of our own format changes nothing in a to_dict() object
    from trajcheck.read.traces import native

    assert native.read(json.loads(json.dumps(t.to_dict()))) == t


@settings(max_examples=200, deadline=None)
@given(case)
def test_case_built_from_plain_lists_and_dicts_equals_typed(c: Case) -> None:
    # Case.__post_init__ converts dict/str expected calls and lists; the result is the typed case
    loose = Case(id=c.id, input=c.input, user=c.user, initial_state=c.initial_state,
                 expected_calls=[e.to_dict() for e in c.expected_calls],
                 optional_calls=list(c.optional_calls), forbidden_calls=list(c.forbidden_calls),
                 precedence=[list(p) for p in c.precedence], expected_final_state=c.expected_final_state,
                 response_must_include=list(c.response_must_include), max_steps=c.max_steps,
                 optimal_steps=c.optimal_steps, forbidden_sequences=list(c.forbidden_sequences),
                 faults=list(c.faults), tools=list(c.tools), expected_route=c.expected_route,
                 args_mode=c.args_mode, threshold=c.threshold, metadata=c.metadata)  # type: ignore[arg-type]
    assert loose == c
    assert all(type(e) is ExpectedCall for e in loose.expected_calls)
