"""Audit of DESIGN.md's "Semantics that must be exactly right" and "Policies" sections.

Each test quotes the rule it checks and asserts hand-computed values through the public
API. Tests here cover edge cases that had no direct test elsewhere (duplicates in the
trajectory modes, parallel steps in precedence, optional + retried calls in precision,
the composite's pass mark at exactly 0.80, ...).
"""

from __future__ import annotations

import pytest
from trajbuild import run

from trajcheck.errors import MatcherError, MetricInputError, TrajcheckError
from trajcheck.match.matchers import MatchContext, get_matcher
from trajcheck.match.matching import call_matches, retried_failures
from trajcheck.metrics.calls import argument_provenance, tool_call_prf
from trajcheck.metrics.composite import score_trajectory
from trajcheck.metrics.efficiency import RunStats, efficiency_summary, step_efficiency
from trajcheck.metrics.outcome import check_final_state, state_diff
from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate, wilson_interval
from trajcheck.metrics.result import MetricResult
from trajcheck.metrics.sequences import call_rates, ordering_accuracy
from trajcheck.metrics.trajectory import trajectory_match
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

# ---------------------------------------------------------------------------------------
# composite pass mark (the one discrepancy found: float rounding at the threshold)


def test_composite_exactly_at_threshold_passes():
    # DESIGN "Policies: Composite": "A case passes at composite >= 0.80 unless the case or
    # caller sets another threshold." Weights 0.50/0.25/0.15/0.10.
    # outcome 0.75 (given, passed None), tool selection F1 1.0 (a, b called), argument
    # correctness 1/2 (b has the wrong k), efficiency 1.0 (no step bounds):
    # 0.50*0.75 + 0.25*1 + 0.15*0.5 + 0.10*1 = 0.375 + 0.25 + 0.075 + 0.10 = 0.80 exactly.
    case = Case(id="c", input="x",
                expected_calls=(ExpectedCall("a", {"k": 1}), ExpectedCall("b", {"k": 1})))
    traj = run([("a", {"k": 1})], [("b", {"k": 2})])
    r = score_trajectory(traj, case, outcome=MetricResult("o", 0.75, "partial", {}, None))
    assert r.parts["tool_selection"] == 1.0
    assert r.parts["argument_correctness"] == 0.5
    assert r.parts["efficiency"] == 1.0
    assert r.score == 0.8
    assert r.passed is True


def test_composite_renormalised_exactly_at_threshold_passes():
    # Same rule with the outcome not applicable (trajcheck policy: the remaining weights are
    # renormalised: 0.25/0.5, 0.15/0.5, 0.10/0.5 = 0.5, 0.3, 0.2). Expected a, b; called a,
    # b and an extra z: selection P 2/3, R 1, F1 0.8; arguments 2/2 = 1; 3 steps against
    # max_steps 2: efficiency 1 - 1/2 = 0.5. 0.5*0.8 + 0.3*1 + 0.2*0.5 = 0.80 exactly.
    case = Case(id="c", input="x", max_steps=2,
                expected_calls=(ExpectedCall("a", {"k": 1}), ExpectedCall("b", {"k": 1})))
    traj = run([("a", {"k": 1})], [("b", {"k": 1})], ["z"])
    r = score_trajectory(traj, case, outcome=MetricResult("o", None, "n/a", {}, None))
    assert r.parts["effective_weights"]["outcome"] == 0.0
    assert r.parts["tool_selection"] == pytest.approx(0.8)
    assert r.parts["argument_correctness"] == 1.0
    assert r.parts["efficiency"] == 0.5
    assert r.score == 0.8
    assert r.passed is True


