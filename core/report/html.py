"""Single-file HTML report of a ``Scorecard``: no external resources, one small inline
script (``assets.JS``) that adds sorting, filtering and link-opening to a page that
is complete without it.

Plots are inline SVG drawn here in Python: the pass^k curve with its bootstrap intervals
(and the recorded reward's curve when present), the per-tool confusion of expected vs
called tools, the routing confusion heatmap when routing data exists, and the
distributions of steps / tokens / cost / latency over runs, and the success of each case.
Then the case x trial grid, the table of every run and each run's drill-down
(``runs``: expected calls beside the calls made, reasons, violations, steps), linked
by ``#run-<id>`` anchors.

Every figure carries an ``id`` (``suite-task-success-rate``, ``pass-hat-k-1``,
``recorded-pass-hat-k-1``, ``agreement-ours_pass_recorded_pass`` ...) with the text the JSON
holds, so a test can read the rendered DOM back and compare.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

from .scorecard import Scorecard
from .text import (
    ORDERING,
    failing_title,
    flagged_runs,
    fmt,
    fmt_ci,
    headline_rows,
    trials_note,
)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #dde;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d6dbe4;padding:4px 8px;text-align:left;vertical-align:top;font-size:.92em}
th{background:#f2f4f8}.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#17803d;font-weight:600}.fail{color:#b42318;font-weight:600}
.grid{display:flex;flex-wrap:wrap;gap:18px}.card{border:1px solid #e3e6ee;border-radius:6px;padding:10px;background:#fff}
.step{border-left:3px solid #ccd;margin:4px 0;padding:2px 8px;white-space:pre-wrap;font-size:.88em}
.step.user{border-color:#3b82f6}.step.assistant,.step.final_response{border-color:#10b981}
.step.tool_call{border-color:#f59e0b}.step.tool_result{border-color:#8b5cf6}.step.system{border-color:#9ca3af;color:#555}
.err{color:#b42318}.muted{color:#667}code{background:#f4f5f7;padding:0 3px}
td.run,td.kind{white-space:nowrap}
details{margin:6px 0}summary{cursor:pointer}
.warning{border:2px solid #b42318;background:#fef3f2;color:#7a271a;padding:8px 12px;border-radius:6px;margin:12px 0}
.badge{display:inline-block;border-radius:3px;padding:0 5px;font-size:.85em;font-weight:600;color:#fff}
.badge.pass{background:#17803d}.badge.fail{background:#b42318}.badge.gate{background:#b54708}
ul.runs{margin:0;padding-left:1em}ul.runs li{margin:2px 0}td.side{max-width:480px;overflow-wrap:anywhere}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)


# ------------------------------------------------------------------ SVG primitives


def svg_curves(series: Sequence[dict[str, Any]], *, title: str, width: int = 460,
               height: int = 280) -> str:
    """A line chart over k in [0, 1]: each series ``{label, color, points: {k: y},
    ci: {k: (lo, hi)}}`` is drawn as a polyline with error bars."""
    ks = sorted({k for s in series for k in s["points"]})
    if not ks:
        return ""
    ml, mr, mt, mb = 48, 14, 28, 40
    pw, ph = width - ml - mr, height - mt - mb
    kmin, kmax = ks[0], ks[-1]

    def X(k: float) -> float:
        return ml + (pw / 2 if kmax == kmin else (k - kmin) / (kmax - kmin) * pw)

    def Y(v: float) -> float:
        return mt + (1 - v) * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="{_e(title)}">',
             f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="600">{_e(title)}</text>']
    for i in range(6):
        v = i / 5
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{ml - 6}" y="{Y(v) + 4:.1f}" text-anchor="end" font-size="11">{v:.1f}</text>')
    for k in ks:
        parts.append(f'<text x="{X(k):.1f}" y="{mt + ph + 16}" text-anchor="middle" font-size="11">{k}</text>')
    parts.append(f'<text x="{ml + pw / 2}" y="{height - 6}" text-anchor="middle" font-size="11">k (trials)</text>')
    parts.append(f'<line x1="{ml}" x2="{ml}" y1="{mt}" y2="{mt + ph}" stroke="#555"/>')
    parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{mt + ph}" y2="{mt + ph}" stroke="#555"/>')
    for si, s in enumerate(series):
        col = s["color"]
        dx = (si - (len(series) - 1) / 2) * 5
        pts = sorted(s["points"].items())
        poly = " ".join(f"{X(k) + dx:.1f},{Y(v):.1f}" for k, v in pts if v is not None)
        parts.append(f'<polyline points="{poly}" fill="none" stroke="{col}" stroke-width="2"/>')
        for k, v in pts:
            if v is None:
                continue
            ci = (s.get("ci") or {}).get(k)
            if ci:
                parts.append(f'<line x1="{X(k) + dx:.1f}" x2="{X(k) + dx:.1f}" y1="{Y(ci[0]):.1f}" '
                             f'y2="{Y(ci[1]):.1f}" stroke="{col}" stroke-width="1.5" opacity="0.7"/>')
            parts.append(f'<circle cx="{X(k) + dx:.1f}" cy="{Y(v):.1f}" r="3.5" fill="{col}">'
                         f'<title>{_e(s["label"])} k={k}: {fmt(v)} {fmt_ci(ci)}</title></circle>')
        ly = mt + 12 + 16 * si
        parts.append(f'<rect x="{ml + 10}" y="{ly - 9}" width="10" height="10" fill="{col}"/>')
        parts.append(f'<text x="{ml + 24}" y="{ly}" font-size="11">{_e(s["label"])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_heatmap(labels_rows: Sequence[str], labels_cols: Sequence[str], matrix: Sequence[Sequence[float]],
                *, title: str, row_title: str, col_title: str, cell: int = 34) -> str:
    """A count heatmap with the count written in each non-zero cell."""
    if not labels_rows or not labels_cols:
        return ""
    lw = 8 + 7 * max(len(str(x)) for x in labels_rows)
    th = 8 + 6 * max(len(str(x)) for x in labels_cols)
    caption = f"rows: {row_title}; columns: {col_title}"
    # column labels are rotated -55 degrees: each reaches cos(55) * its length (about 6.5 px
    # per 11 px character) to the right of its column's centre
    reach = max(lw + j * cell + cell / 2 + 0.574 * 6.5 * len(str(c)) for j, c in enumerate(labels_cols))
    # wide enough for the grid, the rotated labels, the title and the caption
    width = max(lw + cell * len(labels_cols) + 20, int(reach) + 12,
                12 + int(6.2 * len(caption)), 12 + int(7.5 * len(title)))
    height = 30 + th + cell * len(labels_rows) + 26
    vmax = max([v for row in matrix for v in row] + [1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_e(title)}">',
             f'<text x="4" y="16" font-size="13" font-weight="600">{_e(title)}</text>']
    y0 = 30 + th
    for j, c in enumerate(labels_cols):
        x = lw + j * cell + cell / 2
        parts.append(f'<text transform="translate({x:.1f},{y0 - 6}) rotate(-55)" font-size="11">{_e(c)}</text>')
    for i, r in enumerate(labels_rows):
        y = y0 + i * cell
        parts.append(f'<text x="{lw - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" font-size="11">{_e(r)}</text>')
        for j, _c in enumerate(labels_cols):
            v = matrix[i][j]
            a = 0.0 if v == 0 else 0.15 + 0.85 * (v / vmax)
            parts.append(f'<rect x="{lw + j * cell}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                         f'fill="rgba(37,99,235,{a:.3f})" stroke="#e5e7eb"><title>{_e(r)} / '
                         f'{_e(labels_cols[j])}: {fmt(v)}</title></rect>')
            if v:
                colr = "#fff" if v / vmax > 0.55 else "#111"
                parts.append(f'<text x="{lw + j * cell + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                             f'text-anchor="middle" font-size="11" fill="{colr}">{fmt(v)}</text>')
    parts.append(f'<text x="4" y="{height - 8}" font-size="11" fill="#555">{_e(caption)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_histogram(ok: Sequence[float], bad: Sequence[float], *, title: str, unit: str = "",
                  width: int = 340, height: int = 200, bins: int = 12) -> str:
    """Stacked histogram of a per-run figure: successful runs green, failed runs red."""
    vals = [v for v in list(ok) + list(bad) if v is not None and math.isfinite(v)]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    nb = max(1, min(bins, len(set(vals))))
    w = (hi - lo) / nb
    if not math.isfinite(w):  # the span overflows a float: each end divided first
        w = hi / nb - lo / nb
    if not w > 0:  # one value (lo + 1 == lo at 1e17): one bin holding every run
        nb, w = 1, 0.0

    def counts(xs: Sequence[float]) -> list[int]:
        c = [0] * nb
        for v in xs:
            if v is not None and math.isfinite(v):
                x = (v - lo) / w if w else 0.0
                if not math.isfinite(x):  # v - lo overflows
                    x = v / w - lo / w
                c[min(nb - 1, int(x))] += 1
        return c

    def edge(i: int) -> float:  # a bin's bound, a mean of the ends (lo + i * w can overflow)
        return hi if i >= nb else lo * (1 - i / nb) + hi * (i / nb) if w else lo

    co, cb = counts(ok), counts(bad)
    cmax = max(a + b for a, b in zip(co, cb)) or 1
    ml, mt, mb = 34, 24, 34
    pw, ph = width - ml - 10, height - mt - mb
    bw = pw / nb
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_e(title)}">',
             f'<text x="{width / 2}" y="15" text-anchor="middle" font-size="12" font-weight="600">{_e(title)}</text>']
    for i in range(nb):
        x = ml + i * bw
        h1 = co[i] / cmax * ph
        h2 = cb[i] / cmax * ph
        parts.append(f'<rect x="{x:.1f}" y="{mt + ph - h1:.1f}" width="{bw - 1:.1f}" height="{h1:.1f}" fill="#16a34a">'
                     f'<title>{fmt(edge(i))}-{fmt(edge(i + 1))}{unit}: {co[i]} successful</title></rect>')
        parts.append(f'<rect x="{x:.1f}" y="{mt + ph - h1 - h2:.1f}" width="{bw - 1:.1f}" height="{h2:.1f}" fill="#dc2626">'
                     f'<title>{fmt(edge(i))}-{fmt(edge(i + 1))}{unit}: {cb[i]} failed</title></rect>')
    parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{mt + ph}" y2="{mt + ph}" stroke="#555"/>')
    parts.append(f'<text x="{ml}" y="{mt + ph + 14}" font-size="10">{fmt(lo)}</text>')
    parts.append(f'<text x="{ml + pw}" y="{mt + ph + 14}" font-size="10" text-anchor="end">{fmt(hi)}{_e(unit)}</text>')
    parts.append(f'<text x="{ml - 4}" y="{mt + 8}" font-size="10" text-anchor="end">{cmax}</text>')
    parts.append(f'<text x="{ml}" y="{height - 4}" font-size="10" fill="#555">green: successful runs, red: failed</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_case_success(cases: Sequence[tuple[str, int, int]], *, width: int = 460,
                     height: int = 280) -> str:
    """Per-case success: one bar per case (successes / trials), sorted from the most to the
    least successful, green at 1, red at 0, amber between (flaky cases)."""
    rows = sorted((c for c in cases if c[2]), key=lambda c: (-c[1] / c[2], c[0]))
    if not rows:
        return ""
    ml, mr, mt, mb = 40, 10, 28, 34
    pw, ph = width - ml - mr, height - mt - mb
    bw = pw / len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             'aria-label="success per case">',
             f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="600">'
             f"success per case ({len(rows)} cases, best first)</text>"]
    for i in range(6):
        v = i / 5
        y = mt + (1 - v) * ph
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>'
                     f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:.1f}</text>')
    for i, (cid, c, n) in enumerate(rows):
        rate = c / n
        col = "#16a34a" if c == n else "#dc2626" if c == 0 else "#d97706"
        hgt = max(rate * ph, 1.5)
        parts.append(f'<rect class="case-bar" x="{ml + i * bw:.1f}" y="{mt + ph - hgt:.1f}" '
                     f'width="{max(bw - 1, 0.5):.1f}" height="{hgt:.1f}" fill="{col}">'
                     f"<title>{_e(cid)}: {c}/{n}</title></rect>")
    parts.append(f'<text x="{ml}" y="{height - 8}" font-size="10" fill="#555">green: every trial '
                 "passed, amber: some (flaky), red: none</text></svg>")
    return "".join(parts)


def svg_forest(deltas: Sequence[Any], *, title: str, width: int = 460, row: int = 26) -> str:
    """A forest plot of paired differences: one row per ``MetricDelta`` (``metric``,
    ``delta``, ``lo``, ``hi``), a dot at the difference and a bar over its interval, on a
    shared axis that always includes 0 (drawn as a dashed line)."""
    rows = [d for d in deltas if d.delta is not None]
    if not rows:
        return ""
    vals = [0.0] + [float(v) for d in rows for v in (d.delta, d.lo, d.hi) if v is not None]
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.08 or 0.1
    lo, hi = lo - pad, hi + pad
    ml, mr, mt = 120, 16, 30
    pw = width - ml - mr
    height = mt + row * len(rows) + 30

    def X(v: float) -> float:
        return ml + (v - lo) / (hi - lo) * pw

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_e(title)}">',
             f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="600">{_e(title)}</text>',
             f'<line x1="{X(0):.1f}" x2="{X(0):.1f}" y1="{mt - 4}" y2="{mt + row * len(rows)}" '
             'stroke="#555" stroke-dasharray="4 3"/>']
    for i, d in enumerate(rows):
        y = mt + row * i + row / 2
        col = ("#16a34a" if d.lo is not None and d.lo > 0 else "#dc2626" if d.hi is not None and d.hi < 0
               else "#2563eb")
        parts.append(f'<text x="{ml - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{_e(d.metric)}</text>')
        if d.lo is not None and d.hi is not None:
            parts.append(f'<line x1="{X(d.lo):.1f}" x2="{X(d.hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                         f'stroke="{col}" stroke-width="2"/>')
        parts.append(f'<circle cx="{X(d.delta):.1f}" cy="{y:.1f}" r="4" fill="{col}"><title>'
                     f'{_e(d.metric)}: {fmt(d.delta)} {fmt_ci((d.lo, d.hi) if d.lo is not None else None)}'
                     '</title></circle>')
    yb = mt + row * len(rows) + 14
    for v in sorted({round(lo + pad, 4), 0.0, round(hi - pad, 4)}):
        parts.append(f'<text x="{X(v):.1f}" y="{yb}" text-anchor="middle" font-size="10">{fmt(round(v, 3))}</text>')
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------ page


def disagreement_reasons(sc: Scorecard, d: Any) -> str:
    """A disagreement's reason as HTML: the run's full reason list when it has more than one
    (``runs.reasons``; never "(and N more)"), else the recorded one-line reason."""
    from .runs import reasons

    try:
        rs = reasons(sc.run(d.run_id))
    except KeyError:
        rs = []
    if len(rs) <= 1:
        return _e(d.reason)
    tail = d.reason.split("; recorded reward", 1)
    rec = f"; recorded reward{tail[1]}" if len(tail) == 2 else ""
    return ("<ol class=\"reasons\">" + "".join(f"<li>{_e(x)}</li>" for x in rs) + "</ol>"
            + (f'<span class="muted">{_e(rec[2:])}</span>' if rec else ""))


def _routing_svg(rt: dict[str, Any]) -> str:
    labels = rt.get("labels")
    matrix = rt.get("matrix") or rt.get("confusion")
    if isinstance(matrix, dict) and labels is None:
        labels = sorted({str(a) for a in matrix} | {str(b) for row in matrix.values() for b in row})
        matrix = [[(matrix.get(a) or {}).get(b, 0) for b in labels] for a in labels]
    if not labels or not isinstance(matrix, list):
        return ""
    return svg_heatmap([str(x) for x in labels], [str(x) for x in labels], matrix,
                       title="routing confusion", row_title="expected route",
                       col_title="actual route")


def to_html(sc: Scorecard, *, title: str = "trajcheck report") -> str:
    """The whole report as one HTML document (UTF-8 text; one inline script that only adds
    sorting, filtering and link-opening to a page complete without it; no external links)."""
    from .assets import CSS as RUNS_CSS
    from .assets import JS
    s = sc.suite
    rr = sc.recorded_reward
    h: list[str] = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
                    f"<title>{_e(title)}</title><style>{_CSS}{RUNS_CSS}</style></head><body>",
                    f"<h1>{_e(title)}</h1>"]
    if sc.meta.get("source"):
        h.append(f'<p class="muted">source: <code id="meta-source">{_e(sc.meta["source"])}</code> '
                 f'&middot; trajcheck {_e(sc.meta.get("trajcheck_version", ""))} &middot; bootstrap '
                 f'seed {_e(sc.meta.get("seed"))}</p>')

    h.append("<h2>Summary</h2><table>")
    ids = {"task success rate": "suite-task-success-rate", "mean tool-call F1": "suite-mean-f1",
           "mean composite": "suite-mean-composite",
           "runs with a forbidden call": "suite-forbidden-rate",
           "runs with a duplicate call": "suite-duplicate-rate",
           "false-success rate (fault runs)": "suite-false-success-rate"}
    tsv = fmt(s.task_success_rate.value)
    for label, v in headline_rows(sc):
        cell = _e(v)
        if label == "task success rate" and v.startswith(tsv):
            # the value alone carries an id (read back by tests); shown once, in this row;
            # the interval method is in the row text (report.headline_rows)
            cell = f'<span id="task-success-value">{_e(tsv)}</span>{_e(v[len(tsv):])}'
        h.append(f'<tr><th>{_e(label)}</th><td id="{ids.get(label, "row-" + _slug(label))}">{cell}</td></tr>')
    h.append("</table>")
    from ..judges.report import html_judges
    from .text import category_rows

    h.append(html_judges(sc))
    cats = category_rows(sc)
    if cats:
        h.append("<h2>Task success per category</h2><table><tr><th>category</th><th>runs</th>"
                 "<th>successes</th><th>rate</th></tr>")
        for cname, cruns, csucc, crate in cats:
            h.append(f'<tr><th>{_e(cname)}</th><td class="num">{_e(cruns)}</td><td class="num">{_e(csucc)}</td>'
                     f'<td class="num" id="category-{_slug(cname)}">{_e(crate)}</td></tr>')
        h.append("</table>")

    if s.pass_hat_k:
        h.append("<h2>Reliability over trials</h2><div class=\"grid\"><div class=\"card\">")
        series = [{"label": "pass^k (trajcheck)", "color": "#2563eb", "points": s.pass_hat_k,
                   "ci": s.pass_hat_k_ci},
                  {"label": "pass@k (trajcheck)", "color": "#9333ea", "points": s.pass_at_k,
                   "ci": s.pass_at_k_ci}]
        if rr is not None and rr.pass_hat_k:
            series.append({"label": "pass^k (recorded reward)", "color": "#ea580c",
                           "points": rr.pass_hat_k, "ci": rr.pass_hat_k_ci})
        h.append(svg_curves(series, title="pass^k and pass@k with 95% bootstrap intervals"))
        bars = svg_case_success([(c.case_id, c.successes, c.trials) for c in sc.cases])
        if bars:
            h.append(f'</div><div class="card">{bars}')
        h.append("</div><div class=\"card\"><table><tr><th>k</th><th>pass^k</th><th>95% CI</th>"
                 "<th>pass@k</th><th>95% CI</th>" + ("<th>recorded pass^k</th><th>95% CI</th>" if rr else "")
                 + "</tr>")
        for k in sorted(s.pass_hat_k):
            row = (f'<tr><td class="num">{k}</td><td class="num" id="pass-hat-k-{k}">{fmt(s.pass_hat_k[k])}</td>'
                   f'<td>{fmt_ci(s.pass_hat_k_ci.get(k))}</td>'
                   f'<td class="num" id="pass-at-k-{k}">{fmt(s.pass_at_k.get(k))}</td>'
                   f'<td>{fmt_ci(s.pass_at_k_ci.get(k))}</td>')
            if rr:
                row += (f'<td class="num" id="recorded-pass-hat-k-{k}">{fmt(rr.pass_hat_k.get(k))}</td>'
                        f'<td>{fmt_ci(rr.pass_hat_k_ci.get(k))}</td>')
            h.append(row + "</tr>")
        h.append("</table>")
        note = trials_note(sc)
        if note:
            h.append(f'<p class="note" id="trials-note">{_e(note)}</p>')
        h.append("</div></div>")

    if rr is not None:
        m = rr.matrix
        h.append(f'<h2>Agreement with the recorded reward: <span id="agreement-agree">{rr.agree}</span>/'
                 f'<span id="agreement-n">{rr.n}</span></h2>')
        h.append("<table><tr><th></th><th>recorded pass</th><th>recorded fail</th></tr>")
        for ours in ("pass", "fail"):
            h.append(f"<tr><th>trajcheck {ours}</th>")
            for rec in ("pass", "fail"):
                key = f"ours_{ours}_recorded_{rec}"
                h.append(f'<td class="num" id="agreement-{key}">{m.get(key, 0)}</td>')
            h.append("</tr>")
        h.append("</table>")
        if rr.disagreements:
            h.append("<table><tr><th>run</th><th>trajcheck</th><th>recorded</th><th>reason</th></tr>")
            for d in rr.disagreements:
                h.append(f'<tr class="disagreement"><td class="run"><a href="#run-{_slug(d.run_id)}">{_e(d.run_id)}</a></td>'
                         f'<td class="{"pass" if d.ours else "fail"}">{"pass" if d.ours else "fail"}</td>'
                         f'<td class="{"pass" if d.recorded else "fail"}">{"pass" if d.recorded else "fail"}</td>'
                         f"<td>{disagreement_reasons(sc, d)}</td></tr>")
            h.append("</table>")
        for name, ca in rr.checks.items():
            h.append(f"<h3>Agreement of trajcheck's writes verdict with the recorded {_e(name)}: "
                     f'<span id="check-{_slug(name)}-agree">{ca.agree}</span>/'
                     f'<span id="check-{_slug(name)}-n">{ca.n}</span></h3>')
            if ca.disagreements:
                h.append(f"<table><tr><th>run</th><th>trajcheck writes</th><th>recorded {_e(name)}</th>"
                         "<th>reason</th></tr>")
                for d in ca.disagreements:
                    h.append(f'<tr class="disagreement"><td class="run"><a href="#run-{_slug(d.run_id)}">'
                             f'{_e(d.run_id)}</a></td><td>{"right" if d.ours else "wrong"}</td>'
                             f"<td>{d.recorded}</td><td>{_e(d.reason)}</td></tr>")
                h.append("</table>")

    tc = s.tool_confusion or {}
    if tc.get("labels") and len(tc["labels"]) > 1:
        h.append("<h2>Tools: expected vs called</h2><div class=\"card\">")
        h.append(svg_heatmap(tc["labels"], tc["labels"], tc["matrix"], title="per-tool confusion",
                             row_title=tc.get("rows", "expected"), col_title=tc.get("columns", "called")))
        h.append("</div>")
    if s.routing:
        svg = _routing_svg(s.routing)
        h.append("<h2>Routing</h2>")
        if s.routing.get("accuracy") is not None:
            h.append(f'<p>routing accuracy: <span id="routing-accuracy">{fmt(s.routing.get("accuracy"))}</span></p>')
        if svg:
            h.append(f'<div class="card">{svg}</div>')
        per = s.routing.get("per_class") or s.routing.get("per_label") or {}
        if per:
            h.append("<table><tr><th>route</th><th>precision</th><th>recall</th><th>F1</th>"
                     "<th>support</th></tr>")
            for lab, v in per.items():
                h.append(f'<tr class="route-row"><td>{_e(lab)}</td><td class="num">{fmt(v.get("precision"))}</td>'
                         f'<td class="num">{fmt(v.get("recall"))}</td><td class="num">{fmt(v.get("f1"))}</td>'
                         f'<td class="num">{_e(v.get("support"))}</td></tr>')
            h.append("</table>")

    eff = s.efficiency or {}
    if eff:
        # figures as the scorecard holds them (metrics.efficiency, DESIGN.md policy)
        h.append(f'<h2>Efficiency over successful runs (<span id="eff-n-success">{_e(eff.get("n_success"))}'
                 f'</span> of {_e(eff.get("n_runs"))})</h2>')
        h.append("<table><tr><th>figure</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th>"
                 "<th>min</th><th>max</th><th>n</th></tr>")
        for key, label in (("steps", "agent steps"), ("tool_calls", "tool calls"), ("tokens", "tokens"),
                           ("cost_usd", "cost (USD)"), ("latency_ms", "latency (ms)")):
            dist = eff.get(key)
            if not isinstance(dist, dict):
                continue
            digits = 8 if key == "cost_usd" else 4
            h.append(f"<tr><th>{_e(label)}</th>" + "".join(
                f'<td class="num" id="eff-{key}-{q}">{fmt(dist.get(q), digits)}</td>'
                for q in ("mean", "p50", "p95", "p99", "min", "max"))
                + f'<td class="num">{_e(dist.get("n"))}</td></tr>')
        h.append("</table>")
        if eff.get("total_cost_usd") is not None or eff.get("cost_per_success") is not None:
            # only when the runs record costs (no "n/a USD" line for sources without them)
            h.append(f'<p>cost per successful task (cost of all runs / successful runs): '
                     f'<span id="eff-cost-per-success">{fmt(eff.get("cost_per_success"), 8)}</span> USD '
                     f'(total <span id="eff-total-cost">{fmt(eff.get("total_cost_usd"), 8)}</span> USD)</p>')

    dists = []
    for key, label, unit in (("steps", "steps per run", ""), ("tokens", "tokens per run", ""),
                             ("cost_usd", "cost per run", " USD"), ("latency_ms", "latency per run", " ms")):
        ok = [float(getattr(r, key)) for r in sc.runs if r.success and getattr(r, key) is not None]
        bad = [float(getattr(r, key)) for r in sc.runs if not r.success and getattr(r, key) is not None]
        svg = svg_histogram(ok, bad, title=label, unit=unit)
        if svg:
            dists.append(f'<div class="card">{svg}</div>')
    if dists:
        h.append("<h2>Cost, latency and length</h2><div class=\"grid\">" + "".join(dists) + "</div>")

    from .runs import case_grid, run_details, runs_controls, runs_table

    flagged = flagged_runs(sc)
    n_failing = sum(1 for row in flagged if row[1] != ORDERING)
    if sc.runs:
        h.append(f'<h2 id="cases-h">Cases x trials ({len(sc.cases)} cases)</h2><p class="muted">each '
                 "cell is one run (green: task passed, red: failed, amber: passed but failed the "
                 "composite gate) and links to it; pass^k per case is C(c,k)/C(n,k)</p>"
                 f'<div class="grid-wrap">{case_grid(sc)}</div>')
        listed = (f"{len(sc.runs)}" if len(sc.runs) == s.n_runs else
                  f'<span id="n-listed">{len(sc.runs)}</span> of {s.n_runs} listed, failing first; '
                  f"{s.n_runs - s.n_successes} of all failed their task")
        h.append(f'<h2 id="runs-h">Runs ({listed}; <span id="n-failing">{n_failing}</span> '
                 f"failing{' listed' if len(sc.runs) != s.n_runs else ''})</h2>")
        if flagged:
            h.append(f'<p class="muted">{_e(failing_title(sc, flagged))}; "gate failed": the task '
                     "succeeded but the composite score is below its threshold (pass^k counts task "
                     "success only). Click a header to sort; open a run for its calls, reasons and "
                     "steps.</p>")
        h.append(runs_controls(sc))
        h.append(runs_table(sc))
        h.append('<h2 id="details-h">Run details</h2>')
        h.append(run_details(sc.runs))
    if sc.problems:
        h.append(f"<h2>Problems ({len(sc.problems)})</h2><ul>")
        h.extend(f"<li>{_e(p)}</li>" for p in sc.problems)
        h.append("</ul>")
    h.append(f"<script>{JS}</script></body></html>")
    return "".join(h)
