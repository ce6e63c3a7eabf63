"""The GitHub Actions job of docs/ci.md and README's short one, run step by step: each step's
`run:` command is executed with bash in a temporary checkout holding the refund-desk example's
cases and runs and a baseline scorecard (issue 30, item 3). `uses:` steps (checkout, Python,
artifact upload) are the runner's own and are not run; `pip install trajcheck` runs against a
`pip` stand-in that only checks its arguments (tests make no network calls), so `trajcheck` is
this checkout's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RD = ROOT / "examples" / "refund_desk"


def _yaml_blocks(path: Path) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _job_steps() -> list[dict]:
    (doc,) = [b for b in _yaml_blocks(ROOT / "docs" / "ci.md") if "jobs:" in b]
    job = yaml.safe_load(doc)
    assert job[True] == ["pull_request"]  # YAML 1.1 (PyYAML) reads the key `on` as true
    (steps,) = [j["steps"] for j in job["jobs"].values()]
    return steps


def _readme_steps() -> list[dict]:
    (block,) = [b for b in _yaml_blocks(ROOT / "README.md") if "--fail-on-regression" in b]
    return yaml.safe_load(block)


def _checkout(tmp: Path, *, break_case: str | None = None) -> dict[str, str]:
    """A checkout: evals/cases.jsonl, evals/runs.jsonl (one case's run cut to its question and
    answer when ``break_case``), evals/baseline.json scored from the unbroken runs on "main";
    returns the environment the steps run in."""
    ev = tmp / "evals"
    ev.mkdir()
    shutil.copy(RD / "cases.jsonl", ev / "cases.jsonl")
    lines = (RD / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    bin_dir = tmp / "stand-in-bin"
    bin_dir.mkdir()
    pip = bin_dir / "pip"
    pip.write_text('#!/bin/sh\n[ "$*" = "install trajcheck" ] || { echo "pip $*" >&2; exit 3; }\n'
                   'echo "$*" >> "$PWD/pip.log"\n', encoding="utf-8")
    pip.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}"
               f"{os.pathsep}{os.environ.get('PATH', '')}",
               GITHUB_STEP_SUMMARY=str(tmp / "summary.md"))
    (ev / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(["trajcheck", "eval", "evals/runs.jsonl", "--cases", "evals/cases.jsonl", "-q",
                    "--json", "evals/baseline.json"], cwd=tmp, env=dict(env, GITHUB_STEP_SUMMARY=""),
                   check=True, capture_output=True)
    if break_case:
        out = []
        for ln in lines:
            d = json.loads(ln)
            if d["metadata"]["case_id"] == break_case:
                d["steps"] = [s for s in d["steps"] if s["kind"] in ("user", "final_response")]
                d["metadata"]["state_after"] = d["metadata"]["state_before"]
            out.append(json.dumps(d))
        (ev / "runs.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    return env


def _run_steps(steps: list[dict], tmp: Path, env: dict[str, str]) -> list[tuple[str, int, str]]:
    """Run each step's `run:` command in order, as the runner does (bash -e), stopping at the
    first that fails; (command, exit code, output) per step run."""
    done = []
    for step in steps:
        if "run" not in step:
            assert step["uses"].startswith("actions/"), step
            continue
        p = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp, env=env,
                           capture_output=True, text=True, timeout=300)
        done.append((step["run"], p.returncode, p.stdout + p.stderr))
        if p.returncode:
            break
    return done


@pytest.mark.parametrize("steps", [_job_steps(), _readme_steps()], ids=["docs-ci-md", "readme"])
def test_job_passes_when_nothing_regressed(steps, tmp_path):
    env = _checkout(tmp_path)
    done = _run_steps(steps, tmp_path, env)
    assert [c for _, c, _ in done] == [0, 0, 0], done
    assert (tmp_path / "pip.log").read_text() == "install trajcheck\n"
    assert "regression gate passed" in done[-1][2]
    junit = (tmp_path / "junit.xml").read_text()
    assert junit.count("<testcase ") == 8 and 'failures="0"' in junit
    summary = (tmp_path / "summary.md").read_text()
    assert "## trajcheck scorecard" in summary
    assert "## trajcheck regression gate: passed" in summary


@pytest.mark.parametrize("steps", [_job_steps(), _readme_steps()], ids=["docs-ci-md", "readme"])
def test_job_fails_at_the_gate_when_a_case_broke(steps, tmp_path):
    env = _checkout(tmp_path, break_case="optional")
    done = _run_steps(steps, tmp_path, env)
    assert [c for _, c, _ in done] == [0, 0, 1], done
    score_out, gate_out = done[1][2], done[2][2]
    ann = [x for x in score_out.splitlines() if x.startswith("::error")]
    assert len(ann) == 1 and "title=trajcheck%3A case optional failed 1 of 1 trials" in ann[0]
    assert "case 'optional' passed all 1 trial(s) in the baseline and fails all 1 now" in gate_out
    junit = (tmp_path / "junit.xml").read_text()
    assert 'failures="1"' in junit and 'classname="optional"' in junit
    assert "## trajcheck regression gate: FAILED" in (tmp_path / "summary.md").read_text()
