"""Terminal and Markdown renderers show the scorecard's own (rounded) numbers."""

from __future__ import annotations

import io

from rich.console import Console
from test_suite import small_suite

from trajcheck.report import fmt, fmt_est, render_terminal, to_markdown
from trajcheck.suite import Estimate


def test_fmt():
    assert fmt(0.2733) == "0.2733" and fmt(0.2) == "0.2" and fmt(1.0) == "1" and fmt(None) == "n/a"
    assert fmt_est(Estimate(0.75, 0.3006, 0.9544, "wilson", 4)) == "0.75 [0.3006, 0.9544]"
    assert fmt_est(Estimate(None)) == "n/a"


def test_terminal_and_markdown_show_json_numbers():
    sc = small_suite()
    buf = io.StringIO()
    render_terminal(sc, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    tsr = sc.suite.task_success_rate
    assert f"0.75 [{fmt(tsr.lo)}, {fmt(tsr.hi)}] (3/4)" in text
    assert "agreement with the recorded reward: 3/4" in text
    assert "B-1" in text and "failing runs (1 of 4)" in text
    assert "not among the cases" in text
    md = to_markdown(sc)
    assert "| task success rate | 0.75 [" in md
    assert "| 2 | 0.5 [" in md  # pass^2 row
    assert "**Agreement with the recorded reward: 3/4**" in md
    assert "| trajcheck fail | 1 | 0 |" in md
    assert "| B-1 | fail | pass |" in md


def test_reports_show_efficiency_and_routing():
    from test_suite import eff_suite

    sc = eff_suite(route_floors={"it": 0.9})
    md = to_markdown(sc)
    assert "| tokens p50/p95/p99 (successes) | 2000 / 2900 / 2980 (mean 2000, n=2) |" in md
    assert "| latency (ms) p50/p95/p99 (successes) | 3000 / 4350 / 4470 (mean 3000, n=2) |" in md
    assert "| cost (USD) p50/p95/p99 (successes) | 0.035 / 0.0485 / 0.0497 (mean 0.035, n=2) |" in md
    assert "| cost per successful task (USD) | 0.04 (all runs 0.08 / 2 successes) |" in md
    assert "| routing accuracy | 0.6667 over 3 runs, macro-F1 0.5556 |" in md
    assert "| routing recall floors | FAIL: recall below floor: 'it' 0.5000 < 0.9 |" in md
    buf = io.StringIO()
    render_terminal(sc, Console(file=buf, width=240, color_system=None))
    text = buf.getvalue()
    assert "2000 / 2900 / 2980 (mean 2000, n=2)" in text and "0.04 (all runs 0.08 / 2 successes)" in text
    assert "0.6667 over 3 runs" in text
