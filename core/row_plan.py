"""A dataset row's scoring plan, hash and scoring-check key, read straight from the row.

Loading a big dataset into a ``case_store.CaseStore`` the general way builds each row's
``Case`` (``Case.from_dict``), then its plan from the case (``case_plan.case_plan``), then
its hash from the case's ``to_dict`` (``fingerprint.case_hash``): three passes over the
same values, most of a case's load time. ``direct(row)`` makes the same three from the row
itself, for the rows where that is plainly the same thing:

- the row was read by ``limits.plain_loads`` (JSON values only, finite numbers) and has
  passed the schema and the duplicate-id check (``dataset._valid_cases``);
- its keys are among ``DIRECT_KEYS`` (no initial state to resolve, no rules, precedence,
  faults, tools, required response, route or final state), its metadata holds at most a
  ``category``; its expected calls are names or objects with ``name``, ``args`` and
  ``args_mode`` only (no ``match``), no call's own mode disagrees with the case's; its
  step bounds are integers (not booleans) and its threshold a number.

Every such row is inside the plan's scope (``case_plan._build`` gives a plan for its case),
and ``Case.from_dict`` raises nothing for it. Any other row gives None and takes the
general way. ``tests/test_row_plan.py`` checks, on every example and test dataset, the
volume rows and hostile rows, that the plan, hash and stored row are the general way's.
"""

from __future__ import annotations

from typing import Any

from .case_plan import _CASE_META, shape_key
from .exact_match import plan_of
from .fingerprint import row_hash
from .metrics.composite import DEFAULT_THRESHOLD

#: the row keys the direct way reads (any other key: the general way)
DIRECT_KEYS = frozenset({"id", "input", "user", "expected_calls", "optional_calls",
                         "forbidden_calls", "max_steps", "optimal_steps", "args_mode",
                         "threshold", "metadata"})
_CALL_KEYS = frozenset({"name", "args", "args_mode"})
_MAX_EXACT_INT = 2**53
_TOKENS = {str: "\x00str", bool: "\x00bool", type(None): "\x00NoneType", float: "\x00float"}

try:
    from orjson import OPT_SORT_KEYS as _SORT
    from orjson import dumps as _dumps
except ImportError:  # pragma: no cover - orjson is optional (extra "scale")
    _dumps = None  # type: ignore[assignment]


class Direct:
    """What ``direct`` reads off a row: ``cid`` (the case id, as ``Case.id``), ``hash``
    (``fingerprint.case_hash`` of its case), ``key`` (``case_plan.shape_key``), ``part``
    (``case_plan.split``'s part), ``stored`` (the row without its expected calls, as
    ``CaseStore.add`` keeps it) and ``check_key`` (``scoring_key``; None: none)."""

    __slots__ = ("cid", "hash", "key", "part", "stored", "check_key")

    def __init__(self, cid: str, h: str, key: tuple[Any, ...], part: tuple[Any, ...],
                 stored: dict[str, Any], check_key: Any) -> None:
        self.cid, self.hash, self.key, self.part = cid, h, key, part
        self.stored, self.check_key = stored, check_key


def _is_int(v: Any) -> bool:
    return v is None or type(v) is int


