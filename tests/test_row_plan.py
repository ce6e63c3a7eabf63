"""The direct way of loading a case row (``row_plan.direct``: plan, hash and stored row read
straight from the row) gives what the general way gives (build the ``Case``, then its plan,
hash and row): on every example and test dataset, the volume rows and hostile rows, field
by field; a whole store loaded with it equals one filled with built cases; and a file with
bad rows fails with the very errors ``load_cases`` gives."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trajcheck.errors import DatasetError
from trajcheck.model import Case
from trajcheck.read import case_store, dataset
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.read.limits import NOT_PLAIN, plain_loads
from trajcheck.score.case_plan import CasePlan, case_plan, split
from trajcheck.score.fingerprint import case_hash
from trajcheck.score.row_plan import direct

ROOT = Path(__file__).resolve().parent.parent
DATASETS = sorted(p for p in list((ROOT / "examples").rglob("*cases*.jsonl"))
                  + list((ROOT / "tests" / "data").rglob("cases*.jsonl")))


def _volume_rows(n: int, varied: bool = False) -> list[dict]:
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vol)
    return [vol.case_of(0, i, varied) for i in range(n)]


def _call(name: str, **kw: object) -> dict:
    return {"name": name, **kw}


# rows inside and just outside the direct way's scope, with odd but valid values
ODD_ROWS = [
    {"id": 7, "input": None},
    {"id": 0, "input": ["a", {"b": 1}], "expected_calls": []},
    {"id": "bare", "input": {"t": "x"}, "expected_calls": ["a", "a", _call("b", args=None)]},
    {"id": "nulls", "input": "x", "user": None, "max_steps": None, "optimal_steps": None,
     "threshold": None, "args_mode": None, "metadata": {},
     "expected_calls": [_call("t", args={"a": 1}, args_mode=None)]},
    {"id": "thr1", "input": "x", "threshold": 1, "max_steps": 0, "optimal_steps": 3,
     "expected_calls": [_call("t", args={})]},
    {"id": "thr0", "input": "x", "threshold": 0.0, "expected_calls": [_call("t")]},
    {"id": "user", "input": "x", "user": {"id": "u_1", "tier": [1, 2]}, "expected_calls": ["t"]},
    {"id": "emptyuser", "input": "x", "user": {}, "expected_calls": ["t"]},
    {"id": "cat", "input": "x", "metadata": {"category": "writes"}, "expected_calls": ["t"]},
    {"id": "catnum", "input": "x", "metadata": {"category": 3}, "expected_calls": ["t"]},
    {"id": "modes", "input": "x", "args_mode": "expected_keys",
     "expected_calls": [_call("t", args={"n": 2**60, "f": -0.0, "s": "é\u2028", "g": 1e16, "h": 1e-7}),
                        _call("t", args={"n": 1}, args_mode="expected_keys")],
     "forbidden_calls": ["drop_*", "rm"], "optional_calls": ["get", "get", "list"]},
    {"id": "conflict", "input": "x", "args_mode": "exact_keys",
     "expected_calls": [_call("t", args={"n": 1}, args_mode="ignore")]},
    {"id": "own", "input": "x", "expected_calls": [
        _call("t", args={"n": 1}, args_mode="ignore"),
        _call("u", args={"k": [1, {"z": None}], "m": {"b": 2, "a": [True, False]}}, args_mode="exact_keys")]},
    {"id": "keyed", "input": "x", "expected_calls": [_call("s", args={"q": i % 3, "r": "x"}) for i in range(9)]
     + [_call("t", args={"q": 1})] * 4 + [_call("t", args={"p": 1})] * 5},
    {"id": "keyed_ignore", "input": "x", "expected_calls": [_call("s", args={"q": i}, args_mode="ignore")
                                                            for i in range(8)]},
    {"id": "match", "input": "x", "expected_calls": [_call("t", args={"q": "a"}, match={"q": "contains"})]},
    {"id": "emptymatch", "input": "x", "expected_calls": [_call("t", args={"q": "a"}, match={})]},
    {"id": "prec", "input": "x", "expected_calls": ["a", "b"], "precedence": [["a", "b"]]},
    {"id": "meta", "input": "x", "expected_calls": ["t"], "metadata": {"weights": {"outcome": 1}}},
    {"id": "tools", "input": "x", "expected_calls": ["t"], "tools": [{"name": "t"}]},
    {"id": "state", "input": "x", "expected_calls": ["t"], "initial_state": "db.sql"},
    {"id": "fs", "input": "x", "expected_calls": ["t"], "expected_final_state": {"t": []}},
    {"id": "route", "input": "x", "expected_route": ["a"]},
    {"id": "resp", "input": "x", "response_must_include": ["ok"]},
    {"id": "seq", "input": "x", "expected_calls": ["a"], "forbidden_sequences": [{"tool": "b", "requires_prior": "a"}]},
    {"id": "faults", "input": "x", "faults": [{"tool": "a", "error": "boom"}]},
]


def _fields(plan: CasePlan) -> dict:
    return {f.name: getattr(plan, f.name) for f in dataclasses.fields(CasePlan)
            if f.name not in ("source", "forbidden_pattern", "case_hash")}


def _rows_of(path: Path) -> list[dict]:
    out = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            row = plain_loads(line)
            if row is not NOT_PLAIN:
                out.append(row)
    return out


def _same_as_built(row: dict) -> bool:
    """direct(row) against the general way; True when the row took the direct way."""
    got = direct(json.loads(json.dumps(row)))
    case = Case.from_dict(json.loads(json.dumps(row)))
    plan = case_plan(case)
    if got is None:
        return False
    assert plan is not None, row["id"]
    key, _shape, part = split(plan)
    assert (got.cid, got.key, got.part) == (case.id, key, part)
    for a, b in zip(got.part, part):
        assert type(a) is type(b)
    assert got.hash == case_hash(case) == case_hash(case, plain=True)
    assert got.stored == {k: v for k, v in row.items() if k != "expected_calls"}
    return True


def test_direct_rows_equal_the_built_cases():
    took = [r["id"] for r in ODD_ROWS if _same_as_built(r)]
    assert took == [7, 0, "bare", "nulls", "thr1", "thr0", "user", "emptyuser", "cat", "catnum",
                    "modes", "own", "keyed", "keyed_ignore"]
    assert all(_same_as_built(r) for r in _volume_rows(300))
    assert all(_same_as_built(r) for r in _volume_rows(300, varied=True))


@pytest.mark.parametrize("path", DATASETS, ids=lambda p: str(p.relative_to(ROOT)))
def test_direct_rows_of_the_datasets(path):
    for row in _rows_of(path):
        if isinstance(row, dict) and "id" in row and "input" in row:
            try:
                Case.from_dict(json.loads(json.dumps(row)))
            except DatasetError:
                continue
            if dataset._fast_validator() is None or dataset._fast_validator().is_valid(row):
                _same_as_built(row)


def _store_equal(got: CaseStore, want: list[Case]) -> None:
    assert list(got) == [c.id for c in want] and len(got) == len(want)
    assert "no such case" not in got and got.get("no such case") is None
    general = CaseStore()
    for c in want:
        general.add(c, c.to_dict())
    for c in want:
        assert got[c.id] == c and got[c.id].to_dict() == c.to_dict()
        assert got.case_hash(c.id) == case_hash(got[c.id]) == case_hash(c) == general.case_hash(c.id)
        p, q = got.plan(c.id), case_plan(c)
        assert (p is None) == (q is None)
        if p is not None:
            assert _fields(p) == _fields(q)
            assert p.hash_of() == case_hash(c)
        assert got._part(got._rows[c.id]) == general._part(general._rows[c.id])


def mixed_rows(n: int) -> list:
    """``n`` volume rows with the odd rows among them and again, under new ids, at the end."""
    rows = _volume_rows(n)
    rows[40:40] = ODD_ROWS
    rows += [dict(r, id=f"again{i}", input="other") for i, r in enumerate(ODD_ROWS)]
    return rows


@pytest.mark.parametrize("train_rows", [8, 10_000])
def test_store_loaded_directly_equals_the_built_cases(tmp_path, monkeypatch, train_rows):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", train_rows)
    rows = mixed_rows(120)
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "db.sql").write_text("", encoding="utf-8")
    _store_equal(load_case_store(path), load_cases(path))


def test_some_datasets_found():
    assert len(DATASETS) >= 4


@pytest.mark.parametrize("path", DATASETS, ids=lambda p: str(p.relative_to(ROOT)))
def test_store_of_each_dataset_equals_its_built_cases(path):
    try:
        want = load_cases(path)
    except DatasetError as e:
        with pytest.raises(DatasetError) as got:
            load_case_store(path)
        assert str(got.value) == str(e)
        return
    _store_equal(load_case_store(path), want)


def test_bad_rows_give_the_same_errors(tmp_path):
    """Bad rows before, between and after direct ones: the store's load fails with the
    errors load_cases lists, in the same order (file, line, case, field)."""
    good = _volume_rows(30)
    bad = [
        {"id": "b1", "input": "x", "expected_call": ["t"]},
        {"id": "b2", "input": "x", "threshold": 1.5},
        {"id": "b3", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "a"}, "match": {"q": "contians"}}]},
        {"id": "case0000003", "input": "dup"},
        {"id": "b4", "input": "x", "optional_calls": "get"},
        {"id": "b5", "input": "x", "expected_calls": [{"name": ""}]},
        {"id": "b6", "input": "x", "forbidden_sequences": [{"nope": 1}]},
        {"id": "b7", "input": "x", "max_steps": 2.0, "expected_calls": ["t"]},
    ]
    rows = [bad[0]] + good[:10] + bad[1:4] + good[10:20] + bad[4:] + good[20:]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError) as want:
        load_cases(path)
    with pytest.raises(DatasetError) as got:
        load_case_store(path)
    assert str(got.value) == str(want.value)
    assert str(want.value).count("\n") == 9  # the header, then eight rows' errors and the bad JSON


def test_scoring_check_skips_direct_rows_in_a_store_load(tmp_path, monkeypatch):
    """A store load scores no row the direct way reads (it has no fault to find: the
    property test below); load_cases scores each row shape once, as before."""
    scored: list[str] = []
    real = dataset._scoring_errors

    def spy(case: Case) -> list[str]:
        scored.append(case.id)
        return real(case)

    monkeypatch.setattr(dataset, "_scoring_errors", spy)
    rows = [{"id": f"c{i}", "input": f"text {i}", "expected_calls": [_call("t", args={"q": f"v{i}", "n": i})]}
            for i in range(20)]
    rows.append({"id": "nested", "input": "x", "expected_calls": [_call("t", args={"q": [1], "n": 1})]})
    rows.append({"id": "nested2", "input": "x", "expected_calls": [_call("t", args={"q": [2], "n": 1})]})
    rows.append({"id": "float", "input": "x", "expected_calls": [_call("t", args={"q": "v", "n": 1.5})]})
    rows.append({"id": "big", "input": "x", "expected_calls": [_call("t", args={"q": "v", "n": 2**60})]})
    rows.append({"id": "big2", "input": "x", "expected_calls": [_call("t", args={"q": "v", "n": 2**60 + 1})]})
    rows.append({"id": "big3", "input": "y", "expected_calls": [_call("t", args={"q": "w", "n": 2**60 + 1})]})
    rows.append({"id": "order", "input": "x", "expected_calls": [_call("t", args={"n": 5, "q": "v"})]})
    rows.append({"id": "rule", "input": "x", "expected_calls": ["a", "b"],  # outside the direct scope
                 "forbidden_sequences": [{"tool": "b", "requires_prior": "a"}]})
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = load_case_store(path)
    assert len(store) == len(rows)
    assert scored == ["rule"]
    scored.clear()
    assert len(load_cases(path)) == len(rows)
    # the general memo: one scoring per shape (scalars by type, big ints and containers as given)
    assert scored == ["c0", "nested", "nested2", "float", "big", "big2", "rule"]


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
_NAMES = (st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)
          | st.sampled_from(["get", "t", "drop_*", "[", "a?", "*", "[!x]"]))
_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70)
                       | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(_TEXT, c, max_size=3), max_leaves=8)
_MODES = st.sampled_from(["exact_keys", "expected_keys", "ignore", None])
_CALLS = _NAMES | st.fixed_dictionaries({"name": _NAMES}, optional={
    "args": st.none() | st.dictionaries(_TEXT, _VALUES, max_size=4), "args_mode": _MODES})
_ROWS = st.fixed_dictionaries({"id": _TEXT | st.integers(0, 10**6), "input": _VALUES}, optional={
    "expected_calls": st.lists(_CALLS, max_size=4), "args_mode": _MODES,
    "optional_calls": st.lists(_NAMES, max_size=3), "forbidden_calls": st.lists(_NAMES, max_size=3),
    "max_steps": st.none() | st.integers(0, 50), "optimal_steps": st.none() | st.integers(0, 50),
    "threshold": st.none() | st.floats(0, 1) | st.sampled_from([0, 1]), "user": _VALUES,
    "metadata": st.fixed_dictionaries({}, optional={"category": _VALUES})})


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(row=_ROWS)
def test_a_row_the_direct_way_reads_has_no_scoring_fault(row):
    """Why a store load may skip the scoring check for a direct row (row_plan's module doc):
    random schema-valid rows of the direct scope -- nested and non-ASCII values, huge ints,
    glob characters in names, every mode, bounds, thresholds, users, categories -- score
    without a fault against their own calls and an empty run. (Run it with 30,000 examples
    when the scope changes.)"""
    v = plain_loads(json.dumps(row, ensure_ascii=False).encode())
    assume(v is not NOT_PLAIN and dataset._fast_validator().is_valid(v) and not dataset._match_errors(v))
    assume(direct(dict(v)) is not None)
    assert dataset._scoring_errors(Case.from_dict(dict(v))) == []


@pytest.mark.parametrize("train_rows", [8, 10_000])
def test_store_of_varied_rows_equals_the_built_cases(tmp_path, monkeypatch, train_rows):
    """Rows each with their own argument names and value types (nested, non-ASCII; bench/
    volume.py --varied): none is scored by the load-time check (they are direct rows) or
    built a second time by CaseStore.add; the store equals one filled with the built cases."""
    monkeypatch.setattr(case_store, "TRAIN_ROWS", train_rows)
    rows = _volume_rows(150, varied=True)
    assert any(type(v) is dict for r in rows for c in r["expected_calls"] for v in c["args"].values())
    assert any(not k.isascii() for r in rows for c in r["expected_calls"] for k in c["args"])
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    scored: list[str] = []
    added: list[str] = []
    real_check, real_add = dataset._scoring_errors, CaseStore.add

    def check(case: Case) -> list[str]:
        scored.append(case.id)
        assert case.__dict__["_case_hash"] == case_hash(Case.from_dict(case.to_dict()))
        return real_check(case)

    def add(self: CaseStore, case: Case, row: dict, **kw: object) -> None:
        added.append(case.id)
        real_add(self, case, row, **kw)

    monkeypatch.setattr(dataset, "_scoring_errors", check)
    monkeypatch.setattr(CaseStore, "add", add)
    store = load_case_store(path)
    assert scored == [] and added == []
    monkeypatch.setattr(CaseStore, "add", real_add)
    monkeypatch.setattr(dataset, "_scoring_errors", real_check)
    _store_equal(store, load_cases(path))
