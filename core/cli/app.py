"""The ``trajcheck`` command (click for parsing, rich for output).

Each subcommand is a thin wrapper: it parses options, calls library functions, and prints.
Heavy modules are imported inside the command so ``trajcheck --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click
from rich.markup import escape

from .. import __version__
from ..textsafe import visible


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trajcheck")
def main() -> None:
    """Score AI agents on their tool use: calls, trajectories, final state, reliability.

    Exit codes of every command: 0 ok, 1 a --fail-under gate failed, 2 bad input (the
    message starts with "error:" on stderr); run also exits 130 when interrupted.
    """


# Subcommands are defined below, one function each (inspect, eval, run, compare).
# Shared pieces: _fail (the one way to report bad input), the option decorators
# (_format_option, _report_options, _semantic_options) and _write_reports/_gate.


def _fail(message: object, err: Any = None) -> NoReturn:
    """Print ``error: <message>`` on stderr (``err``, a rich Console, or a new stderr one) and
    exit with code 2, the exit code of bad input in every command. The message is printed
    as text, not as rich markup."""
    from rich.console import Console

    con = err if err is not None else Console(stderr=True)
    con.print(f"[red]error:[/red] {escape(visible(message))}", markup=True, highlight=False, soft_wrap=True)
    raise SystemExit(2) from None


def _parse_ks(spec: str | None) -> list[int] | None:
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


_F = TypeVar("_F", bound=Callable[..., Any])


def _match_context(semantic: bool, threshold: float | None, cases: object, err: Any) -> Any:
    """The MatchContext for ``--semantic [--semantic-threshold T]`` (``trajcheck.match.semantic``,
    imported here; MatcherError when the semantic extra is missing), else None. Without
    ``--semantic``, cases whose ``semantic`` matchers have no ``fallback`` raise MatcherError
    naming them, and those with one are scored by it (a note on ``err`` says so)."""
    from ..errors import MatcherError
    from ..match.semantic import check_available, semantic_context, semantic_uses

    if not semantic and threshold is None:
        cs = cases if isinstance(cases, (list, tuple)) else []
        uses = semantic_uses(cs, without_fallback=True)
        if uses:
            more = f" and {len(uses) - 3} more" if len(uses) > 3 else ""
            raise MatcherError(f"the cases use the 'semantic' matcher ({'; '.join(uses[:3])}{more}): "
                               "pass --semantic to score them with the offline embedding model "
                               "(the 'semantic' extra)")
        n_fb = len(semantic_uses(cs))
        if n_fb:
            err.print(f"note: {n_fb} 'semantic' argument check(s) scored by their fallback matcher; "
                      "pass --semantic to use the embedding model", highlight=False, soft_wrap=True)
        return None
    check_available()
    return semantic_context(threshold=threshold)


def _format_option(f: _F) -> _F:
    """``--format`` (shared by inspect and eval), passed to the function as ``trace_format``."""
    return click.option("--format", "trace_format", default="auto", show_default=True,
                        help="Trace format of TRACES (auto-detected per record by default).")(f)


def _error_pattern_option(f: _F) -> _F:
    """``--error-pattern REGEX`` (shared by inspect and eval), passed as ``error_pattern``."""
    return click.option("--error-pattern", "error_pattern", default=None, metavar="REGEX",
                        help="Mark a tool result failed when the source gives no error flag "
                             "(is_error unknown, e.g. OpenAI chat) and its output text matches "
                             "REGEX (re.search, case-sensitive unless the pattern says (?i)). "
                             "Never overrides a source's own error flag.")(f)


def _report_options(f: _F) -> _F:
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


def _ci_options(f: _F) -> _F:
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


def _ci_reports(sc: Any, junit_out: str | None, annotations: str | None,
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


def _write_reports(sc: Any, json_out: str | None, md_out: str | None, html_out: str | None,
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


def _show_scorecard(sc: Any, quiet: bool, json_out: str | None, html_out: str | None, err: Any) -> None:
    """Print the scorecard on stdout, or, with ``-q``, only its problems on ``err`` (stderr).
    The "... and N more" hints name the JSON/HTML files being written, else the options."""
    from rich.console import Console

    from ..report import render_problems, render_terminal

    full = [p for p in (json_out, html_out) if p]
    if not quiet:
        render_terminal(sc, Console(), full_reports=full)
    else:
        render_problems(sc.problems, err, full_reports=full)


def _k_error(k_spec: str | None, e: Any, err: Any) -> NoReturn:
    """Fail (exit 2) for a ``--k`` above the runs some case has, naming the k the user typed."""
    typed = f"--k {k_spec}" if k_spec else f"k={e.k}"
    _fail(f"{typed} asks for pass^k/pass@k up to k={e.k}, but case {e.case_id!r} has only "
          f"{e.n} run(s): k cannot exceed the runs of any case (n >= k); use --k {e.n} or less",
          err)


def _gate(sc: Any, fail_under: float | None, err: Any) -> None:
    """``--fail-under``: exit 1 (after printing FAIL on ``err``) when the suite's task success
    rate (None counts as 0) is below ``fail_under``; print OK otherwise; nothing when None."""
    if fail_under is None:
        return
    rate = sc.suite.task_success_rate.value or 0.0
    if rate < fail_under:
        err.print(f"[red]FAIL[/red]: task success rate {rate:.4f} < --fail-under {fail_under}")
        raise SystemExit(1)
    err.print(f"[green]OK[/green]: task success rate {rate:.4f} >= --fail-under {fail_under}")


def _error_hint(loaded: Any, error_pattern: str | None, err: Any) -> None:
    """Print ``hints.error_pattern_hint`` once on ``err`` unless --error-pattern was given."""
    if error_pattern is not None:
        return
    from ..hints import error_pattern_hint

    hint = error_pattern_hint(loaded.trajectories)
    if hint:
        err.print(hint, markup=False, highlight=False, soft_wrap=True)


def _strict_option(f: _F) -> _F:
    """``--strict`` (eval and inspect): exit 2 when input was not wholly used."""
    return click.option("--strict", is_flag=True,
                        help="Exit with code 2 when some record or line could not be read "
                             "(wholly or in part, e.g. arguments that are not JSON) or, for "
                             "eval, some trace has no known case or some case no trace -- for "
                             "CI, where a silently dropped run would change the score.")(f)


def strict_findings(loaded: Any, case_ids: set[str] | None = None, *,
                    counts: dict[str, int] | None = None) -> list[str]:
    """What ``--strict`` refuses, as counted phrases: records/lines not read
    (``LoadResult.skipped``), faults inside records that were read (``LoadResult.faults``),
    and, when ``case_ids`` is given, traces without a case id, traces whose case id is not
    among ``case_ids``, and cases with no trace (or those three numbers already counted by a
    streaming evaluation: ``counts`` with keys ``no_case_id``, ``unknown``, ``missing``).
    Empty when everything was used."""
    from ..report import plural

    out: list[str] = []
    if loaded.skipped:
        out.append(f"{plural(len(loaded.skipped), 'record')} or line(s) not read")
    if loaded.faults:
        out.append(f"{plural(len(loaded.faults), 'fault')} inside records that were read")
    if case_ids is not None or counts is not None:
        if counts is not None:
            no_id, unknown, missing = (counts.get(k, 0) for k in ("no_case_id", "unknown", "missing"))
        else:
            cids = [t.metadata.get("case_id") for t in loaded.trajectories]
            no_id = sum(1 for c in cids if c is None)
            unknown = sum(1 for c in cids if c is not None and str(c) not in (case_ids or ()))
            seen = {str(c) for c in cids if c is not None}
            missing = sum(1 for c in (case_ids or ()) if c not in seen)
        if no_id:
            out.append(f"{plural(no_id, 'trace')} without a case_id")
        if unknown:
            out.append(f"{plural(unknown, 'trace')} naming a case id that is not among the cases")
        if missing:
            out.append(f"{plural(missing, 'case')} with no trace")
    return out


def _strict_gate(findings: list[str], err: Any) -> None:
    """``--strict``: fail (exit 2) naming every finding; the problems listed above say where."""
    if findings:
        _fail("--strict: " + "; ".join(findings) + " (see the problems listed above)", err)


def _semantic_options(f: _F) -> _F:
    """``--semantic`` and ``--semantic-threshold`` (shared by eval and run)."""
    f = click.option("--semantic-threshold", type=click.FloatRange(0, 1), default=None, metavar="T",
                     help="Threshold of the semantic matcher where the dataset gives none "
                          "(default 0.75; implies --semantic).")(f)
    return click.option("--semantic", is_flag=True,
                        help="Score 'semantic' argument matchers with the offline all-MiniLM-L6-v2 "
                             "embedding model (needs the 'semantic' extra).")(f)


def _judge_options(f: _F) -> _F:
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


def _show_judges(sc: Any, quiet: bool) -> None:
    """Print the judge table and the judge's usage (nothing without ``meta["judges"]``)."""
    if not quiet and sc.meta.get("judges"):
        from ..judges.report import render_terminal_judges

        render_terminal_judges(sc)


