"""The HTML report and the compare report in headless Chromium, driven through the DOM
(Chrome DevTools Protocol, tests/cdp.py): sorting, filtering, the case x trial grid, the
drill-down, the page without JavaScript, and no table wider than a 1400 px window.

The report is of the 200 real GPT-4o airline runs of tau-bench (tests/data/tau_bench); the
expected figures are computed here from the scorecard the page was rendered from.
Screenshots are kept in the test's temporary folder (``REPORT_SHOTS`` names a folder to
copy them to, for looking at them)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cdp import CHROMIUM, Browser

from trajcheck.report.html import to_html
from trajcheck.report.runs import reason_kind, verdict

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (Debian: apt-get install -y chromium)")
DATA = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"
OVERFLOW = ("Array.from(document.querySelectorAll('table')).filter(t => t.offsetParent !== null && "
            "t.getBoundingClientRect().right > window.innerWidth + 0.5).map(t => t.id || t.className)")


@pytest.fixture(scope="module")
def tau(tmp_path_factory: pytest.TempPathFactory):
    from trajcheck.read.traces import load
    from trajcheck.score.suite import evaluate

    d = tmp_path_factory.mktemp("report")
    sc = evaluate(load(DATA), n_boot=200, source="gpt-4o-airline.json")
    f = d / "report.html"
    f.write_text(to_html(sc), encoding="utf-8")
    b = Browser(d)
    try:
        yield sc, f, b, d
    finally:
        b.close()


def _shot(b: Browser, d: Path, name: str) -> Path:
    p = d / name
    b.screenshot(p, max_height=3000)
    if os.environ.get("REPORT_SHOTS"):
        shutil.copy(p, Path(os.environ["REPORT_SHOTS"]) / name)
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return p


def _visible(b: Browser) -> list[str]:
    return b.js("Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => !r.hidden)"
                ".map(r => r.dataset.run)")


def _set(b: Browser, **values: str) -> None:
    """Set filter controls by id suffix (case, verdict, kind, tool, metric, op, value,
    search) and fire the events a user's input would."""
    for k, v in values.items():
        b.js(f"(() => {{const e = document.getElementById('f-{k}'); e.value = {v!r}; "
             "e.dispatchEvent(new Event('input')); e.dispatchEvent(new Event('change'));})()")


def test_every_run_is_listed_and_sorts_by_a_clicked_header(tau) -> None:
    sc, f, b, _ = tau
    b.open(f.as_uri())
    assert b.js("document.querySelectorAll('#runs tbody tr').length") == len(sc.runs) == 200
    assert b.js("document.getElementById('run-filters').hidden") is False
    f1 = {r.run_id: r.f1 for r in sc.runs}
    b.js("document.querySelector('#runs th[data-col=\"6\"]').click()")  # F1, ascending
    order = b.js("Array.from(document.querySelectorAll('#runs tbody tr')).map(r => r.dataset.run)")
    assert [f1[x] for x in order] == sorted(f1.values())
    assert b.js("document.querySelector('#runs th[data-col=\"6\"]').getAttribute('aria-sort')") == "ascending"
    b.js("document.querySelector('#runs th[data-col=\"6\"]').click()")  # again: descending
    order = b.js("Array.from(document.querySelectorAll('#runs tbody tr')).map(r => r.dataset.run)")
    assert [f1[x] for x in order] == sorted(f1.values(), reverse=True)
    b.js("document.querySelector('#runs th[data-col=\"8\"]').click()")  # steps
    order = b.js("Array.from(document.querySelectorAll('#runs tbody tr')).map(r => r.dataset.run)")
    steps = {r.run_id: r.steps for r in sc.runs}
    assert [steps[x] for x in order] == sorted(steps.values())


