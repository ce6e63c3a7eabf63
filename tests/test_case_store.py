"""The case store's plans by id and rebuilt cases equal what the built cases give: every plan
field (value and type), the case, its hash and expected calls, for both codecs, before and
after the compression dictionary is made, pickled and not; and the keyer's by-id path
records the problems its case path records."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import pickle
from pathlib import Path

import pytest

from trajcheck.model import Case, Trajectory
from trajcheck.read import case_store
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.read.intake import RunKeyer
from trajcheck.score.case_plan import CasePlan, case_plan, plan_for
from trajcheck.score.fingerprint import case_hash

ROOT = Path(__file__).resolve().parent.parent
RAW_BYTES = case_store.RAW_BYTES
CODECS = ["zlib"] + (["zstd"] if case_store._zstd is not None else [])


def _volume_rows(n: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vol)
    return [vol.case_of(0, i) for i in range(n)]


# rows outside the fast path's scope and odd values, beside the volume rows
ODD_ROWS = [
    {"id": "m", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "a"}, "match": {"q": "contains"}}]},
    {"id": "p", "input": "x", "expected_calls": ["a", "b"], "precedence": [["a", "b"]]},
    {"id": "bare", "input": {"text": "structured"}, "expected_calls": ["a", {"name": "b", "args": None}],
     "optional_calls": [], "user": None, "max_steps": 4, "optimal_steps": 2, "threshold": 0.5},
    {"id": "modes", "input": "x", "args_mode": "expected_keys",
     "expected_calls": [{"name": "t", "args": {"n": 2**70, "f": -0.0, "s": "é\u2028"}},
                        {"name": "t", "args": {"n": 1}, "args_mode": "expected_keys"}],
     "forbidden_calls": ["drop_*", "rm"], "metadata": {"category": "writes"}},
    {"id": "own", "input": "x", "expected_calls": [{"name": "t", "args": {"n": 1}, "args_mode": "ignore"},
                                                   {"name": "u", "args": {"k": [1, {"z": None}]},
                                                    "args_mode": "exact_keys"}]},
    {"id": "meta", "input": "x", "expected_calls": ["t"], "metadata": {"weights": {"outcome": 1}}},
]


def _same_plan(a: CasePlan | None, b: CasePlan | None) -> None:
    if a is None or b is None:
        assert a is None and b is None
        return
    for f in dataclasses.fields(CasePlan):
        if f.name in ("source", "forbidden_pattern", "case_hash"):
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert x == y and type(x) is type(y), f.name


def _check(store: CaseStore, want: list[Case]) -> None:
    assert list(store) == [c.id for c in want] and len(store) == len(want)
    for c in want:
        plan = store.plan(c.id)
        _same_plan(case_plan(c), plan)
        _same_plan(plan_for(store, c.id), plan)
        got = store[c.id]
        assert got == c and got.to_dict() == c.to_dict()
        assert case_hash(got) == case_hash(c) == store.case_hash(c.id)
        _same_plan(case_plan(got), plan)  # the plan a rebuilt case carries
        if plan is not None:
            assert plan.hash_of() == case_hash(c)
            assert plan.case() == c
            assert [plan.expected_call(j) for j in range(len(c.expected_calls))] == list(c.expected_calls)
    with pytest.raises(KeyError):
        store.plan("no such case")
    assert store.get("no such case") is None


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("train_rows", [4, 1000])  # compressed after the 4th row / kept plain
@pytest.mark.parametrize("raw_bytes", [0, 2000, RAW_BYTES])  # parts kept uncompressed
def test_plans_and_cases_from_the_store_equal_the_built_ones(tmp_path, monkeypatch, codec, train_rows,
                                                              raw_bytes):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", train_rows)
    monkeypatch.setattr(case_store, "RAW_BYTES", raw_bytes)
    rows = ODD_ROWS + _volume_rows(60)
    p = tmp_path / "cases.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    want = load_cases(p)
    store = CaseStore(codec=codec, cache_size=2)
    for c, r in zip(want, rows):
        store.add(c, r)
    assert (store._dict is None) == (train_rows > len(rows))
    packed = [v[case_store._SLOT] & case_store._PACKED for v in store._rows.values()
              if isinstance(v, bytes) and len(v) > case_store._HEAD]
    assert any(packed) == (train_rows < len(rows) and raw_bytes < RAW_BYTES)
    assert all(packed) == (train_rows < len(rows) and raw_bytes == 0)
    _check(store, want)
    assert [case_plan(c) is None for c in want[:6]] == [True, True, False, False, False, True]
    _check(pickle.loads(pickle.dumps(store)), want)


def test_store_compresses_volume_rows(monkeypatch):
    """A volume row (three calls) takes about a third of its JSON text once the dictionary
    is made; before, rows are kept as written."""
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 200)
    monkeypatch.setattr(case_store, "RAW_BYTES", 0)
    rows = _volume_rows(400)
    store = CaseStore()
    for r in rows:
        store.add(Case.from_dict(r), r)
    text = sum(len(json.dumps(r, ensure_ascii=False, separators=(",", ":"))) for r in rows)
    held = sum(len(v) for v in store._rows.values()) + sum(map(len, store._frames))
    assert held < 0.45 * text
    _check(store, [Case.from_dict(r) for r in rows])


def test_load_case_store_gives_plans_of_the_example_datasets():
    for path in sorted((ROOT / "examples").rglob("*cases*.jsonl")):
        _check(load_case_store(path), load_cases(path))


def test_keying_by_id_records_what_keying_cases_records():
    cases = [Case(id="a", input="x"), Case(id="b", input="y"), Case(id="c", input="z")]
    store = CaseStore()
    for c in cases:
        store.add(c, c.to_dict())
    runs = [Trajectory(metadata={"case_id": "a", "run_id": "r0"}), Trajectory(metadata={}),
            Trajectory(metadata={"case_id": "zz", "run_id": "r2"}), Trajectory(metadata={"case_id": "b"}),
            Trajectory(metadata={"case_id": "A", "run_id": "r4"})]
    renamed = {"A": cases[0], "b": cases[1], "c": cases[2]}  # held under another key than its id
    problems = []
    for mapping in (store, {c.id: c for c in cases}, renamed):
        by_case, by_id = RunKeyer(mapping), RunKeyer(mapping)
        got = [by_case.key(i, t) for i, t in enumerate(runs)]
        ids = [by_id.key_id(i, t) for i, t in enumerate(runs)]
        assert [None if k is None else mapping[k] for k in ids] == got
        assert by_case.finish() == by_id.finish()
        assert (by_case.seen, by_case.no_cid, by_case.unknown) == (by_id.seen, by_id.no_cid, by_id.unknown)
        problems.append(by_id.problems)
    assert problems[0] == problems[1] == [
        "trace 1 (run #1): no case_id in its metadata; not scored",
        "trace 2 (run r2): case id 'zz' is not among the cases; not scored",
        "trace 4 (run r4): case id 'A' is not among the cases; not scored",
        "case 'c': no traces; not scored"]
    # a case held under another key than its id: seen under its id, as the case path does
    assert problems[2] == [
        "trace 0 (run r0): case id 'a' is not among the cases; not scored",
        "trace 1 (run #1): no case_id in its metadata; not scored",
        "trace 2 (run r2): case id 'zz' is not among the cases; not scored",
        "case 'A': no traces; not scored", "case 'c': no traces; not scored"]
    assert by_id.seen == {"a", "b"}


def test_codec_is_checked():
    with pytest.raises(ValueError, match="codec must be"):
        CaseStore(codec="lz4")


def test_plain_case_hash_is_the_json_one():
    """``case_hash(plain=True)`` (orjson's text when it spells every value as json does)
    gives json's hash: floats json writes with an exponent and orjson without (1e-05,
    0.00001), 1e16, integers past 63 and 64 bits, non-ASCII keys and text, control
    characters, strings that look like exponents."""
    from trajcheck.score import fingerprint

    odd = [1e-05, 0.0001, 1e16, 1e15, 5e-324, -0.0, 0.1 + 0.2, 2**63 + 1, 2**64 + 5, -(2**63),
           "1e5", "0.00001", "é\u2028\x01\x1f\"\\", None, True, [], {}]
    rows = _volume_rows(50) + [
        {"id": f"o{i}", "input": "x", "expected_calls": [{"name": "t", "args": {"v": v, "ü": [v, {"k": v}]}}],
         "metadata": {"category": "é"}} for i, v in enumerate(odd)]
    for r in rows:
        c = Case.from_dict(r)
        assert fingerprint.case_hash(c, plain=True) == fingerprint.case_hash(c)
    assert fingerprint._may_differ(b'{"a":1e-05}') and fingerprint._may_differ(b"0.00001")
    assert fingerprint._may_differ(b"[5E-324]") and not fingerprint._may_differ(b'{"e":"refund","n":10.5}')


def test_split_plan_holds_every_field():
    from trajcheck.score import case_plan as cp

    assert set(cp._SHAPE) | set(cp._PART) | {"forbidden_pattern", "case_hash", "case_id", "source"} == {
        f.name for f in dataclasses.fields(CasePlan)}
    assert len(set(cp._SHAPE) | set(cp._PART)) == len(cp._SHAPE) + len(cp._PART)


def test_pickled_store_case_carries_its_plan_not_the_store():
    rows = _volume_rows(3)
    store = CaseStore()
    for r in rows:
        store.add(Case.from_dict(r), r)
    c = store["case0000001"]
    assert case_plan(c).source == (store, "case0000001")
    blob = pickle.dumps(c)
    assert len(blob) < 4000  # the store is not pickled with the plan
    back = pickle.loads(blob)
    plan = case_plan(back)
    assert back == c and plan.case() is back
    _same_plan(plan, store.plan("case0000001"))


@pytest.mark.parametrize("row", [
    {"name": "t"}, {"name": "t", "args": {"a": 1}}, {"name": "t", "args": None, "match": {}},
    {"name": "t", "args": {"a": [1]}, "match": {"a": "contains"}, "args_mode": "ignore"},
    {"name": "t", "args_mode": None}, {"name": "", "args": {}}, {"name": 3},
    {"name": "t", "args": [["a", 1]]}, {"name": "t", "args_mode": "nope"}, {"name": "t", "args_mode": ["x"]},
    {"name": "t", "match": [["a", "exact"]]},
])
def test_expected_call_from_dict_is_the_constructor(row):
    """ExpectedCall.from_dict skips __post_init__ only when its checks hold: the same
    object, or the same error, as the constructor with from_dict's conversions."""
    from trajcheck.errors import DatasetError
    from trajcheck.model import ExpectedCall

    def via_init():
        args, match = row.get("args"), row.get("match")
        return ExpectedCall(name=row["name"], args=dict(args) if args is not None else None,
                            match=dict(match) if match else {}, args_mode=row.get("args_mode"))

    try:
        want = via_init()
    except (DatasetError, TypeError, ValueError) as e:
        with pytest.raises(type(e)) as got:
            ExpectedCall.from_dict(row)
        assert str(got.value) == str(e)
        return
    got = ExpectedCall.from_dict(row)
    assert got == want and got.__dict__ == want.__dict__