def direct(row: dict[str, Any]) -> Direct | None:
    """The plan, hash and stored form of a plain, schema-valid dataset row (module doc),
    or None when the row is outside the direct way's scope. Never raises."""
    if not row.keys() <= DIRECT_KEYS:
        return None
    meta = row.get("metadata")
    if meta and (type(meta) is not dict or not meta.keys() <= _CASE_META):
        return None
    opt_steps, max_steps, thr = row.get("optimal_steps"), row.get("max_steps"), row.get("threshold")
    if not (_is_int(opt_steps) and _is_int(max_steps)):
        return None
    if thr is None:
        threshold = DEFAULT_THRESHOLD
    elif (type(thr) is float or type(thr) is int) and 0.0 <= thr <= 1.0:
        threshold = float(thr)
    else:
        return None
    case_mode = row.get("args_mode")
    names: list[str] = []
    args: list[Any] = []
    owns: list[str | None] = []
    items = []
    calls_out: list[Any] = []  # the expected calls as ExpectedCall.to_dict writes them
    signature: list[Any] = []  # scoring_key's part for the calls
    for c in row.get("expected_calls") or ():
        if type(c) is str:
            name, a, own = c, None, None
            calls_out.append({"name": c})
        elif type(c) is dict and c.keys() <= _CALL_KEYS:
            name, a, own = c["name"], c.get("args"), c.get("args_mode")
            if type(name) is not str or (a is not None and type(a) is not dict):
                return None
            if a is None and "args" in c or own is None and "args_mode" in c:
                out: dict[str, Any] = {"name": name}
                if a is not None:
                    out["args"] = a
                if own is not None:
                    out["args_mode"] = own
                calls_out.append(out)
            else:
                calls_out.append(c)
        else:
            return None
        if case_mode is not None and own is not None and own != case_mode:
            return None  # as case_plan._build: the general way
        items.append((name, a, own))
        names.append(name)
        args.append(a)
        owns.append(own)
        signature.append(False if a is None else _args_signature(a))
    plan = plan_of(items, None, case_mode)
    if plan is None:
        return None
    cid = row["id"]
    sid = cid if type(cid) is str else str(cid)
    d: dict[str, Any] = {"id": sid, "input": row["input"]}  # Case.to_dict's row (fingerprint)
    user = row.get("user")
    if user is not None:
        d["user"] = user
    if calls_out:
        d["expected_calls"] = calls_out
    optional, forbidden = row.get("optional_calls"), row.get("forbidden_calls")
    if optional:
        d["optional_calls"] = optional
    if forbidden:
        d["forbidden_calls"] = forbidden
    if max_steps is not None:
        d["max_steps"] = max_steps
    if opt_steps is not None:
        d["optimal_steps"] = opt_steps
    if case_mode is not None:
        d["args_mode"] = case_mode
    if thr is not None:
        d["threshold"] = thr
    if meta:
        d["metadata"] = meta
    cat = meta.get("category") if meta else None
    key = shape_key(tuple(names), tuple(owns), case_mode, frozenset(optional or ()),
                    tuple(forbidden or ()))
    part = (tuple(args), plan, opt_steps, max_steps, threshold, cat if type(cat) is str else None)
    check_key = None if None in signature else _check_key(row, key, signature, d)
    stored = {k: v for k, v in row.items() if k != "expected_calls"}
    return Direct(sid, row_hash(d, plain=True), key, part, stored, check_key)


def _args_signature(a: dict[str, Any]) -> Any:
    """An expected call's arguments as ``dataset._scoring_shape`` sees them: each plain
    scalar reduced to its type (an int to its type within 2**53), anything else as its
    sorted JSON text (bytes); None when orjson cannot write it."""
    out = []
    tokens = _TOKENS
    for k, v in a.items():
        tok: Any = tokens.get(type(v))
        if tok is None:
            if type(v) is int:
                tok = "\x00int" if -_MAX_EXACT_INT <= v <= _MAX_EXACT_INT else v
            elif _dumps is None:
                return None
            else:
                try:
                    tok = _dumps(v, option=_SORT)
                except TypeError:
                    return None
        out.append((k, tok))
    return tuple(out)


def _check_key(row: dict[str, Any], key: tuple[Any, ...], signature: list[Any],
               d: dict[str, Any]) -> Any:
    """``scoring_key`` (see ``dataset._ScoringCheck``): everything of the case but its id,
    its input (only its type) and its expected calls' scalar argument values (only their
    types); None when some part cannot be written."""
    user, meta = d.get("user"), d.get("metadata")
    if (user is not None or meta) and _dumps is None:
        return None
    try:
        u = None if user is None else _dumps(user, option=_SORT)
        m = None if not meta else _dumps(meta, option=_SORT)
    except TypeError:
        return None
    thr = d.get("threshold")
    return (type(row["input"]).__name__, key, tuple(d.get("optional_calls") or ()),
            tuple(signature), d.get("max_steps"),
            d.get("optimal_steps"), thr, type(thr), u, m)


__all__ = ["DIRECT_KEYS", "Direct", "direct"]