def test_filters_by_verdict_failure_tool_case_metric_and_search(tau) -> None:
    sc, f, b, _ = tau
    b.open(f.as_uri())
    runs = {r.run_id: r for r in sc.runs}
    _set(b, verdict="fail")
    assert len(_visible(b)) == sum(not r.success for r in sc.runs) == 116
    assert b.js("document.getElementById('f-count').textContent") == "116 of 200 runs"
    _set(b, verdict="gate")
    assert sorted(_visible(b)) == sorted(r.run_id for r in sc.runs if r.gate_failed) and len(_visible(b)) == 9
    _set(b, verdict="", kind="wrong arguments")
    want = {r.run_id for r in sc.runs if reason_kind(r) == "wrong arguments"}
    assert set(_visible(b)) == want and len(want) > 10
    _set(b, kind="", tool="cancel_reservation")
    assert set(_visible(b)) == {r.run_id for r in sc.runs
                                if "cancel_reservation" in r.called_tools + r.expected_tools}
    _set(b, tool="", metric="f1", op="lt", value="0.5")
    assert set(_visible(b)) == {r.run_id for r in sc.runs if r.f1 is not None and r.f1 < 0.5}
    _set(b, op="ge")
    assert set(_visible(b)) == {r.run_id for r in sc.runs if r.f1 is not None and r.f1 >= 0.5}
    _set(b, metric="", value="", case="5", verdict="fail")
    assert set(_visible(b)) == {k for k, r in runs.items() if r.case_id == "5" and not r.success}
    b.js("document.getElementById('f-reset').click()")
    assert len(_visible(b)) == 200
    _set(b, search="payment_methods[1].amount: expected 5, got 55")
    assert _visible(b) == [r.run_id for r in sc.runs
                           if "payment_methods[1].amount: expected 5, got 55" in (r.failure_reason or "")]
    assert _visible(b) == ["0-0", "0-2"]
    _set(b, search="")


def test_case_by_trial_grid_and_drill_down(tau) -> None:
    sc, f, b, _ = tau
    b.open(f.as_uri())
    cells = b.js("Array.from(document.querySelectorAll('#case-grid td.cell[data-run]'))"
                 ".map(c => [c.dataset.run, c.dataset.verdict])")
    assert sorted(cells) == sorted([r.run_id, verdict(r)] for r in sc.runs)
    flaky = sum(0 < c.successes < c.trials for c in sc.cases)
    # tau-bench's published histogram for these runs has 12 + 10 + 4 tasks with 1-3 of 4
    # successes (readme_passk.json), and trajcheck's outcome agrees with every recorded reward
    assert b.js("document.querySelectorAll('#case-grid tr.flaky').length") == flaky == 26
    # case 12 passes all 4 trials: pass^4 = 1; case 13 passes 2 of 4: pass^2 = C(2,2)/C(4,2)
    row = b.js("Array.from(document.querySelector('#case-grid tr[data-case=\"13\"]').cells).map(c => c.textContent)")
    assert row[-5:] == ["2/4", "0.5", "0.1667", "0", "0"]
    assert b.js("document.getElementById('run-0-0').open") is False
    b.js("document.querySelector('#case-grid td[data-run=\"0-0\"] a').click()")
    assert b.js("location.hash") == "#run-0-0"
    assert b.js("document.getElementById('run-0-0').open") is True
    detail = "document.getElementById('run-0-0')"
    # expected call beside the call made, the deciding argument marked on both sides
    assert b.js(f"{detail}.querySelector('tr.pair .st').textContent") == "wrong arguments"
    assert b.js(f"{detail}.querySelector('tr.pair .decide').textContent") == \
        "payment_methods[1].amount: expected 5, got 55"
    marks = b.js(f"Array.from({detail}.querySelectorAll('tr.pair mark.diff b')).map(m => m.textContent)")
    assert marks == ["payment_methods", "payment_methods"]
    # the full reason list (no "(and 1 more)"), the false claim, and the call's step
    reasons = b.js(f"Array.from({detail}.querySelectorAll('ol.reasons li')).map(li => li.textContent)")
    assert len(reasons) == 2 and "unexpected state-changing call 7" in reasons[1]
    assert b.js("document.body.innerText.search(/\\(and \\d+ more/)") == -1
    # the final response says "successfully booked" and book_reservation did run (with a
    # wrong amount): a failed run, but not a false success claim, so the page shows none;
    # it flags exactly the runs whose JSON says false_success true
    assert sc.run("0-0").false_success is False
    assert b.js(f"{detail}.querySelector('.false-claim')") is None
    assert b.js("document.querySelectorAll('details.run-detail .false-claim').length") == \
        sum(r.false_success is True for r in sc.runs) == 1
    assert b.js("document.getElementById('run-15-0').querySelector('.false-claim')") is not None
    b.js(f"{detail}.querySelector('tr.pair a.call').click()")
    assert b.js("location.hash") == "#run-0-0-step-28"
    assert "book_reservation" in b.js("document.getElementById('run-0-0-step-28').textContent")
    # a passing run opens too, from its row in the runs table
    b.js("document.querySelector('#runs tr[data-run=\"12-0\"] td.flags').click()")
    assert b.js("document.getElementById('run-12-0').open") is True
    assert b.js("document.querySelectorAll('#run-12-0 .step').length") == len(sc.run("12-0").transcript)