@main.command("eval")
@click.argument("traces", type=click.Path(exists=True))
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Dataset of cases (JSONL/JSON/YAML), or BFCL's ground truth (JSONL of {id, "
                   "functions, ground_truth}) for BFCL result files. Not needed for tau-bench "
                   "and tau2 result files, which carry their own cases.")
@_format_option
@_error_pattern_option
@_report_options
@_ci_options
@_semantic_options
@_strict_option
@click.option("--engine", type=click.Choice(["local", "spark", "ray"]), default="local",
              show_default=True,
              help="Where to score: in this process, one pass over the traces ('local'), or "
                   "on Apache Spark (local mode) or Ray (a local cluster) -- the same figures.")
@click.option("--workers", type=click.IntRange(1), default=2, show_default=True,
              help="Spark/Ray: parallel workers (Spark local[N], Ray CPUs).")
@click.option("--keep-runs", type=click.IntRange(0), default=1000, show_default=True,
              help="Runs listed in the scorecard (failing runs first, in input order); "
                   "0 lists all. Every figure covers all runs either way.")
@click.option("--events", "events_out", type=click.Path(dir_okay=False),
              help="Write one OpenTelemetry gen_ai.evaluation.result event per run and "
                   "metric to this file (OTLP JSON lines).")
@click.option("--otlp-endpoint", metavar="URL",
              help="Send those events to an OTLP/HTTP logs endpoint (e.g. "
                   "http://127.0.0.1:4318/v1/logs).")
