"""CI summaries (issue 30, item 2): the Markdown scorecard appended to $GITHUB_STEP_SUMMARY,
GitHub workflow-command annotations for failing cases and GitLab's code-quality JSON, on the
real tau-bench airline runs; reasons cut and escaped so a trace cannot inject a command."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli import main
from trajcheck.report.ci import (
    ANNOTATION_CHARS,
    SUMMARY_CHARS,
    gh_message,
    github_annotations,
    gitlab_codequality,
    step_summary,
)
from trajcheck.report.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]
AIRLINE = ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"

# GitHub's runner: a line is a command when it starts with "::"; "::name k=v,k=v::data";
# data is unescaped %0D -> \r, %0A -> \n, %25 -> %; properties also %3A -> :, %2C -> ,
_COMMAND = re.compile(r"^::([A-Za-z-]+)(?: ([^:]*))?::(.*)$")


def _gh_unescape(s: str, prop: bool = False) -> str:
    s = s.replace("%0D", "\r").replace("%0A", "\n")
    if prop:
        s = s.replace("%3A", ":").replace("%2C", ",")
    return s.replace("%25", "%")


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    m = _COMMAND.match(line)
    assert m, line
    props = {}
    for kv in (m.group(2) or "").split(","):
        if kv:
            k, _, v = kv.partition("=")
            props[k] = _gh_unescape(v, prop=True)
    return m.group(1), props, _gh_unescape(m.group(3))


@pytest.fixture(scope="module")
def airline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Scorecard, str, str]:
    """`eval --annotations github --gitlab-codequality` of the airline runs with
    GITHUB_STEP_SUMMARY set to a file that already holds a line."""
    tmp = tmp_path_factory.mktemp("ci")
    summary = tmp / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    r = CliRunner(env={"GITHUB_STEP_SUMMARY": str(summary)}).invoke(
        main, ["eval", str(AIRLINE), "-q", "--json", str(tmp / "sc.json"), "--annotations",
               "github", "--gitlab-codequality", str(tmp / "cq.json")])
    assert r.exit_code == 0, r.output
    return tmp, Scorecard.load(tmp / "sc.json"), r.stdout, summary.read_text(encoding="utf-8")


def test_step_summary_holds_the_scorecard(airline):
    tmp, sc, _, summary = airline
    assert summary.startswith("earlier step\n## trajcheck scorecard\n")  # appended
    assert "| task success rate | 0.42 [0.3537, 0.4893] (84/200), Wilson |" in summary
    assert "| 4 | 0.2 [0.1, 0.3] |" in summary
    assert summary.endswith(step_summary(sc))


def test_no_summary_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    r = CliRunner().invoke(main, ["eval", str(AIRLINE), "-q"])
    assert r.exit_code == 0 and "job summary" not in r.output


def test_annotations_one_per_failing_case(airline):
    _, sc, out, _ = airline
    lines = [x for x in out.splitlines() if x.startswith("::")]
    failing = [c for c in sc.cases if c.successes < c.trials]
    assert len(failing) == 40  # 10 of 50 cases pass all 4 trials (pass^4 = 0.2)
    assert len(lines) == 40
    kinds = {_parse(x)[0] for x in lines}
    assert kinds == {"error"}
    name, props, msg = _parse(lines[0])
    assert props["title"] == "trajcheck: case 0 failed 4 of 4 trials"
    assert props["file"] == str(AIRLINE)
    assert msg.startswith("case 0 trial 0: case '0': expected call 0 (book_reservation)")
    # case 1 failed 3 of its 4 trials
    assert _parse(lines[1])[1]["title"] == "trajcheck: case 1 failed 3 of 4 trials"


def test_hostile_reason_cannot_inject_commands(airline):
    _, sc, _, _ = airline
    evil = ("ok\n::add-mask::x\r\n::set-env name=A::b %0A::stop-commands::tok "
            "\x1b[31m card 4111 1111 1111 1111 " + "customer text " * 100)
    runs = tuple(replace(r, failure_reason=evil) if not r.success else r for r in sc.runs)
    bad_id = "c::x,y\n::warning::z"
    runs = (replace(runs[0], case_id=bad_id),) + runs[1:]
    lines = github_annotations(replace(sc, runs=runs), file="a:b,c.json")
    for line in lines:
        assert "\n" not in line and "\r" not in line and "\x1b" not in line
        name, props, msg = _parse(line)
        assert name in ("error", "notice")
        assert "::" not in msg
        assert len(msg) <= ANNOTATION_CHARS + 40  # cut; the case/trial head is inside it
    name, props, msg = _parse(lines[0])
    assert props["file"] == "a:b,c.json"
    assert props["title"].startswith("trajcheck: case c: :x,y\n: :warning: :z failed")
    assert "::add-mask::" not in msg and ": :add-mask: :x" in msg
    assert "%0A: :stop" in msg  # the literal %0A stays text (sent as %250A)
    assert "\\x1b[31m" in msg and msg.endswith("...")
    assert "customer text " * 30 not in msg


def test_gh_message_encoding_round_trips():
    # (text, what GitHub shows): \r is a control character, shown as \x0d; \n is kept
    for text, shown in [("50% off\r\nnext", "50% off\\x0d\nnext"), ("a::b:::c", "a: :b: : :c"),
                        ("%25 literal", "%25 literal"), ("tab\there", "tab\there")]:
        enc = gh_message(text)
        assert "\n" not in enc and "\r" not in enc
        assert _gh_unescape(enc) == shown


def test_gitlab_codequality(airline):
    tmp, sc, _, _ = airline
    data = json.loads((tmp / "cq.json").read_text())
    assert data == gitlab_codequality(sc, path=str(AIRLINE))
    assert len(data) == 40
    assert len({d["fingerprint"] for d in data}) == 40
    d0 = data[0]
    assert d0["check_name"] == "trajcheck.task_failed" and d0["severity"] == "major"
    assert d0["location"] == {"path": str(AIRLINE), "lines": {"begin": 1}}
    assert d0["description"].startswith("case 0: failed 4 of 4 trials; trial 0: case '0':")
    assert all(len(d["description"]) <= ANNOTATION_CHARS for d in data)


def test_summary_cuts_reasons(airline):
    _, sc, _, summary = airline
    long = "z" * 5000
    runs = tuple(replace(r, failure_reason=long) if not r.success else r for r in sc.runs)
    text = step_summary(replace(sc, runs=runs))
    assert "z" * (SUMMARY_CHARS - 3) + "..." in text
    assert "z" * SUMMARY_CHARS not in text
