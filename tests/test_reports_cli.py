"""What a team needs around the reports, end to end through the CLI: case hashes in the
scorecard, compare refusing scorecards scored on different case definitions or trial counts
(and the loud override), the regressed/improved cases with their runs' reasons, --strict,
the --error-pattern hint, inspect's per-tool failures and Anthropic record usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.model import Case, ExpectedCall
from trajcheck.read.traces import load
from trajcheck.report.scorecard import validate_scorecard_json
from trajcheck.score.fingerprint import case_hash

ROOT = Path(__file__).resolve().parents[1]
HELPDESK = ROOT / "examples" / "helpdesk"
# the three helpdesk cases whose tool answers 503 first: false_success_agent gives up on the
# error and claims the ticket was opened; good_agent retries (examples/helpdesk/agents.py)
FAULT_CASES = {"hd_009_monitor_503", "hd_010_shared_drive_503", "hd_024_excel_503"}


def _ok(args: list[str]) -> object:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def helpdesk_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two versions of the helpdesk agent, 2 trials on each of the 25 cases, recorded by
    trajcheck run and scored by trajcheck eval."""
    d = tmp_path_factory.mktemp("helpdesk")
    out: dict[str, Path] = {"dir": d}
    for name, agent in (("good", "good_agent"), ("fs", "false_success_agent")):
        _ok(["run", "--agent", f"{HELPDESK / 'agents.py'}:{agent}", "--cases",
             str(HELPDESK / "cases.jsonl"), "--trials", "2", "--out", str(d / f"{name}.jsonl"),
             "--json", str(d / f"{name}.json"), "-q", "--no-progress"])
        out[name] = d / f"{name}.json"
    return out


def test_case_hash_is_stable_and_sees_every_change() -> None:
    a = Case(id="c", input="x", expected_calls=(ExpectedCall("f", {"a": 1, "b": 2}),))
    same = Case.from_dict({"input": "x", "expected_calls": [{"args": {"b": 2, "a": 1}, "name": "f"}], "id": "c"})
    assert case_hash(a) == case_hash(same) and len(case_hash(a)) == 16
    for other in (Case(id="c", input="x", expected_calls=(ExpectedCall("f", {"a": 1, "b": 3}),)),
                  Case(id="c", input="x", expected_calls=(ExpectedCall("f", {"a": 1, "b": 2},
                                                                       match={"a": "normalized"}),)),
                  Case(id="c", input="x", expected_calls=(ExpectedCall("f", {"a": 1, "b": 2}),),
                       precedence=(("g", "f"),))):
        assert case_hash(other) != case_hash(a)


def test_scorecard_records_each_case_hash(helpdesk_runs: dict[str, Path]) -> None:
    from trajcheck.read.dataset import load_cases

    d = json.loads(helpdesk_runs["good"].read_text())
    validate_scorecard_json(d)
    want = {c.id: case_hash(c) for c in load_cases(str(HELPDESK / "cases.jsonl"))}
    assert {c["case_id"]: c["case_hash"] for c in d["cases"]} == want
    assert all(r["case_hash"] == want[r["case_id"]] for r in d["runs"])


