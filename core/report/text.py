"""The text reports of a scorecard: terminal (rich) and Markdown (for a PR comment).

Every renderer reads a ``scorecard.Scorecard``, whose figures keep full precision, and
rounds them only for display, in one place (``fmt``: 4 decimals, a non-zero figure never
shown as 0); rates are shown as the scorecard holds them, never re-computed.
The HTML page is ``report.html.to_html`` (single offline file, inline SVG); the JSON is
``Scorecard.to_json``.

Failing runs (``failing_runs``) are the runs whose task failed AND the runs whose task
succeeded but that fail the composite gate (``RunResult.gate_failed``), each marked with
its kind; pass^k stays on task success (DESIGN.md). Runs that violate a precedence
(ordering) rule are listed too (``flagged_runs``): a failing run gets its violations in a
"rule violations" entry, a passing one is listed with kind "ordering". Every interval is
shown with its method ("Wilson", "rule of three", "bootstrap over cases"). The terminal and the Markdown list
the first ``FAILING_SHOWN`` of them (the terminal cuts each reason at ``REASON_CHARS``);
the JSON and HTML reports hold all of them with full reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from .scorecard import Estimate, RunResult, Scorecard

FAILING_SHOWN = 10  # failing runs listed in the terminal and in the Markdown
PROBLEMS_SHOWN = 10  # problems listed in the terminal and in the Markdown
REASON_CHARS = 180  # a reason's length in the terminal (the files hold it whole)
TASK_FAILED = "task failed"
COMPOSITE_GATE = "composite gate"
ORDERING = "ordering"  # kind of a run listed only for its ordering (precedence) violations
METHOD_LABELS = {"wilson": "Wilson", "rule_of_three": "rule of three",
                 "bootstrap": "bootstrap over cases"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 call"``, ``"2 calls"`` (``many`` for an irregular plural)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def fmt(x: Any, digits: int = 4) -> str:
    """A figure as text: None -> "n/a", floats to ``digits`` decimals without trailing noise.

    A figure that is not zero never prints as 0: below ``10**-digits`` it prints as
    ``"<0.0001"`` (``">-0.0001"`` when negative)."""
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        s = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        if s in ("", "0", "-0"):
            if x == 0 or x != x:
                return "0" if x == 0 else "nan"
            tiny = f"{10 ** -digits:.{digits}f}"
            return f"<{tiny}" if x > 0 else f">-{tiny}"
        return s
    return str(x)


def fmt_p(p: float | None) -> str:
    """A p-value as text: ``"<0.0001"`` below 0.0001, else 4 decimals; None -> ``""``."""
    if p is None:
        return ""
    if p < 1e-4:
        return "<0.0001"
    return fmt(float(p))


def cut(text: str, n: int = REASON_CHARS) -> str:
    """``text`` cut to ``n`` characters, the cut marked with ``"..."``; a trailing
    ``" (and N more)"`` is kept after the cut."""
    if len(text) <= n:
        return text
    import re

    m = re.search(r" \(and \d+ more[^()]*\)$", text)
    tail = m.group(0) if m else ""
    head = text[: len(text) - len(tail)]
    return head[: max(0, n - 3 - len(tail))].rstrip() + "..." + tail


def failing_runs(sc: Scorecard) -> list[tuple[RunResult, str, str]]:
    """The runs to list as failing, in run order, as ``(run, kind, reason)``.

    ``kind`` is ``"task failed"`` (trajcheck's outcome failed; reason = the run's
    ``failure_reason`` or ``outcome_reason``) or ``"composite gate"`` (the task succeeded
    but the composite score is below its threshold, e.g. a critical forbidden-sequence
    violation makes it 0; reason = the composite's reason). pass^k counts task success only.
    """
    out: list[tuple[RunResult, str, str]] = []
    for r in sc.runs:
        if not r.success:
            out.append((r, TASK_FAILED, r.failure_reason or r.outcome_reason))
        elif r.gate_failed:
            comp = (r.metrics.get("composite") or {}).get("reason")
            out.append((r, COMPOSITE_GATE, comp or r.failure_reason
                        or f"composite {fmt(r.composite)} below its threshold"))
    return out


def ordering_violations(r: RunResult) -> str:
    """The run's violated precedence rules as text, ``"ordering: B before A; ..."``
    (from ``metrics["ordering"]["parts"]["rules"]``, as ``metrics.sequences.ordering_accuracy``
    wrote them), or ``""`` when the case has no precedence rule or every rule held."""
    parts = (r.metrics.get("ordering") or {}).get("parts") or {}
    bad = [x for x in parts.get("rules") or () if isinstance(x, dict) and x.get("status") == "violated"]
    if not bad:
        return ""
    rules = "; ".join(f"{x.get('after')} without {x.get('before')} before it" for x in bad)
    return f"{ORDERING}: {rules}"


def flagged_runs(sc: Scorecard) -> list[tuple[RunResult, str, str, str]]:
    """``failing_runs`` plus the runs that pass but violate a precedence rule, in run order,
    as ``(run, kind, reason, rule_violations)``. A passing run with ordering violations (and
    no failed composite gate) has kind ``"ordering"`` and its violations as reason;
    ``rule_violations`` is ``ordering_violations(run)`` for every row ("" when none)."""
    failing = {id(r): (k, why) for r, k, why in failing_runs(sc)}
    out: list[tuple[RunResult, str, str, str]] = []
    for r in sc.runs:
        viol = ordering_violations(r)
        if id(r) in failing:
            k, why = failing[id(r)]
            out.append((r, k, why, viol))
        elif viol:
            out.append((r, ORDERING, viol, viol))
    return out


def failing_title(sc: Scorecard, rows: Sequence[tuple[Any, ...]]) -> str:
    """``"failing runs (12 of 200)"``, plus ``": 10 task failed, 2 composite gate only"``
    when some task successes fail the composite gate, plus ``"; 3 more flagged for
    ordering"`` when ``rows`` (from ``flagged_runs``) hold passing runs with ordering
    violations."""
    n_task = sum(1 for row in rows if row[1] == TASK_FAILED)
    n_order = sum(1 for row in rows if row[1] == ORDERING)
    n_fail = len(rows) - n_order
    head = f"failing runs ({n_fail} of {len(sc.runs)})"
    if n_task != n_fail:
        head = f"{head}: {n_task} task failed, {n_fail - n_task} composite gate only"
    if n_order:
        head += f"; {n_order} more flagged for ordering"
    return head


def method_label(e: Estimate | None) -> str:
    """The interval method of ``e`` for display: "Wilson", "rule of three", "bootstrap over
    cases" (DESIGN.md "Intervals"); "" when there is no interval."""
    if e is None or e.value is None or e.lo is None or not e.method:
        return ""
    return METHOD_LABELS.get(e.method, e.method)


def fmt_est_m(e: Estimate | None) -> str:
    """``fmt_est`` followed by the interval method in parentheses, e.g.
    ``"1 [0.976, 1] (rule of three)"``, so two intervals on one screen are labelled."""
    m = method_label(e)
    return fmt_est(e) + (f" ({m})" if m else "")


def fmt_est(e: Estimate | None) -> str:
    """``value [lo, hi]`` (or just the value when there is no interval)."""
    if e is None or e.value is None:
        return "n/a"
    if e.lo is None or e.hi is None:
        return fmt(e.value)
    return f"{fmt(e.value)} [{fmt(e.lo)}, {fmt(e.hi)}]"


def fmt_ci(ci: Any) -> str:
    """``[lo, hi]`` or empty."""
    if not ci:
        return ""
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def _m(e: Estimate | None) -> str:
    m = method_label(e)
    return f", {m}" if m else ""


def headline_rows(sc: Scorecard) -> list[tuple[str, str]]:
    """The suite's headline figures as (label, text) rows, shared by all renderers. Every
    interval is followed by its method (``method_label``), and the mean ordering accuracy
    is shown when some case has precedence rules."""
    s = sc.suite
    rows = [
        ("runs / cases", f"{s.n_runs} / {s.n_cases}"),
        ("task success rate", f"{fmt_est(s.task_success_rate)} ({s.n_successes}/{s.n_runs})"
         + _m(s.task_success_rate)),
        ("mean tool-call F1", fmt_est_m(s.mean_f1)),
        ("mean composite", fmt_est_m(s.mean_composite)),
    ]
    cpr = s.composite_pass_rate
    if cpr is not None and cpr.value is not None:
        n_pass = sum(1 for r in sc.runs if r.composite_passed)
        rows.append(("composite pass rate", f"{fmt_est(cpr)} ({n_pass}/{cpr.n})" + _m(cpr)))
    oa = s.ordering_accuracy
    if oa is not None and oa.value is not None:
        n_rules = sum(1 for r in sc.runs if isinstance(
            (r.metrics.get("ordering") or {}).get("score"), (int, float)))
        n_viol = sum(1 for r in sc.runs if ordering_violations(r))
        rows.append(("mean ordering accuracy", f"{fmt_est(oa)} over {plural(n_rules, 'run')} with "
                                               f"precedence rules ({n_viol} with a violation)" + _m(oa)))
    rows += [
        ("runs with a forbidden call", fmt_est_m(s.forbidden_rate) if s.forbidden_rate is not None
         else "n/a (no case defines forbidden calls)"),
        ("runs with a duplicate call", fmt_est_m(s.duplicate_rate)),
    ]
    if s.n_fault_runs:
        rows.append(("false-success rate (fault runs)",
                     f"{fmt_est(s.false_success_rate)} over {plural(s.n_fault_runs, 'run')}"
                     + _m(s.false_success_rate)))
    eff = s.efficiency or {}
    n_ok = eff.get("n_success")
    for key, label in (("steps", "agent steps"), ("tool_calls", "tool calls"),
                       ("tokens", "tokens"), ("cost_usd", "cost (USD)"),
                       ("latency_ms", "latency (ms)")):
        v = eff.get(key)
        if isinstance(v, dict) and v.get("p50") is not None:
            money = 8 if key == "cost_usd" else 4
            rows.append((f"{label} p50/p95/p99 (successes)",
                         f"{fmt(v.get('p50'), money)} / {fmt(v.get('p95'), money)} / "
                         f"{fmt(v.get('p99'), money)} (mean {fmt(v.get('mean'), money)}, "
                         f"n={v.get('n')})"))
    if eff.get("cost_usd") is not None or eff.get("total_cost_usd") is not None:
        # DESIGN.md: cost of ALL runs / successful runs (computed in metrics.efficiency)
        cps = eff.get("cost_per_success")
        label = "cost per successful task (USD)"
        if cps is not None:
            rows.append((label, f"{fmt(cps, 8)} (all runs {fmt(eff.get('total_cost_usd'), 8)} / "
                                f"{n_ok} successes)"))
        else:
            rows.append((label, "n/a (no successful run)" if n_ok == 0
                         else "n/a (some run has no cost)"))
    rt = s.routing or {}
    if rt.get("accuracy") is not None:
        what = "exact-set accuracy" if rt.get("kind") == "multi_label" else "accuracy"
        rows.append((f"routing {what}",
                     f"{fmt(rt.get('accuracy'))} over {plural(int(rt.get('n') or 0), 'run')}, macro-F1 "
                     f"{fmt(rt.get('macro_f1'))}"
                     + (f", {rt.get('n_no_route')} with no route" if rt.get("n_no_route") else "")))
        gate = rt.get("recall_floor_gate")
        if isinstance(gate, dict):
            rows.append(("routing recall floors", ("pass" if gate.get("passed") else "FAIL")
                         + f": {gate.get('reason', '')}"))
    return rows


def trials_note(sc: Scorecard) -> str | None:
    """What the pass^k table must say when cases have unequal run counts, else None.

    Args:
        sc: a scorecard with its pass^k curve.

    Returns:
        One sentence naming a case with the fewest runs, the range of run counts and how to
        choose k (pass^k needs n >= k for every case, so the curve stops at the fewest runs:
        DESIGN.md), or None when every case has as many runs or there is no curve.
    """
    counts = [(c.trials, c.case_id) for c in sc.cases if c.trials]
    if not sc.suite.pass_hat_k or not counts:
        return None
    (lo, who), hi = min(counts), max(n for n, _ in counts)
    if lo == hi:
        return None
    return (f"cases have {lo} to {hi} runs; pass^k and pass@k need at least k runs of every "
            f"case, so k goes up to {lo} (case {who!r} has the fewest)")


def category_rows(sc: Scorecard) -> list[tuple[str, str, str, str]]:
    """``(category, runs, successes, rate)`` rows of ``sc.meta["by_category"]``
    (``trajcheck.aggregate.categories``), ``overall`` last; [] when the cases name no category."""
    table = sc.meta.get("by_category")
    if not isinstance(table, dict):
        return []
    keys = [k for k in table if k != "overall"] + (["overall"] if "overall" in table else [])
    return [(k, str(table[k].get("runs")), str(table[k].get("successes")), fmt(table[k].get("rate")))
            for k in keys if isinstance(table.get(k), dict)]


def _more_hint(n: int, what: str, full_reports: Sequence[str]) -> str:
    """``"... and 4 more failing runs; see out.json"`` (``what`` singular, e.g. "failing run")."""
    where = (f"see {', '.join(full_reports)}" if full_reports
             else "use --json or --html to see all")
    return f"... and {plural(n, 'more ' + what)}; {where}"


def render_problems(problems: Sequence[str], console: Console, *, limit: int = PROBLEMS_SHOWN,
                    full_reports: Sequence[str] = ()) -> None:
    """Print ``problems`` one per line (the first ``limit``, then a hint where the rest are:
    ``full_reports``, the JSON/HTML files written, or the options that write them)."""
    if not problems:
        return
    console.print(f"[yellow]{plural(len(problems), 'problem')}:[/yellow]", highlight=False)
    for p in problems[:limit]:
        console.print(f"  - {_visible(p)}", markup=False, highlight=False, soft_wrap=True)
    if len(problems) > limit:
        console.print(f"  {_more_hint(len(problems) - limit, 'problem', full_reports)}",
                      markup=False, highlight=False)


def render_terminal(sc: Scorecard, console: Console | None = None, *,
                    max_failures: int = FAILING_SHOWN, full_reports: Sequence[str] = (),
                    problems: bool = True) -> None:
    """Print the scorecard with rich tables: headline figures, pass^k/pass@k (with the
    recorded reward's pass^k when present), agreement with the recorded reward and its
    disagreements, failing runs (``failing_runs``: task failures and composite-gate failures,
    the first ``max_failures``, reasons cut at ``REASON_CHARS``) and, when ``problems``,
    the problems (first ``PROBLEMS_SHOWN``). ``full_reports``: paths of the JSON/HTML
    reports being written, named in the "... and N more" hints (else the hint names the
    options that write them)."""
    from rich.console import Console

    from ..textsafe import SafeTable as Table  # data in cells is shown literally

    con = console or Console()
    t = Table(title="trajcheck scorecard", show_header=False, title_justify="left")
    t.add_column("metric", style="bold")
    t.add_column("value")
    for label, v in headline_rows(sc):
        t.add_row(label, v)
    con.print(t)
    if sc.meta.get("guessed_formats") or sc.meta.get("unread"):
        con.print(reading_line(sc.meta) or "", markup=False, highlight=False, soft_wrap=True)
    cats = category_rows(sc)
    if cats:
        ct = Table(title="task success per category (BFCL: AST accuracy)", title_justify="left")
        for col, j in (("category", "left"), ("runs", "right"), ("successes", "right"), ("rate", "right")):
            ct.add_column(col, justify=j)  # type: ignore[arg-type]
        for crow in cats:
            ct.add_row(*crow)
        con.print(ct)

    s = sc.suite
    rr = sc.recorded_reward
    if s.pass_hat_k:
        kt = Table(title="reliability over trials (bootstrap 95% over cases)", title_justify="left")
        kt.add_column("k", justify="right")
        kt.add_column("pass^k")
        kt.add_column("pass@k")
        if rr is not None:
            kt.add_column("recorded reward pass^k")
        for k in sorted(s.pass_hat_k):
            row = [str(k), f"{fmt(s.pass_hat_k[k])} {fmt_ci(s.pass_hat_k_ci.get(k))}",
                   f"{fmt(s.pass_at_k.get(k))} {fmt_ci(s.pass_at_k_ci.get(k))}"]
            if rr is not None:
                row.append(f"{fmt(rr.pass_hat_k.get(k))} {fmt_ci(rr.pass_hat_k_ci.get(k))}")
            kt.add_row(*row)
        con.print(kt)
        note = trials_note(sc)
        if note:
            con.print(note, markup=False, highlight=False, soft_wrap=True)

    if rr is not None:
        m = rr.matrix
        at = Table(title=f"agreement with the recorded reward: {rr.agree}/{rr.n}",
                   title_justify="left")
        at.add_column("")
        at.add_column("recorded pass")
        at.add_column("recorded fail")
        at.add_row("trajcheck pass", str(m.get("ours_pass_recorded_pass", 0)),
                   str(m.get("ours_pass_recorded_fail", 0)))
        at.add_row("trajcheck fail", str(m.get("ours_fail_recorded_pass", 0)),
                   str(m.get("ours_fail_recorded_fail", 0)))
        con.print(at)
        if rr.disagreements:
            dt = Table(title="disagreements", title_justify="left")
            dt.add_column("run", no_wrap=True)
            dt.add_column("trajcheck")
            dt.add_column("recorded")
            dt.add_column("reason", overflow="fold")
            for d in rr.disagreements:
                dt.add_row(d.run_id, "pass" if d.ours else "fail",
                           "pass" if d.recorded else "fail", d.reason)
            con.print(dt)
        for name, ca in rr.checks.items():
            ct = Table(title=f"agreement of trajcheck's writes verdict with the recorded {name}: "
                             f"{ca.agree}/{ca.n}", title_justify="left")
            ct.add_column("run", no_wrap=True)
            ct.add_column("trajcheck")
            ct.add_column(f"recorded {name}")
            ct.add_column("reason", overflow="fold")
            for d in ca.disagreements:
                ct.add_row(d.run_id, "right" if d.ours else "wrong", str(d.recorded), d.reason)
            con.print(ct)

    failing = flagged_runs(sc)
    if failing:
        ft = Table(title=failing_title(sc, failing), title_justify="left")
        ft.add_column("run", no_wrap=True)
        ft.add_column("why", no_wrap=True)
        ft.add_column("F1", justify="right")
        ft.add_column("reason", overflow="fold")
        for r, kind, reason, viol in failing[:max_failures]:
            why = kind if not viol or kind == ORDERING else f"{kind}, {ORDERING}"
            text = reason if not viol or kind == ORDERING else f"{reason}; rule violations: {viol}"
            ft.add_row(r.run_id, why, fmt(r.f1), cut(text))
        con.print(ft)
        if len(failing) > max_failures:
            con.print(_more_hint(len(failing) - max_failures, "failing run", full_reports),
                      markup=False, highlight=False)
    if problems:
        render_problems(sc.problems, con, full_reports=full_reports)


def _visible(s: Any) -> str:
    from ..textsafe import visible

    return visible(s)


def _md_cell(s: Any) -> str:
    from ..textsafe import md

    return md(s)


def reading_line(meta: Mapping[str, Any]) -> str | None:
    """``"Read as: openai_chat (3 runs, guessed: ...)"`` from a scorecard's ``meta``
    (``formats``, ``guessed_formats``, ``unread``), or None when it records no format."""
    formats = meta.get("formats")
    if not isinstance(formats, Mapping) or not formats:
        return None
    g = meta.get("guessed_formats")
    guessed: Mapping[str, Any] = g if isinstance(g, Mapping) else {}
    parts = [f"{k} ({v} run{'' if v == 1 else 's'}" + (f", guessed: {guessed[k]})" if k in guessed else ")")
             for k, v in formats.items()]
    line = "Read as: " + ", ".join(parts)
    unread = meta.get("unread")
    if isinstance(unread, list) and unread:
        line += f"; {len(unread)} record(s) hold tool calls that were not read"
    return line


def to_markdown(sc: Scorecard, *, max_failures: int = FAILING_SHOWN,
                reason_chars: int | None = None) -> str:
    """A Markdown summary for a pull-request comment: headline table, pass^k table, agreement
    with the recorded reward (with every disagreement), the first ``max_failures`` failing
    runs (``failing_runs``, full reasons, marked task failed / composite gate) and the first
    ``PROBLEMS_SHOWN`` problems, one per line. ``reason_chars``: cut every reason, rule
    violation and problem to that many characters (``cut``; a CI job summary), None: whole."""

    def rc(text: Any) -> str:
        return cut(str(text), reason_chars) if reason_chars is not None else str(text)

    s = sc.suite
    rr = sc.recorded_reward
    out = ["## trajcheck scorecard", ""]
    src = sc.meta.get("source")
    if src:
        out += [f"Source: {_md_cell(src)}", ""]
    read_as = reading_line(sc.meta)
    if read_as:
        out += [_md_cell(read_as), ""]
    out += ["| metric | value |", "| --- | --- |"]
    out += [f"| {_md_cell(label)} | {_md_cell(v)} |" for label, v in headline_rows(sc)]
    out.append("")
    cats = category_rows(sc)
    if cats:
        out += ["**Task success per category** (BFCL: AST accuracy)", "",
                "| category | runs | successes | rate |", "| --- | ---: | ---: | ---: |"]
        out += [f"| {_md_cell(cn)} | {cr} | {cs} | {crate} |" for cn, cr, cs, crate in cats]
        out.append("")
    if s.pass_hat_k:
        head = "| k | pass^k | pass@k |" + (" recorded pass^k |" if rr else "")
        out += [head, "| --- | --- | --- |" + (" --- |" if rr else "")]
        for k in sorted(s.pass_hat_k):
            row = (f"| {k} | {fmt(s.pass_hat_k[k])} {fmt_ci(s.pass_hat_k_ci.get(k))} | "
                   f"{fmt(s.pass_at_k.get(k))} {fmt_ci(s.pass_at_k_ci.get(k))} |")
            if rr:
                row += f" {fmt(rr.pass_hat_k.get(k))} {fmt_ci(rr.pass_hat_k_ci.get(k))} |"
            out.append(row)
        out.append("")
        note = trials_note(sc)
        if note:
            out += [_md_cell(note), ""]
    if rr is not None:
        m = rr.matrix
        out += [f"**Agreement with the recorded reward: {rr.agree}/{rr.n}**", "",
                "| | recorded pass | recorded fail |", "| --- | --- | --- |",
                f"| trajcheck pass | {m.get('ours_pass_recorded_pass', 0)} | {m.get('ours_pass_recorded_fail', 0)} |",
                f"| trajcheck fail | {m.get('ours_fail_recorded_pass', 0)} | {m.get('ours_fail_recorded_fail', 0)} |",
                ""]
        if rr.disagreements:
            out += ["| run | trajcheck | recorded | reason |", "| --- | --- | --- | --- |"]
            out += [f"| {_md_cell(d.run_id)} | {'pass' if d.ours else 'fail'} | "
                    f"{'pass' if d.recorded else 'fail'} | {_md_cell(rc(d.reason))} |"
                    for d in rr.disagreements]
            out.append("")
        for name, ca in rr.checks.items():
            out += [f"**Agreement of trajcheck's writes verdict with the recorded {name}: "
                    f"{ca.agree}/{ca.n}**", ""]
            if ca.disagreements:
                out += [f"| run | trajcheck writes | recorded {name} | reason |", "| --- | --- | --- | --- |"]
                out += [f"| {_md_cell(d.run_id)} | {'right' if d.ours else 'wrong'} | {_md_cell(d.recorded)} | "
                        f"{_md_cell(rc(d.reason))} |" for d in ca.disagreements]
                out.append("")
    if sc.meta.get("judges"):
        from ..judges.report import markdown_judges

        out.append(markdown_judges(sc))
    failing = flagged_runs(sc)
    if failing:
        out += [f"<details><summary>{_md_cell(failing_title(sc, failing))}</summary>", "",
                "| run | why | F1 | reason | rule violations |", "| --- | --- | --- | --- | --- |"]
        out += [f"| {_md_cell(r.run_id)} | {kind if not viol or kind == ORDERING else f'{kind}, {ORDERING}'} | "
                f"{fmt(r.f1)} | {_md_cell(rc(reason))} | {_md_cell(rc(viol))} |"
                for r, kind, reason, viol in failing[:max_failures]]
        if len(failing) > max_failures:
            out.append(f"| ... | | | {len(failing) - max_failures} more; the JSON and HTML "
                       "reports list all | |")
        out += ["", "</details>", ""]
    if sc.problems:
        out += [f"{plural(len(sc.problems), 'problem')}:", ""]
        out += [f"- {_md_cell(rc(p))}" for p in sc.problems[:PROBLEMS_SHOWN]]
        if len(sc.problems) > PROBLEMS_SHOWN:
            out.append(f"- ... and {len(sc.problems) - PROBLEMS_SHOWN} more; the JSON and HTML "
                       "reports list all")
        out.append("")
    return "\n".join(out)
