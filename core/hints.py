"""Hints printed where a user needs them, each once per command.

``error_pattern_hint``: a source with no error channel for tool results (OpenAI Chat and
Responses, RAGAS, DeepEval, Vertex: ``ToolResult.is_error`` is None) cannot tell a failed
call from a successful one, so an agent that claims success after a ``503`` counts as a
success. When such results' texts look like errors, the hint names the ``--error-pattern``
that would mark them failed (``traces.apply_error_pattern``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .model import Trajectory

# (what the text looks like, the pattern to suggest for it); each suggestion matches at
# least what its detector matches, so the suggested option marks every result counted
_ERROR_LOOKS: tuple[tuple[str, str], ...] = (
    (r"^\s*(?:Error|ERROR|error)\b", r"^\s*(Error|ERROR|error)\b"),
    (r'"error"\s*:', r'"error"\s*:'),
    (r"\b(?:50[0-4]|429)\b(?=[^\n]{0,40}(?i:service unavailable|internal server error|bad gateway|"
     r"gateway timeout|too many requests|unavailable|error))",
     r"\b(50[0-4]|429)\b"),
    (r"(?i)\btraceback \(most recent call last\)|\bexception\b", r"(?i)traceback|exception"),
)
_COMPILED = tuple((re.compile(d), s) for d, s in _ERROR_LOOKS)


def _text(out: Any) -> str | None:
    if out is None:
        return None
    if isinstance(out, str):
        return out
    import json

    try:
        return json.dumps(out, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(out)


def error_pattern_hint(trajectories: Iterable[Trajectory]) -> str | None:
    """One line naming the ``--error-pattern`` that would mark the error-looking results of
    a source without an error channel, or None when there is nothing to say.

    Only results whose ``is_error`` is None (no error flag in the source) are looked at; a
    text looks like an error when it starts with "Error", holds a JSON ``"error":`` key, a
    5xx/429 status followed by its phrase, or a traceback/exception. The suggestion joins
    the patterns of the kinds seen. Never raises.
    """
    n_unflagged = 0
    hits = 0
    example = ""
    used: list[str] = []
    formats: set[str] = set()
    for t in trajectories:
        for r in t.tool_results():
            if r.is_error is not None:
                continue
            n_unflagged += 1
            text = _text(r.output)
            if not text:
                continue
            for rx, suggest in _COMPILED:
                if rx.search(text):
                    hits += 1
                    formats.add(t.source_format or "?")
                    if suggest not in used:
                        used.append(suggest)
                    if not example:
                        example = text.strip().splitlines()[0][:60] if text.strip() else text[:60]
                    break
    if not hits:
        return None
    pattern = "|".join(used)
    return (f"hint: {hits} of {n_unflagged} tool results from a source without an error flag "
            f"({', '.join(sorted(formats))}) look like errors (e.g. {example!r}) and count as "
            f"successful calls; --error-pattern '{pattern}' would mark them failed")


__all__ = ["error_pattern_hint"]
