"""Dataset rows fail early and say where: unknown keys (with a suggestion), matcher typos at load
time, schema faults at the deepest relevant place, and loose Python-built cases converted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.dataset import load_cases_report
from trajcheck.errors import DatasetError
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.model import Case, ExpectedCall, ToolCall


def _report(tmp_path: Path, rows: list[dict]) -> tuple[Path, list[Case], list[str]]:
    p = tmp_path / "cases.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases, errors = load_cases_report(p)
    return p, cases, errors


def test_unknown_key_raises_with_suggestion() -> None:
    with pytest.raises(DatasetError, match=r"case 'c1': unknown field 'expected_call' \(did you mean 'expected_calls'\?\)"):
        Case.from_dict({"id": "c1", "input": "x", "expected_call": []})
    with pytest.raises(DatasetError, match=r"unknown field 'zzz'$"):
        Case.from_dict({"id": "c1", "input": "x", "zzz": 1})


def test_case_converts_plain_expected_calls() -> None:
    c = Case("c1", "x", expected_calls=[{"name": "f", "args": {"a": 1}}, "g"])  # type: ignore[arg-type]
    assert c.expected_calls == (ExpectedCall("f", {"a": 1}), ExpectedCall("g"))
    # and it scores: f matched, g missing, h extra -> P = 1/2, R = 1/2
    r = tool_call_prf([ToolCall("f", {"a": 1}), ToolCall("h", {})], c)
    assert (r.precision, r.recall, r.tp) == (0.5, 0.5, 1)


@pytest.mark.parametrize("kw, msg", [
    ({"expected_calls": [{"args": {}}]}, "case 'c1': expected_calls[0]: missing 'name'"),
    ({"expected_calls": [{"name": "f", "arg": {}}]}, "case 'c1': expected_calls[0]: unknown field 'arg' (did you mean 'args'?)"),
    ({"expected_calls": [3]}, "case 'c1': expected_calls[0]: must be an ExpectedCall, a name or an object, got int"),
    ({"expected_calls": [{"name": "f", "args_mode": "exact"}]},
     "case 'c1': expected_calls[0]: expected call 'f': field 'args_mode' is 'exact', not one of "
     "['exact_keys', 'expected_keys', 'ignore']"),
    ({"optional_calls": "search"}, "case 'c1': field 'optional_calls' must be a list of tool names, got str 'search'"),
    ({"forbidden_calls": "cancel_booking"},
     "case 'c1': field 'forbidden_calls' must be a list of tool names, got str 'cancel_booking'"),
    ({"forbidden_calls": ["cancel_booking", 7]},
     "case 'c1': field 'forbidden_calls' item 1 must be a non-empty string (tool names), got int 7"),
    ({"optional_calls": [""]}, "case 'c1': field 'optional_calls' item 0 must be a non-empty string (tool names), got str ''"),
    ({"response_must_include": "ticket ID"},
     "case 'c1': field 'response_must_include' must be a list of strings, got str 'ticket ID'"),
    ({"precedence": [["a", "b", "c"]]},
     "case 'c1': field 'precedence' item 0 must be a pair [A, B] of tool names, got list ['a', 'b', 'c']"),
    ({"precedence": ["ab"]}, "case 'c1': field 'precedence' item 0 must be a pair [A, B] of tool names, got str 'ab'"),
])
def test_case_rejects_unconvertible_fields(kw: dict, msg: str) -> None:
    with pytest.raises(DatasetError) as ei:
        Case("c1", "x", **kw)
    assert str(ei.value) == msg


@pytest.mark.parametrize("field", ["optional_calls", "forbidden_calls", "response_must_include"])
def test_list_of_names_field_given_a_string_is_an_error_in_rows(field: str) -> None:
    # a bare string was split into one-letter names before: forbidden_calls "cancel_booking"
    # forbade 14 tools and a run calling cancel_booking passed the forbidden check
    with pytest.raises(DatasetError, match=rf"case 'c1': malformed field '{field}' \(must be a list of "):
        Case.from_dict({"id": "c1", "input": "x", field: "cancel_booking"})


def test_matcher_typo_reported_at_load_with_line_and_case(tmp_path: Path) -> None:
    ok = {"id": "hd_001", "input": "x", "expected_calls": [{"name": "f", "match": {"title": "semantic"}}]}
    rows = [dict(ok, id=f"hd_00{i}") for i in range(1, 6)]
    rows.append({"id": "hd_006", "input": "x",
                 "expected_calls": [{"name": "f", "args": {"title": "T"},
                                     "match": {"title": "contians", "n": {"type": "numeric", "abs_tol": -1}}}]})
    p, cases, errors = _report(tmp_path, rows)
    # a semantic spec without a scorer is fine at load time
    assert [c.id for c in cases] == ["hd_001", "hd_002", "hd_003", "hd_004", "hd_005"]
    assert errors == [
        f"{p}:6: case 'hd_006': expected_calls[0].match.title: unknown matcher 'contians' (did you mean 'contains'?)",
        f"{p}:6: case 'hd_006': expected_calls[0].match.n: numeric matcher: abs_tol must be a number >= 0, got -1",
    ]


def test_schema_error_points_at_deepest_field(tmp_path: Path) -> None:
    p, cases, errors = _report(tmp_path, [
        {"id": "a", "input": "x", "expected_calls": [{"name": "f", "args_mode": "expected_key"}]},
        {"id": "b", "input": "x", "expected_calls": ["g", 3]},
        {"id": "c", "input": "x", "expected_calls": [{"name": "f", "match": {"t": 1}}]},
    ])
    assert cases == []
    assert errors == [
        f"{p}:1: case 'a': expected_calls[0].args_mode: 'expected_key' is not one of "
        "['exact_keys', 'expected_keys', 'ignore', None]",
        f"{p}:2: case 'b': expected_calls[1]: 3 is not of type string or object",
        f"{p}:3: case 'c': expected_calls[0].match.t: 1 is not of type 'string', 'object'",
    ]
