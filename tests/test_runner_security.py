"""The grader out of the agent's reach, and run files that stay whole (README "Security model").

The agents are in tests/data/hostile/agents.py; each does what the hostile-input audit tried.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import AgentError
from trajcheck.read.dataset import load_cases
from trajcheck.read.traces import load
from trajcheck.run.runner import _Writer, load_agent, read_runs, run_suite
from trajcheck.score.suite import score_runs

HERE = Path(__file__).parent / "data" / "hostile"
AGENTS = HERE / "agents.py"
CASES = HERE / "cases.jsonl"


def _agent(name: str):
    return load_agent(f"{AGENTS}:{name}")


def _strict(line: str) -> dict:
    def refuse(c: str) -> None:
        raise ValueError(f"non-standard JSON {c}")
    return json.loads(line, parse_constant=refuse)


def test_cheating_agent_scores_what_it_did(tmp_path: Path) -> None:
    cases = load_cases(CASES)
    out = tmp_path / "runs.jsonl"
    res = run_suite(_agent("cheater"), cases, trials=2, out=out, base_dir=HERE, progress=False)
    assert [c.expected_calls[0].args for c in cases] == [{"text": "note 0"}, {"text": "note 1"}]
    assert res.scorecard.suite.n_successes == 0
    # the record holds what the agent did, not what it rewrote afterwards
    recs = [_strict(x) for x in out.read_text().splitlines()]
    calls = [c for r in recs for s in r["steps"] for c in s.get("tool_calls", ())]
    assert [c["args"] for c in calls] == [{"text": "wrong note"}] * 4
    outs = [s["tool_result"]["output"] for r in recs for s in r["steps"] if s.get("tool_result")]
    assert outs == [{"saved": ["wrong note"]}] * 4
    # re-scoring the file in this process gives the same verdicts as run time
    again = score_runs([(t, {c.id: c for c in load_cases(CASES)}[t.metadata["case_id"]]) for t in load(out)])
    assert again.suite.n_successes == 0
    assert sorted(r.f1 for r in again.runs) == sorted(r.f1 for r in res.scorecard.runs) == [0.0] * 4


def test_agent_that_exits_fails_its_run_and_the_gate(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:exits", "--cases", str(CASES), "--out", str(out),
                                  "--no-progress", "--fail-under", "1.0"])
    assert r.exit_code == 1, r.output
    recs = [_strict(x) for x in out.read_text().splitlines()]
    assert len(recs) == 2
    assert {m["metadata"]["error"] for m in recs} == {"agent tried to exit the process (SystemExit: 0)"}


def test_values_json_cannot_hold_are_normalised_with_a_problem(tmp_path: Path) -> None:
    cases = load_cases(CASES)
    out = tmp_path / "runs.jsonl"
    res = run_suite(_agent("odd_values"), cases[:1], out=out, base_dir=HERE, progress=False)
    (line,) = out.read_text(encoding="utf-8").splitlines()
    rec = _strict(line)
    assert rec["final_response"] == "saved \ufffd it"
    assert rec["metadata"]["agent_metadata"] == {"n": None, "self": {"n": None, "self": "<cycle>"}}
    assert "total_cost_usd" not in rec
    assert res.problems == ("run c0-0: total_cost_usd: a str is not a finite non-negative number; "
                            "read as unknown",)
    # and the file is read again, resumed and re-scored without trouble
    again = run_suite(_agent("odd_values"), cases[:1], out=out, base_dir=HERE, progress=False)
    assert (again.n_new, again.n_resumed) == (0, 1)
    out2 = tmp_path / "nan.jsonl"
    res = run_suite(_agent("nan_cost"), cases[:1], out=out2, base_dir=HERE, progress=False)
    assert "total_cost_usd" not in _strict(out2.read_text())
    assert res.problems == ("run c0-0: total_cost_usd: nan is not a finite non-negative number; "
                            "read as unknown",)


def test_old_file_with_text_cost_is_read_with_a_problem(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    rec = {"steps": [{"index": 0, "kind": "user", "content": "x"}], "total_cost_usd": "free",
           "metadata": {"case_id": "c0", "trial": 0, "agent": "a"}}
    out.write_text(json.dumps(rec) + "\n")
    got = read_runs(out)
    assert got.runs[("c0", 0)].total_cost_usd is None
    assert got.problems == (f"{out}: line 1: total_cost_usd: a str is not a finite non-negative number; "
                            "read as unknown",)


def test_second_writer_on_one_out_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    holder = _Writer(out)
    try:
        with pytest.raises(AgentError, match="another trajcheck run is writing this file; refused"):
            run_suite(_agent("slow"), load_cases(CASES), out=out, base_dir=HERE, progress=False)
    finally:
        holder.close()
    run_suite(_agent("slow"), load_cases(CASES)[:1], out=out, base_dir=HERE, progress=False)
    assert len(out.read_text().splitlines()) == 1


def test_two_concurrent_cli_runs_keep_every_line_whole(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    cmd = [str(Path(sys.executable).parent / "trajcheck"), "run", "--agent", f"{AGENTS}:slow", "--cases", str(CASES),
           "--trials", "3", "--out", str(out), "--no-progress"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    refused = [r for r in results if "another trajcheck run is writing this file" in r[1]]
    lines = out.read_text().splitlines()
    recs = [_strict(x) for x in lines]
    keys = sorted((r["metadata"]["case_id"], r["metadata"]["trial"]) for r in recs)
    if refused:  # the usual outcome: the second one found the lock
        assert len(refused) == 1 and refused[0][2] != 0
    assert keys == [(c, t) for c in ("c0", "c1") for t in range(3)]
