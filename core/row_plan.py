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
_SCALARS = frozenset({str, bool, type(None), float, int})

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
    get = row.get
    meta = get("metadata")
    if meta and (type(meta) is not dict or not meta.keys() <= _CASE_META):
        return None
    opt_steps, max_steps, thr = get("optimal_steps"), get("max_steps"), get("threshold")
    if not (_is_int(opt_steps) and _is_int(max_steps)):
        return None
    if thr is None:
        threshold = DEFAULT_THRESHOLD
    elif (type(thr) is float or type(thr) is int) and 0.0 <= thr <= 1.0:
        threshold = float(thr)
    else:
        return None
    case_mode = get("args_mode")
    names: list[str] = []
    args: list[Any] = []
    owns: list[str | None] = []
    calls = get("expected_calls") or ()
    as_given = True  # every expected call as ExpectedCall.to_dict writes it
    for c in calls:
        if type(c) is str:
            name, a, own = c, None, None
            as_given = False
        elif type(c) is dict and c.keys() <= _CALL_KEYS:
            name, a, own = c["name"], c.get("args"), c.get("args_mode")
            if type(name) is not str or (a is not None and type(a) is not dict):
                return None
            if a is None and "args" in c or own is None and "args_mode" in c:
                as_given = False
        else:
            return None
        if case_mode is not None and own is not None and own != case_mode:
            return None  # as case_plan._build: the general way
        names.append(name)
        args.append(a)
        owns.append(own)
    plan = plan_of(list(zip(names, args, owns)), None, case_mode)
    if plan is None:
        return None
    cid = row["id"]
    vals = row.values()
    if as_given and type(cid) is str and None not in vals and [] not in vals and {} not in vals:
        d = row  # already Case.to_dict's row (fingerprint)
    else:
        d = _to_dict_row(row, calls)
    optional, forbidden = get("optional_calls") or (), get("forbidden_calls") or ()
    key = shape_key(tuple(names), tuple(owns), case_mode, frozenset(optional), tuple(forbidden))
    cat = meta.get("category") if meta else None
    part = (tuple(args), plan, opt_steps, max_steps, threshold, cat if type(cat) is str else None)
    stored = dict(row)
    stored.pop("expected_calls", None)
    sid = cid if type(cid) is str else str(cid)
    return Direct(sid, row_hash(d, plain=True), key, part, stored,
                  _check_key(row, key, args, optional, d))


def _to_dict_row(row: dict[str, Any], calls: Any) -> dict[str, Any]:
    """``Case.to_dict()`` of the case built from ``row`` (in ``direct``'s scope)."""
    cid = row["id"]
    d: dict[str, Any] = {"id": cid if type(cid) is str else str(cid), "input": row["input"]}
    for k in ("user", "max_steps", "optimal_steps", "args_mode", "threshold"):
        v = row.get(k)
        if v is not None:
            d[k] = v
    out = []
    for c in calls:
        if type(c) is str:
            out.append({"name": c})
        else:
            e = {"name": c["name"]}
            for k in ("args", "args_mode"):
                v = c.get(k)
                if v is not None:
                    e[k] = v
            out.append(e)
    for k, v in (("expected_calls", out), ("optional_calls", row.get("optional_calls")),
                 ("forbidden_calls", row.get("forbidden_calls")), ("metadata", row.get("metadata"))):
        if v:
            d[k] = v
    return d


def _args_signature(a: dict[str, Any]) -> Any:
    """An expected call's arguments as ``dataset._scoring_shape`` sees them: each plain
    scalar reduced to its type (an int to its type within 2**53), anything else as its
    sorted JSON text (bytes); None when orjson cannot write it."""
    vals = a.values()
    types = tuple(map(type, vals))
    if _SCALARS.issuperset(types):
        if int in types:
            for v in vals:
                if type(v) is int and not -_MAX_EXACT_INT <= v <= _MAX_EXACT_INT:
                    break
            else:
                return (tuple(a), types)
        else:
            return (tuple(a), types)
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


def _check_key(row: dict[str, Any], key: tuple[Any, ...], args: list[Any], optional: Any,
               d: dict[str, Any]) -> Any:
    """The scoring-check key (``dataset._ScoringCheck``): everything of the case but its
    id, its input (only its type) and its expected calls' scalar argument values (only
    their types); None when some part cannot be written."""
    sig = tuple([False if a is None else _args_signature(a) for a in args])
    if None in sig:
        return None
    user, meta = d.get("user"), d.get("metadata")
    if (user is not None or meta) and _dumps is None:
        return None
    try:
        u = None if user is None else _dumps(user, option=_SORT)
        m = None if not meta else _dumps(meta, option=_SORT)
    except TypeError:
        return None
    thr = d.get("threshold")
    return (type(row["input"]), key, tuple(optional), sig, d.get("max_steps"),
            d.get("optimal_steps"), thr, type(thr), u, m)


__all__ = ["DIRECT_KEYS", "Direct", "direct"]
