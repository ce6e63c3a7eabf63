"""Small helpers shared by the trace readers (stdlib only).

Readers duck-type their input: a source object may be a plain dict (parsed JSON) or an SDK
object (pydantic model, dataclass, LangChain message). ``get`` reads a field from either;
``as_plain`` turns an object into plain dicts/lists where it offers ``model_dump`` /
``to_dict`` / ``dict``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, fields, replace
from datetime import datetime
from typing import Any, TypeGuard

from ...errors import TraceFormatError
from ...model import Step, ToolCall, ToolResult, Usage, _frozen_plain
from ..limits import json_loads

_MISSING = object()


def get(obj: Any, *keys: str, default: Any = None) -> Any:
    """The first present, non-None field among ``keys`` of a mapping or an object; else ``default``."""
    if type(obj) is dict:  # parsed JSON: the common case, without the ABC check per key
        for k in keys:
            v = obj.get(k)
            if v is not None:
                return v
        return default
    for k in keys:
        if isinstance(obj, Mapping):
            v = obj.get(k, _MISSING)
        else:
            try:
                v = getattr(obj, k, _MISSING)
            except Exception:  # a property that raises is simply absent
                v = _MISSING
        if v is not _MISSING and v is not None:
            return v
    return default


def as_plain(obj: Any) -> Any:
    """``obj`` as plain JSON-like data when it is an SDK object with a dump method, else ``obj``."""
    if isinstance(obj, (Mapping, list, tuple, str, int, float, bool)) or obj is None:
        return obj
    for meth in ("model_dump", "to_dict", "dict"):
        f = getattr(obj, meth, None)
        if callable(f):
            try:
                out = f()
            except Exception:
                continue
            if isinstance(out, (Mapping, list)):
                return out
    return obj


def is_seq(obj: Any) -> TypeGuard[Sequence[Any]]:
    """True for a list or tuple (not a string or mapping)."""
    t = type(obj)
    if t is list or t is tuple:
        return True
    if t is dict or t is str or obj is None:
        return False
    return isinstance(obj, Sequence) and not isinstance(obj, (str, bytes, bytearray, Mapping))


def json_or_text(v: Any) -> Any:
    """A string decoded as JSON where it is JSON, else as given (span attributes that hold
    either a JSON document or plain text: OTel, Haystack, pydantic-ai, MLflow)."""
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def mapping(v: Any) -> Mapping[str, Any]:
    """``v`` if it is a mapping, else an empty dict."""
    return v if type(v) is dict or (v is not None and isinstance(v, Mapping)) else {}


def tool_name(value: Any, problems: list[str], where: str, field: str = "name") -> str:
    """The tool name of a call: ``value`` when it is a non-empty string; otherwise a problem
    ``"<where>: field '<field>' is missing"`` is recorded and the name is ``""`` (None) or
    ``str(value)`` (any other value), so the call is kept and scored as unnamed."""
    if isinstance(value, str) and value:
        return value
    problems.append(f"{where}: field '{field}' is missing")
    return "" if value is None else str(value)


def parse_args(raw: Any, problems: list[str], where: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """Turn a source's argument value into ``(args, raw_args, args_parse_error)``.

    A dict is taken as is. A string is parsed as JSON; an empty or blank string means no
    arguments (``{}``, the OpenAI convention for a parameterless call). A string that is not
    valid JSON, or that parses to something other than an object, gives ``args=None`` with
    the raw text kept and the reason recorded in ``problems`` (prefixed with ``where``).
    None means no arguments. Any other type is kept as ``args=None`` with a problem.
    """
    if raw is None:
        return {}, None, None
    if type(raw) is not str and isinstance(raw, Mapping):
        return dict(raw), None, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, raw, None
        try:
            val = json_loads(raw)
        except (ValueError, RecursionError) as e:
            err = f"arguments are not valid JSON: {e}"
            problems.append(f"{where}: {err}")
            return None, raw, err
        if isinstance(val, dict):
            return val, raw, None
        err = f"arguments parse to {type(val).__name__}, not an object"
        problems.append(f"{where}: {err}")
        return None, raw, err
    plain = as_plain(raw)
    if isinstance(plain, Mapping):
        return dict(plain), None, None
    err = f"arguments are a {type(raw).__name__}, not an object or JSON string"
    problems.append(f"{where}: {err}")
    return None, None, err


def call_args(src: Any, keys: tuple[str, ...], problems: list[str],
              where: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """``parse_args`` of the first of ``keys`` that ``src`` (a mapping) holds with a non-null
    value. When none does, the source did not record the arguments: the result is
    ``(None, None, "no arguments recorded")`` and a problem naming ``where`` -- never ``{}``,
    which would let the call match an expected call without arguments. Used where the
    format always writes the arguments (``{}`` for none: OpenAI ``arguments``, Anthropic
    ``input``, LangChain ``args``, promptfoo ``input``)."""
    for k in keys:
        if isinstance(src, Mapping) and src.get(k) is not None:
            return parse_args(src[k], problems, where)
    problems.append(f"{where}: no {' / '.join(repr(k) for k in keys)} recorded; arguments unknown")
    return None, None, "no arguments recorded"


def text_of(content: Any) -> str | None:
    """Plain text of a message ``content``: a string, or the text parts of a list of blocks joined by newlines."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if is_seq(content):
        parts: list[str] = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
                continue
            t = get(b, "type")
            if t in (None, "text", "input_text", "output_text", "summary_text", "reasoning_text"):
                txt = get(b, "text", "content")
                if isinstance(txt, str):
                    parts.append(txt)
        return "\n".join(parts) if parts else None
    if isinstance(content, Mapping):
        txt = content.get("text")
        return txt if isinstance(txt, str) else None
    return None


