"""Translate framework objects into trajcheck's neutral ``(Trajectory, Case)``.

Shared by ``trajcheck.adapters.deepeval``, ``.ragas`` and ``.langsmith``. Everything here is
duck-typed (attribute or key access), so this module imports no framework; the adapters
import theirs lazily. Nothing here scores anything: metric logic lives in ``trajcheck.metrics``.

Conventions (documented once, applied by every adapter):

* A DeepEval ``ToolCall(name, input_parameters, output)`` becomes ``ToolCall(name, args)``;
  ``input_parameters=None`` becomes ``{}`` for a *called* tool (it was called with no
  arguments, DeepEval issue #3172) and ``args=None`` ("no constraint") for an *expected*
  tool, because DeepEval's own default ignores arguments unless asked to compare them.
  A non-None ``output`` becomes a ``tool_result`` step right after the call.
  DeepEval's ``ToolCall`` has no error flag; ``metadata["failed_calls"]`` (0-based indices
  into ``tools_called``; for a ``ConversationalTestCase``, into every turn's
  ``tools_called`` in turn order) marks calls whose result was an error, so a failed call
  that was retried is set aside as trajcheck's matching policy says (DESIGN.md).
* A RAGAS ``ToolCall(name, args)`` becomes ``ToolCall(name, args)``; a reference call
  becomes ``ExpectedCall(name, args)`` (RAGAS requires ``args``; ``{}`` means "no arguments").
  RAGAS messages have no error flag either: a ``ToolMessage`` whose ``metadata`` has
  ``is_error: True`` is a failed result (``metadata["error"]`` its text). A
  ``MultiTurnSample`` has no metadata, so per-sample case settings may ride on the first
  user message, ``HumanMessage(metadata={"trajcheck": {...}})`` (:func:`message_settings`).
* Messages (OpenAI dicts, LangChain message objects or dicts, RAGAS messages): a user
  message is a ``user`` step, an assistant message with calls a ``tool_call`` step (parallel
  calls stay together), a tool message a ``tool_result`` step (an error when its
  ``status`` is ``"error"`` (LangChain), its ``is_error`` is True, or its ``metadata`` has
  ``is_error: True``), and the last assistant text is ``final_response``.
* Case settings (``optional_calls``, ``forbidden_calls``, ``precedence``,
  ``forbidden_sequences``, ``expected_final_state``, ``response_must_include``,
  ``max_steps``, ``optimal_steps``, ``args_mode``, ``threshold``, ``user``, ``tools``,
  ``expected_calls``) may come from the framework test case's metadata and from the metric's
  constructor; :func:`trajcheck.adapters._case.build_case` merges them (constructor wins) and validates them through
  ``Case.from_dict`` so a bad value raises ``DatasetError`` naming the case.

Reading framework objects: every field is read as ``getattr(obj, name, None)`` (``obj.get(name)``
for a mapping), through :func:`_getter`. On a pydantic v2 model (RAGAS, DeepEval and LangChain
messages are) a missing attribute normally costs a Python-level ``AttributeError`` raised in
pydantic's ``__getattr__``; :func:`_getter` answers such misses from the instance ``__dict__``
instead, only where that provably gives the same value (see :func:`_plain_model_class`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from trajcheck.errors import DatasetError, TraceFormatError, TrajcheckError
from trajcheck.model import (
    ExpectedCall,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
    _from_present,
    _frozen,
    _template,
)

from ._case import metadata_settings

_ROLE_ALIASES: Mapping[str, str] = {
    "human": "user", "humanmessage": "user", "ai": "assistant", "aimessage": "assistant",
    "aimessagechunk": "assistant", "toolmessage": "tool", "function": "tool",
    "systemmessage": "system", "developer": "system",
}

#: Every attribute name this module reads from framework objects (through :func:`_getter`);
#: tests/test_fastpaths.py checks the list against the source.
_READ_NAMES: frozenset[str] = frozenset({
    "actual_output", "args", "arguments", "content", "function", "function_call", "id", "input",
    "input_parameters", "is_error", "metadata", "name", "output", "role", "status",
    "tool_call_id", "tool_calls", "tools_called", "turns", "type",
})


@lru_cache(maxsize=512)
def _plain_model_class(cls: type) -> bool:
    """True when ``cls`` is a pydantic v2 model whose failed attribute lookups go to pydantic's
    own ``BaseModel.__getattr__`` and which supplies none of :data:`_READ_NAMES` itself (no
    class attribute of that name in its MRO, no private attribute): then, for an instance
    whose ``__pydantic_extra__`` is empty, ``getattr(obj, name, None)`` for those names is
    ``obj.__dict__.get(name)``. The generic lookup finds no class attribute, so it returns the
    instance ``__dict__`` entry, or else calls ``BaseModel.__getattr__``, which (no private
    attribute, no extra field, no class attribute of that name) raises ``AttributeError``.
    Memoised per class (a class is not expected to gain such attributes after its first
    conversion). False for any other class, including mappings (read with ``get``)."""
    pm = sys.modules.get("pydantic.main")
    base = getattr(pm, "BaseModel", None) if pm is not None else None
    if not isinstance(base, type) or base not in cls.__mro__ or issubclass(cls, Mapping):
        return False
    if "__getattr__" not in vars(base) or "__getattribute__" in vars(base):
        return False
    for k in cls.__mro__:
        kd = vars(k)
        if k is not base and k is not object and ("__getattr__" in kd or "__getattribute__" in kd):
            return False
        if not _READ_NAMES.isdisjoint(kd):
            return False
    private = getattr(cls, "__private_attributes__", None)
    return isinstance(private, Mapping) and _READ_NAMES.isdisjoint(private)


def _getter(obj: Any) -> Callable[[str], Any]:
    """A reader ``g(name)`` for one object, ``name`` one of :data:`_READ_NAMES`:
    ``obj.get(name)`` for a mapping, else ``getattr(obj, name, None)``. Same values, with
    cheap misses on pydantic models (see :func:`_plain_model_class`)."""
    if type(obj) is dict:
        return obj.get
    try:
        plain = _plain_model_class(type(obj))
    except TypeError:  # unhashable class
        plain = False
    if plain:
        try:
            extra = obj.__pydantic_extra__
            inst = obj.__dict__
        except AttributeError:  # not fully initialised: let getattr decide
            pass
        else:
            if not extra and type(inst) is dict:
                return inst.get
    if isinstance(obj, Mapping):
        return obj.get

    def get_attr(name: str) -> Any:
        return getattr(obj, name, None)
    return get_attr


# The objects built on the hot paths skip the dataclasses' generated __init__ but not their
# __post_init__ checks (trajcheck.model._frozen: same objects, cheaper); tests/test_fastpaths.py
# compares them with the constructors' results field for field.
_STEP_TEMPLATE = _template(Step)
_TRAJECTORY_TEMPLATE = _template(Trajectory)


def _step(index: int, kind: str, content: str | None = None, tool_calls: tuple[ToolCall, ...] = (),
          tool_result: ToolResult | None = None) -> Step:
    """``Step(index, kind, content, tool_calls, tool_result)``."""
    return _from_present(Step, _STEP_TEMPLATE, {"index": index, "kind": kind, "content": content,
                                                "tool_calls": tool_calls, "tool_result": tool_result})


def _tool_call(name: str, args: dict[str, Any] | None, call_id: Any, raw_args: str | None,
               args_parse_error: str | None, tool_type: str | None = None) -> ToolCall:
    """``ToolCall(name, args, call_id, raw_args, args_parse_error, tool_type)``."""
    return _frozen(ToolCall, {"name": name, "args": args, "call_id": call_id, "raw_args": raw_args,
                              "args_parse_error": args_parse_error, "tool_type": tool_type})


def _expected_call(name: str, args: dict[str, Any] | None) -> ExpectedCall:
    """``ExpectedCall(name, args)``: no matchers, the default mode."""
    return _frozen(ExpectedCall, {"name": name, "args": args, "match": {}, "args_mode": None})


def _trajectory(steps: tuple[Step, ...], final_response: str | None, source_format: str,
                metadata: dict[str, Any] | None = None) -> Trajectory:
    """``Trajectory(steps=..., final_response=..., source_format=..., metadata=...)``."""
    values: dict[str, Any] = {"steps": steps, "final_response": final_response,
                              "source_format": source_format}
    if metadata is not None:
        values["metadata"] = metadata
    return _from_present(Trajectory, _TRAJECTORY_TEMPLATE, values)


def _getters(objs: Iterable[Any]) -> list[Callable[[str], Any]]:
    """``[_getter(o) for o in objs]``, looking the class up once per run of same-class objects
    (a message's tool calls are usually all of one class)."""
    out: list[Callable[[str], Any]] = []
    last: type | None = None
    plain = False
    for o in objs:
        t = type(o)
        if t is dict:
            out.append(o.get)
            continue
        if t is not last:
            last = t
            try:
                plain = _plain_model_class(t)
            except TypeError:  # unhashable class
                plain = False
        if plain:
            try:
                extra = o.__pydantic_extra__
                inst = o.__dict__
            except AttributeError:
                pass
            else:
                if not extra and type(inst) is dict:
                    out.append(inst.get)
                    continue
        out.append(_getter(o))
    return out


def _get(obj: Any, name: str) -> Any:
    """``obj.get(name)`` for a mapping, else ``getattr(obj, name, None)``."""
    return _getter(obj)(name)


def _parse_args(raw: Any, where: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """``(args, raw_args, parse_error)`` for an argument payload (dict, JSON string or None)."""
    if raw is None:
        return {}, None, None
    if type(raw) is dict or isinstance(raw, Mapping):
        return dict(raw), None, None
    if isinstance(raw, str):
        if raw.strip() == "":
            return {}, raw, None
        try:
            val = json.loads(raw)
        except json.JSONDecodeError as e:
            return None, raw, f"{where}: arguments are not valid JSON ({e.msg})"
        if isinstance(val, dict):
            return val, raw, None
        return None, raw, f"{where}: arguments parsed to {type(val).__name__}, not an object"
    return None, repr(raw), f"{where}: arguments of type {type(raw).__name__}, not an object"


# --------------------------------------------------------------------------- DeepEval


def call_type(call: Any) -> str | None:
    """A DeepEval ``ToolCall``'s ``type`` (``ToolCallType.FUNCTION``/``MCP``, or its text) as
    trajcheck's ``tool_type`` (``"function"``, ``"mcp"``); None when it has none."""
    t = _getter(call)("type")
    t = getattr(t, "value", t)
    return str(t).lower() if t is not None else None


def deepeval_called(calls: Sequence[Any] | None, *, where: str = "tools_called",
                    failed: Iterable[int] = (), offset: int = 0, start: int = 0,
                    parallel: Sequence[Sequence[int]] = ()) -> list[Step]:
    """Steps for a DeepEval ``tools_called`` list: one ``tool_call`` step per call (the calls of
    one ``parallel`` group, indices plus ``offset``, share the step of the group's first call),
    each followed by a ``tool_result`` step when the call has an ``output`` or is in
    ``failed``. Each call gets the id ``"<where>[i]"`` so results join their call. ``failed``
    holds indices (plus ``offset``, for calls spread over several turns) of calls whose result
    was an error: their result step has ``is_error=True`` and the ``output`` as given. Step
    indices count up from ``start``."""
    bad = set(failed)
    leader: dict[int, int] = {}
    for grp in parallel:
        for j in grp:
            leader[j] = min(grp)
    built: list[tuple[ToolCall, Any, str]] = []
    for i, c in enumerate(calls or ()):
        g = _getter(c)
        cid = f"{where}[{i}]"
        name = g("name")
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"{where}[{i}]: tool call has no name")
        args, raw, err = _parse_args(g("input_parameters"), cid)
        built.append((_tool_call(name, args, cid, raw, err, call_type(c)), g("output"), name))
    steps: list[Step] = []
    k = start
    for i in range(len(built)):
        lead = leader.get(i + offset, i + offset)
        if lead != i + offset:
            continue  # emitted with its group's first call
        members = [j - offset for j in sorted(j for j, ld in leader.items() if ld == lead)
                   if 0 <= j - offset < len(built)] or [i]
        steps.append(_step(k, "tool_call", None, tuple(built[j][0] for j in members)))
        k += 1
        for j in members:
            call, out, name = built[j]
            if j + offset in bad:
                steps.append(_step(k, "tool_result", None, (), ToolResult(call.call_id, name, out, True)))
                k += 1
            elif out is not None:
                steps.append(_step(k, "tool_result", None, (), ToolResult(call.call_id, name, out)))
                k += 1
    return steps


def parallel_call_groups(metadata: Any, n_calls: int, *, where: str = "metadata") -> list[list[int]]:
    """The ``parallel_calls`` setting (see :func:`metadata_settings`): groups of 0-based call
    indices issued together in one step (DeepEval's flat ``tools_called`` cannot say so).
    Raises ``DatasetError`` naming the entry when it is not a list of lists of in-range,
    non-repeated integers."""
    raw = metadata_settings(metadata).get("parallel_calls")
    if raw is None:
        return []
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise DatasetError(f"{where}['parallel_calls'] must be a list of lists of call indices, "
                           f"got {type(raw).__name__}")
    seen: set[int] = set()
    out = []
    for j, grp in enumerate(raw):
        if isinstance(grp, (str, bytes)) or not isinstance(grp, Sequence):
            raise DatasetError(f"{where}['parallel_calls'][{j}] must be a list of call indices")
        for v in grp:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < n_calls or v in seen:
                raise DatasetError(f"{where}['parallel_calls'][{j}]: {v!r} is not the index of one "
                                   f"of the {n_calls} calls (or appears twice)")
            seen.add(v)
        out.append(list(grp))
    return out


def failed_call_indices(metadata: Any, n_calls: int, *, where: str = "metadata") -> frozenset[int]:
    """The ``failed_calls`` setting of a DeepEval test case's metadata (see
    :func:`metadata_settings`): 0-based indices into its calls (``n_calls`` of them).
    Raises ``DatasetError`` naming the entry when it is not a list of in-range integers."""
    raw = metadata_settings(metadata).get("failed_calls")
    if raw is None:
        return frozenset()
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise DatasetError(f"{where}['failed_calls'] must be a list of call indices, got {type(raw).__name__}")
    out = set()
    for j, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < n_calls:
            raise DatasetError(f"{where}['failed_calls'][{j}]: {v!r} is not the index of one of the "
                               f"{n_calls} tools_called")
        out.add(v)
    return frozenset(out)


def deepeval_expected(calls: Sequence[Any] | None, *, where: str = "expected_tools",
                      compare_args: bool = True) -> tuple[ExpectedCall, ...]:
    """``ExpectedCall`` per DeepEval expected ``ToolCall``; ``input_parameters=None`` (or
    ``compare_args=False``) means no argument constraint."""
    out: list[ExpectedCall] = []
    for i, c in enumerate(calls or ()):
        g = _getter(c)
        name = g("name")
        if not isinstance(name, str) or not name:
            raise DatasetError(f"{where}[{i}]: expected tool has no name")
        params = g("input_parameters")
        if params is not None and not isinstance(params, Mapping):
            raise DatasetError(f"{where}[{i}]: input_parameters must be a dict, got {type(params).__name__}")
        out.append(_expected_call(name, dict(params) if (params is not None and compare_args) else None))
    return tuple(out)


def _renumber(steps: Iterable[Step]) -> tuple[Step, ...]:
    """The steps with ``index`` 0, 1, 2, ... (steps already carrying their index are kept)."""
    return tuple(s if s.index == i else replace(s, index=i) for i, s in enumerate(steps))


def deepeval_trajectory(test_case: Any) -> Trajectory:
    """The trajectory of a DeepEval ``LLMTestCase``: the ``input`` as a user step, its
    ``tools_called`` (see :func:`deepeval_called`; ``metadata["failed_calls"]`` marks
    failed ones), and ``actual_output`` as final response."""
    steps: list[Step] = []
    g = _getter(test_case)
    inp = g("input")
    if inp is not None:
        steps.append(_step(0, "user", str(inp)))
    called = g("tools_called")
    meta = g("metadata")
    failed = failed_call_indices(meta, len(called or ()))
    groups = parallel_call_groups(meta, len(called or ())) if meta else []
    steps.extend(deepeval_called(called, failed=failed, start=len(steps), parallel=groups))
    final = g("actual_output")
    if final is not None:
        steps.append(_step(len(steps), "final_response", str(final)))
    return _trajectory(_renumber(steps), None if final is None else str(final), "deepeval",
                       {"case_id": g("name")})


def deepeval_conversation_trajectory(test_case: Any) -> Trajectory:
    """The trajectory of a DeepEval ``ConversationalTestCase``: user turns as user steps,
    each assistant turn's ``tools_called`` as call (and result) steps, then its content as
    an assistant step; the last assistant content is the final response.
    ``metadata["failed_calls"]`` indexes the calls of all turns, in turn order."""
    steps: list[Step] = []
    final: str | None = None
    turns = list(_get(test_case, "turns") or ())
    n_calls = sum(len(_get(t, "tools_called") or ()) for t in turns if _get(t, "role") != "user")
    failed = failed_call_indices(_get(test_case, "metadata"), n_calls)
    groups = parallel_call_groups(_get(test_case, "metadata"), n_calls)
    seen = 0
    for t, turn in enumerate(turns):
        g = _getter(turn)
        role = g("role")
        content = g("content")
        if role == "user":
            steps.append(_step(len(steps), "user", content))
            continue
        called = g("tools_called") or ()
        steps.extend(deepeval_called(called, where=f"turns[{t}].tools_called", failed=failed,
                                     offset=seen, start=len(steps), parallel=groups))
        seen += len(called)
        if content:
            steps.append(_step(len(steps), "assistant", content))
            final = content
    return Trajectory(steps=_renumber(steps), final_response=final, source_format="deepeval",
                      metadata={"case_id": _get(test_case, "name")})


# --------------------------------------------------------------------------- messages


def _msg_role(m: Any, g: Callable[[str], Any] | None = None) -> str | None:
    if g is None:
        g = _getter(m)
    role = g("role") or g("type")
    if role is None and not isinstance(m, Mapping):
        role = type(m).__name__
    r = str(role).lower() if role is not None else None
    return _ROLE_ALIASES.get(r, r) if r is not None else None


def _msg_text(m: Any, g: Callable[[str], Any] | None = None) -> str | None:
    c = (g or _getter(m))("content")
    if c is None or isinstance(c, str):
        return c
    if isinstance(c, list):  # content blocks
        parts = [b.get("text", "") if isinstance(b, Mapping) else str(b) for b in c
                 if not isinstance(b, Mapping) or b.get("type") in (None, "text", "output_text")]
        return "".join(parts)
    return str(c)


def _msg_calls(m: Any, where: str, g: Callable[[str], Any] | None = None) -> tuple[ToolCall, ...]:
    if g is None:
        g = _getter(m)
    raw_calls = g("tool_calls") or []
    fc = g("function_call")
    if not raw_calls and fc:
        raw_calls = [{"function": fc}]
    calls: list[ToolCall] = []
    for j, gc in enumerate(_getters(raw_calls)):
        fn = gc("function")
        if fn is not None:  # OpenAI shape
            gf = _getter(fn)
            name, payload = gf("name"), gf("arguments")
        else:  # LangChain / RAGAS shape
            name, payload = gc("name"), gc("args")
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"{where}.tool_calls[{j}]: tool call has no name")
        if type(payload) is dict:  # the common case of _parse_args
            args, raw, err = dict(payload), None, None
        else:
            args, raw, err = _parse_args(payload, f"{where}.tool_calls[{j}]")
        calls.append(_tool_call(name, args, gc("id"), raw, err))
    return tuple(calls)


