"""What the scoring commands (``eval``, ``run``) print and write: the ``error:`` exit of bad
input (``fail``, exit 2), the scorecard tables, the report files and the CI outputs."""

from __future__ import annotations

from typing import Any, NoReturn

import click
from rich.markup import escape

from ..textsafe import visible


def fail(message: object, err: Any = None) -> NoReturn:
    """Print ``error: <message>`` on stderr (``err``, a rich Console, or a new stderr one) and
    exit with code 2, the exit code of bad input in every command. The message is printed
    as text, not as rich markup."""
    from rich.console import Console

    con = err if err is not None else Console(stderr=True)
    con.print(f"[red]error:[/red] {escape(visible(message))}", markup=True, highlight=False, soft_wrap=True)
    raise SystemExit(2) from None


def k_error(k_spec: str | None, e: Any, err: Any) -> NoReturn:
    """Fail (exit 2) for a ``--k`` above the runs some case has, naming the k the user typed."""
    typed = f"--k {k_spec}" if k_spec else f"k={e.k}"
    fail(f"{typed} asks for pass^k/pass@k up to k={e.k}, but case {e.case_id!r} has only "
          f"{e.n} run(s): k cannot exceed the runs of any case (n >= k); use --k {e.n} or less",
          err)


def show_scorecard(sc: Any, quiet: bool, json_out: str | None, html_out: str | None, err: Any) -> None:
    """Print the scorecard on stdout, or, with ``-q``, only its problems on ``err`` (stderr).
    The "... and N more" hints name the JSON/HTML files being written, else the options."""
    from rich.console import Console

    from ..report import render_problems, render_terminal

    full = [p for p in (json_out, html_out) if p]
    if not quiet:
        render_terminal(sc, Console(), full_reports=full)
    else:
        render_problems(sc.problems, err, full_reports=full)


def show_judges(sc: Any, quiet: bool) -> None:
    """Print the judge table and the judge's usage (nothing without ``meta["judges"]``)."""
    if not quiet and sc.meta.get("judges"):
        from ..judges.report import render_terminal_judges

        render_terminal_judges(sc)


def write_reports(sc: Any, json_out: str | None, md_out: str | None, html_out: str | None,
                   err: Any = None) -> None:
    """Write the scorecard ``sc`` as JSON / Markdown / HTML to the paths given (None = skip),
    printing ``wrote <path>`` on ``err`` (a rich Console) for each file written."""
    from pathlib import Path

    from ..report import to_markdown

    written: list[str] = []
    if json_out:
        sc.write_json(json_out)
        written.append(json_out)
    if md_out:
        Path(md_out).write_text(to_markdown(sc), encoding="utf-8")
        written.append(md_out)
    if html_out:
        from ..report.html import to_html

        Path(html_out).write_text(to_html(sc), encoding="utf-8")
        written.append(html_out)
    if err is not None:
        for p in written:
            err.print(f"wrote {p}", markup=False, highlight=False, soft_wrap=True)


def ci_reports(sc: Any, junit_out: str | None, annotations: str | None,
                codequality_out: str | None, source: str | None, err: Any) -> None:
    """Write the JUnit XML / GitLab code-quality files asked for, print the annotations on
    stdout, and append the Markdown scorecard to ``$GITHUB_STEP_SUMMARY`` when it is set."""
    from ..report.ci import append_step_summary, github_annotations, write_gitlab_codequality

    if junit_out:
        from ..report.junit import write_junit

        write_junit(sc, junit_out)
        err.print(f"wrote {junit_out}", markup=False, highlight=False, soft_wrap=True)
    if codequality_out:
        write_gitlab_codequality(sc, codequality_out, path=source or "trajcheck")
        err.print(f"wrote {codequality_out}", markup=False, highlight=False, soft_wrap=True)
    if annotations == "github":
        for line in github_annotations(sc, file=source):
            click.echo(line)
    summary = append_step_summary(sc)
    if summary:
        err.print(f"appended the scorecard to the job summary ({summary})", markup=False,
                  highlight=False, soft_wrap=True)
