"""Mergeable aggregation (trajcheck.aggregate.partials): partial aggregates of any split of the runs,
merged in any grouping and order, finalize to the scorecard of one pass over all of them."""

from __future__ import annotations

import math
import pickle
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.aggregate.partials import SuitePartial, exact_add, merge_partials
from trajcheck.errors import MetricInputError
from trajcheck.read.traces import load
from trajcheck.report.scorecard import RunResult
from trajcheck.score.suite import evaluate, score_runs

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau_runs() -> tuple[list[RunResult], dict]:
    """The 200 real tau-bench GPT-4o airline runs, scored once, and their scorecard."""
    sc = evaluate(load(TAU), n_boot=200)
    return list(sc.runs), sc.to_dict()


def _grouped(results: list[RunResult], rnd: random.Random, keep: int | None = None) -> SuitePartial:
    """Split the runs (with their input positions) into shuffled batches, fold each into a
    partial, and merge the partials along a random binary tree."""
    idx = list(range(len(results)))
    rnd.shuffle(idx)
    cuts = sorted(rnd.sample(range(1, len(idx)), min(len(idx) - 1, rnd.randint(0, 6))))
    parts = []
    for a, b in zip([0, *cuts], [*cuts, len(idx)]):
        p = SuitePartial(keep_runs=keep)
        for i in idx[a:b]:
            p.add(results[i], seq=i)
        parts.append(pickle.loads(pickle.dumps(p)))  # engines ship partials between processes
    while len(parts) > 1:
        i = rnd.randrange(len(parts) - 1)
        parts[i:i + 2] = [parts[i].merge(parts[i + 1]) if rnd.random() < 0.5
                          else parts[i + 1].merge(parts[i])]
    return parts[0]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_tau_bench_partials_merge_to_the_same_scorecard(tau_runs, seed):
    results, whole = tau_runs
    got = _grouped(results, random.Random(seed)).finalize(n_boot=200, meta={"source": None})
    d = got.to_dict()
    d["meta"].pop("source")
    want = dict(whole, meta={k: v for k, v in whole["meta"].items() if k != "source"})
    assert d == want
    assert d["recorded_reward"]["agreement"]["agree"] == 200  # the real runs: all 200 agree


def _run(i: int, case: str, draw) -> RunResult:
    success = draw(st.booleans())
    route = draw(st.sampled_from(["billing", "tech", None]))
    cost = draw(st.one_of(st.none(), st.floats(0, 1, allow_nan=False)))
    order = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1 / 3, 1.0])))
    metrics = {"call_rates": {"parts": {"forbidden": draw(st.booleans()),
                                        "duplicate": draw(st.booleans())}}}
    if order is not None:
        metrics["ordering"] = {"score": order}
    fault = draw(st.booleans())
    called = tuple(draw(st.lists(st.sampled_from("abc"), max_size=3)))
    return RunResult(
        run_id=f"r{i}", case_id=case, trial=i, success=success, outcome_reason="why",
        failure_reason=None if success else "failed",
        f1=draw(st.one_of(st.none(), st.floats(0, 1, allow_nan=False))),
        composite=draw(st.floats(0, 1, allow_nan=False)),
        composite_passed=draw(st.one_of(st.none(), st.booleans())),
        steps=draw(st.integers(0, 30)), n_calls=draw(st.integers(0, 9)),
        tokens=draw(st.one_of(st.none(), st.integers(0, 10**6))), cost_usd=cost,
        latency_ms=draw(st.one_of(st.none(), st.floats(0, 1e5, allow_nan=False))),
        route=route, expected_route=draw(st.sampled_from(["billing", "tech", None])),
        recorded_reward=draw(st.sampled_from([None, 0.0, 1.0, 0.5])),
        fault_run=fault, false_success=draw(st.booleans()) if fault else None,
        # matched pairs are drawn from the run's expected and called tools (RunResult)
        expected_tools=("a", "b"), called_tools=called,
        matched=(("a", "a"),) if "a" in called and draw(st.booleans()) else (), metrics=metrics,
        forbidden_checked=draw(st.booleans()))


