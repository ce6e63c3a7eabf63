"""`trajcheck eval` and `trajcheck compare` end to end (click's CliRunner and the console script)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"


def test_eval_tau_bench_example_done_when(tmp_path):
    out = tmp_path / "out.json"
    exe = Path(sys.executable).parent / "trajcheck"
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), "eval", str(EXAMPLE), "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 10.0
    assert "trajcheck scorecard" in proc.stdout
    assert "agreement with the recorded reward" in proc.stdout
    d = json.loads(out.read_text())
    rr = d["recorded_reward"]
    assert rr["pass_hat_k"] == {"1": 0.42, "2": 0.2733, "3": 0.22, "4": 0.2}
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
    assert [eff["steps"][q] for q in ("p50", "p95", "p99")] == [round(cuts[i], 4) for i in (49, 94, 98)]
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
    assert r.exit_code == 2 and "k=5" in r.output
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