def test_composite_weights_and_critical_zero():
    # DESIGN: "Composite score: outcome 0.50, tool selection 0.25, argument correctness 0.15,
    # efficiency 0.10 by default; any critical forbidden-sequence violation makes it 0."
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("a", {"k": 1}),),
                forbidden_calls=("del*",), optimal_steps=1)
    ok = score_trajectory(run([("a", {"k": 1})]), case)
    assert ok.parts["weights"] == {"outcome": 0.50, "tool_selection": 0.25,
                                   "argument_correctness": 0.15, "efficiency": 0.10}
    assert ok.score == 1.0 and ok.passed is True
    bad = score_trajectory(run([("a", {"k": 1})], ["delete_all"]), case)
    assert bad.score == 0.0 and bad.passed is False
    # warnings are reported, not scored: same run as `ok` plus nothing, rule as warning
    case_w = Case(id="c", input="x", expected_calls=(ExpectedCall("a", {"k": 1}),),
                  forbidden_sequences=({"tool": "a", "requires_prior": "login",
                                        "severity": "warning"},))
    w = score_trajectory(run([("a", {"k": 1})]), case_w)
    assert w.parts["forbidden"]["warning"] == 1
    assert w.score == 1.0


# ---------------------------------------------------------------------------------------
# precision, optional calls, retries


def test_precision_optional_and_retry_combined():
    # DESIGN: "Precision counts a predicted call unless it is an unmatched allowed optional
    # call, or a failed attempt that was later retried."
    # calls: search, search (optional, unmatched), create(err) then create(ok) (retry):
    # counted = {create(ok)} -> P = 1/1, R = 1/1.
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("create", {"p": "high"}),),
                optional_calls=("search",))
    traj = run(["search"], ["search"], [("create", {"p": "high"}, "err")],
               [("create", {"p": "high"})])
    r = tool_call_prf(traj, case)
    assert (r.precision, r.recall, r.n_counted, r.tp) == (1.0, 1.0, 1, 1)
    assert r.parts["retried_set_aside"] == [2]


def test_precision_optional_tool_also_expected():
    # An optional tool that is also expected: the matched call counts (tp), the second,
    # unmatched one is an "unmatched allowed optional call" and is not counted.
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("search", None),),
                optional_calls=("search",))
    r = tool_call_prf(run(["search"], ["search"]), case)
    assert (r.precision, r.recall, r.n_counted) == (1.0, 1.0, 1)


def test_precision_no_counted_calls():
    # DESIGN: "Precision with no counted calls is 1.0 when nothing was expected, else 0.0."
    only_optional = tool_call_prf(run(["s"]), Case(id="c", input="x", optional_calls=("s",)))
    assert (only_optional.precision, only_optional.n_counted) == (1.0, 0)
    nothing = tool_call_prf(run(), Case(id="c", input="x", expected_calls=(ExpectedCall("a"),)))
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)


def test_failed_call_followed_by_other_tool_is_not_retry():
    # DESIGN: "A failed call followed by a different tool is not a retry."
    assert retried_failures(run([("a", {}, "err")], ["b"])) == frozenset()
    # the failed, never-retried call stays in: it is counted and unmatched
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("b", {}),))
    r = tool_call_prf(run([("a", {}, "err")], ["b"]), case)
    assert (r.precision, r.n_counted) == (0.5, 2)
    # a call with no result channel (is_error None) is not a failure, so not retried
    assert retried_failures(run([("a", {}, None)], ["a"])) == frozenset()


def test_retries_never_duplicate_or_unnecessary():
    # DESIGN: failed-and-retried calls "are never 'duplicate' or 'unnecessary'".
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("a", {}),))
    r = call_rates(run([("a", {}, "err")], ["a"]), case)
    assert (r.parts["n_counted"], r.parts["duplicate"], r.parts["unnecessary"]) == (1, 0, 0)
    dup = call_rates(run(["a"], ["a"]), case)
    assert (dup.parts["duplicate"], dup.parts["unnecessary"], dup.parts["n_counted"]) == (1, 1, 2)


