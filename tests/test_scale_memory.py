"""What keeps an eval's memory flat in the number of runs gives what the plain objects give:
the compressed case store (``load_case_store``) against ``load_cases``, the per-case run ids
kept as trial numbers, and the scorecard JSON written a case at a time."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from trajcheck.aggregate.partials import SuitePartial
from trajcheck.errors import DatasetError
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.read.traces.stream import stream
from trajcheck.score.fingerprint import case_hash
from trajcheck.score.pipeline import evaluate_stream

ROOT = Path(__file__).resolve().parent.parent
# the store against load_cases on every example and test case file: tests/test_row_plan.py


def test_case_store_reports_bad_rows_as_load_cases_does(tmp_path):
    p = tmp_path / "cases.jsonl"
    p.write_text('{"id": "a", "input": "x"}\n\n{"id": "a", "input": "y"}\nnot json\n'
                 '{"id": "b", "input": "z", "expected_calls": [{"name": "t", "args": {"n": 1}}]}\n')
    with pytest.raises(DatasetError) as want:
        load_cases(p)
    with pytest.raises(DatasetError) as got:
        load_case_store(p)
    assert str(got.value) == str(want.value)
    assert "cases.jsonl:3: case 'a': id: duplicate case id (first on line 1)" in str(got.value)
    assert "cases.jsonl:4: not valid JSON" in str(got.value)


def test_case_store_small_cache_rebuilds_equal_cases(tmp_path):
    p = tmp_path / "cases.jsonl"
    rows = [{"id": f"c{i}", "input": "é ü", "expected_calls": [{"name": "t", "args": {"n": i, "f": 0.1 * i}}],
             "metadata": {"k": [1, 2.5, None, True]}} for i in range(20)]
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    from trajcheck.read.case_store import CaseStore

    small = CaseStore(cache_size=3)
    for c in load_cases(p):
        small.add(c, c.to_dict())
    for _ in range(2):
        for c in load_cases(p):
            assert small[c.id] == c
    assert len(small._cache) == 3


def test_run_ids_kept_short_come_back_in_input_order():
    from trajcheck.report.scorecard import RunResult

    def run(case, rid, trial, ok=True):
        return RunResult(run_id=rid, case_id=case, trial=trial, success=ok, outcome_reason="",
                         failure_reason=None, precision=1.0, recall=1.0, f1=1.0, composite=1.0,
                         composite_passed=True, steps=1, n_calls=0, tokens=None, cost_usd=None,
                         latency_ms=None, route=None, expected_route=None, recorded_reward=None,
                         fault_run=False, false_success=None, expected_tools=(), called_tools=(),
                         matched=(), metrics={})

    a, b = SuitePartial(), SuitePartial()
    a.add(run("c", "c-1", 1), 5)
    a.add(run("c", "odd id", 0), 1)
    b.add(run("c", "c-2", 2), 3)
    b.add(run("c", "c-True", True), 0)  # a bool trial is not a trial number: kept as text
    a.merge(b)
    assert sorted(a.run_odd.values()) == ["c-True", "odd id"]  # the others kept as numbers
    assert list(a.run_trial) == [1, 0, 2, 0] and list(a.run_seq) == [5, 1, 3, 0]
    want = ("c-True", "odd id", "c-2", "c-1")
    assert a.finalize(n_boot=5).cases[0].run_ids == want
    assert pickle.loads(pickle.dumps(a)).finalize(n_boot=5).cases[0].run_ids == want
    rows = a.finalize(n_boot=5).cases  # the JSON rows built straight from the columns
    assert rows.json_rows(0, 1) == [rows[0].to_dict()] and rows.json_rows(0, 1)[0]["run_ids"] == list(want)


def test_write_json_writes_to_json_text(tmp_path):
    tau = ROOT / "tests" / "data" / "tau_bench" / "gpt-4o-airline.json"
    sc = evaluate_stream(stream(tau), n_boot=50, keep_runs=5)
    sc = type(sc)(**{**sc.__dict__, "meta": {**sc.meta, "note": "line\nbreak ü"}})
    out = tmp_path / "sc.json"
    sc.write_json(out)
    assert out.read_text(encoding="utf-8") == sc.to_json() + "\n"
    empty = type(sc)(suite=sc.suite)
    empty.write_json(out)
    assert out.read_text(encoding="utf-8") == empty.to_json() + "\n"


def test_write_json_spells_odd_values_as_json_does(tmp_path):
    """write_json hands plain rows to orjson (C) only when orjson spells every value as
    ``json`` does: floats with exponents, NaN, integers past 64 bits, control characters,
    non-string keys and objects written through ``default=str`` give ``to_json``'s bytes."""
    import dataclasses
    import enum

    class Kind(enum.Enum):
        A = 1

    @dataclasses.dataclass
    class Pt:
        x: int = 1

    tau = ROOT / "tests" / "data" / "tau_bench" / "gpt-4o-airline.json"
    sc = evaluate_stream(stream(tau), n_boot=50, keep_runs=8)
    odd = [{"tiny": 1e-07, "big": 1e16, "huge": 2**70, "nan": float("nan"), "neg0": -0.0},
           {"s": "ab \u2028 \x01 \"q\" é", "keys": {1: "one", 2.5: "x", None: 0, False: 1}},
           {"enum": Kind.A, "dc": Pt(), "tuple": (1, [2, ()]), "empty": [{}, [], ""]},
           {"plain": 0.6666666666666666, "list": [1, 2.5, None, True]}]
    runs = tuple(dataclasses.replace(r, metrics={**r.metrics, "odd": o})
                 for r, o in zip(sc.runs, odd * 2))
    sc = dataclasses.replace(sc, runs=runs)
    out = tmp_path / "sc.json"
    sc.write_json(out)
    assert out.read_text(encoding="utf-8") == sc.to_json() + "\n"
    # the runs left as they were: writing did not change their metrics
    assert sc.runs[1].metrics["odd"]["keys"] == {1: "one", 2.5: "x", None: 0, False: 1}


def test_case_store_round_trips_odd_rows_and_shares_ids(tmp_path):
    """The store's compressed rows (a preset dictionary of the first row, orjson or json to
    read back) give the loaded cases for integers past 64 bits, non-ASCII text and nested
    values; the definition hash is the case's; ids are interned (an aggregate keyed by them
    shares the strings); a row JSON cannot hold stays a built case."""
    import sys

    from trajcheck.read.case_store import CaseStore

    rows = [{"id": "a", "input": "réservation ü", "expected_calls": [
                {"name": "book", "args": {"id": 2**70, "x": [1.5, {"y": None}], "f": 1e-07}}]},
            {"id": "b", "input": "x", "expected_calls": [{"name": "book", "args": {"id": -2**64}}],
             "metadata": {"k": [True, False]}},
            {"id": "c", "input": "x"}]
    p = tmp_path / "cases.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    want = load_cases(p)
    store = load_case_store(p)
    assert [store[c.id] for c in want] == want
    assert [store.case_hash(c.id) for c in want] == [case_hash(c) for c in want]
    assert [case_hash(store[c.id]) for c in want] == [case_hash(c) for c in want]
    assert all(k is sys.intern(k) for k in store)
    assert all(isinstance(store._rows[k], bytes) for k in store)
    import datetime

    odd = CaseStore()
    c = want[2]
    odd.add(c, {"id": "c", "input": "x", "metadata": {"when": datetime.date(2026, 1, 1)}})
    assert odd["c"] is c and odd.case_hash("c") == case_hash(c)
