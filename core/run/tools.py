"""A tool registry that validates, executes and records an agent's tool calls.

``ToolRegistry`` holds tools: Python callables with a JSON Schema for their parameters.
``registry.bind(sandbox, case=case, trial=t)`` gives a ``BoundTools`` for one trial: the
agent calls ``tools.call(name, args)`` (or ``await tools.acall(name, args)``) and gets a
``ToolResult`` back. Every call goes through the same pipeline:

1. the tool name is looked up (unknown name -> error result listing the known tools);
2. the arguments are parsed when given as a JSON string (unparseable -> error result, and the
   recorded ``ToolCall`` keeps ``args=None``, the raw text and the parse error);
3. the arguments are validated against the tool's JSON Schema (Draft 2020-12, ``jsonschema``
   imported lazily) BEFORE the tool runs; an invalid call returns an error result listing
   every problem with its JSON path, and the tool is not run (so it does not consume a
   fault either: faults model the service, validation the client);
4. the case's ``faults`` (``trajcheck.run.faults.apply_faults``, fresh counters per trial) may
   fire instead of the tool;
5. the tool runs against the trial's sandbox; a raising tool becomes an error result
   (``trajcheck.run.sandbox.call_tool`` semantics: ``error = "<Type>: <message>"`` or the
   injected fault's own message, ``output`` the fault's payload);
6. the call and its result are recorded as two steps (``tool_call`` then ``tool_result``,
   with ``latency_ms``) of the trial's ``Trajectory``.

Tool callables receive their arguments by keyword. A tool that declares a parameter named
``ctx`` also receives a ``ToolContext`` (the trial's sandbox, case, trial number and user);
``ctx`` is never part of the tool's parameter schema.

Definitions are accepted in the three common forms (``register(fn, definition)``):

- OpenAI: ``{"type": "function", "function": {"name", "description", "parameters"}}``
- Anthropic: ``{"name", "description", "input_schema"}``
- plain: ``{"name", "description", "parameters"}``, or a bare parameters schema
  ``{"type": "object", "properties": ...}``

With no definition, a schema is inferred from the signature's annotations (str -> string,
int -> integer, float -> number, bool -> boolean, list -> array, dict -> object; parameters
without a default are required; no extra properties allowed). Source: seed 000 §3.2
(validate tool arguments against the same JSON Schema the model is given) and DESIGN.md
("sandbox": fault injection).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import json
import threading
import time
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError, SchemaError
from ..model import Step, ToolCall, ToolResult, Trajectory, Usage

__all__ = [
    "AgentTools",
    "BoundTools",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "normalize_definition",
]

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                               list: "array", tuple: "array", dict: "object"}


@dataclass(frozen=True)
class ToolContext:
    """What a tool that declares a ``ctx`` parameter receives: the trial's ``sandbox`` (an
    open ``SQLiteSandbox``/``SQLAlchemySandbox`` or None), its ``case`` (a ``Case`` or None),
    the 0-based ``trial`` number and the case's ``user`` dict (None when absent)."""

    sandbox: Any = None
    case: Any = None
    trial: int = 0
    user: dict[str, Any] | None = None


@dataclass(frozen=True)
class Tool:
    """One registered tool: ``name``, the callable ``fn``, ``description``, ``parameters``
    (a JSON Schema object), whether ``fn`` takes a ``ctx`` keyword, and whether it is async."""

    name: str
    fn: Callable[..., Any]
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    takes_context: bool = False
    is_async: bool = False

    def definition(self, format: str = "openai") -> dict[str, Any]:
        """This tool's definition as ``openai`` (Chat Completions ``tools`` entry),
        ``anthropic`` (Messages ``tools`` entry) or ``plain`` ({name, description,
        parameters}). Raises SchemaError for another format name."""
        if format == "openai":
            return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                     "parameters": self.parameters}}
        if format == "anthropic":
            return {"name": self.name, "description": self.description, "input_schema": self.parameters}
        if format == "plain":
            return {"name": self.name, "description": self.description, "parameters": self.parameters}
        raise SchemaError(f"unknown definition format {format!r}; use openai, anthropic or plain")


