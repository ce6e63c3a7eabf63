"""The judge summary (``Scorecard.meta["judges"]``) in the terminal, HTML and Markdown reports."""

from __future__ import annotations

import html
from typing import Any

from .run import table_rows


def render_terminal_judges(sc: Any, console: Any = None) -> None:
    """Print the per-check judge pass rates of ``sc`` (nothing when it has none)."""
    summary = sc.meta.get("judges")
    if not summary:
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = console or Console()
    model = summary["model"].get("model", "?")
    t = Table(title=Text(f"Judge checks ({model}, rubric {summary['rubric_version']}, "
                    f"{summary['runs']} runs)"))
    for col in ("judge", "check", "passed", "rate [95% Wilson]"):
        t.add_column(col)
    for row in table_rows(summary):
        t.add_row(*(Text(x) for x in row))  # data shown literally, never as markup
    con.print(t)
    errs = summary.get("errors") or {}
    con.print(f"judge errors: {sum(errs.values())}; replies from cache: "
              f"{summary.get('cached_replies', 0)}", markup=False, highlight=False)
    con.print(usage_line(summary), markup=False, highlight=False, soft_wrap=True)


def usage_line(summary: Any) -> str:
    """One line on the judge's own tokens and cost (``summary["usage"]``), said to be apart
    from the agent's figures."""
    u = summary.get("usage")
    if not u:
        return "judge usage: not reported by this judge adapter (the agent's usage is shown apart)"
    if u.get("cost_usd") is None:
        cost = "cost unknown (give --judge-price IN,OUT)"
    else:
        src = "from --judge-price" if u.get("cost_source") == "price" else "as the server reported"
        cost = f"cost ${u['cost_usd']:.6f} ({src})"
    return (f"judge usage (not counted in the agent's): {u.get('calls', 0)} call(s), "
            f"{u.get('input_tokens', 0):,} input + {u.get('output_tokens', 0):,} output tokens, {cost}")


def markdown_judges(sc: Any) -> str:
    """The "Judge checks" section of the Markdown report ('' when the scorecard has none)."""
    summary = sc.meta.get("judges")
    if not summary:
        return ""
    from ..textsafe import md as cell  # data shown literally in a table cell

    errs = sum((summary.get("errors") or {}).values())
    lines = ["## Judge checks", "",
             f"Model {cell(str(summary['model'].get('model')))}, rubric "
             f"{cell(str(summary['rubric_version']))}, {summary['runs']} runs, judge errors {errs}, "
             f"replies from cache {summary.get('cached_replies', 0)}.", "",
             "| judge | check | passed | rate [95% Wilson] |", "| --- | --- | ---: | ---: |"]
    for row in table_rows(summary):
        lines.append("| " + " | ".join(cell(x) for x in row) + " |")
    lines += ["", usage_line(summary) + ".", ""]
    return "\n".join(lines)


def html_judges(sc: Any) -> str:
    """The "Judge checks" section of the HTML report ('' when the scorecard has none)."""
    summary = sc.meta.get("judges")
    if not summary:
        return ""
    e = html.escape
    h = [f"<h2>Judge checks</h2><p class=\"muted\">model {e(str(summary['model'].get('model')))}"
         f" &middot; rubric {e(str(summary['rubric_version']))} &middot; {summary['runs']} runs"
         f" &middot; judge errors {sum((summary.get('errors') or {}).values())}</p>",
         "<table><tr><th>judge</th><th>check</th><th>passed</th><th>rate [95% Wilson]</th></tr>"]
    for judge, check, passed, rate in table_rows(summary):
        h.append(f'<tr><td>{e(judge)}</td><th>{e(check)}</th><td class="num">{e(passed)}</td>'
                 f'<td class="num" id="judge-{e(judge)}-{e(check).replace(" ", "-")}">{e(rate)}</td></tr>')
    h.append("</table>")
    h.append(f'<p class="muted" id="judge-usage">{e(usage_line(summary))}</p>')
    return "".join(h)


__all__ = ["html_judges", "markdown_judges", "render_terminal_judges", "usage_line"]
