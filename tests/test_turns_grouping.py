"""The grouping of tool runs into steps (``read.traces._turns.build``) against brute force.

``build`` keeps a group's latest end as runs join it (one sweep over the runs in start order)
and pairs runs with a model turn's requested calls through per-id / per-name queues (issue 28:
8,000 overlapping OTel tool spans were grouped in quadratic time). Here, on small random
inputs:

- ``build`` gives exactly the steps of the pairwise definition it replaced: a run joins the
  group when it starts, under the group's parent, before the end of some run of the group
  (every run of the group checked, none without an end), a run takes the first free
  requested call with its id, else with its name and arguments, else with its name, and a
  later prompt's tool message answers the first open call with its id;
- tool spans read from an OTLP document form one ``tool_call`` step per connected component
  of the overlap graph (two spans under one parent overlap when the one read later -- spans
  are read by start, then end -- starts before the other ends), the components found by
  union-find over all pairs;
- ``limits.json_loads`` (the arguments' parser) gives ``json.loads``'s value or error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.model import Step, ToolCall, ToolResult
from trajcheck.read.limits import json_loads
from trajcheck.read.traces import load
from trajcheck.read.traces._turns import ModelTurn, ToolRun, build
from trajcheck.read.traces._util import StepList

# ---------------------------------------------------------------- the pairwise definition


def _overlaps(group: list[ToolRun], r: ToolRun) -> bool:
    if not group or r.start is None or any(g.end is None for g in group):
        return False
    return r.parent_id == group[0].parent_id and any(g.end is not None and r.start < g.end for g in group)


def _pick(c: ToolCall, requested: Sequence[ToolCall], free: list[int]) -> int | None:
    if c.call_id is not None:
        return next((i for i in free if requested[i].call_id == c.call_id), None)
    same = [i for i in free if requested[i].name == c.name]
    hit = next((i for i in same if requested[i].args is not None and requested[i].args == c.args), None)
    return hit if hit is not None else (same[0] if same else None)


def _order(runs: list[ToolRun], requested: Sequence[ToolCall]) -> list[ToolRun]:
    free = list(range(len(requested)))
    placed = []
    for j, r in enumerate(runs):
        c = r.call
        pick = _pick(c, requested, free)
        if pick is None:
            placed.append((len(requested) + j, j, r))
            continue
        free.remove(pick)
        q = requested[pick]
        if c.call_id is None and q.call_id is not None:
            r = replace(r, call=replace(c, call_id=q.call_id),
                        result=replace(r.result, call_id=q.call_id) if r.result is not None
                        and r.result.call_id is None else r.result)
        placed.append((pick, j, r))
    return [r for _, _, r in sorted(placed, key=lambda x: (x[0], x[1]))]


def _join_results(results: Sequence[ToolResult], open_calls: list[ToolCall], sl: StepList) -> None:
    """The open calls' results from a later prompt, scanning the open calls per result."""
    ids = {c.call_id for c in open_calls if c.call_id is not None}
    if ids:
        for r in results:
            if r.call_id in ids:
                c = next(c for c in open_calls if c.call_id == r.call_id)
                open_calls.remove(c)
                ids.discard(r.call_id)
                sl.result(replace(r, name=r.name or c.name))
        return
    tail = list(results)[-len(open_calls):] if results else []
    for c, r in zip(list(open_calls), tail):
        open_calls.remove(c)
        sl.result(replace(r, name=r.name or c.name))


def brute_build(events: Sequence[ModelTurn | ToolRun]) -> list[Step]:
    """``build``'s steps by the definition, every overlap test scanning the whole group."""
    sl = StepList()
    turn: ModelTurn | None = None
    group: list[ToolRun] = []
    open_calls: list[ToolCall] = []

    def flush() -> None:
        nonlocal turn, group
        if group:
            runs = _order(group, turn.requested) if turn is not None else group
            if turn is not None:
                kw: dict[str, Any] = {"usage": turn.usage, "cost_usd": turn.cost_usd, "model": turn.model,
                                      "latency_ms": turn.latency_ms, "start_time": turn.start,
                                      "end_time": turn.end, "span_id": turn.span_id, "parent_id": turn.parent_id,
                                      "agent_name": turn.agent_name}
            else:
                kw = {"start_time": runs[0].start, "end_time": runs[-1].end,
                      "latency_ms": runs[0].latency_ms if len(runs) == 1 else None,
                      "span_id": runs[0].span_id if len(runs) == 1 else None,
                      "parent_id": runs[0].parent_id, "agent_name": runs[0].agent_name}
            sl.add("tool_call", tool_calls=tuple(r.call for r in runs),
                   content=turn.content if turn is not None else None, **kw)
            for r in runs:
                if r.result is not None:
                    sl.add("tool_result", tool_result=r.result, latency_ms=r.latency_ms, start_time=r.start,
                           end_time=r.end, span_id=r.span_id, parent_id=r.parent_id, agent_name=r.agent_name)
        elif turn is not None:
            kw = {"usage": turn.usage, "cost_usd": turn.cost_usd, "model": turn.model,
                  "latency_ms": turn.latency_ms, "start_time": turn.start, "end_time": turn.end,
                  "span_id": turn.span_id, "parent_id": turn.parent_id, "agent_name": turn.agent_name}
            if turn.requested:
                sl.add("tool_call", tool_calls=tuple(turn.requested), content=turn.content, **kw)
                open_calls.extend(turn.requested)
            else:
                sl.add("assistant", content=turn.content,
                       metadata={"requested_tool_calls": True} if turn.requested_any else {}, **kw)
        turn, group = None, []

    for ev in events:
        if isinstance(ev, ModelTurn):
            flush()
            if open_calls:
                _join_results(ev.input_results, open_calls, sl)
            turn = ev
        else:
            if turn is None and group and not _overlaps(group, ev):
                flush()
            group.append(ev)
    flush()
    return sl.steps


