"""The ``trajcheck`` command group (click for parsing, rich for output).

One module per command: ``eval_cmd`` (eval), ``run_cmd`` (run), ``compare_cmd`` (compare),
``inspect_cmd`` (inspect), ``judges`` (calibrate-semantic, validate-judge). What they share:
``options`` (the option decorators), ``context`` (the semantic MatchContext and the judge the
options build), ``output`` (``fail``, the scorecard, report files and CI outputs) and ``gates``
(``--fail-under``, ``--strict``). Each command is a thin wrapper: it parses options, calls library
functions, and prints; heavy modules are imported inside it so ``trajcheck --help`` stays fast.
"""

from __future__ import annotations

import click

from .. import __version__
from .compare_cmd import compare_command
from .eval_cmd import eval_command
from .gates import strict_findings
from .inspect_cmd import inspect_cmd
from .judges import calibrate_semantic_command, validate_judge_command
from .run_cmd import run_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trajcheck")
def main() -> None:
    """Score AI agents on their tool use: calls, trajectories, final state, reliability.

    Exit codes of every command: 0 ok, 1 a --fail-under gate failed, 2 bad input (the
    message starts with "error:" on stderr); run also exits 130 when interrupted.
    """


for _command in (eval_command, compare_command, inspect_cmd, run_command,
                 calibrate_semantic_command, validate_judge_command):
    main.add_command(_command)

__all__ = ["calibrate_semantic_command", "compare_command", "eval_command", "inspect_cmd", "main",
           "run_command", "strict_findings", "validate_judge_command"]
