"""Model turns and tool runs from span-like sources -> steps (OTel, LangSmith, DeepEval traces).

Span sources record a model call (an LLM span / run) and each tool execution (a tool span /
run) apart. A model turn and the tools it led to are one agent turn, so one step:

- every tool run between one model turn and the next belongs to that turn; they become one
  ``tool_call`` step (parallel calls together) carrying the turn's text, usage, cost, model
  and latency, followed by one ``tool_result`` step per run (with the run's own latency).
  Calls are ordered as the model requested them (matched by call id, else by name and
  arguments, else by name), then in start order; a run without a call id takes the id of the
  requested call it matched.
- a model turn followed by no tool run is an ``assistant`` step; when it requested calls that
  no tool run records (sources with model spans only, such as the OpenAI client
  instrumentations), the requested calls are the step's calls, and their results are taken
  from the tool messages in a later turn's input, joined by call id (else by position).
- tool runs before any model turn (sources with tool spans only) are one step when they
  overlap in time under the same parent (run in parallel), else one step each.

The final response is the last assistant step with text that did not request tools.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...model import Step, ToolCall, ToolResult, Usage
from ._util import StepList


@dataclass(slots=True)
class ModelTurn:
    """One model call: its output ``content``, ``requested`` calls (what the model asked for;
    ``requested_any`` is True when it asked for tools even if the calls could not be read),
    the tool results found in its ``input_results`` (tool messages of its prompt), and the step
    fields (usage, cost in USD, model, times in unix seconds, latency in ms, ids)."""

    content: str | None = None
    requested: list[ToolCall] = field(default_factory=list)
    requested_any: bool = False
    input_results: list[ToolResult] = field(default_factory=list)
    usage: Usage | None = None
    cost_usd: float | None = None
    model: str | None = None
    start: float | None = None
    end: float | None = None
    latency_ms: float | None = None
    span_id: str | None = None
    parent_id: str | None = None
    agent_name: str | None = None


@dataclass(slots=True)
class ToolRun:
    """One executed tool: the ``call`` and its ``result`` (None when the source has none), the
    run's times (unix seconds), latency (ms) and ids."""

    call: ToolCall
    result: ToolResult | None = None
    start: float | None = None
    end: float | None = None
    latency_ms: float | None = None
    span_id: str | None = None
    parent_id: str | None = None
    agent_name: str | None = None


def _same_args(a: ToolCall, b: ToolCall) -> bool:
    return a.args is not None and a.args == b.args


class _Requested:
    """The requested calls still free, looked up as ``_pick`` defines, in time linear in the
    calls (a model turn that requested thousands of calls and the thousands of tool runs that
    follow it are paired without scanning the free list per run): the free indices per call id
    and per name, in request order, taken ones dropped as they come to the front."""

    def __init__(self, requested: Sequence[ToolCall]) -> None:
        self.requested = requested
        self.taken = bytearray(len(requested))
        self.by_id: dict[str, deque[int]] = {}
        self.by_name: dict[str, deque[int]] = {}
        for i, q in enumerate(requested):
            if q.call_id is not None:
                self.by_id.setdefault(q.call_id, deque()).append(i)
            self.by_name.setdefault(q.name, deque()).append(i)

    def _front(self, d: deque[int] | None) -> deque[int] | None:
        while d and self.taken[d[0]]:
            d.popleft()
        return d or None

    def pick(self, c: ToolCall) -> int | None:
        """The free requested call that ``c`` executed, now taken: the first (in request
        order) with the same id; else (``c`` has no id) the first with the same name and
        arguments; else the first with the same name. None when there is none."""
        if c.call_id is not None:
            d = self._front(self.by_id.get(c.call_id))
            hit = d[0] if d else None
        else:
            d = self._front(self.by_name.get(c.name))
            hit = None
            if d:
                hit = next((i for i in d if not self.taken[i] and _same_args(self.requested[i], c)), d[0])
        if hit is not None:
            self.taken[hit] = 1
        return hit


def _order(runs: list[ToolRun], requested: Sequence[ToolCall]) -> list[ToolRun]:
    """``runs`` in the order the model requested them; ids adopted from the requested calls."""
    free = _Requested(requested)
    placed: list[tuple[int, int, ToolRun]] = []
    for j, r in enumerate(runs):
        c = r.call
        pick = free.pick(c)
        if pick is None:
            placed.append((len(requested) + j, j, r))
            continue
        q = requested[pick]
        if c.call_id is None and q.call_id is not None:
            r = replace(r, call=replace(c, call_id=q.call_id),
                        result=replace(r.result, call_id=q.call_id) if r.result is not None
                        and r.result.call_id is None else r.result)
        placed.append((pick, j, r))
    return [r for _, _, r in sorted(placed, key=lambda x: (x[0], x[1]))]


