"""A dataset row's scoring plan, hash and scoring-check key, read straight from the row.

Loading a big dataset into a ``case_store.CaseStore`` the general way builds each row's
``Case`` (``Case.from_dict``), then its plan from the case (``case_plan.case_plan``), then
its hash from the case's ``to_dict`` (``fingerprint.case_hash``): three passes over the
same values, most of a case's load time. ``direct(row)`` makes the same three from the row
itself, for the rows where that is plainly the same thing:

- the row was read by ``limits.plain_loads`` (JSON values only, finite numbers) and has
  passed the schema and the duplicate-id check (``dataset._valid_cases``);
- it is inside ``fast_scope.row_in_scope`` (its keys among ``ROW_KEYS_DIRECT``: no
  initial state to resolve, no rules, precedence, faults, tools, required response, route
  or final state; its metadata inside ``CASE_META_FAST``); its expected calls are names or objects with ``name``, ``args`` and
  ``args_mode`` only (no ``match``), no call's own mode disagrees with the case's; its
  step bounds are integers (not booleans) and its threshold a number.

Every such row is inside the plan's scope (``case_plan._build`` gives a plan for its case),
``Case.from_dict`` raises nothing for it, and the load-time scoring check
(``dataset._scoring_errors``) finds no fault in it, so a store load skips that check for it:
the check looks for faults that show only when a row is scored -- a matcher spec applied to
its own values, forbidden-sequence rules, a judge or semantic matcher -- and such a row has
none of them. Its expected values are JSON values compared by ``exact``
(``matchers.exact_equal``: iterative, by type, never raising on JSON values), its names and
``forbidden_calls`` patterns are strings (``fnmatchcase`` takes any string), its bounds are
integers and its threshold a number in [0, 1], all checked by the schema and here.
``tests/test_row_plan.py`` scores thousands of random rows of this scope (nested and
non-ASCII values, glob characters, every mode) and finds no fault. Any other row gives None and takes the
general way. ``tests/test_row_plan.py`` checks, on every example and test dataset, the
volume rows and hostile rows, that the plan, hash and stored row are the general way's.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any, cast

from ..match import exact_match
from ..match.exact_match import _block, plan_of
from ..metrics.composite import checked_threshold
from ..model import DEFAULT_ARGS_MODE
from .case_plan import shape_key
from .fast_scope import ROW_KEYS_DIRECT, row_in_scope
from .fingerprint import HASH_CHARS, row_hash

_CALL_KEYS = frozenset({"name", "args", "args_mode"})
_MAX_EXACT_INT = 2**53
_TOKENS = {str: "\x00str", bool: "\x00bool", type(None): "\x00NoneType", float: "\x00float"}
_SCALARS = frozenset({str, bool, type(None), float, int})

try:
    from orjson import OPT_SORT_KEYS as _SORT
    from orjson import dumps as _dumps
except ImportError:  # pragma: no cover - orjson is a core dependency
    _dumps = None  # type: ignore[assignment]


class Direct:
    """What ``direct`` reads off a row: ``cid`` (the case id, as ``Case.id``), ``hash``
    (``fingerprint.case_hash`` of its case; from a ``Reader``, maybe as the bytes its hex
    digits stand for), ``key`` (``case_plan.shape_key``), ``part``
    (``case_plan.split``'s part), ``stored`` (the row without its expected calls, as
    ``CaseStore.add`` keeps it), ``check_key`` (``_check_key``, worked out only when
    ``direct`` is asked for it; None: not asked, or none), ``shape`` (the number of ``key``
    in the store a ``Reader`` reads for, when known) and ``skeleton`` (a ``Reader``'s,
    standing for the check key of its rows; None: none)."""

    __slots__ = ("cid", "hash", "key", "part", "stored", "check_key", "shape", "held", "skeleton")

    def __init__(self, cid: str, h: str | bytes, key: tuple[Any, ...], part: tuple[Any, ...],
                 stored: dict[str, Any], check_key: Any, shape: int | None = None) -> None:
        self.cid, self.hash, self.key, self.part = cid, h, key, part
        self.stored, self.check_key, self.shape = stored, check_key, shape
        # what refers to the row's values besides the row while it is stored: ``marshal``
        # writes an object referred to more than once with a back-reference flag, so the
        # stored bytes depend on it (``direct``: its optional tools and arguments' names;
        # a ``Reader``: the row's skeleton, which refers to them and to values the row
        # holds anyway)
        self.held: Any = None
        self.skeleton: Any = None


def _is_int(v: Any) -> bool:
    return v is None or type(v) is int


def direct(row: dict[str, Any], check_key: bool = False) -> Direct | None:
    """The plan, hash and stored form of a plain, schema-valid dataset row (module doc),
    or None when the row is outside the direct way's scope; ``check_key``: work out the
    row's check key too (``Reader`` learning a skeleton). Never raises."""
    if not row_in_scope(row):
        return None
    get = row.get
    meta = get("metadata")
    opt_steps, max_steps, thr = get("optimal_steps"), get("max_steps"), get("threshold")
    if not (_is_int(opt_steps) and _is_int(max_steps)):
        return None
    threshold = checked_threshold(thr)
    if threshold is None:
        return None
    threshold = float(threshold)
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
    dr = Direct(sid, row_hash(d, plain=True), key, part, stored,
                _check_key(row, key, args, optional, d) if check_key else None)
    # the optional tools (its shape key's set holds one of equal names) and the arguments'
    # names, as a Reader's skeleton holds them
    dr.held = (tuple(optional), *[tuple(a) for a in args if a])
    return dr


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
    """The row's check key: everything of the case but its id, its input (only its type)
    and its expected calls' scalar argument values (only their types); None when some part
    cannot be written with orjson.

    The dataset load no longer consults it (a direct row skips the scoring check: module
    doc). It still gates the ``Reader``: a skeleton is learnt only from a row whose key can
    be written, so only ``Reader._learn`` works it out (it cost as much as the rest of
    ``direct`` on rows with container arguments), and drops it before the row is stored:
    the stored bytes follow the references a ``Direct`` holds (``Direct.held``)."""
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