def result_content(content: Any) -> Any:
    """A tool result's ``content`` as trajcheck keeps it: a list of content parts that are
    all text becomes their joined text (``text_of``); a list holding any other part (a search
    hit, an image, a JSON object) is kept as the list of plain parts, never dropped; any other
    value is returned as is."""
    if not is_seq(content):
        return content
    parts = [as_plain(b) for b in content]
    if all(isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") in (
            "text", "input_text", "output_text") and isinstance(b.get("text"), str)) for b in parts):
        return text_of(parts)
    return json_safe(parts)


def to_int(v: Any) -> int | None:
    """An int from an int, a float with no fraction, or a decimal string (OTLP int64); else None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            return None
    return None


def to_float(v: Any) -> float | None:
    """A float from an int/float or a numeric string; None otherwise (bools excluded). An
    integer too large for a float gives +-inf (``limits.clean_figures`` reports it)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        try:
            return float(v)
        except OverflowError:
            return float("inf") if v > 0 else float("-inf")
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def figure(v: Any, what: str, problems: list[str], *, integer: bool = False) -> Any:
    """A cost, latency (``integer=False``: ``to_float``) or token count (``integer=True``:
    ``to_int``) read from a trace field ``what``; a value that is present but not a number
    (``"free"``, ``true``, an object) is None with a problem naming the field, so a text
    cost is never dropped silently. None stays None without a problem."""
    got = to_int(v) if integer else to_float(v)
    if got is None and v is not None:
        short = isinstance(v, bool) or (isinstance(v, str) and len(v) <= 30)  # no repr of a huge text
        shown = repr(v) if short else f"a {type(v).__name__}"
        problems.append(f"{what}: {shown} is not a number; read as unknown")
    return got


