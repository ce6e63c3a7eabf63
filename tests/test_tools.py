"""ToolRegistry: definition forms, schema validation before execution, faults, recording."""

from __future__ import annotations

import asyncio

import pytest

from trajcheck.errors import AgentError, DatasetError, SchemaError
from trajcheck.model import Case
from trajcheck.run.sandbox import SQLiteSandbox
from trajcheck.run.tools import ToolContext, ToolRegistry, normalize_definition

PARAMS = {"type": "object", "required": ["x"], "additionalProperties": False,
          "properties": {"x": {"type": "integer", "minimum": 0}, "tag": {"enum": ["a", "b"]}}}


def _reg(counter: list[int]) -> ToolRegistry:
    def add_one(x: int, tag: str = "a") -> int:
        counter.append(x)
        return x + 1

    r = ToolRegistry()
    r.register(add_one, {"type": "function", "function": {"name": "add_one", "description": "d",
                                                           "parameters": PARAMS}})
    return r


def test_three_definition_forms_give_the_same_schema():
    forms = [
        {"type": "function", "function": {"name": "t", "description": "D", "parameters": PARAMS}},
        {"name": "t", "description": "D", "input_schema": PARAMS},
        {"name": "t", "description": "D", "parameters": PARAMS},
    ]
    for f in forms:
        assert normalize_definition(f) == ("t", "D", PARAMS)
    assert normalize_definition(PARAMS) == (None, "", PARAMS)
    with pytest.raises(SchemaError, match="unrecognised tool definition"):
        normalize_definition({"foo": 1})
    r = ToolRegistry()
    r.register(lambda x: x, forms[1])
    assert r.definitions("anthropic") == [{"name": "t", "description": "D", "input_schema": PARAMS}]
    assert r.definitions("openai")[0]["function"]["parameters"] == PARAMS


def test_invalid_schema_and_duplicate_name_rejected():
    r = ToolRegistry()
    with pytest.raises(SchemaError, match="tool 'bad': invalid parameters schema"):
        r.register(lambda: 1, {"type": "object", "properties": {"x": {"type": "integr"}}}, name="bad")
    r.register(lambda: 1, PARAMS, name="t")
    with pytest.raises(SchemaError, match="registered twice"):
        r.register(lambda: 1, PARAMS, name="t")


def test_schema_inferred_from_signature():
    r = ToolRegistry()

    def f(a: str, b: int = 2, *, ctx: ToolContext) -> None:
        """First line."""

    r.register(f)
    t = r.get("f")
    assert t.parameters == {"type": "object", "additionalProperties": False, "required": ["a"],
                            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
    assert t.takes_context and t.description == "First line."


def test_invalid_call_is_not_executed_and_lists_every_problem():
    ran: list[int] = []
    b = _reg(ran).bind()
    res = b.call("add_one", {"x": -1, "tag": "c", "y": 0})
    assert ran == []
    assert res.is_error is True
    assert res.error.startswith("invalid arguments for add_one: ")
    probs = res.output["validation_errors"]
    assert len(probs) == 3
    assert any(p.startswith("$.x: -1 is less than the minimum of 0") for p in probs)
    assert any(p.startswith("$.tag:") for p in probs)
    assert any("'y' was unexpected" in p for p in probs)
    ok = b.call("add_one", '{"x": 4}')
    assert (ok.output, ok.is_error, ran) == (5, False, [4])


def test_unparseable_and_unknown_calls_are_recorded():
    b = _reg([]).bind()
    r1 = b.call("add_one", "{x: 1")
    r2 = b.call("nope", {})
    assert r1.is_error and "not valid JSON" in r1.error
    assert r2.is_error and "unknown tool 'nope'; available tools: add_one" == r2.error
    t = b.trajectory("bye")
    calls = t.tool_calls()
    assert calls[0].args is None and calls[0].raw_args == "{x: 1" and calls[0].args_parse_error
    assert [s.kind for s in t.steps] == ["tool_call", "tool_result", "tool_call", "tool_result",
                                         "final_response"]
    assert [p[1].is_error for p in t.pairs()] == [True, True]


def test_recording_ids_latency_and_user_step():
    case = Case(id="c1", input="hello", user={"id": "u1"})
    b = _reg([]).bind(case=case)
    b.call("add_one", {"x": 1})
    b.say("thinking out loud")
    t = b.trajectory("done")
    assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "assistant", "final_response"]
    assert [s.index for s in t.steps] == [0, 1, 2, 3, 4]
    assert t.steps[1].tool_calls[0].call_id == t.steps[2].tool_result.call_id == "call_1"
    assert t.steps[2].latency_ms >= 0
    assert b.user == {"id": "u1"} and b.case_id == "c1"


def test_faults_from_case_fire_after_validation_only():
    ran: list[int] = []
    case = Case(id="c", input="i", faults=({"tool": "add_one", "fault": "http_503", "times": 1},))
    b = _reg(ran).bind(case=case)
    bad = b.call("add_one", {"x": "one"})  # invalid: does not consume the fault
    first = b.call("add_one", {"x": 1})
    second = b.call("add_one", {"x": 1})
    assert bad.is_error and "invalid arguments" in bad.error
    assert first.is_error and first.error.startswith("HTTP 503 Service Unavailable: add_one")
    assert first.output == {"error": {"code": 503, "message": "Service Unavailable"}}
    assert (second.is_error, second.output, ran) == (False, 2, [1])
    # a fresh bind (next trial) has fresh fault counters
    assert _reg([]).bind(case=case).call("add_one", {"x": 1}).is_error


def test_fault_naming_unknown_tool_raises():
    case = Case(id="c9", input="i", faults=({"tool": "nope", "fault": "timeout"},))
    with pytest.raises(DatasetError, match="case 'c9'"):
        _reg([]).bind(case=case)


def test_tools_use_the_sandbox_and_errors_roll_back():
    def put(v: str, *, ctx: ToolContext) -> int:
        ctx.sandbox.execute("BEGIN")
        ctx.sandbox.execute("INSERT INTO t (v) VALUES (:v)", {"v": v})
        if v == "bad":
            raise ValueError("no bad values")
        ctx.sandbox.execute("COMMIT")
        return len(ctx.sandbox.execute("SELECT * FROM t"))

    r = ToolRegistry()
    r.register(put)
    with SQLiteSandbox(fixture_sql="CREATE TABLE t (v TEXT);") as sb:
        b = r.bind(sb)
        assert b.call("put", {"v": "a"}).output == 1
        res = b.call("put", {"v": "bad"})
        assert res.is_error and res.error == "ValueError: no bad values"
        assert sb.snapshot() == {"t": [{"v": "a"}]}


def test_async_path_and_cancel():
    async def slow_double(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    r = ToolRegistry()
    r.register(slow_double)
    r.register(lambda x: x * 3, {"name": "triple", "parameters": {"type": "object",
                                                                  "properties": {"x": {"type": "integer"}}}})
    b = r.bind()

    async def agent() -> list[int]:
        a = await b.acall("slow_double", {"x": 2})
        c = await b.acall("triple", {"x": 2})
        return [a.output, c.output]

    assert asyncio.run(agent()) == [4, 6]
    assert b.call("slow_double", {"x": 5}).output == 10  # sync path runs an async tool
    b.cancel("timeout after 1s")
    with pytest.raises(AgentError, match="timeout after 1s"):
        b.call("triple", {"x": 1})