#: the row keys a ``Reader`` reads by skeleton (a row with ``user`` or ``metadata``: ``direct``)
_SKELETON_KEYS = ROW_KEYS_DIRECT - {"user", "metadata"}
_PER_ROW = frozenset({"id", "input", "expected_calls"})  # the keys whose values are not in a skeleton
_NAME_ARGS = ("name", "args")
_EXACT_SCALARS = frozenset({str, float, bool, type(None)})
_SCALAR_INPUT = frozenset({str, int, bool, float})  # an input that is never null or empty
_HASH_SCALARS = frozenset({str, int, bool, type(None)})  # an input of these: no float, no container
MAX_SKELETONS = 4096  # skeletons remembered per load (past them: ``direct`` for new ones)
#: skeletons met before the reader weighs them: once this many are met and the store holds
#: fewer than two rows per skeleton, the rows do not repeat their skeletons (each case its
#: own argument names and types) and the rest of the load takes ``direct`` without building
#: skeletons
PROBE_SKELETONS = 512
_NEW: Any = object()


class _Skeleton:
    """What the rows of one skeleton (``Reader``) share: the plan's shape ``key`` (the
    first row's), whether their expected calls are as ``Case.to_dict`` writes them, the
    ``(call, argument)`` places holding integers (each checked to lie within 2**53), whether
    some tool has enough calls to be keyed (``exact_match.KEYED_FROM``), and the key's
    number in the reader's store once it is there; ``floats``: the ``(call, argument)``
    places holding floats, when every other value of the rows' hashed form is text, an
    integer, a bool or null (None: some is a container). Compared by identity; its rows
    share one ``_check_key``."""

    __slots__ = ("key", "as_given", "ints", "keyed", "shape", "floats", "simple", "bare")

    def __init__(self, key: tuple[Any, ...], as_given: bool, ints: tuple[tuple[int, str], ...],
                 keyed: bool, floats: tuple[tuple[int, str], ...] | None) -> None:
        self.key, self.as_given, self.ints, self.keyed = key, as_given, ints, keyed
        self.shape: int | None = None
        self.floats = floats
        self.simple = False  # distinct tool names, no args_mode in the row or its calls
        # as_given, and no value of the row is null or empty whatever its id (its input is
        # a scalar, it has expected calls, and its other values are the skeleton's)
        self.bare = False


