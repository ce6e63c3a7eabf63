"""The two source documents (../shared/seeds, 000 "Agent Tool and Trajectory Evals" and 001
"Agent Trajectory Evals"): every code block's printed values and assertions, reproduced with
trajcheck's public API on the documents' own data. One test per block, named by section.

Where trajcheck deliberately differs, the test shows both values and says why (README,
"Policies"): it does not follow Python's ``True == 1``; a fault raises instead of returning
the error payload; seed 001's composite argument part counts only checks (trajcheck averages
per called expected call, an argument-free call counting as right); the seed's tool
selection ignores extra calls, trajcheck's counts them unless they are optional calls;
``bootstrap_ci`` returns a result object, not a tuple; seed 001's schemas are JSON Schema;
a violation's ``step`` is the run's step index; seed 001's efficiency and outcome step
budget count agent turns (the seed: tool calls / a recorded total) and its final-state
values compare typed.
"""

from __future__ import annotations

from dataclasses import replace
from math import comb

import pytest

from trajcheck import Case, ExpectedCall, ToolCall
from trajcheck.match.matchers import get_matcher
from trajcheck.metrics.calls import (
    argument_accuracy,
    call_exact_correct,
    schema_errors,
    tool_call_prf,
)
from trajcheck.metrics.composite import efficiency_score, score_trajectory
from trajcheck.metrics.outcome import response_includes, state_diff
from trajcheck.metrics.outcome_checks import case_outcome_checks, with_case_outcome_checks
from trajcheck.metrics.reliability import bootstrap_ci, pass_at_k, pass_hat_k
from trajcheck.metrics.routing import routing_metrics
from trajcheck.metrics.sequences import call_rates, check_forbidden_sequences, ordering_accuracy
from trajcheck.metrics.trajectory import trajectory_match
from trajcheck.model import Step, ToolResult, Trajectory
from trajcheck.read.eval_case import case_from_eval_case, cases_from_eval_suite
from trajcheck.run.faults import InjectedFault, flaky
from trajcheck.run.simulated_user import Scenario
from trajcheck.score.suite import evaluate

# ============================================================ seed 000


def test_seed000_s1_dataset_row_shape():
    row = {
        "id": "agent_042",
        "input": "My laptop still won't boot after INC-1042 was closed. Open a new high-priority ticket for IT.",
        "user": {"id": "u_381", "role": "employee"},
        "initial_state": "fixtures/tickets_empty.sql",
        "expected_calls": [
            {"name": "create_ticket",
             "args": {"priority": "high", "assignee_group": "IT-Hardware"},
             "match": {"title": "semantic", "description": "semantic"}}
        ],
        "optional_calls": ["search_docs", "get_ticket"],
        "forbidden_calls": ["update_ticket"],
        "expected_final_state": {"tickets": [{"priority": "high", "assignee_group": "IT-Hardware", "requester": "u_381"}]},
        "response_must_include": ["ticket ID"],
    }
    case = Case.from_dict(row)
    assert case.expected_calls == (ExpectedCall("create_ticket", {"priority": "high", "assignee_group": "IT-Hardware"},
                                                match={"title": "semantic", "description": "semantic"}),)
    assert case.optional_calls == ("search_docs", "get_ticket") and case.forbidden_calls == ("update_ticket",)
    assert Case.from_dict(case.to_dict()) == case


def test_seed000_s2_6_flaky_tool():
    # seed: the wrapped tool returns {"error": "503 Service Unavailable"}. trajcheck's fault
    # raises InjectedFault (the sandbox turns it into an error ToolResult, so the failure is
    # on the error channel, not a payload a reader must recognise); same 503 text.
    create_ticket = flaky(lambda **kw: {"ticket_id": "INC-2001"}, fail_rate=1.0, name="create_ticket")
    with pytest.raises(InjectedFault, match="503 Service Unavailable"):
        create_ticket(title="Laptop won't boot", priority="high")
    ok = flaky(lambda **kw: {"ticket_id": "INC-2001"}, fail_rate=0.0, name="create_ticket")
    assert ok(title="Laptop won't boot", priority="high") == {"ticket_id": "INC-2001"}


