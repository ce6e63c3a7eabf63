"""`trajcheck eval` and `trajcheck compare` end to end (click's CliRunner and the console script)."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"


def test_eval_tau_bench_example_done_when(tmp_path):
    out = tmp_path / "out.json"
    exe = Path(sys.executable).parent / "trajcheck"
    proc = subprocess.run([str(exe), "eval", str(EXAMPLE), "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "trajcheck scorecard" in proc.stdout
    assert "agreement with the recorded reward" in proc.stdout
    d = json.loads(out.read_text())
    rr = d["recorded_reward"]
    assert rr["pass_hat_k"] == {"1": 0.42, "2": 0.2733333333333333, "3": 0.22, "4": 0.2}
    assert rr["agreement"]["agree"] >= 196 and rr["agreement"]["n"] == 200
    assert len(rr["disagreements"]) == 200 - rr["agreement"]["agree"]
    assert f"{rr['agreement']['agree']}/200" in proc.stdout
    for dis in rr["disagreements"]:
        assert dis["run_id"] in proc.stdout and dis["reason"]
    # efficiency over the successful runs only, checked against the stdlib's inclusive
    # (linear interpolation) percentiles of the per-run figures in the same JSON
    eff = d["suite"]["efficiency"]
    ok_steps = [r["steps"] for r in d["runs"] if r["success"]]
    assert eff["n_success"] == len(ok_steps) == d["suite"]["n_successes"]
    cuts = statistics.quantiles(ok_steps, n=100, method="inclusive")
    assert eff["steps"]["n"] == len(ok_steps)
    assert [eff["steps"][q] for q in ("p50", "p95", "p99")] == pytest.approx([cuts[i] for i in (49, 94, 98)], rel=1e-12)
    assert "agent steps p50/p95/p99 (successes)" in proc.stdout
    # tau-bench records no cost or latency: no figure, and no cost per success
    assert eff["cost_usd"] is None and eff["cost_per_success"] is None
    assert d["suite"]["routing"] is None  # tau-bench cases carry no expected_route


def test_eval_writes_md_html_and_gates(tmp_path):
    r = CliRunner().invoke(main, ["eval", str(EXAMPLE), "-q", "--md", str(tmp_path / "r.md"),
                                  "--html", str(tmp_path / "r.html"), "--json", str(tmp_path / "r.json"),
                                  "--k", "1..2", "--fail-under", "0.9"])
    assert r.exit_code == 1
    assert "FAIL" in r.output
    d = json.loads((tmp_path / "r.json").read_text())
    assert sorted(d["suite"]["pass_hat_k"]) == ["1", "2"]
    rate = d["suite"]["task_success_rate"]["value"]
    md = (tmp_path / "r.md").read_text()
    assert "## trajcheck scorecard" in md and str(rate) in md
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    ok = CliRunner().invoke(main, ["eval", str(EXAMPLE), "-q", "--fail-under", str(rate)])
    assert ok.exit_code == 0, ok.output


def test_eval_bad_input_exit_2(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": "world"}')
    r = CliRunner().invoke(main, ["eval", str(bad)])
    assert r.exit_code == 2
    assert "error" in r.output.lower()
    r = CliRunner().invoke(main, ["eval", str(EXAMPLE), "--k", "1..9"])
    # names the k the user typed (9, not the first k that is too large), the case and its 4 runs
    assert r.exit_code == 2 and "--k 1..9" in r.output and "k=9" in r.output
    assert "case '0' has only 4 run(s)" in r.output and "use --k 4 or less" in r.output
    r = CliRunner().invoke(main, ["eval", str(EXAMPLE), "--k", "x"])
    assert r.exit_code == 2


def test_eval_uneven_trials_limit_k(tmp_path):
    recs = json.loads(EXAMPLE.read_text())[:8]  # tasks 0 and 1 (4 trials each)
    recs[0] = dict(recs[0], task_id=999, info=dict(recs[0]["info"]))
    f = tmp_path / "few.json"
    f.write_text(json.dumps(recs))
    out = tmp_path / "o.json"
    r = CliRunner().invoke(main, ["eval", str(f), "-q", "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["suite"]["n_runs"] == 8  # task 999 carries its own case in a tau-bench file
    assert d["suite"]["pass_hat_k"].keys() == {"1"}  # fewest trials: task 999 has one


def test_compare(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert CliRunner().invoke(main, ["eval", str(EXAMPLE), "-q", "--json", str(a)]).exit_code == 0
    assert CliRunner().invoke(main, ["eval", str(EXAMPLE), "-q", "--json", str(b)]).exit_code == 0
    cj = tmp_path / "c.json"
    r = CliRunner().invoke(main, ["compare", str(a), str(b), "--json", str(cj)])
    assert r.exit_code == 0, r.output
    c = json.loads(cj.read_text())
    assert c["n_cases"] == 50
    ts = c["deltas"][0]
    assert ts["metric"] == "task_success_rate" and ts["delta"] == 0 and ts["p_value"] == 1.0
    assert "pass^4" in r.output
    bad = tmp_path / "x.json"
    bad.write_text("[]")
    assert CliRunner().invoke(main, ["compare", str(a), str(bad)]).exit_code == 2


# ------------------------------------------------------------------ fixes from a new user's report

def _runs_file(path: Path, n: int, *, with_case_id: bool = True, bad_flight_from: int = 99) -> Path:
    """n recorded runs of case c0 (JSONL, trajcheck's own trace form); runs from
    ``bad_flight_from`` on book the wrong flight."""
    from trajcheck.model import Step, ToolCall, ToolResult, Trajectory

    lines = []
    for t in range(n):
        flight = 2 if t >= bad_flight_from else 1
        meta = {"run_id": f"r{t}", "trial": t} | ({"case_id": "c0"} if with_case_id else {})
        tr = Trajectory(steps=(Step(0, "user", content="book flight 1"),
                               Step(1, "tool_call", tool_calls=(ToolCall("book", {"flight": flight}, call_id="x"),)),
                               Step(2, "tool_result", tool_result=ToolResult("x", "book", "ok", is_error=False)),
                               Step(3, "final_response", content="done")),
                        final_response="done", metadata=meta)
        lines.append(json.dumps(tr.to_dict()))
    path.write_text("\n".join(lines) + "\n")
    return path


def _cases_file(path: Path) -> Path:
    path.write_text(json.dumps({"id": "c0", "input": "book flight 1",
                                "expected_calls": [{"name": "book", "args": {"flight": 1}}]}) + "\n")
    return path


def test_eval_accepts_a_directory(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _runs_file(d / "a.jsonl", 2)
    r = CliRunner().invoke(main, ["eval", str(d), "--cases", str(_cases_file(tmp_path / "cases.jsonl")),
                                  "--json", str(tmp_path / "o.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "o.json").read_text())["suite"]["n_runs"] == 2


def test_eval_without_case_ids_leads_with_the_cause(tmp_path):
    runs = _runs_file(tmp_path / "traces.jsonl", 13, with_case_id=False)
    r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(_cases_file(tmp_path / "cases.jsonl"))])
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines[0] == ("error: no trace could be matched to a case: 13 runs have no case_id in their "
                        "metadata: traces must carry metadata.case_id (trajcheck run writes it; tau-bench "
                        "files carry their own cases)")
    assert lines[2].startswith("  - trace 0 (run r0): no case_id") and lines[-1] == "  ... and 4 more"
    assert len(lines) == 13  # cause, count, 10 problems, "... and N more": one per line


def test_eval_without_cases_for_traces_that_carry_none(tmp_path):
    runs = _runs_file(tmp_path / "runs.jsonl", 2)
    r = CliRunner().invoke(main, ["eval", str(runs)])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: --cases is required: these traces carry no cases")
    assert "not among the cases" not in r.output


def test_eval_quiet_still_prints_problems_and_says_what_it_wrote(tmp_path):
    runs = _runs_file(tmp_path / "runs.jsonl", 2)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(_cases_file(cases).read_text()
                     + json.dumps({"id": "c_unrun", "input": "x"}) + "\n")
    out = tmp_path / "o.json"
    r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(cases), "-q", "--json", str(out),
                                  "--md", str(tmp_path / "o.md")])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""  # -q: no tables
    assert "1 problem:\n  - case 'c_unrun': no traces; not scored" in r.stderr
    assert f"wrote {out}" in r.stderr and f"wrote {tmp_path / 'o.md'}" in r.stderr


def test_demo_output_is_capped_and_names_the_files(tmp_path):
    md = tmp_path / "demo-scorecard.md"
    r = CliRunner().invoke(main, ["eval", str(EXAMPLE), "--md", str(md)], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    out = r.stdout
    # 116 task failures + 9 composite-gate failures; the first 10 rows, then a hint
    assert "failing runs (125 of 200): 116 task failed, 9 composite gate only" in out
    assert "... and 115 more failing runs; use --json or --html to see all" in out
    assert "'payment_id': 'gift_card_4643416'" not in out  # no whole argument dicts (13-0 not shown)
    assert re.search(r"runs with a forbidden call\s*│ n/a \(no case defines forbidden calls\)", out)
    assert f"wrote {md}" in r.stderr
    text = md.read_text()
    assert text.count("| task failed |") + text.count("| composite gate |") == 10
    # no disagreement with the recorded reward left (5-1 is judged by the fields matcher)
    assert "**Agreement with the recorded reward: 200/200**" in text


def test_compare_prints_tiny_p_values_and_keeps_them_exact(tmp_path):
    from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory
    from trajcheck.score.suite import evaluate

    cases = [Case(id=f"K{i}", input="book", expected_calls=(ExpectedCall("book", {"flight": 1}),))
             for i in range(30)]

    def run(cid: str, flight: int) -> Trajectory:
        return Trajectory(steps=(Step(0, "tool_call", tool_calls=(ToolCall("book", {"flight": flight}, call_id="x"),)),
                                 Step(1, "tool_result", tool_result=ToolResult("x", "book", "ok", is_error=False))),
                          metadata={"case_id": cid, "trial": 0})

    evaluate([run(c.id, 2) for c in cases], cases, n_boot=50).to_json(tmp_path / "a.json")
    evaluate([run(c.id, 1) for c in cases], cases, n_boot=50).to_json(tmp_path / "b.json")
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                                  "--json", str(tmp_path / "c.json")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    row = next(line for line in r.stdout.splitlines() if "task_success_rate" in line)
    assert row.rstrip(" │").endswith("<0.0001 │ per run")  # the test's unit next to its p
    p = json.loads((tmp_path / "c.json").read_text())["deltas"][0]["p_value"]
    assert p == 2 * 0.5 ** 30
