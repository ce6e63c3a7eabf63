"""metrics.calls: PRF (worked examples), selection, schema validity, argument accuracy,
call correctness, provenance, bad input and speed."""

from __future__ import annotations

import math

import pytest

from trajcheck.errors import MatcherError, MetricInputError, SchemaError
from trajcheck.match.matchers import MatchContext
from trajcheck.metrics.calls import (
    argument_accuracy,
    argument_provenance,
    call_correctness,
    call_exact_correct,
    default_is_id_arg,
    schema_errors,
    selection_accuracy,
    tool_call_prf,
)
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

T = ToolCall


def ticket_case(**kw):
    return Case(id="agent_042", input="Open a new high-priority ticket",
                expected_calls=(ExpectedCall("create_ticket", {"priority": "high"}),),
                optional_calls=("search_docs", "get_ticket"), **kw)


WORKED = [T("search_docs", {"q": "boot"}), T("get_ticket", {"id": "INC-1042"}),
          T("create_ticket", {"priority": "medium"}), T("create_ticket", {"priority": "high"})]


def test_worked_example_prf():
    r = tool_call_prf(WORKED, ticket_case())
    assert (r.precision, r.recall) == (0.5, 1.0)
    assert r.f1 == 2 / 3 == 0.6666666666666666  # full precision, as the seed prints it
    assert (r.tp, r.n_counted, r.n_expected) == (1, 2, 1)
    assert r.score == r.f1 and r.parts["unexpected_calls"] == [2]


def test_vpn_contains_recall_one():
    case = Case(id="v", input="vpn", expected_calls=(
        ExpectedCall("search_docs", {"q": "vpn"}, match={"q": "contains"}),
        ExpectedCall("search_docs", {"q": "vpn mac"}, match={"q": "contains"})))
    r = tool_call_prf([T("search_docs", {"q": "vpn mac"}), T("search_docs", {"q": "vpn"})], case)
    assert r.recall == 1.0 and r.precision == 1.0


def test_prf_empty_rules():
    none = Case(id="n", input="hi")
    r = tool_call_prf([], none)
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)
    r = tool_call_prf([T("search", {})], none)
    assert (r.precision, r.recall, r.f1) == (0.0, 1.0, 0.0)
    r = tool_call_prf([], ticket_case())
    assert (r.precision, r.recall, r.f1) == (0.0, 0.0, 0.0)
    # only optional calls, something expected: no counted call -> precision 0
    r = tool_call_prf([T("search_docs", {})], ticket_case())
    assert (r.precision, r.recall, r.n_counted) == (0.0, 0.0, 0)
    # only optional calls, nothing expected: precision 1
    r = tool_call_prf([T("search_docs", {})], Case(id="o", input="x", optional_calls=("search_docs",)))
    assert (r.precision, r.recall) == (1.0, 1.0)


def test_f1_is_the_float_nearest_the_exact_fraction():
    # 1 call, the 1 match of 9 expected calls: P = 1, R = 1/9, F1 = 2*1/(1+9) = 1/5 exactly;
    # 2PR/(P+R) in floats would give 0.19999999999999998
    case = Case(id="f", input="x", expected_calls=tuple(ExpectedCall(n) for n in "abcdefghi"))
    r = tool_call_prf([T("a", {})], case)
    p, rec = r.precision, r.recall
    assert 2 * p * rec / (p + rec) == 0.19999999999999998
    assert (p, rec, r.f1) == (1.0, 1 / 9, 0.2)
    # 2 of 2 counted calls match, 5 expected: 2*2/(2+5) = 4/7
    r = tool_call_prf([T("a", {}), T("b", {})], Case(id="g", input="x", expected_calls=case.expected_calls[:5]))
    assert (r.tp, r.n_counted, r.n_expected, r.f1) == (2, 2, 5, 4 / 7)


def _traj_with_retry():
    return Trajectory(steps=(
        Step(0, "user", content="book flight AB1 for u_1"),
        Step(1, "tool_call", tool_calls=(T("book", {"flight": "AB1", "seats": "x"}, call_id="1"),)),
        Step(2, "tool_result", tool_result=ToolResult("1", "book", "bad seats", is_error=True)),
        Step(3, "tool_call", tool_calls=(T("book", {"flight": "AB1"}, call_id="2"),)),
        Step(4, "tool_result", tool_result=ToolResult("2", "book", "ok")),
    ))


