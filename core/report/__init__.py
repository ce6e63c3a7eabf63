"""Reports: what a person reads of a scorecard, with figures rounded only here.

- ``text``: the terminal (rich) and Markdown reports, and the display helpers (``fmt``,
  ``fmt_p``, ``cut``, ``plural``) the others share;
- ``html``: the single-file HTML report (``to_html``), with ``runs`` (the runs table, the
  case x trial grid and each run's drill-down) and ``assets`` (its CSS and script);
- ``compare``: two scorecards side by side, in the terminal and as HTML.

The text report's names are importable from ``trajcheck.report`` itself.
"""

from .text import (
    COMPOSITE_GATE,
    FAILING_SHOWN,
    METHOD_LABELS,
    ORDERING,
    PROBLEMS_SHOWN,
    REASON_CHARS,
    TASK_FAILED,
    category_rows,
    cut,
    failing_runs,
    failing_title,
    flagged_runs,
    fmt,
    fmt_ci,
    fmt_est,
    fmt_est_m,
    fmt_p,
    headline_rows,
    method_label,
    ordering_violations,
    plural,
    render_problems,
    render_terminal,
    to_markdown,
)

__all__ = ["COMPOSITE_GATE", "FAILING_SHOWN", "METHOD_LABELS", "ORDERING", "PROBLEMS_SHOWN",
           "REASON_CHARS", "TASK_FAILED", "category_rows", "cut", "failing_runs", "failing_title",
           "flagged_runs", "fmt", "fmt_ci", "fmt_est", "fmt_est_m", "fmt_p", "headline_rows",
           "method_label", "ordering_violations", "plural", "render_problems", "render_terminal",
           "to_markdown"]
