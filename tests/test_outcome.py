"""trajcheck.metrics.outcome: state_diff, check_final_state, response_includes, task_success,
outcome_from_calls -- worked examples, a brute-force property, and tau-bench's recorded rewards."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.metrics.outcome import (
    check_final_state,
    outcome_from_calls,
    response_includes,
    state_diff,
    task_success,
)
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory

DATA = Path(__file__).parent / "data" / "tau_bench"

T1 = {"id": 1, "title": "VPN", "priority": "low", "status": "open"}
T2 = {"id": 2, "title": "Laptop", "priority": "high", "status": "open"}
A = [{"id": i, "action": "create", "ticket_id": i} for i in (1, 2, 3)]


# ------------------------------------------------------------------ state_diff

def test_dropped_audit_log_table_is_caught() -> None:
    before = {"tickets": [T1], "audit_log": A}
    after = {"tickets": [T1, T2]}  # the agent created the ticket... and dropped audit_log
    d = state_diff(before, after)
    assert d.added == {"tickets": (T2,)}
    assert d.removed == {"audit_log": tuple(A)}
    assert d.tables_dropped == ("audit_log",) and not d.is_empty
    assert d.summary() == "audit_log: +0 -3 (dropped); tickets: +1 -0"
    res = check_final_state(before, after, {"tickets": [{"title": "Laptop", "priority": "high"}]})
    assert res.passed is False and res.score == 0.0
    assert res.reason == "table audit_log: dropped (3 rows removed)"
    # emptied instead of dropped: same rows removed, the table still exists
    res2 = check_final_state(before, {"tickets": [T1, T2], "audit_log": []},
                             {"tickets": [{"title": "Laptop"}]})
    assert res2.reason == "table audit_log: 3 rows removed"


def test_changed_row_is_one_removed_one_added_and_volatile_fields_ignored() -> None:
    before = {"tickets": [T1, T2]}
    closed = {**T1, "status": "closed", "updated_at": "2024-05-01"}
    d = state_diff(before, {"tickets": [closed, T2]})
    assert d.removed == {"tickets": (T1,)} and d.added == {"tickets": (closed,)}
    # only id / updated_at differ -> no change under the default ignore list
    d2 = state_diff({"t": [{"id": 1, "x": 1, "updated_at": "a"}]}, {"t": [{"id": 9, "x": 1, "updated_at": "b"}]})
    assert d2.is_empty and d2.summary() == "no change"
    # with ignore=() they count
    d3 = state_diff({"t": [{"id": 1, "x": 1}]}, {"t": [{"id": 9, "x": 1}]}, ignore=())
    assert d3.summary() == "t: +1 -1"


def test_multiset_semantics_and_type_awareness() -> None:
    r = {"k": "a", "n": 2}
    d = state_diff({"t": [r, r, {"k": "b", "n": 1}]}, {"t": [{"k": "b", "n": 1.0}, r]})
    assert d.removed == {"t": (r,)} and d.added == {}  # 2 == 2.0 and 1 == 1.0; one duplicate gone
    d2 = state_diff({"t": [{"flag": True}]}, {"t": [{"flag": 1}]})
    assert d2.removed == {"t": ({"flag": True},)} and d2.added == {"t": ({"flag": 1},)}  # True != 1
    d3 = state_diff({"t": [{"j": {"a": 1, "b": [1, 2]}}]}, {"t": [{"j": {"b": [1, 2], "a": 1}}]})
    assert d3.is_empty  # dicts by key regardless of order
    d4 = state_diff({"t": [{"j": [1, 2]}]}, {"t": [{"j": [2, 1]}]})
    assert not d4.is_empty  # lists in order


def test_nan_in_rows() -> None:
    nan = float("nan")
    assert state_diff({"m": [{"v": nan}]}, {"m": [{"v": nan}]}).is_empty  # unchanged NaN is no change
    d = state_diff({"m": [{"v": nan}]}, {"m": [{"v": 0.0}]})
    assert d.summary() == "m: +1 -1"
    res = check_final_state({"m": []}, {"m": [{"v": nan, "k": "x"}]}, {"m": [{"k": "x", "v": nan}]})
    assert res.passed is True
    assert check_final_state({"m": []}, {"m": [{"v": 1.0}]}, {"m": [{"v": nan}]}).passed is False


def test_bad_state_input() -> None:
    with pytest.raises(MetricInputError, match="table 't' row 1 must be a dict"):
        state_diff({"t": [{"a": 1}, 5]}, {})
    with pytest.raises(MetricInputError, match="must be a list of row dicts"):
        state_diff({"t": "rows"}, {})
    with pytest.raises(MetricInputError, match="mapping"):
        state_diff([1], {})  # type: ignore[arg-type]


row_values = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b"]), st.none(), st.booleans())
rows = st.lists(st.fixed_dictionaries({"x": row_values, "y": row_values}), max_size=6)


@settings(max_examples=200, deadline=None)
@given(before=st.dictionaries(st.sampled_from(["t", "u"]), rows),
       after=st.dictionaries(st.sampled_from(["t", "u"]), rows))
def test_diff_turns_before_into_after(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Brute force: before - removed + added == after, as multisets, per table."""
    d = state_diff(before, after, ignore=())

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return tuple((k, type(v).__name__ if isinstance(v, bool) else "", v) for k, v in sorted(r.items()))

    for t in set(before) | set(after):
        got = Counter(key(r) for r in before.get(t, []))
        got.subtract(Counter(key(r) for r in d.removed.get(t, ())))
        assert all(v >= 0 for v in got.values())
        got.update(Counter(key(r) for r in d.added.get(t, ())))
        assert +got == Counter(key(r) for r in after.get(t, []))
    assert d.is_empty == (all(Counter(map(key, before.get(t, []))) == Counter(map(key, after.get(t, [])))
                              for t in set(before) | set(after)) and set(before) == set(after))


