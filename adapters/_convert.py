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
  constructor; :func:`build_case` merges them (constructor wins) and validates them through
  ``Case.from_dict`` so a bad value raises ``DatasetError`` naming the case.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trajcheck.errors import DatasetError, TraceFormatError
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

#: Case fields an adapter accepts from metadata or from a metric's constructor.
CASE_KEYS: tuple[str, ...] = (
    "expected_calls", "optional_calls", "forbidden_calls", "precedence", "forbidden_sequences",
    "expected_final_state", "response_must_include", "max_steps", "optimal_steps", "args_mode",
    "threshold", "user", "tools", "expected_route", "initial_state",
)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _parse_args(raw: Any, where: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """``(args, raw_args, parse_error)`` for an argument payload (dict, JSON string or None)."""
    if raw is None:
        return {}, None, None
    if isinstance(raw, Mapping):
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


def deepeval_called(calls: Sequence[Any] | None, *, where: str = "tools_called",
                    failed: Iterable[int] = (), offset: int = 0) -> list[Step]:
    """Steps for a DeepEval ``tools_called`` list: one ``tool_call`` step per call, followed
    by a ``tool_result`` step when the call has an ``output`` or is in ``failed``. Each call
    gets the id ``"<where>[i]"`` so results join their call. ``failed`` holds indices (plus
    ``offset``, for calls spread over several turns) of calls whose result was an error:
    their result step has ``is_error=True`` and the ``output`` as given."""
    bad = set(failed)
    steps: list[Step] = []
    for i, c in enumerate(calls or ()):
        cid = f"{where}[{i}]"
        name = _get(c, "name")
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"{where}[{i}]: tool call has no name")
        args, raw, err = _parse_args(_get(c, "input_parameters"), f"{where}[{i}]")
        ttype = _get(c, "type")
        ttype = getattr(ttype, "value", ttype)
        call = ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err,
                        tool_type=str(ttype).lower() if ttype is not None else None)
        steps.append(Step(index=0, kind="tool_call", tool_calls=(call,)))
        out = _get(c, "output")
        if i + offset in bad:
            steps.append(Step(index=0, kind="tool_result", tool_result=ToolResult(
                call_id=cid, name=name, output=out, is_error=True)))
        elif out is not None:
            steps.append(Step(index=0, kind="tool_result",
                              tool_result=ToolResult(call_id=cid, name=name, output=out)))
    return steps


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
        name = _get(c, "name")
        if not isinstance(name, str) or not name:
            raise DatasetError(f"{where}[{i}]: expected tool has no name")
        params = _get(c, "input_parameters")
        if params is not None and not isinstance(params, Mapping):
            raise DatasetError(f"{where}[{i}]: input_parameters must be a dict, got {type(params).__name__}")
        out.append(ExpectedCall(name=name, args=dict(params) if (params is not None and compare_args) else None))
    return tuple(out)


def _renumber(steps: Iterable[Step]) -> tuple[Step, ...]:
    from dataclasses import replace

    return tuple(replace(s, index=i) for i, s in enumerate(steps))


def deepeval_trajectory(test_case: Any) -> Trajectory:
    """The trajectory of a DeepEval ``LLMTestCase``: the ``input`` as a user step, its
    ``tools_called`` (see :func:`deepeval_called`; ``metadata["failed_calls"]`` marks
    failed ones), and ``actual_output`` as final response."""
    steps: list[Step] = []
    inp = _get(test_case, "input")
    if inp is not None:
        steps.append(Step(index=0, kind="user", content=str(inp)))
    called = _get(test_case, "tools_called")
    failed = failed_call_indices(_get(test_case, "metadata"), len(called or ()))
    steps.extend(deepeval_called(called, failed=failed))
    final = _get(test_case, "actual_output")
    if final is not None:
        steps.append(Step(index=0, kind="final_response", content=str(final)))
    return Trajectory(steps=_renumber(steps), final_response=None if final is None else str(final),
                      source_format="deepeval", metadata={"case_id": _get(test_case, "name")})


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
    seen = 0
    for t, turn in enumerate(turns):
        role = _get(turn, "role")
        content = _get(turn, "content")
        if role == "user":
            steps.append(Step(index=0, kind="user", content=content))
            continue
        called = _get(turn, "tools_called") or ()
        steps.extend(deepeval_called(called, where=f"turns[{t}].tools_called", failed=failed,
                                     offset=seen))
        seen += len(called)
        if content:
            steps.append(Step(index=0, kind="assistant", content=content))
            final = content
    return Trajectory(steps=_renumber(steps), final_response=final, source_format="deepeval",
                      metadata={"case_id": _get(test_case, "name")})


# --------------------------------------------------------------------------- messages