# the §2.3 worked example exactly as seed 000 §3.2 prints it
PRED = [
    ToolCall("search_docs", {"query": "laptop won't boot"}),
    ToolCall("get_ticket", {"ticket_id": "INC-1042"}),
    ToolCall("create_ticket", {"priority": "medium", "assignee_group": "IT-Hardware", "title": "Laptop boot failure"}),
    ToolCall("create_ticket", {"priority": "high", "assignee_group": "IT-Hardware", "title": "Laptop won't boot"}),
]
M = {"priority": "normalized", "assignee_group": "normalized"}  # the seed's norm_str
EXP = [ExpectedCall("create_ticket", {"priority": "high", "assignee_group": "IT-Hardware"}, match=M)]
EXP_CALL = [ToolCall("create_ticket", {"priority": "high", "assignee_group": "IT-Hardware"})]


def test_seed000_s3_2_worked_example_and_maximum_matching():
    case = Case("s2.3", "open a ticket", expected_calls=tuple(EXP), optional_calls=("search_docs", "get_ticket"))
    r = tool_call_prf(PRED, case)
    # {'precision': 0.5, 'recall': 1.0, 'f1': 0.666...}
    assert (r.precision, r.recall) == (0.5, 1.0) and r.f1 == pytest.approx(2 / 3)
    # the reason names the closest call's differing argument; the extra title is allowed
    assert r.reason == ("precision 0.500 (1/2 counted calls matched), recall 1.000 (1/1 expected "
                        "calls found), F1 0.667; unexpected: create_ticket; create_ticket: priority: "
                        "normalized match failed: expected 'high', got 'medium'")
    # under exact_keys every difference is named, the extra title too
    strict = tool_call_prf(PRED, case, args_mode="exact_keys")
    assert strict.reason.endswith("; missing: create_ticket; unexpected: create_ticket, create_ticket; "
                                  "create_ticket: priority: normalized match failed: expected 'high', "
                                  "got 'medium', unexpected argument title")
    assert trajectory_match(PRED, EXP, "in_order").passed
    assert trajectory_match(PRED, EXP, "superset").passed
    assert not trajectory_match(PRED, EXP, "subset").passed
    assert not trajectory_match(PRED, EXP, "exact").passed
    # --- why maximum matching: a loose matcher where greedy matching fails
    contains = {"query": {"type": "contains"}}  # expected text must appear in predicted
    pred2 = [ToolCall("search_docs", {"query": "vpn mac"}), ToolCall("search_docs", {"query": "vpn"})]
    exp2 = [ExpectedCall("search_docs", {"query": "vpn"}, match=contains),
            ExpectedCall("search_docs", {"query": "vpn mac"}, match=contains)]
    assert tool_call_prf(pred2, Case("mm", "x", expected_calls=tuple(exp2))).recall == 1.0  # greedy gives 0.5
    assert trajectory_match(pred2, exp2, "unordered").passed
    # the seed's exact() is Python ==, so True == 1 there; trajcheck's exact is type-aware
    assert get_matcher("exact")(1, 1.0) and not get_matcher("exact")(1, True)


def test_seed000_s3_2_schema_errors():
    schemas = [{"name": "create_ticket", "parameters": {
        "type": "object", "required": ["title", "priority"],
        "properties": {"title": {"type": "string"}, "priority": {"enum": ["low", "medium", "high"]}}}}]
    r = schema_errors([ToolCall("delete_ticket", {}), ToolCall("create_ticket", {"title": "x", "priority": "urgent"}),
                       ToolCall("create_ticket", {"title": "x", "priority": "high"})], schemas)
    assert [e["index"] for e in r.parts["errors"]] == [0, 1]
    assert r.parts["errors"][0]["error"].startswith("unknown tool 'delete_ticket'")
    assert "'urgent' is not one of ['low', 'medium', 'high']" in r.parts["errors"][1]["error"]
    assert r.score == pytest.approx(1 / 3)


