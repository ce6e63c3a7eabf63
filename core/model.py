"""The neutral model: one trajectory shape every reader produces and every metric reads.

``ToolCall``, ``ToolResult``, ``Step``, ``Trajectory`` and ``Usage`` describe what an agent
did; ``Case`` and ``ExpectedCall`` describe one dataset row (what it should have done).
All are frozen dataclasses with ``to_dict()`` / ``from_dict()`` that round-trip through JSON.
Field meanings follow ../shared/DESIGN.md ("The neutral model", "The dataset row").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, TypeVar

from .case_fields import (  # noqa: F401  (did_you_mean, check_case_field: imported from here)
    _CASE_READERS,
    _CASE_TUPLE_FIELDS,
    _expected_call,
    _names_of,
    _pairs_of,
    _seq_field,
    _texts_of,
    _unknown_key,
    check_case_field,
    did_you_mean,
)
from .errors import DatasetError
from .metrics.formulas import usage_total
from .score.runmemo import memoized

StepKind = Literal[
    "user", "system", "assistant", "reasoning", "tool_call", "tool_result", "final_response"
]
STEP_KINDS: tuple[str, ...] = (
    "user", "system", "assistant", "reasoning", "tool_call", "tool_result", "final_response",
)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


_T = TypeVar("_T")


def _frozen(cls: type[_T], values: dict[str, Any]) -> _T:
    """``cls(**values)`` for one of this module's frozen dataclasses, where ``values`` holds
    every field in field order, made without the generated ``__init__``.

    That ``__init__`` stores each field through ``object.__setattr__`` one by one, which
    costs about twice as much as setting the instance dict at once; then it calls
    ``__post_init__`` when the class has one, and so does this. The ``from_dict`` methods
    use it only when ``cls`` is the class itself (a subclass goes through its constructor);
    tests/test_fastpaths.py checks that both routes give the same objects and errors."""
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    post = getattr(cls, "__post_init__", None)
    if post is not None:
        post(obj)
    return obj


def _frozen_plain(cls: type[_T], values: dict[str, Any]) -> _T:
    """:func:`_frozen` for a class with no ``__post_init__`` (``ToolCall``, ``ToolResult``,
    ``Step``, ``Usage``): ``values`` (every field, in field order) set as the instance dict,
    without looking the method up (the readers build thousands of these per trace)."""
    obj = _new(cls)
    _set_attr(obj, "__dict__", values)
    return obj


_new = object.__new__
_set_attr = object.__setattr__


def _template(cls: type) -> tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]:
    """``({field: default (None when it has no plain default)}, ((field, default_factory), ...))``
    of a dataclass, in field order: the starting point of :func:`_from_present`."""
    tpl: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for f in fields(cls):
        tpl[f.name] = None if f.default is MISSING else f.default
        if f.default_factory is not MISSING:
            factories.append((f.name, f.default_factory))
    return tpl, tuple(factories)


def _from_present(cls: type[_T], template: tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]],
                  values: dict[str, Any], *, post: bool = True) -> _T:
    """``cls(**values)`` for this module's class ``cls`` (via :func:`_frozen`): the fields in
    ``values`` as given, the others at their defaults (factories called afresh). ``post``
    False skips ``__post_init__``: only for values already in the form it gives them."""
    tpl, factories = template
    d = tpl.copy()
    d.update(values)
    for name, make in factories:
        if name not in values:
            d[name] = make()
    if not post:
        obj = object.__new__(cls)
        object.__setattr__(obj, "__dict__", d)
        return obj
    return _frozen(cls, d)


@dataclass(frozen=True)
class Usage:
    """Token counts of one model call or a whole run; None where the source has no figure.

    ``input_tokens`` includes cache reads and writes (the OpenTelemetry rule; readers add
    Anthropic's separate cache fields), ``output_tokens`` includes reasoning tokens.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None

    @property
    def total(self) -> int | None:
        """``total_tokens`` if given, else input + output, else None when both are unknown."""
        return usage_total(self.total_tokens, self.input_tokens, self.output_tokens)

    def __add__(self, other: Usage) -> Usage:
        """Field-wise sum (None + None stays None). ``total_tokens``: when either side gives
        one, each side counts its ``total`` (its own total, else input + output), so a side
        without a stated total is not dropped from the sum."""
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        out = [add(getattr(self, f.name), getattr(other, f.name)) for f in fields(Usage)]
        if self.total_tokens is not None or other.total_tokens is not None:
            out[2] = (self.total or 0) + (other.total or 0)
        return Usage(*out)

    def to_dict(self) -> dict[str, Any]:
        """The non-None counts as a plain dict."""
        return _drop_none({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Usage:
        """Inverse of ``to_dict``; unknown keys are ignored."""
        get = d.get
        values = {n: get(n) for n in _USAGE_FIELDS}
        return _frozen(cls, values) if cls is Usage else cls(**values)


_USAGE_FIELDS = tuple(f.name for f in fields(Usage))


@dataclass(frozen=True)
class ToolCall:
    """One tool call an agent made.

    ``args`` is the parsed argument object, or None when the source's JSON string did not
    parse to an object (then ``args_parse_error`` says why and ``raw_args`` keeps the text).
    ``tool_type`` is ``function`` (default), ``custom``, ``mcp`` or ``server``.
    """

    name: str
    args: dict[str, Any] | None = field(default_factory=dict)
    call_id: str | None = None
    raw_args: str | None = None
    args_parse_error: str | None = None
    tool_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``args`` is always present (possibly null)."""
        d: dict[str, Any] = {"name": self.name, "args": self.args}
        for k in ("call_id", "raw_args", "args_parse_error", "tool_type"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        """Inverse of ``to_dict``: ``name`` is required (``KeyError`` without it); the other
        keys default to None."""
        name = d["name"]
        get = d.get
        values = {"name": name, "args": get("args"), "call_id": get("call_id"),
                  "raw_args": get("raw_args"), "args_parse_error": get("args_parse_error"),
                  "tool_type": get("tool_type")}
        return _frozen(cls, values) if cls is ToolCall else cls(**values)


@dataclass(frozen=True)
class ToolResult:
    """The result of one tool call.

    ``is_error`` is tri-state: True/False where the source has an error channel, None where
    it has none (OpenAI, RAGAS, DeepEval). ``error`` holds the error text when known.
    """

    call_id: str | None
    name: str | None
    output: Any = None
    is_error: bool | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d: dict[str, Any] = {"call_id": self.call_id, "name": self.name, "output": self.output}
        if self.is_error is not None:
            d["is_error"] = self.is_error
        if self.error is not None:
            d["error"] = self.error
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolResult:
        """Inverse of ``to_dict``."""
        get = d.get
        values = {"call_id": get("call_id"), "name": get("name"), "output": get("output"),
                  "is_error": get("is_error"), "error": get("error")}
        return _frozen(cls, values) if cls is ToolResult else cls(**values)


@dataclass(frozen=True)
class Step:
    """One step of a trajectory.

    Kinds: ``user``, ``system``, ``assistant`` (text mid-run), ``reasoning``, ``tool_call``
    (an assistant turn that calls tools; parallel calls stay together in ``tool_calls``),
    ``tool_result`` (one result in ``tool_result``), ``final_response``.
    ``cost_usd`` is in US dollars, ``latency_ms`` in milliseconds, times in unix seconds.
    """

    index: int
    kind: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_result: ToolResult | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    model: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    agent_name: str | None = None
    span_id: str | None = None
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; empty and None fields are left out."""
        d: dict[str, Any] = {"index": self.index, "kind": self.kind}
        if self.content is not None:
            d["content"] = self.content
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_result is not None:
            d["tool_result"] = self.tool_result.to_dict()
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        for k in ("cost_usd", "latency_ms", "model", "start_time", "end_time",
                  "agent_name", "span_id", "parent_id"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.metadata:
            d["metadata"] = self.metadata
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Step:
        """Inverse of ``to_dict``: ``index`` and ``kind`` are required (``KeyError``)."""
        index, kind = d["index"], d["kind"]
        get = d.get
        values = {
            "index": index,
            "kind": kind,
            "content": get("content"),
            "tool_calls": tuple(ToolCall.from_dict(c) for c in get("tool_calls") or ()),
            "tool_result": ToolResult.from_dict(d["tool_result"]) if get("tool_result") else None,
            "usage": Usage.from_dict(d["usage"]) if get("usage") is not None else None,
            "cost_usd": get("cost_usd"),
            "latency_ms": get("latency_ms"),
            "model": get("model"),
            "start_time": get("start_time"),
            "end_time": get("end_time"),
            "agent_name": get("agent_name"),
            "span_id": get("span_id"),
            "parent_id": get("parent_id"),
            "metadata": dict(get("metadata") or {}),
        }
        return _frozen(cls, values) if cls is Step else cls(**values)


@dataclass(frozen=True)
class Trajectory:
    """Everything one agent run did, in order.

    ``metadata`` keeps source fields with no neutral home; readers record problems they
    tolerated under ``metadata["problems"]`` (a list of strings naming line and field),
    and a run's own id / case id / trial under ``run_id``, ``case_id``, ``trial``.
    """

    steps: tuple[Step, ...] = ()
    final_response: str | None = None
    total_usage: Usage | None = None
    total_cost_usd: float | None = None
    total_latency_ms: float | None = None
    source_format: str | None = None
    trace_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def tool_calls(self) -> list[ToolCall]:
        """All tool calls, flat, in the order they were made."""
        return [c for s in self.steps for c in s.tool_calls]

    def tool_results(self) -> list[ToolResult]:
        """All tool results, in order."""
        return [s.tool_result for s in self.steps if s.tool_result is not None]

    def iter_call_steps(self) -> Iterator[tuple[int, ToolCall]]:
        """``(step_index, call)`` for every call; calls of one parallel step share the index."""
        for i, s in enumerate(self.steps):
            for c in s.tool_calls:
                yield i, c

    def pairs(self) -> list[tuple[ToolCall, ToolResult | None]]:
        """Each call joined to its result: by call id first, then by position.

        A result is joined to the earliest still-unjoined call made before it with the same
        call id; a result without a usable id goes to the earliest unjoined call before it
        with the same tool name, else the earliest unjoined call. Ids reused within one run
        (seen in tau-bench) therefore pair with the next result, as the source intends.
        Results that join no call are left out; calls with no result get None.
        """
        return list(memoized("pairs", (self,), None, self._pairs))

    def _pairs(self) -> list[tuple[ToolCall, ToolResult | None]]:
        calls: list[ToolCall] = []
        joined: list[ToolResult | None] = []
        # Open (unjoined) call indices in order, per id, per name and overall; entries of
        # joined calls are dropped lazily, so the whole join is linear in the run length.
        by_id: dict[str, deque[int]] = {}
        by_name: dict[str, deque[int]] = {}
        open_all: deque[int] = deque()
        open_with_id = 0

        def first_open(q: deque[int] | None) -> int | None:
            while q:
                if joined[q[0]] is None:
                    return q[0]
                q.popleft()
            return None

        for s in self.steps:
            for c in s.tool_calls:
                i = len(calls)
                calls.append(c)
                joined.append(None)
                open_all.append(i)
                by_name.setdefault(c.name, deque()).append(i)
                if c.call_id is not None:
                    by_id.setdefault(c.call_id, deque()).append(i)
                    open_with_id += 1
            r = s.tool_result
            if r is None:
                continue
            pick = None
            if r.call_id is not None:
                pick = first_open(by_id.get(r.call_id))
            if pick is None and (r.call_id is None or open_with_id == 0):
                pick = first_open(by_name.get(r.name)) if r.name else None
                if pick is None:
                    pick = first_open(open_all)
            if pick is not None:
                joined[pick] = r
                if calls[pick].call_id is not None:
                    open_with_id -= 1
        return list(zip(calls, joined))

    @property
    def user_input(self) -> str | None:
        """The text of the first user step, or None."""
        return next((s.content for s in self.steps if s.kind == "user"), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the format ``traces.load`` reads back as ``trajcheck``)."""
        d: dict[str, Any] = {"steps": [s.to_dict() for s in self.steps]}
        if self.final_response is not None:
            d["final_response"] = self.final_response
        if self.total_usage is not None:
            d["total_usage"] = self.total_usage.to_dict()
        for k in ("total_cost_usd", "total_latency_ms", "source_format", "trace_id", "session_id"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.metadata:
            d["metadata"] = self.metadata
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trajectory:
        """Inverse of ``to_dict``."""
        get = d.get
        values: dict[str, Any] = {
            "steps": tuple(Step.from_dict(s) for s in get("steps") or ()),
            "final_response": get("final_response"),
            "total_usage": Usage.from_dict(d["total_usage"]) if get("total_usage") is not None else None,
            "total_cost_usd": get("total_cost_usd"),
            "total_latency_ms": get("total_latency_ms"),
            "source_format": get("source_format"),
            "trace_id": get("trace_id"),
            "session_id": get("session_id"),
            "metadata": dict(get("metadata") or {}),
        }
        return _frozen(cls, values) if cls is Trajectory else cls(**values)


# Argument-comparison modes for a whole call (see trajcheck.match.matching):
#   "exact_keys"    every predicted argument must be expected (or matched/ignored), and vice versa
#   "expected_keys" only the expected arguments are checked; extra predicted arguments are allowed
#   "ignore"        arguments are not compared; the tool name alone decides
ARGS_MODES: tuple[str, ...] = ("exact_keys", "expected_keys", "ignore")

#: The mode used when neither the caller, the expected call nor the case names one. Extra
#: predicted arguments are allowed, as in seed 000 §3.2 (``call_matches(...,
#: ignore_extra_args=True)``); a case or expected call that needs no extras sets
#: ``exact_keys`` (the tau-bench and BFCL readers do so on the cases they build).
DEFAULT_ARGS_MODE: str = "expected_keys"


@dataclass(frozen=True)
class ExpectedCall:
    """One call a case expects.

    ``args`` None means no constraint on arguments. ``match`` maps an argument name to a
    matcher spec (a registered name such as ``"normalized"``, or a dict like
    ``{"type": "numeric", "abs_tol": 0.01}``); arguments without an entry use ``exact``.
    ``args_mode`` None means the case's (or the metric's) default.

    Construction checks (``DatasetError`` naming the field): ``name`` is a non-empty string
    (so a predicted call without a name, read as ``name=""``, never matches), ``args`` is an
    object or None, ``match`` an object, ``args_mode`` one of ``ARGS_MODES`` or None.
    """

    name: str
    args: dict[str, Any] | None = None
    match: dict[str, Any] = field(default_factory=dict)
    args_mode: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DatasetError(f"expected call: field 'name' must be a non-empty string, got {self.name!r}")
        if self.args is not None and type(self.args) is not dict and not isinstance(self.args, Mapping):
            raise DatasetError(f"expected call {self.name!r}: field 'args' must be an object or null, "
                               f"got {type(self.args).__name__}")
        if type(self.match) is not dict and not isinstance(self.match, Mapping):
            raise DatasetError(f"expected call {self.name!r}: field 'match' must be an object, "
                               f"got {type(self.match).__name__}")
        if self.args_mode is not None and self.args_mode not in ARGS_MODES:
            raise DatasetError(f"expected call {self.name!r}: field 'args_mode' is {self.args_mode!r}, "
                               f"not one of {list(ARGS_MODES)}")

    def to_dict(self) -> dict[str, Any]:
        """The dataset-row form: ``name`` always, other keys when set."""
        d: dict[str, Any] = {"name": self.name}
        if self.args is not None:
            d["args"] = self.args
        if self.match:
            d["match"] = self.match
        if self.args_mode is not None:
            d["args_mode"] = self.args_mode
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | str) -> ExpectedCall:
        """Inverse of ``to_dict``; a bare string is a call with no argument constraint."""
        if isinstance(d, str):
            return cls(name=d)
        name = d["name"]
        get = d.get
        args = get("args")
        match = get("match")
        mode = get("args_mode")
        values = {"name": name, "args": dict(args) if args is not None else None,
                  "match": dict(match) if match else {}, "args_mode": mode}
        if cls is not ExpectedCall:
            return cls(**values)
        if (type(name) is str and name and (args is None or type(args) is dict)
                and (mode is None or mode in ARGS_MODES)):
            obj = object.__new__(cls)  # what __post_init__ checks holds: not run
            object.__setattr__(obj, "__dict__", values)
            return obj
        return _frozen(cls, values)


@dataclass(frozen=True)
class Case:
    """One dataset row: an input and what a correct run must (and must not) do.

    Every field but ``id`` and ``input`` is optional. ``precedence`` holds ``(A, B)`` pairs
    meaning "A before B". ``forbidden_sequences``, ``faults`` and ``tools`` hold rule,
    fault and tool-definition dicts interpreted by ``metrics.sequences``, ``sandbox`` and
    ``metrics.calls`` respectively. ``threshold`` is the composite pass mark (default 0.80).

    Construction converts, for convenience (``__post_init__``): ``expected_calls`` items that
    are dicts (``ExpectedCall.to_dict`` form) or bare names become ``ExpectedCall`` objects;
    lists given for the tuple fields become tuples (``precedence`` pairs too). Anything else
    (a bare string where a list is meant, a dict call without ``name`` or with an unknown
    key, a precedence item that is not a pair) raises ``DatasetError`` naming the case and
    the field, e.g. ``case 'c1': expected_calls[0]: missing 'name'``.
    """

    id: str
    input: Any
    user: dict[str, Any] | None = None
    initial_state: str | None = None
    expected_calls: tuple[ExpectedCall, ...] = ()
    optional_calls: tuple[str, ...] = ()
    forbidden_calls: tuple[str, ...] = ()
    precedence: tuple[tuple[str, str], ...] = ()
    expected_final_state: dict[str, Any] | None = None
    response_must_include: tuple[str, ...] = ()
    max_steps: int | None = None
    optimal_steps: int | None = None
    forbidden_sequences: tuple[dict[str, Any], ...] = ()
    faults: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    expected_route: Any = None
    args_mode: str | None = None
    threshold: float | None = None
    read_only_calls: tuple[str, ...] = ()
    claim_patterns: tuple[str, ...] = ()
    negation_patterns: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ec = self.expected_calls
        if type(ec) is not tuple or not all(type(c) is ExpectedCall for c in ec):
            object.__setattr__(self, "expected_calls", tuple(
                _expected_call(c, f"case {self.id!r}: expected_calls[{i}]")
                for i, c in enumerate(_seq_field(ec, self.id, "expected_calls"))))
        for k in ("forbidden_sequences", "faults", "tools"):
            v = getattr(self, k)
            if type(v) is not tuple:
                object.__setattr__(self, k, tuple(_seq_field(v, self.id, k)))
        # list-of-names fields: a bare string or a non-string item is an error naming the
        # field, never split or coerced (seed 000's row shape lists names)
        for k, check in (("optional_calls", _names_of), ("forbidden_calls", _names_of),
                         ("response_must_include", _texts_of), ("precedence", _pairs_of),
                         ("read_only_calls", _names_of), ("claim_patterns", _texts_of),
                         ("negation_patterns", _texts_of)):
            v = getattr(self, k)
            if v:
                try:
                    checked = check(v)
                except TypeError as e:
                    raise DatasetError(f"case {self.id!r}: field {k!r} {e}") from None
                if type(v) is not tuple or k == "precedence":
                    object.__setattr__(self, k, checked)
            elif type(v) is not tuple:
                object.__setattr__(self, k, ())
        if self.read_only_calls or self.tools:
            read_only_tools(self)  # annotations and read_only_calls agree, else DatasetError
        if self.claim_patterns or self.negation_patterns:
            _check_patterns(self)

    def to_dict(self) -> dict[str, Any]:
        """The dataset-row form: ``id`` and ``input`` always, other keys when set."""
        f = self.__dict__
        d: dict[str, Any] = {"id": f["id"], "input": f["input"]}
        if f["user"] is not None:
            d["user"] = f["user"]
        if f["initial_state"] is not None:
            d["initial_state"] = f["initial_state"]
        if f["expected_calls"]:
            d["expected_calls"] = [c.to_dict() for c in f["expected_calls"]]
        for k in _CASE_TUPLE_FIELDS:
            if f[k]:
                d[k] = list(f[k])
        if f["precedence"]:
            d["precedence"] = [list(p) for p in f["precedence"]]
        if f["expected_final_state"] is not None:
            d["expected_final_state"] = f["expected_final_state"]
        for k in ("forbidden_sequences", "faults", "tools"):
            if f[k]:
                d[k] = [dict(x) for x in f[k]]
        for k in ("max_steps", "optimal_steps", "expected_route", "args_mode", "threshold"):
            if f[k] is not None:
                d[k] = f[k]
        if f["metadata"]:
            d["metadata"] = f["metadata"]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Case:
        """Build a case from a dataset row; raises ``DatasetError`` naming the missing field,
        or an unknown key with the closest known one (``'expected_call'`` -> did you mean
        ``'expected_calls'``?), so a typo is never silently dropped.

        Structural validation of whole files (with JSON paths and line numbers) is done by
        ``trajcheck.read.dataset.load_cases`` against the shipped JSON Schema.
        """
        if not isinstance(d, Mapping):
            raise DatasetError(f"a case must be an object, got {type(d).__name__}")
        for k in ("id", "input"):
            if k not in d:
                raise DatasetError(f"case {d.get('id', '?')!r}: missing required field {k!r}")
        if not _CASE_FIELDS.issuperset(d):
            bad = next(k for k in d if k not in _CASE_FIELDS)
            raise DatasetError(f"case {d.get('id')!r}: {_unknown_key(str(bad), _CASE_FIELDS)}")
        values: dict[str, Any] = {}
        key = "id"
        try:
            # Only the keys present are read (in field order, so the first bad field is the
            # one reported); each conversion maps None to the field's default.
            for key, read in _CASE_READERS:
                if key in d:
                    v = d[key]
                    values[key] = v if read is None else read(v)
        except (KeyError, TypeError, ValueError) as e:
            raise DatasetError(f"case {d.get('id')!r}: malformed field {key!r} ({e})") from e
        if cls is Case:  # the readers gave each field the form __post_init__ would: not run again
            case = _from_present(cls, _CASE_TEMPLATE, values, post=False)
            if case.read_only_calls or case.tools:
                read_only_tools(case)  # annotations and read_only_calls agree, else DatasetError
            if case.claim_patterns or case.negation_patterns:
                _check_patterns(case)
            return case
        return cls(**values)


def _check_patterns(case: Case) -> None:
    """Each of the case's ``claim_patterns`` / ``negation_patterns`` compiles on RE2 (regexes
    from data, ``match.safe_regex``); else ``DatasetError`` naming the case, field and item."""
    from .errors import MatcherError
    from .match.safe_regex import compile_pattern

    for k in ("claim_patterns", "negation_patterns"):
        for i, p in enumerate(getattr(case, k)):
            try:
                compile_pattern(p, "i", where=f"{k}[{i}]")
            except MatcherError as e:
                raise DatasetError(f"case {case.id!r}: field {k!r}: {e}") from e


def _tool_name(t: Mapping[str, Any]) -> Any:
    fn = t.get("function")
    return (fn if isinstance(fn, Mapping) else t).get("name")


def read_only_tools(case: Case) -> frozenset[str]:
    """The tools of ``case`` that cannot change state: ``read_only_calls`` and every tool
    definition in ``case.tools`` whose MCP annotations say ``readOnlyHint: true``.

    Only ``readOnlyHint`` declares a tool read-only. MCP's ``destructiveHint: false`` says
    the tool's updates are additive (it still writes, and the hint means something only when
    ``readOnlyHint`` is false), so it declares nothing here; neither do ``idempotentHint``
    and ``openWorldHint``. The annotations are read from the case's own tool definitions
    (the dataset author's, trusted), at the top level of an MCP tool definition
    (``{"name", "inputSchema", "annotations": {...}}``) or beside an OpenAI definition's
    ``function``. Source: the Model Context Protocol specification, ``ToolAnnotations``
    (2025-03-26 and later).

    Args:
        case: the case.

    Returns:
        The tool names, possibly empty.

    Raises:
        DatasetError: naming the case and tool when ``annotations`` is not an object, when
            ``readOnlyHint`` is not a boolean, or when a tool in ``read_only_calls`` is
            defined with ``readOnlyHint: false`` (the case says both).
    """
    out = set(case.read_only_calls)
    for k, t in enumerate(case.tools):
        ann = t.get("annotations") if isinstance(t, Mapping) else None
        if ann is None:
            continue
        name = _tool_name(t)
        where = f"case {case.id!r}: tools[{k}] ({name!r})"
        if not isinstance(ann, Mapping):
            raise DatasetError(f"{where}: 'annotations' must be an object, got {type(ann).__name__}")
        hint = ann.get("readOnlyHint")
        if hint is None:
            continue
        if type(hint) is not bool:
            raise DatasetError(f"{where}: annotations.readOnlyHint must be true or false, got {hint!r}")
        if hint and isinstance(name, str) and name:
            out.add(name)
        elif not hint and name in case.read_only_calls:
            raise DatasetError(f"{where}: read_only_calls names {name!r} but its definition says "
                               "readOnlyHint: false; remove one of the two")
    return frozenset(out)


_CASE_TEMPLATE = _template(Case)
_CASE_FIELDS = frozenset(f.name for f in fields(Case))


__all__ = [
    "ARGS_MODES",
    "DEFAULT_ARGS_MODE",
    "STEP_KINDS",
    "Case",
    "ExpectedCall",
    "Step",
    "StepKind",
    "ToolCall",
    "ToolResult",
    "Trajectory",
    "Usage",
    "read_only_tools",
]