def test_unparsed_args_never_match_but_count():
    # DESIGN: "Arguments that did not parse as JSON (or parsed to a non-object) never match
    # any expected call and still count as predicted calls."
    case = Case(id="c", input="x", expected_calls=(ExpectedCall("t", None),))
    calls = [ToolCall("t", None, raw_args="{bad", args_parse_error="bad"), ToolCall("t", {})]
    r = tool_call_prf(calls, case)
    assert (r.precision, r.recall, r.n_counted) == (0.5, 1.0, 2)
    # even with no argument constraint and in args_mode ignore
    bad = ToolCall("t", None, raw_args="{bad", args_parse_error="bad")
    assert not call_matches(bad, ExpectedCall("t", None))
    assert not call_matches(bad, ExpectedCall("t", None), args_mode="ignore")
    assert trajectory_match([bad], [ExpectedCall("t")], "superset").score == 0.0
    # arguments the source never recorded (args None, no raw text) are not unparsed: they
    # match by name where only names are compared, and never where arguments are
    unrec = ToolCall("t", None)
    assert call_matches(unrec, ExpectedCall("t", None), args_mode="ignore")
    assert not call_matches(unrec, ExpectedCall("t", None))
    assert trajectory_match([unrec], [ExpectedCall("t")], "superset").score == 0.0


# ---------------------------------------------------------------------------------------
# trajectory modes with duplicates


_MODES = ("exact", "in_order", "unordered", "superset", "subset")


@pytest.mark.parametrize("pred, exp, want", [
    # want: exact, in_order, unordered, superset, subset
    ("aa", "a", (0, 1, 0, 1, 0)),
    ("a", "aa", (0, 0, 0, 0, 1)),
    ("aba", "aa", (0, 1, 0, 1, 0)),
    ("ba", "ab", (0, 0, 1, 1, 1)),
    ("abc", "ac", (0, 1, 0, 1, 0)),
    ("ab", "ab", (1, 1, 1, 1, 1)),
    ("aab", "abb", (0, 0, 0, 0, 0)),
    ("", "", (1, 1, 1, 1, 1)),
    ("", "a", (0, 0, 0, 0, 1)),
    ("a", "", (0, 1, 0, 1, 0)),
])
def test_trajectory_modes_with_duplicates(pred, exp, want):
    # DESIGN: exact (same length, pairwise match), in_order (expected is a subsequence),
    # unordered (same multiset, no extras), superset (every expected present, extras
    # allowed), subset (every predicted expected); matching one-to-one.
    p = [ToolCall(n, {}) for n in pred]
    e = [ExpectedCall(n) for n in exp]
    got = tuple(int(trajectory_match(p, e, m).score) for m in _MODES)
    assert got == want


def test_trajectory_modes_set_retries_aside():
    # failed-and-retried calls "count in neither precision nor any match mode"
    traj = run([("a", {}, "err")], ["a"], ["b"])
    exp = [ExpectedCall("a"), ExpectedCall("b")]
    assert {m: trajectory_match(traj, exp, m).score for m in _MODES} == dict.fromkeys(_MODES, 1.0)


# ---------------------------------------------------------------------------------------
# precedence


@pytest.mark.parametrize("steps, score, statuses", [
    ((["a"], ["b"]), 1.0, ["held"]),
    ((["a", "b"],), 0.0, ["violated"]),            # same parallel step: not before
    ((["a", "b"], ["b"]), 0.0, ["violated"]),      # first b has no a strictly before
    ((["a"], ["a", "b"]), 1.0, ["held"]),          # an earlier a exists
    ((["b"], ["a"], ["b"]), 0.0, ["violated"]),    # every b needs an a before it
    ((["a"],), None, ["not_applicable"]),          # b never ran
    ((["b"],), 0.0, ["violated"]),                 # b ran, a never did
])
def test_precedence_cases(steps, score, statuses):
    # DESIGN: "A before B holds when every call of B has some call of A before it; it is
    # not applicable when B never ran; violated when B ran and A never did"; "calls in the
    # same parallel step are not before each other"; "with no applicable rule the accuracy
    # is None, not 1.0".
    r = ordering_accuracy(run(*steps), [("a", "b")])
    assert r.score == score
    assert [x["status"] for x in r.parts["rules"]] == statuses