def test_compare_lists_regressed_cases_with_both_sides_reasons(helpdesk_runs: dict[str, Path]) -> None:
    d = helpdesk_runs["dir"]
    r = CliRunner().invoke(main, ["compare", str(helpdesk_runs["good"]), str(helpdesk_runs["fs"]),
                                  "--json", str(d / "c.json")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    c = json.loads((d / "c.json").read_text())
    moved = {x["case_id"]: x for x in c["cases"] if x["delta"] != 0}
    assert set(moved) == FAULT_CASES
    for x in moved.values():
        assert (x["a_successes"], x["a_trials"], x["b_successes"], x["b_trials"], x["delta"]) == (2, 2, 0, 2, -1.0)
        assert all(run["success"] for run in x["a_runs"]) and not any(run["success"] for run in x["b_runs"])
        assert all("final state" in run["reason"] for run in x["b_runs"])
    assert c["comparability"] == {"changed": [], "trials": [], "unhashed": [], "overridden": False}
    ts = c["deltas"][0]
    # 6 runs lost, none gained: exact McNemar two-sided p = 2 * (1/2)^6
    assert ts["metric"] == "task_success_rate" and ts["p_value"] == 2 * 0.5 ** 6
    assert "3 case(s) regressed" in r.output and "no case improved" in r.output
    assert "FAIL x2 (trials 0, 1): task failed: final state" in r.output


def test_compare_refuses_a_changed_case_definition_unless_told(helpdesk_runs: dict[str, Path]) -> None:
    d = helpdesk_runs["dir"]
    rows = [json.loads(x) for x in (HELPDESK / "cases.jsonl").read_text().splitlines() if x.strip()]
    i = next(k for k, x in enumerate(rows) if x["id"] == "hd_009_monitor_503")
    rows[0], rows[i] = rows[i], rows[0]
    rows[0]["expected_calls"][0]["args"]["priority"] = "low"  # someone edited a case
    edited = d / "cases_edited.jsonl"
    edited.write_text("".join(json.dumps(x) + "\n" for x in rows))
    (d / "fixtures").exists() or (d / "fixtures").symlink_to(HELPDESK / "fixtures")
    b = d / "edited.json"
    _ok(["eval", str(d / "good.jsonl"), "--cases", str(edited), "-q", "--json", str(b)])
    args = ["compare", str(helpdesk_runs["good"]), str(b), "--json", str(d / "c2.json")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert f"case {rows[0]['id']!r}: scored against different definitions" in r.output
    assert "--allow-changed-cases" in r.output and not (d / "c2.json").exists()
    r = CliRunner().invoke(main, [*args, "--allow-changed-cases", "--html", str(d / "c2.html")])
    assert r.exit_code == 0, r.output
    assert "WARNING" in r.output and "COMPARED DESPITE" in r.output
    c = json.loads((d / "c2.json").read_text())
    assert c["comparability"]["overridden"] is True
    assert [x["case_id"] for x in c["comparability"]["changed"]] == [rows[0]["id"]]
    assert 'id="override-warning"' in (d / "c2.html").read_text()


def test_compare_refuses_different_trial_counts_unless_told(helpdesk_runs: dict[str, Path]) -> None:
    d = helpdesk_runs["dir"]
    one = d / "one.jsonl"  # trial 0 only
    one.write_text("".join(x + "\n" for x in (d / "good.jsonl").read_text().splitlines()
                           if json.loads(x)["metadata"].get("trial") == 0))
    b = d / "one.json"
    _ok(["eval", str(one), "--cases", str(HELPDESK / "cases.jsonl"), "-q", "--json", str(b)])
    args = ["compare", str(helpdesk_runs["good"]), str(b)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "2 trial(s) in A, 1 in B" in r.output
    assert "--allow-trial-mismatch" in r.output
    r = CliRunner().invoke(main, [*args, "--allow-trial-mismatch"])
    assert r.exit_code == 0 and "per task" in r.output


CASES = [{"id": f"c{i}", "input": f"refund order {i}",
          "expected_calls": [{"name": "refund", "args": {"order": i}}]} for i in range(3)]


def _openai(i: int, result: str, claim: str = "Your refund is done.") -> dict:
    return {"messages": [
        {"role": "user", "content": f"refund order {i}"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"t{i}", "type": "function",
             "function": {"name": "refund", "arguments": json.dumps({"order": i})}}]},
        {"role": "tool", "tool_call_id": f"t{i}", "content": result},
        {"role": "assistant", "content": claim}], "metadata": {"case_id": f"c{i}", "trial": 0}}


def _files(tmp_path: Path, rows: list[str]) -> tuple[Path, Path]:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(x + "\n" for x in rows))
    return cases, traces


def test_strict_fails_on_broken_lines_and_unmatched_traces_after_writing_reports(tmp_path: Path) -> None:
    good = [json.dumps(_openai(i, "ok")) for i in range(2)]
    cases, traces = _files(tmp_path, [*good, '{"messages": [', json.dumps(dict(_openai(2, "ok"), metadata={"case_id": "nope"}))])
    out = tmp_path / "sc.json"
    base = ["eval", str(traces), "--cases", str(cases), "-q", "--json", str(out)]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, [*base, "--strict"])
    assert r.exit_code == 2
    assert "--strict: 1 record or line(s) not read; 1 trace naming a case id that is not among the cases; 1 case with no trace" in r.output
    assert json.loads(out.read_text())["suite"]["n_runs"] == 2  # the reports were still written
    clean = tmp_path / "clean.jsonl"
    clean.write_text("".join(x + "\n" for x in [*good, json.dumps(_openai(2, "ok"))]))
    assert CliRunner().invoke(main, ["eval", str(clean), "--cases", str(cases), "-q", "--strict"]).exit_code == 0
    r = CliRunner().invoke(main, ["inspect", str(traces), "--strict"])
    assert r.exit_code == 2 and "1 record or line(s) not read" in r.output


