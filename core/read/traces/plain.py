"""Reader for a plain list of calls ``[{"name": ..., "args": {...}}, ...]``.

``args`` may also be spelled ``arguments`` / ``input`` / ``parameters`` and may be a JSON
string. Optional per call: ``id`` / ``call_id``, ``output`` / ``result`` (then a
``tool_result`` step follows the call), ``is_error`` / ``error``. Each call is its own step.
``{"calls": [...]}`` / ``{"tool_calls": [...]}`` wrappers are accepted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory
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


def read(obj: Any) -> Trajectory:
    """Read a plain call list; raises ``TraceFormatError`` when ``obj`` is not a list of call objects."""
    obj = as_plain(obj) if not is_seq(obj) else obj
    if isinstance(obj, Mapping):
        obj = obj.get("calls", obj.get("tool_calls"))
    if not is_seq(obj):
        raise TraceFormatError(f"{FORMAT}: expected a list of {{name, args}} objects")
    problems: list[str] = []
    sl = StepList()
    for i, c in enumerate(obj):
        c = as_plain(c)
        w = f"calls[{i}]"
        if not isinstance(c, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        name = tool_name(c.get("name"), problems, w)
        problems.extend(f"{m}; ignored" for m in unknown_keys(c, w))
        raw = next((c[k] for k in ARG_KEYS if k in c), None)
        args, raw_s, err = parse_args(raw, problems, f"{w} ({name})")
        cid = c.get("id", c.get("call_id"))
        cid = None if cid is None else str(cid)
        sl.call([ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=err)])
        if any(k in c for k in ("output", "result", "is_error", "error")):
            error = c.get("error")
            is_err = c.get("is_error") if isinstance(c.get("is_error"), bool) else (True if error else None)
            sl.result(ToolResult(call_id=cid, name=name, output=c.get("output", c.get("result")),
                                 is_error=is_err, error=str(error) if error else None))
    return Trajectory(steps=tuple(sl.steps), source_format=FORMAT,
                      metadata={"problems": problems} if problems else {})