# ------------------------------------------------------------------ check_final_state

def test_expected_rows_use_maximum_matching() -> None:
    # Greedy in order would give E1 -> A1 and leave E2 unmatched; maximum matching pairs both.
    before: dict[str, list[dict[str, Any]]] = {"tickets": []}
    a1 = {"id": 5, "priority": "high", "group": "IT"}
    a2 = {"id": 6, "priority": "high", "group": "HR"}
    expected = {"tickets": [{"priority": "high"}, {"priority": "high", "group": "IT"}]}
    res = check_final_state(before, {"tickets": [a1, a2]}, expected)
    assert res.passed is True and res.parts["matched"] == 2 and res.parts["expected"] == 2


def test_final_state_reasons() -> None:
    before = {"tickets": [T1], "audit_log": A[:1]}
    t3 = {"id": 3, "title": "New", "priority": "high", "status": "open"}
    after = {"tickets": [T1, t3, T2], "audit_log": A[:1]}
    res = check_final_state(before, after, {"tickets": [{"title": "New"}]})
    assert res.passed is False
    assert res.reason == f"unexpected added row in tickets: {T2!r}"
    res2 = check_final_state(before, {"tickets": [T1], "audit_log": A[:1]}, {"tickets": [{"title": "New"}]})
    assert res2.reason == "expected row not added in tickets: {'title': 'New'}"
    res3 = check_final_state(before, {"tickets": [T1, t3], "audit_log": A}, {"tickets": [{"title": "New"}]})
    assert res3.reason.startswith("unexpected added row in audit_log: ") and res3.reason.endswith("(and 1 more)")
    # nothing expected and nothing changed: success; None: not applicable
    assert check_final_state(before, before, {}).passed is True
    na = check_final_state(before, before, None)
    assert (na.score, na.passed) == (None, None)


def test_final_state_matchers_and_updates() -> None:
    before = {"tickets": [T1]}
    after = {"tickets": [{**T1, "status": "closed"}, {"id": 2, "title": "  laptop   WON'T boot ", "priority": "high"}]}
    spec = {"tickets": {"added": [{"title": "Laptop won't boot", "priority": "high"}, {"id": 1, "status": "closed"}],
                        "removed": [{"id": 1, "status": "open"}]}}
    assert check_final_state(before, after, spec).passed is False  # exact title differs
    ok = check_final_state(before, after, spec, matchers={"tickets": {"title": "normalized"}})
    assert ok.passed is True, ok.reason
    ok2 = check_final_state(before, after, spec, matchers={"*": {"title": "normalized"}})
    assert ok2.passed is True
    # an update the expectation does not allow is a removal
    res = check_final_state(before, after, {"tickets": [{"priority": "high"}, {"status": "closed"}]})
    assert res.reason == "table tickets: 1 row removed"
    with pytest.raises(MetricInputError, match="unknown keys"):
        check_final_state(before, after, {"tickets": {"add": []}})


# ------------------------------------------------------------------ response_includes / task_success

def _traj(*steps: Step, final: str | None = None) -> Trajectory:
    return Trajectory(steps=tuple(steps), final_response=final)