@st.composite
def run_sets(draw):
    n_cases = draw(st.integers(1, 6))
    trials = draw(st.integers(1, 4))
    out = []
    for _t in range(trials):
        for c in range(n_cases):
            out.append(_run(len(out), f"case{c}", draw))
    return out


@settings(max_examples=60, deadline=None)
@given(results=run_sets(), seed=st.integers(0, 10**6), keep=st.sampled_from([None, 0, 1, 5]))
def test_any_grouping_of_any_runs_gives_one_scorecard(results, seed, keep):
    want = score_runs([], scored=results, n_boot=50).to_dict()
    p = _grouped(results, random.Random(seed), keep=keep) if len(results) > 1 else None
    if p is None:
        return
    got = p.finalize(n_boot=50).to_dict()
    if keep is None:
        assert got == want
    else:  # a capped partial keeps the runs a report shows first: failing ones, in input order
        shown = sorted(results, key=lambda r: (r.success and r.composite_passed is not False,
                                               int(r.run_id[1:])))[:keep]
        assert [r["run_id"] for r in got.pop("runs")] == sorted(
            (r.run_id for r in shown), key=lambda s: int(s[1:]))
        want.pop("runs")
        assert got == want


@given(st.lists(st.floats(-1e300, 1e300, allow_nan=False), max_size=40), st.integers(0, 40))
def test_exact_sums_merge_to_fsum(xs, cut):
    a: list[float] = []
    b: list[float] = []
    for x in xs[:cut]:
        exact_add(a, x)
    for x in xs[cut:]:
        exact_add(b, x)
    for x in b:
        exact_add(a, x)
    assert math.fsum(a) == math.fsum(xs)


def test_tool_confusion_counts_and_inconsistent_matched_pairs():
    """Confusion cells: matched pairs, missed expected calls in the (none) column, extra calls
    in the (none) row, summed over runs; a matched pair naming a tool the run did not call
    is an error, not a negative count."""
    def run(i, expected, called, matched):
        return RunResult(run_id=f"r{i}", case_id="c", trial=i, success=True, outcome_reason="",
                         expected_tools=expected, called_tools=called, matched=matched)

    p = SuitePartial()
    p.add(run(0, ("a", "b", "b"), ("b", "c"), (("b", "b"),)))
    p.add(run(1, ("a",), ("a", "a"), (("a", "a"),)))
    tc = p.finalize(n_boot=5).suite.tool_confusion
    assert tc["labels"] == ["a", "b", "c", "(none)"]
    assert tc["matrix"] == [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 0]]
    bad = SuitePartial()
    bad.add(run(0, ("a",), (), (("a", "a"),)))
    with pytest.raises(MetricInputError, match="matched pairs hold more calls of 'a'"):
        bad.finalize(n_boot=5)


def test_merge_of_nothing_and_bad_cap_are_errors():
    with pytest.raises(MetricInputError, match="no partial"):
        merge_partials([])
    with pytest.raises(MetricInputError, match="keep_runs"):
        SuitePartial(keep_runs=-1)
    with pytest.raises(MetricInputError, match="empty suite"):
        SuitePartial().finalize()