def test_no_table_overflows_at_1400px_and_screenshots(tau) -> None:
    sc, f, b, d = tau
    b.open(f.as_uri(), width=1400)
    assert b.js("document.documentElement.scrollWidth") <= 1400
    assert b.js(OVERFLOW) == []
    _shot(b, d, "report-top.png")
    b.open(f.as_uri() + "#run-0-0", width=1400)  # an open drill-down with long arguments
    assert b.js(OVERFLOW) == [] and b.js("document.documentElement.scrollWidth") <= 1400


def test_the_page_is_complete_without_javascript(tau) -> None:
    sc, f, b, _ = tau
    b.open(f.as_uri(), scripts=False)
    assert b.js("document.getElementById('run-filters').hidden") is True
    assert b.js("Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => !r.hidden).length") == 200
    assert b.js("document.querySelectorAll('details.run-detail').length") == 200
    assert b.js("document.querySelectorAll('#case-grid td.cell[data-run]').length") == 200
    b.open(f.as_uri())  # scripts back on for the other tests


@pytest.fixture(scope="module")
def helpdesk_compare(tmp_path_factory: pytest.TempPathFactory):
    from click.testing import CliRunner

    from trajcheck.cli.app import main

    root = Path(__file__).resolve().parents[1] / "examples" / "helpdesk"
    d = tmp_path_factory.mktemp("compare")
    for name, agent in (("a", "good_agent"), ("b", "false_success_agent")):
        r = CliRunner().invoke(main, ["run", "--agent", f"{root / 'agents.py'}:{agent}", "--cases",
                                      str(root / "cases.jsonl"), "--trials", "2", "--json",
                                      str(d / f"{name}.json"), "-q", "--no-progress"])
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["compare", str(d / "a.json"), str(d / "b.json"), "--html",
                                  str(d / "compare.html"), "--json", str(d / "c.json")])
    assert r.exit_code == 0, r.output
    b = Browser(d)
    try:
        yield d, b
    finally:
        b.close()


def test_compare_report_in_chromium(helpdesk_compare) -> None:
    import json

    d, b = helpdesk_compare
    c = json.loads((d / "c.json").read_text())
    b.open((d / "compare.html").as_uri(), width=1400)
    ts = c["deltas"][0]
    assert b.js("document.getElementById('delta-task_success_rate').textContent") == "-0.12"
    assert ts["delta"] == -0.12
    assert b.js("document.getElementById('delta-task_success_rate-p').textContent") == "0.0312"  # 2 * 0.5**6
    assert (ts["lo"], ts["hi"]) == (-0.28, 0)
    assert b.js("document.getElementById('delta-task_success_rate-ci').textContent") == "[-0.28, 0]"
    rows = b.js("Array.from(document.querySelectorAll('tr.shift.regressed')).map(r => r.dataset.case)")
    assert sorted(rows) == ["hd_009_monitor_503", "hd_010_shared_drive_503", "hd_024_excel_503"]
    # each regressed case: A's runs (passed) beside B's (failed), with their reasons
    sides = b.js("Array.from(document.querySelectorAll('tr.shift.regressed')[0].querySelectorAll('td.side'))"
                 ".map(td => Array.from(td.querySelectorAll('ul.runs > li')).map(li => li.className))")
    assert sides == [["run-pass", "run-pass"], ["run-fail", "run-fail"]]
    assert "final state" in b.js("document.querySelector('tr.shift.regressed li.run-fail').textContent")
    assert b.js("document.getElementById('n-improved').textContent") == "0"
    assert b.js("document.querySelectorAll('svg').length") >= 2
    assert b.js("document.querySelector('tr.shift.regressed li.run-fail').textContent").count("final state") == 1
    assert b.js("document.getElementById('override-warning')") is None
    assert b.js(OVERFLOW) == [] and b.js("document.documentElement.scrollWidth") <= 1400
    _shot(b, d, "compare.png")
