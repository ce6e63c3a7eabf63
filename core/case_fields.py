"""How a dataset row's fields are read and checked: the conversion of each ``Case`` field
(``Case.from_dict``, ``check_case_field``), an expected call from its short forms, and the
"did you mean" wording of unknown keys. Kept apart from ``model`` (the dataclasses) so each
stays small; ``model`` re-exports ``did_you_mean`` and ``check_case_field``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import DatasetError

if TYPE_CHECKING:
    from .model import ExpectedCall


_CASE_TUPLE_FIELDS = ("optional_calls", "forbidden_calls", "response_must_include", "read_only_calls",
                      "claim_patterns", "negation_patterns")
_EXPECTED_CALL_KEYS = frozenset({"name", "args", "match", "args_mode"})


def did_you_mean(name: str, known: Any) -> str:
    """``" (did you mean 'x'?)"`` naming the closest of ``known`` to ``name`` (difflib's
    ratio >= 0.6), or ``""`` when none is close. Used in messages about typos."""
    from difflib import get_close_matches

    close = get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_key(key: str, known: Any) -> str:
    """``"unknown field 'k'"`` plus the closest known name when one is close."""
    return f"unknown field {key!r}{did_you_mean(key, known)}"


def _seq_field(v: Any, cid: Any, name: str) -> Any:
    """``v`` when it is a list or tuple (None counts as empty); else ``DatasetError``."""
    if v is None:
        return ()
    if isinstance(v, (list, tuple)):
        return v
    raise DatasetError(f"case {cid!r}: field {name!r} must be a list, got {type(v).__name__}")


def _expected_call(c: Any, where: str) -> ExpectedCall:
    """An ``ExpectedCall`` from an ``ExpectedCall``, a bare name or a ``to_dict`` form."""
    from .model import ExpectedCall
    if isinstance(c, ExpectedCall):
        return c
    if isinstance(c, str):
        return ExpectedCall(name=c)
    if not isinstance(c, Mapping):
        raise DatasetError(f"{where}: must be an ExpectedCall, a name or an object, got {type(c).__name__}")
    if "name" not in c:
        raise DatasetError(f"{where}: missing 'name'")
    for k in c:
        if k not in _EXPECTED_CALL_KEYS:
            raise DatasetError(f"{where}: {_unknown_key(str(k), _EXPECTED_CALL_KEYS)}")
    args, match = c.get("args"), c.get("match")
    try:
        return ExpectedCall(name=c["name"], args=dict(args) if isinstance(args, Mapping) else args,
                            match=dict(match) if isinstance(match, Mapping) else ({} if match is None else match),
                            args_mode=c.get("args_mode"))
    except DatasetError as e:
        raise DatasetError(f"{where}: {e}") from e


def _tuple_of(v: Any) -> tuple[Any, ...]:
    return tuple(v or ())


def _show_bad(v: Any) -> str:
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _check_strings(v: Any, what: str) -> tuple[str, ...]:
    """``v`` as a tuple of non-empty strings; else ``TypeError`` saying what was found.

    A bare string is refused rather than split into one-letter names (``forbidden_calls:
    "cancel_booking"`` would otherwise forbid 14 tools that never exist)."""
    if v is None:
        return ()
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"must be a list of {what}, got {_show_bad(v)}")
    for i, x in enumerate(v):
        if not isinstance(x, str) or not x:
            raise TypeError(f"item {i} must be a non-empty string ({what}), got {_show_bad(x)}")
    return tuple(v)


def _names_of(v: Any) -> tuple[str, ...]:
    return _check_strings(v, "tool names")


def _texts_of(v: Any) -> tuple[str, ...]:
    return _check_strings(v, "strings")


def _expected_calls_of(v: Any) -> tuple[ExpectedCall, ...]:
    from .model import ExpectedCall

    return tuple(ExpectedCall.from_dict(c) for c in v or ())


def _pairs_of(v: Any) -> tuple[tuple[str, str], ...]:
    if v is None:
        return ()
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"must be a list of [A, B] pairs of tool names, got {_show_bad(v)}")
    out = []
    for i, p in enumerate(v):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise TypeError(f"item {i} must be a pair [A, B] of tool names, got {_show_bad(p)}")
        if not all(isinstance(x, str) and x for x in p):
            raise TypeError(f"item {i} must be a pair of non-empty tool names, got {_show_bad(p)}")
        out.append((p[0], p[1]))
    return tuple(out)


def _dicts_of(v: Any) -> tuple[dict[str, Any], ...]:
    out = []
    for i, x in enumerate(v or ()):
        if not isinstance(x, Mapping):
            raise TypeError(f"item {i} is {type(x).__name__} {x!r}, expected a dict per rule, e.g. "
                            f"[{{\"tool\": \"delete_booking\", \"requires_prior\": [\"confirm*\"]}}]")
        out.append(dict(x))
    return tuple(out)


def _dict_of(v: Any) -> dict[str, Any]:
    return dict(v or {})


#: How ``Case.from_dict`` reads each field present in a row, in field order (None: as given).
#: A field absent from the row takes its default, which is what each conversion gives for
#: None: ``()``, ``{}`` or None.
_CASE_READERS: tuple[tuple[str, Callable[[Any], Any] | None], ...] = (
    ("id", str), ("input", None), ("user", None), ("initial_state", None),
    ("expected_calls", _expected_calls_of), ("optional_calls", _names_of),
    ("forbidden_calls", _names_of), ("precedence", _pairs_of), ("expected_final_state", None),
    ("response_must_include", _texts_of), ("max_steps", None), ("optimal_steps", None),
    ("forbidden_sequences", _dicts_of), ("faults", _dicts_of), ("tools", _dicts_of),
    ("expected_route", None), ("args_mode", None), ("threshold", None),
    ("read_only_calls", _names_of), ("claim_patterns", _texts_of), ("negation_patterns", _texts_of),
    ("metadata", _dict_of),
)


def check_case_field(key: str, value: Any) -> None:
    """Check one case field's value the way ``Case.from_dict`` reads it.

    Args:
        key: a :class:`Case` field name (others are not checked).
        value: the value as given (None is unset).

    Raises:
        DatasetError: ``malformed field '<key>' (<what was wrong>)``, the wording a case row
            gets, so a host setting and a dataset row say the same thing.
    """
    read = dict(_CASE_READERS).get(key)
    if read is None or value is None:
        return
    try:
        read(value)
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(f"malformed field {key!r} ({e})") from e