def test_retries_set_aside():
    case = Case(id="r", input="book", expected_calls=(ExpectedCall("book", {"flight": "AB1"}),))
    r = tool_call_prf(_traj_with_retry(), case)
    assert (r.precision, r.recall, r.n_counted) == (1.0, 1.0, 1)
    assert r.parts["retried_set_aside"] == [0]
    # the same calls as a plain list carry no results: the failed attempt counts
    r2 = tool_call_prf(_traj_with_retry().tool_calls(), case)
    assert (r2.precision, r2.n_counted) == (0.5, 2)


def test_args_mode_precedence():
    case = Case(id="a", input="x", args_mode="expected_keys",
                expected_calls=(ExpectedCall("f", {"a": 1}),))
    assert tool_call_prf([T("f", {"a": 1, "b": 2})], case).recall == 1.0
    assert tool_call_prf([T("f", {"a": 1, "b": 2})], case, args_mode="exact_keys").recall == 0.0
    case2 = Case(id="b", input="x", args_mode="expected_keys",
                 expected_calls=(ExpectedCall("f", {"a": 1}, args_mode="exact_keys"),))
    assert tool_call_prf([T("f", {"a": 1, "b": 2})], case2).recall == 0.0


def test_semantic_match_without_expected_uses_case_input():
    case = Case(id="s", input="My laptop won't boot", expected_calls=(
        ExpectedCall("create_ticket", {"priority": "high"}, match={"title": "semantic"}),))
    ctx = MatchContext(semantic_scorer=lambda a, b: 0.85 if ("laptop" in a.lower() and "laptop" in b.lower()) else 0.2)
    good = tool_call_prf([T("create_ticket", {"priority": "high", "title": "Laptop not booting"})], case, context=ctx)
    bad = tool_call_prf([T("create_ticket", {"priority": "high", "title": "Lunch order"})], case, context=ctx)
    assert good.recall == 1.0 and bad.recall == 0.0
    with pytest.raises(MatcherError, match="semantic_scorer"):
        tool_call_prf([T("create_ticket", {"priority": "high", "title": "x"})], case)


def test_bad_input_clear_errors():
    case = ticket_case()
    with pytest.raises(MetricInputError, match="Trajectory or a list of ToolCall"):
        tool_call_prf(None, case)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="item 1"):
        tool_call_prf([T("a", {}), {"name": "b"}], case)  # type: ignore[list-item]
    with pytest.raises(MetricInputError, match="Case"):
        tool_call_prf([], None)  # type: ignore[arg-type]
    bad = Case(id="b", input="x", expected_calls=(ExpectedCall("f", {"a": 1}, match={"a": "fuzzy"}),))
    with pytest.raises(MatcherError, match="unknown matcher 'fuzzy'"):
        tool_call_prf([T("f", {"a": 1})], bad)


def test_nan_none_unparsed_and_nested_args_scores():
    case = Case(id="n", input="x", expected_calls=(ExpectedCall("f", {"v": math.nan}),))
    r = tool_call_prf([T("f", {"v": math.nan})], case)
    assert (r.precision, r.recall) == (0.0, 0.0)  # NaN never equals anything
    case2 = Case(id="u", input="x", expected_calls=(ExpectedCall("f", None),))
    r = tool_call_prf([T("f", None, raw_args="{oops", args_parse_error="bad json")], case2)
    assert (r.precision, r.recall, r.n_counted) == (0.0, 0.0, 1)  # unparsed still counts
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["k"] = {}
        cur = cur["k"]
    case3 = Case(id="d", input="x", expected_calls=(ExpectedCall("f", {"o": deep}),))
    assert tool_call_prf([T("f", {"o": deep})], case3).f1 == 1.0


def test_ten_thousand_calls_correct():
    exp = tuple(ExpectedCall("f", {"i": i}) for i in range(50))
    case = Case(id="big", input="x", expected_calls=exp)
    pred = [T("f", {"i": i % 100}) for i in range(10_000)]
    r = tool_call_prf(pred, case)
    assert r.tp == 50 and r.recall == 1.0 and r.precision == pytest.approx(50 / 10_000)