def test_response_includes_tau_bench_rules() -> None:
    t = _traj(Step(0, "user", "how much?"),
              Step(1, "tool_result", tool_result=ToolResult("c", "calc", "1786")),
              Step(2, "assistant", "The refund is $1,786 in total."),
              Step(3, "final_response", "Anything else? Your Certificate code is SAVE-1000."),
              final="Anything else? Your Certificate code is SAVE-1000.")
    r = response_includes(t, ["1786", "certificate", "1,000"])
    assert (r.score, r.passed, r.parts["missing"]) == (1.0, True, [])
    r2 = response_includes(t, ["1786", "23553"])
    assert (r2.score, r2.passed, r2.reason) == (0.5, False, "response is missing '23553'")
    # tool results and user text are not the agent's response
    r3 = response_includes(_traj(Step(0, "user", "23553"), Step(1, "tool_result",
                                  tool_result=ToolResult("c", "x", "23553"))), ["23553"])
    assert r3.passed is False
    assert response_includes("Total: 12,345,678 USD", ["12345678"]).passed is True
    assert response_includes("anything", []).score == 1.0
    with pytest.raises(MetricInputError):
        response_includes("x", "abc")


def test_task_success_needs_both() -> None:
    ok = MetricResult("final_state", 1.0, "ok", {}, True)
    bad = MetricResult("response_includes", 0.5, "response is missing 'x'", {}, False)
    assert task_success(ok, None).passed is True
    r = task_success(ok, bad)
    assert (r.passed, r.score) == (False, 0.0) and r.reason == "task failed: response: response is missing 'x'"
    assert task_success(None, None).passed is None


# ------------------------------------------------------------------ outcome_from_calls

def _run(calls: list[tuple[str, dict[str, Any], bool]], final: str = "done") -> Trajectory:
    steps: list[Step] = []
    for i, (name, args, err) in enumerate(calls):
        steps.append(Step(len(steps), "tool_call", tool_calls=(ToolCall(name, args, call_id=f"c{i}"),)))
        steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(f"c{i}", name, "x", is_error=err)))
    steps.append(Step(len(steps), "final_response", final))
    return Trajectory(steps=tuple(steps), final_response=final)


CASE = Case(id="c1", input="book it", expected_calls=(
    ExpectedCall("get_user", {"id": "u1"}), ExpectedCall("book", {"flight": "HAT1"})),
    optional_calls=("get_user", "search"), response_must_include=("booked",))


def test_outcome_from_calls_worked_examples() -> None:
    good = _run([("search", {"q": 1}, False), ("book", {"flight": "HAT1"}, True), ("book", {"flight": "HAT1"}, False)],
                final="Your flight is booked.")
    r = outcome_from_calls(good, CASE)
    assert r.passed is True, r.reason  # the failed first attempt changed nothing
    dup = _run([("book", {"flight": "HAT1"}, False), ("book", {"flight": "HAT1"}, False)], final="booked")
    r2 = outcome_from_calls(dup, CASE)
    assert r2.passed is False and r2.parts["extra_calls"] == [1]
    assert r2.reason == "case 'c1': unexpected state-changing call 1 of the run: book {'flight': 'HAT1'}"
    none = _run([("get_user", {"id": "u1"}, False)], final="booked")
    assert outcome_from_calls(none, CASE).parts["missing_expected"] == [1]
    quiet = _run([("book", {"flight": "HAT1"}, False)], final="ok")
    assert outcome_from_calls(quiet, CASE).passed is False
    assert outcome_from_calls(quiet, CASE, check_response=False).passed is True


# ------------------------------------------------------------------ tau-bench agreement

def _touched_states(touched: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], ...]:
    """Turn touched_records {table: {key: {initial, expected_final, agent_final}}} into three
    snapshots {table: [row + {"_key": key}]}; a record absent on one side (None) is no row."""
    before: dict[str, list[dict[str, Any]]] = {}
    expected: dict[str, list[dict[str, Any]]] = {}
    agent: dict[str, list[dict[str, Any]]] = {}
    for table, recs in touched.items():
        for key, rec in recs.items():
            for snap, side in ((before, "initial"), (expected, "expected_final"), (agent, "agent_final")):
                snap.setdefault(table, [])
                if rec[side] is not None:
                    snap[table].append({"_key": key, **rec[side]})
    return before, expected, agent


def test_final_state_agrees_with_tau_bench_r_actions() -> None:
    rows = [json.loads(line) for line in (DATA / "gpt-4o-airline_final_state.jsonl").open()]
    assert len(rows) == 200
    n = agree = agree_direct = successes = 0
    for r in rows:
        if r["r_actions"] is None:
            continue
        n += 1
        want = r["r_actions"] == 1.0
        successes += want
        before, expected, agent = _touched_states(r["touched_records"])
        exp_diff = state_diff(before, expected, ignore=())
        spec = {t: {"added": list(exp_diff.added.get(t, ())), "removed": list(exp_diff.removed.get(t, ()))}
                for t in exp_diff.changed_tables}
        res = check_final_state(before, agent, spec, ignore=())
        agree += res.passed == want
        agree_direct += state_diff(expected, agent, ignore=()).is_empty == want
    assert (n, successes) == (182, 81)
    assert agree == 182
    assert agree_direct == 182