def test_pass_k_from_distinct_counts_is_the_per_task_figure():
    """The scorecard's pass^k / pass@k are computed once per distinct (c, n) pair, weighted
    by its number of tasks: the very floats reliability.pass_hat_k / pass_at_k give over
    every task (one exact sum of fractions, rounded once)."""
    import random
    from collections import Counter

    from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, pass_k_grouped

    rnd = random.Random(7)
    for _ in range(200):
        n_tasks, n_min = rnd.randint(1, 50), rnd.randint(1, 6)
        cnt = {}
        for i in range(n_tasks):
            n = rnd.randint(n_min, n_min + 4)
            cnt[f"t{i}"] = (rnd.randint(0, n), n)
        groups = Counter(cnt.values())
        for k in range(1, n_min + 1):
            assert pass_k_grouped(groups, k, hat=True) == pass_hat_k(cnt, k)
            assert pass_k_grouped(groups, k, hat=False) == pass_at_k(cnt, k)
    # thirds: the exact sum rounds once (a float sum of the per-task values would not)
    groups = Counter({(1, 3): 3, (2, 3): 7})
    assert pass_k_grouped(groups, 1, hat=True) == pass_hat_k([(1, 3)] * 3 + [(2, 3)] * 7, 1) == 17 / 30


def test_case_sums_are_exact_in_any_grouping():
    """A case's sum is kept in two floats (hi + lo exactly) or, when two cannot hold it, as
    partials in a side dict; added one value at a time or merged from parts in any grouping
    (rows mapped between sums, as partials merge), its total is math.fsum of all the
    values, and the count is the number of values."""
    import math
    import random

    from trajcheck.aggregate.case_sums import CaseSums

    rnd = random.Random(11)
    pool = [0.1, 0.2, 1 / 3, 2 / 3, 0.8, 1.0, 0.0, 1e-17, 1e16, 0.7, 5 / 7, -0.3, 1e-300]
    for _ in range(500):
        vals = [rnd.choice(pool) for _ in range(rnd.randint(0, 12))]
        one = CaseSums()
        one.grow()
        for v in vals:
            one.add(0, v)
        assert one.total(0) == math.fsum(vals) and one.count[0] == len(vals)
        cut = sorted(rnd.sample(range(len(vals) + 1), min(3, len(vals) + 1)))
        parts = []
        for a, b in zip([0, *cut], [*cut, len(vals)]):
            s = CaseSums()
            s.grow()  # row 0: another case
            s.grow()  # row 1: this one
            for v in vals[a:b]:
                s.add(1, v)
            parts.append(s)
        rnd.shuffle(parts)
        merged = CaseSums()
        merged.grow()
        merged.grow()
        for s in parts:
            merged.merge(s, [1, 0])  # their row 1 -> our row 0, their row 0 -> our row 1
        assert merged.total(0) == math.fsum(vals) and merged.count[0] == len(vals)
        assert merged.count[1] == 0
    s = CaseSums()
    s.grow()
    s.add(0, 0.5)
    s.add(0, 0.25)
    assert (s.hi[0], s.lo[0], s.total(0)) == (0.75, 0.0, 0.75)
    s.add(0, 0.1)
    assert s.lo[0] != 0.0 and not s.over and s.total(0) == math.fsum([0.5, 0.25, 0.1])
    s.add(0, 1e-300)  # three floats needed: kept as partials
    assert s.over and s.total(0) == math.fsum([0.5, 0.25, 0.1, 1e-300])
    s.add(0, float("inf"))
    assert not math.isfinite(s.total(0))  # an infinite value: the mean is not finite


def test_case_rows_built_on_demand_behave_as_the_tuple():
    """A scorecard's case rows are built when read (aggregate.CaseRows): the same rows as a
    tuple of CaseResult in every use -- indexing, slices, iteration, equality both ways,
    hashing, pickling (as a tuple) and the JSON form."""
    import pickle
    from pathlib import Path

    from trajcheck.aggregate.partials import CaseRows
    from trajcheck.read.traces.stream import stream
    from trajcheck.score.pipeline import evaluate_stream

    tau = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"
    sc = evaluate_stream(stream(tau), n_boot=20, keep_runs=3)
    rows = sc.cases
    assert isinstance(rows, CaseRows)
    want = tuple(rows)
    assert len(rows) == len(want) == 50
    assert rows[0] == want[0] and rows[-1] == want[-1] and rows[3:7] == want[3:7]
    assert rows == want and want == rows and rows == list(want) and rows != want[:-1]
    assert hash(rows) == hash(want)
    back = pickle.loads(pickle.dumps(rows))
    assert type(back) is tuple and back == want
    assert [c.to_dict() for c in rows] == [c.to_dict() for c in want]
    assert sc.to_dict()["cases"][7] == want[7].to_dict()
    assert want[0].run_ids and want[0].trials == len(want[0].run_ids)


