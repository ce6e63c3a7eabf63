"""Scorecard reports: terminal (rich), Markdown (for a PR comment), JSON and HTML.

Every renderer reads a ``suite.Scorecard`` and shows the same rounded figures the JSON
holds (4 decimals; rates in the terminal and Markdown as given, never re-computed).
``to_html`` lives in ``report_html`` (single offline file, inline SVG).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from .suite import Estimate, Scorecard


def fmt(x: Any, digits: int = 4) -> str:
    """A figure as text: None -> "n/a", floats to ``digits`` decimals without trailing noise."""
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        s = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        return s if s not in ("", "-0") else "0"
    return str(x)


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


def headline_rows(sc: Scorecard) -> list[tuple[str, str]]:
    """The suite's headline figures as (label, text) rows, shared by all renderers."""
    s = sc.suite
    rows = [
        ("runs / cases", f"{s.n_runs} / {s.n_cases}"),
        ("task success rate", f"{fmt_est(s.task_success_rate)} ({s.n_successes}/{s.n_runs})"),
        ("mean tool-call F1", fmt_est(s.mean_f1)),
        ("mean composite", fmt_est(s.mean_composite)),
        ("runs with a forbidden call", fmt_est(s.forbidden_rate)),
        ("runs with a duplicate call", fmt_est(s.duplicate_rate)),
    ]
    if s.n_fault_runs:
        rows.append(("false-success rate (fault runs)",
                     f"{fmt_est(s.false_success_rate)} over {s.n_fault_runs} runs"))
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
                     f"{fmt(rt.get('accuracy'))} over {rt.get('n')} runs, macro-F1 "
                     f"{fmt(rt.get('macro_f1'))}"
                     + (f", {rt.get('n_no_route')} with no route" if rt.get("n_no_route") else "")))
        gate = rt.get("recall_floor_gate")
        if isinstance(gate, dict):
            rows.append(("routing recall floors", ("pass" if gate.get("passed") else "FAIL")
                         + f": {gate.get('reason', '')}"))
    return rows


def render_terminal(sc: Scorecard, console: Console | None = None, *, max_failures: int = 30) -> None:
    """Print the scorecard with rich tables: headline figures, pass^k/pass@k (with the
    recorded reward's pass^k when present), agreement with the recorded reward and its
    disagreements, failing runs (first ``max_failures``) and problems."""
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    t = Table(title="trajcheck scorecard", show_header=False, title_justify="left")
    t.add_column("metric", style="bold")
    t.add_column("value")
    for label, v in headline_rows(sc):
        t.add_row(label, v)
    con.print(t)

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
            dt.add_column("run")
            dt.add_column("trajcheck")
            dt.add_column("recorded")
            dt.add_column("reason", overflow="fold")
            for d in rr.disagreements:
                dt.add_row(d.run_id, "pass" if d.ours else "fail",
                           "pass" if d.recorded else "fail", d.reason)
            con.print(dt)

    failing = [r for r in sc.runs if not r.success]
    if failing:
        ft = Table(title=f"failing runs ({len(failing)} of {len(sc.runs)})", title_justify="left")
        ft.add_column("run")
        ft.add_column("F1", justify="right")
        ft.add_column("reason", overflow="fold")
        for r in failing[:max_failures]:
            ft.add_row(r.run_id, fmt(r.f1), r.failure_reason or r.outcome_reason)
        con.print(ft)
        if len(failing) > max_failures:
            con.print(f"... {len(failing) - max_failures} more failing runs in the JSON/HTML report")
    if sc.problems:
        con.print(f"[yellow]{len(sc.problems)} problem(s):[/yellow]")
        for p in sc.problems[:20]:
            con.print(f"  - {p}", markup=False, highlight=False)
        if len(sc.problems) > 20:
            con.print(f"  ... {len(sc.problems) - 20} more in the JSON report")


def _md_cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(sc: Scorecard, *, max_failures: int = 25) -> str:
    """A Markdown summary for a pull-request comment: headline table, pass^k table, agreement
    with the recorded reward (with every disagreement) and the first ``max_failures``
    failing runs."""
    s = sc.suite
    rr = sc.recorded_reward
    out = ["## trajcheck scorecard", ""]
    src = sc.meta.get("source")
    if src:
        out += [f"Source: `{src}`", ""]
    out += ["| metric | value |", "| --- | --- |"]
    out += [f"| {_md_cell(label)} | {_md_cell(v)} |" for label, v in headline_rows(sc)]
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
    if rr is not None:
        m = rr.matrix
        out += [f"**Agreement with the recorded reward: {rr.agree}/{rr.n}**", "",
                "| | recorded pass | recorded fail |", "| --- | --- | --- |",
                f"| trajcheck pass | {m.get('ours_pass_recorded_pass', 0)} | {m.get('ours_pass_recorded_fail', 0)} |",
                f"| trajcheck fail | {m.get('ours_fail_recorded_pass', 0)} | {m.get('ours_fail_recorded_fail', 0)} |",
                ""]
        if rr.disagreements:
            out += ["| run | trajcheck | recorded | reason |", "| --- | --- | --- | --- |"]
            out += [f"| {d.run_id} | {'pass' if d.ours else 'fail'} | "
                    f"{'pass' if d.recorded else 'fail'} | {_md_cell(d.reason)} |"
                    for d in rr.disagreements]
            out.append("")
    failing = [r for r in sc.runs if not r.success]
    if failing:
        out += [f"<details><summary>{len(failing)} failing runs</summary>", "",
                "| run | F1 | reason |", "| --- | --- | --- |"]
        out += [f"| {r.run_id} | {fmt(r.f1)} | {_md_cell(r.failure_reason or r.outcome_reason)} |"
                for r in failing[:max_failures]]
        if len(failing) > max_failures:
            out.append(f"| ... | | {len(failing) - max_failures} more |")
        out += ["", "</details>", ""]
    if sc.problems:
        out += [f"{len(sc.problems)} problem(s): " + "; ".join(_md_cell(p) for p in sc.problems[:10]), ""]
    return "\n".join(out)
