"""Why a predicted tool call does not satisfy an expected call, in one short phrase.

Only failure reasons use this (``metrics.outcome.outcome_from_calls``); the matching itself
is ``trajcheck.match.matching`` (tuned hot code), which this module mirrors rule for rule
(DESIGN.md "Matchers" policy) without changing it:

- names must be equal; arguments that did not parse (or are not an object) never match;
- ``args_mode`` ``ignore`` compares names only, ``expected_keys`` checks every expected
  argument, ``exact_keys`` also rejects arguments neither expected nor named in ``match``;
- each expected argument is compared by its ``match`` matcher (default ``exact``:
  type-aware, ``2 == 2.0`` but ``True != 1`` and ``"1" != 1``, dicts by key, lists in order);
- a ``match`` entry with no expected value checks the predicted value (present, non-empty,
  relevant to the case input for ``semantic``/``judge``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import DEFAULT_ARGS_MODE, ExpectedCall, ToolCall
from .matchers import DEFAULT_CONTEXT, MISSING, exact_equal
from .matching import compile_expected

__all__ = ["explain_exact", "explain_mismatch", "value_diff"]

_VALUE_CHARS = 60


def _show(v: Any, n: int = _VALUE_CHARS) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _keys(ks: Sequence[Any]) -> str:
    return ", ".join(str(k) for k in ks)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def value_diff(expected: Any, predicted: Any, path: str = "") -> str | None:
    """The first difference between two values under the ``exact`` matcher, or None.

    ``path`` names the value (``"flights"``); nested places are written ``flights[0].date``.
    Dicts: ``"<path>: missing key(s) a; unexpected key(s) b, c"`` before any value inside;
    lists/tuples: ``"<path>: expected N item(s), got M"``, then item by item; numbers compare by
    value (``2 == 2.0``) but a bool is not a number; otherwise ``"<path>: type differs:
    expected int 1, got str '1'"`` or ``"<path>: expected 'a', got 'b'"``. Values are shown
    with ``repr``, cut at 60 characters. Never raises.
    """
    where = path or "value"
    if isinstance(expected, Mapping) and isinstance(predicted, Mapping):
        missing = [k for k in expected if k not in predicted]
        extra = [k for k in predicted if k not in expected]
        bits = []
        if missing:
            bits.append(f"missing key{'s' if len(missing) > 1 else ''} {_keys(missing)}")
        if extra:
            bits.append(f"unexpected key{'s' if len(extra) > 1 else ''} {_keys(extra)}")
        if bits:
            return f"{where}: {'; '.join(bits)}"
        for k in expected:
            d = value_diff(expected[k], predicted[k], f"{path}.{k}" if path else str(k))
            if d:
                return d
        return None
    seq = (list, tuple)
    if isinstance(expected, seq) and isinstance(predicted, seq):
        if len(expected) != len(predicted):
            return (f"{where}: expected {len(expected)} item{'s' if len(expected) != 1 else ''}, "
                    f"got {len(predicted)}")
        for i, (e, p) in enumerate(zip(expected, predicted)):
            d = value_diff(e, p, f"{path}[{i}]")
            if d:
                return d
        return None
    if _is_num(expected) and _is_num(predicted):
        if expected == predicted or (expected != expected and predicted != predicted):
            return None
        return f"{where}: expected {_show(expected)}, got {_show(predicted)}"
    same_kind = type(expected) is type(predicted) or (isinstance(expected, seq) and isinstance(predicted, seq))
    if not same_kind:
        return (f"{where}: type differs: expected {type(expected).__name__} {_show(expected)}, "
                f"got {type(predicted).__name__} {_show(predicted)}")
    try:
        equal = bool(expected == predicted)
    except Exception:  # noqa: BLE001 -- an odd __eq__: report the values, never raise
        equal = False
    return None if equal else f"{where}: expected {_show(expected)}, got {_show(predicted)}"


def _similarity_note(m: Any, ev: Any, pv: Any, ctx: Any) -> str:
    """`` (similarity 0.412 < 0.75)`` for a ``semantic`` matcher that scored with a scorer, else ""."""
    from .matchers import SEMANTIC_THRESHOLD, SemanticMatcher, _as_text

    scorer = getattr(ctx, "semantic_scorer", None)
    if not isinstance(m, SemanticMatcher) or scorer is None:
        return ""
    t = m.threshold
    if t is None:
        t = ctx.semantic_threshold if ctx.semantic_threshold is not None else SEMANTIC_THRESHOLD
    try:
        s = float(scorer(_as_text(ev), _as_text(pv)))
    except Exception:  # noqa: BLE001 -- only a reason: the matcher already reported errors
        return ""
    return f" (similarity {s:.3f} < {float(t):.2f})"


def explain_mismatch(pred: ToolCall, exp: ExpectedCall, *, args_mode: str | None = None,
                     context: Any = None) -> str | None:
    """Why ``pred`` does not satisfy ``exp``: the first differing place, or None when it does.

    ``args_mode`` None -> ``exp.args_mode`` or ``DEFAULT_ARGS_MODE`` (as ``matching.call_matches``);
    ``context`` a ``MatchContext`` for ``semantic``/``judge`` matchers (None: the default).
    Phrases: ``"name differs: expected X, got Y"``, ``"arguments did not parse as a JSON
    object"``, ``"<arg>: missing"``, ``"unexpected argument(s) a, b"`` (``exact_keys``),
    ``"<arg>: <matcher> match failed: expected X, got Y"`` for a non-``exact`` matcher (a
    ``semantic`` one that scored adds ``" (similarity 0.412 < 0.75)"``: score and threshold), the
    ``exact`` comparison's first difference by ``value_diff`` (``"flights[0]: unexpected keys
    origin, destination"``), and ``"<arg>: <matcher> check failed (got X)"`` for a ``match``
    entry without an expected value. Only for failure reasons: it runs the matchers again.
    Raises what the matchers raise (MatcherError for an unknown matcher spec).
    """
    if pred.name != exp.name:
        return f"name differs: expected {exp.name!r}, got {pred.name!r}"
    pargs = pred.args
    if type(pargs) is not dict and not isinstance(pargs, Mapping):
        return "arguments did not parse as a JSON object"
    cc = compile_expected(exp)
    mode = args_mode or cc.args_mode or DEFAULT_ARGS_MODE
    if mode == "ignore":
        return None
    if cc.exact_args is not None:  # every argument compared with ``exact``, none unexpected
        return explain_exact(pargs, cc.exact_args, mode)
    ctx = context if context is not None else DEFAULT_CONTEXT
    for k, m in cc.unexpected:
        v = pargs.get(k, MISSING)
        if not m.check_unexpected(v, ctx):
            return f"{k}: {m.name} check failed (got {'nothing' if v is MISSING else _show(v)})"
    if not cc.constrained:
        return None
    for k, ev, m in cc.checks:
        if k not in pargs:
            if not m.allows_missing(ev):
                return f"{k}: missing (expected {_show(ev)})"
            continue
        pv = pargs[k]
        if m(ev, pv, ctx):
            continue
        if m.name == "exact":
            return value_diff(ev, pv, str(k)) or f"{k}: expected {_show(ev)}, got {_show(pv)}"
        return (f"{k}: {m.name} match failed: expected {_show(ev)}, got {_show(pv)}"
                f"{_similarity_note(m, ev, pv, ctx)}")
    if mode == "exact_keys":
        extra = [k for k in pargs if k not in cc.allowed]
        if extra:
            return f"unexpected argument{'s' if len(extra) > 1 else ''} {_keys(extra)}"
    return None


def explain_exact(pargs: Mapping[str, Any], eargs: Mapping[str, Any], mode: str) -> str | None:
    """:func:`explain_mismatch` for a call of the expected tool with object arguments
    ``pargs`` against expected arguments ``eargs``, every one compared with ``exact`` and
    no ``match`` entry, under ``mode`` (not ``ignore``): the first expected argument
    missing or different, then (``exact_keys``) the arguments not expected; None when it
    matches."""
    for k, ev in eargs.items():
        if k not in pargs:
            return f"{k}: missing (expected {_show(ev)})"
        pv = pargs[k]
        t = type(ev)
        if t is type(pv) and (t is str or t is int or t is bool):  # value_diff's own phrase
            if ev != pv:
                return f"{str(k) or 'value'}: expected {_show(ev)}, got {_show(pv)}"
        elif not exact_equal(ev, pv):
            return value_diff(ev, pv, str(k)) or f"{k}: expected {_show(ev)}, got {_show(pv)}"
    if mode == "exact_keys":
        extra = [k for k in pargs if k not in eargs]
        if extra:
            return f"unexpected argument{'s' if len(extra) > 1 else ''} {_keys(extra)}"
    return None


def explain_all(pred: ToolCall, exp: ExpectedCall, *, args_mode: str | None = None,
                context: Any = None) -> str | None:
    """Every difference between ``pred`` and ``exp``, joined by ``", "``; None when it matches.

    Like :func:`explain_mismatch` (same phrases and modes), but names every argument that
    differs or is missing and, under ``exact_keys``, every extra one, e.g. ``"priority:
    expected 'high', got 'medium', title: missing (expected 'x')"``.
    """
    if pred.name != exp.name or not isinstance(pred.args, Mapping):
        return explain_mismatch(pred, exp, args_mode=args_mode, context=context)
    pargs = pred.args
    cc = compile_expected(exp)
    mode = args_mode or cc.args_mode or DEFAULT_ARGS_MODE
    if mode == "ignore":
        return None
    ctx = context if context is not None else DEFAULT_CONTEXT
    out: list[str] = []
    for k, m in cc.unexpected:
        v = pargs.get(k, MISSING)
        if not m.check_unexpected(v, ctx):
            out.append(f"{k}: {m.name} check failed (got {'nothing' if v is MISSING else _show(v)})")
    for k, ev, m in cc.checks if cc.constrained else ():
        if k not in pargs:
            if not m.allows_missing(ev):
                out.append(f"{k}: missing (expected {_show(ev)})")
            continue
        pv = pargs[k]
        if m(ev, pv, ctx):
            continue
        if m.name == "exact":
            out.append(value_diff(ev, pv, str(k)) or f"{k}: expected {_show(ev)}, got {_show(pv)}")
        else:
            out.append(f"{k}: {m.name} match failed: expected {_show(ev)}, got {_show(pv)}"
                       f"{_similarity_note(m, ev, pv, ctx)}")
    if mode == "exact_keys":
        extra = [k for k in pargs if k not in cc.allowed]
        if extra:
            out.append(f"unexpected argument{'s' if len(extra) > 1 else ''} {_keys(extra)}")
    return ", ".join(out) or None