def _msg_role(m: Any) -> str | None:
    role = _get(m, "role") or _get(m, "type")
    if role is None and not isinstance(m, Mapping):
        role = type(m).__name__
    r = str(role).lower() if role is not None else None
    aliases = {"human": "user", "humanmessage": "user", "ai": "assistant", "aimessage": "assistant",
               "aimessagechunk": "assistant", "toolmessage": "tool", "function": "tool",
               "systemmessage": "system", "developer": "system"}
    return aliases.get(r, r) if r is not None else None


def _msg_text(m: Any) -> str | None:
    c = _get(m, "content")
    if c is None or isinstance(c, str):
        return c
    if isinstance(c, list):  # content blocks
        parts = [b.get("text", "") if isinstance(b, Mapping) else str(b) for b in c
                 if not isinstance(b, Mapping) or b.get("type") in (None, "text", "output_text")]
        return "".join(parts)
    return str(c)


def _msg_calls(m: Any, where: str) -> tuple[ToolCall, ...]:
    raw_calls = _get(m, "tool_calls") or []
    fc = _get(m, "function_call")
    if not raw_calls and fc:
        raw_calls = [{"function": fc}]
    calls: list[ToolCall] = []
    for j, c in enumerate(raw_calls):
        w = f"{where}.tool_calls[{j}]"
        fn = _get(c, "function")
        if fn is not None:  # OpenAI shape
            name, payload = _get(fn, "name"), _get(fn, "arguments")
        else:  # LangChain / RAGAS shape
            name, payload = _get(c, "name"), _get(c, "args")
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"{w}: tool call has no name")
        args, raw, err = _parse_args(payload, w)
        calls.append(ToolCall(name=name, args=args, call_id=_get(c, "id"), raw_args=raw,
                              args_parse_error=err))
    return tuple(calls)


def messages_trajectory(messages: Sequence[Any], *, source_format: str = "messages") -> Trajectory:
    """A trajectory from a chat message list: OpenAI dicts (``role``, ``tool_calls`` with
    ``function.arguments`` as JSON string or dict, legacy ``function_call``), LangChain message
    objects or dicts (``type`` human/ai/tool, ``tool_calls`` with ``args``), or RAGAS messages.
    Raises ``TraceFormatError`` naming the message index when a message has no known role."""
    steps: list[Step] = []
    final: str | None = None
    for i, m in enumerate(messages):
        role = _msg_role(m)
        text = _msg_text(m)
        if role == "user":
            steps.append(Step(index=0, kind="user", content=text))
        elif role == "system":
            steps.append(Step(index=0, kind="system", content=text))
        elif role == "assistant":
            calls = _msg_calls(m, f"messages[{i}]")
            if calls:
                steps.append(Step(index=0, kind="tool_call", content=text or None, tool_calls=calls))
            elif text:
                steps.append(Step(index=0, kind="assistant", content=text))
                final = text
        elif role == "tool":
            status = _get(m, "status")
            meta = _get(m, "metadata")
            meta = meta if isinstance(meta, Mapping) else {}
            flagged = _get(m, "is_error") is True or meta.get("is_error") is True
            err_text = meta.get("error")
            steps.append(Step(index=0, kind="tool_result", tool_result=ToolResult(
                call_id=_get(m, "tool_call_id"), name=_get(m, "name"), output=text,
                is_error=True if (status == "error" or flagged) else (False if status == "success" else None),
                error=str(err_text) if err_text else None)))
        else:
            raise TraceFormatError(f"messages[{i}]: unknown message role {role!r}")
    if steps and steps[-1].kind == "assistant":
        from dataclasses import replace

        steps[-1] = replace(steps[-1], kind="final_response")
    return Trajectory(steps=_renumber(steps), final_response=final, source_format=source_format)


def ragas_trajectory(user_input: Sequence[Any]) -> Trajectory:
    """The trajectory of a RAGAS ``MultiTurnSample.user_input`` (Human/AI/Tool messages)."""
    return messages_trajectory(user_input, source_format="ragas")


def message_settings(messages: Sequence[Any] | None) -> dict[str, Any]:
    """Per-sample case settings carried by a message list: ``metadata["trajcheck"]`` of the
    first user message (RAGAS ``HumanMessage(metadata=...)`` or a dict with ``metadata``),
    ``{}`` when absent. Raises ``DatasetError`` when it is not a dict."""
    for i, m in enumerate(messages or ()):
        if _msg_role(m) != "user":
            continue
        meta = _get(m, "metadata")
        if not isinstance(meta, Mapping) or meta.get("trajcheck") is None:
            return {}
        inner = meta["trajcheck"]
        if not isinstance(inner, Mapping):
            raise DatasetError(f"messages[{i}].metadata['trajcheck'] must be a dict, got {type(inner).__name__}")
        return dict(inner)
    return {}


