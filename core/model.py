"""The neutral model: one trajectory shape every reader produces and every metric reads.

``ToolCall``, ``ToolResult``, ``Step``, ``Trajectory`` and ``Usage`` describe what an agent
did; ``Case`` and ``ExpectedCall`` describe one dataset row (what it should have done).
All are frozen dataclasses with ``to_dict()`` / ``from_dict()`` that round-trip through JSON.
Field meanings follow ../shared/DESIGN.md ("The neutral model", "The dataset row").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .errors import DatasetError

StepKind = Literal[
    "user", "system", "assistant", "reasoning", "tool_call", "tool_result", "final_response"
]
STEP_KINDS: tuple[str, ...] = (
    "user", "system", "assistant", "reasoning", "tool_call", "tool_result", "final_response",
)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


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
        if self.total_tokens is not None:
            return self.total_tokens
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(*(add(getattr(self, f.name), getattr(other, f.name)) for f in fields(Usage)))

    def to_dict(self) -> dict[str, Any]:
        """The non-None counts as a plain dict."""
        return _drop_none({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Usage:
        """Inverse of ``to_dict``; unknown keys are ignored."""
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


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
        """Inverse of ``to_dict``."""
        return cls(
            name=d["name"],
            args=d.get("args"),
            call_id=d.get("call_id"),
            raw_args=d.get("raw_args"),
            args_parse_error=d.get("args_parse_error"),
            tool_type=d.get("tool_type"),
        )


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
        return cls(
            call_id=d.get("call_id"),
            name=d.get("name"),
            output=d.get("output"),
            is_error=d.get("is_error"),
            error=d.get("error"),
        )


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
        """Inverse of ``to_dict``."""
        return cls(
            index=d["index"],
            kind=d["kind"],
            content=d.get("content"),
            tool_calls=tuple(ToolCall.from_dict(c) for c in d.get("tool_calls") or ()),
            tool_result=ToolResult.from_dict(d["tool_result"]) if d.get("tool_result") else None,
            usage=Usage.from_dict(d["usage"]) if d.get("usage") is not None else None,
            cost_usd=d.get("cost_usd"),
            latency_ms=d.get("latency_ms"),
            model=d.get("model"),
            start_time=d.get("start_time"),
            end_time=d.get("end_time"),
            agent_name=d.get("agent_name"),
            span_id=d.get("span_id"),
            parent_id=d.get("parent_id"),
            metadata=dict(d.get("metadata") or {}),
        )


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
        return cls(
            steps=tuple(Step.from_dict(s) for s in d.get("steps") or ()),
            final_response=d.get("final_response"),
            total_usage=Usage.from_dict(d["total_usage"]) if d.get("total_usage") is not None else None,
            total_cost_usd=d.get("total_cost_usd"),
            total_latency_ms=d.get("total_latency_ms"),
            source_format=d.get("source_format"),
            trace_id=d.get("trace_id"),
            session_id=d.get("session_id"),
            metadata=dict(d.get("metadata") or {}),
        )


# Argument-comparison modes for a whole call (see trajcheck.matching):
#   "exact_keys"    every predicted argument must be expected (or matched/ignored), and vice versa
#   "expected_keys" only the expected arguments are checked; extra predicted arguments are allowed
#   "ignore"        arguments are not compared; the tool name alone decides
ARGS_MODES: tuple[str, ...] = ("exact_keys", "expected_keys", "ignore")


@dataclass(frozen=True)
class ExpectedCall:
    """One call a case expects.

    ``args`` None means no constraint on arguments. ``match`` maps an argument name to a
    matcher spec (a registered name such as ``"normalized"``, or a dict like
    ``{"type": "numeric", "abs_tol": 0.01}``); arguments without an entry use ``exact``.
    ``args_mode`` None means the case's (or the metric's) default.
    """

    name: str
    args: dict[str, Any] | None = None
    match: dict[str, Any] = field(default_factory=dict)
    args_mode: str | None = None

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
        return cls(
            name=d["name"],
            args=dict(d["args"]) if d.get("args") is not None else None,
            match=dict(d.get("match") or {}),
            args_mode=d.get("args_mode"),
        )


_CASE_TUPLE_FIELDS = ("optional_calls", "forbidden_calls", "response_must_include")


@dataclass(frozen=True)
class Case:
    """One dataset row: an input and what a correct run must (and must not) do.

    Every field but ``id`` and ``input`` is optional. ``precedence`` holds ``(A, B)`` pairs
    meaning "A before B". ``forbidden_sequences``, ``faults`` and ``tools`` hold rule,
    fault and tool-definition dicts interpreted by ``metrics.sequences``, ``sandbox`` and
    ``metrics.calls`` respectively. ``threshold`` is the composite pass mark (default 0.80).
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
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The dataset-row form: ``id`` and ``input`` always, other keys when set."""
        d: dict[str, Any] = {"id": self.id, "input": self.input}
        if self.user is not None:
            d["user"] = self.user
        if self.initial_state is not None:
            d["initial_state"] = self.initial_state
        if self.expected_calls:
            d["expected_calls"] = [c.to_dict() for c in self.expected_calls]
        for k in _CASE_TUPLE_FIELDS:
            if getattr(self, k):
                d[k] = list(getattr(self, k))
        if self.precedence:
            d["precedence"] = [list(p) for p in self.precedence]
        if self.expected_final_state is not None:
            d["expected_final_state"] = self.expected_final_state
        for k in ("forbidden_sequences", "faults", "tools"):
            if getattr(self, k):
                d[k] = [dict(x) for x in getattr(self, k)]
        for k in ("max_steps", "optimal_steps", "expected_route", "args_mode", "threshold"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.metadata:
            d["metadata"] = self.metadata
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Case:
        """Build a case from a dataset row; raises ``DatasetError`` naming the missing field.

        Structural validation of whole files (with JSON paths and line numbers) is done by
        ``trajcheck.dataset.load_cases`` against the shipped JSON Schema.
        """
        if not isinstance(d, Mapping):
            raise DatasetError(f"a case must be an object, got {type(d).__name__}")
        for k in ("id", "input"):
            if k not in d:
                raise DatasetError(f"case {d.get('id', '?')!r}: missing required field {k!r}")
        try:
            return cls(
                id=str(d["id"]),
                input=d["input"],
                user=d.get("user"),
                initial_state=d.get("initial_state"),
                expected_calls=tuple(ExpectedCall.from_dict(c) for c in d.get("expected_calls") or ()),
                optional_calls=tuple(d.get("optional_calls") or ()),
                forbidden_calls=tuple(d.get("forbidden_calls") or ()),
                precedence=tuple((str(a), str(b)) for a, b in d.get("precedence") or ()),
                expected_final_state=d.get("expected_final_state"),
                response_must_include=tuple(d.get("response_must_include") or ()),
                max_steps=d.get("max_steps"),
                optimal_steps=d.get("optimal_steps"),
                forbidden_sequences=tuple(dict(x) for x in d.get("forbidden_sequences") or ()),
                faults=tuple(dict(x) for x in d.get("faults") or ()),
                tools=tuple(dict(x) for x in d.get("tools") or ()),
                expected_route=d.get("expected_route"),
                args_mode=d.get("args_mode"),
                threshold=d.get("threshold"),
                metadata=dict(d.get("metadata") or {}),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise DatasetError(f"case {d.get('id')!r}: malformed field ({e})") from e


__all__ = [
    "ARGS_MODES",
    "STEP_KINDS",
    "Case",
    "ExpectedCall",
    "Step",
    "StepKind",
    "ToolCall",
    "ToolResult",
    "Trajectory",
    "Usage",
]