_FLAG_WORDS = {"true": True, "false": False}


def tool_message_flag(g: Callable[[str], Any], where: str) -> tuple[bool | None, str | None]:
    """``(is_error, error text)`` of a tool message: its own ``is_error`` or its metadata's
    (RAGAS messages have no error flag of their own). The flag is a bool, or the string
    ``"true"``/``"false"`` (any case); None when not given. ``metadata["error"]`` is the
    error text of a result flagged failed. Raises ``DatasetError`` naming ``where`` for
    any other flag value (``"yes"``, 1) and for ``error`` given without ``is_error: True``
    (the failure must be flagged, so the text alone never decides it)."""
    meta = g("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    raw = g("is_error")
    key = "is_error"
    if raw is None:
        raw, key = meta.get("is_error"), "metadata['is_error']"
    flag: bool | None
    if raw is None or isinstance(raw, bool):
        flag = raw
    elif isinstance(raw, str) and raw.strip().lower() in _FLAG_WORDS:
        flag = _FLAG_WORDS[raw.strip().lower()]
    else:
        raise DatasetError(f"{where}.{key} is {raw!r}; write True or False (a failed tool result "
                           "is metadata={'is_error': True, 'error': '<text>'})")
    err = meta.get("error")
    if err is not None and err is not False and flag is not True:
        raise DatasetError(f"{where}.metadata['error'] is {err!r} but the result is not flagged failed; "
                           "a failed tool result is metadata={'is_error': True, 'error': '<text>'} "
                           "(error holds its text)")
    return flag, (str(err) if err not in (None, True) else None)


def messages_trajectory(messages: Sequence[Any], *, source_format: str = "messages") -> Trajectory:
    """A trajectory from a chat message list: OpenAI dicts (``role``, ``tool_calls`` with
    ``function.arguments`` as JSON string or dict, legacy ``function_call``), LangChain message
    objects or dicts (``type`` human/ai/tool, ``tool_calls`` with ``args``), or RAGAS messages.
    Raises ``TraceFormatError`` naming the message index when a message has no known role."""
    steps: list[Step] = []
    final: str | None = None
    for i, m in enumerate(messages):
        g = _getter(m)
        role = _msg_role(m, g)
        text = _msg_text(m, g)
        if role == "user":
            steps.append(_step(len(steps), "user", text))
        elif role == "system":
            steps.append(_step(len(steps), "system", text))
        elif role == "assistant":
            calls = _msg_calls(m, f"messages[{i}]", g)
            if calls:
                steps.append(_step(len(steps), "tool_call", text or None, calls))
            elif text:
                steps.append(_step(len(steps), "assistant", text))
                final = text
        elif role == "tool":
            status = g("status")
            flag, err_text = tool_message_flag(g, f"messages[{i}]")
            failed = status == "error" or flag is True
            steps.append(_step(len(steps), "tool_result", None, (), ToolResult(
                call_id=g("tool_call_id"), name=g("name"), output=text,
                is_error=True if failed else (False if (status == "success" or flag is False) else None),
                error=err_text if failed else None)))
        else:
            raise TraceFormatError(f"messages[{i}]: unknown message role {role!r}")
    if steps and steps[-1].kind == "assistant":
        last = steps[-1]  # an assistant step has only index, kind and content set
        steps[-1] = _step(last.index, "final_response", last.content)
    return _trajectory(_renumber(steps), final, source_format)


def messages_calls(messages: Sequence[Any]) -> tuple[tuple[ToolCall, ...], str | None] | None:
    """``(calls in order, text of the first user message)`` of a chat message list, read as
    :func:`messages_trajectory` reads it, without building the steps -- or None when the list
    needs the whole trajectory: a tool result flagged failed (retries are set aside by the
    metrics, which needs the results) or a message whose role is not known (the full reader
    raises the error naming it).

    For metrics that read only the calls (tool-call precision/recall/F1): on a run with no
    failed result they give the same result on these calls as on the trajectory
    (``metrics.calls.calls_and_retries``: a plain call list has no retries to set aside).
    """
    calls: list[ToolCall] = []
    user: str | None = None
    seen_user = False
    for i, m in enumerate(messages):
        g = _getter(m)
        role = _msg_role(m, g)
        if role == "assistant":
            calls.extend(_msg_calls(m, f"messages[{i}]", g))
        elif role == "user":
            if not seen_user:
                user, seen_user = _msg_text(m, g), True
        elif role == "tool":
            if g("status") == "error" or tool_message_flag(g, f"messages[{i}]")[0]:
                return None
        elif role != "system":
            return None
    return tuple(calls), user


def ragas_trajectory(user_input: Sequence[Any]) -> Trajectory:
    """The trajectory of a RAGAS ``MultiTurnSample.user_input`` (Human/AI/Tool messages)."""
    return messages_trajectory(user_input, source_format="ragas")


def message_settings(messages: Sequence[Any] | None) -> dict[str, Any]:
    """Per-sample case settings carried by a message list: the metadata of the first user
    message (RAGAS ``HumanMessage(metadata=...)`` or a dict with ``metadata``), read by
    ``_settings.namespaced`` (its ``"trajcheck"`` block, else the keys only trajcheck uses);
    ``{}`` when absent. Raises ``DatasetError`` naming the message for a bad block."""
    from ._settings import namespaced

    for i, m in enumerate(messages or ()):
        g = _getter(m)
        if _msg_role(m, g) != "user":
            continue
        return namespaced(g("metadata"), f"messages[{i}].metadata")
    return {}


def ragas_expected(reference_tool_calls: Sequence[Any] | None) -> tuple[ExpectedCall, ...]:
    """``ExpectedCall(name, args)`` per RAGAS reference ``ToolCall``; ``None`` gives ``()``
    (whether a metric needs the reference is decided by ``_catalog.require``)."""
    if reference_tool_calls is None:
        return ()
    out = []
    for i, g in enumerate(_getters(reference_tool_calls)):
        name, args = g("name"), g("args")
        if not isinstance(name, str) or not name:
            raise DatasetError(f"reference_tool_calls[{i}]: call has no name")
        if args is not None and type(args) is not dict and not isinstance(args, Mapping):
            raise DatasetError(f"reference_tool_calls[{i}]: args must be a dict")
        out.append(_expected_call(name, dict(args) if args is not None else None))
    return tuple(out)


def any_trajectory(obj: Any, *, where: str = "outputs") -> Trajectory:
    """A trajectory from a LangSmith-style output: a ``Trajectory``; a message list; a dict
    with ``messages`` (or ``trajectory``) holding one; a trajcheck trajectory dict (``steps``);
    or ``{"tool_calls": [{"name", "args"}...], "final_response"?}``. Anything else is handed
    to ``trajcheck.read.traces.load`` (format auto-detection). ``None`` raises ``TraceFormatError``
    rather than scoring as an empty run (openevals PR #237). A string is JSON text, never a
    file path (an agent's output is untrusted); anything that cannot be read raises
    ``TraceFormatError`` naming ``where``."""
    try:
        return _any_trajectory(obj, where)
    except TrajcheckError:
        raise
    except Exception as e:  # an odd value is "not a trajectory", never a crash
        raise TraceFormatError(f"{where}: not a trajectory ({type(e).__name__}: {e})") from e


def _any_trajectory(obj: Any, where: str) -> Trajectory:
    if isinstance(obj, (str, bytes)):
        from trajcheck.read.limits import loads

        try:
            parsed = loads(obj)
        except ValueError as e:
            raise TraceFormatError(f"{where}: a string that is not JSON ({e})") from e
        if isinstance(parsed, (str, bytes)):
            raise TraceFormatError(f"{where}: a JSON string, not a trajectory")
        return any_trajectory(parsed, where=where)
    if obj is None:
        raise TraceFormatError(f"{where}: no trajectory (got None)")
    if isinstance(obj, Trajectory):
        return obj
    if isinstance(obj, Mapping):
        for key in ("trajectory", "messages"):
            if key in obj:
                return any_trajectory(obj[key], where=f"{where}.{key}")
        if "steps" in obj:
            return Trajectory.from_dict(obj)
        if "tool_calls" in obj and _msg_role(obj) is None:
            if _plain_list(obj["tool_calls"] or []):
                return plain_calls_trajectory(obj["tool_calls"] or [], f"{where}.tool_calls",
                                              obj.get("final_response"))
            calls = [_plain_call(c, f"{where}.tool_calls[{k}]") for k, c in enumerate(obj["tool_calls"] or [])]
            steps = [Step(k, "tool_call", None, _msg_calls({"tool_calls": [c]}, f"{where}"))
                     for k, c in enumerate(calls)]
            fr = obj.get("final_response")
            if fr is not None:
                steps.append(Step(len(steps), "final_response", str(fr)))
            return Trajectory(steps=_renumber(steps), final_response=fr, source_format="calls")
        if _msg_role(obj) is not None:
            return messages_trajectory([obj])
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        from trajcheck.read.traces import plain

        if plain.is_call_list(obj) and _plain_list(obj):  # what `trajcheck eval` reads as a plain list
            return plain_calls_trajectory(obj, where, None)
        return messages_trajectory(list(obj))
    try:
        from trajcheck.read.traces import load  # type: ignore[attr-defined]
    except ImportError as e:  # pragma: no cover - traces package always ships
        raise TraceFormatError(f"{where}: not a message list or trajectory dict") from e
    res = load(obj)
    trajs = list(res.trajectories)
    if len(trajs) != 1:
        raise TraceFormatError(f"{where}: expected one trajectory, found {len(trajs)}")
    return trajs[0]


def _plain_list(calls: Any) -> bool:
    """True when ``calls`` are plain call dicts (the CLI plain reader's shape), not OpenAI
    ``{"function": ...}`` calls, message objects or tool messages (``content``, a ``type``
    other than LangChain's ``"tool_call"``)."""
    return isinstance(calls, Sequence) and all(
        isinstance(c, Mapping) and "function" not in c and "content" not in c
        and c.get("type") in (None, "tool_call") for c in calls)


def plain_calls_trajectory(calls: Sequence[Any], where: str, final_response: Any) -> Trajectory:
    """A host's plain call list read by the CLI's plain reader (``read.traces.plain.read_calls``,
    the one conversion): each call's ``output`` / ``result`` becomes its result step and
    ``is_error`` / ``error`` marks it failed, exactly as in ``trajcheck eval``. A malformed call
    (no name, unknown or misspelled key, two argument keys, a non-boolean ``is_error``) raises
    ``TraceFormatError`` naming ``where[i]`` (the CLI lists it as a problem and reads on);
    arguments that are not a JSON object are kept as a malformed call, as the CLI does."""
    from trajcheck.read.traces import plain

    got = plain.read_calls(calls, where)
    if got.problems:
        more = f" (and {len(got.problems) - 1} more)" if len(got.problems) > 1 else ""
        raise TraceFormatError(got.problems[0].removesuffix("; ignored").removesuffix("; skipped") + more)
    steps = list(got.steps)
    if final_response is not None:
        steps.append(Step(len(steps), "final_response", str(final_response)))
    meta = {"problems": list(got.arg_problems)} if got.arg_problems else {}
    return Trajectory(steps=tuple(steps), final_response=final_response, source_format="calls", metadata=meta)


def _plain_call(c: Any, where: str) -> Any:
    """One call of an outputs call list as ``_msg_calls`` reads it: a plain ``{name, args}``
    mapping may spell ``args`` as the CLI's plain reader does (``arguments``, ``input``,
    ``parameters``); an unknown key raises ``TraceFormatError`` rather than being dropped."""
    if not isinstance(c, Mapping) or "function" in c:
        return c
    from trajcheck.read.traces import plain

    bad = plain.unknown_keys(c, where)
    if bad:
        raise TraceFormatError(bad[0])
    given = [k for k in plain.ARG_KEYS if k in c]
    if len(given) > 1:
        raise TraceFormatError(f"{where}: both {given[0]!r} and {given[1]!r}; give the arguments once")
    out = {k: v for k, v in c.items() if k not in plain.ARG_KEYS}
    if given:
        out["args"] = c[given[0]]
    return out


def expected_from_reference(ref: Any, *, where: str = "reference_outputs") -> tuple[ExpectedCall, ...]:
    """Expected calls from a reference: a list of ``{"name", "args"}`` / ``ExpectedCall``
    dicts, or a reference trajectory (message list or dict, agentevals style) whose tool calls
    become expected calls with their arguments."""
    if isinstance(ref, Sequence) and not isinstance(ref, (str, bytes)) and all(
        isinstance(x, str) or (isinstance(x, Mapping) and "name" in x and _msg_role(x) is None)
        for x in ref
    ):
        try:
            return tuple(ExpectedCall.from_dict(x) for x in ref)
        except (KeyError, TypeError, ValueError) as e:
            raise DatasetError(f"{where}: malformed expected call ({e})") from e
    traj = any_trajectory(ref, where=where)
    return tuple(ExpectedCall(name=c.name, args=c.args) for c in traj.tool_calls())