def test_selection_accuracy_including_no_tool_and_clarify():
    t_ok = [T("create_ticket", {"priority": "low"}), T("search_docs", {})]
    chit = Case(id="chit", input="thanks!")
    clar = Case(id="clar", input="book it", metadata={"expected_behavior": "clarify"})
    asks = Trajectory(steps=(Step(0, "user", content="book it"),), final_response="Which flight do you mean?")
    tells = Trajectory(steps=(Step(0, "user", content="book it"),), final_response="Done.")
    r = selection_accuracy([(t_ok, ticket_case()), ([], chit), ([T("search_docs", {})], chit),
                            (asks, clar), (tells, clar), ([T("get_ticket", {})], ticket_case())])
    assert [p["correct"] for p in r.parts["per_case"]] == [True, True, False, True, False, False]
    assert r.score == pytest.approx(3 / 6)
    with pytest.raises(MetricInputError):
        selection_accuracy([])
    with pytest.raises(MetricInputError, match="expected_behavior"):
        selection_accuracy([([], Case(id="x", input="x", metadata={"expected_behavior": "maybe"}))])


TOOLS = [
    {"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {"flight": {"type": "string"}, "seats": {"type": "integer", "minimum": 1}},
        "required": ["flight"], "additionalProperties": False}}},
    {"name": "search", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
    {"name": "ping", "parameters": {"type": "object"}},
    {"name": "noschema"},
]


def test_schema_errors_all_forms():
    calls = [T("book", {"flight": "AB1", "seats": 2}), T("book", {"seats": 0}),
             T("search", {"q": "x"}), T("search", {"q": 3}), T("ping", {"any": 1}),
             T("nope", {}), T("book", None, raw_args="{", args_parse_error="Expecting value"),
             T("noschema", {"x": 1})]
    r = schema_errors(calls, TOOLS)
    bad_idx = sorted({e["index"] for e in r.parts["errors"]})
    assert bad_idx == [1, 3, 5, 6]
    assert r.score == pytest.approx(4 / 8) and r.passed is False
    msgs = " | ".join(e["error"] for e in r.parts["errors"])
    assert "'flight' is a required property" in msgs and "seats" in msgs and "unknown tool 'nope'" in msgs
    assert "did not parse: Expecting value" in msgs
    assert schema_errors([], TOOLS).score is None


def test_schema_errors_invalid_tool_schema_names_tool():
    with pytest.raises(SchemaError, match="tool 'bad'"):
        schema_errors([T("bad", {})], [{"name": "bad", "parameters": {"type": "dict"}}])
    with pytest.raises(SchemaError, match="no name"):
        schema_errors([T("bad", {})], [{"parameters": {}}])


def test_argument_accuracy_and_call_correctness():
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("a", {"x": 1}), ExpectedCall("b", {"y": 2}),
                                                   ExpectedCall("c", {})))
    r = argument_accuracy([T("a", {"x": 1}), T("b", {"y": 3})], case)
    assert r.score == 0.5 and r.parts["selected"] == 2
    assert argument_accuracy([T("z", {})], case).score is None
    assert call_correctness([T("a", {"x": 1}), T("b", {"y": 2}), T("c", {})], case).score == 1.0
    assert call_correctness([T("c", {}), T("b", {"y": 2}), T("a", {"x": 1})], case).score == 1.0
    assert call_correctness([T("a", {"x": 1}), T("b", {"y": 2})], case).score == 0.0
    assert call_correctness([T("a", {"x": 1}), T("b", {"y": 2}), T("c", {}), T("c", {})], case).score == 0.0