# ---------------------------------------------------------------- random events

_names = st.sampled_from(["a", "b", "c"])
_ids = st.one_of(st.none(), st.sampled_from(["c0", "c1", "c2", "c3"]))
_args = st.one_of(st.none(), st.fixed_dictionaries({"x": st.integers(0, 2)}))
_time = st.one_of(st.none(), st.integers(0, 20).map(float))


@st.composite
def _call(draw: Any) -> ToolCall:
    return ToolCall(name=draw(_names), args=draw(_args), call_id=draw(_ids))


@st.composite
def _run(draw: Any) -> ToolRun:
    c = draw(_call())
    start = draw(_time)
    length = draw(st.one_of(st.none(), st.integers(0, 6).map(float)))
    end = start + length if start is not None and length is not None else draw(_time)
    result = None if draw(st.integers(0, 5)) == 0 else ToolResult(call_id=c.call_id, name=c.name, output=draw(
        st.integers(0, 9)), is_error=draw(st.booleans()))
    return ToolRun(call=c, result=result, start=start, end=end, latency_ms=draw(st.one_of(st.none(), st.just(1.0))),
                   span_id=draw(st.sampled_from(["s1", "s2", None])), parent_id=draw(st.sampled_from(["p", "p", "q"])),
                   agent_name=draw(st.sampled_from([None, "ag"])))


@st.composite
def _turn(draw: Any) -> ModelTurn:
    req = draw(st.lists(_call(), max_size=4))
    inputs = draw(st.lists(st.builds(ToolResult, call_id=_ids, name=st.none(), output=st.integers(0, 3)), max_size=3))
    return ModelTurn(content=draw(st.sampled_from([None, "text"])), requested=req, requested_any=bool(req),
                     input_results=inputs, start=draw(_time), model="m")


_events = st.lists(st.one_of(_run(), _run(), _run(), _turn()), max_size=14)


@settings(max_examples=150, deadline=None)
@given(_events)
def test_build_equals_the_pairwise_definition(events: list[ModelTurn | ToolRun]) -> None:
    sl = StepList()
    build(events, sl)
    assert sl.steps == brute_build(events)


def test_build_groups_hand_computed() -> None:
    def run(i: int, start: float | None, end: float | None, parent: str = "p") -> ToolRun:
        return ToolRun(call=ToolCall(name=f"t{i}", args={"i": i}), start=start, end=end, parent_id=parent)

    def sizes(runs: list[ToolRun]) -> list[int]:
        sl = StepList()
        build(runs, sl)
        return [len(s.tool_calls) for s in sl.steps if s.kind == "tool_call"]

    # [0,10) holds 1 and 2 although 2 starts after 1 ends; 3 starts at 10 (no overlap), 4 under another parent
    assert sizes([run(0, 0, 10), run(1, 1, 2), run(2, 5, 6), run(3, 10, 12), run(4, 11, 13, "q")]) == [3, 1, 1]
    # a run with no end closes no group but joins none after it; a run with no start joins none
    assert sizes([run(0, 0, None), run(1, 1, 2), run(2, None, None)]) == [1, 1, 1]
    assert sizes([run(0, 0, 5), run(1, None, 9)]) == [1, 1]


