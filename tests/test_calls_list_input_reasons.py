"""List-of-ToolCall input for every trajectory metric, and the reason strings of
tool_call_prf (wrong arguments), the composite (all parts perfect) and
check_forbidden_sequences (singular/plural, forbidden calls)."""

from __future__ import annotations

import pytest

from trajcheck.errors import MetricInputError
from trajcheck.match.matchers import MatchContext
from trajcheck.metrics.calls import (
    argument_provenance,
    as_trajectory,
    tool_call_prf,
)
from trajcheck.metrics.composite import score_trajectory
from trajcheck.metrics.efficiency import agent_steps, run_stats
from trajcheck.metrics.outcome import outcome_from_calls, response_includes
from trajcheck.metrics.planning import plan_adherence
from trajcheck.metrics.recovery import longest_retry_run, max_retries_exceeded, recovery_rate
from trajcheck.metrics.sequences import (
    call_rates,
    check_forbidden_sequences,
    error_recovery,
    ordering_accuracy,
)
from trajcheck.metrics.steps import step_eval
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory

CALLS = [ToolCall("lookup", {"id": 1}), ToolCall("lookup", {"id": 1}),
         ToolCall("update_ticket", {"id": 1, "status": "closed"}), ToolCall("delete", {})]
CASE = Case("c1", "close ticket 1",
            expected_calls=(ExpectedCall("lookup", {"id": 1}),
                            ExpectedCall("update_ticket", {"id": 1, "status": "closed"})),
            forbidden_calls=("delete",), precedence=(("lookup", "update_ticket"),))


def _traj(calls: list[ToolCall]) -> Trajectory:
    return Trajectory(steps=tuple(Step(i, "tool_call", tool_calls=(c,)) for i, c in enumerate(calls)))


def test_as_trajectory_one_step_per_call() -> None:
    t = as_trajectory(CALLS)
    assert t.tool_calls() == CALLS
    assert [si for si, _ in t.iter_call_steps()] == [0, 1, 2, 3]
    with pytest.raises(MetricInputError, match=r"x: item 1 is str, not a ToolCall"):
        as_trajectory([CALLS[0], "lookup"], what="x")


def test_call_rates_accepts_list_same_as_trajectory() -> None:
    r = call_rates(CALLS, CASE)
    # 4 counted: call 1 duplicate+unnecessary, call 3 forbidden+unnecessary
    assert r.parts["unnecessary"] == 2 and r.parts["duplicate"] == 1 and r.parts["forbidden"] == 1
    assert r.score == pytest.approx(2 / 4)
    assert r.to_dict() == call_rates(_traj(CALLS), CASE).to_dict()


def test_step_eval_ordering_forbidden_accept_list() -> None:
    ev = step_eval(CALLS, CASE)
    assert [p.verdict for p in ev.predicted] == ["matched", "duplicate", "matched", "forbidden"]
    assert ev.score == 1.0
    o = ordering_accuracy(CALLS, CASE.precedence)
    assert o.score == 1.0 and o.parts["held"] == 1
    assert ordering_accuracy(CALLS[::-1], CASE.precedence).score == 0.0
    f = check_forbidden_sequences(CALLS, [{"tool": "delete"}])
    assert f.parts["critical"] == 1 and f.parts["violations"][0]["call_index"] == 3
    assert plan_adherence(["lookup", "update_ticket"], CALLS).score == 1.0


@pytest.mark.parametrize("fn, what", [
    (lambda: error_recovery(CALLS), "error_recovery"),
    (lambda: outcome_from_calls(CALLS, CASE), "outcome_from_calls"),
    (lambda: score_trajectory(CALLS, CASE), "score_trajectory"),
    (lambda: agent_steps(CALLS), "agent_steps"),
    (lambda: run_stats(CALLS, True), "run_stats"),
    (lambda: argument_provenance(CALLS, CASE), "argument_provenance"),
    (lambda: longest_retry_run(CALLS), "longest_retry_run"),
    (lambda: max_retries_exceeded(CALLS), "max_retries_exceeded"),
    (lambda: recovery_rate([(CALLS, True)]), "run 0"),
])
def test_metrics_needing_results_reject_list_by_name(fn, what) -> None:
    with pytest.raises(MetricInputError,
                       match=rf"^{what}: expected a Trajectory, got a (list|tuple); it needs .*"
                             "which a list of ToolCall does not carry"):
        fn()