@click.option("--allow-unread", is_flag=True,
              help="Score even when some record holds tool calls that were not read as calls "
                   "(its runs are scored as if those tools were never called); without it such "
                   "input exits 2 after the reports are written.")
@_judge_options
def eval_command(traces: str, cases_path: str | None, k_spec: str | None, json_out: str | None,
                 html_out: str | None, md_out: str | None, fail_under: float | None,
                 trace_format: str, seed: int, quiet: bool, semantic: bool = False,
                 semantic_threshold: float | None = None, error_pattern: str | None = None,
                 strict: bool = False, engine: str = "local", workers: int = 2,
                 keep_runs: int = 1000, events_out: str | None = None,
                 otlp_endpoint: str | None = None, judge_spec: str | None = None,
                 judge_cache: str = ".trajcheck/judge-cache.sqlite",
                 judge_price: str | None = None, junit_out: str | None = None,
                 annotations: str | None = None, codequality_out: str | None = None,
                 allow_unread: bool = False) -> None:
    """Score recorded runs in TRACES (a file or a directory of them) and print a scorecard.

    Each trace is keyed to its case by its metadata.case_id (tau-bench: the task id; trajcheck
    run writes it). --cases is needed unless the traces carry their own cases (tau-bench
    result files). Traces of unknown cases and cases without traces are listed as problems;
    the rest is scored.

    Exit codes: 0 when scored (whatever the scores), 1 when --fail-under is given and the
    task success rate is below it, 2 when TRACES is not a trace file, the cases file is
    invalid, or nothing could be scored, and with --strict also when some record could not
    be read (wholly or in part) or some trace or case was left unmatched (the reports are
    written first), and, unless --allow-unread, when some record holds tool calls (or
    results) that were not read as calls: such a run would be scored as if no tool had been
    called.
    """
    from rich.console import Console

    from ..errors import TrajcheckError
    from ..score.suite import KTooLargeError

    err = Console(stderr=True)
    ks = _parse_ks(k_spec)
    judge = _judge_setup(judge_spec, judge_cache, judge_price, err)
    if junit_out:
        keep_runs = 0  # a testcase per run: every run listed
    counts: dict[str, int] = {}
    try:
        from ..run.record_mac import eval_check

        # a signed trajcheck run file (its .key beside it) is checked line by line first
        sig_notes, refusal = eval_check(traces)
        for line in sig_notes:
            err.print(visible(line), markup=False, highlight=False, soft_wrap=True)
        if refusal is not None:
            _fail(refusal, err)
    except TrajcheckError as e:
        _fail(e, err)
    try:
        from ..hints import ErrorHintTally
        from ..read.traces.stream import stream

        loaded = stream(traces, format=trace_format, error_pattern=error_pattern)
        tally = ErrorHintTally() if error_pattern is None else None
        cases: Any = None
        if cases_path is not None:
            from ..match.bfcl import load_ground_truth
            from ..read.dataset import load_cases

            # BFCL's ground truth (function docs + possible answers) is a case file too;
            # only the categories the result files cover are kept
            bfcl_cases = load_ground_truth(cases_path)
            if bfcl_cases is not None:
                from ..match.bfcl import cases_for_results

                cases = cases_for_results(bfcl_cases, traces)
            elif not judge_spec:

                from ..read.dataset import load_case_store

                # compact: memory flat in the number of cases' runs; engines load it while
                # they start (a big JSON Lines file partly on their workers: engines.case_load)
                if engine == "local":
                    cases = load_case_store(cases_path)
                else:
                    from ..engines.case_load import CaseFile

                    cases = CaseFile(cases_path)
            else:
                cases = load_cases(cases_path)
        emitter = None
        if events_out or otlp_endpoint:
            from ..report.otel_events import emitter_for

            emitter = emitter_for(events_out, otlp_endpoint)
        if engine != "local":
            sc = _engine_eval(engine, traces, cases, loaded, ks=ks, seed=seed, workers=workers,
                              keep_runs=keep_runs, semantic=semantic,
                              semantic_threshold=semantic_threshold, err=err,
                              on_rows=emitter.emit_rows if emitter is not None else None)
        else:
            sc = _stream_eval(traces, loaded, cases, tally, ks=ks, seed=seed, quiet=quiet,
                              keep_runs=keep_runs, semantic=semantic,
                              semantic_threshold=semantic_threshold, counts=counts, err=err,
                              on_result=emitter.emit if emitter is not None else None)
        if emitter is not None:
            emitter.close()
            where = " and ".join(x for x in (events_out, otlp_endpoint) if x)
            err.print(f"wrote {emitter.n} evaluation events to {where}", markup=False,
                      highlight=False, soft_wrap=True)
        if tally is not None and (hint := tally.hint()):
            err.print(hint, markup=False, highlight=False, soft_wrap=True)
        if judge is not None:
            sc = _judge_eval(sc, judge, traces, trace_format, error_pattern, cases)
    except KTooLargeError as e:
        _k_error(k_spec, e, err)
    except TrajcheckError as e:
        _fail(e, err)
    _note_reading(sc, loaded)
    _show_scorecard(sc, quiet, json_out, html_out, err)
    _show_judges(sc, quiet)
    _write_reports(sc, json_out, md_out, html_out, err)
    try:
        _ci_reports(sc, junit_out, annotations, codequality_out, traces, err)
    except TrajcheckError as e:
        _fail(e, err)
    if strict:
        _strict_gate(strict_findings(loaded, None, counts=counts), err)
    _unread_gate(sc, allow_unread, err)
    _gate(sc, fail_under, err)


