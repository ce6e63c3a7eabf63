"""`compare BASE NEW --fail-on-regression` (issue 30, item 3) on scorecards built from the real
tau-bench airline runs and degraded copies of them (successful runs cut to their first two
messages, so the agent makes no call and the case's writes are missing)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.aggregate.paired import compare_scorecards
from trajcheck.aggregate.paired_cases import case_shifts
from trajcheck.aggregate.regression import regression_gate
from trajcheck.cli import main
from trajcheck.errors import TrajcheckError
from trajcheck.report.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]
AIRLINE = ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"


def _eval(traces: Path, out: Path) -> Path:
    r = CliRunner().invoke(main, ["eval", str(traces), "-q", "--json", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _degraded(tmp: Path, name: str, pick) -> Path:
    """A copy of the airline runs in which every run ``pick(record)`` holds is cut to its
    first two messages (system prompt and the user's first turn: no call made)."""
    recs = json.loads(AIRLINE.read_text())
    out = copy.deepcopy(recs)
    for r in out:
        if pick(r):
            r["traj"] = r["traj"][:2]
    p = tmp / f"{name}.json"
    p.write_text(json.dumps(out))
    return p


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Scorecard]:
    tmp = tmp_path_factory.mktemp("gate")
    p = _eval(AIRLINE, tmp / "base.json")
    return tmp, Scorecard.load(p)


def _all_pass(sc: Scorecard) -> list[str]:
    return [c.case_id for c in sc.cases if c.successes == c.trials]


def _gate(a: Path, b: Path, *extra: str) -> tuple[int, dict, str]:
    js = a.parent / f"cmp-{a.stem}-{b.stem}.json"
    r = CliRunner().invoke(main, ["compare", str(a), str(b), "--fail-on-regression",
                                  "--json", str(js), *extra])
    data = json.loads(js.read_text()) if js.exists() and r.exit_code in (0, 1) else {}
    return r.exit_code, data, r.output


def test_itself_passes(base):
    tmp, sc = base
    code, data, out = _gate(tmp / "base.json", tmp / "base.json")
    assert code == 0, out
    assert data["gate"] == {"figure": "task_success_rate", "level": 0.05,
                            "delta": data["gate"]["delta"], "significant": False,
                            "broken_cases": [], "failed": False, "reasons": []}
    assert data["gate"]["delta"]["delta"] == 0.0 and data["gate"]["delta"]["p_value"] == 1.0
    assert "regression gate passed" in out


def test_significantly_worse_fails(base):
    tmp, sc = base
    # every successful run of the first 30 tasks loses its calls: 55 of the 84 successes
    new = _eval(_degraded(tmp, "worse", lambda r: int(r["task_id"]) < 30 and r["reward"] == 1),
                tmp / "worse_sc.json")
    worse = Scorecard.load(new)
    lost = sum(r.success for r in sc.runs if int(r.case_id) < 30)
    assert worse.suite.n_successes == 84 - lost and lost > 20
    code, data, out = _gate(tmp / "base.json", new)
    assert code == 1, out
    g = data["gate"]
    assert g["significant"] is True and g["failed"] is True
    # every discordant run pair is a baseline-only success: McNemar p = 2 * 0.5^lost
    assert g["delta"]["p_value"] == pytest.approx(2 * 0.5 ** lost, rel=1e-12)
    assert g["delta"]["delta"] == pytest.approx(-lost / 200)
    assert sorted(g["broken_cases"], key=int) == [c for c in _all_pass(sc) if int(c) < 30]
    assert "regression gate FAILED" in out
    # the other figures: bootstrap interval at 95% wholly below 0
    for fig in ("pass^1", "mean_f1"):
        code, data, _ = _gate(tmp / "base.json", new, "--figure", fig)
        assert code == 1 and data["gate"]["significant"] is True, fig
    # the other way round it is an improvement: the gate passes
    code, data, _ = _gate(new, tmp / "base.json")
    assert code == 0 and data["gate"]["significant"] is False


def test_one_broken_case_fails_without_significance(base):
    tmp, sc = base
    case = _all_pass(sc)[0]
    new = _eval(_degraded(tmp, "one", lambda r: str(r["task_id"]) == case), tmp / "one_sc.json")
    code, data, out = _gate(tmp / "base.json", new)
    assert code == 1, out
    g = data["gate"]
    # 4 discordant runs, all for the baseline: p = 2 * (1/2)^4 = 0.125, not significant
    assert g["delta"]["p_value"] == 0.125 and g["significant"] is False
    assert g["broken_cases"] == [case]
    assert g["reasons"] == [f"case {case!r} passed all 4 trial(s) in the baseline and fails all 4 now"]


def test_small_dip_passes(base):
    tmp, sc = base
    cases = set(_all_pass(sc)[:3])
    new = _eval(_degraded(tmp, "dip", lambda r: str(r["task_id"]) in cases and r["trial"] == 0),
                tmp / "dip_sc.json")
    code, data, out = _gate(tmp / "base.json", new)
    assert code == 0, out
    assert data["gate"]["delta"]["p_value"] == 0.25  # 3 discordant: 2 * (1/2)^3
    assert data["gate"]["broken_cases"] == []
    # at level 0.3 the same dip is significant
    code, data, _ = _gate(tmp / "base.json", new, "--level", "0.3")
    assert code == 1 and data["gate"]["significant"] is True


def test_refuses_unlike_scorecards(base, tmp_path):
    tmp, sc = base
    recs = json.loads(AIRLINE.read_text())
    for r in recs:
        if r["task_id"] == 5:
            r["info"]["task"]["actions"] = []  # another definition of case 5
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(recs))
    new = _eval(p, tmp_path / "edited_sc.json")
    code, _, out = _gate(tmp / "base.json", new)
    assert code == 2 and "not comparable" in out and "case '5'" in out


def test_unknown_figure_says_did_you_mean(base):
    tmp, _ = base
    code, _, out = _gate(tmp / "base.json", tmp / "base.json", "--figure", "task_sucess")
    assert code == 2 and "did you mean 'task_success'" in out


def test_gate_reads_the_comparison_confidence(base):
    tmp, sc = base
    cmp = compare_scorecards(sc, sc, confidence=0.95)
    with pytest.raises(TrajcheckError, match="confidence 0.95.*needs 0.9"):
        regression_gate(cmp, case_shifts(sc, sc), figure="mean_f1", level=0.1)
    with pytest.raises(TrajcheckError, match="--level"):
        regression_gate(cmp, case_shifts(sc, sc), level=1.5)


def test_gate_verdict_in_the_job_summary(base, tmp_path):
    tmp, _ = base
    summary = tmp_path / "s.md"
    r = CliRunner(env={"GITHUB_STEP_SUMMARY": str(summary)}).invoke(
        main, ["compare", str(tmp / "base.json"), str(tmp / "base.json"), "--fail-on-regression"])
    assert r.exit_code == 0
    text = summary.read_text()
    assert text.startswith("## trajcheck regression gate: passed\n")
    assert "task\\_success\\_rate" in text or "task_success_rate" in text
