"""The usual line of trajcheck's own JSONL read straight to the facts compact scoring
needs, without building its ``Trajectory`` (the fused route of ``trajcheck eval``).

``line_run(d)`` takes one parsed line (``limits.plain_loads``' value) and gives a
``LineRun`` only for a line the stream hands on untouched: one ``native.read_line`` takes
with plain figures (``limits.clean_figures`` would change and note nothing) and no
``problems`` in its metadata -- and, further, whose values the scorer reads alike from the
dict and from the built objects: step kinds and tool names are text, call ids text or null,
step times numbers. Every check ``native._one_pass`` makes is made here the same way (the
shape of steps, calls, results, usage and metadata; text fields; the figures; the top-level keys), so a
line it refuses or would read with a note is refused here too, and the caller takes the
existing route for it. ``LineRun.trajectory()`` builds the very trajectory the stream
would have given (``native.read_line``) for a run that needs it: one a report shows, one
the fast scorer cannot vouch for.

The facts are those ``fast_scoring._score`` reads from a ``Trajectory``: every call's tool
name, arguments and step, the agent turns, which calls failed (results joined to calls by
id when the ids make that unambiguous), whether a result is a JSON object, and the run
figures of ``metrics.efficiency.run_stats`` (tokens, cost, latency).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...metrics.formulas import AGENT_KINDS, result_failed, run_figures, usage_total
from ...model import Trajectory
from .native import (
    _BIG_INT,
    _LINE_KEYS,
    _MAX_FLOAT,
    _TEXT_CALL,
    _TEXT_RESULT,
    _TEXT_STEP,
    _TEXT_TOP,
    _USAGE_TPL,
    line_metadata,
    read_line,
)

_AGENT_KINDS = frozenset(AGENT_KINDS)  # for lookups
# the text fields checked one by one only when a step or call holds one (most hold none: one
# set test instead of a get per field); a call's or result's call_id is checked with the join
_TEXT_STEP_SET = frozenset(_TEXT_STEP)
_TEXT_CALL_REST = tuple(f for f in _TEXT_CALL if f != "call_id")
_TEXT_CALL_SET = frozenset(_TEXT_CALL_REST)
_TEXT_RESULT_REST = tuple(f for f in _TEXT_RESULT if f != "call_id")
_USAGE_KEYS = tuple(_USAGE_TPL)


class LineRun:
    """One usual native line read to its scoring facts (module docstring).

    ``line``: the parsed line; ``metadata``: the trajectory's metadata (the top-level
    ``case_id`` / ``trial`` / ``run_id`` merged in as ``native.read_line`` does);
    ``cnames``/``cargs``/``call_step``: every call's tool name, arguments (object or None)
    and step position, in run order; ``n_agent``: agent turns; ``any_fail``: some result
    failed; ``failed``: per call, whether its result failed, when the ids join results to
    calls unambiguously (else None: ``Trajectory.pairs`` decides); ``json_like``: some
    result is a JSON object; ``unflagged``: some result has no ``is_error`` flag (what
    ``hints.ErrorHintTally`` looks at); ``tokens``, ``cost``, ``latency``: the run figures as
    ``efficiency.run_stats`` reads them (None: unknown)."""

    __slots__ = ("line", "metadata", "cnames", "cargs", "call_step", "n_agent", "any_fail",
                 "failed", "json_like", "unflagged", "tokens", "cost", "latency", "_traj")

    line: dict[str, Any]
    metadata: dict[str, Any]
    cnames: list[str]
    cargs: list[Any]
    call_step: list[int]
    n_agent: int
    any_fail: bool
    failed: list[bool] | None
    json_like: bool
    unflagged: bool
    tokens: Any
    cost: Any
    latency: Any
    _traj: Trajectory | None

    def trajectory(self) -> Trajectory:
        """The trajectory the stream gives for this line (``native.read_line``), built once."""
        t = self._traj
        if t is None:
            got = read_line(self.line)
            assert got is not None  # line_run took only lines read_line takes
            t = self._traj = got[0]
        return t


_new = object.__new__


def _plain_num(v: Any) -> bool:
    """A cost or latency ``native._one_pass`` counts as plain: null or a finite non-negative float."""
    return v is None or (type(v) is float and 0.0 <= v <= _MAX_FLOAT)


def line_run(d: Any) -> LineRun | None:
    """The ``LineRun`` of parsed line ``d``, or None for a line the fused route does not
    take (module docstring; the caller then reads it the existing way). Never raises."""
    if type(d) is not dict or not d.keys() <= _LINE_KEYS:
        return None
    raw_steps = d.get("steps")
    if type(raw_steps) is not list or not raw_steps:
        return None
    cnames: list[str] = []
    cargs: list[Any] = []
    call_step: list[int] = []
    bad_calls: list[int] = []  # calls whose result (joined by id) failed
    open_ids: dict[str, int] = {}
    by_id = True  # every call has an id no open call shares, every result names an open call
    n_agent = 0
    any_fail = json_like = timed = unflagged = False
    tokens: list[int] = []
    costs: list[float] = []
    lats: list[float] = []
    agent_kinds = _AGENT_KINDS
    big = _BIG_INT
    si = -1
    for s in raw_steps:
        si += 1
        # index and kind present (any index; a kind of text, which _one_pass does not ask)
        if type(s) is not dict or "index" not in s or type(kind := s.get("kind")) is not str:
            return None
        if not _TEXT_STEP_SET.isdisjoint(s):
            for f in _TEXT_STEP:
                if (x := s.get(f)) is not None and type(x) is not str:
                    return None
        if kind in agent_kinds:
            n_agent += 1
        tcs = s.get("tool_calls")
        if tcs:
            if type(tcs) is not list:
                return None
            for c in tcs:
                if type(c) is not dict:
                    return None
                name = c.get("name")
                a = c.get("args")
                if type(name) is not str or not name or (a is not None and type(a) is not dict):
                    return None
                if not _TEXT_CALL_SET.isdisjoint(c):
                    for f in _TEXT_CALL_REST:
                        if (x := c.get(f)) is not None and type(x) is not str:
                            return None
                k = c.get("call_id")
                if k is None:
                    by_id = False
                elif type(k) is not str:
                    return None
                elif by_id:
                    if k in open_ids:
                        by_id = False
                    else:
                        open_ids[k] = len(cnames)
                cnames.append(name)
                cargs.append(a)
                call_step.append(si)
        elif not (tcs is None or type(tcs) is list):
            return None
        tr = s.get("tool_result")
        if tr is not None:
            if type(tr) is not dict:
                return None
            if tr:  # an empty object is no result
                for f in _TEXT_RESULT_REST:
                    if (x := tr.get(f)) is not None and type(x) is not str:
                        return None
                rk = tr.get("call_id")
                if rk is not None and type(rk) is not str:
                    return None
                flag = tr.get("is_error")
                if flag is None:
                    unflagged = True
                bad = result_failed(flag, tr.get("error"))
                if by_id:
                    j = open_ids.pop(rk, None) if rk is not None else None
                    if j is None:
                        by_id = False
                    elif bad:
                        bad_calls.append(j)
                if bad:
                    any_fail = True
                out = tr.get("output")
                if (out[:1] == "{") if type(out) is str else isinstance(out, Mapping):
                    json_like = True
        u = s.get("usage")
        if u is not None:
            if type(u) is not dict:
                return None
            for x in u.values():  # every value, as _one_pass: a key Usage has not only adds caution
                if x is not None and not (type(x) is int and 0 <= x < big):
                    return None
            t = u.get("total_tokens")
            if t is None:  # Usage.total (a stated total is its own total: no call)
                t = usage_total(None, u.get("input_tokens"), u.get("output_tokens"))
            if t is not None:
                tokens.append(t)
        m = s.get("metadata")
        if m is not None and type(m) is not dict:
            return None
        c = s.get("cost_usd")
        lat = s.get("latency_ms")
        if c is not None:
            if not (type(c) is float and 0.0 <= c <= _MAX_FLOAT):
                return None
            costs.append(c)
        if lat is not None:
            if not (type(lat) is float and 0.0 <= lat <= _MAX_FLOAT):
                return None
            lats.append(lat)
        if "start_time" in s or "end_time" in s:
            for x in (s.get("start_time"), s.get("end_time")):
                if x is not None and type(x) is not float and type(x) is not int:
                    return None
            timed = True
    for f in _TEXT_TOP:
        if (x := d.get(f)) is not None and type(x) is not str:
            return None
    meta = d.get("metadata")
    if meta is None:
        meta = {}
    elif type(meta) is not dict:
        return None
    usage = d.get("total_usage")
    total: Any = None
    if usage is not None:
        if type(usage) is not dict:
            return None
        for k in _USAGE_KEYS:  # the Usage fields, as _one_pass checks the built Usage
            x = usage.get(k)
            if x is not None and not (type(x) is int and 0 <= x < big):
                return None
        total = usage_total(usage.get("total_tokens"), usage.get("input_tokens"),
                            usage.get("output_tokens"))
    cost = d.get("total_cost_usd")
    latency = d.get("total_latency_ms")
    if not (_plain_num(cost) and _plain_num(latency)):
        return None
    meta = line_metadata(d, meta)
    if "problems" in meta:  # the stream reports them with the line: the existing route
        return None
    r: LineRun = _new(LineRun)
    r.line = d
    r.metadata = meta
    r.cnames = cnames
    r.cargs = cargs
    r.call_step = call_step
    r.n_agent = n_agent
    r.any_fail = any_fail
    failed: list[bool] | None = None
    if any_fail and by_id:
        failed = [False] * len(cnames)
        for j in bad_calls:
            failed[j] = True
    r.failed = failed
    r.json_like = json_like
    r.unflagged = unflagged
    starts: list[Any] = []
    ends: list[Any] = []
    if latency is None and timed:
        starts = [x for s in raw_steps if (x := s.get("start_time")) is not None]
        ends = [x for s in raw_steps if (x := s.get("end_time")) is not None]
    try:  # fsum's intermediate overflow: the existing route meets it (and raises) as today
        r.tokens, r.cost, r.latency = run_figures(total, tokens, cost, costs, latency, starts,
                                                  ends, lats)
    except OverflowError:
        return None
    r._traj = None
    return r


__all__ = ["LineRun", "line_run"]
