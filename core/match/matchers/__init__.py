"""Per-argument matchers and their registry (names usable from JSON/YAML dataset files).

Modules: ``base`` (``MISSING``, ``MatchContext``, ``exact_equal``, the ``Matcher`` base class),
``values`` (matchers comparing the two values), ``schema``, ``delegating`` (``semantic``,
``judge``, plain functions) and ``registry`` (names, shorthands, ``get_matcher``); every name
is importable from this package.

A matcher decides whether one predicted argument value matches one expected value. It is a
callable ``m(expected, predicted, ctx) -> bool`` where ``ctx`` is a :class:`MatchContext`.
Dataset rows name matchers in ``ExpectedCall.match``: a registered name (``"normalized"``),
a spec dict (``{"type": "numeric", "abs_tol": 0.01}``), or, from Python, any callable.

Built-in matchers (semantics are the policies of ../shared/DESIGN.md, "Policies: Matchers"):

========== ==================================================================================
exact      type-aware equality: ``2 == 2.0``; ``True != 1``; ``"1" != 1``; dicts by key in any
           order, lists/tuples in order, nested to any depth. NaN never equals anything.
normalized strings only: NFKC, strip the ends, collapse inner whitespace runs to one space,
           casefold; then equal. Non-strings fall back to ``exact``.
numeric    int/float only (never bool, never numeric strings); ``math.isclose`` with
           ``abs_tol`` (default 1e-9) and ``rel_tol`` (default 1e-9). NaN never matches.
unordered  both lists hold the same multiset of items; items compared with ``exact``.
set        both lists hold the same set of items (duplicates ignored), ``exact`` items.
regex      full match on a string, in linear time (RE2, ``trajcheck.match.safe_regex``: no
           backreferences or lookaround); pattern from the spec (``{"type": "regex",
           "pattern": ..., "flags": "i"}``) or, without one, the expected value is the pattern.
contains   the expected string (normalized) is a substring of the predicted string (normalized).
one_of     the expected value is a list of acceptable values (BFCL's possible answers);
           ``""`` in the list means the argument may be omitted. Items are compared with
           ``exact`` unless the spec gives ``"item": <matcher spec>``.
schema     the predicted value validates against a JSON Schema (Draft 2020-12), given in the
           spec as ``"schema"`` or as the expected value. A schema that is not a valid schema
           raises :class:`~trajcheck.errors.SchemaError`.
ignore     always matches; the argument may be present or absent.
semantic   ``ctx.semantic_scorer(expected_text, predicted_text) >= threshold``; threshold
           from the spec's ``"threshold"``, else ``ctx.semantic_threshold``, else 0.75
           (:data:`SEMANTIC_THRESHOLD`, measured with all-MiniLM-L6-v2: see trajcheck.match.semantic).
           Spec ``"fallback"``: a matcher spec used instead when no scorer is configured.
judge      ``ctx.judge(rubric, expected, predicted)`` is truthy (spec ``"rubric"`` optional;
           ``"fallback"`` as for ``semantic``, used when no judge is configured).
========== ==================================================================================

``bfcl`` (BFCL possible-answer parity: the Berkeley Function Calling Leaderboard's AST rules)
is registered too, but defined in :mod:`trajcheck.match.bfcl` and imported on first use of the name;
so is ``fields`` (lists of objects compared on some keys of each item,
:mod:`trajcheck.match.field_matcher`).

A ``match`` entry for an argument with no expected value (DESIGN.md: ``title: semantic`` with
no ``title`` in ``args``) is checked by :meth:`Matcher.check_unexpected`: the predicted value
must be present and non-empty, and for ``semantic``/``judge`` relevant to the case input
(``ctx.case_input``); ``regex``/``schema`` with their pattern/schema in the spec also apply it.

Absent arguments are passed to matchers as :data:`MISSING`; only ``ignore`` and ``one_of``
with ``""`` accept it.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import (
    DEFAULT_CONTEXT,
    MISSING,
    MatchContext,
    Matcher,
    _as_text,
    _exact_equal_walk,
    _is_num,
    _Missing,
    exact_equal,
    is_empty,
    normalize_text,
)
from .delegating import (
    RELEVANCE_THRESHOLD,
    SEMANTIC_THRESHOLD,
    CallableMatcher,
    JudgeMatcher,
    SemanticMatcher,
    _exact_kind,
)
from .registry import SHORTHANDS, get_matcher, known_matchers, register_matcher
from .schema import SchemaMatcher, compile_schema
from .values import (
    ContainsMatcher,
    ExactMatcher,
    IgnoreMatcher,
    NormalizedMatcher,
    NumericMatcher,
    OneOfMatcher,
    RegexMatcher,
    SetMatcher,
    UnorderedMatcher,
)

# Names that used to be defined here, now in their own module (still importable from here).
_MOVED: dict[str, str] = {"BfclMatcher": "bfcl", "bfcl_standardize": "bfcl"}


def __getattr__(name: str) -> Any:
    """Names moved to ``trajcheck.match.bfcl``, resolved from there on first access (so old
    imports keep working); any other name raises AttributeError."""
    if name in _MOVED:
        return getattr(importlib.import_module(f"..{_MOVED[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_CONTEXT",
    "MISSING",
    "RELEVANCE_THRESHOLD",
    "SEMANTIC_THRESHOLD",
    "SHORTHANDS",
    "CallableMatcher",
    "ContainsMatcher",
    "ExactMatcher",
    "IgnoreMatcher",
    "JudgeMatcher",
    "MatchContext",
    "Matcher",
    "NormalizedMatcher",
    "NumericMatcher",
    "OneOfMatcher",
    "RegexMatcher",
    "SchemaMatcher",
    "SemanticMatcher",
    "SetMatcher",
    "UnorderedMatcher",
    "_Missing",
    "_as_text",
    "_exact_equal_walk",
    "_exact_kind",
    "_is_num",
    "compile_schema",
    "exact_equal",
    "get_matcher",
    "is_empty",
    "known_matchers",
    "normalize_text",
    "register_matcher",
]
