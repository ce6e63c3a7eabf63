"""Tests for trajcheck.metrics.sequences: precedence, forbidden sequences, call rates,
error recovery and success-claim detection. Every expected number is worked out by hand
in the comments next to it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trajbuild import run

from trajcheck.errors import DatasetError, MetricInputError
from trajcheck.metrics.sequences import (
    FORBIDDEN_RULE_SCHEMA,
    call_rates,
    check_forbidden_sequences,
    claims_success,
    error_recovery,
    ordering_accuracy,
    validate_forbidden_rules,
)
from trajcheck.model import Case, ExpectedCall

# ---------------------------------------------------------------------------------------
# ordering_accuracy


def test_same_parallel_step_is_not_before():
    r = ordering_accuracy(run(["A", "B"]), [("A", "B")])
    assert r.score == 0.0 and r.passed is False
    assert r.parts["rules"][0]["status"] == "violated"
    assert "same parallel step" in r.parts["rules"][0]["why"]
    assert ordering_accuracy(run(["A"], ["B"]), [("A", "B")]).score == 1.0


def test_after_tool_never_ran_is_not_applicable_and_score_none():
    r = ordering_accuracy(run(["A"], ["C"]), [("A", "B")])
    assert r.score is None and r.passed is None
    assert r.parts["applicable"] == 0
    assert r.parts["rules"][0]["status"] == "not_applicable"
    assert "not applicable" in r.reason
    r0 = ordering_accuracy(run(["A"]), [])
    assert r0.score is None and "no precedence rules" in r0.reason


def test_before_tool_missing_is_violated():
    r = ordering_accuracy(run(["B"]), [("A", "B")])
    assert r.score == 0.0
    assert "never did" in r.parts["rules"][0]["why"]
    assert r.parts["rules"][0]["call_index"] == 0


def test_every_call_of_b_needs_an_a_before_it():
    # A, B, B: both B calls have the A at step 1 before them -> held
    assert ordering_accuracy(run(["A"], ["B"], ["B"]), [("A", "B")]).score == 1.0
    # B, A, B: the first B (call 0) has no A before it -> violated
    r = ordering_accuracy(run(["B"], ["A"], ["B"]), [("A", "B")])
    assert r.score == 0.0 and r.parts["rules"][0]["call_index"] == 0


def test_fraction_over_applicable_rules_only():
    # (A,B) holds, (C,B) violated (C never ran), (D,E) not applicable -> 1/2
    r = ordering_accuracy(run(["A"], ["B"]), [("A", "B"), ("C", "B"), ("D", "E")])
    assert r.score == 0.5
    assert (r.parts["held"], r.parts["violated"], r.parts["applicable"], r.parts["n_rules"]) == (1, 1, 2, 3)


def test_retried_failures_are_set_aside_for_precedence():
    # B fails, then A, then B is retried and succeeds: the failed B is set aside -> held
    t = run([("B", {}, "err")], ["A"], ["B"])
    assert ordering_accuracy(t, [("A", "B")]).score == 1.0
    # A fails and is retried only after B: the failed A does not count -> violated
    t2 = run([("A", {}, "err")], ["B"], ["A"])
    assert ordering_accuracy(t2, [("A", "B")]).score == 0.0
    # A failed and was never retried: it still ran (final attempt) -> held
    t3 = run([("A", {}, "err")], ["B"])
    assert ordering_accuracy(t3, [("A", "B")]).score == 1.0


def test_case_precedence_accepted():
    case = Case("c", "x", precedence=(("get_ticket", "update_ticket"),))
    assert ordering_accuracy(run(["get_ticket"], ["update_ticket"]), case).score == 1.0


@pytest.mark.parametrize("bad", [None, "AB", [("A",)], [("A", "A")], [("A", "")], [(1, "B")],
                                 [{"A": "B"}]])
def test_bad_precedence_raises(bad):
    with pytest.raises(MetricInputError):
        ordering_accuracy(run(["A"]), bad)


NAMES = ["A", "B", "C"]
step_st = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3)
steps_st = st.lists(step_st, max_size=6)
rules_st = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)).filter(
    lambda p: p[0] != p[1]), max_size=5)


@settings(max_examples=200, deadline=None)
@given(steps_st, rules_st)
def test_ordering_matches_first_step_characterisation(steps, rules):
    # "every B has an A at an earlier step" <=> "B ran and first A step < first B step"
    r = ordering_accuracy(run(*steps), rules)
    first = {}
    for si, names in enumerate(steps):
        for n in names:
            first.setdefault(n, si)
    held = sum(1 for a, b in rules if b in first and a in first and first[a] < first[b])
    appl = sum(1 for _a, b in rules if b in first)
    if appl == 0:
        assert r.score is None
    else:
        assert r.score == pytest.approx(held / appl)
        assert 0.0 <= r.score <= 1.0


@settings(max_examples=100, deadline=None)
@given(steps_st, rules_st, st.randoms(use_true_random=False))
def test_ordering_invariant_to_order_inside_parallel_steps(steps, rules, rnd):
    shuffled = [rnd.sample(s, len(s)) for s in steps]
    assert ordering_accuracy(run(*steps), rules).score == ordering_accuracy(run(*shuffled), rules).score


@settings(max_examples=100, deadline=None)
@given(steps_st, rules_st)
def test_ordering_invariant_to_unrelated_calls(steps, rules):
    # inserting steps of a tool named in no rule changes nothing
    padded = [x for s in steps for x in (s, ["Z"])]
    assert ordering_accuracy(run(*steps), rules).score == ordering_accuracy(run(*padded), rules).score


# ---------------------------------------------------------------------------------------
# forbidden sequences

DELETE_NEEDS_CONFIRM = {"tool": "delete_booking", "requires_prior": ["confirm"],
                        "link": {"arg": "booking_id"}, "severity": "critical",
                        "name": "confirm before delete"}


def test_delete_needs_confirm_of_same_booking():
    ok = run([("confirm", {"booking_id": 7})], [("delete_booking", {"booking_id": 7})])
    r = check_forbidden_sequences(ok, [DELETE_NEEDS_CONFIRM])
    assert r.score == 1.0 and r.passed is True and r.parts["violations"] == []

    other = run([("confirm", {"booking_id": 7})], [("delete_booking", {"booking_id": 8})])
    r = check_forbidden_sequences(other, [DELETE_NEEDS_CONFIRM])
    assert r.score == 0.0 and r.passed is False
    assert r.parts["critical"] == 1 and r.parts["warning"] == 0
    v = r.parts["violations"][0]
    assert (v["rule"], v["call_index"], v["severity"], v["tool"]) == (
        "confirm before delete", 1, "critical", "delete_booking")
    assert "booking_id=8" in v["why"]


def test_link_uses_type_aware_exact_equality():
    # 7 == 7.0 links; "7" != 7 does not
    t = run([("confirm", {"booking_id": 7.0})], [("delete_booking", {"booking_id": 7})])
    assert check_forbidden_sequences(t, [DELETE_NEEDS_CONFIRM]).score == 1.0
    t = run([("confirm", {"booking_id": "7"})], [("delete_booking", {"booking_id": 7})])
    assert check_forbidden_sequences(t, [DELETE_NEEDS_CONFIRM]).score == 0.0


def test_prior_must_be_earlier_step_and_not_failed():
    same_step = run([("confirm", {"booking_id": 7}), ("delete_booking", {"booking_id": 7})])
    assert check_forbidden_sequences(same_step, [DELETE_NEEDS_CONFIRM]).score == 0.0
    after = run([("delete_booking", {"booking_id": 7})], [("confirm", {"booking_id": 7})])
    assert check_forbidden_sequences(after, [DELETE_NEEDS_CONFIRM]).score == 0.0
    failed = run([("confirm", {"booking_id": 7}, "err")], [("delete_booking", {"booking_id": 7})])
    assert check_forbidden_sequences(failed, [DELETE_NEEDS_CONFIRM]).score == 0.0
    unknown = run([("confirm", {"booking_id": 7}, None)], [("delete_booking", {"booking_id": 7})])
    assert check_forbidden_sequences(unknown, [DELETE_NEEDS_CONFIRM]).score == 1.0


def test_prior_arg_name_and_any_of_patterns():
    rule = {"tool": "delete_*", "requires_prior": ["confirm_*", "ask_user"],
            "link": {"arg": "booking_id", "prior_arg": "id"}}
    t = run([("ask_user", {"id": 3})], [("delete_booking", {"booking_id": 3})])
    assert check_forbidden_sequences(t, [rule]).score == 1.0
    t = run([("confirm_x", {"booking_id": 3})], [("delete_booking", {"booking_id": 3})])
    assert check_forbidden_sequences(t, [rule]).score == 0.0  # prior lacks "id"


def test_gated_call_without_link_arg_is_violation():
    t = run([("confirm", {"booking_id": 7})], [("delete_booking", {})])
    r = check_forbidden_sequences(t, [DELETE_NEEDS_CONFIRM])
    assert r.score == 0.0 and "no parsed 'booking_id'" in r.parts["violations"][0]["why"]


def test_plain_forbidden_pattern_and_warning_severity():
    t = run(["get_ticket"], ["update_ticket"], ["update_user"])
    r = check_forbidden_sequences(t, [{"tool": "update_*"}])
    assert r.score == 0.0 and r.parts["critical"] == 2
    assert [v["call_index"] for v in r.parts["violations"]] == [1, 2]
    w = check_forbidden_sequences(t, [{"tool": "update_user", "severity": "warning"}])
    assert w.score == 1.0 and w.passed is True and w.parts["warning"] == 1
    assert check_forbidden_sequences(t, []).score == 1.0


def test_failed_attempt_of_forbidden_tool_still_violates():
    t = run([("update_ticket", {}, "err")], ["update_ticket"])
    assert check_forbidden_sequences(t, [{"tool": "update_ticket"}]).parts["critical"] == 2


@pytest.mark.parametrize("rules, where, field", [
    ([{"tool": "a"}, {"tool": "b", "sevrity": "warning"}], "forbidden_sequences[1]", "sevrity"),
    ([{"tool": "a", "severity": "high"}], "forbidden_sequences[0].severity", "high"),
    ([{"requires_prior": ["a"]}], "forbidden_sequences[0].tool", "None"),
    ([{"tool": "a", "requires_prior": []}], "forbidden_sequences[0].requires_prior", "[]"),
    ([{"tool": "a", "requires_prior": [3]}], "forbidden_sequences[0].requires_prior[0]", "3"),
    ([{"tool": "a", "link": {"arg": "x"}}], "forbidden_sequences[0].link", "requires_prior"),
    ([{"tool": "a", "requires_prior": "b", "link": {"arg": "x", "other": 1}}],
     "forbidden_sequences[0].link", "other"),
    (["update_*"], "forbidden_sequences[0]", "object"),
])
def test_bad_rules_name_index_and_field(rules, where, field):
    with pytest.raises(DatasetError) as ei:
        check_forbidden_sequences(run(["a"]), rules)
    assert where in str(ei.value) and field in str(ei.value)


RULE_EXAMPLES = [
    ({"tool": "a"}, True),
    ({"tool": "a", "requires_prior": "b", "severity": "warning", "name": "n", "description": "d"}, True),
    (DELETE_NEEDS_CONFIRM, True),
    ({"tool": "a", "requires_prior": ["b"], "link": {"arg": "x", "prior_arg": "y"}}, True),
    ({"tool": ""}, False),
    ({"tool": "a", "severity": "fatal"}, False),
    ({"tool": "a", "extra": 1}, False),
    ({"tool": "a", "requires_prior": []}, False),
    ({"tool": "a", "requires_prior": ["b"], "link": {}}, False),
    ({"severity": "warning"}, False),
]


@pytest.mark.parametrize("rule, ok", RULE_EXAMPLES)
def test_schema_fragment_agrees_with_validator(rule, ok):
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(FORBIDDEN_RULE_SCHEMA)
    schema_ok = jsonschema.Draft202012Validator(FORBIDDEN_RULE_SCHEMA).is_valid(rule)
    assert schema_ok is ok
    if ok:
        validate_forbidden_rules([rule])
    else:
        with pytest.raises(DatasetError):
            validate_forbidden_rules([rule])


# ---------------------------------------------------------------------------------------
# call_rates


def test_call_rates_worked_example():
    case = Case("c", "x", expected_calls=(ExpectedCall("create_ticket", {"priority": "high"}),),
                optional_calls=("search_docs",), forbidden_calls=("update_*",))
    t = run([("search_docs", {"q": "vpn"})], [("search_docs", {"q": "vpn"})],
            [("create_ticket", {"priority": "medium"})], [("create_ticket", {"priority": "high"})],
            [("update_ticket", {"id": 1})])
    r = call_rates(t, case)
    # counted 5. unnecessary: create_ticket(medium) and update_ticket (search_docs is optional)
    # -> 2/5; duplicate: the second search_docs -> 1/5; forbidden: update_ticket -> 1/5.
    # clean: search_docs #0 and create_ticket(high) -> 2/5
    p = r.parts
    assert (p["unnecessary"], p["duplicate"], p["forbidden"], p["n_counted"]) == (2, 1, 1, 5)
    assert p["unnecessary_rate"] == pytest.approx(0.4)
    assert p["duplicate_rate"] == pytest.approx(0.2)
    assert p["forbidden_rate"] == pytest.approx(0.2)
    assert r.score == pytest.approx(0.4)


def test_retries_are_never_duplicates_and_leave_the_denominator():
    t = run([("f", {"a": 1}, "err")], [("f", {"a": 1})])
    r = call_rates(t, Case("c", "x", expected_calls=(ExpectedCall("f", {"a": 1}),)))
    assert (r.parts["duplicate"], r.parts["unnecessary"], r.parts["n_counted"], r.parts["n_calls"]) == (0, 0, 1, 2)
    assert r.score == 1.0


def test_expected_repeats_are_not_duplicates():
    case = Case("c", "x", expected_calls=(ExpectedCall("search", {"q": 1}),) * 2)
    two = call_rates(run([("search", {"q": 1})], [("search", {"q": 1})]), case)
    assert two.parts["duplicate"] == 0 and two.parts["unnecessary"] == 0
    three = call_rates(run(*[[("search", {"q": 1})]] * 3), case)
    assert three.parts["duplicate"] == 1 and three.parts["duplicate_rate"] == pytest.approx(1 / 3)


def test_call_rates_empty():
    r = call_rates(run(), Case("c", "x", expected_calls=(ExpectedCall("f"),)))
    assert r.score is None
    assert r.parts["unnecessary_rate"] == r.parts["duplicate_rate"] == r.parts["forbidden_rate"] == 0.0
    assert r.reason == "no calls: every rate is 0.0 (nothing to rate)"


def test_call_rates_divide_by_all_calls_of_the_run():
    # seed 000 §2.5: rates are / |calls|. A failed-and-retried book is in the denominator but
    # never flagged; the extra lookup is unnecessary, the repeated search a duplicate.
    case = Case("c", "x", expected_calls=(ExpectedCall("book", {"id": 1}), ExpectedCall("search", {"q": 1})))
    t = run([("book", {"id": 1}, "err")], [("book", {"id": 1})], [("search", {"q": 1})],
            [("search", {"q": 1})], [("lookup", {})])
    r = call_rates(t, case)
    assert (r.parts["n_calls"], r.parts["n_counted"]) == (5, 4)
    assert (r.parts["unnecessary"], r.parts["duplicate"]) == (2, 1)
    assert (r.parts["unnecessary_rate"], r.parts["duplicate_rate"]) == (2 / 5, 1 / 5)
    assert r.score == 3 / 5
    assert r.reason == ("of 5 calls (1 failed-and-retried, never flagged): 2 unnecessary, "
                        "1 duplicate, 0 forbidden")


# ---------------------------------------------------------------------------------------
# error_recovery and claims_success


def test_recovered_retry_with_truthful_claim():
    t = run([("book", {}, "err")], ["book"], final="Your flight has been booked.")
    r = error_recovery(t)
    p = r.parts
    assert (p["errors"], p["recovered"], p["unrecovered"], p["longest_retry_run"]) == (1, 1, 0, 1)
    assert p["false_success"] is False and p["claims_success"] is True
    assert r.score == 1.0 and r.passed is True


def test_false_success_claim():
    t = run([("book_flight", {}, "err")], final="Great news: your flight was booked successfully!")
    r = error_recovery(t)
    assert r.parts["false_success"] is True and r.parts["false_success_actions"] == ["book_flight"]
    assert r.parts["unrecovered"] == 1 and r.score == 0.0 and r.passed is False
    honest = run([("book_flight", {}, "err")], final="Sorry, I could not book the flight.")
    assert error_recovery(honest).parts["false_success"] is False


def test_false_success_with_explicit_action_tools_and_no_errors():
    # the agent never called cancel_* but says it cancelled
    t = run(["get_order"], final="I have cancelled your order.")
    r = error_recovery(t, action_tools=["cancel_*"])
    assert r.parts["false_success"] is True and r.score is None and r.passed is False
    t_ok = run(["cancel_order"], final="I have cancelled your order.")
    assert error_recovery(t_ok, action_tools=["cancel_*"]).parts["false_success"] is False


def test_retry_budget_longest_run():
    # book fails 3 times then succeeds: the run after the first error is 3 retries
    t = run(*[[("book", {}, "err")]] * 3, ["book"])
    r = error_recovery(t, retry_budget=2)
    assert r.parts["errors"] == 3 and r.parts["recovered"] == 3
    assert r.parts["longest_retry_run"] == 3 and r.parts["retries_beyond_budget"] == 1
    assert r.passed is False
    assert error_recovery(t, retry_budget=3).parts["retries_beyond_budget"] == 0
    # other tools between attempts do not end the run (a retry is any later same-tool call)
    t2 = run([("book", {}, "err")], ["search"], ["book"])
    assert error_recovery(t2).parts["longest_retry_run"] == 1


def test_failed_call_followed_by_other_tool_is_unrecovered():
    r = error_recovery(run([("book", {}, "err")], ["search"]))
    assert (r.parts["errors"], r.parts["recovered"], r.parts["longest_retry_run"]) == (1, 0, 0)


def test_no_errors_score_none_and_bad_budget():
    assert error_recovery(run(["a"])).score is None
    for bad in (-1, 1.5, True):
        with pytest.raises(MetricInputError):
            error_recovery(run(["a"]), retry_budget=bad)


@pytest.mark.parametrize("text, action, expected", [
    ("Your reservation has been cancelled.", None, True),
    ("I've booked the 9am flight for you.", "book_flight", True),
    ("The ticket was created successfully.", "create_ticket", True),
    ("Done! The refund is confirmed.", None, True),
    ("I couldn't cancel the reservation.", "cancel_reservation", False),
    ("The booking was not completed due to an error.", None, False),
    ("I will book the flight once you confirm.", None, False),
    ("Your reservation has been cancelled.", "book_flight", False),
    ("", None, False),
    (None, None, False),
    ("Which date would you like?", None, False),
])
def test_claims_success(text, action, expected):
    assert claims_success(text, action) is expected


def test_claims_success_custom_pattern_and_bad_regex():
    assert claims_success("Erledigt.", pattern=r"erledigt") is True
    with pytest.raises(MetricInputError):
        claims_success("x", pattern="(")


# ---------------------------------------------------------------------------------------
# ranges on random input

call_st = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([{}, {"x": 1}, {"x": 2}]),
                    st.sampled_from(["ok", "err", None]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(call_st, min_size=1, max_size=3), max_size=6),
       st.lists(st.sampled_from(["a", "b", "c"]), max_size=3))
def test_every_score_in_unit_interval(steps, exp_names):
    t = run(*steps, final="It has been done.")
    case = Case("c", "x", expected_calls=tuple(ExpectedCall(n, {"x": 1}) for n in exp_names),
                optional_calls=("c",), forbidden_calls=("b",))
    for r in (call_rates(t, case), error_recovery(t),
              ordering_accuracy(t, [("a", "b"), ("b", "c")]),
              check_forbidden_sequences(t, [{"tool": "b", "requires_prior": "a",
                                             "link": {"arg": "x"}}])):
        assert r.score is None or 0.0 <= r.score <= 1.0
    rates = call_rates(t, case).parts
    for k in ("unnecessary_rate", "duplicate_rate", "forbidden_rate"):
        assert 0.0 <= rates[k] <= 1.0


# ---------------------------------------------------------------------------------------
# brute force and scale


def _brute_forbidden(t, rule):
    from fnmatch import fnmatchcase

    from trajcheck.match.matchers import exact_equal
    from trajcheck.match.matching import is_failed

    pairs = t.pairs()
    steps = [si for si, _c in t.iter_call_steps()]
    bad = []
    for ci, (c, _r) in enumerate(pairs):
        if not fnmatchcase(c.name, rule["tool"]):
            continue
        link = rule.get("link")
        ok = False
        for pj, (p, pr) in enumerate(pairs):
            if steps[pj] >= steps[ci] or is_failed(pr) or not fnmatchcase(p.name, rule["requires_prior"]):
                continue
            if link is None:
                ok = True
            elif (c.args and link["arg"] in c.args and p.args and link["arg"] in p.args
                  and exact_equal(p.args[link["arg"]], c.args[link["arg"]])):
                ok = True
        if not ok:
            bad.append(ci)
    return bad


val_st = st.sampled_from([1, 1.0, "1", True, 2, None, [1], {"a": 1}, float("nan")])
fcall_st = st.tuples(st.sampled_from(["confirm", "delete", "other"]),
                     st.one_of(st.just({}), st.builds(lambda v: {"id": v}, val_st)),
                     st.sampled_from(["ok", "err", None]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(fcall_st, min_size=1, max_size=3), max_size=6), st.booleans())
def test_forbidden_equals_brute_force(steps, linked):
    t = run(*steps)
    rule = {"tool": "delete", "requires_prior": "confirm"}
    if linked:
        rule["link"] = {"arg": "id"}
    got = [v["call_index"] for v in check_forbidden_sequences(t, [rule]).parts["violations"]]
    assert got == _brute_forbidden(t, rule)


def test_three_thousand_failed_calls_scale_and_values():
    t = run(*[[("book", {"n": 1}, "err")]] * 3000)
    r = error_recovery(t, retry_budget=2)
    # every call failed; the run after the first error is the other 2999 attempts
    assert (r.parts["errors"], r.parts["recovered"], r.parts["longest_retry_run"],
            r.parts["retries_beyond_budget"]) == (3000, 0, 2999, 2997)
    f = check_forbidden_sequences(t, [{"tool": "book", "requires_prior": "pay"}])
    assert f.parts["critical"] == 3000


def test_deeply_nested_args_do_not_crash():
    deep = {}
    cur = deep
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    t = run([("f", deep)], [("f", deep)])
    r = call_rates(t, Case("c", "x", expected_calls=(ExpectedCall("f"),)))
    # too deep to key: never called a duplicate; the second call is simply unmatched
    assert r.parts["duplicate"] == 0 and r.parts["unnecessary"] == 1
