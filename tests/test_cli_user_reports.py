"""A second new user's reports, end to end through the CLI: wrapper metadata (case_id) in
OpenAI/Anthropic JSONL records, ``--error-pattern`` for sources with no error channel,
``compare --unit`` and the unit next to the p-value, inspect's step labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import TraceFormatError
from trajcheck.model import Step, ToolResult, Trajectory
from trajcheck.read.traces import apply_error_pattern, load, read

CASES = [{"id": f"c{i}", "input": f"weather in city {i}",
          "expected_calls": [{"name": "get_weather", "args": {"city": f"P{i}"}}]} for i in range(3)]


def _openai(i: int, city: str) -> list[dict]:
    return [{"role": "user", "content": f"weather in city {i}"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"t{i}", "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]},
            {"role": "tool", "tool_call_id": f"t{i}", "content": "sunny"},
            {"role": "assistant", "content": "It is sunny."}]


def _anthropic(i: int, city: str) -> list[dict]:
    return [{"role": "user", "content": f"weather in city {i}"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"tu{i}", "name": "get_weather", "input": {"city": city}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{i}", "content": "sunny"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It is sunny."}]}]


def _write(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def _eval(args: list[str], tmp_path: Path) -> tuple[dict, str]:
    out = tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", *args, "-q", "--json", str(out)])
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text()), r.output


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_wrapper_metadata_case_id_ties_runs_to_cases(tmp_path: Path, fmt: str) -> None:
    cases = _write(tmp_path / "cases.jsonl", CASES)
    msgs = _openai if fmt == "openai" else _anthropic
    # c2's agent asks for the wrong city: it must be scored (and fail), not dropped
    rows = [{"messages": msgs(i, f"P{i}" if i < 2 else "Rome"),
             "metadata": {"case_id": f"c{i}", "trial": 0, "model": "m1"}} for i in range(3)]
    if fmt == "anthropic":  # top-level case_id / run_id are read as well
        rows[0] = {"messages": rows[0]["messages"], "case_id": "c0", "run_id": "r-c0"}
    traces = _write(tmp_path / f"{fmt}.jsonl", rows)
    sc, out = _eval([str(traces), "--cases", str(cases)], tmp_path)
    assert "no case_id" not in out
    assert sc["suite"]["n_runs"] == 3 and sc["suite"]["n_cases"] == 3
    runs = {r["case_id"]: r for r in sc["runs"]}
    assert set(runs) == {"c0", "c1", "c2"}
    assert [runs[c]["f1"] for c in ("c0", "c1", "c2")] == [1.0, 1.0, 0.0]
    assert sc["suite"]["n_successes"] == 2
    if fmt == "anthropic":
        assert runs["c0"]["run_id"] == "r-c0"
    # the reader's own values win; the rest of the wrapper's metadata is kept
    t = load(traces).trajectories[1]
    assert t.metadata["case_id"] == "c1" and t.metadata["model"] == "m1" and t.metadata["trial"] == 0


def test_wrapper_metadata_never_overrides_the_reader() -> None:
    obj = {"steps": [{"index": 0, "kind": "user", "content": "hi"}],
           "metadata": {"case_id": "own"}, "case_id": "wrapper"}
    assert read(obj).metadata["case_id"] == "own"


def _retry_log() -> list[dict]:
    call = lambda cid: {"role": "assistant", "content": None, "tool_calls": [  # noqa: E731
        {"id": cid, "type": "function", "function": {"name": "fetch", "arguments": '{"url": "u"}'}}]}
    return [{"role": "user", "content": "fetch u"}, call("a"),
            {"role": "tool", "tool_call_id": "a", "content": '{"error":"HTTP 503"}'}, call("b"),
            {"role": "tool", "tool_call_id": "b", "content": '{"body":"ok"}'},
            {"role": "assistant", "content": "done"}]


def test_error_pattern_marks_the_failed_attempt(tmp_path: Path) -> None:
    cases = _write(tmp_path / "cases.jsonl",
                   [{"id": "f", "input": "fetch u", "expected_calls": [{"name": "fetch", "args": {"url": "u"}}]}])
    traces = _write(tmp_path / "openai.jsonl", [{"messages": _retry_log(), "metadata": {"case_id": "f"}}])
    plain, _ = _eval([str(traces), "--cases", str(cases)], tmp_path)
    marked, _ = _eval([str(traces), "--cases", str(cases), "--error-pattern", '"error"'], tmp_path)
    # unmarked: 2 calls for 1 expected -> P 1/2, R 1, F1 2/3; marked: the 503 is a failed attempt
    assert plain["runs"][0]["f1"] == 2 / 3
    assert marked["runs"][0]["f1"] == 1.0
    res = load(traces, error_pattern='"error"').trajectories[0].tool_results()
    assert [(r.is_error, r.error) for r in res] == [(True, '{"error":"HTTP 503"}'), (None, None)]
    # inspect counts the failed result with the pattern, none without
    r = CliRunner().invoke(main, ["inspect", str(traces), "--error-pattern", "HTTP 5\\d\\d"],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "2 (1 failed)" in r.output, r.output
    r = CliRunner().invoke(main, ["inspect", str(traces)], env={"COLUMNS": "200"})
    assert "2 (0 failed)" in r.output


def test_error_pattern_never_overrides_the_source_flag_and_is_case_sensitive() -> None:
    t = Trajectory(steps=(Step(0, "tool_result", tool_result=ToolResult("a", "f", "Error: x", is_error=False)),
                          Step(1, "tool_result", tool_result=ToolResult("b", "f", "ERROR boom\nmore")),
                          Step(2, "tool_result", tool_result=ToolResult("c", "f", {"error": 1}))))
    got = [r.is_error for r in apply_error_pattern(t, "error").tool_results()]
    assert got == [False, None, True]  # own False kept; "ERROR" does not match "error"
    got2 = apply_error_pattern(t, "(?i)error").tool_results()
    assert [r.is_error for r in got2] == [False, True, True] and got2[1].error == "ERROR boom"
    with pytest.raises(TraceFormatError, match="not a valid regular expression"):
        load([{"name": "f"}], error_pattern="(")


def test_inspect_labels_steps_and_agent_turns(tmp_path: Path) -> None:
    traces = _write(tmp_path / "o.jsonl", [{"messages": _retry_log()}])
    r = CliRunner().invoke(main, ["inspect", str(traces)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    line = lambda label: next(x for x in r.output.splitlines() if label in x)  # noqa: E731
    # 6 messages -> 6 steps; agent turns: 2 tool-call turns + the final answer = 3
    assert line("steps (all kinds)").rstrip(" │").endswith(" 6")
    assert line("agent turns").rstrip(" │").endswith(" 3")


def test_compare_shows_the_test_unit_and_takes_unit(tmp_path: Path) -> None:
    cases = _write(tmp_path / "cases.jsonl", CASES)

    def sc(name: str, good: list[list[bool]]) -> Path:
        rows = [{"messages": _openai(i, f"P{i}" if ok else "X"), "metadata": {"case_id": f"c{i}", "trial": j}}
                for i, trials in enumerate(good) for j, ok in enumerate(trials)]
        out = tmp_path / f"{name}.json"
        r = CliRunner().invoke(main, ["eval", str(_write(tmp_path / f"{name}.jsonl", rows)),
                                      "--cases", str(cases), "-q", "--json", str(out)])
        assert r.exit_code == 0, r.output
        return out

    a = sc("a", [[False, False], [False, False], [True, True]])
    b = sc("b", [[True, True], [True, False], [True, True]])
    res = {}
    for unit in (None, "run", "task"):
        extra = ["--unit", unit] if unit else []
        r = CliRunner().invoke(main, ["compare", str(a), str(b), "--json", str(tmp_path / "c.json"), *extra],
                               env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        d = next(x for x in json.loads((tmp_path / "c.json").read_text())["deltas"]
                 if x["metric"] == "task_success_rate")
        row = next(x for x in r.output.splitlines() if "task_success_rate" in x)
        res[unit] = (d["unit"], d["p_value"], row)
    # per run: 3 discordant pairs, all for B -> exact two-sided p = 2 * (1/2)^3 = 0.25
    assert res[None][:2] == ("run", 0.25) and res["run"][:2] == ("run", 0.25)
    assert "0.25" in res[None][2] and "per run" in res[None][2]
    # per task: c0 and c1 favour B, c2 ties (dropped) -> p = 2 * (1/2)^2 = 0.5
    assert res["task"][:2] == ("task", 0.5) and "per task" in res["task"][2]
    h = CliRunner().invoke(main, ["compare", "--help"]).output
    assert "independent" in h and "conservative" in h
