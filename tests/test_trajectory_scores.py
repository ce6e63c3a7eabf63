"""metrics.trajectory_scores: the graded LCS and multiset scores, hand-computed values, and
their 1.0 points checked against the neutral modes (and the LCS length against brute force)
on random small instances."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trajbuild import run

from trajcheck.errors import MetricInputError
from trajcheck.metrics.calls import tool_call_prf
from trajcheck.metrics.trajectory import trajectory_match
from trajcheck.metrics.trajectory_scores import lcs_prf, multiset_prf
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory

T = ToolCall


def names(*ns):
    return [T(n, {}) for n in ns]


def test_lcs_hand_values():
    # LCS([a, x, b], [a, b, c]) = 2: P 2/3, R 2/3, F1 2/3
    r = lcs_prf(names("a", "x", "b"), ["a", "b", "c"])
    assert (r.tp, r.precision, r.recall) == (2, 2 / 3, 2 / 3)
    assert r.f1 == pytest.approx(2 / 3)
    # extras lower precision only: [a, x, b] against [a, b]: P 2/3, R 1, F1 0.8
    r = lcs_prf(names("a", "x", "b"), ["a", "b"])
    assert (r.precision, r.recall, r.f1) == (2 / 3, 1.0, pytest.approx(0.8))
    # order matters: [b, a] against [a, b]: LCS 1
    assert lcs_prf(names("b", "a"), ["a", "b"]).f1 == 0.5
    # empty cases (DESIGN.md rules, as pydantic-evals): both empty 1.0, one empty 0.0
    assert lcs_prf([], []).f1 == 1.0
    assert lcs_prf([], ["a"]).f1 == 0.0
    assert lcs_prf(names("a"), []).f1 == 0.0


def test_lcs_uses_argument_matching():
    exp = [ExpectedCall("book", {"day": "tue"}), ExpectedCall("pay", {})]
    pred = [T("book", {"day": "mon"}), T("pay", {"card": 1})]
    assert lcs_prf(pred, exp).tp == 1  # book(mon) is not book(tue); pay's extra arg allowed
    assert lcs_prf(pred, exp, args_mode="ignore").f1 == 1.0
    assert lcs_prf(pred, exp, args_mode="exact_keys").tp == 0


def test_lcs_optional_calls_and_retries():
    case = Case(id="c", input="q", expected_calls=(ExpectedCall("book", {"day": "tue"}),),
                optional_calls=("search",))
    traj = run(["search"], [("book", {"day": "tue"}, "err")], [("book", {"day": "tue"})])
    # the failed-and-retried attempt is set aside; the optional search does not count
    r = lcs_prf(traj, case)
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)
    assert trajectory_match(traj, case, "exact").passed
    # a non-optional extra does count
    r = lcs_prf(run(["lookup"], [("book", {"day": "tue"})]), case)
    assert (r.precision, r.recall) == (0.5, 1.0)


def test_lcs_parallel_step_has_no_order():
    # one model turn issues b and a together: either order may align
    traj = run(["b", "a"], ["c"])
    assert lcs_prf(traj, ["a", "b", "c"]).f1 == 1.0
    assert trajectory_match(traj, ["a", "b", "c"], "exact").passed
    # the same calls in two turns keep their order
    assert lcs_prf(run(["b"], ["a"], ["c"]), ["a", "b", "c"]).tp == 2


def test_multiset_hand_values():
    # pydantic-evals any_order: Counter overlap; [a, a, b] against [a, b, b]: 2 of 3 each way
    r = multiset_prf(names("a", "a", "b"), ["a", "b", "b"])
    assert (r.tp, r.precision, r.recall) == (2, 2 / 3, 2 / 3)
    # names only by default; args_mode=None uses the expected calls' own argument modes
    pred, exp = [T("f", {"x": 1})], [ExpectedCall("f", {"x": 2})]
    assert multiset_prf(pred, exp).f1 == 1.0
    assert multiset_prf(pred, exp, args_mode=None).f1 == 0.0
    assert multiset_prf([], []).f1 == 1.0
    # names only is computed from counts; it equals the matching's numbers, including a call
    # whose arguments did not parse (never matched, still counted unless its tool is optional)
    pred = [T("a", None), T("a", {}), T("c", "{bad json"), T("b", {})]
    for opt in ((), ("c",), ("a",)):
        case = Case(id="u", input="q", expected_calls=(ExpectedCall("a"), ExpectedCall("a"), ExpectedCall("b")),
                    optional_calls=opt)
        full = tool_call_prf(pred, case, args_mode="ignore")
        fast = multiset_prf(pred, case)
        assert (fast.tp, fast.n_counted, fast.f1) == (full.tp, full.n_counted, full.f1)


def test_graded_modes_through_trajectory_match_and_dialects():
    pred = names("a", "x", "b")
    r = trajectory_match(pred, ["a", "b"], "lcs_f1")
    assert r.score == pytest.approx(0.8) and r.passed is False and r.parts["mode"] == "lcs_f1"
    assert trajectory_match(pred, ["a", "b"], "lcs_recall").passed
    # pydantic-evals TrajectoryMatch (default in_order) is the names-only LCS F1
    assert trajectory_match(pred, [ExpectedCall("a", {"k": 1}), "b"], "TrajectoryMatch",
                            dialect="pydantic-evals").score == pytest.approx(0.8)
    with pytest.raises(MetricInputError, match="args_mode"):
        lcs_prf(pred, ["a"], args_mode="loose")
    with pytest.raises(MetricInputError, match="optional"):
        lcs_prf(pred, ["a"], optional="a")


# ------------------------------------------------------------------ properties

NAMES = st.sampled_from(["a", "b", "c"])
CALL = st.builds(lambda n, v: (n, {"v": v}), NAMES, st.integers(0, 1))
STEPS = st.lists(st.lists(CALL, min_size=1, max_size=2), max_size=4)  # some steps parallel
EXPS = st.lists(st.builds(lambda n, v: ExpectedCall(n, {"v": v}), NAMES, st.integers(0, 1)), max_size=4)


def traj_of(steps):
    out = [Step(0, "user", content="q")]
    for calls in steps:
        out.append(Step(len(out), "tool_call", tool_calls=tuple(T(n, dict(a)) for n, a in calls)))
    return Trajectory(steps=tuple(out))


def _compatible(call, exp, am):
    if call[0] != exp.name:
        return False
    if am == "ignore":
        return True
    return call[1] == exp.args  # exact_keys on these one-key argument objects


def brute_lcs(steps, exp, am, optional):
    """max over orders of each step and over common subsequences of (L, aligned non-optional)."""
    best = (0, 0)
    for perm in itertools.product(*[list(itertools.permutations(s)) for s in steps]):
        flat = [c for s in perm for c in s]
        for k in range(min(len(flat), len(exp)), -1, -1):
            for pi in itertools.combinations(range(len(flat)), k):
                for ej in itertools.combinations(range(len(exp)), k):
                    if all(_compatible(flat[i], exp[j], am) for i, j in zip(pi, ej)):
                        best = max(best, (k, sum(flat[i][0] not in optional for i in pi)))
    return best


@settings(max_examples=150, deadline=None)
@given(STEPS, EXPS, st.sampled_from(["exact_keys", "ignore"]), st.sampled_from([(), ("c",)]))
def test_lcs_length_is_brute_force_lcs(steps, exp, am, optional):
    r = lcs_prf(traj_of(steps), exp, args_mode=am, optional=optional)
    n_lcs, n_nonopt = brute_lcs(steps, exp, am, optional)
    assert r.tp == n_lcs
    n_pred_nonopt = sum(n not in optional for s in steps for n, _ in s)
    assert r.parts["n_counted"] == n_lcs + n_pred_nonopt - n_nonopt


@settings(max_examples=300, deadline=None)
@given(STEPS, EXPS, st.sampled_from(["exact_keys", "ignore"]), st.sampled_from([(), ("c",)]))
def test_graded_scores_reach_one_exactly_when_the_neutral_mode_passes(steps, exp, am, optional):
    traj = traj_of(steps)
    kw = {"args_mode": am, "optional": optional}
    lcs = lcs_prf(traj, exp, **kw)
    ms = multiset_prf(traj, exp, **kw)
    for v in (lcs.precision, lcs.recall, lcs.f1, ms.precision, ms.recall, ms.f1):
        assert 0.0 <= v <= 1.0

    def ok(mode):
        return bool(trajectory_match(traj, exp, mode, **kw).passed)

    assert (lcs.f1 == 1.0) == ok("exact")
    assert (lcs.recall == 1.0) == ok("in_order")
    assert (ms.f1 == 1.0) == ok("unordered")
    assert (ms.recall == 1.0) == ok("superset")
    # DESIGN.md: no counted call against a non-empty expectation has precision 0.0 (not the
    # vacuous 1.0 of subset)
    vacuous = ms.parts["n_counted"] == 0 and bool(exp)
    assert (ms.precision == 1.0) == (ok("subset") and not vacuous)
    # the multiset numbers are tool_call_prf's under the same argument mode
    case = Case(id="p", input="q", expected_calls=tuple(exp), optional_calls=optional)
    assert ms.f1 == tool_call_prf(traj, case, args_mode=am).f1
    # LCS never exceeds the unordered matching
    assert lcs.tp <= ms.tp


# ------------------------------------------------------------------ scorecard figures


def test_scorecard_carries_graded_scores():
    import json
    from pathlib import Path

    import jsonschema

    from trajcheck.report.scorecard import Scorecard
    from trajcheck.score.suite import score_runs

    case = Case(id="book", input="q", expected_calls=(ExpectedCall("find", {}), ExpectedCall("book", {"d": 1})))
    runs = [
        (run(["find"], [("book", {"d": 1})]), case),            # exact: 1.0 / 1.0
        (run([("book", {"d": 2})], ["find"]), case),             # wrong argument, wrong order
        (run(["find"], ["noise"], [("book", {"d": 1})]), case),  # an extra call
    ]
    sc = score_runs(runs, n_boot=200)
    got = [(r.lcs_f1, r.name_f1) for r in sc.runs]
    # run 2: book(d=2) matches nothing; LCS 1 of 2 and 2 -> F1 0.5; names: both match -> 1.0
    # run 3: LCS 2, P 2/3, R 1 -> F1 0.8; names: P 2/3, R 1 -> 0.8
    assert got == [(1.0, 1.0), (0.5, 1.0), (pytest.approx(0.8), pytest.approx(0.8))]
    # (suite figures may be rounded to 4 decimals)
    assert sc.suite.mean_lcs_f1.value == pytest.approx((1.0 + 0.5 + 0.8) / 3, abs=1e-4)
    assert sc.suite.mean_name_f1.value == pytest.approx((1.0 + 1.0 + 0.8) / 3, abs=1e-4)
    d = sc.to_dict()
    schema = json.loads((Path(__file__).resolve().parents[1] / "core" / "schemas" / "scorecard.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(d)), schema)
    back = Scorecard.from_dict(d)
    assert back.runs[1].lcs_f1 == 0.5 and back.suite.mean_name_f1 == sc.suite.mean_name_f1


# ------------------------------------------------------------------ dialects in the hosts


def _oai(calls):
    import json

    out = [{"role": "user", "content": "q"}]
    for i, (n, a) in enumerate(calls):
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    return out + [{"role": "assistant", "content": "done"}]


def test_new_dialect_names_in_host_settings():
    """A dialect's mode name (here with package-name spellings) is a host setting like any
    mode: the LangSmith evaluator and the promptfoo assertion give the core's value."""
    pytest.importorskip("langsmith")
    from trajcheck.adapters.langsmith import TrajcheckEvaluator
    from trajcheck.promptfoo.assertion import get_assert

    calls = [("a", {"k": 1}), ("x", {}), ("b", {})]
    ref = [{"name": "a", "args": {"k": 2}}, {"name": "b", "args": {}}]
    core = trajectory_match([T(n, a) for n, a in calls], [ExpectedCall(r["name"], r["args"]) for r in ref],
                            "TrajectoryMatch", dialect="pydantic_evals").score
    assert core == pytest.approx(0.8)  # names only: LCS 2 of 3 and 2
    ev = TrajcheckEvaluator("trajectory_match", mode="TrajectoryMatch(order='in_order')", dialect="pydantic-evals")
    assert ev(outputs={"messages": _oai(calls)}, reference_outputs={"expected_calls": ref})["score"] == core
    # ADK ANY_ORDER compares whole argument objects: a(k=1) is not a(k=2)
    r = get_assert(_oai(calls), {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
                                 "config": {"metric": "trajectory_match", "mode": "any order",
                                            "dialect": "google-adk", "expected_calls": ref}})
    assert r["score"] == 0.0 and r["pass"] is False
    ref[0]["args"] = {"k": 1}
    r = get_assert(_oai(calls), {"prompt": "p", "vars": {}, "test": {"description": "t", "assert": []},
                                 "config": {"metric": "trajectory_match", "mode": "any order",
                                            "dialect": "google-adk", "expected_calls": ref}})
    assert r["score"] == 1.0 and r["pass"] is True