def test_error_pattern_hint_and_inspect_names_the_failed_tool(tmp_path: Path) -> None:
    rows = [json.dumps(_openai(0, "ok")), json.dumps(_openai(1, "503 Service Unavailable")),
            json.dumps(_openai(2, '{"error": "upstream timeout"}'))]
    cases, traces = _files(tmp_path, rows)
    r = CliRunner().invoke(main, ["eval", str(traces), "--cases", str(cases), "-q", "--json",
                                  str(tmp_path / "a.json")])
    assert r.exit_code == 0
    # OpenAI tool messages have no error flag: all three runs claim a refund and "succeed"
    assert json.loads((tmp_path / "a.json").read_text())["suite"]["n_successes"] == 3
    hint = next(x for x in r.output.splitlines() if x.startswith("hint:"))
    assert "2 of 3 tool results" in hint and "openai_chat" in hint
    pattern = hint.split("--error-pattern '")[1].split("'")[0]
    assert pattern == r'\b(50[0-4]|429)\b|"error"\s*:\s*(true|"[^"]|\{\s*"|\[\s*[^\]\s]|-?[1-9])'
    r = CliRunner().invoke(main, ["eval", str(traces), "--cases", str(cases), "-q", "--json",
                                  str(tmp_path / "b.json"), "--error-pattern", pattern])
    assert r.exit_code == 0 and "hint:" not in r.output
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["suite"]["n_successes"] == 1
    # the report can now show the false claims: the final response claims success, task failed
    assert [x["calls"]["claims_success"] and not x["success"] for x in b["runs"]] == [False, True, True]
    r = CliRunner().invoke(main, ["inspect", str(traces), "--error-pattern", pattern],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0
    row = next(x for x in r.output.splitlines() if "│ refund" in x)
    assert [c.strip() for c in row.split("│")[1:4]] == ["refund", "3", "2"]
    assert "None" not in r.output


def test_anthropic_record_usage_is_read(tmp_path: Path) -> None:
    rec = {"messages": [{"role": "user", "content": "refund order 0"},
                        {"role": "assistant", "content": [
                            {"type": "tool_use", "id": "tu0", "name": "refund", "input": {"order": 0}}]},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu0", "content": "ok"}]},
                        {"role": "assistant", "content": [{"type": "text", "text": "done"}]}],
           "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 10},
           "metadata": {"case_id": "c0"}}
    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps(rec) + "\n")
    t = load(f).trajectories[0]
    assert t.source_format == "anthropic"
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (130, 30)


def test_html_grid_keeps_every_case_figure_when_only_some_runs_are_listed(tmp_path: Path) -> None:
    import re

    html = tmp_path / "r.html"
    data = ROOT / "tests" / "data" / "tau_bench" / "gpt-4o-airline.json"
    _ok(["eval", str(data), "-q", "--keep-runs", "20", "--html", str(html)])
    doc = html.read_text()
    assert "20</span> of 200 listed, failing first; 116 of all failed their task" in doc
    row = doc[doc.index('<tr class="grid-row flaky" data-case="13">'):]
    row = row[:row.index("</tr>")]
    # case 13: 2 of 4 trials passed (pass^2 = C(2,2)/C(4,2)); one failed run listed, 3 not
    assert row.count('class="cell unlisted"') == 3 and row.count('data-run="13-') == 1
    assert re.findall(r'<td class="num">([^<]*)</td>', row) == ["2/4", "0.5", "0.1667", "0", "0"]