def test_precedence_not_applicable_left_out_of_denominator():
    r = ordering_accuracy(run(["a"], ["b"]), [("a", "b"), ("a", "c"), ("c", "b")])
    # a<b held, a<c not applicable, c<b violated -> 1 / 2
    assert r.score == 0.5
    assert (r.parts["applicable"], r.parts["n_rules"]) == (2, 3)


# ---------------------------------------------------------------------------------------
# matchers


def test_exact_matcher_type_rules():
    # DESIGN: "exact is type-aware: 2 == 2.0, but True != 1 and "1" != 1; dicts compare by
    # key regardless of order, lists in order."
    ex = get_matcher("exact")
    assert ex(2, 2.0) and ex({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0})
    assert not ex(True, 1) and not ex(1, True) and not ex(0, False)
    assert not ex("1", 1) and not ex([1, 2], [2, 1]) and not ex({"a": [1]}, {"a": [True]})


def test_normalized_matcher_strings_only():
    # DESIGN: "normalized applies to strings only: NFKC, strip the ends, collapse inner
    # whitespace runs to one space, casefold."
    no = get_matcher("normalized")
    assert no("  Hello\t \n World ", "hello world")
    assert no("\ufb01le", "FILE")          # NFKC: the fi ligature
    assert no("Stra\u00dfe", "STRASSE")    # casefold: sharp s
    assert not no("a b", "ab")             # whitespace collapsed, not removed
    assert not no("1", 1)                  # non-strings: exact


def test_numeric_matcher_never_bool_or_string():
    # DESIGN: "numeric accepts only int and float (never bool, never numeric strings)"
    nu = get_matcher("numeric")
    assert nu(1, 1.0)
    assert not nu(1, True) and not nu(0, False) and not nu(1, "1")
    with pytest.raises(MatcherError):
        nu("1", 1)


def test_args_null_ignore_and_match_without_expected_value():
    # DESIGN: "An expected args of null means no constraint. An ignore argument may be
    # present or absent. A match entry for an argument with no expected value checks the
    # predicted value against the case's input: present, non-empty, and, for semantic or
    # judge, relevant to the request by the matcher's model and threshold."
    assert call_matches(ToolCall("t", {"x": 1, "y": [2]}), ExpectedCall("t", None))
    ign = ExpectedCall("t", {"a": 1, "b": 2}, match={"b": "ignore"})
    assert call_matches(ToolCall("t", {"a": 1}), ign)
    assert call_matches(ToolCall("t", {"a": 1, "b": "anything"}), ign)
    scorer = lambda a, b: 0.9 if "laptop" in b else 0.1  # noqa: E731
    ctx = MatchContext(case_input="my laptop won't boot", semantic_scorer=scorer)
    exp = ExpectedCall("create", {"p": "high"}, match={"title": "semantic"})
    assert call_matches(ToolCall("create", {"p": "high", "title": "laptop no boot"}), exp, context=ctx)
    assert not call_matches(ToolCall("create", {"p": "high", "title": "pizza"}), exp, context=ctx)
    assert not call_matches(ToolCall("create", {"p": "high", "title": "  "}), exp, context=ctx)
    assert not call_matches(ToolCall("create", {"p": "high"}), exp, context=ctx)


# ---------------------------------------------------------------------------------------
# reliability and intervals