def test_order_pairs_thousands_of_requested_calls() -> None:
    # a model turn that requested 3,000 calls; the runs with ids (odd) executed in reverse
    # order, then those without ids (even) in request order, each taking its call's id
    n = 3000
    req = [ToolCall(name="f", args={"i": i}, call_id=f"id{i}") for i in range(n)]
    ids = [f"id{i}" if i % 2 else None for i in range(n)]
    runs = [ToolRun(call=ToolCall(name="f", args={"i": i}, call_id=ids[i]),
                    result=ToolResult(call_id=ids[i], name="f", output=i))
            for i in [*range(n - 1, 0, -2), *range(0, n, 2)]]
    sl = StepList()
    build([ModelTurn(requested=req, requested_any=True), *runs], sl)
    step = sl.steps[0]
    assert [c.args for c in step.tool_calls] == [{"i": i} for i in range(n)]
    assert [c.call_id for c in step.tool_calls] == [f"id{i}" for i in range(n)]
    assert [s.tool_result.call_id for s in sl.steps[1:] if s.tool_result is not None] == [f"id{i}" for i in range(n)]


# ---------------------------------------------------------------- through the OTel reader


def _components(spans: list[tuple[int, int]]) -> list[int]:
    """Sizes of the connected components of the overlap graph, in order of their first span
    (spans read by start, end, file order): union-find over every pair."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1], i))
    parent = list(range(len(spans)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, i in enumerate(order):
        for j in order[a + 1:]:
            if spans[j][0] < spans[i][1]:  # j, read after i, starts before i ends
                parent[find(j)] = find(i)
    sizes: dict[int, int] = {}
    for i in order:
        sizes[find(i)] = sizes.get(find(i), 0) + 1
    return list(sizes.values())


def _otlp(spans: list[tuple[int, int]]) -> dict[str, Any]:
    def attr(k: str, v: str) -> dict[str, Any]:
        return {"key": k, "value": {"stringValue": v}}

    recs = [{"traceId": "ab" * 16, "spanId": "f" * 16, "name": "invoke_agent", "startTimeUnixNano": "0",
             "endTimeUnixNano": str(10**12), "attributes": [attr("gen_ai.operation.name", "invoke_agent")]}]
    for i, (s, e) in enumerate(spans):
        recs.append({"traceId": "ab" * 16, "spanId": f"{i + 1:016x}", "parentSpanId": "f" * 16,
                     "name": "execute_tool lookup", "startTimeUnixNano": str(1000 + s * 10**6),
                     "endTimeUnixNano": str(1000 + e * 10**6),
                     "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "lookup"),
                                    attr("gen_ai.tool.call.arguments", json.dumps({"i": i, "ü": [s, e]}))]})
    return {"resourceSpans": [{"scopeSpans": [{"spans": recs}]}]}


_interval = st.tuples(st.integers(0, 30), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=100, deadline=None)
@given(st.lists(_interval, min_size=1, max_size=12))
def test_otel_tool_spans_group_by_overlap_components(spans: list[tuple[int, int]]) -> None:
    (t,) = load(_otlp(spans))
    steps = [s for s in t.steps if s.kind == "tool_call"]
    assert [len(s.tool_calls) for s in steps] == _components(spans)
    # every span read once, with its arguments, in start order
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1], i))
    assert [c.args for s in steps for c in s.tool_calls] == [{"i": i, "ü": list(spans[i])} for i in order]


# ---------------------------------------------------------------- the arguments' parser

_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text()),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=5), kids, max_size=4)),
    max_leaves=20)


def _outcome(f: Any, s: str) -> Any:
    try:
        return "value", repr(f(s))
    except (ValueError, RecursionError) as e:
        return "error", type(e).__name__, str(e)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_json_values.map(json.dumps), _json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
                 st.text(alphabet='{}[]",:0123456789.eE+-tnulfalsNI \\ud', max_size=30)))
def test_json_loads_is_json_loads(text: str) -> None:
    assert _outcome(json_loads, text) == _outcome(json.loads, text)


def test_results_of_thousands_of_open_calls_joined_by_id() -> None:
    # a model-only source: one turn requested 3,000 calls, the next prompt holds their results
    # (in reverse order, plus one for an unknown id); each answers the open call with its id
    n = 3000
    req = [ToolCall(name=f"f{i % 7}", args={"i": i}, call_id=f"id{i}") for i in range(n)]
    results = [ToolResult(call_id=f"id{i}", name=None, output=i) for i in reversed(range(n))]
    sl = StepList()
    build([ModelTurn(requested=req, requested_any=True),
           ModelTurn(input_results=[*results, ToolResult(call_id="other", name=None, output=-1)], content="done")], sl)
    got = [s.tool_result for s in sl.steps if s.kind == "tool_result"]
    assert [(r.call_id, r.name, r.output) for r in got] == [(f"id{i}", f"f{i % 7}", i) for i in reversed(range(n))]
    assert [s.kind for s in sl.steps[:1] + sl.steps[-1:]] == ["tool_call", "assistant"]
