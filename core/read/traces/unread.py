"""Never silent: tool calls a record holds that its reader did not turn into calls.

One detector for every format. ``call_shapes(obj)`` walks a source record (parsed JSON or an
SDK object's dump) and counts the tool-call-like structures in it, by the shapes the known
providers and frameworks write:

- keys: ``tool_calls`` (a non-empty list), ``function_call`` / ``functionCall``, ``toolUse``,
  ``tool_use``, ``tool_call`` (Haystack), ``ToolCall`` events;
- typed items: ``type`` / ``block_type`` / ``content_type`` / ``kind`` naming a call
  (``tool_use``, ``function_call``, ``tool_call``, ``tool-call``, ``FunctionCallContent``, ...),
  AutoGen's ``ToolCallRequestEvent`` (one call per content item);
- spans and runs: OTel attributes ``gen_ai.tool.name`` / ``gen_ai.operation.name =
  execute_tool`` / ``openinference.span.kind = TOOL`` and flattened
  ``...tool_calls.<i>.name`` attributes; LangSmith runs with ``run_type = tool``;
- results: ``tool_call_id`` / ``tool_use_id`` / ``toolUseId`` holders, ``toolResult``,
  ``functionResponse`` / ``function_response``, ``tool_call_result``, ``function_result``
  items (counted apart: a record with results and no call is still a record with tools).

A JSON text inside a string (OTel ``gen_ai.output.messages``, LangSmith outputs) is parsed and
walked when it holds one of those names. ``unread_problem(obj, t, fmt)`` is the check the
loaders run (``traces.load`` and ``traces.stream``): it scans only when the trajectory read
from the record has no tool call and no tool result -- a record read with calls is trusted,
so the volume path (trajcheck's own JSONL, every run with calls) never pays for the scan --
and returns the problem text naming the shape and where in the record it sits.

The walk is iterative (no recursion limit), never raises, and stops after ``_MAX_NODES``
nodes (a record past that is judged on what was seen).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...model import Trajectory
from ._util import as_plain, is_seq

_MAX_NODES = 200_000
_MAX_TEXT = 1 << 20

# key -> shape name, for a key whose (non-empty) value is one call
_CALL_KEYS = {"function_call": "function_call", "functionCall": "functionCall parts",
              "toolUse": "toolUse blocks", "tool_use": "tool_use", "tool_call": "tool_call items"}
# key -> shape name, for a key whose value is a result (or names the call a result answers)
_RESULT_KEYS = {"tool_call_id": "tool_call_id results", "tool_use_id": "tool_use_id results",
                "toolUseId": "toolUseId results", "toolResult": "toolResult blocks",
                "functionResponse": "functionResponse parts", "function_response": "function_response parts",
                "tool_call_result": "tool_call_result items", "tool_responses": "tool_responses"}
# values of a type-like field that name a call
_CALL_TYPES = frozenset({
    "tool_use", "server_tool_use", "mcp_tool_use", "function_call", "tool_call", "tool-call",
    "custom_tool_call", "toolcall", "ToolCall", "FunctionCall", "FunctionCallContent",
    "function-call", "ToolCallPart", "tool-call-part", "toolCall", "mcp_call",
    "tool_usage_started",  # CrewAI event bus
})
_RESULT_TYPES = frozenset({
    "tool_result", "function_call_output", "tool-result", "tool_call_result", "function_result",
    "ToolReturnPart", "FunctionResultContent", "ToolCallResult", "ToolCallExecutionEvent",
    "custom_tool_call_output", "mcp_tool_result", "function_response", "toolResult",
    "tool_usage_finished", "tool_usage_error",  # CrewAI event bus
})
_TYPE_FIELDS = ("type", "block_type", "content_type", "kind", "part_kind", "event_type")
_TEXT_MARKERS = ("tool_call", "function_call", "functionCall", "toolUse", "tool_use",
                 "functionResponse", "toolResult", "tool_result")


@dataclass
class Shapes:
    """Tool-call-like structure found in one record: ``calls`` and ``results`` (counts),
    ``names`` (shape name -> count) and ``first`` (the path of the first one, e.g.
    ``messages[1].content[0].toolUse``)."""

    calls: int = 0
    results: int = 0
    names: Counter[str] = field(default_factory=Counter)
    first: str | None = None

    def note(self, shape: str, path: str, n: int = 1, *, result: bool = False) -> None:
        """Count ``n`` calls (or results) of ``shape`` found at ``path``."""
        if result:
            self.results += n
        else:
            self.calls += n
        self.names[shape] += n
        if self.first is None:
            self.first = path

    def describe(self) -> str:
        """e.g. ``"2 tool call(s) and 2 result(s): toolUse blocks (2), toolResult blocks (2)"``."""
        what = ", ".join(f"{k} ({v})" for k, v in self.names.most_common())
        head = []
        if self.calls:
            head.append(f"{self.calls} tool call(s)")
        if self.results:
            head.append(f"{self.results} tool result(s)")
        return f"{' and '.join(head)}: {what}"


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _attr_key(d: Mapping[str, Any]) -> tuple[str, Any] | None:
    """An OTel ``{key, value}`` attribute as (key, plain value), else None."""
    k = d.get("key")
    if not isinstance(k, str) or "value" not in d or len(d) > 3:
        return None
    v = d.get("value")
    if isinstance(v, Mapping) and len(v) == 1:
        v = next(iter(v.values()))
    return k, v


def _attr(shapes: Shapes, key: str, value: Any, path: str) -> None:
    """Count an OTel-style attribute (flattened or ``{key, value}``) that marks a tool."""
    if key == "gen_ai.tool.name" or (key == "gen_ai.operation.name" and value == "execute_tool"):
        if key == "gen_ai.tool.name":
            shapes.note("tool spans (gen_ai.tool.name)", path)
    elif key == "openinference.span.kind" and value == "TOOL":
        shapes.note("tool spans (openinference TOOL)", path)
    elif ".tool_calls." in key and (key.endswith(".name") or key.endswith(".function.name")) \
            and key.split(".tool_calls.", 1)[1].split(".", 1)[0].isdigit():
        shapes.note("tool_calls attributes", path)


# every shape above leaves one of these (lower-cased) in the JSON text of a record: a record
# whose text has none is not walked (json.dumps, lower() and substring search run at C speed;
# the walk does not)
_MARKS = ("tool_call", "toolcall", "tool-call", "tool_use", "tooluse", "functioncall", "function_call",
          "function-call", "functionresponse", "function_response", "function_result", "functionresult",
          "tool_result", "toolresult", "tool-result", "toolreturn", "gen_ai.tool", "execute_tool",
          '"tool"', "tool_responses", "tool_usage_")


def _may_hold(obj: Any) -> bool:
    """False when the JSON text of ``obj`` has no mark of any shape (then it holds none);
    True when it has one or cannot be dumped (then it is walked)."""
    try:
        text = json.dumps(obj, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return True
    low = text.lower()
    return any(m in low for m in _MARKS)


def call_shapes(obj: Any) -> Shapes:
    """The tool-call-like structure ``obj`` holds (module docstring). Never raises."""
    shapes = Shapes()
    try:
        plain = as_plain(obj)
        if _may_hold(plain):
            _walk(plain, shapes)
    except Exception:  # an odd object is judged on what was seen
        pass
    return shapes


def _walk(root: Any, shapes: Shapes) -> None:
    stack: list[tuple[Any, str]] = [(root, "")]
    seen = 0
    while stack:
        node, path = stack.pop()
        seen += 1
        if seen > _MAX_NODES:
            return
        if isinstance(node, Mapping):
            _mapping(node, path, shapes, stack)
        elif is_seq(node):
            for i in range(len(node) - 1, -1, -1):
                v = node[i]
                if isinstance(v, (Mapping, list, tuple, str)) or hasattr(v, "model_dump"):
                    stack.append((v if isinstance(v, (Mapping, list, tuple, str)) else as_plain(v),
                                  _path(path, i)))
        elif isinstance(node, str):
            if len(node) > 2 and node[0] in "{[" and len(node) < _MAX_TEXT and any(
                    m in node for m in _TEXT_MARKERS):
                try:
                    inner = json.loads(node)
                except (ValueError, RecursionError):
                    continue
                if isinstance(inner, (Mapping, list)):
                    stack.append((inner, path + "(json)"))


def _mapping(node: Mapping[str, Any], path: str, shapes: Shapes, stack: list[tuple[Any, str]]) -> None:
    typed = None
    for f in _TYPE_FIELDS:
        t = node.get(f)
        if isinstance(t, str):
            if t in _CALL_TYPES:
                typed = (f"{t} items", False)
                break
            if t in _RESULT_TYPES:
                typed = (f"{t} items", True)
                break
            if t == "ToolCallRequestEvent" and is_seq(node.get("content")):
                shapes.note("ToolCallRequestEvent", path, len(node["content"]))
                return
    if node.get("run_type") == "tool":
        typed = ("tool runs", False)
    if typed is not None:
        shapes.note(typed[0], path, result=typed[1])
        # the item itself is counted; nested copies of it (its own function / input) are not
        for k, v in node.items():
            if k not in ("function", "input", "arguments", "args", "content", "output"):
                if isinstance(v, (Mapping, list, tuple)):
                    stack.append((v, _path(path, k)))
        return
    ak = _attr_key(node)
    if ak is not None:
        _attr(shapes, ak[0], ak[1], path)
        return
    for k, v in node.items():
        if not isinstance(k, str):
            continue
        if k == "tool_calls" and is_seq(v) and v:
            shapes.note("tool_calls", _path(path, k), len(v))
            for i, tc in enumerate(v):  # results or nested records are not inside calls
                if isinstance(tc, Mapping):
                    for kk, vv in tc.items():
                        if kk not in ("function", "args", "arguments", "input", "type") and isinstance(
                                vv, (Mapping, list, tuple)):
                            stack.append((vv, _path(_path(_path(path, k), i), kk)))
            continue
        if k in _CALL_KEYS and v:
            if isinstance(v, (Mapping, str)) or hasattr(v, "model_dump"):
                shapes.note(_CALL_KEYS[k], _path(path, k))
                continue
        if k in _RESULT_KEYS and v is not None and v != "":
            # a result is counted once: the ids inside it (toolUseId, tool_call_id) are not more
            shapes.note(_RESULT_KEYS[k], _path(path, k), len(v) if is_seq(v) else 1, result=True)
            continue
        if "." in k and (k.startswith("gen_ai.") or k.startswith("llm.") or k.startswith("openinference.")
                         or k.startswith("tool.")):
            _attr(shapes, k, v, _path(path, k))
        if isinstance(v, (Mapping, list, tuple)):
            stack.append((v, _path(path, k)))
        elif isinstance(v, str) and len(v) > 2 and v[0] in "{[":
            stack.append((v, _path(path, k)))
        elif v is not None and not isinstance(v, (int, float, bool, str)) and hasattr(v, "model_dump"):
            stack.append((as_plain(v), _path(path, k)))


def unread_problem(obj: Any, t: Trajectory | None, fmt: str | None) -> str | None:
    """The problem text when ``obj`` holds tool calls (or results) that were not read, else None.

    Args:
        obj: the source record (or batch of records) the trajectory was read from.
        t: what the reader made of it (None: nothing was read, the record was refused).
        fmt: the format name it was read as (None when it was not recognised).

    Returns:
        ``"holds N tool call(s) ...: <shapes> (first at <path>) that <fmt> did not read as
        calls"`` -- or None when ``t`` has a tool call (trusted, not scanned), or the record
        holds no call and no result that was left unread.
    """
    if t is not None and t.tool_calls():
        return None
    shapes = call_shapes(obj)
    read_results = bool(t is not None and t.tool_results())
    if not shapes.calls and (read_results or not shapes.results):
        return None
    at = f" (first at {shapes.first})" if shapes.first else ""
    if t is None and fmt:
        return f"holds {shapes.describe()}{at}, and the {fmt} reader refused the record; not read"
    if t is None:
        return f"holds {shapes.describe()}{at}, but is in no format trajcheck reads; not read"
    return (f"holds {shapes.describe()}{at}, which the {fmt} reader did not read as tool calls "
            "(0 read); the runs' scores would leave them out (--allow-unread to score anyway)")


def unread_in_batch(objs: list[Any], trajs: list[Trajectory], fmt: str) -> str | None:
    """``unread_problem`` for formats that read many records into runs together (OTLP spans,
    LangSmith runs, event streams): checked over the whole batch (its records, its runs)."""
    if any(t.tool_calls() for t in trajs):
        return None
    shapes = Shapes()
    for o in objs:
        s = call_shapes(o)
        shapes.calls += s.calls
        shapes.results += s.results
        shapes.names.update(s.names)
        if shapes.first is None and s.first is not None:
            shapes.first = s.first
    if not shapes.calls and (not shapes.results or any(t.tool_results() for t in trajs)):
        return None
    return (f"holds {shapes.describe()}, which the {fmt} reader did not read as tool calls "
            f"({len(trajs)} run(s), 0 calls read); the scores would leave them out "
            "(--allow-unread to score anyway)")


__all__ = ["Shapes", "call_shapes", "unread_in_batch", "unread_problem"]