class Reader:
    """``direct`` for the rows of one load into ``store`` (a ``case_store.CaseStore``),
    with the work that depends only on a row's *skeleton* done once per skeleton.

    A row's skeleton: its keys in order, its input's type, per expected call its name,
    keys, own mode and its arguments' names and value types, and the values of its other
    keys (calls, bounds, threshold, mode). Rows of one skeleton have one plan shape key, one
    scope verdict, and -- when every argument value is a string, a float, a bool, null or an
    integer within 2**53 -- one scoring-check verdict (``_check_key`` reduces exactly those
    values to their types), so the skeleton stands for their check key (the caller works
    the check key out with ``direct`` once per skeleton, when it needs it). A row's own
    values (id, input, arguments, the objects of its modes and names) are read from the row
    as ``direct`` reads them, so the plan, part, hash and stored row are ``direct``'s to the
    byte. Rows with ``user`` or ``metadata``, container argument values, an integer past
    2**53, a shape past the store's shape cap, or a skeleton ``direct`` refuses take
    ``direct`` itself (``tests/test_row_plan.py`` checks both ways give the same store).
    So do all rows once ``PROBE_SKELETONS`` new skeletons are met while the store holds
    fewer than two rows per skeleton: a skeleton costs about what ``direct`` saves on one
    row, so rows that seldom repeat one are read faster by ``direct`` alone (weighed when
    a skeleton is met, so a row read by a known one pays for no count)."""

    def __init__(self, store: Any) -> None:
        self._shape_ix: dict[tuple[Any, ...], int] = store._shape_ix
        self._memo: dict[Any, _Skeleton | None] = {}
        self._store_rows: Any = store._rows  # counted when a new skeleton is met
        self._met = 0  # rows whose skeleton was new
        self._direct_only = False  # skeletons seldom repeat here: ``direct`` for every row

    def __call__(self, row: dict[str, Any]) -> Direct | None:
        """``direct(row)`` (same value) for a plain, schema-valid row. Never raises."""
        if self._direct_only or not row.keys() <= _SKELETON_KEYS:
            return direct(row)
        calls = row.get("expected_calls") or ()
        names: list[Any] = []
        args: list[Any] = []
        owns: list[Any] = []
        sk: list[Any] = [tuple(row), type(row["input"])]
        try:
            for c in calls:
                if type(c) is dict:
                    ck = tuple(c)
                    if ck == _NAME_ARGS:
                        name, a = c.values()
                        own = None
                    else:
                        name, a, own = c.get("name"), c.get("args"), c.get("args_mode")
                    names.append(name)
                    args.append(a)
                    owns.append(own)
                    sk.append((ck, name, own, tuple(a), tuple(map(type, a.values())))
                              if type(a) is dict else (ck, name, own, type(a)))
                elif type(c) is str:
                    names.append(c)
                    args.append(None)
                    owns.append(None)
                    sk.append(c)
                else:
                    return direct(row)
            for k, v in row.items():
                if k not in _PER_ROW:
                    sk.append(tuple(v) if type(v) is list else (v, type(v)))
            skey = tuple(sk)
            t = self._memo.get(skey, _NEW)
        except TypeError:  # an unhashable value where the schema wants a scalar
            return direct(row)
        if t is _NEW:
            return self._learn(skey, row)
        if t is None:
            return direct(row)
        for j, k in t.ints:
            if not -_MAX_EXACT_INT <= args[j][k] <= _MAX_EXACT_INT:
                return direct(row)  # its check key holds the value
        ix = t.shape
        if ix is None:
            ix = t.shape = self._shape_ix.get(t.key)
            if ix is None:  # not in the store (yet, or past its shape cap)
                return direct(row)
        # plan_of's loop, its checks passed by the skeleton's first row
        by_name: dict[Any, Any]
        if t.simple:  # distinct names, no mode anywhere: each call the default mode's
            by_name = {name: [(j, a, DEFAULT_ARGS_MODE)] for j, (name, a) in enumerate(zip(names, args))}
        else:
            case_mode = row.get("args_mode")
            by_name = {}
            for j, name in enumerate(names):
                m = owns[j] or case_mode or DEFAULT_ARGS_MODE
                got = by_name.get(name)
                if got is None:
                    by_name[name] = [(j, None if m == "ignore" else args[j], m)]
                else:
                    got.append((j, None if m == "ignore" else args[j], m))
            if t.keyed:
                for name, loose in by_name.items():
                    if len(loose) >= exact_match.KEYED_FROM:
                        by_name[name] = _block(loose) or loose
        thr = row.get("threshold")
        cid = row["id"]
        if type(cid) is str and (t.bare or t.as_given and None not in (vals := row.values())
                                 and [] not in vals and {} not in vals):
            d = row
        else:
            d = _to_dict_row(row, calls)
        stored = dict(row)
        stored.pop("expected_calls", None)
        h = None
        floats = t.floats
        if floats is not None and _dumps is not None:
            # ``row_hash`` hashes json's text of ``d``; orjson writes text, integers, bools,
            # null and the layout as json does, floats too unless it picks another notation
            # (``fingerprint._may_differ``): compared float by float here, the row's text is
            # json's when they agree, whatever its strings hold
            for j, k in floats:
                v = args[j][k]
                if _dumps(v) != repr(v).encode():
                    break
            else:
                if type(thr) is not float or _dumps(thr) == repr(thr).encode():
                    h = sha256(_dumps(d, option=_SORT)).digest()[:HASH_CHARS // 2]
        # the threshold and its type are in the skeleton's key: its first row passed direct's check
        dr = Direct(cid if type(cid) is str else str(cid), h or row_hash(d, plain=True), t.key,
                    (tuple(args), by_name, row.get("optimal_steps"), row.get("max_steps"),
                     float(cast(float, checked_threshold(thr))), None),
                    stored, None, ix)
        dr.held, dr.skeleton = skey, t
        return dr

    def _learn(self, skey: Any, row: dict[str, Any]) -> Direct | None:
        """``direct(row)`` for the first row of skeleton ``skey``, remembering what the
        skeleton's rows share (or None: they take ``direct``)."""
        self._met += 1
        if self._met >= PROBE_SKELETONS and len(self._store_rows) < 2 * self._met:
            self._direct_only = True  # this row is still learnt: same value either way
        if len(self._memo) >= MAX_SKELETONS:
            return direct(row)
        dr = direct(row, check_key=True)
        if dr is None:
            self._memo[skey] = None
            return dr
        writable, dr.check_key = dr.check_key is not None, None  # held as direct(row) holds
        if not writable:
            self._memo[skey] = None
            return dr
        ints: list[tuple[int, str]] = []
        floats: list[tuple[int, str]] = []
        as_given, big = True, False
        count: dict[Any, int] = {}
        for j, c in enumerate(row.get("expected_calls") or ()):
            if type(c) is str:
                as_given = False
                count[c] = count.get(c, 0) + 1
                continue
            a, own = c.get("args"), c.get("args_mode")
            count[c["name"]] = count.get(c["name"], 0) + 1
            if a is None and "args" in c or own is None and "args_mode" in c:
                as_given = False
            for k, v in (a or {}).items():
                if type(v) is int:
                    ints.append((j, k))
                    if not -_MAX_EXACT_INT <= v <= _MAX_EXACT_INT:
                        big = True
                elif type(v) is float:
                    floats.append((j, k))
                elif type(v) not in _EXACT_SCALARS:
                    self._memo[skey] = None  # its check key holds the value
                    return dr
        t = _Skeleton(dr.key, as_given, tuple(ints),
                      max(count.values(), default=0) >= exact_match.KEYED_FROM,
                      tuple(floats) if type(row["input"]) in _HASH_SCALARS else None)
        t.simple = ("args_mode" not in row and len(count) == sum(count.values())
                    and all(type(c) is dict and "args_mode" not in c for c in row.get("expected_calls") or ()))
        vals = row.values()
        t.bare = (as_given and type(row["input"]) in _SCALAR_INPUT and bool(row.get("expected_calls"))
                  and None not in vals and [] not in vals and {} not in vals)
        self._memo[skey] = t
        if not big:  # else its check key holds the value
            dr.skeleton = t
        return dr


__all__ = ["Direct", "Reader", "direct"]
