"""trajcheck.run.faults: the fault library, flaky(), a case's `faults` field, determinism."""

from __future__ import annotations

from typing import Any

import pytest

from trajcheck.errors import DatasetError
from trajcheck.run.faults import (
    FAULT_KINDS,
    FAULT_SPEC_SCHEMA,
    InjectedFault,
    apply_faults,
    flaky,
    parse_faults,
)
from trajcheck.run.sandbox import SQLiteSandbox, call_tool


def create_ticket(title: str = "t", priority: str = "low") -> dict[str, Any]:
    return {"ticket_id": 7, "title": title, "priority": priority}


def search_docs(q: str = "") -> list[str]:
    return ["doc1"]


def outcomes(fn: Any, n: int, **args: Any) -> list[bool]:
    """True where the call failed."""
    return [call_tool(fn, args).is_error is True for _ in range(n)]


def test_fault_messages() -> None:
    tools = apply_faults({"create_ticket": create_ticket, "search_docs": search_docs}, [
        {"tool": "create_ticket", "fault": "http_503"},
        {"tool": "create_ticket", "fault": "timeout", "timeout_s": 10},
        {"tool": "create_ticket", "fault": "schema_validation", "field": "priority", "valid": ["low", "medium", "high"]},
        {"tool": "create_ticket", "fault": "permission_denied"},
        {"tool": "search_docs", "fault": "empty_result"},
    ])
    results = [call_tool(tools["create_ticket"], {"priority": "urgent"}, name="create_ticket") for _ in range(5)]
    assert [r.error for r in results] == [
        "HTTP 503 Service Unavailable: create_ticket is temporarily unavailable; retry later",
        "TimeoutError: create_ticket did not respond within 10 s",
        "ValidationError: invalid value \"urgent\" for 'priority'; valid values: low, medium, high",
        "HTTP 403 Forbidden: permission denied for create_ticket",
        None,
    ]
    assert results[0].output == {"error": {"code": 503, "message": "Service Unavailable"}}
    assert results[2].output["error"]["valid"] == ["low", "medium", "high"]
    assert results[4].output == {"ticket_id": 7, "title": "t", "priority": "urgent"}  # faults used up
    # empty_result is not an error: the tool "succeeds" with nothing, once
    assert [call_tool(tools["search_docs"], {"q": "vpn"}).output for _ in range(2)] == [[], ["doc1"]]
    assert tools["create_ticket"].injected == 4 and tools["create_ticket"].calls == 5


def test_times_and_after() -> None:
    tools = apply_faults({"create_ticket": create_ticket}, [
        {"tool": "create_ticket", "fault": "http_503", "times": 2, "after": 1}])
    assert outcomes(tools["create_ticket"], 5) == [False, True, True, False, False]


def test_valid_values_read_from_tool_definition() -> None:
    defs = [{"type": "function", "function": {"name": "create_ticket", "parameters": {
        "type": "object", "properties": {"priority": {"type": "string", "enum": ["low", "high"]}}}}}]
    tools = apply_faults({"create_ticket": create_ticket},
                         [{"tool": "create_ticket", "fault": "schema_validation", "field": "priority"}],
                         tool_defs=defs)
    r = call_tool(tools["create_ticket"], {"priority": "p0"})
    assert r.error == "ValidationError: invalid value \"p0\" for 'priority'; valid values: low, high"


def test_rate_is_deterministic_given_seed_and_trial() -> None:
    spec = [{"tool": "search_docs", "fault": "timeout", "rate": 0.3, "seed": 1}]
    runs = [outcomes(apply_faults({"search_docs": search_docs}, spec, trial=0)["search_docs"], 200)
            for _ in range(2)]
    assert runs[0] == runs[1]
    other = outcomes(apply_faults({"search_docs": search_docs}, spec, trial=1)["search_docs"], 200)
    assert other != runs[0]
    # the rate is honoured: 2000 seeded draws at 0.3 land within 4 standard errors (~0.041)
    many = outcomes(apply_faults({"search_docs": search_docs}, spec)["search_docs"], 2000)
    assert abs(sum(many) / 2000 - 0.3) < 0.041
    assert outcomes(apply_faults({"search_docs": search_docs}, [{**spec[0], "rate": 0}])["search_docs"], 50) == [False] * 50
    assert outcomes(apply_faults({"search_docs": search_docs}, [{**spec[0], "rate": 1}])["search_docs"], 50) == [True] * 50