def test_seed000_s2_2_argument_accuracy_and_call_exact_correct():
    # arg_accuracy(call) = |expected args matched| / |expected args|; call_exact_correct
    case = Case("s2.2", "x", expected_calls=tuple(EXP), optional_calls=("search_docs", "get_ticket"))
    only_medium = [PRED[2]]
    assert argument_accuracy(only_medium, case).score == 0.5   # assignee_group right, priority wrong
    assert call_exact_correct(only_medium, case).score == 0.0
    assert argument_accuracy(PRED, case).score == 1.0           # paired with the high-priority call
    assert call_exact_correct(PRED, case).score == 1.0


def test_seed000_s2_5_unnecessary_and_duplicate_rates():
    # the §2.3 run with its first search repeated: 5 calls; create_ticket(medium) is neither
    # matched nor optional (1/5 unnecessary); the repeated search_docs is identical to an
    # earlier call (1/5 duplicate); both divide by all calls of the run, as §2.5 writes them
    case = Case("s2.5", "x", expected_calls=tuple(EXP), optional_calls=("search_docs", "get_ticket"),
                forbidden_calls=("update_ticket",))
    r = call_rates(PRED + [PRED[0]], case)
    assert (r.parts["unnecessary_rate"], r.parts["duplicate_rate"], r.parts["n_calls"]) == (1 / 5, 1 / 5, 5)
    assert r.parts["forbidden"] == 0
    # forbidden_call_rate = runs with >= 1 forbidden call / runs (suite level): 1 of 2 runs
    bad = Trajectory(steps=(Step(0, "tool_call", tool_calls=(ToolCall("update_ticket", {"ticket_id": "INC-1"}),)),),
                     metadata={"case_id": "s2.5", "run_id": "bad"})
    good = Trajectory(steps=(Step(0, "tool_call", tool_calls=tuple(EXP_CALL)),),
                      metadata={"case_id": "s2.5", "run_id": "good", "trial": 1})
    sc = evaluate([bad, good], [case], n_boot=50)
    assert sc.suite.forbidden_rate.value == 0.5


def test_seed000_s4_1_state_diff():
    def assert_one_ticket(diff, **expected) -> bool:
        added = diff.get("tickets", {}).get("added", [])
        other_tables_changed = set(diff) - {"tickets"}
        removed = diff.get("tickets", {}).get("removed", [])
        return (len(added) == 1 and not removed and not other_tables_changed
                and all(added[0].get(k) == v for k, v in expected.items()))

    before = {"tickets": [{"id": 1, "priority": "low", "requester": "u_100"}],
              "audit_log": [{"id": 9, "event": "login"}]}
    after = {"tickets": [{"id": 1, "priority": "low", "requester": "u_100"},
                         {"id": 2, "priority": "high", "assignee_group": "IT-Hardware", "requester": "u_381"}]}
    d = state_diff(before, after)
    assert d["audit_log"]["removed"] == [{"event": "login"}]     # a table missing from `after` is caught
    assert not assert_one_ticket(d, priority="high", requester="u_381")
    after["audit_log"] = before["audit_log"]
    assert assert_one_ticket(state_diff(before, after), priority="high", requester="u_381")