def test_argument_accuracy_is_per_argument():
    # seed 000 §2.2: arg_accuracy(call) = expected args matched / expected args, averaged
    case = Case(id="c", input="x", expected_calls=(
        ExpectedCall("book", {"flight": "HAT1", "date": "2024-05-01", "cabin": "economy"}),
        ExpectedCall("pay", {"amount": 100, "card": "c1"}),
        ExpectedCall("ping", {})))
    calls = [T("book", {"flight": "HAT1", "date": "2024-05-02", "cabin": "economy"}),
             T("pay", {"amount": 100, "card": "c9"}), T("ping", {"extra": 1})]
    r = argument_accuracy(calls, case)
    # book 2/3, pay 1/2, ping has no expected argument and its call matches -> 1.0
    assert r.score == pytest.approx((2 / 3 + 1 / 2 + 1.0) / 3)
    assert [(d["expected"], d["passed"], d["total"]) for d in r.parts["per_call"]] == \
        [(0, 2, 3), (1, 1, 2), (2, None, 0)]
    assert r.parts["pooled"] == 3 / 5  # seed 001's arg_correctness: 3 of 5 checks
    assert r.parts["call_exact_correct"] == 1
    assert r.reason == ("argument accuracy 0.722 over 3 called expected calls (3/5 argument checks "
                        "passed; 1/3 calls exactly right); pay (call 1): card: expected 'c1', got 'c9'")
    # the whole-call figure, seed 000 §2.2 call_exact_correct: 1 of 3 selected calls right
    assert call_exact_correct(calls, case).score == pytest.approx(1 / 3)
    # under exact_keys the extra argument of ping fails its (argument-free) call
    strict = argument_accuracy(calls, case, args_mode="exact_keys")
    assert strict.score == pytest.approx((2 / 3 + 1 / 2 + 0.0) / 3)
    assert argument_accuracy(calls, case, args_mode="ignore").score == 1.0


def test_argument_accuracy_pairs_for_the_most_credit():
    # two calls of one tool: the pairing with the most argument credit, never first-fit
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("s", {"q": "a", "n": 1}),
                                                   ExpectedCall("s", {"q": "b", "n": 2})))
    r = argument_accuracy([T("s", {"q": "b", "n": 2}), T("s", {"q": "a", "n": 9})], case)
    assert [(d["expected"], d["predicted"]) for d in r.parts["per_call"]] == [(0, 1), (1, 0)]
    assert r.score == pytest.approx((0.5 + 1.0) / 2)
    # a missing argument fails its check; an ignore argument may be absent
    case2 = Case(id="c", input="x", expected_calls=(
        ExpectedCall("s", {"q": "a", "n": 1, "lang": "en"}, match={"lang": "ignore"}),))
    assert argument_accuracy([T("s", {"q": "a"})], case2).score == pytest.approx(2 / 3)


def test_default_id_like_names():
    for n in ("id", "ID", "ids", "user_id", "order_ids", "userId", "bookingIds", "customerID"):
        assert default_is_id_arg(n), n
    for n in ("valid", "paid", "idea", "width", "identity", "guide"):
        assert not default_is_id_arg(n), n


def test_argument_provenance():
    case = Case(id="p", input="My laptop broke after INC-1042 was closed", user={"id": "u_381"})
    traj = Trajectory(steps=(
        Step(0, "user", content=case.input),
        Step(1, "tool_call", tool_calls=(T("get_ticket", {"ticket_id": "inc-1042"}, call_id="1"),)),
        Step(2, "tool_result", tool_result=ToolResult("1", "get_ticket", {"asset": {"assetId": 77012}})),
        Step(3, "tool_call", tool_calls=(T("get_asset", {"asset_id": 77012}, call_id="2"),
                                         T("notify", {"user_id": "u_381", "title": "x"}, call_id="3"),
                                         T("close", {"ticket_id": "INC-104"}, call_id="4"),
                                         T("close", {"ticket_id": "INC-9999"}, call_id="5"))),
    ))
    r = argument_provenance(traj, case)
    assert (r.parts["checked"], r.parts["grounded"]) == (5, 3)
    assert [(u["arg"], u["value"]) for u in r.parts["ungrounded"]] == [("ticket_id", "INC-104"), ("ticket_id", "INC-9999")]
    assert r.score == pytest.approx(3 / 5)
    # a value first seen in a LATER tool result is not grounded
    traj2 = Trajectory(steps=(
        Step(0, "tool_call", tool_calls=(T("get", {"order_id": "O-55"}, call_id="1"),)),
        Step(1, "tool_result", tool_result=ToolResult("1", "get", "order O-55 found")),
    ))
    assert argument_provenance(traj2, Case(id="q", input="check my order")).score == 0.0
    # configurable ID-like names; none used -> not applicable
    assert argument_provenance(traj2, Case(id="q", input="x"), id_args=["sku"]).score is None
    assert argument_provenance(traj2, Case(id="q", input="x"), id_args=lambda n: n == "order_id").score == 0.0
