"""``trajcheck inspect``: what was read from a trace file or folder."""

from __future__ import annotations

from typing import Any

import click

from .gates import strict_findings, strict_gate
from .options import (
    error_pattern_option,
    format_option,
    strict_option,
)
from .output import fail


@click.command("inspect")
@click.argument("traces", type=click.Path(exists=False))
@format_option
@error_pattern_option
@click.option("--max-problems", default=20, show_default=True, help="How many unreadable lines/records to list.")
@strict_option
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
    from ..metrics.formulas import reward_success
    from ..model import Usage
    from ..read.traces import load
    from ..textsafe import SafeTable as Table  # data in cells is shown literally

    console = Console()
    try:
        res = load(traces, format=trace_format, error_pattern=error_pattern)
    except TrajcheckError as e:
        fail(e)
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
        ones = sum(1 for r in rewards if reward_success(r))
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
        strict_gate(strict_findings(res), Console(stderr=True))


def _error_hint(loaded: Any, error_pattern: str | None, err: Any) -> None:
    """Print ``hints.error_pattern_hint`` once on ``err`` unless --error-pattern was given."""
    if error_pattern is not None:
        return
    from ..hints import error_pattern_hint

    hint = error_pattern_hint(loaded.trajectories)
    if hint:
        err.print(hint, markup=False, highlight=False, soft_wrap=True)