def normalize_definition(defn: Mapping[str, Any]) -> tuple[str | None, str, dict[str, Any]]:
    """``(name, description, parameters schema)`` from an OpenAI, Anthropic or plain tool
    definition, or from a bare parameters schema (then name is None).

    Raises SchemaError when ``defn`` is none of those shapes.
    """
    if not isinstance(defn, Mapping):
        raise SchemaError(f"a tool definition must be an object, got {type(defn).__name__}")
    fn = defn.get("function")
    if isinstance(fn, Mapping):  # OpenAI
        return fn.get("name"), str(fn.get("description") or ""), dict(fn.get("parameters") or
                                                                     {"type": "object", "properties": {}})
    if "input_schema" in defn:  # Anthropic
        return defn.get("name"), str(defn.get("description") or ""), dict(defn["input_schema"] or {})
    if "parameters" in defn and ("name" in defn or "description" in defn):  # plain
        return defn.get("name"), str(defn.get("description") or ""), dict(defn["parameters"] or {})
    if defn.get("type") == "object" or "properties" in defn:  # bare parameters schema
        return None, "", dict(defn)
    raise SchemaError("unrecognised tool definition: expected an OpenAI {type: function, function: {...}}, "
                      "an Anthropic {name, input_schema}, a plain {name, parameters} object, or a "
                      f"parameters schema; got keys {sorted(defn)}")


def _infer_schema(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    """A parameters schema from ``fn``'s signature (see the module doc)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise SchemaError(f"tool {name!r}: cannot read the signature ({e}); give a schema") from e
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in sig.parameters.values():
        if p.name == "ctx" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        h = hints.get(p.name, p.annotation)
        origin = typing.get_origin(h) or h
        t = _JSON_TYPES.get(origin)
        props[p.name] = {"type": t} if t else {}
        if p.default is p.empty:
            required.append(p.name)
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _takes_ctx(fn: Callable[..., Any]) -> bool:
    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _is_async(fn: Callable[..., Any]) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(fn) or (call is not None and inspect.iscoroutinefunction(call))


class ToolRegistry:
    """A set of tools, bound to a sandbox per trial with ``bind``.

    ``ToolRegistry(tools)`` accepts ``Tool`` objects or ``(fn, definition)`` pairs; more
    with ``register``. Tool names are unique (registering a name twice raises SchemaError).
    Each parameters schema is checked against the Draft 2020-12 meta-schema at registration
    (SchemaError naming the tool when invalid).
    """

    def __init__(self, tools: Sequence[Tool | tuple[Callable[..., Any], Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if isinstance(t, Tool):
                self.add(t)
            else:
                self.register(t[0], t[1])

    def add(self, tool: Tool) -> Tool:
        """Add a ready ``Tool`` (its schema is checked); returns it."""
        if tool.name in self._tools:
            raise SchemaError(f"tool {tool.name!r} is registered twice")
        _check_schema(tool.name, tool.parameters)
        self._tools[tool.name] = tool
        return tool

    def register(self, fn: Callable[..., Any] | None = None, definition: Mapping[str, Any] | None = None,
                 *, name: str | None = None, description: str | None = None) -> Any:
        """Register ``fn`` with an optional ``definition`` (OpenAI, Anthropic, plain, or a bare
        parameters schema; inferred from the signature when None). ``name`` defaults to the
        definition's name, else ``fn.__name__``; ``description`` to the definition's, else
        the first line of ``fn``'s docstring. Used bare (``@reg.register``) or with keywords
        (``@reg.register(definition=..., name=...)``) as a decorator, it returns ``fn``
        unchanged; called with ``fn`` it returns the ``Tool``.
        Raises SchemaError for a malformed definition, an invalid schema or a duplicate name.
        """
        if fn is None:
            def deco(f: Callable[..., Any]) -> Callable[..., Any]:
                self.register(f, definition, name=name, description=description)
                return f
            return deco
        if not callable(fn):
            raise SchemaError(f"tool {name or fn!r}: expected a callable, got {type(fn).__name__}")
        dname: str | None = None
        ddesc = ""
        if definition is not None:
            dname, ddesc, params = normalize_definition(definition)
        nm = name or dname or getattr(fn, "__name__", None)
        if not nm or not isinstance(nm, str):
            raise SchemaError("a tool needs a name (give name= or a definition with a name)")
        if definition is None:
            params = _infer_schema(fn, nm)
        doc = (inspect.getdoc(fn) or "").strip().splitlines()
        desc = description if description is not None else (ddesc or (doc[0] if doc else ""))
        return self.add(Tool(nm, fn, desc, params, _takes_ctx(fn), _is_async(fn)))

    @property
    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool:
        """The tool called ``name``; KeyError when absent."""
        return self._tools[name]

    def definitions(self, format: str = "openai") -> list[dict[str, Any]]:
        """Every tool's definition in ``format`` (``openai``, ``anthropic`` or ``plain``)."""
        return [t.definition(format) for t in self._tools.values()]

    def bind(self, sandbox: Any = None, *, case: Any = None, trial: int = 0,
             faults: Sequence[Mapping[str, Any]] | None = None) -> BoundTools:
        """A ``BoundTools`` for one trial: tools see ``sandbox`` through their ``ctx``,
        ``faults`` (default ``case.faults``) are applied with fresh counters for ``trial``
        (``trajcheck.run.faults.apply_faults``; a spec naming an unknown tool raises
        DatasetError naming the case), and every call is recorded.
        """
        return BoundTools(self, sandbox=sandbox, case=case, trial=trial, faults=faults)


def _check_schema(name: str, schema: Any) -> None:
    if not isinstance(schema, Mapping):
        raise SchemaError(f"tool {name!r}: parameters schema must be an object, got {type(schema).__name__}")
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise SchemaError(f"tool {name!r}: invalid parameters schema at {where}: {e.message}") from e


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema_json))