def _note_reading(sc: Any, loaded: Any) -> None:
    """Put how the traces were read into the scorecard's ``meta``: ``formats`` (format ->
    runs), ``guessed_formats`` (format -> why it was a guess) and ``unread`` (the records
    holding tool calls that were not read), the last two only when there are any."""
    sc.meta["formats"] = dict(getattr(loaded, "formats", {}) or {})
    guessed = dict(getattr(loaded, "guessed", {}) or {})
    if guessed:
        sc.meta["guessed_formats"] = guessed
    unread = list(getattr(loaded, "unread", []) or []) or list(sc.meta.get("unread") or [])
    if unread:  # the stream's, or the engine's rows' (engines.batch.finalize)
        sc.meta["unread"] = unread


def _unread_gate(sc: Any, allow: bool, err: Any) -> None:
    """Exit 2 when some record holds tool calls that were not read (``sc.meta["unread"]``,
    filled by ``_note_reading`` on every route: the stream and the engines), unless ``allow``."""
    unread = list(sc.meta.get("unread") or [])
    if unread and not allow:
        from ..report import plural

        _fail(f"{plural(len(unread), 'record')} with tool calls that were not read as calls "
              f"(first: {unread[0]}); their runs would be scored as if no tool had been called. "
              "Give --format if the format was guessed wrongly, or --allow-unread to score anyway", err)


def _judge_eval(sc: Any, judge: Any, traces: str, trace_format: str, error_pattern: str | None,
                cases: Any) -> Any:
    """``sc`` with ``meta["judges"]`` (``judges.run.judge_scorecard``) from judging every run
    of TRACES (read again) with ``judge`` (``_judge_setup``'s model and price)."""
    from ..judges.run import judge_scorecard
    from ..read.traces import load

    model, price = judge
    res = load(traces, format=trace_format, error_pattern=error_pattern)
    by_id = {c.id: c for c in cases} if cases is not None else dict(res.cases)
    return judge_scorecard(sc, model, res.trajectories, by_id, error_pattern=error_pattern,
                           price=price)


def _stream_eval(traces: str, loaded: Any, cases: Any, tally: Any, *, ks: Any, seed: int,
                 quiet: bool, keep_runs: int, semantic: bool, semantic_threshold: float | None,
                 counts: dict[str, int], err: Any, on_result: Any = None) -> Any:
    """``eval`` in one pass over the traces (``pipeline.evaluate_stream``), with a progress
    bar on a terminal; fills ``counts`` for --strict (runs without / with an unknown case
    id, cases without runs)."""
    from ..read.traces.native_facts import LineRun
    from ..score.pipeline import evaluate_stream

    # the usual native line comes as its scoring facts (no Trajectory built) unless every
    # run's result goes out with its trajectory (evaluation events)
    src = loaded.fused_runs() if on_result is None and keep_runs else loaded

    def runs() -> Any:
        for t in src:
            if tally is not None:
                if type(t) is not LineRun:
                    tally.see(t)
                elif t.unflagged:  # else nothing for the tally to see: every result flagged
                    tally.see(t.trajectory())
            yield t

    it = iter(runs())
    first = next(it, None)
    if cases is None and first is not None and not loaded.cases:
        _fail("--cases is required: these traces carry no cases (tau-bench and tau2 result "
              "files, a DeepEval test run, a RAGAS dataset export with reference_tool_calls and "
              "an Inspect AI log whose samples hold metadata['trajcheck'] carry their own; BFCL "
              "results need BFCL's ground truth; docs/formats.md)", err)
    # a CaseStore lists the cases using the semantic matcher (the only ones the check reads)
    case_list = (getattr(cases, "semantic_cases", cases) if cases is not None
                 else list(loaded.cases.values()))
    ctx = _match_context(semantic, semantic_threshold, case_list, err)

    def chained() -> Any:
        if first is not None:
            yield first
        yield from it

    class _Src:  # the stream's problems and cases, with the peeked first run put back
        problems = loaded.problems

        def __iter__(self) -> Any:
            return chained()

    with _progress(err, quiet) as tick:
        sc = evaluate_stream(_Src(), cases if cases is not None else loaded.cases, ks=ks,
                             seed=seed, source=str(traces), context=ctx,
                             keep_runs=keep_runs or None, progress=tick, stats=counts,
                             on_result=on_result)
    return sc


