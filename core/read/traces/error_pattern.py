"""Error patterns: an opt-in regex that marks tool results failed for sources with no error
channel (``apply_error_pattern``), compiled for linear-time matching
(``compile_error_pattern``)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import Trajectory


def compile_error_pattern(p: Any) -> Any:
    """A string pattern compiled for linear-time matching (``trajcheck.match.safe_regex``: trace
    outputs are untrusted text); a pattern object a Python caller compiled is used as given,
    None stays None. Raises ``TraceFormatError`` when the string is not a valid pattern."""
    from ...errors import MatcherError
    from ...match.safe_regex import compile_pattern

    if p is None or not isinstance(p, str):
        return p
    try:
        return compile_pattern(p, where="error_pattern")
    except MatcherError as e:
        raise TraceFormatError(f"error_pattern {p!r} is not a valid regular expression: {e}") from e


def _output_text(out: Any) -> str | None:
    if out is None:
        return None
    if isinstance(out, str):
        return out
    try:
        return json.dumps(out, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(out)


def apply_error_pattern(t: Trajectory, pattern: str | re.Pattern[str]) -> Trajectory:
    """``t`` with tool results marked failed by a caller-supplied error convention.

    ``pattern``: a regular expression (string or compiled). For each ``tool_result`` step
    whose ``ToolResult.is_error`` is None (the source has no error channel) and whose output
    text -- the string itself, or the compact JSON of a structured output -- matches it
    (``re.search``, case-sensitive unless the pattern says otherwise, e.g. ``(?i)``), the
    result gets ``is_error=True`` and, when it has no ``error`` text, ``error`` = the first
    line of the output text. It never overrides a source's own error flag: a result with
    ``is_error`` True or False is left as read. Opt-in (DESIGN.md "Recovery": an error
    convention must be declared, never guessed). Raises ``TraceFormatError`` for an invalid
    regex. Returns ``t`` itself when nothing changes.
    """
    pat = compile_error_pattern(pattern)
    if pat is None:
        return t
    steps = list(t.steps)
    changed = False
    for i, s in enumerate(steps):
        r = s.tool_result
        if r is None or r.is_error is not None:
            continue
        text = _output_text(r.output)
        if text is None or pat.search(text) is None:
            continue
        first = text.strip().splitlines()[0] if text.strip() else text
        steps[i] = replace(s, tool_result=replace(r, is_error=True, error=r.error or first))
        changed = True
    return replace(t, steps=tuple(steps)) if changed else t
