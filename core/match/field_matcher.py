"""The ``fields`` argument matcher: lists of objects compared on some of their fields.

Benchmark tools often take a list of objects and read only some keys of each item: tau2's
airline tools build ``FlightInfo(flight_number, date)`` from each ``flights[]`` item and drop
any other key; tau-bench's airline tools overwrite ``price``, ``origin`` and ``destination``
of each item. An agent that sends extra keys there reaches the same database as the
expected call, so those keys must not decide the match.

Spec: ``{"type": "fields", "keys": [...]}`` compares only the named keys of each item, or
``{"type": "fields", "ignore": [...]}`` compares every key but the named ones; exactly one
of the two is given. ``"ordered"`` (default true): items are paired by position; false:
the two lists must hold the same multiset of (projected) items. Values are compared with
``exact`` (type-aware, see ``trajcheck.match.matchers.exact_equal``). A key named in ``keys``
and absent from both items is equal (absent on both sides); absent from one is a
difference. A value that is not a list of objects, on either side, falls back to
``exact`` on the whole value. Registered under the name ``fields`` and loaded on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MatcherError
from .matchers import DEFAULT_CONTEXT, MatchContext, Matcher, exact_equal

_ABSENT = object()


def _names(v: Any, what: str) -> tuple[str, ...]:
    if isinstance(v, str) or not isinstance(v, Sequence) or not all(isinstance(x, str) for x in v):
        raise MatcherError(f"fields matcher: {what!r} must be a list of key names, got {v!r}")
    return tuple(v)


@dataclass(frozen=True, repr=False)
class FieldsMatcher(Matcher):
    """Lists of objects equal on the chosen keys of each item (see the module docstring)."""

    keys: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    ordered: bool = True
    name = "fields"

    def _project(self, item: Mapping[str, Any]) -> dict[str, Any]:
        if self.keys is not None:
            return {k: item.get(k, _ABSENT) for k in self.keys}
        drop = set(self.ignore or ())
        return {k: v for k, v in item.items() if k not in drop}

    def _same(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        pa, pb = self._project(a), self._project(b)
        if pa.keys() != pb.keys():
            return False
        for k, va in pa.items():
            vb = pb[k]
            if va is _ABSENT or vb is _ABSENT:
                if va is not vb:
                    return False
            elif not exact_equal(va, vb):
                return False
        return True

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        def objs(v: Any) -> bool:
            return isinstance(v, (list, tuple)) and all(isinstance(x, Mapping) for x in v)

        if not (objs(expected) and objs(predicted)):
            return exact_equal(expected, predicted)
        if len(expected) != len(predicted):
            return False
        if self.ordered:
            return all(self._same(e, p) for e, p in zip(expected, predicted))
        left = list(predicted)
        for e in expected:  # equality on the projection is an equivalence: first fit is exact
            j = next((j for j, p in enumerate(left) if self._same(e, p)), None)
            if j is None:
                return False
            del left[j]
        return True


def make_fields_matcher(keys: Any = None, ignore: Any = None, ordered: Any = True) -> FieldsMatcher:
    """The ``fields`` matcher's factory (spec keys ``keys`` | ``ignore``, ``ordered``).

    Raises MatcherError when both or neither of ``keys`` / ``ignore`` are given, when either
    is not a list of strings, or when ``ordered`` is not a bool."""
    if (keys is None) == (ignore is None):
        raise MatcherError("fields matcher: give exactly one of 'keys' (compare only these) "
                           "or 'ignore' (compare all but these)")
    if not isinstance(ordered, bool):
        raise MatcherError(f"fields matcher: 'ordered' must be true or false, got {ordered!r}")
    return FieldsMatcher(keys=_names(keys, "keys") if keys is not None else None,
                         ignore=_names(ignore, "ignore") if ignore is not None else None,
                         ordered=ordered)


__all__ = ["FieldsMatcher", "make_fields_matcher"]