def test_case_sums_merge_whole_columns_exactly():
    """Merging tables of many rows takes the column-wise path (numpy): every row's total is
    math.fsum of its values and its count their number, including rows whose sums need
    partials, rows with an infinity and rows the other table does not touch."""
    import math
    import random

    from trajcheck.aggregate.case_sums import CaseSums

    rnd = random.Random(5)
    pool = [0.1, 0.2, 1 / 3, 2 / 3, 0.8, 1.0, 0.0, 1e-17, 1e16, 0.7, 5 / 7, -0.3, 1e-300]
    for _ in range(30):
        n = rnd.randint(8, 60)
        vals: list[list[float]] = [[] for _ in range(n)]
        tables = []
        for _t in range(rnd.randint(2, 4)):
            rows = rnd.sample(range(n), rnd.randint(8, n))  # distinct rows of the result
            tab = CaseSums()
            for j, i in enumerate(rows):
                tab.grow()
                for _v in range(rnd.randint(0, 4)):
                    x = rnd.choice(pool) if rnd.random() > 0.01 else float("inf")
                    tab.add(j, x)
                    vals[i].append(x)
            tables.append((tab, rows))
        whole = CaseSums()
        for _i in range(n):
            whole.grow()
        for tab, rows in tables:
            whole.merge(tab, rows)
        for i, v in enumerate(vals):
            assert whole.count[i] == len(v)
            if all(map(math.isfinite, v)):
                assert whole.total(i) == math.fsum(v)
            else:
                assert not math.isfinite(whole.total(i))


def test_merge_without_numpy_gives_the_same_scorecard(tau_runs, monkeypatch):
    """Merging case columns and sums row by row (no numpy) gives what whole columns give."""
    import trajcheck.aggregate.case_rows as case_rows
    import trajcheck.aggregate.case_sums as cs
    import trajcheck.aggregate.finalize as finalize
    import trajcheck.aggregate.merge as merge
    import trajcheck.aggregate.suite_blocks as suite_blocks

    results, whole = tau_runs
    with_np = _grouped(results, random.Random(3)).finalize(n_boot=200).to_dict()
    for module in (cs, case_rows, finalize, merge, suite_blocks):
        monkeypatch.setattr(module, "_numpy", lambda: None)
    without = _grouped(results, random.Random(3)).finalize(n_boot=200).to_dict()
    assert without == with_np
    assert {k: v for k, v in without["meta"].items() if k != "source"} == {
        k: v for k, v in whole["meta"].items() if k != "source"}
    assert without["suite"] == whole["suite"] and without["cases"] == whole["cases"]