def test_case_with_a_big_plan_is_stored(monkeypatch):
    """A plan part of 70,000 characters of arguments is stored like any other, with the
    same plan and hash."""
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 2)
    rows = [{"id": "big", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "y" * 70_000}}]},
            {"id": "small", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "y"}}]}]
    store = CaseStore()
    want = [Case.from_dict(r) for r in rows]
    for c, r in zip(want, rows):
        store.add(c, r, plain=True)
    assert isinstance(store._rows["big"], bytes) and isinstance(store._rows["small"], bytes)
    _check(store, want)


def test_shapes_are_kept_once_and_inline_past_the_cap(monkeypatch):
    """Cases of one shape (names, modes, optional and forbidden tools) share it; past
    MAX_SHAPES a case keeps its shape in its own part, with the same plan."""
    monkeypatch.setattr(case_store, "MAX_SHAPES", 3)
    rows = _volume_rows(80)
    rows += [dict(r, id=r["id"] + "b", input="other") for r in rows[:3]]
    store = CaseStore()
    want = [Case.from_dict(r) for r in rows]
    for c, r in zip(want, rows):
        store.add(c, r, plain=True)
    assert len(store._shapes) == 3
    def ix(cid):
        return int.from_bytes(store._rows[cid][case_store._SLOT + 1:case_store._HEAD], "little")

    inline = [cid for cid in store if ix(cid) == case_store._INLINE]
    assert inline and len(inline) < len(rows)
    _check(store, want)
    shared = [store.plan(c.id) for c in want if ix(c.id) == 0]
    assert len(shared) > 1 and all(p.by_name is shared[0].by_name for p in shared)


def test_join_gives_back_every_split_field():
    from trajcheck.score import case_plan as cp

    plan = case_plan(Case.from_dict(ODD_ROWS[3]))
    key, shape, part = cp.split(plan)
    back = cp.join(shape, part, plan.case_id, "h", plan.case())
    assert [getattr(back, k) for k in cp._SHAPE] == list(shape)
    assert [getattr(back, k) for k in cp._PART] == list(part)
    assert (back.forbidden_pattern, back.case_hash, back.source, back.case_id) == (
        {}, "h", plan.case(), "modes")
    assert list(back.__dict__) == [f.name for f in dataclasses.fields(CasePlan)]
    assert key == cp.shape_key(plan.exp_names, plan.own_modes, plan.args_mode, plan.optional,
                               plan.forbidden)
