"""What pydantic-evals counts as a tool call on a span tree, and trajcheck's pydantic-evals
adapter with it (issue 29, dialects): output functions (``final_result``), output tools, deferred
calls (``ApprovalRequired`` / ``CallDeferred``, ``requires_approval``) and tool names that are
not strings are no calls. The spans come from real pydantic-ai runs (``FunctionModel``, a
private TracerProvider with an in-memory exporter, no global state); pydantic-evals' own
``ToolCorrectness`` / ``TrajectoryMatch`` score them, and trajcheck's ``TrajcheckEvaluator`` with
the ``pydantic_evals`` dialect on the same ``EvaluatorContext`` must give the same verdict."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("pydantic_evals")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from pydantic_ai import (  # noqa: E402
    Agent,
    ApprovalRequired,
    CallDeferred,
    DeferredToolRequests,
    InstrumentationSettings,
    ModelRetry,
)
from pydantic_ai.capabilities.instrumentation import Instrumentation  # noqa: E402
from pydantic_ai.messages import ModelResponse, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_evals.evaluators import EvaluatorContext, ToolCorrectness, TrajectoryMatch  # noqa: E402
from pydantic_evals.otel.span_tree import SpanNode, SpanTree  # noqa: E402

from trajcheck.adapters.pydantic_evals import TrajcheckEvaluator, spans_of, trajectory_of  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402


class Answer(BaseModel):
    city: str
    temp: int


def get_weather(city: str) -> str:
    """Weather of a city."""
    return {"Zürich": "12 °C", "São Paulo": "21 °C"}[city]


def book(day: str) -> str:
    """Book a day."""
    if day == "mon":
        raise ModelRetry("Montag ist voll")
    return f"gebucht: {day}"


def delete_db(table: str) -> str:
    """Needs a human's approval, asked for from inside the tool."""
    raise ApprovalRequired()


def later(job: dict) -> str:
    """Runs elsewhere."""
    raise CallDeferred()


def drop_table(table: str) -> str:
    """Declared as needing approval."""
    return "dropped"


def report(city: str, temp: int) -> str:
    """Report the weather (an output function)."""
    return f"{city}: {temp} °C"


def _run(turns: list[list[Any]], output_type: Any, tools: list[Any],
         approval: tuple[Any, ...] = (), *, version: int | None = None) -> tuple[SpanTree, list[Any]]:
    exp = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exp))

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=turns[sum(1 for m in messages if m.kind == "response")])

    kw = {} if version is None else {"version": version}
    with warnings.catch_warnings():  # version 2 is deprecated, and still what older setups write
        warnings.simplefilter("ignore")
        settings = InstrumentationSettings(tracer_provider=tp, **kw)
    agent = Agent(FunctionModel(script), output_type=output_type, capabilities=[Instrumentation(settings=settings)])
    for t in tools:
        agent.tool_plain(t)
    for t in approval:
        agent.tool_plain(requires_approval=True)(t)
    result = agent.run_sync("Wetter in Zürich und São Paulo?")
    tree = SpanTree()
    tree.add_readable_spans(list(exp.get_finished_spans()))
    return tree, result.all_messages()


def _ctx(tree: SpanTree) -> EvaluatorContext:
    return EvaluatorContext(name="c", inputs={}, metadata=None, expected_output=None, output=None, duration=0.0,
                            _span_tree=tree, attributes={}, metrics={})


W = [ToolCallPart("get_weather", {"city": "Zürich"}, tool_call_id="w1"),
     ToolCallPart("get_weather", {"city": "São Paulo"}, tool_call_id="w2")]
RETRY = [[ToolCallPart("book", {"day": "mon"}, tool_call_id="b1")], [ToolCallPart("book", {"day": "tue"}, tool_call_id="b2")]]
FINAL = [ToolCallPart("final_result", {"city": "Zürich", "temp": 12}, tool_call_id="f1")]

RUNS = {
    # output tool: pydantic-ai writes no span for final_result; the chat span lists it as an output tool
    "output_tool": (lambda v: _run([W, *RETRY, FINAL], Answer, [get_weather, book], version=v),
                    ["get_weather", "get_weather", "book"], '{"city":"Zürich","temp":12}'),
    # output function: an execute_tool final_result span marked 'running output function'
    "output_function": (lambda v: _run([W, *RETRY, FINAL], report, [get_weather, book], version=v),
                        ["get_weather", "get_weather", "book"], "Zürich: 12 °C"),
    # deferred from inside the tools (spans with pydantic_ai.tool.deferral.name) and by declaration (no span)
    "deferred": (lambda v: _run([[*W, ToolCallPart("delete_db", {"table": "users"}, tool_call_id="d1"),
                                  ToolCallPart("later", {"job": {"id": 7, "tags": ["ä"]}}, tool_call_id="l1")]],
                                [str, DeferredToolRequests], [get_weather, delete_db, later], version=v),
                 ["get_weather", "get_weather"], None),
    "approval_alone": (lambda v: _run([W, [ToolCallPart("drop_table", {"table": "users"}, tool_call_id="x1")]],
                                      [str, DeferredToolRequests], [get_weather], approval=(drop_table,), version=v),
                       ["get_weather", "get_weather"], None),
}

