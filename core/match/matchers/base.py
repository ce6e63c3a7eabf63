"""What every matcher shares: the ``MISSING`` sentinel, ``MatchContext`` (what a matcher may
consult besides the two values), the type-aware ``exact_equal`` and text helpers, and the
``Matcher`` base class."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class _Missing:
    """Sentinel type for an argument absent from the predicted call."""

    _inst: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Passed as ``predicted`` when the predicted call lacks the argument."""


@dataclass(frozen=True)
class MatchContext:
    """What a matcher may consult besides the two values.

    ``case_input``: the case's request text (used by argument checks with no expected value).
    ``user``: the case's user context dict. ``semantic_scorer(a, b) -> float`` in [0, 1]:
    similarity of two texts, used by ``semantic``. ``judge(rubric, expected, predicted) ->
    bool``: a model judgement, used by ``judge``. Backends are plugged in by the caller.
    ``semantic_threshold`` / ``relevance_threshold`` (in [0, 1], None = the defaults
    :data:`SEMANTIC_THRESHOLD` 0.75 / :data:`RELEVANCE_THRESHOLD` 0.5): the ``semantic``
    matcher's thresholds for expected-vs-predicted and for relevance of an argument with no
    expected value to ``case_input``, used when the dataset's spec gives no ``threshold``.
    """

    case_input: str | None = None
    user: dict[str, Any] | None = None
    semantic_scorer: Callable[[str, str], float] | None = None
    judge: Callable[[str, Any, Any], bool] | None = None
    semantic_threshold: float | None = None
    relevance_threshold: float | None = None


DEFAULT_CONTEXT = MatchContext()


# ---------------------------------------------------------------------------------------
# value helpers


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def exact_equal(a: Any, b: Any) -> bool:
    """Type-aware deep equality (the ``exact`` matcher's rule), iterative so any depth works.

    Numbers (int/float, not bool) compare by value (``2 == 2.0``; NaN equals nothing); bools
    only equal bools; strings only equal strings; None only None; mappings need the same key
    set and equal values; lists and tuples need the same length and equal items in order.
    Other objects compare with ``==`` when of the same type.

    Performance: scalars of one exact built-in type, and lists/dicts of them, are compared
    directly; anything else goes through the general iterative walk (same rule).
    """
    ta = type(a)
    if ta is type(b):
        if ta is str or ta is int or ta is float or ta is bool:
            return bool(a == b)
        if ta is _NONE_TYPE:
            return True
        if ta is list or ta is tuple:
            if len(a) != len(b):
                return False
            for x, y in zip(a, b):
                tx = type(x)
                if tx is type(y) and (tx is str or tx is int or tx is float or tx is bool):
                    if x != y:
                        return False
                elif not _exact_equal_walk(x, y):
                    return False
            return True
        if ta is dict:
            if len(a) != len(b) or a.keys() != b.keys():
                return False
            for k, x in a.items():
                y = b[k]
                tx = type(x)
                if tx is type(y) and (tx is str or tx is int or tx is float or tx is bool):
                    if x != y:
                        return False
                elif not _exact_equal_walk(x, y):
                    return False
            return True
    return _exact_equal_walk(a, b)


_NONE_TYPE = type(None)


def _exact_equal_walk(a: Any, b: Any) -> bool:
    """The general iterative walk behind :func:`exact_equal`."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is MISSING or y is MISSING:
            return False
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif _is_num(x) or _is_num(y):
            if not (_is_num(x) and _is_num(y) and x == y):
                return False
        elif isinstance(x, str) or isinstance(y, str):
            if not (isinstance(x, str) and isinstance(y, str) and x == y):
                return False
        elif x is None or y is None:
            if not (x is None and y is None):
                return False
        elif isinstance(x, Mapping) or isinstance(y, Mapping):
            if not (isinstance(x, Mapping) and isinstance(y, Mapping)):
                return False
            if len(x) != len(y) or x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
            if not (isinstance(x, (list, tuple)) and isinstance(y, (list, tuple))):
                return False
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        else:
            if type(x) is not type(y):
                return False
            try:
                if not bool(x == y):
                    return False
            except Exception:
                return False
    return True


def normalize_text(s: str) -> str:
    """NFKC, strip the ends, collapse inner whitespace runs to one space, casefold."""
    return " ".join(unicodedata.normalize("NFKC", s).split()).casefold()


def is_empty(v: Any) -> bool:
    """True for MISSING, None, a blank string, or an empty list/dict."""
    if v is MISSING or v is None:
        return True
    if isinstance(v, str):
        return not v.strip()
    if isinstance(v, (list, tuple, dict)):
        return len(v) == 0
    return False


def _as_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    import json

    try:
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(v)


# ---------------------------------------------------------------------------------------
# matcher classes


class Matcher:
    """Base class: ``m(expected, predicted, ctx) -> bool``.

    ``allows_missing(expected)`` says whether the argument may be absent;
    ``check_unexpected(predicted, ctx)`` checks an argument that has a ``match`` entry but
    no expected value (present and non-empty by default).
    """

    name: str = "matcher"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        raise NotImplementedError

    def allows_missing(self, expected: Any) -> bool:
        """Whether an absent predicted argument satisfies this matcher for ``expected``."""
        return False

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        """The check for an argument with a ``match`` entry and no expected value."""
        return not is_empty(predicted)

    def __repr__(self) -> str:
        return f"<matcher {self.name}>"

