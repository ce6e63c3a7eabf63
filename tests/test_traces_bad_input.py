"""Bad input never crashes a reader: problems are reported with file and line; non-traces raise TraceFormatError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import FORMATS, load, read

GOOD = [{"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]


def test_malformed_jsonl_line_is_reported_and_rest_read(tmp_path: Path) -> None:
    p = tmp_path / "runs.jsonl"
    p.write_text(json.dumps(GOOD) + "\n{not json\n\n" + json.dumps(GOOD) + "\n")
    res = load(p)
    assert len(res) == 2
    assert len(res.problems) == 1 and res.problems[0].startswith(f"{p}:2: not valid JSON")


def test_args_not_json_result_without_call_unknown_role(tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{oops"}}]},
            {"role": "tool", "tool_call_id": "nope", "content": "r"},
            {"role": "wizard", "content": "?"}]
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps(msgs) + "\n")
    res = load(p)
    (t,) = res.trajectories
    c = t.tool_calls()[0]
    assert c.args is None and c.raw_args == "{oops" and "not valid JSON" in (c.args_parse_error or "")
    assert [p_.split(": ", 1)[0] for p_ in res.problems] == [f"{p}:1"] * 3
    assert "messages[1].tool_calls[0] (f)" in res.problems[0]
    assert "'nope' matches no earlier call" in res.problems[1]
    assert "unknown role 'wizard'" in res.problems[2]
    # the orphan result has an id no call has, so it joins nothing
    assert t.pairs()[0][1] is None


def test_empty_file_and_empty_list(tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_text("  \n")
    res = load(p)
    assert len(res) == 0 and res.problems == [f"{p}: empty file; no traces"]
    q = tmp_path / "e.json"
    q.write_text("[]")
    assert load(q).problems == [f"{q}: an empty list; no traces"]


def test_non_trace_raises_naming_file(tmp_path: Path) -> None:
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"hello": "world", "n": 3}))
    with pytest.raises(TraceFormatError, match=r"config\.json: not a trace; expected a trace"):
        load(p)
    q = tmp_path / "notes.txt.json"
    q.write_text("just some text\nmore text\n")
    with pytest.raises(TraceFormatError, match=r"notes\.txt\.json: not JSON or JSON Lines"):
        load(q)
    with pytest.raises(TraceFormatError, match="no such file"):
        load(tmp_path / "missing.json")
    with pytest.raises(TraceFormatError, match="not a trace"):
        load({"hello": 1})
    with pytest.raises(TraceFormatError, match="unknown trace format"):
        load(GOOD, format="nope")


def test_jsonl_line_that_is_not_a_trace_is_a_problem(tmp_path: Path) -> None:
    p = tmp_path / "mix.jsonl"
    p.write_text(json.dumps(GOOD) + "\n" + json.dumps({"x": 1}) + "\n")
    res = load(p)
    assert len(res) == 1 and res.problems[0].startswith(f"{p}:2: not a trace")


def test_wrong_explicit_format_raises() -> None:
    with pytest.raises(TraceFormatError):
        read(42, "openai_chat")
    with pytest.raises(TraceFormatError):
        read({"a": 1}, "tau_bench")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "tool_calls", "type", "name", "args", "arguments", "id",
                         "function", "tool_call_id", "messages", "steps", "kind", "index", "output",
                         "task_id", "traj", "resourceSpans", "spans", "run_type", "child_runs",
                         "tool_name", "tool_input", "input_parameters", "data", "lc", "kwargs", "x"]),
        inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_garbage_only_raises_trace_format_error(obj: object) -> None:
    try:
        res = load(obj)
    except TraceFormatError:
        return
    for t in res:
        json.dumps(t.to_dict(), default=str)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FORMATS), json_values)
def test_garbage_in_every_explicit_format(fmt: str, obj: object) -> None:
    try:
        read(obj, fmt)
    except TraceFormatError:
        pass


def test_native_text_field_of_another_type_is_a_named_problem(tmp_path: Path) -> None:
    """Issue 27 (Small): ``{"source_format": {...}}`` raised TypeError from ``load`` and
    ``inspect`` (an unhashable value where the wrapper's metadata is merged; a call id or a
    result name of an object or list did the same at the call/result join, a number as
    final_response in eval's answer checks). Each is a problem naming file, line and field,
    the value left out; eval and inspect read the rest."""
    from click.testing import CliRunner

    from trajcheck.cli.app import main
    call = {"index": 0, "kind": "assistant", "tool_calls": [{"name": "f", "args": {"x": 1}, "call_id": "c1"}]}
    result = {"index": 1, "kind": "tool_result",
              "tool_result": {"call_id": "c1", "name": "f", "output": "r", "is_error": False}}
    lines = [
        {"steps": [call, result], "source_format": {"x": 1}, "metadata": {"case_id": "c"}},
        {"steps": [{**call, "tool_calls": [{"name": "f", "args": {"x": 1}, "call_id": {"x": 1}}]},
                   {**result, "tool_result": {"call_id": "c1", "name": ["f"], "output": "r"}}],
         "final_response": 3, "metadata": {"case_id": "c"}},
        {"steps": [{**call, "kind": {"k": 1}}, result], "trace_id": [1], "metadata": {"case_id": "c"}},
    ]
    p = tmp_path / "runs.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = load(p)
    assert res.problems == [
        f"{p}:1: source_format: not a string (dict); ignored",
        f"{p}:2: steps[0].tool_calls[0].call_id: not a string (dict); ignored",
        f"{p}:2: steps[1].tool_result.name: not a string (list); ignored",
        f"{p}:2: final_response: not a string (int); ignored",
        f"{p}:3: steps[0].kind: not a string (dict); read as ''",
        f"{p}:3: trace_id: not a string (list); ignored",
    ]
    a, b, c = res.trajectories
    assert (a.source_format, a.metadata["case_id"], len(a.pairs())) == (None, "c", 1)
    assert (b.final_response, b.tool_calls()[0].call_id, b.tool_results()[0].name) == (None, None, None)
    assert (c.steps[0].kind, c.trace_id, [x.name for x in c.tool_calls()]) == ("", None, ["f"])
    r = CliRunner().invoke(main, ["inspect", str(p)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "runs.jsonl:1: source_format: not a string (dict); ignored" in r.output
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c", "input": "q", "expected_calls": [{"name": "f", "args": {"x": 1}}]}) + "\n")
    r = CliRunner().invoke(main, ["eval", str(p), "--cases", str(cases)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "runs.jsonl:2: final_response: not a string (int); ignored" in r.output
