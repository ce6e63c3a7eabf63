"""Hostile and broken input files: clear trajcheck errors, good records kept, bombs refused.

Each case here is one the audit of hostile input found (README "Security model").
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from trajcheck.errors import DatasetError, TraceFormatError
from trajcheck.model import Trajectory
from trajcheck.read.dataset import load_cases_report
from trajcheck.read.limits import MAX_DEPTH, clean_figures, loads, scrub
from trajcheck.read.traces import load

DATA = Path(__file__).parent / "data" / "traces"
CHAT = json.loads((DATA / "openai_chat.json").read_text())
PROMPTFOO = json.loads((DATA / "promptfoo_output.json").read_text())
LANGSMITH = json.loads((DATA / "langsmith.json").read_text())
OTEL = json.loads((DATA / "otel_genai.jsonl").read_text().splitlines()[0])


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def test_invalid_utf8_line_skips_that_line_only(tmp_path: Path) -> None:
    p = tmp_path / "runs.jsonl"
    good = json.dumps(CHAT).encode()
    p.write_bytes(good + b"\n\xff\xfe{\"x\": 1}\n" + good + b"\n")
    res = load(p)
    assert len(res) == 2
    assert f"{p}:2: not UTF-8 text (invalid start byte at byte 0 of the line); line skipped" in res.skipped


def test_stray_chat_message_among_records_is_one_skipped_record(tmp_path: Path) -> None:
    p = tmp_path / "runs.json"
    p.write_text(json.dumps([PROMPTFOO, {"role": "user", "content": "x"}, PROMPTFOO, {"type": "x"}]))
    res = load(p)
    assert len(res) == 2
    assert [s.split(":", 1)[0] for s in res.skipped] == [f"{p} record 1", f"{p} record 3"]


def test_bad_langsmith_record_keeps_the_good_runs(tmp_path: Path) -> None:
    p = tmp_path / "runs.jsonl"
    bad = {"id": "zz", "run_type": "tool", "child_runs": [{"run_type": "tool", "id": "k", "inputs": 5,
                                                            "start_time": True}], "start_time": [1]}
    p.write_text(json.dumps(LANGSMITH) + "\n" + json.dumps(bad) + "\n")
    res = load(p)
    assert any(t.trace_id == "9f00" for t in res)


def test_deep_nesting_refused_per_line_and_per_record(tmp_path: Path) -> None:
    p = tmp_path / "deep.jsonl"
    p.write_text(json.dumps(CHAT) + "\n" + _deep(100_000) + "\n" + _deep(MAX_DEPTH + 5) + "\n")
    res = load(p)
    assert len(res) == 1
    assert [s.split(": ", 1)[0] for s in res.skipped] == [f"{p}:2", f"{p}:3"]
    assert all("nested deeper than 100 levels" in s for s in res.skipped)
    q = tmp_path / "deep.json"
    q.write_text(_deep(100_000))
    with pytest.raises(TraceFormatError, match="nested deeper than 100 levels"):
        load(q)
    deep_rec = dict(PROMPTFOO, output=json.loads(_deep(MAX_DEPTH + 1)))
    r = tmp_path / "recs.json"
    r.write_text(json.dumps([PROMPTFOO, deep_rec, PROMPTFOO]))
    res = load(r)
    assert len(res) == 2 and res.skipped == [f"{r} record 1: JSON nested deeper than 100 levels; skipped"]


def test_huge_and_non_finite_figures_are_dropped_with_a_fault(tmp_path: Path) -> None:
    p = tmp_path / "pf.jsonl"
    native = {"steps": [{"index": 0, "kind": "user", "content": "hi", "cost_usd": "free"}],
              "total_cost_usd": -3, "total_usage": {"input_tokens": 1.5}}
    rows = [dict(PROMPTFOO, cost=10 ** 400), dict(PROMPTFOO, latencyMs=1e999), native]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + '{"output": "x", "cost": NaN}\n')
    res = load(p)
    assert [(t.total_cost_usd, t.total_latency_ms) for t in res] == [
        (None, 640.0), (5e-05, None), (None, None), (None, None)]
    assert res.faults == [
        f"{p}:2: non-standard JSON number Infinity read as null",
        f"{p}:4: non-standard JSON number NaN read as null",
        f"{p}:1: total_cost_usd: inf is not a finite non-negative number; read as unknown",
        f"{p}:3: steps[0].cost_usd: a str is not a finite non-negative number; read as unknown",
        f"{p}:3: total_cost_usd: -3 is not a finite non-negative number; read as unknown",
        f"{p}:3: total_usage.input_tokens: 1.5 is not a finite non-negative integer; read as unknown"]
    nat = res[3]
    assert nat.steps[0].cost_usd is None and nat.total_usage is not None
    t, notes = clean_figures(Trajectory(total_cost_usd=float("nan")))
    assert t.total_cost_usd is None and notes == [
        "total_cost_usd: nan is not a finite non-negative number; read as unknown"]


class _CountingId(str):
    """A call id that counts the comparisons and hashes made with it (shared counter)."""

    ops = 0

    def __eq__(self, other: object) -> bool:
        _CountingId.ops += 1
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        _CountingId.ops += 1
        return str.__hash__(self)


def _join_ops(n_pairs: int) -> int:
    from trajcheck.read.traces import read

    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(n_pairs):
        msgs.append({"role": "assistant", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    _CountingId.ops = 0
    t = read(msgs)
    pairs = t.pairs()
    assert len(pairs) == n_pairs and all(r is not None and r.call_id == c.call_id for c, r in pairs)
    return _CountingId.ops


def test_openai_chat_join_makes_a_bounded_number_of_id_operations_per_message(monkeypatch) -> None:
    """Linear time without a clock: every call id the reader makes counts the comparisons and
    hashes done with it while reading and joining. A join that scans earlier ids (the former
    list, 100k messages in 13 s) makes ~n^2/2 of them; a linear one a constant per message."""
    from trajcheck.read.traces import openai_chat

    monkeypatch.setattr(openai_chat, "_str", lambda v: None if v is None else _CountingId(v))
    small, big = _join_ops(500), _join_ops(2_000)
    assert small > 0  # the ids are the counting ones
    assert big <= 8 * 2_000  # a constant per call/result pair
    assert big <= 4.4 * small  # 4x the pairs: 4x the operations (a quadratic join gives 16x)


def test_promptfoo_text_costs_are_reported_with_the_run(tmp_path: Path) -> None:
    p = tmp_path / "pf.jsonl"
    tu = {**PROMPTFOO["tokenUsage"], "prompt": "many"}
    rows = [PROMPTFOO, dict(PROMPTFOO, cost="free"), dict(PROMPTFOO, latencyMs=True, tokenUsage=tu),
            dict(PROMPTFOO, cost="0.25")]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = load(p)
    assert [t.total_cost_usd for t in res] == [5e-05, None, 5e-05, 0.25]  # a numeric string still reads
    assert res[2].total_latency_ms is None and res[2].total_usage is not None
    assert res[2].total_usage.input_tokens is None
    assert res[2].total_usage.output_tokens == res[0].total_usage.output_tokens
    assert res.faults == [
        f"{p}:2: cost: 'free' is not a number; read as unknown",
        f"{p}:3: tokenUsage.prompt: 'many' is not a number; read as unknown",
        f"{p}:3: latencyMs: True is not a number; read as unknown"]
    assert len(res) == 4 and res.skipped == []


def test_text_costs_in_other_readers_are_reported_too(tmp_path: Path) -> None:
    import copy

    from trajcheck.read.traces import tau2

    ls = copy.deepcopy(LANGSMITH)
    ls["child_runs"][0]["total_cost"] = "free"
    p = tmp_path / "ls.json"
    p.write_text(json.dumps(ls))
    res = load(p)
    assert res.faults == [f"{p} trace 9f00: run 0a01 (ChatOpenAI).total_cost: 'free' is not a number; "
                          "read as unknown"]
    # the other model call's cost is kept, the text one is unknown
    assert [s.cost_usd for s in res[0].steps if s.cost_usd is not None] == [0.0003]
    problems: list[str] = []
    steps = tau2.read_messages([{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "hello", "cost": "n/a"},
                                {"role": "assistant", "content": "bye", "cost": 0.5}], problems)
    assert problems == ["messages[1].cost: 'n/a' is not a number; read as unknown"]
    assert [s.cost_usd for s in steps] == [None, None, 0.5]


def test_huge_otel_timestamps_and_bool_fields_do_not_crash(tmp_path: Path) -> None:
    span = OTEL["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    bad = json.loads(json.dumps(OTEL))
    bsp = bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    bsp.update(startTimeUnixNano="9" * 60, endTimeUnixNano=10 ** 40, traceId="ab" * 16)
    p = tmp_path / "otel.jsonl"
    p.write_text(json.dumps(OTEL) + "\n" + json.dumps(bad) + "\n")
    res = load(p)
    assert {t.trace_id for t in res} >= {span["traceId"].lower(), "ab" * 16} or len(res) == 2


def test_surrogates_repaired_and_reported() -> None:
    notes: list[str] = []
    v = loads('{"a": "x\\ud800y", "b": "\\ud83d\\ude00"}', notes)
    assert v == {"a": "x\ufffdy", "b": "\U0001F600"}
    assert notes == ["lone UTF-16 surrogate escapes replaced by U+FFFD"]
    cyc: list = [1]
    cyc.append(cyc)
    assert scrub({"c": cyc, "n": float("nan"), "o": object}) == {"c": [1, "<cycle>"], "n": None,
                                                                  "o": "<class 'object'>"}


def _rows(tmp_path: Path, rows: list) -> Path:
    p = tmp_path / "cases.jsonl"
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return p


def test_rows_that_would_fail_at_scoring_are_rejected_at_load(tmp_path: Path) -> None:
    call = {"name": "f", "args": {"q": "(a"}, "match": {"q": "regex"}}
    p = _rows(tmp_path, [
        {"id": "re", "input": "x", "expected_calls": [call]},
        {"id": "co", "input": "x", "expected_calls": [dict(call, args={"q": 5}, match={"q": "contains"})]},
        {"id": "oo", "input": "x", "expected_calls": [dict(call, args={"q": 5}, match={"q": "one_of"})]},
        '{"id": "nan", "input": "x", "threshold": NaN}',
        {"id": "fs", "input": "x", "forbidden_sequences": [{"tool": "a", "link": None}]},
        {"id": "ok", "input": "x"}])
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["ok"]
    assert errors == [
        f"{p}:1: case 're': cannot be scored: regex matcher: invalid pattern '(a': missing ), "
        "unterminated subpattern at position 0",
        f"{p}:2: case 'co': cannot be scored: contains matcher: expected value must be a string, got 5",
        f"{p}:3: case 'oo': cannot be scored: one_of matcher: expected value must be a list of "
        "acceptable values, got 5",
        f"{p}:4: case 'nan': threshold: nan is not a finite number",
        f"{p}:5: case 'fs': cannot be scored: forbidden_sequences[0].link: must be an object "
        "{arg, prior_arg}, got None"]


def test_deep_dataset_row_is_one_bad_row(tmp_path: Path) -> None:
    p = _rows(tmp_path, ['{"id": "d", "input": ' + _deep(100_000) + "}",
                         '{"id": "d2", "input": "x", "metadata": {"a": ' + _deep(200) + "}}",
                         {"id": "ok", "input": "x"}])
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["ok"]
    assert errors[0].startswith(f"{p}:1: not valid JSON (nested deeper")
    assert errors[1] == f"{p}:2: case 'd2': nested deeper than 100 levels"


def test_nested_cases_key_is_not_taken_for_the_rows(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(json.dumps({"about": {"cases": [{"id": "decoy", "input": "x"}]},
                             "cases": [{"id": "real", "input": "y"}]}, indent=1))
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["real"] and errors == []


BOMB = "\n".join([
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    *[f"{x}: &{x} [{','.join([f'*{p}'] * 9)}]" for p, x in zip("abcdefg", "bcdefgh")],
    "cases: [*h,*h,*h,*h,*h,*h,*h,*h,*h]"])


def test_yaml_alias_bomb_refused_quickly(tmp_path: Path) -> None:
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMB)
    assert len(BOMB) < 600
    t0 = time.perf_counter()
    with pytest.raises(DatasetError, match="aliases expand to more than 1,000,000 nodes; refused"):
        load_cases_report(p)
    assert time.perf_counter() - t0 < 10  # seconds; the unguarded bomb took 79 s and 2.4 GB


def test_yaml_with_a_few_aliases_still_loads(tmp_path: Path) -> None:
    p = tmp_path / "ok.yaml"
    p.write_text("user: &u {id: u1}\ncases:\n  - {id: a, input: x, user: *u}\n  - {id: b, input: y, user: *u}\n")
    cases, errors = load_cases_report(p)
    assert [c.user for c in cases] == [{"id": "u1"}] * 2 and errors == []


def test_regex_matcher_is_linear_time_and_refuses_backtracking_features() -> None:
    from trajcheck.errors import MatcherError
    from trajcheck.match.matchers import get_matcher
    from trajcheck.match.safe_regex import ENGINE, compile_pattern

    assert ENGINE == "re2"
    m = get_matcher("regex")
    t0 = time.perf_counter()
    assert m("(a+)+$", "a" * 100_000 + "b") is False  # 28 characters took 137 s with Python's re
    assert time.perf_counter() - t0 < 5
    assert m("(?i)inc-[0-9]+", "INC-42") is True
    assert get_matcher({"type": "regex", "pattern": "a.b", "flags": "s"})(None, "a\nb") is True
    with pytest.raises(MatcherError, match="without a linear-time guarantee"):
        compile_pattern(r"(a)\1")
    with pytest.raises(MatcherError, match="verbose patterns are not supported"):
        compile_pattern("a", "x")


def test_error_pattern_is_linear_time_too() -> None:
    from trajcheck.read.traces import read

    msgs = [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                                   "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a" * 50_000 + "!"}]
    t0 = time.perf_counter()
    t = read(msgs, error_pattern="(a+)+$")
    assert time.perf_counter() - t0 < 5
    assert t.pairs()[0][1].is_error is None


@pytest.mark.parametrize("ref", ["http://127.0.0.1:9/s.json", "file:///etc/hostname", "other.json#/x"])
def test_schema_ref_outside_the_row_is_refused(tmp_path: Path, ref: str) -> None:
    p = _rows(tmp_path, [
        {"id": "r", "input": "x", "expected_calls": [
            {"name": "f", "args": {"q": None}, "match": {"q": {"type": "schema", "schema": {"$ref": ref}}}}]},
        {"id": "ok", "input": "x", "expected_calls": [
            {"name": "f", "match": {"q": {"type": "schema", "schema": {
                "$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}}}}]}])
    cases, errors = load_cases_report(p)
    assert [c.id for c in cases] == ["ok"]
    assert len(errors) == 1 and f"$ref {ref!r} points outside the schema" in errors[0]


def test_schema_ref_to_a_file_is_never_read(tmp_path: Path) -> None:
    from trajcheck.errors import SchemaError
    from trajcheck.match.matchers import compile_schema

    f = tmp_path / "s.json"
    f.write_text('{"type": "string"}')
    with pytest.raises(SchemaError, match="points outside the schema"):
        compile_schema({"$ref": f.as_uri()})
    # a relative reference against a declared base is still not fetched
    v = compile_schema({"$id": f.parent.as_uri() + "/root.json", "items": {"$ref": "#/$defs/n"},
                        "$defs": {"n": {"type": "number"}}})
    assert v.is_valid([1, 2]) and not v.is_valid(["a"])
