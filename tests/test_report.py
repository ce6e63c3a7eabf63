"""Terminal and Markdown renderers show the scorecard's own (rounded) numbers."""

from __future__ import annotations

import io

from rich.console import Console
from test_suite import small_suite

from trajcheck.report import fmt, fmt_est, render_terminal, to_markdown
from trajcheck.report.scorecard import Estimate


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


def test_nothing_nonzero_prints_as_zero():
    from trajcheck.report import fmt_p

    assert fmt(2e-9) == "<0.0001" and fmt(-3e-7) == ">-0.0001" and fmt(0.0) == "0"
    assert fmt(3e-10, 8) == "<0.00000001" and fmt(0.00012) == "0.0001"
    assert fmt_p(1.862645149230957e-09) == "<0.0001" and fmt_p(0.0001) == "0.0001"
    assert fmt_p(0.04321) == "0.0432" and fmt_p(None) == ""


def test_plural_and_cut():
    from trajcheck.report import cut, plural

    assert plural(1, "call") == "1 call" and plural(2, "call") == "2 calls" and plural(0, "row") == "0 rows"
    assert cut("abc", 10) == "abc"
    assert cut("x" * 50 + " (and 2 more)", 30) == "x" * 14 + "... (and 2 more)"
    assert len(cut("y" * 500)) == 180


def _many_failures(n_fail: int, *, long_reason: bool = False):
    from test_suite import traj

    from trajcheck.model import Case, ExpectedCall
    from trajcheck.score.suite import evaluate

    # K0 succeeds; K1.. book the right flight but never say the (long) required text
    cases = [Case(id=f"K{i}", input="book", expected_calls=(ExpectedCall("book", {"flight": 1}),),
                  response_must_include=(("z" * 400 if long_reason else "booked"),) if i else ())
             for i in range(n_fail + 1)]
    trajs = [traj(c.id, 0, [("book", {"flight": 1}, False)]) for c in cases]
    return evaluate(trajs, cases, n_boot=50)


def test_terminal_caps_failing_runs_and_hints_where_the_rest_is():
    sc = _many_failures(14, long_reason=True)
    buf = io.StringIO()
    render_terminal(sc, Console(file=buf, width=300, color_system=None))
    text = buf.getvalue()
    assert "failing runs (14 of 15)" in text
    assert "K10-0" in text and "K11-0" not in text  # the first 10 failing runs (K1..K10)
    assert "... and 4 more failing runs; use --json or --html to see all" in text
    assert "z" * 300 not in text and "..." in text  # long reasons cut in the terminal
    buf = io.StringIO()
    render_terminal(sc, Console(file=buf, width=300, color_system=None), full_reports=["out.json"])
    assert "... and 4 more failing runs; see out.json" in buf.getvalue()
    # Markdown: the same cap, full reasons
    md = to_markdown(sc)
    assert "| K10-0 | task failed |" in md and "K11-0" not in md
    assert "| ... | | | 4 more; the JSON and HTML reports list all |" in md
    assert "z" * 400 in md


def test_composite_gate_runs_are_listed_and_marked():
    from test_suite import traj

    from trajcheck.model import Case, ExpectedCall
    from trajcheck.score.suite import score_runs

    case = Case(id="G", input="book flight 1", expected_calls=(ExpectedCall("book", {"flight": 1}),),
                optional_calls=("lookup",),
                forbidden_sequences=({"tool": "book", "requires_prior": "lookup", "severity": "critical"},))
    sc = score_runs([(traj("G", 0, [("book", {"flight": 1}, False)]), case),
                     (traj("G", 1, [("book", {"flight": 2}, False)]), case)], n_boot=50)
    buf = io.StringIO()
    render_terminal(sc, Console(file=buf, width=300, color_system=None))
    text = buf.getvalue()
    assert "failing runs (2 of 2): 1 task failed, 1 composite gate only" in text
    assert "composite gate" in text and "composite 0 (fail): critical violation" in text
    assert "composite pass rate" in text and "0 [0, 1] (0/2)" in text  # rule of three: 3/2 -> 1
    md = to_markdown(sc)
    assert "| G-0 | composite gate | 1 | composite 0 (fail): critical violation" in md
    assert "| G-1 | task failed | 0 |" in md


def test_problems_are_a_capped_list():
    from trajcheck.report import render_problems

    buf = io.StringIO()
    render_problems([f"p{i}" for i in range(12)], Console(file=buf, width=200, color_system=None))
    lines = buf.getvalue().splitlines()
    assert lines[0] == "12 problems:" and lines[1] == "  - p0" and lines[10] == "  - p9"
    assert lines[11] == "  ... and 2 more problems; use --json or --html to see all"


def test_forbidden_row_is_na_without_forbidden_definitions():
    md = to_markdown(small_suite())
    assert "| runs with a forbidden call | n/a (no case defines forbidden calls) |" in md
