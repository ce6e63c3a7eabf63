"""Dataset files: JSONL / JSON / YAML rows validated against the shipped Case schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.errors import DatasetError
from trajcheck.model import Case, ExpectedCall
from trajcheck.read.dataset import case_schema, load_cases, load_cases_report

ROW = {"id": "agent_042",
       "input": "My laptop still won't boot after INC-1042 was closed. Open a new high-priority ticket for IT.",
       "user": {"id": "u_381", "role": "employee"},
       "initial_state": "fixtures/tickets_empty.sql",
       "expected_calls": [{"name": "create_ticket", "args": {"priority": "high", "assignee_group": "IT-Hardware"},
                           "match": {"title": "semantic", "description": "semantic"}}],
       "optional_calls": ["search_docs", "get_ticket"],
       "forbidden_calls": ["update_ticket"],
       "precedence": [["get_ticket", "update_ticket"]],
       "expected_final_state": {"tickets": [{"priority": "high", "assignee_group": "IT-Hardware",
                                             "requester": "u_381"}]},
       "response_must_include": ["ticket ID"],
       "max_steps": 6}


def test_design_row_jsonl(tmp_path: Path) -> None:
    p = tmp_path / "ds.jsonl"
    p.write_text(json.dumps(ROW) + "\n" + json.dumps({"id": 2, "input": "hi", "expected_calls": ["ping"]}) + "\n")
    cases = load_cases(p)
    assert [c.id for c in cases] == ["agent_042", "2"]
    c = cases[0]
    assert c.expected_calls == (ExpectedCall("create_ticket", {"priority": "high", "assignee_group": "IT-Hardware"},
                                             {"title": "semantic", "description": "semantic"}),)
    assert c.precedence == (("get_ticket", "update_ticket"),)
    assert c.initial_state == str((tmp_path / "fixtures" / "tickets_empty.sql").resolve())
    assert cases[1].expected_calls == (ExpectedCall("ping"),)


def test_json_and_yaml_shapes(tmp_path: Path) -> None:
    j = tmp_path / "ds.json"
    j.write_text(json.dumps({"cases": [ROW]}, indent=2))
    y = tmp_path / "ds.yaml"
    y.write_text("- id: a\n  input: hello\n  forbidden_calls: [rm]\n- id: b\n  input: bye\n")
    assert load_cases(j)[0].forbidden_calls == ("update_ticket",)
    assert [(c.id, c.forbidden_calls) for c in load_cases(y)] == [("a", ("rm",)), ("b", ())]


def test_bad_rows_reported_with_line_and_path_others_kept(tmp_path: Path) -> None:
    p = tmp_path / "ds.jsonl"
    rows = [json.dumps({"id": "ok1", "input": "x"}),
            json.dumps({"id": "typo", "input": "x", "expected_call": []}),
            "{broken",
            json.dumps({"id": "badcall", "input": "x", "expected_calls": [{"name": "f", "args": 3}]}),
            json.dumps({"id": "ok1", "input": "dup"}),
            json.dumps({"id": "ok2", "input": "y", "max_steps": -1})]
    p.write_text("\n".join(rows) + "\n")
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["ok1"]
    assert len(errors) == 5
    assert errors[0] == f"{p}:2: case 'typo': unknown field 'expected_call' (did you mean 'expected_calls'?)"
    assert errors[1].startswith(f"{p}:3: not valid JSON")
    assert errors[2] == f"{p}:4: case 'badcall': expected_calls[0].args: 3 is not of type 'object', 'null'"
    assert errors[3] == f"{p}:5: case 'ok1': id: duplicate case id (first on line 1)"
    assert errors[4].startswith(f"{p}:6: case 'ok2': max_steps: -1 is less than the minimum of 0")
    with pytest.raises(DatasetError) as ei:
        load_cases(p)
    msg = str(ei.value)
    assert "5 problem(s)" in msg and ":2:" in msg and ":6:" in msg


def test_json_list_line_numbers(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text('[\n  {"id": "a", "input": "x"},\n  {"id": "b"}\n]\n')
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["a"]
    assert errors == [f"{p}:3: case 'b': 'input' is a required property"]


def test_yaml_line_numbers(tmp_path: Path) -> None:
    p = tmp_path / "ds.yml"
    p.write_text("cases:\n  - id: a\n    input: x\n  - id: b\n    input: y\n    threshold: 2\n")
    _, errors = load_cases_report(p)
    assert errors == [f"{p}:4: case 'b': threshold: 2 is greater than the maximum of 1"]


def test_schema_accepts_every_case_to_dict() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(case_schema())
    c = Case(id="x", input="y", expected_calls=(ExpectedCall("f", {"a": 1}, {"a": "exact"}, "ignore"),),
             optional_calls=("g",), precedence=(("g", "f"),), threshold=0.8, args_mode="expected_keys",
             forbidden_sequences=({"sequence": ["a", "b"], "severity": "critical"},), metadata={"k": 1})
    assert list(Draft202012Validator(case_schema()).iter_errors(c.to_dict())) == []


def test_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text("{nope")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_cases(p)
