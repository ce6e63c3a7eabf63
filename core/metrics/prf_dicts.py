"""Tool-call precision/recall/F1 straight from plain dicts, without building model objects.

Host adapters (RAGAS, promptfoo, ...) hold a run's calls and the reference calls as plain
``{"name", "args"}`` dicts; building ``ToolCall``/``ExpectedCall``/``Case`` objects for
them costs more than the metric. :func:`tool_call_prf_dicts` scores the dicts directly when
every expected call is compared with ``exact`` (matching by canonical arguments,
``trajcheck.match.exact_match``) and otherwise builds the objects and calls ``tool_call_prf``;
the result is the same object either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

from ..match.exact_match import match_items, plan_of
from ..match.matchers import MatchContext
from ..model import ARGS_MODES, Case, ExpectedCall, ToolCall
from .calls import (
    Matched,
    PRFResult,
    _wrong_args_note,
    kept_counts,
    prf_counts,
    prf_result,
    tool_call_prf,
)

_PLAIN_KEYS = frozenset({"name", "args", "args_mode"})
T = TypeVar("T")


class _Lazy(Sequence[T]):
    """``items`` converted one at a time, only those read (the reason's argument note reads
    one call and one expected call at most)."""

    def __init__(self, items: Sequence[Any], convert: Callable[[Any], T]) -> None:
        self.items, self.convert = items, convert

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...

    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self.convert(x) for x in self.items[i]]
        return self.convert(self.items[i])


def _plain_expected(expected: Any) -> list[tuple[str, Any, str | None]] | None:
    """``(name, args, args_mode)`` per expected dict when each is a plain exact call (a dict
    with a non-empty string name, args a dict or null, a known or no args_mode, no
    ``match``), else None."""
    if type(expected) is not list and type(expected) is not tuple:
        return None
    out = []
    for e in expected:
        if type(e) is not dict or not e.keys() <= _PLAIN_KEYS:
            return None
        name, args, mode = e.get("name"), e.get("args"), e.get("args_mode")
        if (type(name) is not str or not name or (args is not None and type(args) is not dict)
                or (mode is not None and mode not in ARGS_MODES)):
            return None
        out.append((name, args, mode))
    return out


def _plain_calls(calls: Any) -> list[tuple[str, Any]] | None:
    if type(calls) is not list and type(calls) is not tuple:
        return None
    out = []
    for c in calls:
        if type(c) is not dict or "name" not in c:
            return None
        out.append((c["name"], c.get("args")))
    return out


def _plain_match(calls: Any, expected: Any, optional_calls: Any, args_mode: Any
                 ) -> tuple[list[tuple[str, Any]], list[tuple[str, Any, str | None]], list[int]] | None:
    """``(calls, expected, match of each call)`` when the dicts are in the plain exact scope
    (``tool_call_prf_dicts``), else None: the general path is needed."""
    exp = _plain_expected(expected)
    got = _plain_calls(calls) if exp is not None else None
    if got is None or exp is None or (args_mode is not None and args_mode not in ARGS_MODES):
        return None
    if type(optional_calls) not in (list, tuple) or not all(type(x) is str and x for x in optional_calls):
        return None
    plan = plan_of(exp, args_mode)
    m = match_items(plan, got, len(exp)) if plan is not None else None
    return None if m is None else (got, exp, m)


def tool_call_prf_dicts(calls: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]],
                        *, optional_calls: Sequence[str] = (),
                        args_mode: str | None = None, arg_note: bool = True) -> PRFResult:
    """``tool_call_prf`` of predicted and expected calls given as plain dicts.

    ``calls``: a list of ``{"name": str, "args": object or None, ...}`` (``ToolCall.to_dict``
    form); ``expected``: a list of ``ExpectedCall.to_dict`` forms (``name``, optional
    ``args``, ``match``, ``args_mode``) or bare names; ``optional_calls``: tool names whose
    unmatched calls are not counted; ``args_mode`` overrides every expected call's mode.
    No call is a retried failure (dicts carry no results). The result is exactly
    ``tool_call_prf([ToolCall.from_dict(c) for c in calls], Case(id="dicts", input=None,
    expected_calls=expected, optional_calls=optional_calls), args_mode=args_mode)``: the
    same precision, recall, F1 (in [0, 1]), reason and parts, and the same errors
    (``DatasetError`` for a malformed expected call or name list, ``MatcherError`` for a bad
    matcher spec or mode). ``arg_note=False`` may leave out the reason's note on how an
    unexpected call's arguments differ from the closest expected call's (the costliest part
    of the reason, for a caller that shows only the score); every figure and part is the
    same. Definitions: ``metrics.calls.tool_call_prf`` (seed 000 §2.3).
    """
    plain = _plain_match(calls, expected, optional_calls, args_mode)
    if plain is not None:
        got, exp, m = plain
        cs = _Lazy(calls, ToolCall.from_dict)
        es = _Lazy(expected, ExpectedCall.from_dict)
        ctx = MatchContext()

        def note(extra: list[int], near: list[int]) -> str:
            return _wrong_args_note(cs, extra, es, near, args_mode, None, ctx) if arg_note else ""

        return prf_result(Matched(list(range(len(got))), m, len(exp)), [n for n, _ in got],
                          frozenset(), [n for n, _, _ in exp], optional_calls, note)
    case = Case(id="dicts", input=None, expected_calls=expected,  # type: ignore[arg-type]
                optional_calls=optional_calls)  # type: ignore[arg-type]
    return tool_call_prf([ToolCall.from_dict(c) for c in calls], case, args_mode=args_mode)


def tool_call_figures_dicts(calls: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]],
                            *, optional_calls: Sequence[str] = (), args_mode: str | None = None
                            ) -> tuple[float, float, float] | None:
    """``(precision, recall, F1)`` of ``tool_call_prf_dicts`` (same arguments, each in
    [0, 1]), for a caller that keeps only the figures (a host runner that records a score):
    no reason and no parts are built. Returns None when the dicts are outside the plain
    exact scope (a loose matcher, an unknown mode, a malformed call): call
    ``tool_call_prf_dicts`` then, which also raises the errors. Definitions:
    ``metrics.calls.tool_call_prf`` (seed 000 §2.3)."""
    plain = _plain_match(calls, expected, optional_calls, args_mode)
    if plain is None:
        return None
    got, exp, m = plain
    tp, counted, _ = kept_counts(Matched(list(range(len(got))), m, len(exp)),
                                 [n for n, _ in got], optional_calls)
    return prf_counts(tp, counted, len(exp))


__all__ = ["tool_call_figures_dicts", "tool_call_prf_dicts"]