# (evaluator of pydantic-evals, trajcheck mode of the pydantic_evals dialect, expected names)
CHECKS = [
    (lambda exp: ToolCorrectness(expected_tools=exp), "ToolCorrectness"),
    (lambda exp: ToolCorrectness(expected_tools=exp, allow_extra=True), "ToolCorrectness(allow_extra=True)"),
    (lambda exp: TrajectoryMatch(expected_trajectory=exp, order="exact"), "TrajectoryMatch(order=exact)"),
    (lambda exp: TrajectoryMatch(expected_trajectory=exp, order="in_order"), "TrajectoryMatch(order=in_order)"),
    (lambda exp: TrajectoryMatch(expected_trajectory=exp, order="any_order"), "TrajectoryMatch(order=any_order)"),
]


def _theirs(ev: Any, ctx: EvaluatorContext) -> float:
    v = ev.evaluate(ctx).value
    return float(v)


def _ours(mode: str, expected: list[str], ctx: EvaluatorContext) -> float:
    ev = TrajcheckEvaluator("trajectory_match", mode=mode, dialect="pydantic_evals", source="span_tree",
                            settings={"expected_calls": expected})
    return float(ev.evaluate(ctx).value)


# pydantic-ai's instrumentation versions: 2 ('running tool' / 'running output function' spans) and
# the current default ('execute_tool <name>', output functions told apart by logfire.msg)
VERSIONS = (2, None)


@pytest.fixture(scope="module")
def all_runs() -> dict[tuple[str, int | None], tuple[SpanTree, list[Any]]]:
    return {(k, v): make(v) for k, (make, _, _) in RUNS.items() for v in VERSIONS}


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"v{v or 'default'}")
def runs(request: pytest.FixtureRequest, all_runs: dict) -> dict[str, tuple[SpanTree, list[Any]]]:
    return {k: all_runs[(k, request.param)] for k in RUNS}


@pytest.fixture(scope="module")
def trees(runs: dict[str, tuple[SpanTree, list[Any]]]) -> dict[str, SpanTree]:
    return {k: v[0] for k, v in runs.items()}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_calls_read_from_the_span_tree(run: str, trees: dict[str, SpanTree]) -> None:
    _, names, answer = RUNS[run]
    t = trajectory_of(_ctx(trees[run]), "span_tree")
    # the failed 'book' attempt was retried: set aside by matching, still a call of the run
    want = [*names[:2], "book", "book"] if "book" in names else names
    assert [c.name for c in t.tool_calls()] == want
    assert t.final_response == answer
    assert "final_result" not in {c.name for c in t.tool_calls()}


def test_deferred_calls_are_kept_in_metadata(trees: dict[str, SpanTree]) -> None:
    t = trajectory_of(_ctx(trees["deferred"]), "span_tree")
    assert [(d["name"], d["call_id"], d["deferral"]) for d in t.metadata["deferred_calls"]] == [
        ("delete_db", "d1", "ApprovalRequired"), ("later", "l1", "CallDeferred")]
    t = trajectory_of(_ctx(trees["approval_alone"]), "span_tree")
    assert [(d["name"], d["call_id"]) for d in t.metadata["deferred_calls"]] == [("drop_table", "x1")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2]


# the expected lists each run is scored against: the run's own calls, and with the excluded one added
def _expectations(run: str) -> list[list[str]]:
    names = RUNS[run][1]
    extra = {"output_tool": "final_result", "output_function": "final_result", "deferred": "delete_db",
             "approval_alone": "drop_table"}[run]
    return [names, [*names, extra], names[:1]]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_trajcheck_gives_pydantic_evals_verdicts(run: str, trees: dict[str, SpanTree]) -> None:
    ctx = _ctx(trees[run])
    n = 0
    for expected in _expectations(run):
        for make, mode in CHECKS:
            theirs = _theirs(make(expected), ctx)
            assert _ours(mode, expected, ctx) == pytest.approx(theirs), (run, mode, expected, theirs)
            n += 1
    assert n == 15
    # the run's own calls pass every check in both; the excluded call expected fails ToolCorrectness
    assert _theirs(ToolCorrectness(expected_tools=_expectations(run)[1]), ctx) == 0.0


def _hand_tree(nodes: list[SpanNode]) -> SpanTree:
    tree = SpanTree()
    tree.add_spans(nodes)
    return tree


def _node(i: int, name: str, attrs: dict[str, Any]) -> SpanNode:
    from datetime import datetime, timedelta, timezone

    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=2 * i)
    return SpanNode(name=name, trace_id=1, span_id=i + 1, parent_span_id=None, start_timestamp=t0,
                    end_timestamp=t0 + timedelta(seconds=1), status="unset", attributes=attrs)


SEARCH = {"gen_ai.tool.name": "search", "gen_ai.tool.call.arguments": "{}"}