def test_pass_k_formulas_hand_computed():
    # DESIGN: "pass^k = mean over tasks of C(c,k)/C(n,k); pass@k = mean of
    # 1 - C(n-c,k)/C(n,k)"
    # t1 n=5 c=3, t2 n=5 c=5: pass^2 = (C(3,2)/C(5,2) + 1)/2 = (3/10 + 1)/2 = 0.65
    assert pass_hat_k({"t1": (3, 5), "t2": (5, 5)}, 2) == pytest.approx(0.65)
    # t1 n=5 c=3, t2 n=5 c=0: pass@2 = ((1 - C(2,2)/C(5,2)) + 0)/2 = 0.9/2 = 0.45
    assert pass_at_k({"t1": (3, 5), "t2": (0, 5)}, 2) == pytest.approx(0.45)
    # bool trial lists: [T, F, T] -> c=2, n=3: pass^2 = C(2,2)/C(3,2) = 1/3
    assert pass_hat_k([[True, False, True]], 2) == pytest.approx(1 / 3)


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
def test_pass_k_needs_n_ge_k(fn):
    # DESIGN: "both need n >= k for every task and say so when not"
    with pytest.raises(MetricInputError, match=r"k = 3.*'t2' \(n=2\)"):
        fn({"t1": (1, 3), "t2": (1, 2)}, 3)
    with pytest.raises(TrajcheckError):
        fn({}, 1)


def test_wilson_quantile_and_rule_of_three():
    # DESIGN: "Wilson uses the exact normal quantile (1.959964 for 95%)"; "zero failures in
    # n gets the rule-of-three bound 3/n". Hand: 8/10, z = 1.959964, z^2 = 3.841459:
    # centre = (0.8 + 0.192073)/1.384146 = 0.716740; half = z/1.384146 *
    # sqrt(0.016 + 0.0096036) = 0.226578 -> (0.490162, 0.943318)
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.490162, abs=2e-6) and hi == pytest.approx(0.943318, abs=2e-6)
    r = success_rate(30, 30)
    assert r.failure_rate_upper == pytest.approx(0.1) and r.hi == 1.0
    assert success_rate(0, 20).success_rate_upper == pytest.approx(0.15)


# ---------------------------------------------------------------------------------------
# efficiency


def test_efficiency_successful_runs_only_cost_over_all_runs():
    # DESIGN: "Cost per successful task = cost of ALL runs / number of successful runs; the
    # other efficiency figures (steps, tokens, latency percentiles with linear
    # interpolation) are over successful runs only."
    runs = [RunStats(True, steps=2, tokens=100, cost_usd=1.0, latency_ms=100.0),
            RunStats(False, steps=1, tokens=10, cost_usd=3.0, latency_ms=10.0),
            RunStats(True, steps=4, tokens=300, cost_usd=2.0, latency_ms=300.0)]
    r = efficiency_summary(runs)
    assert r.cost_per_success == pytest.approx((1.0 + 3.0 + 2.0) / 2)
    assert r.distributions["steps"].mean == 3.0          # (2 + 4) / 2, failed run left out
    assert r.distributions["tokens"].n == 2
    lat = r.distributions["latency_ms"]
    assert lat.p50 == pytest.approx(200.0)               # 100 + 0.5 * 200
    assert lat.p95 == pytest.approx(290.0)               # 100 + 0.95 * 200
    assert lat.p99 == pytest.approx(298.0)


def test_step_efficiency_policy():
    # DESIGN: "Efficiency is optimal_steps / actual_steps capped at 1 when the case gives the
    # optimum, else 1 - excess / max_steps floored at 0, else 1."
    assert step_efficiency(4, 2) == 0.5
    assert step_efficiency(1, 2) == 1.0
    assert step_efficiency(9, None, 6) == pytest.approx(0.5)     # excess 3
    assert step_efficiency(13, None, 6) == 0.0                   # floored
    assert step_efficiency(4, 2, 3) == 0.5                       # optimum decides
    assert step_efficiency(50) == 1.0


# ---------------------------------------------------------------------------------------
# final state