@dataclass
class _Span:
    """The time span of a group of tool runs, kept as runs join it so that each overlap test is
    O(1) (a group of n overlapping spans is built in O(n), not O(n^2)): the latest ``end`` so
    far and whether some run has no end."""

    end: float | None = None
    open_end: bool = False

    def join(self, r: ToolRun) -> None:
        if r.end is None:
            self.open_end = True
        elif self.end is None or r.end > self.end:
            self.end = r.end

    def overlaps(self, group: list[ToolRun], r: ToolRun) -> bool:
        """True when ``r`` starts, under the group's parent, before the group's last end (no
        run of the group may be without an end)."""
        if not group or r.start is None or self.open_end or self.end is None:
            return False
        return r.parent_id == group[0].parent_id and r.start < self.end


def build(events: Sequence[ModelTurn | ToolRun], sl: StepList) -> None:
    """Append the steps of ``events`` (model turns and tool runs in execution order) to ``sl``
    by the rules of the module docstring."""
    turn: ModelTurn | None = None
    group: list[ToolRun] = []
    span = _Span()
    open_calls: list[ToolCall] = []  # requested calls with no tool run, awaiting their results

    def flush() -> None:
        nonlocal turn, group
        if group:
            runs = _order(group, turn.requested) if turn is not None else group
            kw: dict[str, Any] = {}
            if turn is not None:
                kw = {"usage": turn.usage, "cost_usd": turn.cost_usd, "model": turn.model,
                      "latency_ms": turn.latency_ms, "start_time": turn.start,
                      "end_time": turn.end, "span_id": turn.span_id, "parent_id": turn.parent_id,
                      "agent_name": turn.agent_name}
            else:
                kw = {"start_time": runs[0].start, "end_time": runs[-1].end,
                      "latency_ms": runs[0].latency_ms if len(runs) == 1 else None,
                      "span_id": runs[0].span_id if len(runs) == 1 else None,
                      "parent_id": runs[0].parent_id, "agent_name": runs[0].agent_name}
            sl.call([r.call for r in runs], content=turn.content if turn is not None else None, **kw)
            for r in runs:
                if r.result is not None:
                    sl.run_result(r.result, r.latency_ms, r.start, r.end, r.span_id, r.parent_id, r.agent_name)
        elif turn is not None:
            kw = {"usage": turn.usage, "cost_usd": turn.cost_usd, "model": turn.model,
                  "latency_ms": turn.latency_ms, "start_time": turn.start, "end_time": turn.end,
                  "span_id": turn.span_id, "parent_id": turn.parent_id, "agent_name": turn.agent_name}
            if turn.requested:
                sl.call(turn.requested, content=turn.content, **kw)
                open_calls.extend(turn.requested)
            else:
                sl.add("assistant", content=turn.content,
                       metadata={"requested_tool_calls": True} if turn.requested_any else {}, **kw)
        turn, group = None, []
        span.end, span.open_end = None, False

    for ev in events:
        if isinstance(ev, ModelTurn):
            flush()
            if open_calls:
                _join_results(ev.input_results, open_calls, sl)
            turn = ev
        else:
            if turn is None and group and not span.overlaps(group, ev):
                flush()
            group.append(ev)
            span.join(ev)
    flush()


def _join_results(results: Sequence[ToolResult], open_calls: list[ToolCall], sl: StepList) -> None:
    """Result steps for the still-open requested calls from a later prompt's tool messages:
    by call id when the calls have ids, else the prompt's last tool messages by position (a
    prompt repeats the whole history, so the newest results come last)."""
    first: dict[str, int] = {}  # call id -> the first open call with it (each id is answered once)
    for i, c in enumerate(open_calls):
        if c.call_id is not None and c.call_id not in first:
            first[c.call_id] = i
    if first:
        taken: set[int] = set()
        for r in results:
            j = first.pop(r.call_id, None) if r.call_id is not None else None
            if j is not None:
                taken.add(j)
                sl.result(replace(r, name=r.name or open_calls[j].name))
        open_calls[:] = [c for i, c in enumerate(open_calls) if i not in taken]
        return
    tail = list(results)[-len(open_calls):] if results else []
    for c, r in zip(list(open_calls), tail):
        open_calls.remove(c)
        sl.result(replace(r, name=r.name or c.name))


def mark_final(steps: list[Step]) -> tuple[tuple[Step, ...], str | None]:
    """Mark the last assistant step with text that requested no tools as the final response."""
    cand = [s for s in steps if s.kind == "assistant" and s.content and not s.metadata.get("requested_tool_calls")]
    if not cand:
        return tuple(steps), None
    last = cand[-1]
    out = list(steps)
    out[last.index] = replace(last, kind="final_response")
    return tuple(out), last.content


__all__ = ["ModelTurn", "ToolRun", "build", "mark_final"]
