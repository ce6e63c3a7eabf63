"""Interval-method labels, ordering (precedence) violations in every report, forbidden calls
and false success claims in the HTML report, and every run kept for it."""

from __future__ import annotations

from rich.console import Console

from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory
from trajcheck.report import flagged_runs, headline_rows, render_terminal, to_markdown
from trajcheck.report.html import to_html
from trajcheck.score.suite import evaluate


def _run(cid: str, trial: int, names: list[str]) -> Trajectory:
    steps: list[Step] = [Step(0, "user", content="go")]
    for n in names:
        i = len(steps)
        steps.append(Step(i, "tool_call", tool_calls=(ToolCall(n, {}, call_id=f"x{i}"),)))
        steps.append(Step(i + 1, "tool_result", tool_result=ToolResult(f"x{i}", n, "ok", is_error=False)))
    steps.append(Step(len(steps), "final_response", content="done"))
    return Trajectory(steps=tuple(steps), final_response="done",
                      metadata={"case_id": cid, "trial": trial, "run_id": f"{cid}-{trial}"})


def test_all_successes_get_the_rule_of_three_and_every_interval_is_labelled() -> None:
    cases = [Case(id=f"k{i}", input="x", expected_calls=(ExpectedCall("f"),)) for i in range(25)]
    runs = [_run(c.id, t, ["f"]) for c in cases for t in range(5)]
    sc = evaluate(runs, cases, n_boot=50)
    s = sc.suite
    # DESIGN.md: zero failures in n -> rule of three, lo = 1 - 3/125 = 0.976 (Wilson gave 0.9702)
    assert (s.task_success_rate.value, s.task_success_rate.lo, s.task_success_rate.method) == (
        1.0, 0.976, "rule_of_three")
    rows = dict(headline_rows(sc))
    assert rows["task success rate"] == "1 [0.976, 1] (125/125), rule of three"
    assert rows["composite pass rate"] == "1 [0.976, 1] (125/125), rule of three"
    assert rows["mean tool-call F1"].endswith("(bootstrap over cases)")
    assert rows["runs with a duplicate call"] == "0 [0, 0.024] (rule of three)"


def test_wilson_rate_is_labelled_wilson() -> None:
    cases = [Case(id="a", input="x", expected_calls=(ExpectedCall("f"),))]
    sc = evaluate([_run("a", 0, ["f"]), _run("a", 1, ["g"]), _run("a", 2, ["f"]), _run("a", 3, ["f"])],
                  cases, n_boot=50)
    # 3/4: Wilson 95% [0.3006, 0.9544]
    assert dict(headline_rows(sc))["task success rate"] == "0.75 [0.3006, 0.9544] (3/4), Wilson"


def _ordering_suite(threshold: float | None = None) -> object:
    cases = [Case(id="o", input="x", expected_calls=(ExpectedCall("get"), ExpectedCall("update")),
                  precedence=(("get", "update"),), threshold=threshold)]
    runs = [_run("o", 0, ["get", "update"]),           # in order
            _run("o", 1, ["update", "get"]),           # both calls made, wrong order
            _run("o", 2, ["update"])]                  # task fails AND update without get
    return evaluate(runs, cases, n_boot=50)


def test_ordering_violation_fails_the_composite_gate() -> None:
    # the composite's rules factor (0 of 1 precedence rule held) puts o-1 at composite 0: its
    # task succeeded but it fails the composite gate, and the row carries the broken rule
    sc = _ordering_suite()
    rows = {r.run_id: (kind, why, viol) for r, kind, why, viol in flagged_runs(sc)}  # type: ignore[arg-type]
    assert rows["o-1"][0] == "composite gate"
    assert "get before update broken" in rows["o-1"][1]
    assert rows["o-1"][2] == "ordering: update without get before it"