def _tau_runs() -> tuple[list[Trajectory], dict[str, Case]]:
    path = DATA / "gpt-4o-airline.json"
    try:
        from trajcheck.read.traces import load  # type: ignore[attr-defined]
    except ImportError:
        from trajcheck.read.traces.tau_bench import read_records

        trajs, cases, problems = read_records(json.loads(path.read_text()))
        assert problems == []
        return trajs, cases
    res = load(str(path))
    return list(res.trajectories), dict(res.cases)


def test_calls_alone_agree_with_tau_bench_r_actions() -> None:
    trajs, cases = _tau_runs()
    assert len(trajs) == 200
    n = 0
    disagree = []
    for t in trajs:
        info = t.metadata.get("reward_info") or {}
        if "r_actions" not in info:
            continue
        n += 1
        res = outcome_from_calls(t, cases[t.metadata["case_id"]], check_response=False)
        if res.passed != (info["r_actions"] == 1.0):
            disagree.append((t.metadata["run_id"], info["r_actions"], res.parts["missing_expected"],
                             res.parts["extra_calls"]))
    assert n == 182
    # All 182 agree. Task 5 trial 1 (r_actions 1) used to be the one disagreement: the
    # agent's update_reservation_flights put extra "origin"/"destination" keys inside the
    # flights[] items, which tau-bench's tool overwrites from its flight table
    # (realdata.md §1.5). The case now says so: the tau-bench reader gives that argument the
    # ``fields`` matcher ignoring price/origin/destination (tau_domains.TAU_BENCH).
    assert disagree == []
    t51 = next(t for t in trajs if t.metadata["run_id"] == "5-1")
    calls = t51.tool_calls()
    assert all({"origin", "destination"} <= set(f) for f in calls[4].args["flights"])  # type: ignore[index]
    assert cases["5"].expected_calls[0].match == {
        "flights": {"type": "fields", "ignore": ["price", "origin", "destination"]}}
    r51 = outcome_from_calls(t51, cases["5"], check_response=False)
    assert r51.passed is True and r51.parts["missing_expected"] == [] and r51.parts["extra_calls"] == []
    # without the matcher the call differs, and the reason says where
    from dataclasses import replace
    bare = replace(cases["5"], expected_calls=tuple(replace(e, match={}) for e in cases["5"].expected_calls))
    r_bare = outcome_from_calls(t51, bare)
    assert r_bare.reason.startswith(
        "case '5': expected call 0 (update_reservation_flights) not matched: closest call 4 of "
        "the run differs: flights[0]: unexpected keys origin, destination")


# ------------------------------------------------------------------ failure reasons (wording)