def test_a_tool_name_that_is_not_a_string_is_no_call() -> None:
    # pydantic-ai cannot write one; pydantic-evals' own test builds the span by hand, as here
    ctx = _ctx(_hand_tree([_node(0, "running tool", {"gen_ai.tool.name": 123, "logfire.msg": "running tool: 123"}),
                           _node(1, "execute_tool search", SEARCH)]))
    for expected in (["search"], ["search", "123"]):
        for make, mode in CHECKS:
            assert _ours(mode, expected, ctx) == _theirs(make(expected), ctx), (mode, expected)
    res = load(spans_of(ctx.span_tree), "otel")
    assert [c.name for c in res[0].tool_calls()] == ["search"]
    assert any("tool name is not a string (int 123)" in p for p in res[0].metadata["problems"])


def test_a_v2_output_function_span_without_logfire_msg_is_no_call() -> None:
    ctx = _ctx(_hand_tree([_node(0, "running output function", {"gen_ai.tool.name": "format_answer"}),
                           _node(1, "running tool", {**SEARCH, "logfire.msg": "running tool: search"})]))
    for expected in (["search"], ["format_answer", "search"]):
        for make, mode in CHECKS:
            assert _ours(mode, expected, ctx) == _theirs(make(expected), ctx), (mode, expected)


def test_divergence_a_tool_name_on_a_span_of_another_name_is_a_call() -> None:
    # docs/modes.md, pydantic_evals rows: pydantic-evals counts only pydantic-ai's tool span names
    # ('running tool', 'execute_tool <name>'); trajcheck reads every span carrying gen_ai.tool.name
    # as a tool call (other emitters put it on spans of other names)
    ctx = _ctx(_hand_tree([_node(0, "some_custom_span", {"gen_ai.tool.name": "search"}),
                           _node(1, "execute_tool search", SEARCH)]))
    assert _theirs(ToolCorrectness(expected_tools=["search"]), ctx) == 1.0
    assert _ours("ToolCorrectness", ["search"], ctx) == 0.0


@pytest.mark.parametrize("run", ["output_tool", "output_function"])
def test_the_message_history_leaves_out_the_output_tool_too(run: str, runs: dict) -> None:
    # source="output": the task returns result.all_messages(); pydantic-ai marks the output
    # tool's call only by its return text ("Final result processed.")
    tree, history = runs[run]
    ctx = _ctx(tree)
    ctx.output = history
    t = trajectory_of(ctx, "output")
    assert [c.name for c in t.tool_calls()] == ["get_weather", "get_weather", "book", "book"]
    assert t.final_response == '{"city":"Zürich","temp":12}'
    for expected in _expectations(run):
        for make, mode in CHECKS:
            ev = TrajcheckEvaluator("trajectory_match", mode=mode, dialect="pydantic_evals", source="output",
                                    settings={"expected_calls": expected})
            assert float(ev.evaluate(ctx).value) == _theirs(make(expected), ctx), (mode, expected)


# pydantic-evals' own tests of its tool-span selection (tests/evals/test_agentic_evaluators.py,
# pydantic-ai 2.62), their span shapes rebuilt here: (spans, expected tools, their verdict)
_V2 = {"logfire.msg": "running tool: search", "tool_arguments": "{}", "gen_ai.tool.name": "search"}
PEER_CASES = {
    "ignore_output_function_spans": (
        [_node(0, "running tool", _V2),
         _node(1, "running output function", {"gen_ai.tool.name": "format_answer",
                                              "logfire.msg": "running output function: format_answer"}),
         _node(2, "execute_tool final_answer", {"gen_ai.tool.name": "final_answer",
                                                "logfire.msg": "running output function: final_answer"})],
        ["search"], True),
    "ignore_deferred_tool_calls": (
        [_node(0, "running tool", _V2),
         _node(1, "execute_tool delete_account", {"gen_ai.tool.name": "delete_account",
                                                  "logfire.msg": "running tool: delete_account",
                                                  "gen_ai.tool.call.arguments": "{}",
                                                  "pydantic_ai.tool.deferral.name": "ApprovalRequired"})],
        ["search"], True),
    "deferred_call_does_not_satisfy_its_expectation": (
        None, ["search", "delete_account"], False),
    "skip_non_string_tool_name": (
        [_node(0, "running tool", {"gen_ai.tool.name": 123, "logfire.msg": "running tool: 123"})], [], True),
    "v2_output_function_with_no_logfire_msg": (
        [_node(0, "running output function", {"gen_ai.tool.name": "format_answer"}),
         _node(1, "running tool", _V2)], ["search"], True),
}


@pytest.mark.parametrize("case", sorted(PEER_CASES))
def test_pydantic_evals_own_selection_verdicts(case: str) -> None:
    spans, expected, verdict = PEER_CASES[case]
    if spans is None:
        spans = PEER_CASES["ignore_deferred_tool_calls"][0]
    ctx = _ctx(_hand_tree(spans))
    assert ToolCorrectness(expected_tools=expected).evaluate(ctx).value is verdict
    assert _ours("ToolCorrectness", expected, ctx) == float(verdict)