def test_ordering_violations_are_shown_in_terminal_markdown_and_html() -> None:
    # threshold 0: the composite gate passes whatever the rules factor, so o-1 passes and is
    # listed for its ordering only
    sc = _ordering_suite(threshold=0.0)
    by_id = {r.run_id: r for r in sc.runs}  # type: ignore[attr-defined]
    assert by_id["o-0"].metrics["ordering"]["score"] == 1.0
    assert by_id["o-1"].metrics["ordering"]["score"] == 0.0
    rows = {r.run_id: (kind, viol) for r, kind, _why, viol in flagged_runs(sc)}  # type: ignore[arg-type]
    assert "o-0" not in rows
    # o-1 passes (task and composite) and is listed for its ordering only; o-2 failed its task
    assert rows["o-1"][0] == "ordering" and rows["o-2"][0] == "task failed"
    assert rows["o-2"][1].startswith("ordering: update")
    assert rows["o-1"][1] == "ordering: update without get before it"
    # mean ordering accuracy over the 3 runs with precedence rules: (1 + 0 + 0) / 3; one case,
    # so the bootstrap over cases has nothing to vary; the figure is stored in the scorecard
    oa = sc.suite.ordering_accuracy  # type: ignore[attr-defined]
    assert (oa.value, oa.lo, oa.hi, oa.method, oa.n) == (1 / 3, 1 / 3, 1 / 3, "bootstrap", 1)
    assert sc.to_dict()["suite"]["ordering_accuracy"]["value"] == 0.3333333333333333  # type: ignore[attr-defined]
    head = dict(headline_rows(sc))  # type: ignore[arg-type]
    assert head["mean ordering accuracy"] == (
        "0.3333 [0.3333, 0.3333] over 3 runs with precedence rules (2 with a violation)"
        ", bootstrap over cases")

    con = Console(record=True, width=250)
    render_terminal(sc, con)  # type: ignore[arg-type]
    term = con.export_text()
    assert "mean ordering accuracy" in term
    o1 = next(line for line in term.splitlines() if "o-1" in line)
    assert "ordering" in o1 and "update without get before it" in o1

    md = to_markdown(sc)  # type: ignore[arg-type]
    assert "| rule violations |" in md and "ordering: update without get before it" in md
    assert "| mean ordering accuracy | 0.3333" in md

    html = to_html(sc)  # type: ignore[arg-type]
    # o-1 passes: its row is flagged and its drill-down lists the violated rule
    o1 = html[html.index('<tr class="run-row v-pass" data-run="o-1"'):]
    assert '<td class="flags">rule violation</td>' in o1[:o1.index("</tr>")]
    d1 = html[html.index('id="run-o-1"'):]
    assert '<ul class="violations"><li>ordering: update without get before it</li></ul>' in d1[:d1.index("</details>")]
    assert "mean ordering accuracy" in html


def test_forbidden_calls_and_false_claims_are_shown_in_the_html_report() -> None:
    from trajcheck.report.runs import false_claim, violations

    cases = [Case(id="f", input="x", expected_calls=(ExpectedCall("get"),), forbidden_calls=("drop_*",))]
    bad = _run("f", 0, ["get", "drop_table"])
    claim = Trajectory(steps=(Step(0, "user", content="go"),
                              Step(1, "final_response", content="I have successfully updated the record.")),
                       final_response="I have successfully updated the record.",
                       metadata={"case_id": "f", "trial": 1, "run_id": "f-1"})
    sc = evaluate([bad, claim], cases, n_boot=50)
    r0, r1 = sc.run("f-0"), sc.run("f-1")
    assert violations(r0) == ["forbidden call 1: drop_table"]
    # f-1 never called get (task failed) and claims it updated the record, but no call failed
    # and no fault was injected: the scorecard decides no false success (null), so the page
    # flags none either (issue 29: the page said "false success claim" where the JSON said null)
    assert not r1.success and r1.false_success is None and not false_claim(r1) and not false_claim(r0)
    html = to_html(sc)
    d0 = html[html.index('id="run-f-0"'):]
    assert '<ul class="violations"><li>forbidden call 1: drop_table</li></ul>' in d0[:d0.index("</details>")]
    assert '<span class="st forbidden">forbidden</span>' in d0[:d0.index("</details>")]
    d1 = html[html.index('id="run-f-1"'):]
    assert "False success claim" not in d1[:d1.index("</details>")]
    row1 = html[html.index('data-run="f-1" data-case'):]
    assert "false success claim" not in row1[:row1.index("</tr>")]


