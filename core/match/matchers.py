"""Per-argument matchers and their registry (names usable from JSON/YAML dataset files).

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
import inspect
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import MatcherError, SchemaError


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
    from .safe_regex import compile_pattern

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


@dataclass(frozen=True, repr=False)
class SchemaMatcher(Matcher):
    """The predicted value validates against a JSON Schema (Draft 2020-12).

    The schema comes from the spec (``"schema"``) or is the expected value. jsonschema is
    imported on first use. An invalid schema raises SchemaError.
    """

    schema: Any = None
    _validator: Any = field(default=None, compare=False)
    name = "schema"

    def __post_init__(self) -> None:
        if self.schema is not None:
            object.__setattr__(self, "_validator", compile_schema(self.schema))

    def _check(self, schema: Any, predicted: Any) -> bool:
        v = self._validator if self._validator is not None else compile_schema(schema)
        if predicted is MISSING:
            return False
        try:
            return bool(v.is_valid(predicted))
        except RecursionError as e:
            raise MatcherError("schema matcher: value nested too deeply to validate") from e
        except Exception as e:  # an unresolvable reference (nothing is ever fetched)
            raise MatcherError(f"schema matcher: cannot validate: {e}") from e

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return self._check(expected, predicted)

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if predicted is MISSING:
            return False
        if self._validator is None:
            return not is_empty(predicted)
        return self._check(None, predicted)


def _outside_refs(schema: Any) -> list[str]:
    """``$ref`` / ``$dynamicRef`` values of ``schema`` that point outside it: anything but a
    fragment (``#/$defs/x``) or an ``$id`` the schema itself declares."""
    ids: set[str] = set()
    refs: list[str] = []
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k == "$id" and isinstance(v, str):
                    ids.add(v.split("#", 1)[0])
                elif k in ("$ref", "$dynamicRef") and isinstance(v, str):
                    refs.append(v)
                elif isinstance(v, (Mapping, list)):
                    todo.append(v)
        elif isinstance(node, list):
            todo.extend(x for x in node if isinstance(x, (Mapping, list)))
    return [r for r in refs if not r.startswith("#") and r.split("#", 1)[0] not in ids]


def _no_retrieval(uri: str) -> Any:
    """The schema registry's retriever: nothing is fetched (no network, no files)."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def compile_schema(schema: Any, *, where: str = "schema matcher") -> Any:
    """A jsonschema Draft 2020-12 validator for ``schema``; SchemaError (naming ``where``) if invalid.

    References resolve only inside ``schema`` (fragments and the ``$id``s it declares): a
    ``$ref`` to a URL or a file is refused here (SchemaError), and the validator's registry
    retrieves nothing, so a dataset row can never make trajcheck read a file or the network,
    nor let a fetched schema decide a verdict.
    """
    import jsonschema
    from jsonschema.validators import Draft202012Validator
    from referencing import Registry

    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"{where}: a JSON Schema must be an object or boolean, got {schema!r}")
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        path = "/".join(str(p) for p in e.path) or "(root)"
        raise SchemaError(f"{where}: not a valid JSON Schema at {path}: {e.message}") from e
    except RecursionError as e:
        raise SchemaError(f"{where}: schema nested too deeply") from e
    outside = _outside_refs(schema)
    if outside:
        raise SchemaError(f"{where}: $ref {outside[0]!r} points outside the schema; only references "
                          "within the row's own schema are resolved (no network, no files)")
    return Draft202012Validator(schema, registry=Registry(retrieve=_no_retrieval))  # type: ignore[call-arg]


class IgnoreMatcher(Matcher):
    """Always matches; the argument may be present or absent."""

    name = "ignore"

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return True

    def allows_missing(self, expected: Any) -> bool:
        return True

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return True


_NO_SCORER = ("semantic matcher: no semantic scorer configured; pass "
              "MatchContext(semantic_scorer=fn) where fn(expected_text, predicted_text) -> float "
              "in [0, 1] (e.g. trajcheck.match.semantic.semantic_context(); on the command line: "
              "--semantic), give the spec a \"fallback\" matcher, or use another matcher")
_NO_JUDGE = ("judge matcher: no judge configured; pass MatchContext(judge=fn) where "
             "fn(rubric, expected, predicted) -> bool, or use another matcher")


SEMANTIC_THRESHOLD = 0.75
"""Default ``semantic`` threshold (expected vs predicted), measured with all-MiniLM-L6-v2 on
help-desk ticket titles: paraphrases 0.80-0.92, same device with another problem 0.49-0.71,
unrelated <= 0.25 (table in trajcheck.match.semantic; asserted in tests/test_semantic.py)."""

RELEVANCE_THRESHOLD = 0.5
"""Default ``semantic`` threshold for an argument with no expected value, scored against the
case input: fitting title 0.85, one-sentence description 0.70, unrelated titles <= 0.12."""


def _threshold_ok(t: Any, where: str) -> float:
    if not _is_num(t) or not 0.0 <= t <= 1.0:
        raise MatcherError(f"{where} must be in [0, 1], got {t!r}")
    return float(t)


_ID_LIKE = re.compile(r"^\S*\d\S*$|^\w+(?:[.@_+-]\w+)+$")
"""One token holding a digit (1234, INC-7, 2026-07-18, 07/18) or word parts joined by
. @ _ + - (a.rao, j_doe@corp): values an embedding cannot tell apart."""


def _exact_kind(v: Any) -> bool:
    """True for a number or a short text that looks like an ID, number or date."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and len(v.strip()) <= 64 and bool(_ID_LIKE.match(v.strip()))


@dataclass(frozen=True, repr=False)
class SemanticMatcher(Matcher):
    """``ctx.semantic_scorer(expected_text, predicted_text) >= threshold``.

    Threshold policy: the spec's ``threshold`` when given; else ``ctx.semantic_threshold``;
    else :data:`SEMANTIC_THRESHOLD` (0.75). Non-string values are compared as their JSON
    text. With no expected value, the predicted value must be non-empty and score >= the
    relevance threshold against ``ctx.case_input``: the spec's ``threshold``, else
    ``ctx.relevance_threshold``, else :data:`RELEVANCE_THRESHOLD` (0.5).

    Values that look like IDs, numbers or dates (a number, or one short token holding a
    digit or word parts joined by ``. @ _ + -``, on either side) never pass on similarity:
    they match only when equal after trimming and case-folding.

    No scorer configured: the spec's ``fallback`` matcher (any matcher spec, e.g.
    ``{"type": "contains", "value": "laptop"}``) decides instead, for both checks; without
    a fallback, MatcherError explains how to configure one. The fallback is chosen by the
    dataset's author, so a run without the model is never scored by a silent guess. Raises
    MatcherError for a context threshold outside [0, 1] or a bad fallback spec.
    """

    threshold: float | None = None
    fallback: Any = None
    _fallback: Matcher | None = field(default=None, compare=False)
    name = "semantic"

    def __post_init__(self) -> None:
        if self.threshold is not None:
            _threshold_ok(self.threshold, "semantic matcher: threshold")
        if self.fallback is not None:
            object.__setattr__(self, "_fallback", get_matcher(self.fallback))

    def _score(self, a: Any, b: Any, ctx: MatchContext, threshold: float) -> bool:
        if ctx.semantic_scorer is None:
            raise MatcherError(_NO_SCORER)
        try:
            s = float(ctx.semantic_scorer(_as_text(a), _as_text(b)))
        except MatcherError:
            raise
        except Exception as e:
            raise MatcherError(f"semantic matcher: the scorer raised {type(e).__name__}: {e}") from e
        return not math.isnan(s) and s >= threshold

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if ctx.semantic_scorer is None and self._fallback is not None:
            return self._fallback(expected, predicted, ctx)
        if is_empty(predicted) and not is_empty(expected):
            return False
        if _exact_kind(expected) or _exact_kind(predicted):
            # IDs, numbers and dates never pass on embedding similarity alone (order 1234 vs
            # 1243 scores 0.91 with all-MiniLM-L6-v2): they must be equal once normalized
            return _as_text(expected).strip().casefold() == _as_text(predicted).strip().casefold()
        t = self.threshold
        if t is None:
            t = (SEMANTIC_THRESHOLD if ctx.semantic_threshold is None
                 else _threshold_ok(ctx.semantic_threshold, "MatchContext.semantic_threshold"))
        return self._score(expected, predicted, ctx, t)

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if ctx.semantic_scorer is None and self._fallback is not None:
            return self._fallback.check_unexpected(predicted, ctx)
        if is_empty(predicted):
            return False
        if not ctx.case_input:
            raise MatcherError("semantic matcher: argument has no expected value and the case "
                               "has no input text to check relevance against")
        t = self.threshold
        if t is None:
            t = (RELEVANCE_THRESHOLD if ctx.relevance_threshold is None
                 else _threshold_ok(ctx.relevance_threshold, "MatchContext.relevance_threshold"))
        return self._score(ctx.case_input, predicted, ctx, t)


_DEFAULT_RUBRIC = "Does the predicted argument value mean the same as the expected value?"
_RELEVANCE_RUBRIC = "Is the predicted argument value relevant to and consistent with the request?"


@dataclass(frozen=True, repr=False)
class JudgeMatcher(Matcher):
    """``ctx.judge(rubric, expected, predicted)`` is truthy.

    With no expected value, ``ctx.judge(relevance_rubric, case_input, predicted)`` decides
    (after the non-empty check). No judge configured: the spec's ``fallback`` matcher decides
    (as for ``semantic``), else MatcherError.
    """

    rubric: str = _DEFAULT_RUBRIC
    fallback: Any = None
    _fallback: Matcher | None = field(default=None, compare=False)
    name = "judge"

    def __post_init__(self) -> None:
        if self.fallback is not None:
            object.__setattr__(self, "_fallback", get_matcher(self.fallback))

    def _ask(self, rubric: str, a: Any, b: Any, ctx: MatchContext) -> bool:
        if ctx.judge is None:
            raise MatcherError(_NO_JUDGE)
        try:
            return bool(ctx.judge(rubric, a, b))
        except MatcherError:
            raise
        except Exception as e:
            raise MatcherError(f"judge matcher: the judge raised {type(e).__name__}: {e}") from e

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if ctx.judge is None and self._fallback is not None:
            return self._fallback(expected, predicted, ctx)
        if predicted is MISSING:
            return False
        return self._ask(self.rubric, expected, predicted, ctx)

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if ctx.judge is None and self._fallback is not None:
            return self._fallback.check_unexpected(predicted, ctx)
        if is_empty(predicted):
            return False
        rubric = self.rubric if self.rubric != _DEFAULT_RUBRIC else _RELEVANCE_RUBRIC
        return self._ask(rubric, ctx.case_input, predicted, ctx)


class CallableMatcher(Matcher):
    """Wraps a user function ``f(expected, predicted)`` or ``f(expected, predicted, ctx)``.

    The result is coerced to bool. An absent argument never matches (the function is not
    called). An exception inside the function is re-raised as MatcherError naming it.
    """

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self._with_ctx = _accepts_three(fn)

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if predicted is MISSING:
            return False
        try:
            r = self.fn(expected, predicted, ctx) if self._with_ctx else self.fn(expected, predicted)
        except MatcherError:
            raise
        except Exception as e:
            raise MatcherError(
                f"matcher function {self.name!r} raised {type(e).__name__}: {e}") from e
        return bool(r)


def _accepts_three(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        sig.bind(None, None, None)
        return True
    except TypeError:
        pass
    try:
        sig.bind(None, None)
        return False
    except TypeError as e:
        raise MatcherError(
            f"matcher function {getattr(fn, '__name__', fn)!r} must accept (expected, predicted) "
            "or (expected, predicted, ctx)") from e


# ---------------------------------------------------------------------------------------
# registry

_EXACT = ExactMatcher()
_SINGLETONS: dict[str, Matcher] = {
    "exact": _EXACT,
    "normalized": NormalizedMatcher(),
    "unordered": UnorderedMatcher(),
    "set": SetMatcher(),
    "ignore": IgnoreMatcher(),
}


def _one_of_factory(values: Any = None, item: Any = "exact",
                    empty_string_is_value: bool = False) -> Matcher:
    if values is not None and not isinstance(values, (list, tuple)):
        raise MatcherError(f"one_of matcher: 'values' must be a list, got {values!r}")
    return OneOfMatcher(values=tuple(values) if values is not None else None,
                        item=get_matcher(item), empty_string_is_value=bool(empty_string_is_value))


def _contains_factory(value: Any = None) -> Matcher:
    if value is not None and not isinstance(value, str):
        raise MatcherError(f"contains matcher: 'value' must be a string, got {value!r}")
    return ContainsMatcher(value=value)


def _noparam(cls: type[Matcher]) -> Callable[..., Matcher]:
    def make() -> Matcher:
        return cls()

    return make


_FACTORIES: dict[str, Callable[..., Matcher]] = {
    "exact": _noparam(ExactMatcher),
    "normalized": _noparam(NormalizedMatcher),
    "numeric": NumericMatcher,
    "unordered": _noparam(UnorderedMatcher),
    "set": _noparam(SetMatcher),
    "regex": RegexMatcher,
    "contains": _contains_factory,
    "one_of": _one_of_factory,
    "schema": SchemaMatcher,
    "ignore": _noparam(IgnoreMatcher),
    "semantic": SemanticMatcher,
    "judge": JudgeMatcher,
}
_DEFAULT_INSTANCES: dict[str, Matcher] = {}

# Matchers defined in their own module, imported on first use of the name so that
# ``import trajcheck.match.matchers`` does not load them: name -> (module in this package, factory).
_LAZY_FACTORIES: dict[str, tuple[str, str]] = {
    "bfcl": ("bfcl", "BfclMatcher"),  # BFCL possible-answer parity (trajcheck.match.bfcl)
    "fields": ("field_matcher", "make_fields_matcher"),  # lists of objects on some keys
}
# Names that used to be defined here, now in their own module (still importable from here).
_MOVED: dict[str, str] = {"BfclMatcher": "bfcl", "bfcl_standardize": "bfcl"}


def __getattr__(name: str) -> Any:
    """Names moved to ``trajcheck.match.bfcl``, resolved from there on first access (so old
    imports keep working); any other name raises AttributeError."""
    if name in _MOVED:
        return getattr(importlib.import_module(f".{_MOVED[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def known_matchers() -> list[str]:
    """Sorted names of every registered matcher (including those loaded on first use)."""
    return sorted(set(_FACTORIES) | set(_LAZY_FACTORIES))


def register_matcher(name: str, factory: Callable[..., Any]) -> None:
    """Register ``factory`` under ``name`` so datasets can use it by name or spec dict.

    ``factory(**params)`` receives the spec dict's keys other than ``type`` and must return
    a matcher (a :class:`Matcher` or any callable ``(expected, predicted[, ctx]) -> bool``,
    which is wrapped). Re-registering a name replaces it. Raises MatcherError on a bad name.
    """
    if not isinstance(name, str) or not name:
        raise MatcherError(f"matcher name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise MatcherError(f"matcher factory for {name!r} is not callable")
    _FACTORIES[name] = factory
    _DEFAULT_INSTANCES.pop(name, None)
    _SINGLETONS.pop(name, None)


def _load_lazy(name: str) -> Callable[..., Any]:
    """Import and register the factory of a name in ``_LAZY_FACTORIES`` (called when ``name``
    is not in ``_FACTORIES``, so a ``register_matcher`` of the same name wins). Raises
    MatcherError for an unknown name, listing the known ones."""
    lazy = _LAZY_FACTORIES.get(name)
    if lazy is None:
        raise MatcherError(
            f"unknown matcher {name!r}; known matchers: {', '.join(known_matchers())}") from None
    module, attr = lazy
    factory: Callable[..., Any] = getattr(importlib.import_module(f".{module}", __package__), attr)
    return _FACTORIES.setdefault(name, factory)


def _build(name: str, params: dict[str, Any]) -> Matcher:
    try:
        factory = _FACTORIES[name]
    except KeyError:
        factory = _load_lazy(name)
    try:
        m = factory(**params)
    except (MatcherError, SchemaError):
        raise
    except TypeError as e:
        raise MatcherError(f"matcher {name!r}: bad parameters {sorted(params)}: {e}") from e
    if isinstance(m, Matcher):
        return m
    if callable(m):
        return CallableMatcher(m)
    raise MatcherError(f"matcher factory for {name!r} returned {m!r}, not a matcher")


#: ``"name:argument"`` shorthands a dataset author may write instead of the dict form:
#: matcher name -> (the parameter the argument sets, how the text is read).
SHORTHANDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "numeric": ("abs_tol", float),      # "numeric:0.5"   == {"type": "numeric", "abs_tol": 0.5}
    "regex": ("pattern", str),          # "regex:^INC-\\d+$" == {"type": "regex", "pattern": ...}
    "contains": ("value", str),         # "contains:laptop"
    "semantic": ("threshold", float),   # "semantic:0.8"
}


def _shorthand(spec: str) -> Matcher:
    """The matcher of a ``"name:argument"`` spec (see :data:`SHORTHANDS`); MatcherError
    naming the spec for an unknown name, a name without a shorthand or a bad argument."""
    name, _, arg = spec.partition(":")
    if name not in SHORTHANDS:
        if name in _FACTORIES or name in _LAZY_FACTORIES:
            raise MatcherError(f"matcher spec {spec!r}: {name!r} takes no ':' argument; "
                               f"shorthands exist for {', '.join(sorted(SHORTHANDS))}")
        raise MatcherError(f"unknown matcher {name!r} in {spec!r}; known: {', '.join(known_matchers())}")
    param, read = SHORTHANDS[name]
    try:
        value = read(arg)
    except ValueError:
        raise MatcherError(f"matcher spec {spec!r}: {param} must be a number, got {arg!r}") from None
    return _build(name, {param: value})


def get_matcher(spec: str | dict[str, Any] | Callable[..., Any] | None) -> Matcher:
    """Resolve a matcher spec to a :class:`Matcher`.

    ``spec`` is a registered name (``"exact"``), a ``"name:argument"`` shorthand
    (:data:`SHORTHANDS`: ``"numeric:0.5"`` sets ``abs_tol``, ``"regex:^INC-\\d+$"`` the
    pattern, ``"contains:text"`` the value, ``"semantic:0.8"`` the threshold), a dict
    ``{"type": name, **params}``, a :class:`Matcher`, any callable ``(expected,
    predicted[, ctx]) -> bool``, or None (meaning ``exact``). Raises MatcherError for an
    unknown name (listing the known ones) or malformed parameters, and SchemaError for a
    ``schema`` spec whose schema is invalid.
    """
    if spec is None:
        return _EXACT
    if isinstance(spec, Matcher):
        return spec
    if isinstance(spec, str):
        m = _SINGLETONS.get(spec)
        if m is not None:
            return m
        m = _DEFAULT_INSTANCES.get(spec)
        if m is None:
            m = _shorthand(spec) if ":" in spec else _build(spec, {})
            # threads building the same spec at once all get the one instance kept first
            m = _DEFAULT_INSTANCES.setdefault(spec, m)
        return m
    if isinstance(spec, Mapping):
        if "type" not in spec or not isinstance(spec["type"], str):
            raise MatcherError(f"matcher spec {dict(spec)!r} needs a 'type' naming a matcher; "
                               f"known matchers: {', '.join(known_matchers())}")
        params = {k: v for k, v in spec.items() if k != "type"}
        if not params:
            return get_matcher(spec["type"])
        return _build(spec["type"], params)
    if callable(spec):
        return CallableMatcher(spec)
    raise MatcherError(f"a matcher spec must be a name, a dict with 'type', or a callable; "
                       f"got {spec!r}")


__all__ = [
    "MISSING",
    "RELEVANCE_THRESHOLD",
    "SEMANTIC_THRESHOLD",
    "CallableMatcher",
    "MatchContext",
    "Matcher",
    "compile_schema",
    "exact_equal",
    "get_matcher",
    "is_empty",
    "known_matchers",
    "normalize_text",
    "register_matcher",
]
