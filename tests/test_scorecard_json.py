"""The scorecard JSON written fast gives ``json``'s bytes: orjson's text is used only where
it is proven to spell every value as ``json.dumps(..., ensure_ascii=False)`` does, and the
case rows built from a partial's columns (numpy route) equal the plain route's and
``CaseResult.to_dict``'s."""

from __future__ import annotations

import dataclasses
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.aggregate.case_sums import CaseSums
from trajcheck.aggregate.partials import SuitePartial
from trajcheck.report.scorecard import RunResult, _indented_rows

orjson = pytest.importorskip("orjson")


def test_every_code_point_is_escaped_alike():
    """The proof behind the vouched rows (``_indented_rows(..., floats)``): for every code
    point but the surrogates orjson's string text is ``json``'s (ensure_ascii=False), so
    any string of them is; a lone surrogate orjson refuses (TypeError)."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert orjson.dumps(chars).decode() == json.dumps(chars, ensure_ascii=False, separators=(",", ":"))
    for s in ("\ud800", "a\udfffb"):
        with pytest.raises(TypeError):
            orjson.dumps(s)


def _json_rows_text(rows):
    """What write_json writes for rows two levels down when it writes them one by one."""
    return "".join(("," if q else "") + "\n    "
                   + json.dumps(d, indent=2, ensure_ascii=False, default=str).replace("\n", "\n    ")
                   for q, d in enumerate(rows))


plain = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8)
floats = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([1e-05, 1.5e-07, 1e16, 1e22, 0.1, 2 / 3, -0.0, 5e-324]))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.dictionaries(st.text(max_size=4), plain, max_size=4),
                               floats), min_size=1, max_size=5))
def test_vouched_rows_are_json_text_or_refused(rows):
    """Rows of plain values with their floats listed: orjson's text when the floats' texts
    agree (the result is then ``json``'s text), None (the caller writes json's) otherwise --
    never a different byte."""
    batch = [{**d, "x": x} for d, x in rows]
    got = _indented_rows(batch, 2, [d["x"] for d in batch])
    if got is not None:
        assert got == _json_rows_text(batch)
    fl = [d["x"] for d in batch]
    if any(isinstance(x, float) and (not math.isfinite(x) or x in (1e-05, 1.5e-07)) for x in fl):
        assert got is None  # json writes NaN, Infinity, 1e-05, 1.5e-07; orjson does not


def test_vouched_rows_refuse_what_orjson_spells_otherwise():
    assert _indented_rows([{"a": 1e-05}], 2, [1e-05]) is None
    assert _indented_rows([{"a": float("nan")}], 2, [float("nan")]) is None
    assert _indented_rows([{"a": 2**64}], 2, []) is None  # past 64 bits: orjson refuses
    assert _indented_rows([{"a": "\ud800"}], 2, []) is None
    assert _indented_rows([{"a": [1, "é\x01"], "b": 0.5}], 2, [0.5]) == _json_rows_text(
        [{"a": [1, "é\x01"], "b": 0.5}])


class Sub(str):
    def __str__(self) -> str:
        return "not the id"


def _run(i: int, case: str, f1: float | None, rid: str | None = None, h: str | None = None) -> RunResult:
    return RunResult(run_id=rid or f"{case}-{i}", case_id=case, trial=i, success=i % 2 == 0,
                     outcome_reason="", failure_reason=None, precision=1.0, recall=1.0, f1=f1,
                     composite=0.5, composite_passed=True, steps=1, n_calls=0, tokens=None,
                     cost_usd=None, latency_ms=None, route=None, expected_route=None,
                     recorded_reward=(1.0 if i % 3 == 0 else None), fault_run=False,
                     false_success=None, expected_tools=(), called_tools=(), matched=(),
                     metrics={}, case_hash=h)


def _partial(rnd: random.Random, ids: list[str], odd: bool) -> SuitePartial:
    """Runs of the cases in random order and groupings, merged: case rows out of the order
    of their first run, sums needing partials, cases without F1, odd run ids and hashes."""
    pool = [0.1, 1 / 3, 1e-05, 1e-300, 1e16, 0.0, 2 / 3, None, 1e-07]
    runs = []
    for t in range(1, 5):
        for c in ids:
            f1 = None if c.endswith("none") else rnd.choice(pool)
            rid = f"weird {c} {t}" if odd and rnd.random() < 0.2 else None
            h = rnd.choice([None, "0123456789abcdef", "not hex", "0000000000000000"]) if odd else None
            runs.append(_run(t, c, f1, rid, h))
    seqs = list(range(len(runs)))
    rnd.shuffle(seqs)
    parts = [SuitePartial(keep_runs=3) for _ in range(3)]
    for s in seqs:
        parts[rnd.randrange(3)].add(runs[s], s)
    out = parts[2].merge(parts[0]).merge(parts[1])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_case_rows_from_columns_equal_the_plain_route_and_the_json_text(tmp_path, seed):
    rnd = random.Random(seed)
    ids = [f"c{i}" for i in range(40)] + ["ü é", "tab\there", 'q"uote', "c-none", "new\nline"]
    if seed % 2:
        ids.append(Sub("subclass"))  # not an exact str: the writer checks every value
    part = _partial(rnd, ids, odd=seed >= 2)
    sc = part.finalize(n_boot=20)
    rows = sc.cases
    assert rows.json_float_keys() == (None if seed % 2 else ("mean_f1",))
    for a, b in ((0, len(rows)), (3, 11), (40, 100), (7, 7)):
        want = [r.to_dict() for r in rows[a:b]]
        assert rows.json_rows(a, b) == want == rows._json_rows_py(a, b)
    means = {d["mean_f1"] for d in rows.json_rows(0, len(rows))}
    assert None in means  # the case without F1
    out = tmp_path / "sc.json"
    sc.write_json(out)
    assert out.read_text(encoding="utf-8") == sc.to_json() + "\n"


def test_case_rows_with_an_exponent_float_fall_back_to_json(tmp_path):
    """A mean F1 json writes as 1e-05 (orjson: 0.00001): that batch is written by json."""
    part = SuitePartial()
    for i in range(1, 4):
        part.add(_run(i, "tiny", 1e-05))
        part.add(_run(i, "plain", 0.5))
    sc = part.finalize(n_boot=10)
    assert [d["mean_f1"] for d in sc.cases.json_rows(0, 2)] == [1e-05, 0.5]
    out = tmp_path / "sc.json"
    sc.write_json(out)
    text = out.read_text(encoding="utf-8")
    assert text == sc.to_json() + "\n" and '"mean_f1": 1e-05' in text


def test_totals_and_means_in_whole_columns_equal_row_by_row(monkeypatch):
    """CaseSums.totals/means (numpy) give total(i) and total(i) / count(i) float for float:
    sums held in two floats, in partials (three floats needed), infinities, -0.0, and rows
    without values left out of the means."""
    import numpy as np

    import trajcheck.aggregate.case_sums as cs

    rnd = random.Random(2)
    pool = [0.1, 1 / 3, 1e-300, 1e16, -0.0, 0.0, 2 / 3, 1e-17, -0.3]
    s = CaseSums()
    for i in range(300):
        s.grow()
        for _ in range(rnd.randint(0, 5)):
            s.add(i, rnd.choice(pool) if rnd.random() > 0.01 else float("inf"))
    s.add(5, -0.0)
    rows = list(range(300))
    rnd.shuffle(rows)
    got = s.totals(np, np.asarray(rows)).tolist()
    want = [s.total(i) for i in rows]
    assert [repr(x) for x in got] == [repr(x) for x in want]  # NaN, inf and -0.0 alike
    assert s.over  # some sums needed partials
    fast = s.means(rows)
    monkeypatch.setattr(cs, "_numpy", lambda: None)
    slow = s.means(rows)
    assert [repr(x) for x in fast] == [repr(x) for x in slow]
    assert len(slow) == sum(1 for i in rows if s.count[i])


def test_scorecard_with_odd_ids_round_trips(tmp_path):
    """Odd ids in every column of the JSON rows, through dataclasses.replace as well."""
    part = _partial(random.Random(9), ["a", "b\x7f", "c\u2028"], odd=True)
    sc = part.finalize(n_boot=10)
    sc = dataclasses.replace(sc, problems=("p\x00",))
    out = tmp_path / "sc.json"
    sc.write_json(out)
    assert out.read_text(encoding="utf-8") == sc.to_json() + "\n"


def test_group_columns_and_sorted_values_give_the_plain_results():
    """finalize's per-task pass^k columns made by group number (numpy) equal the per-task
    lookup, and the efficiency figures from numpy-sorted values equal describe's on the
    values in their own order (a field with a NaN left as it is: the same error)."""
    from array import array

    from trajcheck.aggregate.partials import _group_columns, _sorted_values
    from trajcheck.errors import MetricInputError
    from trajcheck.metrics.efficiency import describe

    rnd = random.Random(4)
    for _ in range(50):
        ns = array("i", [rnd.choice([1, 2, 4, 9, 300]) for _ in range(rnd.randint(1, 60))])
        cs = array("i", [rnd.randint(0, n) for n in ns])
        groups = list(dict.fromkeys(zip(cs, ns)))
        value = {g: rnd.random() for g in groups}
        assert _group_columns(cs, ns, groups)(value) == array("d", [value[g] for g in zip(cs, ns)])
    vals = {"a": array("d", [rnd.choice([0.0, -0.0, 1.5, 3.0, 1e-9, 7.25]) for _ in range(999)]),
            "b": array("d", [2.0, float("nan"), 1.0]), "c": array("d", [5.0])}
    got = _sorted_values(vals)
    assert list(got["a"]) == sorted(vals["a"]) and got["b"] is vals["b"] and got["c"] is vals["c"]
    d1, d2 = describe(got["a"]), describe(vals["a"])
    assert [float(x) + 0.0 for x in dataclasses.astuple(d1)] == [float(x) + 0.0 for x in dataclasses.astuple(d2)]
    with pytest.raises(MetricInputError, match="value 1 is not finite"):
        describe(got["b"])


def test_unpickled_partial_builds_its_case_map_when_read():
    """A partial unpickled to be merged into another does not build its id -> row map
    (``cases``) until something reads it; merged either way, the same scorecard."""
    import pickle

    rnd = random.Random(1)
    a = _partial(rnd, [f"c{i}" for i in range(30)], odd=True)
    b = _partial(rnd, [f"c{i}" for i in range(20, 60)], odd=False)
    want = pickle.loads(pickle.dumps(a)).merge(pickle.loads(pickle.dumps(b))).finalize(n_boot=10)
    bb = pickle.loads(pickle.dumps(b))
    assert "cases" not in bb.__dict__
    with pytest.raises(AttributeError):
        bb.no_such_thing  # noqa: B018
    got = pickle.loads(pickle.dumps(a)).merge(bb).finalize(n_boot=10)
    assert "cases" not in bb.__dict__  # merged from without it
    assert got.to_dict() == want.to_dict()
    assert bb.cases == {c: i for i, c in enumerate(bb.ids)}
    assert pickle.loads(pickle.dumps(bb)).finalize(n_boot=10).to_dict() == b.finalize(n_boot=10).to_dict()


def test_plain_floats_vouches_only_plain_values():
    """The run rows' walk: every float found (any depth, in order); None for anything
    orjson may spell otherwise than json -- str or int subclasses (an IntEnum, a bool is
    fine), enums, non-str keys, sets, bytes, dataclasses -- or nesting past the recursion
    limit; the rows it vouches are written as json writes them."""
    import enum

    from trajcheck.report.scorecard import _plain_floats

    class Color(enum.Enum):
        RED = 1

    class Num(enum.IntEnum):
        ONE = 1

    rows = [{"a": [1, 0.5, {"b": (2.5, None, True)}], "c": "x", "d": 1e-05}, {"e": -0.0}]
    assert _plain_floats(rows) == [0.5, 2.5, 1e-05, -0.0]
    for odd in (Sub("s"), Num.ONE, Color.RED, {1: "k"}, {"s"}, b"b", [Sub("t")],
                {"k": frozenset()}, dataclasses.make_dataclass("P", [])()):
        assert _plain_floats([{"v": odd}]) is None
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert _plain_floats(deep) is None
    ok = [{"a": [1, 0.5, {"b": (2.5, None, True)}], "c": "x\n\u2028", "n": 2**63}]
    assert _indented_rows(ok, 2, _plain_floats(ok)) == _json_rows_text(ok)
    assert _indented_rows(rows, 2, _plain_floats(rows)) is None  # 1e-05: json's spelling


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=3), st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=4), floats),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=10), max_size=4), min_size=1, max_size=4))
def test_walked_rows_are_json_text_or_refused(rows):
    from trajcheck.report.scorecard import _plain_floats

    got = _indented_rows(rows, 2, _plain_floats(rows))
    if got is not None:
        assert got == _json_rows_text(rows)