def _progress(err: Any, quiet: bool) -> Any:
    """A rich progress display of runs scored on ``err`` (stderr), or a no-op context when
    ``err`` is not a terminal or with -q."""
    import contextlib

    if quiet or not err.is_terminal:
        return contextlib.nullcontext(None)
    from rich.progress import (
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    @contextlib.contextmanager
    def bar() -> Any:
        with Progress(SpinnerColumn(), TextColumn("scoring runs"), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, transient=True) as p:
            task = p.add_task("runs", total=None)
            yield lambda n: p.update(task, completed=n)
    return bar()


def _engine_eval(engine: str, traces: str, cases: Any, loaded: Any, *, ks: Any, seed: int,
                 workers: int, keep_runs: int, semantic: bool, semantic_threshold: float | None,
                 err: Any, on_rows: Any = None) -> Any:
    """``eval --engine spark|ray``: the same scoring on Spark (local mode) or Ray (local);
    ``on_rows`` gets the per-run result rows in input order (the evaluation events)."""
    if semantic or semantic_threshold is not None:
        _fail(f"--semantic is not available with --engine {engine}", err)
    if cases is None:
        _fail(f"--engine {engine} needs --cases (the traces' own cases are read locally only)", err)
    from ..engines import eval_files

    return eval_files(traces, cases, engine=engine, workers=workers, ks=ks, seed=seed,
                      keep_runs=keep_runs or None, on_rows=on_rows)


@main.command("compare")
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
            _fail(f"A and B are not comparable as they are:\n{lines}\nA paired test over them would "
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
        _fail(e, err)
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


def _unit_label(unit: str | None) -> str:
    """How a paired test's unit is shown: 'per run' / 'per task'."""
    return {"run": "per run", "task": "per task"}.get(unit or "", unit or "")


@main.command("inspect")
@click.argument("traces", type=click.Path(exists=False))
@_format_option
@_error_pattern_option
@click.option("--max-problems", default=20, show_default=True, help="How many unreadable lines/records to list.")
@_strict_option
def inspect_cmd(traces: str, trace_format: str, max_problems: int,
                error_pattern: str | None = None, strict: bool = False) -> None:
    """Show what was read from TRACES (a file or directory): runs, cases, steps, tool calls
    per tool, failed tool results, usage totals, recorded rewards, formats, and problems.

    Exit codes: 0 when read (even when some lines could not be read), 2 when the input is
    not a trace at all, and with --strict also when some line or record could not be read
    (wholly or in part).
    """
    from collections import Counter
    from pathlib import Path

    from rich.console import Console

    from ..errors import TrajcheckError
    from ..metrics.efficiency import agent_steps
    from ..model import Usage
    from ..read.traces import load
    from ..textsafe import SafeTable as Table  # data in cells is shown literally

    console = Console()
    try:
        res = load(traces, format=trace_format, error_pattern=error_pattern)
    except TrajcheckError as e:
        _fail(e)
    _error_hint(res, error_pattern, Console(stderr=True))

    runs = res.trajectories
    case_ids = {t.metadata.get("case_id") for t in runs if t.metadata.get("case_id") is not None}
    n_tasks = len(case_ids | set(res.cases))
    per_tool: Counter[str] = Counter()
    errs: Counter[str] = Counter()
    n_steps = 0
    n_turns = 0
    n_results = 0
    usage: Usage | None = None
    cost = 0.0
    has_cost = False
    rewards: list[float] = [float(t.metadata["reward"]) for t in runs
                            if isinstance(t.metadata.get("reward"), (int, float))]
    for t in runs:
        n_steps += len(t.steps)
        n_turns += agent_steps(t)
        for c in t.tool_calls():
            per_tool[c.name] += 1
        # a result's tool is the joined call's name: OpenAI tool messages carry none
        called_by = {id(r): c.name for c, r in t.pairs() if r is not None}
        for r in t.tool_results():
            n_results += 1
            if r.is_error:
                errs[called_by.get(id(r)) or r.name or "?"] += 1
        if t.total_usage is not None:
            usage = t.total_usage if usage is None else usage + t.total_usage
        if t.total_cost_usd is not None:
            cost += t.total_cost_usd
            has_cost = True
    n_calls = sum(per_tool.values())

    summary = Table(title="Traces", show_header=False)
    summary.add_column("what")
    summary.add_column("value", justify="right")
    summary.add_row("source", str(traces))
    summary.add_row("format(s) detected", ", ".join(
        f"{k} ({v}" + (f", guessed: {res.guessed[k]})" if k in res.guessed else ")")
        for k, v in res.formats.items()) or "-")
    if len(res.sources) == 1:
        summary.add_row("recognised", next(iter(res.sources.values())).describe())
    summary.add_row("runs", f"{len(runs):,}")
    summary.add_row("tasks / cases", f"{n_tasks:,}")
    summary.add_row("steps (all kinds)", f"{n_steps:,}")
    summary.add_row("agent turns", f"{n_turns:,}")
    summary.add_row("tool calls", f"{n_calls:,} across {len(per_tool)} tools")
    summary.add_row("tool results", f"{n_results:,} ({sum(errs.values()):,} failed)")
    if rewards:
        ones = sum(1 for r in rewards if abs(r - 1.0) <= 1e-6)
        summary.add_row("recorded rewards", f"{len(rewards):,} run{'' if len(rewards) == 1 else 's'}, "
                                            f"{ones:,} with reward 1")
    if usage is not None:
        summary.add_row("input tokens", f"{usage.input_tokens:,}" if usage.input_tokens is not None else "-")
        summary.add_row("output tokens", f"{usage.output_tokens:,}" if usage.output_tokens is not None else "-")
        summary.add_row("total tokens", f"{usage.total:,}" if usage.total is not None else "-")
    if has_cost:
        summary.add_row("cost (USD)", f"{cost:.6f}")
    summary.add_row("problems", f"{len(res.problems):,}")
    if res.unread:
        summary.add_row("records with tool calls not read", f"{len(res.unread):,} (eval exits 2 without "
                                                             "--allow-unread)")
    console.print(summary)
    if len(res.sources) > 1:
        ft = Table(title="Recognised per file")
        ft.add_column("file")
        ft.add_column("format (runs) and wrapper")
        base = Path(traces)
        for src, info in res.sources.items():
            sp = Path(src)
            shown = str(sp.relative_to(base)) if base.is_dir() and sp.is_relative_to(base) else src
            ft.add_row(shown, info.describe())
        console.print(ft)

    if per_tool:
        tt = Table(title="Tool calls per tool")
        tt.add_column("tool")
        tt.add_column("calls", justify="right")
        tt.add_column("failed results", justify="right")
        for name, n in sorted(per_tool.items(), key=lambda kv: (-kv[1], kv[0])):
            tt.add_row(name or "(no name)", f"{n:,}", f"{errs.get(name, 0):,}")
        console.print(tt)

    if res.problems:
        pt = Table(title=f"Could not read ({len(res.problems)})")
        pt.add_column("where / what", overflow="fold")
        for p in res.problems[:max_problems]:
            pt.add_row(p)
        if len(res.problems) > max_problems:
            pt.add_row(f"... and {len(res.problems) - max_problems} more")
        console.print(pt)
    if strict:
        _strict_gate(strict_findings(res), Console(stderr=True))


@main.command("run")
@click.option("--agent", "agent_spec", required=True, metavar="MODULE:CALLABLE",
              help="The agent: package.module:callable or path/to/file.py:callable.")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Dataset of cases (JSONL/JSON/YAML). Give this or --scenarios.")
@click.option("--scenarios", "scenarios_path", type=click.Path(exists=True, dir_okay=False),
              help="Simulated-user scenarios (JSON/YAML, trajcheck.run.simulated_user): each is a conversation "
                   "between --user-model and the agent, one per trial (seeds 0..trials-1).")
@click.option("--user-model", "user_model_spec", metavar="SPEC",
              help="The simulated user for --scenarios: module:callable or file.py:callable (a "
                   "factory returning a model, or fn(messages) -> str), or openai:MODEL@BASE_URL.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR",
              help="Environment variable holding the key of an openai:MODEL@BASE_URL user model.")
@click.option("--trials", default=1, show_default=True, type=click.IntRange(min=1), help="Runs per case.")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1),
              help="Runs at once (each in its own thread and sandbox).")