def to_unix_seconds(v: Any) -> float | None:
    """Unix seconds from a number (seconds), an ISO-8601 string (``Z`` allowed) or a datetime; else None."""
    if isinstance(v, datetime):
        return v.timestamp()
    f = to_float(v)
    if f is not None:
        return f
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("Z"):
            s = s[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(s)
        except ValueError:
            return None
        if dt.tzinfo is None:
            from datetime import timezone

            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    return None


def usage_or_none(u: Usage) -> Usage | None:
    """``u`` unless every count is None."""
    return None if not u.to_dict() else u


def sum_usage(steps: Sequence[Step]) -> Usage | None:
    """The sum of the steps' usages (None when no step has any)."""
    total: Usage | None = None
    for s in steps:
        if s.usage is not None:
            total = s.usage if total is None else total + s.usage
    return total


# Step's fields in order at their defaults (metadata's factory is called per step)
_STEP_DEFAULTS: dict[str, Any] = {f.name: None if f.default is MISSING else f.default for f in fields(Step)}
_N_STEP = len(_STEP_DEFAULTS)


class StepList:
    """Accumulates steps with consecutive indices (a small mutable builder used inside one read)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def add(self, kind: str, **kw: Any) -> Step:
        """Append a step of ``kind`` with the next index and return it."""
        # built from its fields at once (``model._frozen_plain``): what Step(...) gives, for
        # keywords that are Step's optional fields (any other raises the constructor's TypeError)
        d = _STEP_DEFAULTS.copy()
        d.update(kw)
        if len(d) == _N_STEP and "index" not in kw and "kind" not in kw:
            d["index"] = len(self.steps)
            d["kind"] = kind
            if "metadata" not in kw:
                d["metadata"] = {}
            s = _frozen_plain(Step, d)
        else:
            s = Step(index=len(self.steps), kind=kind, **kw)
        self.steps.append(s)
        return s

    def call(self, calls: Sequence[ToolCall], content: str | None = None, **kw: Any) -> Step:
        """Append a ``tool_call`` step (parallel calls stay in one step)."""
        return self.add("tool_call", content=content, tool_calls=tuple(calls), **kw)

    def result(self, r: ToolResult, **kw: Any) -> Step:
        """Append a ``tool_result`` step."""
        return self.add("tool_result", tool_result=r, **kw)

    def run_result(self, r: ToolResult, latency_ms: float | None, start_time: float | None,
                   end_time: float | None, span_id: str | None, parent_id: str | None,
                   agent_name: str | None) -> Step:
        """``result(r, latency_ms=..., ...)`` with those fields given in full: the step of one
        executed tool's result (span readers add one per tool span), built from Step's fields
        in their order at once."""
        steps = self.steps
        s: Step = _frozen_plain(Step, {
            "index": len(steps), "kind": "tool_result", "content": None, "tool_calls": (), "tool_result": r,
            "usage": None, "cost_usd": None, "latency_ms": latency_ms, "model": None, "start_time": start_time,
            "end_time": end_time, "agent_name": agent_name, "span_id": span_id, "parent_id": parent_id,
            "metadata": {}})
        steps.append(s)
        return s


def finalize(steps: list[Step]) -> tuple[tuple[Step, ...], str | None]:
    """Mark the final response and return ``(steps, final_response)``.

    Policy (research notes §8): the final response is the last assistant text step with no
    tool calls; that step's kind becomes ``final_response``. Steps already of kind
    ``final_response`` (explicit in the source) win: the last one is used.
    """
    explicit = [i for i, s in enumerate(steps) if s.kind == "final_response"]
    if explicit:
        return tuple(steps), steps[explicit[-1]].content
    idx = next((i for i in range(len(steps) - 1, -1, -1)
                if steps[i].kind == "assistant" and steps[i].content), None)
    if idx is None:
        return tuple(steps), None
    s = steps[idx]
    steps = list(steps)
    steps[idx] = replace(s, kind="final_response")
    return tuple(steps), s.content


def ensure_mapping(obj: Any, fmt: str, what: str) -> Mapping[str, Any]:
    """``obj`` as a mapping, or raise ``TraceFormatError`` saying ``fmt`` expected ``what``."""
    plain = as_plain(obj)
    if not isinstance(plain, Mapping):
        raise TraceFormatError(f"{fmt}: expected {what}, got {type(obj).__name__}")
    return plain


def ensure_list(obj: Any, fmt: str, what: str) -> list[Any]:
    """``obj`` as a list, or raise ``TraceFormatError`` saying ``fmt`` expected ``what``."""
    if is_seq(obj):
        return list(obj)
    raise TraceFormatError(f"{fmt}: expected {what}, got {type(obj).__name__}")


def json_safe(v: Any) -> Any:
    """``v`` made JSON-serialisable: SDK objects dumped, unknown leaves turned into ``str``."""
    v = as_plain(v)
    if isinstance(v, Mapping):
        return {str(k): json_safe(x) for k, x in v.items()}
    if is_seq(v):
        return [json_safe(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def mark_last_reply(steps: list[Step]) -> tuple[list[Step], str | None]:
    """Mark the last assistant step with text as the final response, unless tools were called after it.

    Stricter than ``finalize`` (which takes the last text step even when tool calls follow it):
    the readers of agent SDK traces use this, where text beside a later tool call is not the answer.
    Returns the steps (the list, changed in place) and that step's text, or None when there is none.
    """
    last = next((s for s in reversed(steps) if s.kind == "assistant" and s.content), None)
    if last is None or any(s.tool_calls for s in steps[last.index + 1:]):
        return steps, None
    steps[last.index] = replace(last, kind="final_response")
    return steps, last.content