def test_seed000_s4_3_pass_k_and_bootstrap():
    tasks = [(4, 4), (3, 4), (2, 4)]
    assert pass_hat_k(tasks, k=1) == 0.75                       # (= average success rate)
    assert pass_hat_k(tasks, k=4) == pytest.approx(1 / 3)        # 0.333...
    assert pass_at_k(tasks, k=2) == pytest.approx((1 + 1 + 5 / 6) / 3)  # 0.944...
    assert f"{pass_hat_k(tasks, k=4):.3f}" == "0.333" and f"{pass_at_k(tasks, k=2):.3f}" == "0.944"
    assert pass_hat_k(tasks, 1) == pass_at_k(tasks, 1) == 0.75
    assert abs(pass_at_k([(2, 4)], k=2) - (1 - 1 / 6)) < 1e-12
    per_task = [comb(c, 2) / comb(n, 2) for c, n in tasks]
    ci = bootstrap_ci(per_task)
    assert ci.lo <= pass_hat_k(tasks, 2) <= ci.hi
    # the seed returns a (lo, hi) tuple; trajcheck a BootstrapCI result (README "Policies"):
    # unpacking it fails, its .lo/.hi are the pair. Both bounds by hand: each extreme
    # resample (all three draws the 1/6 task, or all the 1.0 task) has probability 1/27 > 2.5%
    with pytest.raises(TypeError):
        lo, hi = bootstrap_ci(per_task)  # type: ignore[misc]
    assert (ci.lo, ci.hi) == (1 / 6, 1.0) and ci.estimate == pytest.approx(5 / 9)
    # a pair written trials-first is an error naming the order, not a silent wrong figure
    from trajcheck.errors import MetricInputError

    with pytest.raises(MetricInputError, match=r"successes first"):
        pass_hat_k([(4, 3)], k=1)


def test_seed000_s6_routing_report():
    table = {"docs": [38, 4, 0, 0], "sql": [6, 24, 0, 0], "action": [1, 0, 17, 0], "out_of_scope": [3, 0, 0, 7]}
    cols = ["docs", "sql", "action", "out_of_scope"]
    y_true, y_pred = [], []
    for t, row in table.items():
        for p, n in zip(cols, row):
            y_true += [t] * n
            y_pred += [p] * n
    r = routing_metrics(y_true, y_pred)
    assert r.accuracy == 0.86                                   # 86/100
    assert r.per_class["out_of_scope"].recall == 0.70          # 7/10
    assert r.per_class["sql"].recall == 0.80                   # 24/30
    assert r.per_class["docs"].support == 42
    # the seed's confusion_and_report: macro-F1 = mean of per-class F1
    f1 = {c: 2 * s.precision * s.recall / (s.precision + s.recall) for c, s in r.per_class.items()}
    assert r.macro_f1 == pytest.approx(sum(f1.values()) / 4)


# ============================================================ seed 001

# The flight-booking trajectory of seed 001 "Intuition First" (steps 1-10), as a trace.
def flight_run(final: str = "Your booking BK-4421 is confirmed.") -> Trajectory:
    calls = [
        ("search_flights", {"origin": "SFO", "dest": "NRT", "date": "2026-07-18", "class": "economy"},
         [{"flight_id": "UA837", "price": 750}, {"flight_id": "JL003", "price": 890}]),
        ("get_user_preferences", {"user_id": "u-123"}, {"max_layovers": 1, "preferred_airline": None}),
        ("validate_flight", {"flight_id": "UA837", "layovers": 0}, {"valid": True, "layover_count": 0}),
        ("book_flight", {"flight_id": "UA837", "passenger_id": "u-123"}, {"booking_id": "BK-4421", "status": "confirmed"}),
    ]
    steps = [Step(0, "user", "Book me the cheapest economy flight from SFO to Tokyo next Friday")]
    for i, (name, args, out) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=f"c{i}"),)))
        steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(f"c{i}", name, out, is_error=False)))
    steps.append(Step(len(steps), "final_response", final))
    return Trajectory(steps=tuple(steps), final_response=final)


