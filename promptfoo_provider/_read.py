"""Private helpers shared by ``assertion.py`` and ``provider.py``: promptfoo values -> trajcheck.

Only translation lives here (no scoring): an agent's output as promptfoo hands it over is
turned into a ``Trajectory`` by trajcheck's own trace readers, and an expectation given in
YAML (assertion ``config`` or test ``vars``) into a ``Case``. Everything here imports only the
standard library plus the few trajcheck modules a given input needs, because promptfoo starts
a new Python process for every assertion call (research notes promptfoo.md §1.1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

# Expectation keys read from the assertion config / test vars and passed into the Case: every
# Case field the host adapters accept (``threshold`` is the assertion's pass mark here).
CASE_KEYS = (
    "expected_calls", "optional_calls", "forbidden_calls", "precedence", "forbidden_sequences",
    "response_must_include", "max_steps", "optimal_steps", "args_mode", "user", "tools",
    "expected_final_state", "expected_route", "initial_state", "faults", "read_only_calls",
    "claim_patterns", "negation_patterns",
)
# Readers the assertion/provider may be told to use explicitly (``format:`` in the config).
READER_MODULES = {
    "openai_chat": "openai_chat", "openai": "openai_chat", "openai_responses": "openai_responses",
    "anthropic": "anthropic", "plain": "plain", "langchain": "langchain", "vertex": "vertex",
    "deepeval": "deepeval", "ragas": "ragas",
}


class InputProblem(Exception):
    """A promptfoo value that cannot be translated; the message is shown to the user as the reason."""


def maybe_json(value: Any, what: str) -> Any:
    """``value`` itself, or ``json.loads(value)`` when it is a string that looks like JSON.

    promptfoo expands array-valued ``vars`` into several tests (notes §0.7), so lists in vars
    are usually written as JSON strings; provider outputs may also arrive as JSON strings
    (notes §1.3). Raises ``InputProblem`` naming ``what`` for a string that starts like JSON
    but does not parse.
    """
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in ("[", "{"):
            try:
                return json.loads(s)
            except json.JSONDecodeError as e:
                raise InputProblem(f"{what}: not valid JSON ({e.msg} at char {e.pos})") from e
    return value


def _is_msg(x: Any) -> bool:
    return isinstance(x, Mapping) and isinstance(x.get("role"), str)


def _is_anthropic_block(x: Any) -> bool:
    return isinstance(x, Mapping) and x.get("type") in ("tool_use", "tool_result", "text", "thinking",
                                                         "server_tool_use", "redacted_thinking")


def _uses_blocks(msgs: Sequence[Any]) -> bool:
    """True when some message's content is a list holding an Anthropic ``tool_use``/``tool_result`` block."""
    for m in msgs:
        c = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(c, list) and any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result")
                                       for b in c):
            return True
    return False


def _reader(fmt: str) -> Any:
    import importlib

    mod = READER_MODULES.get(fmt)
    if mod is None:
        raise InputProblem(f"unknown format {fmt!r}; known: {', '.join(sorted(READER_MODULES))}")
    return importlib.import_module(f"trajcheck.read.traces.{mod}")