def test_state_diff_volatile_dropped_emptied_changed():
    # DESIGN: "diff per table ignoring volatile fields (id, created_at, updated_at by
    # default); a table dropped or emptied shows as removed rows; a changed row shows as
    # one removed and one added."
    before = {"t": [{"id": 1, "a": 1, "created_at": "x"}, {"id": 2, "a": 2}],
              "dropped": [{"z": 0}], "emptied": [{"k": 1}, {"k": 2}]}
    after = {"t": [{"id": 10, "a": 1, "created_at": "y"}, {"id": 2, "a": 3}], "emptied": []}
    d = state_diff(before, after)
    assert d.added == {"t": ({"id": 2, "a": 3},)}
    assert d.removed == {"t": ({"id": 2, "a": 2},), "dropped": ({"z": 0},),
                         "emptied": ({"k": 1}, {"k": 2})}
    assert d.tables_dropped == ("dropped",)


def test_final_state_expected_rows_and_nothing_else():
    # DESIGN: "Success needs the expected rows added AND no other change"; "Expected
    # final-state rows are paired one-to-one with the added rows by maximum matching."
    exp = {"tickets": [{"p": "high"}, {"p": "high", "g": "IT"}]}
    added = [{"p": "high", "g": "IT"}, {"p": "high", "g": "HR"}]   # greedy first-fit fails
    assert check_final_state({"tickets": []}, {"tickets": added}, exp).score == 1.0
    more = check_final_state({"tickets": []}, {"tickets": added + [{"p": "low"}]}, exp)
    assert more.score == 0.0 and "unexpected added row" in more.reason
    other = check_final_state({"tickets": [], "log": [{"m": 1}]}, {"tickets": added}, exp)
    assert other.score == 0.0 and other.parts["problems"] == ["table log: dropped (1 row removed)"]


# ---------------------------------------------------------------------------------------
# provenance


def test_provenance_token_boundaries_and_integer_ids():
    # DESIGN: "an ID-like argument is grounded when its value occurs in the user input, the
    # case's user context, or an earlier tool result, matched case-insensitively at token
    # boundaries (an integer ID matches its digits)."
    case = Case(id="c", input="Please fix INC-1042", user={"id": "u_381"})
    traj = Trajectory(steps=(
        Step(0, "user", "Please fix INC-1042"),
        Step(1, "tool_call", tool_calls=(
            ToolCall("get", {"ticket_id": 1042}, call_id="1"),     # digits, after '-'
            ToolCall("get", {"user_id": "U_381"}, call_id="2"),    # case-insensitive
            ToolCall("get", {"ticket_id": 104}, call_id="3"),      # inside 1042: no
        )),
        Step(2, "tool_result", tool_result=ToolResult("1", "get", {"next_id": 77})),
        Step(3, "tool_call", tool_calls=(ToolCall("get", {"order_id": 77}, call_id="4"),
                                         ToolCall("get", {"order_id": 7}, call_id="5"))),
    ))
    r = argument_provenance(traj, case)
    assert (r.parts["checked"], r.parts["grounded"]) == (5, 3)
    assert [u["value"] for u in r.parts["ungrounded"]] == ["104", "7"]


# ---------------------------------------------------------------------------------------
# promptfoo negation


def test_promptfoo_negated_assertion_scores_one_minus_value():
    # DESIGN: "Negated assertions (promptfoo's not- prefix) flip pass and report
    # score = 1 - value." expected search+book, called search: F1 = 2*1*0.5/1.5 = 2/3.
    from promptfoo_provider.assertion import get_assert

    cfg = {"expected_calls": ["search", "book"]}
    out = [{"name": "search", "args": {}}]
    for typ, score in (("python", 2 / 3), ("not-python", 1 / 3)):
        ctx = {"config": cfg, "vars": {}, "test": {"assert": [
            {"type": typ, "value": "file://promptfoo_provider/assertion.py", "config": cfg}]}}
        g = get_assert(out, ctx)
        assert g["score"] == pytest.approx(score)
        assert g["pass"] is False  # raw verdict; promptfoo applies the flip itself


# ---------------------------------------------------------------------------------------
# error recovery