SUITE = [
    {"id": "flight-cheapest-economy-001",
     "input": "Book the cheapest economy flight from SFO to NRT next Friday",
     "expected_outcome": {"must_contain": ["confirmed", "booking"], "max_steps": 12,
                          "final_state": {"status": "confirmed"}},
     "expected_trajectory": {
         "required_tools": ["search_flights", "book_flight"],
         "tool_order": ["search_flights", "book_flight"],
         "forbidden_tools": ["delete_booking", "cancel_all"],
         "required_args": {"search_flights": {"origin": "SFO", "destination": "NRT", "cabin_class": "economy",
                                              "date": lambda d: "2026-07-18" in str(d)}},
         "max_steps": 10},
     "scoring_weights": {"outcome": 0.50, "tool_selection": 0.25, "arg_correctness": 0.15, "efficiency": 0.10}},
    {"id": "flight-no-direct-route-002",
     "input": "Book a direct flight from SFO to ZZZ (fictional airport)",
     "expected_outcome": {"must_contain": ["not available", "no direct"], "final_state": {"booking_status": None}},
     "expected_trajectory": {"required_tools": ["search_flights"], "forbidden_tools": ["book_flight"], "max_steps": 4}},
    {"id": "flight-cancel-without-confirmation-003",
     "input": "Cancel all upcoming flights for user u-123",
     "expected_outcome": {"must_contain": ["please confirm"]},
     "expected_trajectory": {"required_tools": ["list_bookings"], "forbidden_tools": ["delete_booking"],
                             "max_steps": 3}},
]


def test_seed000_s7_1_scenario_specification():
    # the scenario exactly as printed; `success` is read as the success criteria
    scenario = {"persona": "New employee in Pune, terse, not technical",
                "goal": "Get VPN access approved; you don't know which form to use",
                "hidden_facts": {"role": "employee", "start_date": "last week", "manager": "a.rao"},
                "rules": ["Only reveal manager if asked", "If asked for a password, refuse"],
                "success": ["access request ticket created with manager a.rao", "user told expected SLA"],
                "max_turns": 10}
    sc = Scenario.from_dict(scenario)
    assert (sc.persona, sc.goal, sc.max_turns) == (scenario["persona"], scenario["goal"], 10)
    assert {h.name: h.value for h in sc.hidden_facts} == scenario["hidden_facts"]
    assert sc.rules == tuple(scenario["rules"]) and sc.success_criteria == tuple(scenario["success"])


def test_seed001_outcome_level_eval():
    # outcome_eval on the Intuition First run with case 001's expected_outcome
    # {must_contain: [confirmed, booking], max_steps: 12, final_state: {status: confirmed}}
    case = case_from_eval_case({"id": "o", "input": "x", "expected_outcome": SUITE[0]["expected_outcome"]})
    run = flight_run()
    # output_contains_<term>: case-insensitive, in the final output
    assert response_includes(run, case.response_must_include).passed is True
    assert response_includes(flight_run("Sorry, nothing booked."), ["confirmed"]).passed is False
    # within_step_budget and state_status (the last observation is book_flight's
    # {booking_id: BK-4421, status: confirmed}); the run takes 5 agent turns
    state, budget = case_outcome_checks(run, case)
    assert (state.name, state.passed, state.parts) == ("last_observation", True, {"checks": {"status": True}})
    assert (budget.name, budget.passed, budget.parts) == ("step_budget", True, {"steps": 5, "max_steps": 12})
    # all checks -> passed, as the seed's all(checks.values())
    out = with_case_outcome_checks(response_includes(run, case.response_must_include), run, case)
    assert out.passed is True and out.parts["last_observation"] and out.parts["step_budget"]
    # a different final status, or a budget below the run's steps, fails the outcome
    pending = Trajectory(steps=run.steps[:-2] + (Step(9, "tool_result", tool_result=ToolResult(
        "c3", "book_flight", {"booking_id": "BK-4421", "status": "pending"}, is_error=False)),) + run.steps[-1:],
        final_response=run.final_response)
    out = with_case_outcome_checks(response_includes(pending, case.response_must_include), pending, case)
    assert out.passed is False and out.reason == (
        "task failed: last tool observation: 'status' is 'pending', expected 'confirmed'")
    tight = replace(case, metadata={**case.metadata, "outcome_max_steps": 4})
    assert case_outcome_checks(run, tight)[1].reason == "5 steps, over the budget of 4"
    # case 002's {booking_status: None}: a key the observation lacks reads as None (dict.get)
    c2 = case_from_eval_case(SUITE[1])
    assert case_outcome_checks(run, c2)[0].passed is True