def test_explain_mismatch_names_the_first_differing_place() -> None:
    from trajcheck.match.explain import explain_mismatch, value_diff

    exp = ExpectedCall("book", {"flight": "HAT1", "pax": [{"name": "A", "age": 30}], "n": 2})
    ok = ToolCall("book", {"flight": "HAT1", "pax": [{"name": "A", "age": 30.0}], "n": 2.0})
    assert explain_mismatch(ok, exp) is None  # 2 == 2.0: the exact matcher agrees
    cases = [
        ({"flight": "HAT1", "pax": [{"name": "A", "age": 30}]}, "n: missing (expected 2)"),
        ({"flight": "HAT2", "pax": [{"name": "A", "age": 30}], "n": 2}, "flight: expected 'HAT1', got 'HAT2'"),
        ({"flight": "HAT1", "pax": [{"name": "A", "age": 31}], "n": 2}, "pax[0].age: expected 30, got 31"),
        ({"flight": "HAT1", "pax": [{"name": "A"}], "n": 2}, "pax[0]: missing key age"),
        ({"flight": "HAT1", "pax": [{"name": "A", "age": 30, "x": 1, "y": 2}], "n": 2},
         "pax[0]: unexpected keys x, y"),
        ({"flight": "HAT1", "pax": [], "n": 2}, "pax: expected 1 item, got 0"),
        ({"flight": "HAT1", "pax": [{"name": "A", "age": 30}], "n": "2"},
         "n: type differs: expected int 2, got str '2'"),
        ({"flight": "HAT1", "pax": [{"name": "A", "age": True}], "n": 2},
         "pax[0].age: type differs: expected int 30, got bool True"),
        ({"flight": "HAT1", "pax": [{"name": "A", "age": 30}], "n": 2, "z": 0}, "unexpected argument z"),
    ]
    for args, why in cases:
        assert explain_mismatch(ToolCall("book", args), exp, args_mode="exact_keys") == why, args
    # expected_keys mode (the default) allows the extra argument; ignore mode compares names only
    extra = ToolCall("book", {"flight": "HAT1", "pax": [{"name": "A", "age": 30}], "n": 2, "z": 0})
    assert explain_mismatch(extra, exp) is None
    assert explain_mismatch(extra, exp, args_mode="expected_keys") is None
    assert explain_mismatch(ToolCall("book", {}), exp, args_mode="ignore") is None
    assert explain_mismatch(ToolCall("cancel", {}), exp) == "name differs: expected 'book', got 'cancel'"
    assert explain_mismatch(ToolCall("book", None, raw_args="{bad"), exp) == \
        "arguments did not parse as a JSON object"
    # a non-exact matcher is named; a matcher with no expected value checks presence
    norm = ExpectedCall("note", {"text": "hello world"}, match={"text": "normalized", "title": "exact"})
    assert explain_mismatch(ToolCall("note", {"text": "bye", "title": "t"}), norm) == \
        "text: normalized match failed: expected 'hello world', got 'bye'"
    assert explain_mismatch(ToolCall("note", {"text": " Hello  WORLD "}), norm) == \
        "title: exact check failed (got nothing)"
    # explain_mismatch agrees with the matcher on every example: None iff call_matches
    from trajcheck.match.matching import call_matches

    for args, _ in cases + [(ok.args, None)]:
        c = ToolCall("book", args)
        assert (explain_mismatch(c, exp) is None) == call_matches(c, exp)
    assert value_diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b: expected 2, got 3"


def test_outcome_reason_says_why_no_call_matched() -> None:
    never = _run([("get_user", {"id": "u1"}, False)], final="booked")
    assert outcome_from_calls(never, CASE).reason == \
        "case 'c1': expected call 1 (book) not matched: the tool was never called"
    failed = _run([("book", {"flight": "HAT1"}, True), ("search", {"q": 1}, False)], final="booked")
    assert outcome_from_calls(failed, CASE).reason == \
        "case 'c1': expected call 1 (book) not matched: the call of the tool failed (call 0 of the run)"
    # two wrong bookings under exact_keys: the closer one (call 1: flight right, extra seat
    # key) is named; by default (extra arguments allowed) call 1 matches and call 0 is the
    # unexpected write
    wrong = _run([("book", {"flight": "HAT9", "seat": "1A"}, False), ("book", {"flight": "HAT1", "seat": "2B"}, False)],
                 final="booked")
    assert outcome_from_calls(wrong, CASE).reason == \
        "case 'c1': unexpected state-changing call 0 of the run: book {'flight': 'HAT9', 'seat': '1A'}"
    r = outcome_from_calls(wrong, CASE, args_mode="exact_keys")
    assert r.reason == ("case 'c1': expected call 1 (book) not matched: closest call 1 of the run differs: "
                        "unexpected argument seat (and 2 more)")


def test_changed_row_is_told_as_one_changed_row() -> None:
    from trajcheck.metrics.outcome import describe_rows

    before = {"tickets": [T1, T2]}
    after = {"tickets": [{**T1, "status": "closed"}, T2]}
    res = check_final_state(before, after, {"audit_log": []})
    assert res.reason == "table tickets changed: 1 row changed (status: 'open' -> 'closed')"
    d = state_diff(before, after)
    assert d.removed == {"tickets": (T1,)} and d.added == {"tickets": ({**T1, "status": "closed"},)}  # semantics kept
    assert d.describe("tickets") == "1 row changed (status: 'open' -> 'closed')"
    new = {"id": 3, "title": "New", "priority": "low", "status": "open"}
    assert describe_rows([T1, T2], [{**T1, "status": "closed"}, new]) == \
        "1 row changed (status: 'open' -> 'closed'), 1 row added, 1 row removed"
    two = describe_rows([T1, T2], [{**T1, "status": "x"}, {**T2, "status": "y", "priority": "low"}])
    assert two == "2 rows changed (first: status: 'open' -> 'x')"
    # rows without an id pair when most fields agree
    assert describe_rows([{"k": "a", "v": 1, "w": 2}], [{"k": "a", "v": 5, "w": 2}]) == "1 row changed (v: 1 -> 5)"
    assert describe_rows([{"k": "a", "v": 1}], [{"k": "b", "v": 5}]) == "1 row added, 1 row removed"
