"""Reports of a paired comparison of two scorecards (``trajcheck compare``): the terminal
tables and one self-contained HTML page (no scripts needed, no external resources).

Both show the paired figures (B - A with their paired bootstrap intervals and the exact test
of the task success rate, ``suite.compare_scorecards``), then the cases that regressed and
improved (``compare_cases.case_shifts``) with every run's verdict and reason on each side, side
by side. When the comparison was forced over changed case definitions or unequal trial
counts (``--allow-changed-cases``, ``--allow-trial-mismatch``) both say so first, loudly.

In the HTML page every figure carries an id a test can read back: ``delta-<metric>``,
``delta-<metric>-ci``, ``delta-<metric>-p`` (metric names with ``^`` written ``hat``), rows
``tr.shift.regressed`` / ``tr.shift.improved`` with ``data-case``, and ``#override-warning``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .html import _CSS as CSS
from .html import _e as e
from .html import _slug as slug
from .html import svg_curves, svg_forest
from .text import fmt, fmt_p

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from ..aggregate.paired_cases import CaseShift
    from ..score.suite import Comparison
    from .scorecard import Scorecard

SHIFTS_SHOWN = 10  # regressed / improved cases listed in the terminal
REASON_CHARS = 90  # a run's reason in the terminal


def _unit(u: str | None) -> str:
    return {"run": "per run", "task": "per task"}.get(u or "", u or "")


def _mid(metric: str) -> str:
    return slug(metric.replace("^", "hat"))


def render_compare_terminal(cmp: Comparison, shifts: Sequence[CaseShift], console: Console, *,
                            overridden: Sequence[str] = ()) -> None:
    """Print the deltas table, then the regressed and improved cases (the first
    ``SHIFTS_SHOWN`` of each, largest change first), each with its runs' verdicts and
    reasons in A and B; ``overridden``: the comparability findings the user chose to
    override, printed first as a warning."""
    from ..aggregate.paired_cases import improved, regressed
    from ..textsafe import SafeTable as Table  # data in cells is shown literally
    from ..textsafe import visible
    from .text import cut

    if overridden:
        console.print("[bold red]COMPARED DESPITE:[/bold red] " + "; ".join(overridden),
                      highlight=False, soft_wrap=True)
    t = Table(title=f"B - A over {cmp.n_cases} shared cases (95% paired bootstrap)",
              title_justify="left")
    for col in ("metric", "A", "B", "delta", "interval", "p", "test unit"):
        t.add_column(col)
    for d in cmp.deltas:
        t.add_row(d.metric, fmt(d.a), fmt(d.b), fmt(d.delta),
                  f"[{fmt(d.lo)}, {fmt(d.hi)}]" if d.lo is not None else "",
                  fmt_p(d.p_value), _unit(d.unit) if d.p_value is not None else "")
    console.print(t)
    for label, ids in (("only in A", cmp.only_a), ("only in B", cmp.only_b)):
        if ids:
            console.print(visible(f"{len(ids)} case(s) {label}, left out: {', '.join(ids[:20])}"),
                          markup=False, highlight=False)

    def runs(rs: Sequence[dict[str, Any]]) -> str:
        return "\n".join(f"{verdict} x{len(ts)} (trial{'s' if len(ts) > 1 else ''} "
                         f"{', '.join(ts)}): {cut(reason, REASON_CHARS)}"
                         for (verdict, reason), ts in grouped_runs(rs).items())

    for title, rows in (("regressed", regressed(list(shifts))), ("improved", improved(list(shifts)))):
        if not rows:
            console.print(f"no case {title}", highlight=False)
            continue
        st = Table(title=f"{len(rows)} case(s) {title} (success in A -> B)", title_justify="left",
                   show_lines=True)
        st.add_column("case", no_wrap=True)
        st.add_column("A -> B", no_wrap=True)
        st.add_column("runs in A", overflow="fold")
        st.add_column("runs in B", overflow="fold")
        for s in rows[:SHIFTS_SHOWN]:
            st.add_row(s.case_id, f"{s.a_successes}/{s.a_trials} -> {s.b_successes}/{s.b_trials}",
                       runs(s.a_runs), runs(s.b_runs))
        console.print(st)
        if len(rows) > SHIFTS_SHOWN:
            console.print(f"... and {len(rows) - SHIFTS_SHOWN} more {title} cases; see --json or --html",
                          highlight=False)


def grouped_runs(rs: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """A case's runs grouped by (verdict, reason) in first-seen order: ``{("FAIL", reason):
    [trial labels]}``, verdict ``pass``/``FAIL``/``gate`` (task passed, composite gate failed);
    a run without a trial number is labelled by its run id."""
    out: dict[tuple[str, str], list[str]] = {}
    for r in rs:
        v = "FAIL" if not r["success"] else "gate" if r.get("gate_failed") else "pass"
        out.setdefault((v, str(r["reason"])), []).append(
            str(r["trial"]) if r.get("trial") is not None else str(r["run_id"]))
    return out


def _runs_cell(rs: Sequence[dict[str, Any]], side: str) -> str:
    out = ['<ul class="runs">']
    for r in rs:
        v = "pass" if r["success"] and not r.get("gate_failed") else "gate" if r["success"] else "fail"
        label = {"pass": "pass", "gate": "pass, gate failed", "fail": "fail"}[v]
        rs = r.get("reasons") or [r["reason"]]
        text = e(rs[0]) if len(rs) == 1 else (
            '<ol class="reasons">' + "".join(f"<li>{e(x)}</li>" for x in rs) + "</ol>")
        out.append(f'<li class="run-{v}" data-side="{side}"><span class="badge {v}">{label}</span> '
                   f'<code>{e(r["run_id"])}</code> {text}</li>')
    out.append("</ul>")
    return "".join(out)


def _shift_table(rows: Sequence[CaseShift], kind: str) -> str:
    if not rows:
        return f'<p class="muted" id="no-{kind}">no case {kind}</p>'
    h = [f'<table class="shifts" id="{kind}-table"><thead><tr><th>case</th><th>A</th><th>B</th>'
         '<th>runs in A</th><th>runs in B</th></tr></thead><tbody>']
    for s in rows:
        h.append(f'<tr class="shift {kind}" data-case="{e(s.case_id)}"><td>{e(s.case_id)}</td>'
                 f'<td class="num">{s.a_successes}/{s.a_trials}</td>'
                 f'<td class="num">{s.b_successes}/{s.b_trials}</td>'
                 f'<td class="side">{_runs_cell(s.a_runs, "A")}</td>'
                 f'<td class="side">{_runs_cell(s.b_runs, "B")}</td></tr>')
    h.append("</tbody></table>")
    return "".join(h)


def compare_to_html(cmp: Comparison, shifts: Sequence[CaseShift], a: Scorecard, b: Scorecard, *,
                    a_name: str = "A", b_name: str = "B", overridden: Sequence[str] = (),
                    title: str = "trajcheck comparison") -> str:
    """The comparison as one HTML document (UTF-8; inline CSS and SVG, no script, no link
    to anything outside the file). ``a``/``b``: the two scorecards (their pass^k curves are
    drawn side by side); ``a_name``/``b_name``: how to name them (file paths)."""
    from ..aggregate.paired_cases import improved, regressed

    reg, imp = regressed(list(shifts)), improved(list(shifts))
    h = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
         f'<meta name="viewport" content="width=device-width"><title>{e(title)}</title>'
         f"<style>{CSS}</style></head><body><h1>{e(title)}</h1>",
         f'<p class="muted">A: <code id="name-a">{e(a_name)}</code> &middot; B: <code id="name-b">'
         f'{e(b_name)}</code> &middot; <span id="n-shared">{cmp.n_cases}</span> shared cases '
         f'&middot; seed {e(cmp.meta.get("seed"))}</p>']
    if overridden:
        h.append('<div class="warning" id="override-warning"><strong>Compared despite:</strong><ul>'
                 + "".join(f"<li>{e(m)}</li>" for m in overridden)
                 + "</ul>A paired test over different case definitions or trial counts compares "
                   "different tests; read these figures with that in mind.</div>")
    h.append('<h2>Paired figures (B - A)</h2><div class="grid"><div class="card">')
    h.append('<table id="deltas"><thead><tr><th>metric</th><th>A</th><th>B</th><th>B - A</th>'
             '<th>95% interval</th><th>p</th><th>test</th></tr></thead><tbody>')
    for d in cmp.deltas:
        m = _mid(d.metric)
        sign = "up" if (d.lo or 0) > 0 else "down" if (d.hi or 0) < 0 else "flat"
        h.append(f'<tr class="delta {sign}"><th>{e(d.metric)}</th><td class="num">{fmt(d.a)}</td>'
                 f'<td class="num">{fmt(d.b)}</td><td class="num" id="delta-{m}">{fmt(d.delta)}</td>'
                 f'<td class="num" id="delta-{m}-ci">'
                 f'{f"[{fmt(d.lo)}, {fmt(d.hi)}]" if d.lo is not None else ""}</td>'
                 f'<td class="num" id="delta-{m}-p">{fmt_p(d.p_value)}</td>'
                 f'<td>{e(d.test or "") if d.p_value is not None else "paired bootstrap over cases"}</td></tr>')
    h.append("</tbody></table></div>")
    h.append(f'<div class="card">{svg_forest(cmp.deltas, title="B - A with 95% paired intervals")}</div>')
    series = []
    for sc, label, col in ((a, "A", "#64748b"), (b, "B", "#2563eb")):
        if sc.suite.pass_hat_k:
            series.append({"label": f"pass^k {label}", "color": col, "points": sc.suite.pass_hat_k,
                           "ci": sc.suite.pass_hat_k_ci})
    if series:
        h.append(f'<div class="card">{svg_curves(series, title="pass^k of A and B (95% bootstrap)")}</div>')
    h.append("</div>")
    for ids, label in ((cmp.only_a, "only in A"), (cmp.only_b, "only in B")):
        if ids:
            h.append(f'<p class="muted">{len(ids)} case(s) {label}, left out of every figure: '
                     f'{e(", ".join(ids))}</p>')
    h.append(f'<h2>Regressed cases (<span id="n-regressed">{len(reg)}</span>)</h2>')
    h.append('<p class="muted">success count in A and B; each run with its verdict and reason, '
             "A beside B, largest fall first</p>")
    h.append(_shift_table(reg, "regressed"))
    h.append(f'<h2>Improved cases (<span id="n-improved">{len(imp)}</span>)</h2>')
    h.append(_shift_table(imp, "improved"))
    same = len(shifts) - len(reg) - len(imp)
    h.append(f'<p class="muted"><span id="n-unchanged">{same}</span> shared case(s) with the same '
             "success rate in A and B</p>")
    h.append("</body></html>")
    return "".join(h)


__all__ = ["compare_to_html", "render_compare_terminal"]