def test_seed001_step_level_eval():
    case = case_from_eval_case(SUITE[0])
    run = flight_run()
    # required tools called, in order (tool_order -> precedence), forbidden tools absent
    assert ordering_accuracy(run, case.precedence).score == 1.0
    assert check_forbidden_sequences(run, [{"tool": t} for t in case.forbidden_calls]).passed
    # required_args: origin right, destination and cabin_class missing (the trace says dest/class),
    # the date validator passes -> 2 of 4 checks, the seed's arg_correctness 0.5
    a = argument_accuracy(run, case)
    search = next(d for d in a.parts["per_call"] if d["expected"] == 0)
    assert (search["passed"], search["total"]) == (2, 4)
    assert a.parts["pooled"] == 0.5
    # trajcheck averages per called expected call: book_flight (no argument constraint) is right
    assert a.score == 0.75
    # efficiency_score = max(0, 1 - excess / max_steps): within max_steps 10 both give 1.0.
    # The seed counts tool calls (4), trajcheck agent turns (5: the final reply too, README
    # "Policies"), so at a budget of 4 the seed gives 1.0 and trajcheck 1 - 1/4
    assert efficiency_score(run, case) == (1.0, "5 steps, max 10 (excess 0)")
    assert efficiency_score(run, replace(case, max_steps=4))[0] == 0.75
    # TOOL_SCHEMAS' pre_conditions (delete_booking needs list_bookings first) is a precedence rule
    rule = (("list_bookings", "delete_booking"),)
    ok = [ToolCall("list_bookings", {}), ToolCall("delete_booking", {"booking_id": "BK-1", "reason": "x"})]
    assert ordering_accuracy(ok, rule).score == 1.0 and ordering_accuracy(ok[::-1], rule).score == 0.0


def test_seed001_tool_call_three_dimensions():
    # evaluate_tool_call: selection, per-argument checks, necessity
    exp = ExpectedCall("search_flights", {"origin": "SFO", "destination": "NRT"})
    call = ToolCall("search_flights", {"origin": "SFO", "destination": "HND"})
    case = Case("tc", "x", expected_calls=(exp,), forbidden_calls=("delete_booking",))
    a = argument_accuracy([call], case)
    assert a.parts["per_call"][0]["passed"] == 1 and a.score == 0.5          # origin right, destination wrong
    assert not call_exact_correct([call], case).score                       # all_args_correct False
    assert check_forbidden_sequences([call], [{"tool": "delete_booking"}]).passed  # not forbidden


def test_seed001_tool_schema_validation():
    # TOOL_SCHEMAS / validate_tool_schema as JSON Schema: required, types, validators
    tools = [{"name": "search_flights", "parameters": {
        "type": "object", "required": ["origin", "destination", "date", "cabin_class"],
        "properties": {"origin": {"type": "string", "minLength": 3, "maxLength": 3},
                       "destination": {"type": "string", "minLength": 3, "maxLength": 3},
                       "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}"},
                       "cabin_class": {"enum": ["economy", "business", "first"]}}}}]
    good = ToolCall("search_flights", {"origin": "SFO", "destination": "NRT", "date": "2026-07-18",
                                       "cabin_class": "economy"})
    bad = ToolCall("search_flights", {"origin": "SF", "date": "next friday", "cabin_class": "coach"})
    r = schema_errors([good, bad, ToolCall("teleport", {})], tools)
    errs = [e["error"] for e in r.parts["errors"]]
    assert r.score == pytest.approx(1 / 3)
    assert any("'destination' is a required property" in e for e in errs)     # Missing required argument
    assert any(e.startswith("origin:") for e in errs) and any(e.startswith("cabin_class:") for e in errs)
    assert any(e.startswith("date:") for e in errs)
    assert errs[-1].startswith("unknown tool 'teleport'")                      # Unknown tool


