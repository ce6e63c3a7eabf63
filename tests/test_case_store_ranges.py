"""A dataset loaded in byte ranges (``dataset.load_case_store_range``), each range into its
own store made with the first store's dictionary and joined in order (``CaseStore.extend``),
is the store ``load_case_store`` gives: the same ids in the same order, the same bytes for
every row, the same built cases; and a bad row, bad bytes or an id repeated across ranges
are refused, so the caller can load the whole file for its errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from trajcheck.engines import files
from trajcheck.errors import DatasetError
from trajcheck.read import case_store
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_case_store_range

ROOT = Path(__file__).resolve().parent.parent
CODECS = ["zlib"] + (["zstd"] if case_store._zstd is not None else [])

ODD_ROWS = [
    {"id": "m", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "a"}, "match": {"q": "contains"}}]},
    {"id": "sem", "input": "x", "expected_calls": [{"name": "t", "args": {"q": "a"}, "match": {"q": "semantic"}}]},
    {"id": "p", "input": "x", "expected_calls": ["a", "b"], "precedence": [["a", "b"]]},
    {"id": "modes", "input": "x", "args_mode": "expected_keys",
     "expected_calls": [{"name": "t", "args": {"n": 2**70, "f": -0.0, "s": "éü"}}],
     "forbidden_calls": ["drop_*", "rm"], "metadata": {"category": "writes"}},
]


def _volume_rows(n: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vol)
    return [vol.case_of(0, i) for i in range(n)]


def _write(path: Path, rows: list, *, newline: str = "\n", bom: bool = False) -> Path:
    # ensure_ascii=False: non-ASCII letters stay raw (multi-byte UTF-8) in the file
    text = newline.join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)
                        for r in rows) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _by_ranges(path: Path, n: int) -> CaseStore:
    """The file cut in ``n`` line-aligned ranges: the first into one store (which makes the
    dictionary), each other into its own store with that dictionary, joined in order."""
    first, *rest = files.ranges(path, n)
    store = CaseStore()
    assert load_case_store_range(path, *first, store)
    assert store.dictionary is not None and rest
    for a, b in rest:
        part = CaseStore(codec=store.codec, dictionary=store.dictionary)
        assert load_case_store_range(path, a, b, part)
        store.extend(part)
    return store


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("newline,bom,raw_bytes", [("\n", False, case_store.RAW_BYTES), ("\r\n", True, 9000)])
def test_ranges_joined_give_the_whole_files_store(tmp_path, monkeypatch, codec, newline, bom, raw_bytes):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 32)
    monkeypatch.setattr(case_store, "RAW_BYTES", raw_bytes)
    monkeypatch.setattr(case_store, "_codec_default", lambda: codec)
    rows = _volume_rows(400)
    rows[200:200] = ODD_ROWS + [""]  # a blank line too
    path = _write(tmp_path / "cases.jsonl", rows, newline=newline, bom=bom)
    whole = load_case_store(path)
    got = _by_ranges(path, 5)
    assert list(got) == list(whole) and len(got) == 404
    # every case: its hash as it is; its plan part, plan and row as marshal reads them back
    # (marshal's bytes depend on which strings the process interned before: not compared;
    # row frames and shape numbers depend on the ranges)
    for cid, packed in whole._rows.items():
        mine = got._rows[cid]
        assert mine[:case_store._HASH_BYTES] == packed[:case_store._HASH_BYTES]
        assert got._part(mine) == whole._part(packed)
        assert got._row(mine) == whole._row(packed)
        p, q = got.plan(cid), whole.plan(cid)
        assert (p is None) == (q is None)
        if p is not None:
            assert {k: v for k, v in p.__dict__.items() if k != "source"} == {
                k: v for k, v in q.__dict__.items() if k != "source"}
    assert len(got._shapes) == len(whole._shapes)
    assert [c.id for c in got.semantic_cases] == [c.id for c in whole.semantic_cases] == ["sem"]
    for cid in ("case0000000", "case0000399", "m", "modes", "p"):
        assert got[cid] == whole[cid] and got.plan(cid) is not None or whole.plan(cid) is None
        assert got.case_hash(cid) == whole.case_hash(cid)


def test_a_bad_row_or_bad_bytes_fail_the_range(tmp_path):
    rows = _volume_rows(50)
    good = _write(tmp_path / "good.jsonl", rows)
    size = good.stat().st_size
    assert load_case_store_range(good, 0, size, CaseStore())
    bad = _write(tmp_path / "bad.jsonl", rows[:30] + [{"id": "x", "input": "y", "expected_call": ["t"]}]
                 + rows[30:])
    assert not load_case_store_range(bad, 0, bad.stat().st_size, CaseStore())
    with pytest.raises(DatasetError, match=r"bad.jsonl:31: case 'x'"):
        load_case_store(bad)
    raw = good.read_bytes()
    cut = raw.index(b"\n", size // 2) + 1
    (tmp_path / "bytes.jsonl").write_bytes(raw[:cut] + b'{"id": "\xff"}\n' + raw[cut:])
    assert load_case_store_range(tmp_path / "bytes.jsonl", 0, cut, CaseStore())
    assert not load_case_store_range(tmp_path / "bytes.jsonl", cut, size + 20, CaseStore())
    dup = _write(tmp_path / "dup.jsonl", rows[:10] + rows[:1])
    assert not load_case_store_range(dup, 0, dup.stat().st_size, CaseStore())
    with pytest.raises(DatasetError, match="only JSON Lines"):
        load_case_store_range(tmp_path / "c.json", 0, 1, CaseStore())


def test_extend_refuses_a_shared_id_or_another_dictionary(tmp_path, monkeypatch):
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 16)
    rows = _volume_rows(60)
    path = _write(tmp_path / "cases.jsonl", rows + rows[5:6])  # case 5 again at the end
    store = CaseStore()
    cut = files.ranges(path, 2)[1][0]
    assert load_case_store_range(path, 0, cut, store)
    part = CaseStore(codec=store.codec, dictionary=store.dictionary)
    assert load_case_store_range(path, cut, path.stat().st_size, part)
    n = len(store)
    with pytest.raises(ValueError, match="share a case id"):
        store.extend(part)
    assert len(store) == n
    with pytest.raises(DatasetError, match="duplicate case id"):
        load_case_store(path)
    other = CaseStore(codec=store.codec)  # no dictionary yet: rows plain
    with pytest.raises(ValueError, match="dictionary"):
        store.extend(other)


def test_ranges_joined_past_the_shape_cap(tmp_path, monkeypatch):
    """Shapes past MAX_SHAPES in the joined store: the joining store keeps them in the
    cases' own parts, with the same plans and cases as the whole file's store."""
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 32)
    monkeypatch.setattr(case_store, "MAX_SHAPES", 4)
    rows = _volume_rows(200)
    path = _write(tmp_path / "cases.jsonl", rows)
    whole = load_case_store(path)
    got = _by_ranges(path, 4)
    assert list(got) == list(whole) and len(got._shapes) == 4
    inline = [cid for cid, v in got._rows.items()
              if int.from_bytes(v[case_store._SLOT + 1:case_store._HEAD], "little") == case_store._INLINE]
    assert len(inline) > 100
    for cid in whole:
        p, q = got.plan(cid), whole.plan(cid)
        assert {k: v for k, v in p.__dict__.items() if k != "source"} == {
            k: v for k, v in q.__dict__.items() if k != "source"}
        assert got[cid] == whole[cid] and got.case_hash(cid) == whole.case_hash(cid)