def test_case_sums_queued_values_flush_to_the_same_state_as_add():
    """Values queued for a later flush (what an aggregate does run by run) end in the very
    same state as ``add`` called for each in turn: the same hi, lo, counts and partials for
    every row, whichever way the flush goes (whole columns with numpy in rounds, one by one
    for a short queue or a row past the rounds), with infinities, NaN, sums that need
    partials and one row given more values than there are rounds."""
    import math
    import random

    from trajcheck.aggregate.case_sums import CaseSums

    def state(s: CaseSums) -> tuple:
        key = [(h, lo) if lo == lo else (h, "nan") for h, lo in zip(s.hi, s.lo)]
        over = {i: [repr(x) for x in p] for i, p in s.over.items()}
        return key, list(s.count), over

    rnd = random.Random(3)
    pool = [0.1, 0.2, 1 / 3, 2 / 3, 0.8, 1.0, 0.0, -0.0, 1e-17, 1e16, 0.7, 5 / 7, -0.3, 1e-300]
    for trial in range(40):
        n = rnd.randint(1, 50)
        size = rnd.choice([5, 63, 64, 300, 2000])
        hot = rnd.randrange(n)
        seq = []
        for _ in range(size):
            i = hot if rnd.random() < 0.3 else rnd.randrange(n)
            r = rnd.random()
            x = (float("inf") if r < 0.005 else float("-inf") if r < 0.01 else math.nan if r < 0.012
                 else rnd.choice(pool))
            seq.append((i, x))
        one, queued = CaseSums(), CaseSums()
        one.grow(n)
        queued.grow(n)
        for i, x in seq[: size // 3]:  # some already added, then queued on top
            one.add(i, x)
            queued.add(i, x)
        for i, x in seq[size // 3:]:
            one.add(i, x)
            queued.queue(i, x)
        assert len(queued.pend_x) == size - size // 3
        if trial % 2:  # else flushed by the first read
            queued.flush()
        totals = [queued.total(i) for i in range(n)]
        assert not queued.pend_x
        assert state(queued) == state(one), trial
        for i in range(n):
            a, b = totals[i], one.total(i)
            assert a == b or (a != a and b != b)
    # a row past the rounds: its later values one by one, in order
    s, t = CaseSums(), CaseSums()
    s.grow(2)
    t.grow(2)
    vals = [0.1 * k for k in range(3 * CaseSums._ROUNDS)] + [1e-300, 1e16]
    for x in vals:
        s.add(0, x)
        t.queue(0, x)
        t.queue(1, 0.5)
    t.flush()
    assert state(t)[0][0] == state(s)[0][0] and t.count[0] == len(vals)
    assert t.total(0) == math.fsum(vals) and t.total(1) == 0.5 * len(vals)


def test_partial_sums_with_missing_and_int_figures_across_flushes():
    """Runs with all four summed figures as floats are queued together, the others figure by
    figure; over more runs than one flush holds, every case's mean F1 is math.fsum of its
    runs' F1 values (None left out, an int taken as its float) over their number, and a
    merge of two halves gives the same rows."""
    import math
    import random

    from trajcheck.aggregate.partials import SuitePartial
    from trajcheck.report.scorecard import RunResult

    rnd = random.Random(7)

    def run(case: str, k: int, f1: object) -> RunResult:
        return RunResult(run_id=f"{case}-{k}", case_id=case, trial=k, success=bool(k % 2),
                         outcome_reason="", failure_reason=None, precision=None, recall=None,
                         f1=f1, composite=rnd.choice([None, 0.5, 0.8125]), composite_passed=None,
                         steps=1, n_calls=0, tokens=None, cost_usd=None, latency_ms=None, route=None,
                         expected_route=None, recorded_reward=None, fault_run=False,
                         false_success=None, expected_tools=(), called_tools=(), matched=(),
                         metrics={}, lcs_f1=0.25, name_f1=rnd.choice([0.5, 1]))

    runs, want = [], {}
    for k in range(9000):
        case = f"c{rnd.randrange(40)}"
        f1 = rnd.choice([0.1, 0.2, 1 / 3, None, 1, 0.7, 1e-300])
        runs.append(run(case, k, f1))
        if f1 is not None:
            want.setdefault(case, []).append(float(f1))
    whole, a, b = SuitePartial(), SuitePartial(), SuitePartial()
    for k, r in enumerate(runs):
        whole.add(r, k)
        (a if k % 3 else b).add(r, k)
    rows = {c.case_id: c for c in whole.finalize(n_boot=5).cases}
    for case, vals in want.items():
        assert rows[case].mean_f1 == math.fsum(vals) / len(vals)
    merged = a.merge(b).finalize(n_boot=5)
    assert [c.to_dict() for c in merged.cases] == [rows[c.case_id].to_dict() for c in merged.cases]
