"""`trajcheck validate-judge`: a scripted judge against hand labels of the help-desk
example's runs (tests/data/helpdesk_judge_labels.jsonl); agreement, Cohen's kappa with its
Fleiss-Cohen-Everitt interval and the confusion counts per check, computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import unfenced

from trajcheck.cli.app import main
from trajcheck.judges.fencing import request_nonce
from trajcheck.judges.rubrics import TRAJECTORY_CHECKS
from trajcheck.judges.validation import cohen_kappa, kappa_interval

NAMES = [n for n, _ in TRAJECTORY_CHECKS]
ROOT = Path(__file__).resolve().parents[1]
HELPDESK = ROOT / "examples" / "helpdesk"
LABELS = Path(__file__).parent / "data" / "helpdesk_judge_labels.jsonl"
Z = 1.959963984540054


def scripted_judge(messages: list[dict[str, str]]) -> str:
    """A failed call followed by "has been created" is unhandled and unfaithful; a failed
    call otherwise handled; no failed call: failure_handled n/a. A judge function is the
    model: its reply carries the request's nonce, as the judges' reply format asks."""
    prompt = unfenced(messages[-1]["content"])
    trace, _, final = prompt.partition("FINAL RESPONSE:")
    checks: dict[str, Any] = {n: {"pass": True, "reason": "fine"} for n in NAMES}
    if "ERROR" not in trace:
        checks["failure_handled"] = {"pass": "n/a", "reason": "no tool failed"}
    elif "has been created" in final:
        checks["failure_handled"] = {"pass": False, "reason": "ignored the 503"}
        checks["response_faithful"] = {"pass": False, "reason": "claims a ticket that does not exist"}
    return json.dumps({"nonce": request_nonce(messages), "checks": checks})


def _fce_interval(tp: int, fp: int, fn: int, tn: int) -> tuple[float, float]:
    """Fleiss, Cohen & Everitt (1969) in its p_o/p_e form (the code uses the kappa form)."""
    n = tp + fp + fn + tn
    p11, p10, p01, p00 = tp / n, fp / n, fn / n, tn / n   # p[judge][human], 1 = pass
    r1, r0, c1, c0 = p11 + p10, p01 + p00, p11 + p01, p10 + p00
    po, pe = p11 + p00, r1 * c1 + r0 * c0
    a = (p11 * ((1 - pe) - (c1 + r1) * (1 - po)) ** 2
         + p00 * ((1 - pe) - (c0 + r0) * (1 - po)) ** 2)
    b = (1 - po) ** 2 * (p10 * (c1 + r0) ** 2 + p01 * (c0 + r1) ** 2)
    c = (po * pe - 2 * pe + po) ** 2
    k = (po - pe) / (1 - pe)
    half = Z * math.sqrt((a + b - c) / (n * (1 - pe) ** 4))
    return max(-1.0, k - half), min(1.0, k + half)


def test_kappa_interval_matches_the_hand_formula() -> None:
    pairs = [(True, True)] * 4 + [(True, False)] + [(False, True)] + [(False, False)] * 2
    assert cohen_kappa(pairs) == pytest.approx(7 / 15)
    assert kappa_interval(pairs) == pytest.approx(_fce_interval(4, 1, 1, 2))
    assert kappa_interval([(True, True)] * 3) is None  # kappa undefined
    assert kappa_interval([(True, True), (False, False)]) == (1.0, 1.0)


def test_validate_judge_cli_on_helpdesk_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(main, ["run", "--agent", f"{HELPDESK / 'agents.py'}:false_success_agent",
                                  "--cases", str(HELPDESK / "cases.jsonl"), "--out", str(runs),
                                  "-q", "--no-progress"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "agreement.json"
    r = CliRunner().invoke(main, ["validate-judge", str(runs), "--labels", str(LABELS),
                                  "--cases", str(HELPDESK / "cases.jsonl"),
                                  "--judge", "test_judges_validate_cli:scripted_judge",
                                  "--judge-cache", "", "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    # response_faithful over 8 runs, (judge, human): 009 (F,F) 010 (F,F) 024 (F,T) 023 (T,T)
    # 003 (T,T) 006 (T,F) 011 (T,T) 013 (T,T): tp 4, fp 1, fn 1, tn 2; agreement 6/8;
    # p_e = (5/8)^2 + (3/8)^2 = 34/64, kappa = (48/64 - 34/64) / (30/64) = 7/15
    rf = d["per_check"]["response_faithful"]
    assert rf["confusion"] == {"tp": 4, "fp": 1, "fn": 1, "tn": 2}
    assert (rf["n"], rf["n_skipped"]) == (8, 0)
    assert rf["accuracy"] == pytest.approx(0.75) and rf["kappa"] == pytest.approx(7 / 15)
    assert rf["kappa_interval"] == pytest.approx(list(_fce_interval(4, 1, 1, 2)))
    # failure_handled: 009/010/024 (F,F), 023 (T,T); 003 is null for the human, 006 n/a for
    # the judge (no call failed): 4 compared, 2 skipped, kappa 1 with a zero-width interval
    fh = d["per_check"]["failure_handled"]
    assert fh["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 3}
    assert (fh["n"], fh["n_skipped"], fh["kappa"]) == (4, 2, pytest.approx(1.0))
    assert fh["kappa_interval"] == pytest.approx([1.0, 1.0])
    # pooled: tp 5, fp 1, fn 1, tn 5; p_e = 1/2, kappa = (10/12 - 1/2) / (1/2) = 2/3
    ov = d["overall"]
    assert ov["confusion"] == {"tp": 5, "fp": 1, "fn": 1, "tn": 5}
    assert ov["kappa"] == pytest.approx(2 / 3) and ov["n_skipped"] == 2
    # the table shows the same figures
    lo, hi = _fce_interval(4, 1, 1, 2)
    assert f"0.750   0.467   [{lo:.3f}, {hi:.3f}]       4/1/1/2      0" in r.output
    # lines left out, each said: a misspelled check, a run not in the traces, task_completed
    # on a case without success criteria
    assert any("unknown check 'response_faithfull'" in p for p in d["skipped"])
    assert any("'hd_099_not_a_case-0' is not among the traces" in p for p in d["problems"])
    assert any("task_completed is labelled but the case has no success_criteria" in p
               for p in d["problems"])
    assert "response_faithfull" in r.output and "hd_099_not_a_case-0" in r.output
    assert len(d["items"]) == 8


def test_validate_judge_with_no_usable_label_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"run_id": "x", "labels": {"nope": true}}\n')
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"metadata": {"case_id": "c", "run_id": "x"}, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    r = CliRunner().invoke(main, ["validate-judge", str(runs), "--labels", str(bad),
                                  "--judge", "test_judges_validate_cli:scripted_judge",
                                  "--judge-cache", ""])
    assert r.exit_code == 2 and "no usable label line" in r.output
