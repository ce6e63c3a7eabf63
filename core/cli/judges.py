"""The judge and semantic-matcher commands of ``trajcheck``: ``calibrate-semantic`` and
``validate-judge`` (added to the ``trajcheck`` group in ``trajcheck.cli.app``).

Each is a thin wrapper over the library: ``trajcheck.match.semantic_calibration.calibrate`` and
``trajcheck.judges.validation.judge_agreement`` (through ``trajcheck.judges.validate_run``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _parse_thresholds(spec: str | None) -> list[float] | None:
    """``--thresholds 0.6,0.7,0.75`` -> floats; None when not given."""
    if spec is None:
        return None
    try:
        ts = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, got {spec!r}",
                                 param_hint="--thresholds") from None
    bad = [t for t in ts if not 0.0 <= t <= 1.0]
    if not ts or bad:
        raise click.BadParameter(f"thresholds must be in [0, 1], got {spec!r}",
                                 param_hint="--thresholds")
    return ts


@click.command("calibrate-semantic")
@click.argument("pairs", type=click.Path(exists=True, dir_okay=False))
@click.option("--target-precision", type=click.FloatRange(0, 1), default=0.95, show_default=True,
              help="Recommend the lowest threshold whose precision reaches this value.")
@click.option("--thresholds", "thresholds_spec", metavar="T1,T2,...",
              help="Thresholds to evaluate (default: 0.05 to 0.95 in steps of --step).")
@click.option("--step", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Step of the default threshold grid.")
@click.option("--model", "model_path", type=click.Path(exists=True, file_okay=False),
              help="A local sentence-transformers model folder (default: the offline "
                   "all-MiniLM-L6-v2, checked against its recorded SHA-256 digests).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False),
              help="Write the figures (every threshold and every pair's score) here.")
def calibrate_semantic_command(pairs: str, target_precision: float, thresholds_spec: str | None,
                               step: float, model_path: str | None, json_out: str | None) -> None:
    """Calibrate the 'semantic' argument matcher on PAIRS, a JSONL file of labelled pairs
    ({"a": ..., "b": ..., "label": true|false} per line; true = same meaning).

    Each pair is decided as the matcher decides it: IDs, numbers and dates by normalized
    equality, other text by the embedding similarity >= the threshold. Prints precision,
    recall and F1 (human label as the truth, "same meaning" as positive) at each threshold
    and the lowest threshold whose precision reaches --target-precision. Lines that cannot
    be used are listed and left out.

    Exit codes: 0 when calibrated (whether or not a threshold reaches the target), 2 for a
    file with no usable pair or a model that cannot be loaded.
    """
    from rich.console import Console
    from rich.text import Text

    from ..errors import TrajcheckError
    from ..match.semantic import EmbeddingScorer, check_available
    from ..match.semantic_calibration import calibrate, default_thresholds, load_pairs
    from ..textsafe import SafeTable as Table
    from .output import fail

    err = Console(stderr=True)
    ts = _parse_thresholds(thresholds_spec)
    try:
        rows, problems = load_pairs(pairs)
        for p in problems:
            err.print(f"skipped {p}", markup=False, highlight=False, soft_wrap=True)
        if not rows:
            fail(f"{pairs}: no usable labelled pair", err)
        if model_path is None:
            check_available()
        cal = calibrate(rows, EmbeddingScorer(model_path),
                        thresholds=ts if ts is not None else default_thresholds(step),
                        target_precision=target_precision)
    except TrajcheckError as e:
        fail(e, err)
    con = Console()
    n_pos = sum(p.pair.label for p in cal.pairs)
    n_exact = sum(p.score is None for p in cal.pairs)
    t = Table(title=f"Semantic matcher calibration: {len(cal.pairs)} pairs ({n_pos} labelled "
                    f"same meaning; {n_exact} ID/number/date pairs decided by equality)")
    for col in ("threshold", "precision", "recall", "F1", "tp", "fp", "fn", "tn"):
        t.add_column(col, justify="right")
    for r in cal.rows:
        style = "bold green" if r.threshold == cal.recommended else None
        t.add_row(f"{r.threshold:g}", _fmt(r.precision), _fmt(r.recall), _fmt(r.f1),
                  str(r.tp), str(r.fp), str(r.fn), str(r.tn), style=style)
    con.print(t)
    if cal.recommended is None:
        con.print(Text(f"no threshold reaches precision {target_precision:g}"))
    else:
        con.print(Text(f"lowest threshold with precision >= {target_precision:g}: "
                       f"{cal.recommended:g}"))
    if json_out:
        data = dict(cal.to_dict(), source=str(pairs), skipped=problems)
        Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        err.print(f"wrote {json_out}", markup=False, highlight=False, soft_wrap=True)



@click.command("validate-judge")
@click.argument("traces", type=click.Path(exists=True))
@click.option("--labels", "labels_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="JSONL of human labels: {\"run_id\": ..., \"labels\": {check: true|false|null}} "
                   "(or case_id and trial instead of run_id) per line.")
@click.option("--judge", "judge_spec", required=True, metavar="MODEL_SPEC",
              help="The judge to validate: http(s)://HOST/v1#MODEL, anthropic:MODEL or module:attr.")
@click.option("--cases", "cases_path", type=click.Path(exists=True, dir_okay=False),
              help="Dataset of cases: tool schemas and expected calls for the judge, success "
                   "criteria for task_completed.")
@click.option("--format", "trace_format", default="auto", show_default=True,
              help="Trace format of TRACES (auto-detected per record by default).")
@click.option("--error-pattern", default=None, metavar="REGEX",
              help="Mark a tool result failed when its output matches REGEX (as in eval).")
@click.option("--judge-cache", default=".trajcheck/judge-cache.sqlite", show_default=True,
              metavar="PATH", help="SQLite cache of judge replies ('' for none).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False),
              help="Write the agreement figures and every labelled item here.")
def validate_judge_command(traces: str, labels_path: str, judge_spec: str, cases_path: str | None,
                           trace_format: str, error_pattern: str | None, judge_cache: str,
                           json_out: str | None) -> None:
    """Check a judge against human labels of the runs in TRACES: per check and overall, the
    items compared, the agreement, Cohen's kappa with its 95% interval (Fleiss, Cohen &
    Everitt 1969 standard error) and the confusion counts (human label as the truth, pass as
    the positive class). Items left unlabelled (null, or a judge error) are counted as
    skipped. Label lines that cannot be used, and labelled runs not among the traces, are
    listed and left out.

    Exit codes: 0 when compared, 2 for bad input or no labelled run found.
    """
    from rich.console import Console

    from ..errors import TrajcheckError
    from ..judges.run import cached, model_from_spec
    from ..judges.validate_run import load_labels, validate_judge
    from ..read.traces import load
    from ..textsafe import SafeTable as Table
    from .output import fail

    err = Console(stderr=True)
    try:
        rows, problems = load_labels(labels_path)
        for p in problems:
            err.print(f"skipped {p}", markup=False, highlight=False, soft_wrap=True)
        if not rows:
            fail(f"{labels_path}: no usable label line", err)
        model = cached(model_from_spec(judge_spec), judge_cache or None)
        res = load(traces, format=trace_format, error_pattern=error_pattern)
        cases: dict[str, Any] = dict(res.cases)
        if cases_path is not None:
            from ..read.dataset import load_cases

            cases.update({c.id: c for c in load_cases(cases_path)})
        vr = validate_judge(model, res.trajectories, cases, rows, error_pattern=error_pattern)
    except TrajcheckError as e:
        fail(e, err)
    for p in vr.problems:
        err.print(f"skipped {p}", markup=False, highlight=False, soft_wrap=True)
    from rich import box

    t = Table(title=f"Judge agreement with human labels ({len(vr.items)} labelled runs)",
              box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("check", no_wrap=True)
    for col in ("n", "agree", "kappa", "kappa 95% CI", "tp/fp/fn/tn", "skip"):
        t.add_column(col, justify="right", no_wrap=True)
    for a in [*vr.report.per_check.values(), vr.report.overall]:
        ci = a.kappa_interval
        t.add_row(a.name, str(a.n), _fmt(a.accuracy), _fmt(a.kappa),
                  f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci is not None else "-",
                  f"{a.tp}/{a.fp}/{a.fn}/{a.tn}", str(a.n_skipped),
                  style="bold" if a.name == "overall" else None)
    Console().print(t)
    if json_out:
        data = dict(vr.to_dict(), skipped=problems, judge=judge_spec)
        Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        err.print(f"wrote {json_out}", markup=False, highlight=False, soft_wrap=True)


__all__ = ["calibrate_semantic_command", "validate_judge_command"]