def ragas_expected(reference_tool_calls: Sequence[Any] | None) -> tuple[ExpectedCall, ...]:
    """``ExpectedCall(name, args)`` per RAGAS reference ``ToolCall``; ``None`` raises
    ``DatasetError`` (a reference is required)."""
    if reference_tool_calls is None:
        raise DatasetError("reference_tool_calls is not set for this sample")
    out = []
    for i, c in enumerate(reference_tool_calls):
        name, args = _get(c, "name"), _get(c, "args")
        if not isinstance(name, str) or not name:
            raise DatasetError(f"reference_tool_calls[{i}]: call has no name")
        if args is not None and not isinstance(args, Mapping):
            raise DatasetError(f"reference_tool_calls[{i}]: args must be a dict")
        out.append(ExpectedCall(name=name, args=dict(args) if args is not None else None))
    return tuple(out)


def any_trajectory(obj: Any, *, where: str = "outputs") -> Trajectory:
    """A trajectory from a LangSmith-style output: a ``Trajectory``; a message list; a dict
    with ``messages`` (or ``trajectory``) holding one; a trajcheck trajectory dict (``steps``);
    or ``{"tool_calls": [{"name", "args"}...], "final_response"?}``. Anything else is handed
    to ``trajcheck.traces.load`` (format auto-detection). ``None`` raises ``TraceFormatError``
    rather than scoring as an empty run (openevals PR #237)."""
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
            calls = obj["tool_calls"] or []
            steps = [Step(index=0, kind="tool_call", tool_calls=_msg_calls({"tool_calls": [c]},
                                                                           f"{where}"))
                     for c in calls]
            fr = obj.get("final_response")
            if fr is not None:
                steps.append(Step(index=0, kind="final_response", content=str(fr)))
            return Trajectory(steps=_renumber(steps), final_response=fr, source_format="calls")
        if _msg_role(obj) is not None:
            return messages_trajectory([obj])
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return messages_trajectory(list(obj))
    try:
        from trajcheck.traces import load  # type: ignore[attr-defined]
    except ImportError as e:  # pragma: no cover - traces package always ships
        raise TraceFormatError(f"{where}: not a message list or trajectory dict") from e
    res = load(obj)
    trajs = list(res.trajectories)
    if len(trajs) != 1:
        raise TraceFormatError(f"{where}: expected one trajectory, found {len(trajs)}")
    return trajs[0]


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


def build_case(case_id: str, case_input: Any, expected_calls: Sequence[ExpectedCall] | None,
               *settings: Mapping[str, Any] | None) -> Case:
    """A ``Case`` from an id, an input, expected calls and settings mappings (later ones win;
    None entries are skipped; keys outside :data:`CASE_KEYS` are ignored; an
    ``expected_calls`` key in a mapping replaces the framework's expected calls). Values
    are validated by ``Case.from_dict``; bad ones raise ``DatasetError`` naming the case."""
    d: dict[str, Any] = {"id": case_id, "input": case_input}
    merged: dict[str, Any] = {}
    for s in settings:
        if not s:
            continue
        if not isinstance(s, Mapping):
            raise DatasetError(f"case {case_id!r}: settings must be a dict, got {type(s).__name__}")
        merged.update({k: v for k, v in s.items() if k in CASE_KEYS and v is not None})
    d.update({k: v for k, v in merged.items() if k != "expected_calls"})
    case = Case.from_dict(d)
    if "expected_calls" in merged:
        exp = tuple(e if isinstance(e, ExpectedCall) else ExpectedCall.from_dict(e)
                    for e in merged["expected_calls"])
    else:
        exp = tuple(expected_calls or ())
    from dataclasses import replace

    return replace(case, expected_calls=exp)


def apply_match(expected: Sequence[ExpectedCall], match: Mapping[str, Any] | None) -> tuple[ExpectedCall, ...]:
    """Attach argument matchers: ``match`` maps a tool name (or ``"*"`` for every tool) to
    ``{argument: matcher spec}``; a call's own ``match`` entries win over these."""
    if not match:
        return tuple(expected)
    from dataclasses import replace

    out = []
    for e in expected:
        m: dict[str, Any] = {}
        for key in ("*", e.name):
            spec = match.get(key)
            if spec is not None:
                if not isinstance(spec, Mapping):
                    raise DatasetError(f"match[{key!r}] must map argument names to matcher specs")
                m.update(spec)
        m.update(e.match)
        out.append(replace(e, match=m) if m else e)
    return tuple(out)


def metadata_settings(metadata: Any) -> dict[str, Any]:
    """The trajcheck settings held in a framework's metadata dict: ``metadata["trajcheck"]``
    when present, else the metadata itself (only :data:`CASE_KEYS` and ``before_state``,
    ``after_state``, ``match``, ``failed_calls`` are read)."""
    if not metadata:
        return {}
    if not isinstance(metadata, Mapping):
        raise DatasetError(f"metadata must be a dict, got {type(metadata).__name__}")
    inner = metadata.get("trajcheck")
    if inner is not None:
        if not isinstance(inner, Mapping):
            raise DatasetError("metadata['trajcheck'] must be a dict")
        return dict(inner)
    return dict(metadata)
