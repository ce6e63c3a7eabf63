"""The matcher registry: names usable from JSON/YAML dataset files (``get_matcher``,
``register_matcher``, ``known_matchers``), the ``"name:argument"`` shorthands, and the
matchers defined in their own modules (``bfcl``, ``fields``) imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import MatcherError, SchemaError
from .base import (
    Matcher,
)
from .delegating import CallableMatcher, JudgeMatcher, SemanticMatcher
from .schema import SchemaMatcher
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
#: matchers built from a name or shorthand spec on first use; filled only by
#: ``dict.setdefault`` (atomic), so threads resolving one spec at once share one instance
_DEFAULT_INSTANCES: dict[str, Matcher] = {}

# Matchers defined in their own module, imported on first use of the name so that
# ``import trajcheck.match.matchers`` does not load them: name -> (module in trajcheck.match, factory).
_LAZY_FACTORIES: dict[str, tuple[str, str]] = {
    "bfcl": ("bfcl", "BfclMatcher"),  # BFCL possible-answer parity (trajcheck.match.bfcl)
    "fields": ("field_matcher", "make_fields_matcher"),  # lists of objects on some keys
}
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
    factory: Callable[..., Any] = getattr(importlib.import_module(f"..{module}", __package__), attr)
    # threads loading it at once all get the factory kept first (dict.setdefault is atomic)
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

