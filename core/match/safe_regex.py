"""Regular expressions from data, matched in linear time.

A pattern from a dataset row (the ``regex`` matcher) or the command line (``--error-pattern``)
is matched against text an agent or a trace produced. Python's backtracking ``re`` takes
exponential time on patterns such as ``(a+)+$`` against a few dozen characters (137 s for 28
in the audit), so such patterns are compiled with RE2 (the ``google-re2`` package, a
dependency of trajcheck), whose matching time is linear in the text. RE2 has no
backreferences and no lookaround: a pattern using them is refused with ``MatcherError``
naming the feature (RE2's message), rather than run without a time bound. Where google-re2
cannot be imported (a platform without its wheel), Python's ``re`` is used and the time bound
is lost; ``ENGINE`` says which engine is in use.

Flags are letters: ``i`` (ignore case), ``m`` (``^``/``$`` at line ends), ``s`` (``.`` matches
a newline). Python's verbose flag ``x`` has no RE2 equivalent and is refused. Character
classes such as ``\\d`` and ``\\w`` are ASCII in RE2 (Unicode in Python's ``re``).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from ..errors import MatcherError

try:  # pragma: no branch - depends on the platform
    import re2 as _re2
except ImportError:  # pragma: no cover
    _re2 = None

ENGINE = "re2" if _re2 is not None else "re"
"""``"re2"`` (linear-time matching) or ``"re"`` (google-re2 not importable)."""

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


class Pattern(Protocol):
    """What both engines' compiled patterns offer (``search``, ``fullmatch``, ``pattern``)."""

    @property
    def pattern(self) -> Any: ...

    def search(self, text: str) -> Any: ...

    def fullmatch(self, text: str) -> Any: ...


def compile_pattern(pattern: Any, flags: str = "", *, where: str = "regex") -> Pattern:
    """``pattern`` compiled for linear-time matching (see the module doc).

    ``pattern``: the regular expression text; ``flags``: letters from ``i``, ``m``, ``s``.
    ``where`` names the pattern's owner in messages (e.g. ``"regex matcher"``). Returns an
    object with ``search(text)`` and ``fullmatch(text)`` (None or a match object). Raises
    ``MatcherError`` for a non-string pattern, an unknown flag, or a pattern the engine
    rejects (invalid syntax; backreferences or lookaround under RE2).
    """
    if not isinstance(pattern, str):
        raise MatcherError(f"{where}: pattern must be a string, got {pattern!r}")
    if not isinstance(flags, str):
        raise MatcherError(f"{where}: flags must be a string like 'i', got {flags!r}")
    for ch in flags:
        if ch not in _FLAGS:
            hint = " (verbose patterns are not supported by the linear-time engine)" if ch == "x" else ""
            raise MatcherError(f"{where}: unknown flag {ch!r} (known: i, m, s){hint}")
    if _re2 is None:  # pragma: no cover - depends on the platform
        f = 0
        for ch in flags:
            f |= _FLAGS[ch]
        try:
            return re.compile(pattern, f)
        except re.error as e:
            raise MatcherError(f"{where}: invalid pattern {pattern!r}: {e}") from e
    opts = _re2.Options()
    opts.log_errors = False
    prefix = "".join(sorted(set(flags)))
    text = f"(?{prefix}){pattern}" if prefix else pattern
    try:
        return _re2.compile(text, opts)  # type: ignore[no-any-return]
    except Exception as e:  # re2.error; its message is bytes
        msg = e.args[0] if e.args else e
        if isinstance(msg, bytes):
            msg = msg.decode("utf-8", "replace")
        try:
            re.compile(pattern)
        except re.error as pe:
            raise MatcherError(f"{where}: invalid pattern {pattern!r}: {pe}") from e
        raise MatcherError(f"{where}: pattern {pattern!r} uses a feature without a linear-time "
                           f"guarantee, which trajcheck does not run on untrusted text ({msg})") from e


__all__ = ["ENGINE", "Pattern", "compile_pattern"]