def test_response_includes_rejects_list() -> None:
    with pytest.raises(MetricInputError, match="a list of ToolCall carries no response text"):
        response_includes(CALLS, ["closed"])


# ---- tool_call_prf reason -----------------------------------------------------------

TICKET = Case("t", "reopen ticket 7",
              expected_calls=(ExpectedCall("update_ticket", {"id": 7, "status": "open"}),))


def test_prf_reason_names_first_argument_difference() -> None:
    r = tool_call_prf([ToolCall("update_ticket", {"id": 7, "status": "closed"})], TICKET)
    assert r.reason == ("precision 0.000 (0/1 counted calls matched), recall 0.000 "
                        "(0/1 expected calls found), F1 0.000; missing: update_ticket; "
                        "unexpected: update_ticket; update_ticket: status: expected 'open', "
                        "got 'closed'")


def test_prf_reason_first_missing_with_same_tool_pair_and_modes() -> None:
    case = Case("t2", "x", expected_calls=(ExpectedCall("lookup", {"id": 1}),
                                           ExpectedCall("update_ticket", {"id": 7})))
    calls = [ToolCall("search", {}), ToolCall("update_ticket", {"id": 7, "note": "hi"})]
    r = tool_call_prf(calls, case, args_mode="exact_keys")
    assert r.reason.endswith("; missing: lookup, update_ticket; unexpected: search, "
                             "update_ticket; update_ticket: unexpected argument note")
    # expected_keys (the default) accepts the extra key: a match, no note
    assert tool_call_prf(calls, case).reason.endswith("; missing: lookup; unexpected: search")
    assert tool_call_prf(calls, case, args_mode="expected_keys").reason.endswith(
        "; missing: lookup; unexpected: search")


def test_prf_reason_unchanged_without_same_tool_pair() -> None:
    r = tool_call_prf([ToolCall("search", {})], TICKET)
    assert r.reason.endswith("; missing: update_ticket; unexpected: search")
    ok = tool_call_prf([ToolCall("update_ticket", {"id": 7, "status": "open"})], TICKET)
    assert ok.reason == ("precision 1.000 (1/1 counted calls matched), recall 1.000 "
                         "(1/1 expected calls found), F1 1.000")


def test_prf_reason_semantic_shows_similarity() -> None:
    case = Case("s", "x", expected_calls=(ExpectedCall(
        "search", {"q": "red shoes"}, match={"q": {"type": "semantic", "threshold": 0.8}}),))
    ctx = MatchContext(semantic_scorer=lambda a, b: 0.25)
    r = tool_call_prf([ToolCall("search", {"q": "blue hats"})], case, context=ctx)
    assert r.reason.endswith("; search: q: semantic match failed: expected 'red shoes', "
                             "got 'blue hats' (similarity 0.250 < 0.80)")


# ---- composite / forbidden reasons --------------------------------------------------

def test_composite_all_parts_perfect_says_so() -> None:
    case = Case("p", "close ticket 7",
                expected_calls=(ExpectedCall("update_ticket", {"id": 7}),))
    r = score_trajectory(_traj([ToolCall("update_ticket", {"id": 7})]), case)
    assert r.score == 1.0
    assert r.reason == "composite 1.000 >= 0.80 (pass); all parts 1.000"
    r2 = score_trajectory(_traj([ToolCall("update_ticket", {"id": 8})]), case)
    assert r2.reason.startswith("composite ") and "; weakest: outcome 0.000" in r2.reason


def test_forbidden_reason_singular_plural_and_forbidden_calls() -> None:
    t = _traj([ToolCall("lookup", {})])
    assert check_forbidden_sequences(t, [{"tool": "delete"}]).reason == \
        "no violations of 1 forbidden-sequence rule"
    assert check_forbidden_sequences(t, [{"tool": "delete"}, {"tool": "drop"}]).reason == \
        "no violations of 2 forbidden-sequence rules"
    rules = [{"tool": "delete", "name": "forbidden_calls[0]"}]
    assert check_forbidden_sequences(t, rules).reason == "none of 1 forbidden call made"
    rules.append({"tool": "drop", "name": "forbidden_calls[1]"})
    rules.append({"tool": "x"})
    assert check_forbidden_sequences(t, rules).reason == \
        "no violations of 1 forbidden-sequence rule; none of 2 forbidden calls made"
