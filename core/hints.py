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

_ERROR_KEY = r'"error"\s*:\s*(true|"[^"]|\{\s*"|\[\s*[^\]\s]|-?[1-9])'
# (what the text looks like, the pattern to suggest for it); each suggestion matches at
# least what its detector matches, so the suggested option marks every result counted
_ERROR_LOOKS: tuple[tuple[str, str], ...] = (
    (r"^\s*(?:Error|ERROR|error)\b", r"^\s*(Error|ERROR|error)\b"),
    # an "error" key holding something: never a false flag ("error": false / null / 0 / "" /
    # {} / [], which tools such as Haystack write on every successful result)
    (_ERROR_KEY, _ERROR_KEY),
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


class ErrorHintTally:
    """``error_pattern_hint`` one trajectory at a time (``see``), for streaming reads that
    never hold all trajectories; ``hint()`` gives the same line."""

    def __init__(self) -> None:
        self.n_unflagged = 0
        self.hits = 0
        self.example = ""
        self.used: list[str] = []
        self.formats: set[str] = set()

    def see(self, t: Trajectory) -> None:
        """Count the unflagged results of ``t`` that look like errors. Never raises."""
        for r in t.tool_results():
            if r.is_error is not None:
                continue
            self.n_unflagged += 1
            text = _text(r.output)
            if not text:
                continue
            for rx, suggest in _COMPILED:
                if rx.search(text):
                    self.hits += 1
                    self.formats.add(t.source_format or "?")
                    if suggest not in self.used:
                        self.used.append(suggest)
                    if not self.example:
                        self.example = (text.strip().splitlines()[0][:60] if text.strip()
                                        else text[:60])
                    break

    def hint(self, option: str = "--error-pattern") -> str | None:
        """The hint line, or None when no unflagged result looked like an error. ``option`` is
        how the setting is spelled where the hint is shown (``error_pattern:`` in a promptfoo
        assertion's config)."""
        if not self.hits:
            return None
        pattern = "|".join(self.used)
        return (f"hint: {self.hits} of {self.n_unflagged} tool results from a source without an "
                f"error flag ({', '.join(sorted(self.formats))}) look like errors (e.g. "
                f"{self.example!r}) and count as successful calls; {option} '{pattern}' "
                "would mark them failed")


def error_pattern_hint(trajectories: Iterable[Trajectory], option: str = "--error-pattern") -> str | None:
    """One line naming the ``--error-pattern`` that would mark the error-looking results of
    a source without an error channel, or None when there is nothing to say.

    Only results whose ``is_error`` is None (no error flag in the source) are looked at; a
    text looks like an error when it starts with "Error", holds a JSON ``"error":`` key with a
    value that is not a false flag (``false``, ``null``, ``0``, ``""``, ``{}``, ``[]``), a
    5xx/429 status followed by its phrase, or a traceback/exception. The suggestion joins
    the patterns of the kinds seen; ``option`` is the setting's spelling in the line. Never
    raises.
    """
    tally = ErrorHintTally()
    for t in trajectories:
        tally.see(t)
    return tally.hint(option)


__all__ = ["ErrorHintTally", "error_pattern_hint"]