@click.option("--timeout", "timeout_s", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per run; a run still going is recorded as failed ('timeout after Ns').")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="JSONL file the traces are appended to as runs finish; re-running with the same "
                   "file resumes (finished (case, trial) pairs are not run again).")
@click.option("--tools", "tools_spec", metavar="MODULE:ATTR",
              help="The ToolRegistry (default: the agent's .tools attribute or its module's TOOLS). Given, "
                   "the agent's file is imported only inside its workers, never into trajcheck's process.")
@click.option("--fixture-root", "fixture_roots", multiple=True, type=click.Path(file_okay=False),
              help="A folder fixtures (initial_state) may come from besides the folder of the "
                   "--cases or --scenarios file (repeatable); any other fixture path is refused.")
@click.option("--isolation", type=click.Choice(["sandbox", "process", "inline"]), default="sandbox",
              show_default=True,
              help="sandbox: the agent runs in worker processes under bubblewrap: no network (see "
                   "--network), every file read-only but a scratch /tmp, its own PID namespace (it cannot "
                   "see or read trajcheck's memory), limits on processes, memory and file size, killed with "
                   "its children on timeout and when trajcheck dies, its output to --out's .log; it can still "
                   "read files this user can read, except the run file's key and --hide paths. Where the "
                   "sandbox cannot start: process, with a line saying so. process: plain worker processes "
                   "with the same limits; the agent can also read and write this user's files (the run "
                   "file's key among them) and use the network. inline: in trajcheck's own process, for "
                   "debugging; the agent can reach the grader. Exiting, crashing or hanging fails only its "
                   "run in sandbox and process (docs/security.md).")
