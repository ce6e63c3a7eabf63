"""``trajcheck eval``: score recorded runs (a stream in this process, or Spark/Ray)."""

from __future__ import annotations

from typing import Any

import click

from ..textsafe import visible
from .context import judge_setup, match_context
from .gates import gate, strict_findings, strict_gate
from .options import (
    ci_options,
    error_pattern_option,
    format_option,
    judge_options,
    parse_ks,
    report_options,
    semantic_options,
    strict_option,
)
from .output import ci_reports, fail, k_error, show_judges, show_scorecard, write_reports


@click.command("eval")
@click.argument("traces", type=click.Path(exists=True))
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Dataset of cases (JSONL/JSON/YAML), or BFCL's ground truth (JSONL of {id, "
                   "functions, ground_truth}) for BFCL result files. Not needed for tau-bench "
                   "and tau2 result files, which carry their own cases.")
@format_option
@error_pattern_option
@report_options
@ci_options
@semantic_options
@strict_option
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
@click.option("--events-explanations", is_flag=True,
              help="Send each run's outcome reason as the task_success event's explanation. "
                   "It may quote the case's expected values (arguments, required phrases, "
                   "final state), so by default it is withheld from events.")
@click.option("--allow-unread", is_flag=True,
              help="Score even when some record holds tool calls that were not read as calls "
                   "(its runs are scored as if those tools were never called); without it such "
                   "input exits 2 after the reports are written.")
@judge_options
def eval_command(traces: str, cases_path: str | None, k_spec: str | None, json_out: str | None,
                 html_out: str | None, md_out: str | None, fail_under: float | None,
                 trace_format: str, seed: int, quiet: bool, semantic: bool = False,
                 semantic_threshold: float | None = None, error_pattern: str | None = None,
                 strict: bool = False, engine: str = "local", workers: int = 2,
                 keep_runs: int = 1000, events_out: str | None = None,
                 otlp_endpoint: str | None = None, events_explanations: bool = False,
                 judge_spec: str | None = None,
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
    ks = parse_ks(k_spec)
    judge = judge_setup(judge_spec, judge_cache, judge_price, err)
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
            fail(refusal, err)
    except TrajcheckError as e:
        fail(e, err)
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

            emitter = emitter_for(events_out, otlp_endpoint, explanations=events_explanations)
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
        k_error(k_spec, e, err)
    except TrajcheckError as e:
        fail(e, err)
    _note_reading(sc, loaded)
    show_scorecard(sc, quiet, json_out, html_out, err)
    show_judges(sc, quiet)
    write_reports(sc, json_out, md_out, html_out, err)
    try:
        ci_reports(sc, junit_out, annotations, codequality_out, traces, err)
    except TrajcheckError as e:
        fail(e, err)
    if strict:
        strict_gate(strict_findings(loaded, None, counts=counts), err)
    _unread_gate(sc, allow_unread, err)
    gate(sc, fail_under, err)


def _note_reading(sc: Any, loaded: Any) -> None:
    """Put how the traces were read into the scorecard's ``meta``: ``formats`` (format ->
    runs), ``guessed_formats`` (format -> why it was a guess) and ``unread`` (the records
    holding tool calls that were not read), the last two only when there are any: the
    stream's, or when the stream was not read (an engine read the rows) the engine's
    (``engines.batch.finalize``), set after the scorecard's other meta on either route."""
    engine = {k: sc.meta.pop(k) for k in ("formats", "guessed_formats", "unread") if k in sc.meta}
    sc.meta["formats"] = dict(getattr(loaded, "formats", {}) or engine.get("formats") or {})
    guessed = dict(getattr(loaded, "guessed", {}) or engine.get("guessed_formats") or {})
    if guessed:
        sc.meta["guessed_formats"] = guessed
    unread = list(getattr(loaded, "unread", []) or engine.get("unread") or [])
    if unread:
        sc.meta["unread"] = unread


def _unread_gate(sc: Any, allow: bool, err: Any) -> None:
    """Exit 2 when some record holds tool calls that were not read (``sc.meta["unread"]``,
    filled by ``_note_reading`` on every route: the stream and the engines), unless ``allow``."""
    unread = list(sc.meta.get("unread") or [])
    if unread and not allow:
        from ..report import plural

        fail(f"{plural(len(unread), 'record')} with tool calls that were not read as calls "
              f"(first: {unread[0]}); their runs would be scored as if no tool had been called. "
              "Give --format if the format was guessed wrongly, or --allow-unread to score anyway", err)


def _judge_eval(sc: Any, judge: Any, traces: str, trace_format: str, error_pattern: str | None,
                cases: Any) -> Any:
    """``sc`` with ``meta["judges"]`` (``judges.run.judge_scorecard``) from judging every run
    of TRACES (read again) with ``judge`` (``judge_setup``'s model and price)."""
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
    from ..score.pipeline import evaluate_stream, route_runs

    # the route (fused or not) is the pipeline's choice, as for library callers
    src = route_runs(loaded, on_result=on_result, keep_runs=keep_runs)

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
        fail("--cases is required: these traces carry no cases (tau-bench and tau2 result "
              "files, a DeepEval test run, a RAGAS dataset export with reference_tool_calls and "
              "an Inspect AI log whose samples hold metadata['trajcheck'] carry their own; BFCL "
              "results need BFCL's ground truth; docs/formats.md)", err)
    # a CaseStore lists the cases using the semantic matcher (the only ones the check reads)
    case_list = (getattr(cases, "semantic_cases", cases) if cases is not None
                 else list(loaded.cases.values()))
    ctx = match_context(semantic, semantic_threshold, case_list, err)

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
        fail(f"--semantic is not available with --engine {engine}", err)
    if cases is None:
        fail(f"--engine {engine} needs --cases (the traces' own cases are read locally only)", err)
    from ..engines import eval_files

    return eval_files(traces, cases, engine=engine, workers=workers, ks=ks, seed=seed,
                      keep_runs=keep_runs or None, on_rows=on_rows)
