"""Reader for a plain list of calls ``[{"name": ..., "args": {...}}, ...]``.

``args`` may also be spelled ``arguments`` / ``input`` / ``parameters`` and may be a JSON
string. Optional per call: ``id`` / ``call_id``, ``output`` / ``result`` (then a
``tool_result`` step follows the call), ``is_error`` / ``error``. Each call is its own step.
:func:`read_calls` is the conversion; the hosts' outputs call lists use it too.
``{"calls": [...]}`` / ``{"tool_calls": [...]}`` wrappers are accepted too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import TraceFormatError
from ...model import Step, ToolCall, ToolResult, Trajectory
from ._util import StepList, as_plain, is_seq, parse_args, tool_name

FORMAT = "plain"
ARG_KEYS = ("args", "arguments", "input", "parameters")
#: Every key a call of a plain list may hold (``type``: LangChain's ``"tool_call"`` tag).
CALL_KEYS = ("name", *ARG_KEYS, "id", "call_id", "output", "result", "is_error", "error", "type")


def unknown_keys(call: Mapping[str, Any], where: str) -> list[str]:
    """Messages for the keys of one plain call that no reader uses (a misspelled ``arg`` would
    otherwise drop the arguments silently).

    Args:
        call: one call object.
        where: its name in messages, e.g. ``calls[0]``.

    Returns:
        one ``"<where>: unknown key 'k' (did you mean ...)"`` message per unknown key.
    """
    from ...case_fields import did_you_mean

    return [f"{where}: unknown key {k!r}{did_you_mean(str(k), CALL_KEYS)}; a call is "
            f"{{name, args, id?, output?, is_error?}}" for k in call if k not in CALL_KEYS]


def is_call_list(obj: Any) -> bool:
    """True for a non-empty list whose items all have a string ``name`` and no ``role``/``type`` message keys."""
    if not is_seq(obj) or not obj:
        return False
    for c in obj:
        c = as_plain(c)
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str) or "role" in c:
            return False
    return True


@dataclass(frozen=True)
class CallsRead:
    """What :func:`read_calls` made of a call list: ``steps`` (each call its own step, its
    result step after it), ``problems`` with the shape of a call (not an object, no name,
    unknown key, two argument keys, a non-boolean ``is_error``, both ``output`` and
    ``result``), ``arg_problems`` with arguments that are not a JSON object (the call is kept,
    ``args=None`` with the raw text and the reason, and scored as a malformed call)."""

    steps: tuple[Step, ...]
    problems: tuple[str, ...]
    arg_problems: tuple[str, ...]


def read_calls(calls: Sequence[Any], where: str = "calls") -> CallsRead:
    """The one conversion of a plain call list: the CLI's plain reader (:func:`read`) and the
    hosts' outputs call lists (``trajcheck.adapters._convert.any_trajectory``) both use it, so
    a call's ``output`` / ``result`` / ``is_error`` / ``error`` count the same everywhere.

    Args:
        calls: the call objects, ``{"name", "args"?, "id"?, "output"?, "is_error"?, ...}``
            (keys :data:`CALL_KEYS`).
        where: the list's name in messages (``calls``, ``outputs.tool_calls``); a call is
            ``<where>[i]``.

    Returns:
        :class:`CallsRead`. A call with ``output``, ``result``, ``is_error`` or ``error`` gets
        a ``tool_result`` step right after it: ``is_error`` True/False as given, else True when
        ``error`` is a non-empty text (then the result's ``error``), else None (unknown). The
        reader records ``problems``; it never drops a call.
    """
    problems: list[str] = []
    arg_problems: list[str] = []
    sl = StepList()
    for i, c in enumerate(calls):
        c = as_plain(c)
        w = f"{where}[{i}]"
        if not isinstance(c, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        name = tool_name(c.get("name"), problems, w)
        problems.extend(f"{m}; ignored" for m in unknown_keys(c, w))
        given = [k for k in ARG_KEYS if k in c]
        if len(given) > 1:
            problems.append(f"{w}: both {given[0]!r} and {given[1]!r}; {given[0]!r} read, give the arguments once")
        raw = c[given[0]] if given else None
        args, raw_s, err = parse_args(raw, arg_problems, f"{w} ({name})")
        cid = c.get("id", c.get("call_id"))
        cid = None if cid is None else str(cid)
        sl.call([ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=err)])
        if any(k in c for k in ("output", "result", "is_error", "error")):
            if "output" in c and "result" in c:
                problems.append(f"{w}: both 'output' and 'result'; 'output' read, give the result once")
            error = c.get("error")
            flag = c.get("is_error")
            if flag is not None and not isinstance(flag, bool):
                problems.append(f"{w}: is_error is {flag!r}; write true or false (a failed call is "
                                "is_error: true, its text in output or error); read as not given")
                flag = None
            is_err = flag if flag is not None else (True if error else None)
            sl.result(ToolResult(call_id=cid, name=name, output=c.get("output", c.get("result")),
                                 is_error=is_err, error=str(error) if error else None))
    return CallsRead(tuple(sl.steps), tuple(problems), tuple(arg_problems))


def read(obj: Any) -> Trajectory:
    """Read a plain call list; raises ``TraceFormatError`` when ``obj`` is not a list of call objects."""
    obj = as_plain(obj) if not is_seq(obj) else obj
    if isinstance(obj, Mapping):
        obj = obj.get("calls", obj.get("tool_calls"))
    if not is_seq(obj):
        raise TraceFormatError(f"{FORMAT}: expected a list of {{name, args}} objects")
    got = read_calls(obj)
    problems = [*got.problems, *got.arg_problems]
    return Trajectory(steps=got.steps, source_format=FORMAT,
                      metadata={"problems": problems} if problems else {})
