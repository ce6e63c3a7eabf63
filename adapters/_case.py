"""Settings mappings (a test case's metadata, a reference, a metric's constructor) to a
trajcheck ``Case``: merging them, checking their keys and values, attaching argument matchers.

Shared by every adapter and by ``trajcheck.read.traces.host_exports``; imports no host. The
conversion of the host's run objects into a ``Trajectory`` lives in ``_convert``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from trajcheck.errors import DatasetError
from trajcheck.model import Case, ExpectedCall, _from_present, _template

from ._catalog import CASE_KEYS, ROW_KEYS, check_keys

#: Keys a settings mapping (metadata, reference, constructor) may hold.
SETTING_KEYS: tuple[str, ...] = CASE_KEYS + ROW_KEYS

_CASE_TEMPLATE = _template(Case)


def build_case(case_id: str, case_input: Any, expected_calls: Sequence[ExpectedCall] | None,
               *settings: Mapping[str, Any] | None) -> Case:
    """A ``Case`` from an id, an input, expected calls and settings mappings (later ones win;
    None entries and None values are skipped; an ``expected_calls`` key in a mapping replaces
    the framework's expected calls). Keys outside :data:`SETTING_KEYS` raise ``DatasetError``
    naming the key and the closest known one; the per-row keys (``before_state``,
    ``after_state``, ``match``, ``failed_calls``) are not case fields and are left out. Values
    are validated by ``Case.from_dict``; bad ones raise ``DatasetError`` naming the case."""
    d: dict[str, Any] = {"id": case_id, "input": case_input}
    merged: dict[str, Any] = {}
    for s in settings:
        if not s:
            continue
        if not isinstance(s, Mapping):
            raise DatasetError(f"case {case_id!r}: settings must be a dict, got {type(s).__name__}")
        check_keys(s, SETTING_KEYS, f"case {case_id!r}: trajcheck settings")
        merged.update({k: v for k, v in s.items() if k in CASE_KEYS and v is not None})
    d.update({k: v for k, v in merged.items() if k != "expected_calls"})
    # With nothing but the id (a str) and the input, Case.from_dict(d) has nothing to check
    # and would give Case(id=case_id, input=case_input): build that directly.
    case = None if (len(d) == 2 and type(case_id) is str) else Case.from_dict(d)
    if "expected_calls" in merged:
        ec = merged["expected_calls"]
        if not isinstance(ec, (list, tuple)):
            raise DatasetError(f"case {case_id!r}: expected_calls must be a list, got {type(ec).__name__}")
        try:
            exp = tuple(e if isinstance(e, ExpectedCall) else ExpectedCall.from_dict(e) for e in ec)
        except (KeyError, TypeError, ValueError) as e:
            raise DatasetError(f"case {case_id!r}: malformed expected_calls ({e})") from e
    else:
        exp = tuple(expected_calls or ())
    if case is None:
        return _from_present(Case, _CASE_TEMPLATE, {"id": case_id, "input": case_input,
                                                    "expected_calls": exp})
    return replace(case, expected_calls=exp)


def check_settings(settings: Mapping[str, Any] | None, where: str) -> None:
    """Check a host metric's constructor settings (case fields) when the metric is made, so a
    wrong type fails at once rather than at its first test case: the same checks as
    :func:`build_case` (``Case.from_dict``: a list-of-names field such as ``forbidden_calls``
    given a string or a non-string item, a malformed ``expected_calls`` ...). None values are
    unset. Raises ``DatasetError`` naming ``where`` and the field."""
    given = {k: v for k, v in (settings or {}).items() if v is not None}
    if not given:
        return
    from ._settings import read

    read(given, f"{where} settings")
    try:
        build_case("settings", "", None, given)
    except DatasetError as e:
        msg = str(e)
        for prefix in ("case 'settings': ", "case 'settings' "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
                break
        raise DatasetError(f"{where} settings: {msg}") from None


def provided_keys(*settings: Mapping[str, Any] | None, expected: bool = False) -> frozenset[str]:
    """The reference fields given explicitly (non-None) in any of ``settings``, plus
    ``expected_calls`` when ``expected`` (the host's own expected-call field was set, even to
    an empty list): what :func:`trajcheck.adapters._catalog.require` checks."""
    out = {k for s in settings if s for k, v in s.items() if v is not None}
    if expected:
        out.add("expected_calls")
    return frozenset(out)


def apply_match(expected: Sequence[ExpectedCall], match: Mapping[str, Any] | None) -> tuple[ExpectedCall, ...]:
    """Attach argument matchers: ``match`` maps a tool name (or ``"*"`` for every tool) to
    ``{argument: matcher spec}``; a call's own ``match`` entries win over these."""
    if not match:
        return tuple(expected)
    out = []
    for e in expected:
        m: dict[str, Any] = {}
        for key in ("*", e.name):
            spec = match.get(key)
            if spec is not None:
                if not isinstance(spec, Mapping):
                    raise DatasetError(f"match[{key!r}] must map argument names to matcher specs")
                m.update(spec)
        m.update(e.match)
        out.append(replace(e, match=m) if m else e)
    return tuple(out)


def metadata_settings(metadata: Any, where: str = "metadata") -> dict[str, Any]:
    """The trajcheck settings held in a framework's metadata dict, read by
    ``_settings.namespaced``: ``metadata["trajcheck"]`` when present (the rest is the team's
    own and is not read), else the keys only trajcheck uses found at the top level. Raises
    ``DatasetError`` naming the key for an unknown key in the block, a near miss at the top
    level, or a malformed value."""
    from ._settings import namespaced

    return namespaced(metadata, where)