def test_flaky() -> None:
    f = flaky(create_ticket, 0.5, "http_503", seed=7)
    g = flaky(create_ticket, 0.5, "http_503", seed=7)
    a, b = outcomes(f, 100), outcomes(g, 100)
    assert a == b and 30 < sum(a) < 70
    assert f.__name__ == "create_ticket" and f.injected == sum(a)
    boom = flaky(create_ticket, 1.0, ConnectionResetError("peer reset"))
    r = call_tool(boom, {})
    assert (r.is_error, r.error) == (True, "ConnectionResetError: peer reset")
    with pytest.raises(InjectedFault) as ei:
        flaky(create_ticket, 1.0, "permission_denied")()
    assert ei.value.kind == "permission_denied"
    with pytest.raises(DatasetError, match="fail_rate"):
        flaky(create_ticket, 1.5)
    with pytest.raises(DatasetError, match="unknown fault 'http_504'"):
        flaky(create_ticket, 0.5, "http_504")


def test_bad_fault_specs_name_case_index_and_field() -> None:
    with pytest.raises(DatasetError, match=r"case 'c1': faults\[1\]\.rate: must be a number in \[0, 1\]"):
        parse_faults([{"tool": "a", "fault": "timeout"}, {"tool": "a", "fault": "timeout", "rate": 2}], case_id="c1")
    with pytest.raises(DatasetError, match=r"faults\[0\]: give 'times' or 'rate', not both"):
        parse_faults([{"tool": "a", "fault": "timeout", "times": 1, "rate": 0.5}])
    with pytest.raises(DatasetError, match=r"faults\[0\]\.fault: unknown fault 'boom'"):
        parse_faults([{"tool": "a", "fault": "boom"}])
    with pytest.raises(DatasetError, match=r"faults\[0\]: unknown key\(s\) \['tiems'\]"):
        parse_faults([{"tool": "a", "fault": "timeout", "tiems": 2}])
    with pytest.raises(DatasetError, match=r"faults\[0\]\.tool: no tool named 'create_tikcet'"):
        apply_faults({"create_ticket": create_ticket}, [{"tool": "create_tikcet", "fault": "timeout"}])


def test_schema_fragment_agrees_with_parser() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    v = jsonschema.Draft202012Validator(FAULT_SPEC_SCHEMA)
    good = [{"tool": "a", "fault": k} for k in FAULT_KINDS] + [
        {"tool": "a", "fault": "timeout", "rate": 0.3, "seed": 1},
        {"tool": "*", "fault": "http_503", "times": 2, "after": 1, "status": 502}]
    bad = [{"tool": "a"}, {"tool": "a", "fault": "x"}, {"tool": "a", "fault": "timeout", "times": 0},
           {"tool": "a", "fault": "timeout", "rate": 0.1, "times": 1}, {"tool": "a", "fault": "timeout", "zzz": 1}]
    for g in good:
        assert v.is_valid(g) and parse_faults([g])
    for b in bad:
        assert not v.is_valid(b)
        with pytest.raises(DatasetError):
            parse_faults([b])


def test_faults_in_a_sandbox_leave_state_untouched() -> None:
    with SQLiteSandbox(fixture_sql="CREATE TABLE t (x INTEGER);") as sb:
        def insert(x: int) -> int:
            sb.execute("INSERT INTO t VALUES (:x)", {"x": x})
            return x

        tools = apply_faults({"insert": insert}, [{"tool": "insert", "fault": "http_503", "times": 1}])
        r1 = sb.call_tool(tools["insert"], {"x": 1}, name="insert")
        r2 = sb.call_tool(tools["insert"], {"x": 1}, name="insert")
        assert (r1.is_error, r2.is_error) == (True, False)
        assert sb.snapshot() == {"t": [{"x": 1}]}  # the failed call never reached the database