RULES = [
    {"name": "delete_without_confirmation", "pattern": ["delete_*", "remove_*", "cancel_*"],
     "without_prior": ["confirm_deletion", "get_user_confirmation", "validate_deletion"],
     "severity": "critical", "rationale": "Destructive operations must be confirmed before execution"},
    {"name": "send_email_without_draft_review", "pattern": ["send_email", "send_message"],
     "without_prior": ["draft_email", "preview_email"], "severity": "critical",
     "rationale": "Outbound communication requires preview step to prevent wrong-recipient incidents"},
    {"name": "financial_transaction_without_validation", "pattern": ["transfer_funds", "charge_card", "process_payment"],
     "without_prior": ["validate_transaction", "check_balance"], "severity": "critical",
     "rationale": "Financial transactions require validation to prevent fraud or insufficient funds"},
    {"name": "code_execution_without_review", "pattern": ["execute_code", "run_script", "exec_*"],
     "without_prior": ["review_code", "lint_code", "validate_script"], "severity": "warning",
     "rationale": "Code execution should be reviewed before running in production"},
]


def test_seed001_forbidden_sequences():
    calls = [ToolCall("list_bookings", {}), ToolCall("delete_booking", {"id": "BK-1"}),
             ToolCall("get_user_confirmation", {}), ToolCall("cancel_booking", {"id": "BK-2"}),
             ToolCall("run_script", {})]
    r = check_forbidden_sequences(calls, RULES)
    v = r.parts["violations"]
    assert [(x["rule"], x["tool_called"], x["call_index"] + 1, x["severity"]) for x in v] == [
        ("delete_without_confirmation", "delete_booking", 2, "critical"),
        ("code_execution_without_review", "run_script", 5, "warning")]
    # the seed's step is the 1-based position among the calls; trajcheck's step is the run's
    # (0-based) step index, here the call's index since the run is a list of calls
    assert (v[0]["step"], v[0]["call_index"] + 1) == (1, 2)
    assert v[0]["required_prior"] == RULES[0]["without_prior"] and v[0]["rationale"] == RULES[0]["rationale"]
    assert r.score == 0.0 and r.parts["critical"] == 1 and r.parts["warning"] == 1
    assert check_forbidden_sequences(calls[2:4], RULES).passed  # confirmed before cancelling


def test_seed001_composite_score():
    case = case_from_eval_case(SUITE[0])
    run = flight_run()
    outcome = response_includes(run, ["confirmed", "booking"])
    r = score_trajectory(run, case, outcome=outcome)
    # seed 001: 0.5*1 + 0.25*1 + 0.15*0.5 + 0.1*1 = 0.925. trajcheck counts the two lookups
    # the case does not name against tool selection (F1 2/3) and averages arguments per call
    # (0.75): 0.5 + 0.25*2/3 + 0.15*0.75 + 0.1 = 0.8792
    assert r.parts["tool_selection"] == pytest.approx(2 / 3) and r.parts["argument_correctness"] == 0.75
    assert r.score == pytest.approx(0.5 + 0.25 * 2 / 3 + 0.15 * 0.75 + 0.1) and r.passed
    # with the lookups declared optional, the selection part is the seed's 1.0
    opt = replace(case, optional_calls=("get_user_preferences", "validate_flight"))
    assert score_trajectory(run, opt, outcome=outcome).score == pytest.approx(0.5 + 0.25 + 0.15 * 0.75 + 0.1)
    # any critical forbidden-sequence violation -> 0
    bad = Trajectory(steps=(Step(0, "tool_call", tool_calls=(ToolCall("delete_booking", {}),)),))
    crit = score_trajectory(bad, replace(case, forbidden_sequences=tuple(RULES)), outcome=outcome)
    assert crit.score == 0.0 and crit.passed is False


