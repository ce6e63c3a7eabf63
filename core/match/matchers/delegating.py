"""Matchers that hand the decision to something the caller plugs in: ``semantic`` (a
similarity scorer and its thresholds), ``judge`` (a model judgement) and a plain function
(``CallableMatcher``)."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import MatcherError
from .base import (
    DEFAULT_CONTEXT,
    MISSING,
    MatchContext,
    Matcher,
    _as_text,
    _is_num,
    is_empty,
)

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
            from .registry import get_matcher  # the registry imports this module

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
            from .registry import get_matcher  # the registry imports this module

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

