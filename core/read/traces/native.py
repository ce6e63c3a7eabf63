"""Reader for trajcheck's own traces: ``Trajectory.to_dict()`` objects (one per JSONL line).

A well-formed object is read by ``Trajectory.from_dict`` unchanged (the round trip is
exact). Hand-edited or foreign-written files are read tolerantly, per DESIGN.md ("Readers
never raise on a malformed call: they keep it and record the problem"); each fault goes to
``metadata["problems"]`` located by a 0-based path such as ``steps[1].tool_calls[0]``:

- a call without a non-empty string ``name`` is kept with ``name=""`` (the shared reader
  rule of ``_util.tool_name``). An ``ExpectedCall`` cannot have an empty name, so such a
  call never matches an expected call and still counts as a predicted call;
- ``args`` given as a string is parsed as JSON (``_util.parse_args``): an object gives
  ``args`` = the parsed dict and ``raw_args`` = the string; anything else gives
  ``args=None`` with ``args_parse_error`` and a problem. ``args`` of another non-object type
  (a list, a number) gives ``args=None`` with ``args_parse_error``. ``args: null`` is kept
  as is (a call whose arguments did not parse, written by ``to_dict``);
- a call that is not an object is kept as an unnamed call with ``args=None``;
- ``tool_calls`` that is not a list, a ``tool_result`` or ``usage`` that is not an object,
  and ``metadata`` that is not an object are reported and left out;
- a text field (``source_format``, ``final_response``, ids, names, ``content``, ...) holding
  anything but a string or null is reported and left out (an object there raised TypeError
  where ids and names are looked up); a step ``kind`` that is not a string is read as "".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from ...errors import TraceFormatError
from ...model import Step, ToolCall, ToolResult, Trajectory, Usage
from ._util import as_plain, is_seq, parse_args, tool_name

FORMAT = "trajcheck"

_TOP_KEYS = frozenset({"steps", "final_response", "total_usage", "total_cost_usd", "total_latency_ms",
                       "source_format", "trace_id", "session_id", "metadata"})


def is_native(obj: Any) -> bool:
    """True for a ``Trajectory.to_dict()``-shaped object: a ``steps`` list whose items all
    have ``index`` and ``kind`` (an empty list only with no keys but the trajectory's own)."""
    if type(obj) is dict:  # the usual line: plain dicts, answered without ABC checks
        steps = obj.get("steps")
        if type(steps) is list and steps and all(type(s) is dict and "kind" in s and "index" in s
                                                 for s in steps):
            return True
    if not isinstance(obj, Mapping) or not is_seq(obj.get("steps")):
        return False
    steps = obj["steps"]
    return all(isinstance(s, Mapping) and "kind" in s and "index" in s for s in steps) and (
        bool(steps) or set(obj) <= _TOP_KEYS)


# Text fields (``str | None`` in the model) per object. Another value there is a fault: an
# object or a list is unhashable where ids and names key the call/result join, a number is
# no text for the answer's checks.
_TEXT_TOP = ("final_response", "source_format", "trace_id", "session_id")
_TEXT_STEP = ("content", "model", "agent_name", "span_id", "parent_id")
_TEXT_CALL = ("call_id", "raw_args", "args_parse_error", "tool_type")
_TEXT_RESULT = ("call_id", "name", "error")


def _texts(d: Mapping[str, Any], keys: tuple[str, ...], problems: list[str],
           where: str) -> dict[str, Any] | None:
    """``d`` with each of ``keys`` holding neither text nor null set to None and reported,
    or None when there is none (``where``: the path prefix, "" at the top)."""
    bad = [k for k in keys if (v := d.get(k)) is not None and not isinstance(v, str)]
    if not bad:
        return None
    out = dict(d)
    for k in bad:
        problems.append(f"{where}{k}: not a string ({type(d[k]).__name__}); ignored")
        out[k] = None
    return out


def _call(c: Any, problems: list[str], where: str) -> dict[str, Any]:
    c = as_plain(c)
    if not isinstance(c, Mapping):
        err = f"call is a {type(c).__name__}, not an object"
        problems.append(f"{where}: {err}; kept as an unnamed call")
        return {"name": "", "args": None, "args_parse_error": err}
    d = _texts(c, _TEXT_CALL, problems, f"{where}.") or dict(c)
    name = d["name"] = tool_name(d.get("name"), problems, where)
    a = d.get("args")
    if a is not None and not isinstance(a, Mapping):
        args, raw, perr = parse_args(a, problems, f"{where} ({name})")
        d["args"] = args
        if raw is not None:
            d["raw_args"] = raw
        if perr is not None:
            d["args_parse_error"] = perr
    return d


def _step(s: Mapping[str, Any], problems: list[str], where: str) -> Mapping[str, Any]:
    d = _texts(s, _TEXT_STEP, problems, f"{where}.")
    kind = s["kind"]
    if not isinstance(kind, str):  # no step kind: the step counts as none of them
        problems.append(f"{where}.kind: not a string ({type(kind).__name__}); read as ''")
        d = dict(s) if d is None else d
        d["kind"] = ""
    tcs = s.get("tool_calls")
    if tcs is not None:
        d = dict(s) if d is None else d
        if not is_seq(tcs):
            problems.append(f"{where}.tool_calls: not a list ({type(tcs).__name__}); ignored")
            d["tool_calls"] = ()
        else:
            d["tool_calls"] = [_call(c, problems, f"{where}.tool_calls[{j}]") for j, c in enumerate(tcs)]
    for k in ("tool_result", "usage", "metadata"):
        v = s.get(k)
        if v is not None and not isinstance(v, Mapping):
            d = dict(s) if d is None else d
            problems.append(f"{where}.{k}: not an object ({type(v).__name__}); ignored")
            d[k] = None
    tr = s.get("tool_result")
    if isinstance(tr, Mapping):
        r = _texts(tr, _TEXT_RESULT, problems, f"{where}.tool_result.")
        if r is not None:
            d = dict(s) if d is None else d
            d["tool_result"] = r
    return s if d is None else d


# One pass for the usual object (``_one_pass``): each object's instance dict is its class's
# fields in field order at from_dict's defaults (None; the template) overlaid with the source
# dict, set through the class's own ``__dict__`` slot -- no generated __init__ (these
# classes have no __post_init__) and no get per field. A source dict with keys the class
# does not have is read field by field instead (from_dict ignores such keys).
def _template(cls: type[Any]) -> dict[str, Any]:
    return dict.fromkeys(f.name for f in fields(cls))


_STEP_TPL = _template(Step)
_CALL_TPL = _template(ToolCall)
_RESULT_TPL = _template(ToolResult)
_USAGE_TPL = _template(Usage)
_TRAJ_TPL = _template(Trajectory)
_NT = len(_TRAJ_TPL)
_WRAPPER_KEYS = ("case_id", "trial", "run_id")  # traces.with_wrapper_metadata's top-level keys
_LINE_KEYS = _TOP_KEYS | frozenset(_WRAPPER_KEYS)
_onew = object.__new__
_set_step = Step.__dict__["__dict__"].__set__
_set_call = ToolCall.__dict__["__dict__"].__set__
_set_result = ToolResult.__dict__["__dict__"].__set__
_set_usage = Usage.__dict__["__dict__"].__set__
_set_traj = Trajectory.__dict__["__dict__"].__set__
_BIG_INT = 1 << 1000  # as limits._plain: an int below this converts to a finite float
_MAX_FLOAT = 1.7976931348623157e308


def _fields(tpl: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    """``tpl``'s keys with ``src``'s values (``tpl``'s where absent): ``{**tpl, **src}`` for a
    ``src`` with keys ``tpl`` does not have (left out, as from_dict leaves them)."""
    get = src.get
    return {k: get(k, dv) for k, dv in tpl.items()}


def _plain_counts(u: dict[str, Any]) -> bool:
    for v in u.values():
        if v is not None and not (type(v) is int and 0 <= v < _BIG_INT):
            return False
    return True


_MISSING = object()
# a step's template marks the two required keys, so one lookup after the merge finds them absent
_STEP_NEEDS = {**_STEP_TPL, "index": _MISSING, "kind": _MISSING}
_NS, _NC, _NR, _NU = len(_STEP_TPL), len(_CALL_TPL), len(_RESULT_TPL), len(_USAGE_TPL)


def _one_pass(d: Any, wrapper: bool) -> tuple[Trajectory, bool] | None:
    """``(read(d), plain)`` built in one pass for the usual object, or None for anything else
    (``read`` then takes the general way). The usual object: a plain dict with a non-empty
    ``steps`` list of dicts with ``index`` and a text ``kind``, calls that are dicts with a
    non-empty string ``name`` and object (or absent / null) ``args``, dicts (or null) where
    ``tool_calls``' items, ``tool_result``, ``usage``, ``metadata`` and ``total_usage``
    belong, and text (or null) in every text field -- nothing ``read`` would report. ``wrapper``: merge the top-level ``case_id`` /
    ``trial`` / ``run_id`` into metadata as ``traces.with_wrapper_metadata`` does. ``plain``
    is True only when every cost, latency and token count is a float or int that
    ``limits.clean_figures`` keeps with no note (False: ask ``clean_figures``)."""
    if type(d) is not dict:
        return None
    raw_steps = d.get("steps")
    if type(raw_steps) is not list or not raw_steps:
        return None
    plain = True
    steps: list[Step] = []
    append = steps.append
    o: Any
    for s in raw_steps:
        if type(s) is not dict:
            return None
        v = {**_STEP_NEEDS, **s}
        if len(v) != _NS:  # keys a step does not have
            v = _fields(_STEP_NEEDS, s)
        if v["index"] is _MISSING or type(v["kind"]) is not str:
            return None
        for k in _TEXT_STEP:
            if (x := v[k]) is not None and type(x) is not str:
                return None
        tcs = v["tool_calls"]
        if tcs:
            if type(tcs) is not list:
                return None
            made = []
            for c in tcs:
                if type(c) is not dict:
                    return None
                cv = {**_CALL_TPL, **c}
                if len(cv) != _NC:
                    cv = _fields(_CALL_TPL, c)
                name = cv["name"]
                a = cv["args"]
                if type(name) is not str or not name or (a is not None and type(a) is not dict):
                    return None
                for k in _TEXT_CALL:
                    if (x := cv[k]) is not None and type(x) is not str:
                        return None
                o = _onew(ToolCall)
                _set_call(o, cv)
                made.append(o)
            v["tool_calls"] = tuple(made)
        elif tcs is None or type(tcs) is list:
            v["tool_calls"] = ()
        else:
            return None
        tr = v["tool_result"]
        if tr is not None:
            if type(tr) is not dict:
                return None
            if tr:
                rv = {**_RESULT_TPL, **tr}
                if len(rv) != _NR:
                    rv = _fields(_RESULT_TPL, tr)
                for k in _TEXT_RESULT:
                    if (x := rv[k]) is not None and type(x) is not str:
                        return None
                o = _onew(ToolResult)
                _set_result(o, rv)
                v["tool_result"] = o
            else:
                v["tool_result"] = None
        u = v["usage"]
        if u is not None:
            if type(u) is not dict:
                return None
            uv = {**_USAGE_TPL, **u}
            if len(uv) != _NU:
                uv = _fields(_USAGE_TPL, u)
            if plain:  # the source's values: any key it has that Usage has not only adds caution
                for x in u.values():
                    if x is not None and not (type(x) is int and 0 <= x < _BIG_INT):
                        plain = False
            o = _onew(Usage)
            _set_usage(o, uv)
            v["usage"] = o
        m = v["metadata"]
        if m is None:
            v["metadata"] = {}
        elif type(m) is dict:
            v["metadata"] = dict(m) if m else {}
        else:
            return None
        if plain:
            c = v["cost_usd"]
            lat = v["latency_ms"]
            if not ((c is None or (type(c) is float and 0.0 <= c <= _MAX_FLOAT))
                    and (lat is None or (type(lat) is float and 0.0 <= lat <= _MAX_FLOAT))):
                plain = False
        o = _onew(Step)
        _set_step(o, v)
        append(o)
    tv = {**_TRAJ_TPL, **d}
    if len(tv) != _NT:  # top-level keys a trajectory does not have (the wrapper's ids, others)
        tv = _fields(_TRAJ_TPL, d)
    for k in _TEXT_TOP:
        if (x := tv[k]) is not None and type(x) is not str:
            return None
    tv["steps"] = tuple(steps)
    meta = tv["metadata"]
    if meta is None:
        meta = {}
    elif type(meta) is dict:
        meta = dict(meta) if meta else {}
    else:
        return None
    usage = tv["total_usage"]
    if usage is not None:
        if type(usage) is not dict:
            return None
        uv = {**_USAGE_TPL, **usage}
        if len(uv) != _NU:
            uv = _fields(_USAGE_TPL, usage)
        if plain and not _plain_counts(uv):
            plain = False
        o = _onew(Usage)
        _set_usage(o, uv)
        tv["total_usage"] = o
    if wrapper:
        meta = line_metadata(d, meta)
    tv["metadata"] = meta
    if plain:
        c = tv["total_cost_usd"]
        lat = tv["total_latency_ms"]
        if not ((c is None or (type(c) is float and 0.0 <= c <= _MAX_FLOAT))
                and (lat is None or (type(lat) is float and 0.0 <= lat <= _MAX_FLOAT))):
            plain = False
    t = _onew(Trajectory)
    _set_traj(t, tv)
    return t, plain


def line_metadata(d: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (a line's own metadata, a dict) with the line's top-level ``case_id`` /
    ``trial`` / ``run_id`` merged in as ``traces.with_wrapper_metadata`` does: the wrapper's
    keys first, the trajectory's own metadata winning a clash; ``meta`` itself when there
    is nothing to add."""
    if "case_id" in d or "trial" in d or "run_id" in d:
        add = {k: d[k] for k in _WRAPPER_KEYS if d.get(k) is not None and k not in meta}
        if add:
            return {**add, **meta}
    return meta


def _read_plain(d: Any) -> Trajectory | None:
    """``read(d)`` in one pass for the usual object (``_one_pass``); None for anything else."""
    got = _one_pass(d, False)
    return None if got is None else got[0]


def read_line(d: Any) -> tuple[Trajectory, bool] | None:
    """``(trajectory, plain)`` for the usual JSONL line ``d`` (a parsed object), or None.

    The trajectory is what ``traces.read(d)`` gives -- ``read`` plus the top-level
    ``case_id`` / ``trial`` / ``run_id`` merged into metadata (``traces.with_wrapper_metadata``)
    -- for a dict with none but a trajectory's keys and those three (so no wrapper of
    ``traces.wrappers`` and no other format can claim it) that ``_one_pass`` takes. ``plain``:
    True when ``limits.clean_figures`` would change nothing and note nothing (False: ask it).
    The source's containers (``args``, ``output``, metadata values) are shared with the
    result, not copied."""
    if type(d) is not dict or not d.keys() <= _LINE_KEYS:
        return None
    return _one_pass(d, True)


def read(obj: Any) -> Trajectory:
    """Read one ``Trajectory.to_dict()`` object (see the module docstring for the tolerated
    faults, reported in ``metadata["problems"]`` after any problems already recorded there).

    Raises ``TraceFormatError`` when ``obj`` is not such an object (``is_native`` false).
    """
    fast = _read_plain(obj)
    if fast is not None:
        return fast
    d = as_plain(obj)
    if not is_native(d):
        raise TraceFormatError(f"{FORMAT}: expected a Trajectory.to_dict() object with a 'steps' list "
                               "of {index, kind} objects")
    problems: list[str] = []
    steps = [_step(s, problems, f"steps[{i}]") for i, s in enumerate(d["steps"])]
    meta = d.get("metadata")
    if meta is not None and not isinstance(meta, Mapping):
        problems.append(f"metadata: not an object ({type(meta).__name__}); ignored")
        meta = None
    usage = d.get("total_usage")
    if usage is not None and not isinstance(usage, Mapping):
        problems.append(f"total_usage: not an object ({type(usage).__name__}); ignored")
        usage = None
    top = _texts(d, _TEXT_TOP, problems, "") or d
    if not problems and all(a is b for a, b in zip(steps, d["steps"])):
        return Trajectory.from_dict(d)
    m = dict(meta or {})
    if problems:
        old = m.get("problems")
        m["problems"] = [*(old if is_seq(old) else ()), *problems]
    return Trajectory.from_dict({**top, "steps": steps, "metadata": m, "total_usage": usage})