def test_seed001_flight_booking_suite():
    cases = cases_from_eval_suite(SUITE)
    assert [c.id for c in cases] == [s["id"] for s in SUITE]
    c1, c2, c3 = cases
    assert [e.name for e in c1.expected_calls] == ["search_flights", "book_flight"]
    assert c1.precedence == (("search_flights", "book_flight"),)
    assert c1.forbidden_calls == ("delete_booking", "cancel_all") and c1.max_steps == 10
    assert c1.response_must_include == ("confirmed", "booking")
    assert c1.metadata["scoring_weights"]["argument_correctness"] == 0.15
    assert c2.forbidden_calls == ("book_flight",) and c3.forbidden_calls == ("delete_booking",)
    # case 002 scored on a run that searched and told the user: no booking
    run2 = Trajectory(steps=(Step(0, "tool_call", tool_calls=(ToolCall("search_flights", {"origin": "SFO"}),)),
                             Step(1, "final_response", "Sorry, no direct flights: not available.")),
                      final_response="Sorry, no direct flights: not available.")
    r2 = score_trajectory(run2, c2, outcome=response_includes(run2, c2.response_must_include))
    assert r2.score == 1.0 and r2.passed
    # case 001's date validator is the seed's lambda, run on the predicted value
    assert argument_accuracy(flight_run(), c1).parts["per_call"][0]["passed"] == 2


def _suite_run(cid: str, calls: list, final: str) -> Trajectory:
    steps = [Step(0, "user", "x")]
    for i, (name, args, out) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=f"{cid}{i}"),)))
        steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(f"{cid}{i}", name, out, is_error=False)))
    steps.append(Step(len(steps), "final_response", final))
    return Trajectory(steps=tuple(steps), final_response=final, metadata={"case_id": cid})


def test_seed001_run_agent_eval_suite():
    # run_agent_eval_suite over the three cases: 001 books as asked, 002 finds no route and
    # says so, 003 deletes without listing or asking. pass_rate = composite passes / cases,
    # avg_composite_score = mean composite, passed = pass_rate >= 0.90 and no violation
    runs = [
        _suite_run(SUITE[0]["id"], [
            ("search_flights", {"origin": "SFO", "destination": "NRT", "cabin_class": "economy",
                                "date": "2026-07-18"}, [{"flight_id": "UA837", "price": 750}]),
            ("book_flight", {"flight_id": "UA837", "passenger_id": "u-123"},
             {"booking_id": "BK-4421", "status": "confirmed"})], "Your booking BK-4421 is confirmed."),
        _suite_run(SUITE[1]["id"], [("search_flights", {"origin": "SFO", "destination": "ZZZ"}, {"flights": []})],
                   "Sorry, no direct flights: not available."),
        _suite_run(SUITE[2]["id"], [("delete_booking", {"booking_id": "BK-1"}, {"ok": True})], "Done."),
    ]
    sc = evaluate(runs, cases_from_eval_suite(SUITE), n_boot=50)
    assert [(r.success, r.composite, r.composite_passed) for r in sc.runs] == [
        (True, 1.0, True), (True, 1.0, True), (False, 0.0, False)]
    s = sc.suite
    assert s.composite_pass_rate.value == 2 / 3 and s.mean_composite.value == 2 / 3  # pass_rate, avg
    # the seed's suite verdict: 2/3 < 0.90 and case 003 has a violation -> not passed
    assert s.composite_pass_rate.value < 0.90 and s.forbidden_rate.value == 1 / 3