def read_output(obj: Any, fmt: str | None = None) -> tuple[Any, str]:
    """Translate one agent output into ``(Trajectory, how)``; ``how`` names the reader used.

    Shapes recognised without a ``fmt`` hint (checked in this order):
      * a serialized trajcheck ``Trajectory`` (a dict with a ``steps`` list);
      * one OpenAI assistant message (``role`` + ``tool_calls`` / ``function_call``), a list of
        OpenAI chat messages, ``{"messages": [...]}`` or a ``ChatCompletion`` (``choices``);
      * one Anthropic message (``role`` + ``content`` blocks with ``tool_use``), a list of Anthropic
        messages or of bare content blocks;
      * a plain list of ``{name, args}`` calls, ``{"tool_calls": [{name, args}], "final_response"?}``,
        or one such call;
      * OpenAI Responses items (``type: function_call`` ...).
    Otherwise ``trajcheck.read.traces.load(obj)`` (auto-detection) is tried when that is available.
    A JSON string is parsed first; any other string is a final response with no tool calls.

    Raises ``InputProblem`` (a clear sentence) when the output has none of these shapes or the
    reader rejects it.
    """
    from trajcheck.errors import TrajcheckError
    from trajcheck.model import Trajectory

    obj = maybe_json(obj, "output")
    try:
        if fmt:
            if fmt == "trajectory":
                return Trajectory.from_dict(obj), "trajectory"
            return _reader(fmt).read(obj), fmt
        if isinstance(obj, str):
            return Trajectory(final_response=obj, source_format="text"), "text (no tool calls)"
        if isinstance(obj, Mapping):
            if isinstance(obj.get("steps"), list):
                return Trajectory.from_dict(obj), "trajectory"
            if _is_msg(obj):
                if isinstance(obj.get("content"), list) and _uses_blocks([obj]):
                    return _reader("anthropic").read(obj), "anthropic"
                return _reader("openai_chat").read([obj]), "openai_chat"
            if "messages" in obj or "choices" in obj:
                msgs = obj.get("messages") or []
                fmt2 = "anthropic" if isinstance(msgs, list) and _uses_blocks(msgs) else "openai_chat"
                return _reader(fmt2).read(obj), fmt2
            if _is_anthropic_block(obj):
                return _reader("anthropic").read({"role": "assistant", "content": [obj]}), "anthropic"
            if obj.get("type") in ("function_call", "function_call_output", "message"):
                return _reader("openai_responses").read([obj]), "openai_responses"
            calls = obj.get("tool_calls", obj.get("calls"))
            if isinstance(calls, list):
                if calls and all(isinstance(c, Mapping) and isinstance(c.get("function"), Mapping)
                                 for c in calls):
                    msg = {"role": "assistant", "content": obj.get("content"), "tool_calls": calls}
                    return _reader("openai_chat").read([msg]), "openai_chat"
                return _with_final(_reader("plain").read(calls), obj.get("final_response")), "plain"
            if isinstance(obj.get("name"), str):
                return _reader("plain").read([obj]), "plain"
        elif isinstance(obj, list):
            if not obj:
                return Trajectory(source_format="plain"), "plain (empty list)"
            if all(_is_msg(m) for m in obj):
                fmt2 = "anthropic" if _uses_blocks(obj) else "openai_chat"
                return _reader(fmt2).read(obj), fmt2
            if all(_is_anthropic_block(b) for b in obj):
                return _reader("anthropic").read({"role": "assistant", "content": obj}), "anthropic"
            if any(isinstance(x, Mapping) and x.get("type") in ("function_call", "function_call_output")
                   for x in obj):
                return _reader("openai_responses").read(obj), "openai_responses"
            if all(isinstance(c, Mapping) and isinstance(c.get("name"), str) for c in obj):
                return _reader("plain").read(obj), "plain"
        try:
            from trajcheck.read.traces import load
        except ImportError:
            load = None
        if load is not None and isinstance(obj, (Mapping, list)):
            res = load(obj)
            trajs = list(res.trajectories)
            if len(trajs) == 1:
                return trajs[0], f"auto ({trajs[0].source_format})"
            raise InputProblem(f"output holds {len(trajs)} trajectories; expected exactly one")
    except TrajcheckError as e:
        raise InputProblem(f"output ({type(obj).__name__}) could not be read as a trace: {e}") from e
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputProblem(f"output ({type(obj).__name__}) could not be read as a trace: "
                           f"{type(e).__name__}: {e}") from e
    raise InputProblem(
        f"output ({type(obj).__name__}) has no tool calls in any known shape (OpenAI tool_calls, "
        "Anthropic tool_use blocks, a {name, args} list, a trajcheck trajectory); "
        "set config.format to name the reader")


def _with_final(traj: Any, final: Any) -> Any:
    """``traj`` ending with ``final`` as its final response (``{"tool_calls": [...],
    "final_response": ...}``, the hosts' plain output shape): without it a run that claims a
    failed call succeeded would read as no claim at all."""
    if final is None:
        return traj
    from dataclasses import replace

    from trajcheck.model import Step

    text = final if isinstance(final, str) else json.dumps(final, default=str)
    return replace(traj, steps=(*traj.steps, Step(len(traj.steps), "final_response", text)),
                   final_response=text)


def build_case(spec: Mapping[str, Any], *, case_id: str, case_input: Any) -> Any:
    """A ``trajcheck.model.Case`` from expectation keys (``CASE_KEYS``) of a config/vars mapping.

    Values may be JSON strings (see ``maybe_json``). ``expected_calls`` items are tool names or
    ``{name, args, match, args_mode}`` objects. Raises ``InputProblem`` naming the key for a
    malformed value (the ``DatasetError`` text from ``Case.from_dict`` is kept).
    """
    from trajcheck.errors import TrajcheckError
    from trajcheck.model import Case

    row: dict[str, Any] = {"id": case_id, "input": case_input}
    for k in CASE_KEYS:
        if k in spec and spec[k] is not None:
            v = maybe_json(spec[k], k)
            if k in ("optional_calls", "forbidden_calls", "read_only_calls",
                     "response_must_include") and isinstance(v, str):
                # promptfoo's own tool assertions take a comma string of names
                v = [p.strip() for p in v.split(",") if p.strip()]
            if k in ("expected_calls", "optional_calls", "forbidden_calls", "precedence",
                     "forbidden_sequences", "response_must_include", "tools",
                     "faults", "read_only_calls", "claim_patterns", "negation_patterns") and not isinstance(v, list):
                raise InputProblem(f"{k}: expected a list, got {type(v).__name__} {v!r}")
            if k == "expected_calls":
                for i, c in enumerate(v):
                    if not (isinstance(c, str) or (isinstance(c, Mapping) and isinstance(c.get("name"), str))):
                        raise InputProblem(f"expected_calls[{i}]: expected a tool name or an object "
                                           f"with a string 'name', got {c!r}")
            row[k] = v
    try:
        return Case.from_dict(row)
    except TrajcheckError as e:
        raise InputProblem(str(e)) from e
