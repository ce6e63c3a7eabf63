"""``trajcheck compare``: the paired comparison of two scorecards and its regression gate."""

from __future__ import annotations

import click
from rich.markup import escape

from ..textsafe import visible
from .output import fail


@click.command("compare")
@click.argument("a_path", metavar="A.json", type=click.Path(exists=True, dir_okay=False))
@click.argument("b_path", metavar="B.json", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the comparison JSON here.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False),
              help="Write the comparison as one self-contained HTML page here.")
@click.option("--seed", default=0, show_default=True, help="Seed of the paired bootstrap.")
@click.option("--unit", type=click.Choice(["run", "task"]), default=None,
              help="Unit of the paired test of the task success rate. 'run': pairs trial i of A "
                   "with trial i of B (treats trials as independent; needs equal trial counts). "
                   "'task': one pair per case (mean over its trials) -- the conservative choice. "
                   "Default: per run when every shared case has the same trial count in A and "
                   "B, else per task.")
@click.option("--allow-changed-cases", is_flag=True,
              help="Compare even when some shared case was scored against a different definition "
                   "in A and B (its recorded hash differs). The result is marked as such.")
@click.option("--allow-trial-mismatch", is_flag=True,
              help="Compare even when some shared case has different trial counts in A and B "
                   "(the test is then per task). The result is marked as such.")
@click.option("--fail-on-regression", is_flag=True,
              help="Regression gate, A the baseline: exit 1 when B's --figure is significantly "
                   "worse than A's at --level, or when a case that passed every trial in A "
                   "fails every trial in B.")
@click.option("--figure", default="task_success", show_default=True,
              help="The gate's figure: task_success (exact McNemar / sign test), pass^k, "
                   "mean_f1 or mean_composite (paired bootstrap interval at 1 - level).")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="The gate's significance level.")
def compare_command(a_path: str, b_path: str, json_out: str | None, seed: int,
                    unit: str | None = None, html_out: str | None = None,
                    allow_changed_cases: bool = False, allow_trial_mismatch: bool = False,
                    fail_on_regression: bool = False, figure: str = "task_success",
                    level: float = 0.05) -> None:
    """Paired comparison of two scorecards (B - A) on the cases they share.

    Shows per-metric deltas with paired bootstrap intervals over cases and, for the task
    success rate, the exact McNemar / sign test, with the unit of that test (per run or per
    task) next to its p-value; then the cases that regressed and improved, each with its
    runs' reasons in A and in B.

    Refuses (exit 2) when a shared case was scored against a different case definition in A
    and B (the scorecards record a hash of each case) or has a different number of trials,
    unless --allow-changed-cases / --allow-trial-mismatch is given; the output then says so
    in a warning on stderr, in the JSON (``comparability``) and at the top of the HTML page.

    With --fail-on-regression, A is the baseline (e.g. the scorecard `eval` wrote on main)
    and B the change: the gate fails when B's --figure is significantly below A's at --level,
    or when a case that passed every trial in A fails every trial in B (trajcheck.aggregate.regression).

    Exit codes: 0 when compared (and the gate, if asked, passed), 1 when the gate failed, 2
    when a file is not a scorecard, the two share no case, they are not comparable (see
    above), or --figure is unknown.
    """
    import json as _json
    from pathlib import Path

    from rich.console import Console

    from ..aggregate.paired_cases import case_shifts, check_comparable
    from ..errors import TrajcheckError
    from ..report.scorecard import Scorecard
    from ..score.suite import compare_scorecards

    con = Console()
    err = Console(stderr=True)
    try:
        a = Scorecard.load(a_path)
        b = Scorecard.load(b_path)
        chk = check_comparable(a, b)
        refused = []
        if chk.changed and not allow_changed_cases:
            refused.append("--allow-changed-cases")
        if chk.trials and not allow_trial_mismatch:
            refused.append("--allow-trial-mismatch")
        if refused:
            lines = "\n".join(f"  - {m}" for m in chk.messages())
            fail(f"A and B are not comparable as they are:\n{lines}\nA paired test over them would "
                  f"compare different tests. Re-score both on the same cases and trials, or pass "
                  f"{' and '.join(refused)} to compare anyway (the result is marked).", err)
        conf = 0.95
        if fail_on_regression:
            from ..aggregate.regression import delta_name, gate_confidence

            conf = gate_confidence(level)
        cmp = compare_scorecards(a, b, seed=seed, unit=unit, confidence=conf)
        if fail_on_regression:
            delta_name(figure, [d.metric for d in cmp.deltas])  # an unknown figure: exit 2
    except TrajcheckError as e:
        fail(e, err)
    overridden = [m for m in chk.messages()] if not chk.ok else []
    for m in overridden:
        err.print(f"[bold red]WARNING[/bold red]: {escape(visible(m))}", highlight=False, soft_wrap=True)
    for m in chk.messages() if chk.ok else ():
        err.print(f"note: {m}", markup=False, highlight=False, soft_wrap=True)
    shifts = case_shifts(a, b)
    from ..report.compare import render_compare_terminal

    render_compare_terminal(cmp, shifts, con, overridden=overridden)
    data = dict(cmp.to_dict(), comparability=dict(chk.to_dict(), overridden=bool(overridden)),
                cases=[s.to_dict() for s in shifts])
    verdict = None
    if fail_on_regression:
        from ..aggregate.regression import regression_gate

        verdict = regression_gate(cmp, shifts, figure=figure, level=level)
        data["gate"] = verdict.to_dict()
    if json_out:
        Path(json_out).write_text(_json.dumps(data, indent=2) + "\n", encoding="utf-8")
        err.print(f"wrote {json_out}", markup=False, highlight=False, soft_wrap=True)
    if html_out:
        from ..report.compare import compare_to_html

        Path(html_out).write_text(compare_to_html(cmp, shifts, a, b, a_name=a_path, b_name=b_path,
                                                  overridden=overridden), encoding="utf-8")
        err.print(f"wrote {html_out}", markup=False, highlight=False, soft_wrap=True)
    if verdict is not None:
        from ..report.ci import append_gate_summary

        append_gate_summary(verdict)
        style = "red" if verdict.failed else "green"
        err.print(f"[{style}]{escape(visible(verdict.summary()))}[/{style}]", highlight=False,
                  soft_wrap=True)
        if verdict.failed:
            raise SystemExit(1)
