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
* A RAGAS ``ToolCall(name, args)`` becomes ``ToolCall(name, args)``; a reference call
  becomes ``ExpectedCall(name, args)`` (RAGAS requires ``args``; ``{}`` means "no arguments").
* Messages (OpenAI dicts, LangChain message objects or dicts, RAGAS messages): a user
  message is a ``user`` step, an assistant message with calls a ``tool_call`` step (parallel
  calls stay together), a tool message a ``tool_result`` step, and the last assistant text
  is ``final_response``.
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


def deepeval_called(calls: Sequence[Any] | None, *, where: str = "tools_called") -> list[Step]:
    """Steps for a DeepEval ``tools_called`` list: one ``tool_call`` step per call, followed
    by a ``tool_result`` step when the call has an ``output``. Each call gets the id
    ``"<where>[i]"`` so results join their call."""
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
        if out is not None:
            steps.append(Step(index=0, kind="tool_result",
                              tool_result=ToolResult(call_id=cid, name=name, output=out)))
    return steps


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
    ``tools_called`` (see :func:`deepeval_called`), and ``actual_output`` as final response."""
    steps: list[Step] = []
    inp = _get(test_case, "input")
    if inp is not None:
        steps.append(Step(index=0, kind="user", content=str(inp)))
    steps.extend(deepeval_called(_get(test_case, "tools_called")))
    final = _get(test_case, "actual_output")
    if final is not None:
        steps.append(Step(index=0, kind="final_response", content=str(final)))
    return Trajectory(steps=_renumber(steps), final_response=None if final is None else str(final),
                      source_format="deepeval", metadata={"case_id": _get(test_case, "name")})


def deepeval_conversation_trajectory(test_case: Any) -> Trajectory:
    """The trajectory of a DeepEval ``ConversationalTestCase``: user turns as user steps,
    each assistant turn's ``tools_called`` as call (and result) steps, then its content as
    an assistant step; the last assistant content is the final response."""
    steps: list[Step] = []
    final: str | None = None
    for t, turn in enumerate(_get(test_case, "turns") or ()):
        role = _get(turn, "role")
        content = _get(turn, "content")
        if role == "user":
            steps.append(Step(index=0, kind="user", content=content))
            continue
        steps.extend(deepeval_called(_get(turn, "tools_called"), where=f"turns[{t}].tools_called"))
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
            steps.append(Step(index=0, kind="tool_result", tool_result=ToolResult(
                call_id=_get(m, "tool_call_id"), name=_get(m, "name"), output=text,
                is_error=True if status == "error" else (False if status == "success" else None))))
        else:
            raise TraceFormatError(f"messages[{i}]: unknown message role {role!r}")
    if steps and steps[-1].kind == "assistant":
        from dataclasses import replace

        steps[-1] = replace(steps[-1], kind="final_response")
    return Trajectory(steps=_renumber(steps), final_response=final, source_format=source_format)


def ragas_trajectory(user_input: Sequence[Any]) -> Trajectory:
    """The trajectory of a RAGAS ``MultiTurnSample.user_input`` (Human/AI/Tool messages)."""
    return messages_trajectory(user_input, source_format="ragas")


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
    ``after_state``, ``match`` are read)."""
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
