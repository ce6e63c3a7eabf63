"""Matchers that compare the two values themselves: ``exact``, ``normalized``, ``numeric``,
``unordered``, ``set``, ``regex``, ``contains``, ``one_of`` and ``ignore``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...errors import MatcherError
from .base import (
    DEFAULT_CONTEXT,
    MISSING,
    MatchContext,
    Matcher,
    _is_num,
    exact_equal,
    is_empty,
    normalize_text,
)


class ExactMatcher(Matcher):
    """Type-aware deep equality; see :func:`exact_equal`."""

    name = "exact"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return exact_equal(expected, predicted)


class NormalizedMatcher(Matcher):
    """Strings: equal after :func:`normalize_text`; other values: ``exact``."""

    name = "normalized"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if isinstance(expected, str) and isinstance(predicted, str):
            return normalize_text(expected) == normalize_text(predicted)
        return exact_equal(expected, predicted)


@dataclass(frozen=True, repr=False)
class NumericMatcher(Matcher):
    """int/float within ``abs_tol`` or ``rel_tol`` (``math.isclose``); bools and strings never.

    An expected value that is not a number raises MatcherError (a dataset fault).
    """

    abs_tol: float = 1e-9
    rel_tol: float = 1e-9
    name = "numeric"

    def __post_init__(self) -> None:
        for k in ("abs_tol", "rel_tol"):
            v = getattr(self, k)
            if not _is_num(v) or v < 0 or math.isnan(v):
                raise MatcherError(f"numeric matcher: {k} must be a number >= 0, got {v!r}")

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if not _is_num(expected):
            raise MatcherError(
                f"numeric matcher: expected value must be an int or float, got {expected!r}")
        if not _is_num(predicted):
            return False
        try:
            return math.isclose(expected, predicted, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        except OverflowError:
            return False


def _multiset_equal(exp: list[Any] | tuple[Any, ...], pred: list[Any] | tuple[Any, ...]) -> bool:
    if len(exp) != len(pred):
        return False
    remaining = list(pred)
    for e in exp:
        # exact_equal is an equivalence relation (NaN aside), so first-fit removal is exact.
        for j, p in enumerate(remaining):
            if exact_equal(e, p):
                del remaining[j]
                break
        else:
            return False
    return True


def _contains_item(items: list[Any] | tuple[Any, ...], x: Any) -> bool:
    return any(exact_equal(x, y) for y in items)


class UnorderedMatcher(Matcher):
    """Lists holding the same multiset of items (``exact`` items); non-lists: ``exact``."""

    name = "unordered"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if isinstance(expected, (list, tuple)) and isinstance(predicted, (list, tuple)):
            return _multiset_equal(expected, predicted)
        return exact_equal(expected, predicted)


class SetMatcher(Matcher):
    """Lists holding the same set of items, duplicates ignored (``exact`` items)."""

    name = "set"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if isinstance(expected, (list, tuple)) and isinstance(predicted, (list, tuple)):
            return all(_contains_item(predicted, e) for e in expected) and all(
                _contains_item(expected, p) for p in predicted)
        return exact_equal(expected, predicted)


def _compile_regex(pattern: Any, flags: str) -> Any:
    """A data pattern compiled for linear-time matching (``trajcheck.match.safe_regex``)."""
    from ..safe_regex import compile_pattern

    return compile_pattern(pattern, flags, where="regex matcher")


@dataclass(frozen=True, repr=False)
class RegexMatcher(Matcher):
    """Full match of a string (RE2, linear time); the spec's pattern, else the expected value."""

    pattern: str | None = None
    flags: str = ""
    _compiled: Any = field(default=None, compare=False)
    name = "regex"

    def __post_init__(self) -> None:
        if not isinstance(self.flags, str):
            raise MatcherError(f"regex matcher: flags must be a string like 'i', got {self.flags!r}")
        if self.pattern is not None:
            object.__setattr__(self, "_compiled", _compile_regex(self.pattern, self.flags))

    def _rx(self, expected: Any) -> Any:
        if self._compiled is not None:
            return self._compiled
        return _compile_regex(expected, self.flags)

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        rx = self._rx(expected)
        return isinstance(predicted, str) and rx.fullmatch(predicted) is not None

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if is_empty(predicted):
            return False
        if self._compiled is None:
            return True
        return isinstance(predicted, str) and self._compiled.fullmatch(predicted) is not None


@dataclass(frozen=True, repr=False)
class ContainsMatcher(Matcher):
    """The expected string (normalized) occurs in the predicted string (normalized).

    An expected list of strings requires every one to occur. Non-string predicted -> False.
    """

    value: str | None = None
    name = "contains"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        needle = self.value if self.value is not None else expected
        needles = needle if isinstance(needle, (list, tuple)) else [needle]
        for n in needles:
            if not isinstance(n, str):
                raise MatcherError(f"contains matcher: expected value must be a string, got {n!r}")
        if not isinstance(predicted, str):
            return False
        hay = normalize_text(predicted)
        return all(normalize_text(n) in hay for n in needles)

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if is_empty(predicted):
            return False
        return self.value is None or self(None, predicted, ctx)


@dataclass(frozen=True, repr=False)
class OneOfMatcher(Matcher):
    """The predicted value matches one of the acceptable values (``item`` matcher, default exact).

    The acceptable values are the expected value (a list) or the spec's ``values``. ``""`` in
    the list means the argument may be omitted (BFCL's possible-answer convention); it is not
    itself offered as a value to match unless ``empty_string_is_value`` is true.
    """

    values: tuple[Any, ...] | None = None
    item: Matcher = field(default_factory=ExactMatcher)
    empty_string_is_value: bool = False
    name = "one_of"

    def _options(self, expected: Any) -> list[Any] | tuple[Any, ...]:
        opts = self.values if self.values is not None else expected
        if not isinstance(opts, (list, tuple)):
            raise MatcherError(
                f"one_of matcher: expected value must be a list of acceptable values, got {opts!r}")
        return opts

    def allows_missing(self, expected: Any) -> bool:
        return any(isinstance(o, str) and o == "" for o in self._options(expected))

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        opts = self._options(expected)
        if predicted is MISSING:
            return self.allows_missing(expected)
        for o in opts:
            if isinstance(o, str) and o == "" and not self.empty_string_is_value:
                continue
            if self.item(o, predicted, ctx):
                return True
        return False



class IgnoreMatcher(Matcher):
    """Always matches; the argument may be present or absent."""

    name = "ignore"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return True

    def allows_missing(self, expected: Any) -> bool:
        return True

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return True

