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