def test_no_ordering_line_without_precedence_rules_and_passing_runs_kept() -> None:
    cases = [Case(id="a", input="x", expected_calls=(ExpectedCall("f"),))]
    sc = evaluate([_run("a", 0, ["f"])], cases, n_boot=50)
    assert "mean ordering accuracy" not in dict(headline_rows(sc))
    assert sc.suite.ordering_accuracy is None
    # every run keeps its transcript and call table: the report opens passing runs too
    assert all(r.transcript is not None and r.calls is not None for r in sc.runs)
    assert sc.runs[0].calls["expected"][0]["pred_index"] == 0


def test_a_matched_call_whose_result_failed_is_marked_in_the_drill_down() -> None:
    cases = [Case(id="t", input="open a ticket", expected_calls=(ExpectedCall("create", {"p": 1}),))]
    t = Trajectory(steps=(Step(0, "user", content="open a ticket"),
                          Step(1, "tool_call", tool_calls=(ToolCall("create", {"p": 1}, call_id="c"),)),
                          Step(2, "tool_result", tool_result=ToolResult("c", "create", "503", is_error=True)),
                          Step(3, "final_response", content="Your ticket has been created.")),
                   final_response="Your ticket has been created.",
                   metadata={"case_id": "t", "trial": 0, "run_id": "t-0"})
    sc = evaluate([t], cases, n_boot=50)
    assert not sc.runs[0].success  # the only create failed: nothing was written
    html = to_html(sc)
    d = html[html.index('id="run-t-0"'):]
    d = d[:d.index("</details>")]
    assert '<span class="st wrong">matched, but the call failed</span>' in d
    assert '<span class="badge fail">error result</span>' in d and "False success claim" in d


def test_unequal_trial_counts_are_said_beside_the_pass_k_table_in_every_report() -> None:
    from io import StringIO

    cases = [Case(id=c, input="x", expected_calls=(ExpectedCall("f"),)) for c in ("a", "b", "c")]
    # a: 5 runs, b: 3 runs (all pass), c: 4 runs of which the last fails
    runs = ([_run("a", t, ["f"]) for t in range(5)] + [_run("b", t, ["f"]) for t in range(3)]
            + [_run("c", t, ["f"] if t < 3 else ["g"]) for t in range(4)])
    sc = evaluate(runs, cases, n_boot=50)
    assert sorted(sc.suite.pass_hat_k) == [1, 2, 3]
    # pass^3 by hand: a 1, b 1, c C(3,3)/C(4,3) = 1/4 -> mean 0.75
    assert abs(sc.suite.pass_hat_k[3] - 0.75) < 1e-12
    note = ("cases have 3 to 5 runs; pass^k and pass@k need at least k runs of every case, "
            "so k goes up to 3 (case 'b' has the fewest)")
    buf = StringIO()
    render_terminal(sc, Console(file=buf, width=200, color_system=None))
    assert note in buf.getvalue()
    assert note in to_markdown(sc)
    assert note.replace("'", "&#x27;") in to_html(sc)
    equal = evaluate([_run("a", t, ["f"]) for t in range(3)] + [_run("b", t, ["f"]) for t in range(3)],
                     cases[:2], n_boot=50)
    buf = StringIO()
    render_terminal(equal, Console(file=buf, width=200, color_system=None))
    assert "runs; pass^k" not in buf.getvalue() and "runs; pass^k" not in to_markdown(equal)