@click.option("--network", is_flag=True, help="sandbox isolation: let the agent use the host's network "
                                              "(for agents that call a model API).")
@click.option("--hide", "hide_paths", multiple=True, type=click.Path(), metavar="PATH",
              help="A file or folder the sandbox shows empty (repeatable), e.g. your credentials.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@_report_options
@_ci_options
@_semantic_options
@_judge_options
def run_command(agent_spec: str, cases_path: str | None, trials: int, concurrency: int, timeout_s: float,
                out_path: str | None, tools_spec: str | None, k_spec: str | None, json_out: str | None,
                html_out: str | None, md_out: str | None, fail_under: float | None, seed: int,
                no_progress: bool, quiet: bool, scenarios_path: str | None = None,
                user_model_spec: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                semantic: bool = False, semantic_threshold: float | None = None,
                fixture_roots: tuple[str, ...] = (), judge_spec: str | None = None,
                judge_cache: str = ".trajcheck/judge-cache.sqlite",
                judge_price: str | None = None, isolation: str = "sandbox",
                junit_out: str | None = None, annotations: str | None = None,
                codequality_out: str | None = None, network: bool = False,
                hide_paths: tuple[str, ...] = ()) -> None:
    """Run an agent on every case TRIALS times, record the traces, and print a scorecard.

    The agent is called as agent(input, tools) (sync or async) with the case input and the
    tool registry bound to a fresh sandbox; it returns the final response (see
    trajcheck.run.runner for the full contract). Agent exceptions and timeouts are recorded as
    failed runs; cases that cannot be set up, recorded runs of unknown cases and cases
    without runs are listed as problems, and the rest is scored as `trajcheck eval` does.

    With --scenarios (instead of --cases), each scenario is a conversation between the
    --user-model and the agent (trajcheck.run.simulated_user), run once per trial with seeds
    0..TRIALS-1, each in a fresh sandbox, then scored the same way; --out then receives the
    conversations' traces (overwritten, no resume) and --concurrency/--timeout do not apply.
    --semantic scores 'semantic' argument matchers with the offline embedding model.
    --judge adds the rubric and task-completion judges to the scorecard (with --scenarios,
    after each conversation, beside its final-state check), as in `trajcheck eval`.

    Exit codes: 0 when scored, 1 when --fail-under is given and the task success rate is
    below it, 2 for an unknown agent path, an invalid cases file, or nothing to score,
    130 when interrupted (re-run the same command with the same --out to resume).
    """
    from pathlib import Path

    from rich.console import Console

    from ..errors import TrajcheckError
    from ..score.suite import KTooLargeError

    err = Console(stderr=True)
    if (cases_path is None) == (scenarios_path is None):
        _fail("give either --cases or --scenarios (one of them)", err)
    if scenarios_path is not None and not user_model_spec:
        _fail("--scenarios needs --user-model", err)
    ks = _parse_ks(k_spec)
    if ks and max(ks) > trials:
        # checked before any run is made: the runs would be made, then not scored
        _fail(f"--k {k_spec} asks for pass^k/pass@k up to k={max(ks)}, but --trials {trials} "
              f"gives each case {trials} run(s): k cannot exceed the runs of a case (n >= k); "
              f"use --trials {max(ks)} or more, or --k {trials} or less", err)
    judge = _judge_setup(judge_spec, judge_cache, judge_price, err)
    try:
        from ..read.dataset import load_cases
        from ..run.runner import load_agent, run_suite

        tools = load_agent(tools_spec, want_callable=False) if tools_spec else None
        if scenarios_path is not None:
            agent = load_agent(agent_spec)
            from ..run.simulated_user import load_scenarios, load_user_model, run_scenarios

            scenarios = load_scenarios(scenarios_path)
            umodel = load_user_model(str(user_model_spec), api_key_env=api_key_env)
            ctx = _match_context(semantic, semantic_threshold, [x.to_case() for x in scenarios], err)
            srun = run_scenarios(scenarios, agent, umodel, seeds=range(trials), tools=tools,
                                 base_dir=Path(scenarios_path).parent, context=ctx,
                                 ks=ks, seed=seed, agent_name=agent_spec, out=out_path,
                                 fixture_roots=fixture_roots, isolation=isolation)
            from ..run.simulated_user import termination_label

            succ = {c.case_id: c.successes for c in srun.scorecard.cases}
            for sid, info in srun.summary.items():
                # the termination is the simulated user's view; task success is trajcheck's
                ends = ", ".join(f"{termination_label(k)} {v}"
                                 for k, v in sorted(info["termination"].items()))
                revs = "; ".join(f"{r['fact']} (seed {r['seed']}, user turn {r['turn']})"
                                 for r in info["unprompted_reveals"]) or "none"
                err.print(visible(f"scenario {sid}: {info['runs']} conversation(s): {ends}; "
                                  f"task success {succ.get(sid, 0)}/{info['runs']}; "
                                  f"revealed without being asked: {revs}"),
                          markup=False, highlight=False, soft_wrap=True)
        else:
            cases = load_cases(str(cases_path))
            ctx = _match_context(semantic, semantic_threshold, cases, err)
            # the agent goes by its spec: with --tools, its file is imported only in its workers
            res = run_suite(agent_spec, cases, trials=trials, concurrency=concurrency, timeout_s=timeout_s,
                            out=out_path, tools=tools, base_dir=Path(str(cases_path)).parent,
                            progress=not no_progress, ks=ks, seed=seed,
                            agent_name=agent_spec, context=ctx, fixture_roots=fixture_roots,
                            isolation=isolation, network=network, hide=hide_paths)
            for line in (res.isolation, *res.notes):
                err.print(visible(line), markup=False, highlight=False, soft_wrap=True)
    except KTooLargeError as e:
        _k_error(k_spec, e, err)
    except TrajcheckError as e:
        _fail(e, err)
    except KeyboardInterrupt:
        where = f"; finished runs are in {out_path}: re-run the same command to resume" if out_path else ""
        err.print(f"[yellow]interrupted[/yellow]{escape(visible(where))}", highlight=False)
        raise SystemExit(130) from None
    from ..report import plural

    if scenarios_path is not None:
        sc = srun.scorecard
    else:
        sc = res.scorecard
        made = f"{plural(res.n_new, 'run')} made"
        if out_path:
            made += f", {res.n_resumed} resumed from {out_path}" if res.n_resumed else f", recorded in {out_path}"
        err.print(made, markup=False, highlight=False, soft_wrap=True)
    if judge is not None:
        try:
            if scenarios_path is not None:
                pairs = [(r.trajectory, s.to_case()) for s in scenarios for r in srun.results
                         if r.trajectory.metadata.get("case_id") == s.id]
            else:
                pairs = list(res.runs)
            sc = _judge_run(sc, judge, pairs, with_state=scenarios_path is not None)
        except TrajcheckError as e:
            _fail(e, err)
    _show_scorecard(sc, quiet, json_out, html_out, err)
    _show_judges(sc, quiet)
    _write_reports(sc, json_out, md_out, html_out, err)
    try:
        _ci_reports(sc, junit_out, annotations, codequality_out, cases_path or scenarios_path, err)
    except TrajcheckError as e:
        _fail(e, err)
    _gate(sc, fail_under, err)


def _judge_setup(spec: str | None, cache: str | None, price: str | None, err: Any) -> Any:
    """``(model behind its reply cache, price)`` for ``--judge``/``--judge-cache``/
    ``--judge-price``, or None without ``--judge``; a bad spec or price fails (exit 2) before
    any agent runs."""
    if not spec:
        return None
    from ..errors import TrajcheckError
    from ..judges.run import cached, model_from_spec, parse_price

    try:
        pr = parse_price(price)  # before the cache file is created
        return cached(model_from_spec(spec), cache or None), pr
    except TrajcheckError as e:
        _fail(e, err)


def _judge_run(sc: Any, judge: Any, pairs: list[tuple[Any, Any]], *, with_state: bool) -> Any:
    """``sc`` with ``meta["judges"]`` from judging the ``(trajectory, case)`` pairs that
    ``run`` made with ``judge`` (``_judge_setup``'s pair); ``with_state``: count the
    final-state checks too, for simulated conversations."""
    from ..judges.run import judge_scorecard

    model, price = judge
    cases = {c.id: c for _, c in pairs}
    return judge_scorecard(sc, model, [t for t, _ in pairs], cases, price=price,
                           with_state=with_state)


# the judge and semantic-matcher commands live in cli_judges (one concern per module)
from .judges import calibrate_semantic_command, validate_judge_command  # noqa: E402

main.add_command(calibrate_semantic_command)
main.add_command(validate_judge_command)
