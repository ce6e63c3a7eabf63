"""Dataset rows fail early and say where: unknown keys (with a suggestion), matcher typos at load
time, schema faults at the deepest relevant place, and loose Python-built cases converted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.errors import DatasetError
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.model import Case, ExpectedCall, ToolCall
from trajcheck.read.dataset import load_cases_report


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


def test_rows_of_one_shape_are_scored_once_to_validate(tmp_path: Path, monkeypatch) -> None:
    """Load-time scoring (dataset._scoring_errors) runs once per row shape: rows differing only
    in id, input and exact-matched scalar argument values pass or fail together, so the
    later rows are not scored again; faulty rows are each scored and reported."""
    from trajcheck.read import dataset

    calls: list[str] = []
    real = dataset._scoring_errors
    monkeypatch.setattr(dataset, "_scoring_errors", lambda c: calls.append(c.id) or real(c))
    rows = [{"id": f"ok{i}", "input": f"book {i}",
             "expected_calls": [{"name": "book", "args": {"id": i, "who": f"u{i}", "vip": i % 2 == 0,
                                                          "amount": i + 0.5, "note": None}}],
             "forbidden_calls": ["refund"]} for i in range(5)]
    # the same shape with a regex matcher: its pattern stays in the shape, so each is scored
    bad = {"name": "f", "args": {"q": "(a"}, "match": {"q": "regex"}}
    rows += [{"id": "re1", "input": "x", "expected_calls": [bad]},
             {"id": "re2", "input": "y", "expected_calls": [bad]},
             {"id": "re_ok", "input": "x", "expected_calls": [dict(bad, args={"q": "(a)"})]},
             # a nested argument value and a huge int are kept as they are
             {"id": "nested", "input": "x", "expected_calls": [{"name": "book", "args": {"id": [1]}}]},
             {"id": "big", "input": "x", "expected_calls": [{"name": "book", "args": {"id": 2**60}}]},
             {"id": "big2", "input": "x", "expected_calls": [{"name": "book", "args": {"id": 2**60 + 1}}]}]
    p, cases, errors = _report(tmp_path, rows)
    assert [c.id for c in cases] == ["ok0", "ok1", "ok2", "ok3", "ok4", "re_ok", "nested", "big", "big2"]
    assert calls == ["ok0", "re1", "re2", "re_ok", "nested", "big", "big2"]
    assert errors == [f"{p}:{n}: case {cid!r}: cannot be scored: regex matcher: invalid pattern '(a': "
                      "missing ), unterminated subpattern at position 0" for n, cid in ((6, "re1"), (7, "re2"))]


def test_value_faults_walk_names_the_first_non_finite_number() -> None:
    """The one-pass walk over plain JSON rows gives the general walk's answer (depth first,
    then the non-finite number a last-key-first walk meets first, by JSON path)."""
    import random

    from trajcheck.read.dataset import _value_faults, _value_faults_general

    rnd = random.Random(3)

    def gen(d: int):
        r = rnd.random()
        if d > 6 or r < 0.4:
            return rnd.choice([1, "x", None, True, 1.5, float("nan"), float("inf"), 2])
        if r < 0.7:
            return {rnd.choice(["a", "", "c.d"]) + str(i): gen(d + 1) for i in range(rnd.randint(0, 4))}
        return [gen(d + 1) for _ in range(rnd.randint(0, 4))]

    found = 0
    for _ in range(3000):
        row = gen(0)
        assert _value_faults(row) == _value_faults_general(row)
        found += bool(_value_faults(row))
    assert found > 500
    assert _value_faults({"a": [1, {"b": float("nan")}], "c": 2}) == ["a[1].b: nan is not a finite number"]
    deep: object = {"t": float("inf")}
    for _ in range(120):
        deep = [deep]
    assert _value_faults({"x": float("nan"), "y": deep}) == ["nested deeper than 100 levels"]
    assert _value_faults(({"a": float("nan")},)) == _value_faults_general(({"a": float("nan")},)) == []
