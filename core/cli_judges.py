"""The judge and semantic-matcher commands of ``trajcheck``: ``calibrate-semantic`` and
``validate-judge`` (registered on the ``trajcheck`` group by ``trajcheck.cli``).

Each is a thin wrapper over the library: ``trajcheck.semantic_calibration.calibrate`` and
``trajcheck.judges.validation.judge_agreement`` (through ``trajcheck.judges.validate_run``).
"""

from __future__ import annotations

import json
from pathlib import Path

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

    from .cli import _fail
    from .errors import TrajcheckError
    from .semantic import EmbeddingScorer, check_available
    from .semantic_calibration import calibrate, default_thresholds, load_pairs
    from .textsafe import SafeTable as Table

    err = Console(stderr=True)
    ts = _parse_thresholds(thresholds_spec)
    try:
        rows, problems = load_pairs(pairs)
        for p in problems:
            err.print(f"skipped {p}", markup=False, highlight=False, soft_wrap=True)
        if not rows:
            _fail(f"{pairs}: no usable labelled pair", err)
        if model_path is None:
            check_available()
        cal = calibrate(rows, EmbeddingScorer(model_path),
                        thresholds=ts if ts is not None else default_thresholds(step),
                        target_precision=target_precision)
    except TrajcheckError as e:
        _fail(e, err)
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


__all__ = ["calibrate_semantic_command"]
