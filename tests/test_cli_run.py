"""`trajcheck run` end to end on the flights example (click's CliRunner): the --k check comes
before any run, the run summary's wording, composite-gate rows and the files written."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli.app import main

FL = Path(__file__).resolve().parents[1] / "examples" / "flights"
AGENT = f"{FL / 'agents.py'}:reckless_agent"
CASES = str(FL / "cases.jsonl")


def test_k_above_trials_fails_before_any_run(tmp_path):
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(main, ["run", "--agent", AGENT, "--cases", CASES, "--trials", "2", "--k", "5",
                                  "--out", str(out), "--no-progress"])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: --k 5 asks for pass^k/pass@k up to k=5, but --trials 2 gives each "
                               "case 2 run(s)")
    assert "use --trials 5 or more, or --k 2 or less" in r.stderr
    assert not out.exists()  # nothing was run, so nothing is lost


def _said(r) -> list[str]:  # noqa: ANN001
    """stderr's summary lines (the notes on isolation and on importing the agent left out)."""
    return [ln for ln in r.stderr.splitlines()
            if not ln.startswith(("isolation: ", "the agent's module"))]


def test_run_summary_wording_gate_rows_and_files(tmp_path):
    out = tmp_path / "runs.jsonl"
    js = tmp_path / "sc.json"
    args = ["run", "--agent", AGENT, "--cases", CASES, "--trials", "2", "--out", str(out),
            "--no-progress", "--json", str(js)]
    r = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0].startswith("isolation: ")  # which isolation ran, first
    assert _said(r)[0] == f"12 runs made, recorded in {out}"
    assert f"wrote {js}" in r.stderr
    # the reckless agent books without validating: the task succeeds, the composite gate fails
    assert "composite gate" in r.stdout and "composite pass rate" in r.stdout
    d = json.loads(js.read_text())
    gate = [x["run_id"] for x in d["runs"] if x["success"] and x["composite_passed"] is False]
    assert len(gate) == 6 and all(g in r.stdout for g in gate)  # fl_001, fl_002, fl_004 x 2 trials
    assert f"see {js}" not in r.stdout  # all failing runs fit under the cap: no hint
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0
    assert _said(again)[0] == f"0 runs made, 12 resumed from {out}"
    mem = CliRunner().invoke(main, ["run", "--agent", AGENT, "--cases", CASES, "--no-progress", "-q"])
    assert mem.exit_code == 0 and _said(mem)[0] == "6 runs made" and mem.stdout == ""


def test_every_case_failing_setup_prints_each_reason(tmp_path):
    """Issue 27 (Small): when no case could be set up, run said only "empty suite: no runs to
    score" and hid why. Each case's setup error is in the error now (exit 2), as a user sees it."""
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "bad.sql").write_text("CREATE TABLE t (x int);\nTHIS IS NOT SQL;\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a", "input": "hi", "initial_state": "fixtures/bad.sql"}) + "\n"
                     + json.dumps({"id": "b", "input": "hi", "initial_state": "fixtures/missing.sql"}) + "\n")
    r = CliRunner().invoke(main, ["run", "--agent", AGENT, "--cases", str(cases), "--trials", "2",
                                  "--no-progress", "--isolation", "inline"], env={"COLUMNS": "250"})
    assert r.exit_code == 2, r.output
    bad, missing = tmp_path / "fixtures" / "bad.sql", tmp_path / "fixtures" / "missing.sql"
    assert r.stderr.splitlines()[-3:] == [
        "error: no run to score: 2 problems:",
        f"  - case 'a': not run (SandboxError: fixture {bad}, line 2: OperationalError: syntax error)",
        f"  - case 'b': not run (SandboxError: fixture '{missing}' not found (looked at {missing}))",
    ]
