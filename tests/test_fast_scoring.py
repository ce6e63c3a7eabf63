"""Fast per-run scoring (trajcheck.score.fast_scoring): the compact RunResult equals the general
path's field by field (values and types) on the example suites, on bench/volume.py runs and
on generated cases and runs; cases and runs outside its scope take the general path."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory, Usage
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.read.traces import load
from trajcheck.read.traces.stream import stream
from trajcheck.score.case_plan import plan_for
from trajcheck.score.fast_scoring import fast_compact, fast_plan
from trajcheck.score.runmemo import per_run
from trajcheck.score.scoring import _score_run, score_run

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"


def same(t: Trajectory, c: Case, ctx: Any = None) -> bool:
    """Whether the fast path scored the run; when it did, its result equals the general one."""
    fast = fast_compact(t, c, ctx)
    want = _general_ctx(t, c, ctx)
    if fast is None:
        return False
    for f in dataclasses.fields(want):
        a, b = getattr(fast, f.name), getattr(want, f.name)
        assert (a, type(a)) == (b, type(b)), (f.name, a, b, c.id)
    assert fast == want
    assert list(vars(fast)) == list(vars(want))  # built from a dict: every field, in order
    return True


def test_volume_runs(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vol)  # type: ignore[union-attr]
    runs, cases = vol.generate(tmp_path, 600, seed=3)
    by_id = {c.id: c for c in load_cases(cases)}
    results = [same(t, by_id[t.metadata["case_id"]]) for t in stream(runs)]
    assert len(results) == 600 and all(results)  # every volume run inside the scope
    # by case id from a case store (its plans: tests/test_case_store.py), no case built
    store = load_case_store(cases)
    built: list[str] = []
    getitem = CaseStore.__getitem__
    monkeypatch.setattr(CaseStore, "__getitem__", lambda self, cid: built.append(cid) or getitem(self, cid))
    got = [(t, fast_plan(t, plan_for(store, t.metadata["case_id"]))) for t in stream(runs)]
    assert not built
    for t, fast in got:
        want = _general_ctx(t, by_id[t.metadata["case_id"]], None)
        for f in dataclasses.fields(want):
            a, b = getattr(fast, f.name), getattr(want, f.name)
            assert (a, type(a)) == (b, type(b)), (f.name, a, b)
        assert list(vars(fast)) == list(vars(want))


def test_example_suites():
    taken = fell_back = 0
    tau = load(DATA / "tau_bench" / "gpt-4o-airline.json")
    pairs = [(t, tau.cases[t.metadata["case_id"]]) for t in tau]
    refund = {c.id: c for c in load_cases(ROOT / "examples" / "refund_desk" / "cases.jsonl")}
    pairs += [(t, refund[t.metadata["case_id"]]) for t in load(ROOT / "examples" / "refund_desk" / "runs.jsonl")]
    for t, c in pairs:
        if same(t, c):
            taken += 1
        else:
            fell_back += 1
    # tau-bench runs carry rewards, termination and replay metadata: general path
    assert fell_back >= 200 and taken + fell_back == len(pairs)
    # without the metadata the fast path has no say on, the same runs score alike
    for t, c in pairs:
        meta = {k: v for k, v in t.metadata.items() if k in ("case_id", "trial", "run_id", "reward")}
        cm = {k: v for k, v in c.metadata.items() if k == "category"}
        c2 = dataclasses.replace(c, metadata=cm, response_must_include=(), precedence=(),
                                 forbidden_sequences=(), faults=(), expected_final_state=None,
                                 expected_calls=tuple(dataclasses.replace(e, match={})
                                                      for e in c.expected_calls))
        taken += same(dataclasses.replace(t, metadata=meta), c2)
    assert taken >= len(pairs)


# ------------------------------------------------------------------- generated cases and runs

NAMES = ["get", "put", "search", "delete_it"]
values = st.one_of(st.integers(0, 2), st.sampled_from(["a", "b"]), st.booleans(), st.none(),
                   st.sampled_from([1.0, [1, "a"], {"x": 1}]))
args = st.dictionaries(st.sampled_from(["id", "q"]), values, max_size=2)
expected = st.builds(ExpectedCall, name=st.sampled_from(NAMES), args=st.one_of(st.none(), args),
                     args_mode=st.sampled_from([None, None, "exact_keys", "ignore"]))


@st.composite
def case_and_run(draw: Any) -> tuple[Case, Trajectory]:
    exp = draw(st.lists(expected, max_size=4))
    case = Case(id="c", input="do it", expected_calls=tuple(exp),
                optional_calls=tuple(draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True))),
                forbidden_calls=tuple(draw(st.lists(st.sampled_from(["delete*", "put"]), max_size=1))),
                args_mode=draw(st.sampled_from([None, None, "exact_keys", "expected_keys"])),
                max_steps=draw(st.sampled_from([None, 2, 5])),
                optimal_steps=draw(st.sampled_from([None, 3])),
                threshold=draw(st.sampled_from([None, 0.5, 1])),
                metadata=draw(st.sampled_from([{}, {"category": "simple"}])))
    steps: list[Step] = [Step(0, "user", content="do it")]
    k = 0
    for _ in range(draw(st.integers(0, 5))):
        group = []
        for _ in range(draw(st.sampled_from([1, 1, 2]))):  # parallel calls share a step
            name = draw(st.sampled_from(NAMES))
            if exp and draw(st.booleans()):  # an expected call, sometimes with a changed argument
                e = draw(st.sampled_from(exp))
                name = e.name
                a: Any = dict(e.args or {})
                if draw(st.integers(0, 4)) == 0:
                    a["q"] = draw(values)
            else:
                a = draw(st.one_of(args, st.none()))
            # mostly with call ids; some without (results then join by name or position)
            group.append(ToolCall(name, a, call_id=f"c{k}" if draw(st.integers(0, 5)) else None))
            k += 1
        # an immediate repeat of the group: a duplicate, or a retry after a failure
        if draw(st.integers(0, 4)) == 0:
            group = group + group[:1]
        steps.append(Step(len(steps), "tool_call", tool_calls=tuple(group),
                          usage=draw(st.sampled_from([None, Usage(10, 5)])),
                          cost_usd=draw(st.sampled_from([None, 0.001])),
                          latency_ms=draw(st.sampled_from([None, 120.0]))))
        for c in group:
            if draw(st.integers(0, 9)) == 0:
                continue  # a call with no result
            fail = draw(st.integers(0, 5)) == 0
            steps.append(Step(len(steps), "tool_result", tool_result=ToolResult(
                call_id=c.call_id if draw(st.integers(0, 7)) else None, name=c.name,
                output=draw(st.sampled_from(['{"id": 1, "v": 2}', "ok", '{"id": 1, "v": 3}'])),
                is_error=fail)))
    steps.append(Step(len(steps), "final_response", content="done"))
    meta: dict[str, Any] = {"case_id": "c", "trial": draw(st.sampled_from([0, 1, None]))}
    if draw(st.booleans()):
        meta["reward"] = draw(st.sampled_from([0, 1.0]))
    return case, Trajectory(steps=tuple(steps), final_response="done", metadata=meta)


@settings(max_examples=400, deadline=None)
@given(cr=case_and_run())
def test_generated_runs_equal_the_general_path(cr):
    case, traj = cr
    # every generated case and run is inside the scope, except a case whose args_mode
    # disagrees with a call's own (the matchings differ in which mode wins)
    mixed = case.args_mode is not None and any(e.args_mode not in (None, case.args_mode)
                                               for e in case.expected_calls)
    # a call with args None of an expected tool: whether it was recorded without arguments
    # (matches by name, in name F1 too) or did not parse (never matches) is the general
    # path's to tell
    expected = {e.name for e in case.expected_calls}
    mixed = mixed or any(c.args is None and c.name in expected for c in traj.tool_calls())
    assert same(traj, case) is not mixed
    # a context (semantic scorer, judge) changes nothing when every matcher is exact
    from trajcheck.match.matchers import MatchContext

    assert same(traj, case, MatchContext(semantic_scorer=lambda a, b: 0.0, judge=lambda *a: False,
                                         case_input="other")) is not mixed


@settings(max_examples=60, deadline=None)
@given(cr=case_and_run(), which=st.sampled_from(["precedence", "sequences", "faults", "snapshots",
                                                 "match", "terminated", "weights"]))
def test_out_of_scope_takes_the_general_path(cr, which):
    case, traj = cr
    ctx = None
    if which == "precedence":
        case = dataclasses.replace(case, precedence=(("get", "put"),))
    elif which == "sequences":
        case = dataclasses.replace(case, forbidden_sequences=({"tool": "put", "requires_prior": "get"},))
    elif which == "faults":
        case = dataclasses.replace(case, faults=({"tool": "get", "error": "boom"},))
    elif which == "snapshots":
        traj = dataclasses.replace(traj, metadata=dict(traj.metadata, state_before={}, state_after={}))
    elif which == "match":
        case = dataclasses.replace(case, expected_calls=case.expected_calls + (
            ExpectedCall("get", {"q": "a"}, match={"q": "contains"}),))
    elif which == "terminated":
        traj = dataclasses.replace(traj, metadata=dict(traj.metadata, terminated=False))
    else:
        case = dataclasses.replace(case, metadata={"scoring_weights": {"outcome": 1.0}})
    assert fast_compact(traj, case, ctx) is None
    # score_run still gives the general path's result
    assert score_run(traj, case, context=ctx, compact=True) == _general_ctx(traj, case, ctx)


def _general_ctx(t: Trajectory, c: Case, ctx: Any) -> Any:
    with per_run():
        return _score_run(t, c, ctx, None, True, True)
