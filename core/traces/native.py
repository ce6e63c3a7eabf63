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
  and ``metadata`` that is not an object are reported and left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TraceFormatError
from ..model import Step, ToolCall, ToolResult, Trajectory, Usage
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


def _call(c: Any, problems: list[str], where: str) -> dict[str, Any]:
    c = as_plain(c)
    if not isinstance(c, Mapping):
        err = f"call is a {type(c).__name__}, not an object"
        problems.append(f"{where}: {err}; kept as an unnamed call")
        return {"name": "", "args": None, "args_parse_error": err}
    d = dict(c)
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
    d: dict[str, Any] | None = None
    tcs = s.get("tool_calls")
    if tcs is not None:
        d = dict(s)
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
    return s if d is None else d


def _new(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance of one of ``model``'s frozen dataclasses without ``__post_init__`` (Usage,
    ToolCall, ToolResult, Step, Trajectory) from every field's value in field order -- what
    their ``from_dict`` builds, without the per-object checks."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    return obj


def _usage(u: dict[str, Any]) -> Usage:
    get = u.get
    return _new(Usage, {"input_tokens": get("input_tokens"), "output_tokens": get("output_tokens"),
                        "total_tokens": get("total_tokens"), "cache_read_tokens": get("cache_read_tokens"),
                        "cache_write_tokens": get("cache_write_tokens"),
                        "reasoning_tokens": get("reasoning_tokens")})  # type: ignore[no-any-return]


def _read_plain(d: Any) -> Trajectory | None:
    """``read(d)`` in one pass for the usual line: plain dicts and lists, every step with
    ``index`` and ``kind``, every call an object with a non-empty string ``name`` and object
    (or absent / null) ``args``, and objects (or null) where objects belong -- nothing that
    ``read`` would report. None for anything else (``read`` then takes the general way)."""
    if type(d) is not dict:
        return None
    raw_steps = d.get("steps")
    if type(raw_steps) is not list or not raw_steps:
        return None
    meta = d.get("metadata")
    usage = d.get("total_usage")
    if (meta is not None and type(meta) is not dict) or (usage is not None and type(usage) is not dict):
        return None
    steps = []
    for s in raw_steps:
        if type(s) is not dict or "kind" not in s or "index" not in s:
            return None
        get = s.get
        tcs = get("tool_calls")
        calls: tuple[ToolCall, ...] = ()
        if tcs is not None:
            if type(tcs) is not list:
                return None
            made = []
            for c in tcs:
                if type(c) is not dict:
                    return None
                name = c.get("name")
                a = c.get("args")
                if type(name) is not str or not name or (a is not None and type(a) is not dict):
                    return None
                cget = c.get
                made.append(_new(ToolCall, {"name": name, "args": a, "call_id": cget("call_id"),
                                            "raw_args": cget("raw_args"),
                                            "args_parse_error": cget("args_parse_error"),
                                            "tool_type": cget("tool_type")}))
            calls = tuple(made)
        tr = get("tool_result")
        su = get("usage")
        sm = get("metadata")
        if ((tr is not None and type(tr) is not dict) or (su is not None and type(su) is not dict)
                or (sm is not None and type(sm) is not dict)):
            return None
        if tr:
            tget = tr.get
            tr = _new(ToolResult, {"call_id": tget("call_id"), "name": tget("name"),
                                   "output": tget("output"), "is_error": tget("is_error"),
                                   "error": tget("error")})
        else:
            tr = None
        steps.append(_new(Step, {
            "index": s["index"], "kind": s["kind"], "content": get("content"), "tool_calls": calls,
            "tool_result": tr, "usage": None if su is None else _usage(su),
            "cost_usd": get("cost_usd"), "latency_ms": get("latency_ms"), "model": get("model"),
            "start_time": get("start_time"), "end_time": get("end_time"),
            "agent_name": get("agent_name"), "span_id": get("span_id"), "parent_id": get("parent_id"),
            "metadata": dict(sm) if sm else {}}))
    get = d.get
    return _new(Trajectory, {  # type: ignore[no-any-return]
        "steps": tuple(steps), "final_response": get("final_response"),
        "total_usage": None if usage is None else _usage(usage),
        "total_cost_usd": get("total_cost_usd"), "total_latency_ms": get("total_latency_ms"),
        "source_format": get("source_format"), "trace_id": get("trace_id"),
        "session_id": get("session_id"), "metadata": dict(meta) if meta else {}})


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
    if not problems and all(a is b for a, b in zip(steps, d["steps"])):
        return Trajectory.from_dict(d)
    m = dict(meta or {})
    if problems:
        old = m.get("problems")
        m["problems"] = [*(old if is_seq(old) else ()), *problems]
    return Trajectory.from_dict({**d, "steps": steps, "metadata": m, "total_usage": usage})