def test_recovery_rates_over_fault_runs_only_and_false_success():
    # DESIGN: "rates are over fault-injected runs only. A false success is a final response
    # that claims the action happened while the task failed (the final state or the
    # action's successful call is missing); a truthful claim after a recovered retry is not."
    from trajcheck.metrics.recovery import (
        RecoveryRun,
        false_success_rate,
        is_false_success,
        recovery_rate,
    )

    claim = "Your ticket has been created."
    false_claim = run([("create_ticket", {}, "err")], final=claim)
    truthful = run([("create_ticket", {}, "err")], ["create_ticket"], final=claim)
    assert is_false_success((false_claim, False)) is True
    assert is_false_success((truthful, True)) is False
    # the call succeeded but the expected rows are missing: still a false success
    wrote = run(["create_ticket"], final=claim)
    assert is_false_success(RecoveryRun(wrote, False, True, state_missing=True)) is True
    # a run without injected faults is in no rate
    runs = [RecoveryRun(truthful, True, True), RecoveryRun(false_claim, False, False)]
    assert recovery_rate(runs).score == 1.0
    assert false_success_rate(runs).score == 0.0
    assert false_success_rate(runs).parts["n_fault_runs"] == 1
    both = [RecoveryRun(truthful, True, True), RecoveryRun(false_claim, False, True)]
    assert recovery_rate(both).score == 0.5
    assert false_success_rate(both).score == 0.5


# ---------------------------------------------------------------------------------------
# undefined estimators raise


def test_undefined_estimators_raise_trajcheck_errors():
    # DESIGN: "Inputs that would make an estimator undefined (n < k, y_true/y_pred of
    # different lengths, an empty suite) raise a TrajcheckError subclass"
    from trajcheck.metrics.reliability import bootstrap_ci
    from trajcheck.metrics.routing import accuracy, routing_metrics

    with pytest.raises(MetricInputError, match="different lengths: 1 vs 2"):
        routing_metrics(["a"], ["a", "b"])
    with pytest.raises(MetricInputError, match="different lengths"):
        accuracy(["a", "b"], ["a"])
    for call in (lambda: bootstrap_ci([]), lambda: efficiency_summary([]),
                 lambda: pass_at_k([], 1), lambda: routing_metrics([], [])):
        with pytest.raises(TrajcheckError):
            call()


def test_retry_run_is_one_definition_across_other_tools():
    # DESIGN: "A retry is a later call of the same tool after a call whose result was an
    # error" and "the retry budget is checked against the longest run of same-tool calls
    # after an error". A fails, B, A fails, A fails, A succeeds: after the first failure
    # come three A calls (the third succeeds) -> a run of 3, whatever B does in between.
    from trajcheck.metrics.recovery import longest_retry_run, max_retries_exceeded
    from trajcheck.metrics.sequences import error_recovery

    t = run([("A", {}, "err")], ["B"], [("A", {}, "err")], [("A", {}, "err")], ["A"])
    assert longest_retry_run(t) == 3
    assert error_recovery(t, retry_budget=2).parts["longest_retry_run"] == 3
    r = max_retries_exceeded([(t, True)], retry_budget=2)
    assert r.parts["longest"] == [3] and r.parts["exceeded"] == [0] and r.passed is False


def test_all_successes_rate_reports_rule_of_three_lower_bound():
    # DESIGN: "zero failures in n gets the rule-of-three bound 3/n": a 100% success rate
    # over 30 runs is reported with lower bound 1 - 3/30 = 0.9, and 0 of 30 with upper 0.1.
    from trajcheck.score.suite import _rate

    e = _rate(30, 30, 0.95)
    assert (e.value, e.lo, e.hi, e.method) == (1.0, 0.9, 1.0, "rule_of_three")
    e = _rate(0, 30, 0.95)
    assert (e.value, e.lo, e.hi, e.method) == (0.0, 0.0, 0.1, "rule_of_three")