def _json_path(parts: Sequence[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def validation_problems(schema: Mapping[str, Any], args: Any) -> list[str]:
    """Every way ``args`` breaks ``schema`` (Draft 2020-12), as ``"$.path: message"`` strings
    sorted by path; empty when valid."""
    v = _validator(json.dumps(schema, sort_keys=True, default=str))
    errs = sorted(v.iter_errors(args), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [f"{_json_path(list(e.absolute_path))}: {e.message}" for e in errs]


def _error_result(e: BaseException, call_id: str, name: str) -> ToolResult:
    payload = getattr(e, "payload", None)
    text = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
    return ToolResult(call_id=call_id, name=name, output=payload, is_error=True, error=str(text))


class BoundTools:
    """The registry bound to one trial: what an agent receives as ``tools``.

    ``call(name, args)`` / ``await acall(name, args)`` run a tool through the pipeline in
    the module doc and return its ``ToolResult`` (``output``, ``is_error``, ``error``);
    arguments may be a dict, a JSON string, or keywords. ``say(text)`` records an
    intermediate assistant message (e.g. a question to the user). ``definitions(format)``
    lists the tools for a model API; ``user``, ``case_id``, ``trial``, ``sandbox`` describe
    the trial. ``trajectory(final_response)`` builds the recorded ``Trajectory``.

    After ``cancel(reason)`` (the runner's timeout) every further call raises AgentError,
    so an agent that keeps calling tools stops promptly.
    """

    def __init__(self, registry: ToolRegistry, *, sandbox: Any = None, case: Any = None,
                 trial: int = 0, faults: Sequence[Mapping[str, Any]] | None = None) -> None:
        from .faults import apply_faults

        self.registry = registry
        self.sandbox = sandbox
        self.case = case
        self.trial = trial
        self.case_id: str | None = getattr(case, "id", None)
        self.user: dict[str, Any] | None = getattr(case, "user", None)
        self.ctx = ToolContext(sandbox=sandbox, case=case, trial=trial, user=self.user)
        fs = faults if faults is not None else tuple(getattr(case, "faults", ()) or ())
        fns: dict[str, Callable[..., Any]] = {}
        for t in registry._tools.values():
            fns[t.name] = functools.partial(t.fn, ctx=self.ctx) if t.takes_context else t.fn
        self._fns = apply_faults(fns, fs, trial=trial, case_id=self.case_id,
                                 tool_defs=registry.definitions("plain")) if fs else fns
        self._steps: list[Step] = []
        self._lock = threading.Lock()
        self._n = 0
        self._cancelled: str | None = None
        user_text = getattr(case, "input", None)
        if user_text is not None:
            content = user_text if isinstance(user_text, str) else json.dumps(user_text, default=str)
            self._steps.append(Step(index=0, kind="user", content=content))

    # -- bookkeeping
    def _append(self, step_kind: str, **kw: Any) -> None:
        with self._lock:
            self._steps.append(Step(index=len(self._steps), kind=step_kind, **kw))

    def cancel(self, reason: str) -> None:
        """Stop the trial: further calls raise AgentError(reason)."""
        self._cancelled = reason

    @property
    def steps(self) -> list[Step]:
        """A copy of the steps recorded so far."""
        with self._lock:
            return list(self._steps)

    @property
    def n_calls(self) -> int:
        """Number of tool calls made so far."""
        return self._n

    def definitions(self, format: str = "openai") -> list[dict[str, Any]]:
        """The bound tools' definitions (see ``ToolRegistry.definitions``)."""
        return self.registry.definitions(format)

    def say(self, text: str) -> None:
        """Record an intermediate assistant message (not the final response)."""
        self._append("assistant", content=str(text))

    # -- the call pipeline
    def _prepare(self, name: str, args: Any, kwargs: Mapping[str, Any]) -> tuple[ToolCall, Tool | ToolResult]:
        if self._cancelled is not None:
            raise AgentError(f"run cancelled: {self._cancelled}")
        with self._lock:
            self._n += 1
            call_id = f"call_{self._n}"
        raw: str | None = None
        parse_err: str | None = None
        if isinstance(args, (str, bytes)):
            raw = args.decode() if isinstance(args, bytes) else args
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as e:
                parse_err = f"arguments are not valid JSON: {e}"
                args = None
            if args is not None and not isinstance(args, dict):
                parse_err = f"arguments must be a JSON object, got {type(args).__name__}"
                args = None
        elif args is None:
            args = {}
        elif isinstance(args, Mapping):
            args = dict(args)
        else:
            parse_err = f"arguments must be an object, got {type(args).__name__}"
            args = None
        if kwargs and args is not None:
            args = {**args, **kwargs}
        if args is not None:  # the record must not change when the caller later mutates its dict
            args = _private_copy(args)
        call = ToolCall(name=str(name), args=args, call_id=call_id, raw_args=raw, args_parse_error=parse_err)
        self._append("tool_call", tool_calls=(call,))
        tool = self.registry._tools.get(str(name))
        if tool is None:
            known = ", ".join(self.registry.names) or "(none)"
            return call, ToolResult(call_id, str(name), None, True,
                                    f"unknown tool {name!r}; available tools: {known}")
        if args is None:
            return call, ToolResult(call_id, tool.name, None, True, f"invalid arguments for {tool.name}: "
                                    f"{parse_err}")
        problems = validation_problems(tool.parameters, args)
        if problems:
            return call, ToolResult(call_id, tool.name, {"validation_errors": problems}, True,
                                    f"invalid arguments for {tool.name}: " + "; ".join(problems))
        return call, tool

    def _begin(self, name: str, args: Any, kwargs: Mapping[str, Any]) -> tuple[float, ToolCall, Tool | ToolResult]:
        """Start a call (shared by ``call`` and ``acall``): record it and return the start time,
        the call and the Tool to run -- or, when it cannot run (unknown tool, unreadable or
        invalid arguments), its error result, already recorded."""
        t0 = time.perf_counter()
        call, target = self._prepare(name, args, kwargs)
        if isinstance(target, ToolResult):
            return t0, call, self._finish(target, t0)
        return t0, call, target

    def _end(self, t0: float, call: ToolCall, tool: Tool, out: Any = None,
             error: Exception | None = None) -> ToolResult:
        """Record the outcome of running ``tool`` (shared by ``call`` and ``acall``): its
        output, or, when it raised ``error``, the error result after the sandbox's open
        transaction is rolled back."""
        if error is not None:
            self._rollback()
            return self._finish(_error_result(error, call.call_id or "", tool.name), t0)
        return self._finish(ToolResult(call.call_id, tool.name, out, False), t0)

    def _finish(self, result: ToolResult, t0: float) -> ToolResult:
        self._append("tool_result", tool_result=result, latency_ms=(time.perf_counter() - t0) * 1000.0)
        return result

    def _rollback(self) -> None:
        rb = getattr(self.sandbox, "_rollback", None)
        if callable(rb):
            try:
                rb()
            except Exception:
                pass

    def call(self, name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any) -> ToolResult:
        """Call tool ``name`` synchronously; returns its ``ToolResult`` (never raises for a
        tool's own failure). An async tool is run to completion with ``asyncio.run`` (so
        use ``acall`` from async code). Raises AgentError only after ``cancel``."""
        t0, call, tool = self._begin(name, args, kwargs)
        if isinstance(tool, ToolResult):
            return tool
        fn = self._fns[tool.name]
        try:
            out = fn(**(call.args or {}))
            if inspect.isawaitable(out):
                out = asyncio.run(_await(out))
        except Exception as e:
            return self._end(t0, call, tool, error=e)
        return self._end(t0, call, tool, out)

    async def acall(self, name: str, args: Mapping[str, Any] | str | None = None,
                    **kwargs: Any) -> ToolResult:
        """Async ``call``: async tools are awaited, sync tools run inline (in the trial's
        thread, which owns the sandbox's connection)."""
        t0, call, tool = self._begin(name, args, kwargs)
        if isinstance(tool, ToolResult):
            return tool
        fn = self._fns[tool.name]
        try:
            out = fn(**(call.args or {}))
            if inspect.isawaitable(out):
                out = await out
        except Exception as e:
            return self._end(t0, call, tool, error=e)
        return self._end(t0, call, tool, out)

    # -- the record
    def trajectory(self, final_response: str | None = None, *, usage: Usage | None = None,
                   cost_usd: float | None = None, latency_ms: float | None = None,
                   metadata: Mapping[str, Any] | None = None) -> Trajectory:
        """The trial's ``Trajectory``: the user step, every recorded call/result/message, and a
        ``final_response`` step when ``final_response`` is given."""
        steps = self.steps
        if final_response is not None:
            steps.append(Step(index=len(steps), kind="final_response", content=final_response))
        return Trajectory(steps=tuple(steps), final_response=final_response, total_usage=usage,
                          total_cost_usd=cost_usd, total_latency_ms=latency_ms,
                          source_format="trajcheck", metadata=dict(metadata or {}))


async def _await(x: Any) -> Any:
    return await x


def _private_copy(v: Any) -> Any:
    """A deep copy of ``v`` (``v`` itself when it cannot be copied)."""
    try:
        return copy.deepcopy(v)
    except Exception:
        return v


class AgentTools:
    """What an agent under test receives as ``tools`` (README "Security model").

    Only the agent's side of the registry: ``call(name, args)``, ``await acall(name, args)``,
    ``say(text)``, ``definitions(format)``, ``n_calls``, and copies of the trial's ``user``
    context, ``case_id`` and ``trial``. Not the case (its expected calls and final state),
    not the sandbox, not the record: every argument the agent passes and every result it
    gets back is a private copy, so what the registry recorded cannot be changed after the
    fact. (An agent in the same Python process can still reach anything by introspection;
    these walls keep the grader out of reach of an agent that uses the tools it is given.)
    """

    __slots__ = ("_bound", "user", "case_id", "trial")

    def __init__(self, bound: BoundTools) -> None:
        self._bound = bound
        self.user: dict[str, Any] | None = _private_copy(bound.user)
        self.case_id: str | None = bound.case_id
        self.trial: int = bound.trial

    def call(self, name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any) -> ToolResult:
        """Run tool ``name`` (see ``BoundTools.call``); returns a copy of its ``ToolResult``."""
        return _private_copy(self._bound.call(name, _private_copy(args), **_private_copy(kwargs)))

    async def acall(self, name: str, args: Mapping[str, Any] | str | None = None,
                    **kwargs: Any) -> ToolResult:
        """Async ``call`` (see ``BoundTools.acall``); returns a copy of the ``ToolResult``."""
        r = await self._bound.acall(name, _private_copy(args), **_private_copy(kwargs))
        return _private_copy(r)  # type: ignore[no-any-return]

    def say(self, text: str) -> None:
        """Record an intermediate assistant message (not the final response)."""
        from ..read.limits import clean_text, scrub

        self._bound.say(clean_text(str.__str__(text)) if isinstance(text, str) else str(scrub(text)))

    def definitions(self, format: str = "openai") -> list[dict[str, Any]]:
        """Copies of the tools' definitions (``openai``, ``anthropic`` or ``plain``)."""
        return _private_copy(self._bound.definitions(format))  # type: ignore[no-any-return]

    @property
    def n_calls(self) -> int:
        """Number of tool calls made so far."""
        return self._bound.n_calls
