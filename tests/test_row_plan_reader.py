"""``row_plan.Reader`` (``direct`` with the per-skeleton work done once) fills a case store
byte for byte as ``row_plan.direct`` alone does: the same plan parts, stored rows, frames and
shapes -- on the volume rows, odd rows in and out of its scope, and generated rows
(hypothesis) mixing skeletons that repeat, integers past 2**53, floats, container
arguments, keyed tools, modes and bounds. And loads with bad rows fail with the same
errors either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_row_plan import _store_equal, _volume_rows, mixed_rows

from trajcheck.errors import DatasetError
from trajcheck.read import case_store
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.score import row_plan


class _DirectOnly:
    """A stand-in ``Reader``: ``direct`` for every row (the general route of the load)."""

    def __init__(self, store: CaseStore) -> None:
        pass

    def __call__(self, row: dict) -> row_plan.Direct | None:
        return row_plan.direct(row)


def _internals(store: CaseStore) -> tuple:
    return (list(store._rows.items()), store._frames, store._open, store._shapes,
            list(store._shape_ix.items()), store._dict, store._raw_bytes, store._n_plain)


def _both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CaseStore, CaseStore]:
    fast = load_case_store(path)
    with monkeypatch.context() as m:
        m.setattr(row_plan, "Reader", _DirectOnly)
        general = load_case_store(path)
    return fast, general


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("train_rows", [8, 10_000])
def test_reader_fills_the_store_as_direct_does(tmp_path, monkeypatch, train_rows):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", train_rows)
    rows = mixed_rows(300)
    big = {"id": "big", "input": "x", "expected_calls": [{"name": "t", "args": {"n": 2**60, "s": "a"}}]}
    rows += [big, dict(big, id="big2"), dict(big, id="small", expected_calls=[
        {"name": "t", "args": {"n": 3, "s": "b"}}]), dict(big, id="big3")]
    (tmp_path / "db.sql").write_text("", encoding="utf-8")
    path = _write(tmp_path / "cases.jsonl", rows)
    fast, general = _both_ways(path, monkeypatch)
    assert _internals(fast) == _internals(general)
    _store_equal(fast, load_cases(path))


def test_reader_past_the_shape_cap(tmp_path, monkeypatch):
    """Shapes past the store's cap keep their shape in the part: the reader leaves those
    rows to ``direct``, and the bytes stay the same."""
    monkeypatch.setattr(case_store, "MAX_SHAPES", 3)
    rows = _volume_rows(200)
    path = _write(tmp_path / "cases.jsonl", rows)
    fast, general = _both_ways(path, monkeypatch)
    assert _internals(fast) == _internals(general)
    assert len(fast._shapes) == 3


def test_reader_gives_up_skeletons_that_do_not_repeat(tmp_path, monkeypatch):
    """Rows that each have their own argument names (bench/volume.py --varied) seldom
    repeat a skeleton: past ``PROBE_SKELETONS`` new ones the reader takes ``direct`` for
    every row, and the store is the one ``direct`` alone fills, byte for byte."""
    monkeypatch.setattr(row_plan, "PROBE_SKELETONS", 8)
    rows = _volume_rows(60, varied=True) + [dict(r, id=f"rep{i}") for i, r in enumerate(_volume_rows(60))]
    path = _write(tmp_path / "cases.jsonl", rows)
    made: list[row_plan.Reader] = []
    real = row_plan.Reader

    class Kept(real):  # type: ignore[misc,valid-type]
        def __init__(self, store: CaseStore) -> None:
            super().__init__(store)
            made.append(self)

    with monkeypatch.context() as m:
        m.setattr(row_plan, "Reader", Kept)
        fast = load_case_store(path)
    assert made[0]._direct_only and made[0]._met == 8
    general = _both_ways(path, monkeypatch)[1]
    assert _internals(fast) == _internals(general)
    _store_equal(fast, load_cases(path))
    # two rows or more per skeleton keep the reader on
    made.clear()
    rep = [dict(r, id=f"{r['id']}-{k}") for r in _volume_rows(12) for k in range(3)]
    with monkeypatch.context() as m:
        m.setattr(row_plan, "Reader", Kept)
        load_case_store(_write(tmp_path / "rep.jsonl", rep))
    assert not made[0]._direct_only and made[0]._met == 12


_NAMES = st.sampled_from(["a", "b", "c", "get_user", "é"])
_SCALARS = st.one_of(st.integers(min_value=-2**63, max_value=2**63 - 1), st.sampled_from([2**53, 2**53 + 1, -2**53 - 1]),
                     st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
                     st.text(max_size=6))
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=2), st.dictionaries(st.sampled_from(["x", "y"]), _SCALARS,
                                                                              max_size=2))
_MODES = st.sampled_from([None, "exact_keys", "expected_keys", "ignore"])


@st.composite
def _call(draw: st.DrawFn) -> object:
    name = draw(_NAMES)
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return name
    c: dict = {"name": name}
    if kind >= 2:
        c["args"] = draw(st.one_of(st.none(), st.dictionaries(st.sampled_from(["id", "q", "n"]),
                                                              _VALUES if kind == 3 else _SCALARS, max_size=3)))
    mode = draw(_MODES)
    if mode is not None or draw(st.booleans()):
        c["args_mode"] = mode
    return c


@st.composite
def _row(draw: st.DrawFn, i: int) -> dict:
    row: dict = {"id": f"r{i}" if draw(st.integers(0, 9)) else i,
                 "input": draw(st.one_of(st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2)))}
    template = draw(st.integers(0, 2))  # rows of few templates share skeletons
    calls = [_call_of(template, j) for j in range(template + 1)]
    if draw(st.booleans()):
        calls = draw(st.lists(_call(), max_size=4))
    if draw(st.integers(0, 4)) == 0:
        calls = [{"name": "k", "args": {"q": draw(st.integers(0, 3))}} for _ in range(9)]
    row["expected_calls"] = calls
    for key, strat in (("optional_calls", st.lists(_NAMES, max_size=2)),
                       ("forbidden_calls", st.lists(st.sampled_from(["rm", "drop_*"]), max_size=2)),
                       ("max_steps", st.one_of(st.none(), st.integers(0, 9))),
                       ("optimal_steps", st.one_of(st.none(), st.integers(0, 9))),
                       ("threshold", st.one_of(st.none(), st.sampled_from([0, 1, 0.5, 1e-5, 0.25]))),
                       ("args_mode", _MODES),
                       ("metadata", st.sampled_from([{}, {"category": "w"}])),
                       ("user", st.sampled_from([None, {"id": "u"}]))):
        if draw(st.integers(0, 3)) == 0:
            row[key] = draw(strat)
    return row


def _call_of(template: int, j: int) -> dict:
    return {"name": ["a", "b", "c"][j], "args": {"id": 7 * j + template, "q": f"v{j}", "f": 0.5 + j}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reader_equals_direct_on_generated_rows(tmp_path, monkeypatch, data):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 8)
    rows = [data.draw(_row(i)) for i in range(data.draw(st.integers(1, 12)))]
    rows += [dict(r, id=f"copy{i}") for i, r in enumerate(rows)]  # each skeleton at least twice
    if data.draw(st.integers(0, 4)) == 0:  # a bad row among them: the same errors either way
        rows.insert(data.draw(st.integers(0, len(rows))), {"id": "bad", "input": "x", "threshold": 1.5})
    path = _write(tmp_path / "cases.jsonl", rows)
    try:
        fast, general = _both_ways(path, monkeypatch)
    except DatasetError as e:
        event("a bad row")
        with monkeypatch.context() as m:
            m.setattr(row_plan, "Reader", _DirectOnly)
            with pytest.raises(DatasetError) as got:
                load_case_store(path)
        assert str(got.value) == str(e)
        return
    event("all rows good")
    assert _internals(fast) == _internals(general)
