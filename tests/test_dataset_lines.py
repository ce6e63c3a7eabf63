"""A JSON Lines dataset read as bytes, in blocks (``dataset_rows._jsonl_rows``), gives the rows,
line numbers and errors of the file read as text and split with ``str.splitlines``: over
every line break ``str.splitlines`` knows (``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, U+0085,
U+2028, U+2029, lone ``\\r``, ``\\r\\n``), a leading BOM, lines blank only in Unicode, bad
JSON, and blocks cut anywhere; a line that is not UTF-8 is one bad row naming its line; and a dataset loaded by byte ranges gives the whole load's store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajcheck.errors import DatasetError
from trajcheck.read import dataset, dataset_rows
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_case_store_ranges


def _text_rows(path: Path) -> list:
    """The rows as the text reader gives them (the file decoded, then ``str.splitlines``)."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        return _plain(dataset_rows._rows_of_lines(f.read().splitlines()))


def _plain(rows) -> list:
    return [(r.msg if isinstance(r, dataset_rows.BadJSON) else r, n, p) for r, n, p in rows]


_BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
_PIECES = ['{"id": "a", "input": "x"}', '{"id": "é", "input": "\u2028"}', "[1, 2]", "  ", "\xa0", "\u3000",
           '{"id": 1e400}', "{bad", '"\\u2028"', "12345678901234567890", "NaN", "\ufeff{}", "",
           "[" * 100 + "]" * 100, "[" * 101 + "]" * 101, '{"a":' * 60 + "[]" + "}" * 60, "[1, 1e5, 0.00001]"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_BREAKS)), max_size=12),
       bom=st.booleans(), block=st.integers(1, 40))
def test_bytes_reader_equals_the_text_reader(tmp_path, monkeypatch, parts, bom, block):
    monkeypatch.setattr(dataset_rows, "BLOCK_BYTES", block)
    path = tmp_path / "cases.jsonl"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "".join(a + b for a, b in parts).encode("utf-8"))
    assert _plain(dataset_rows._jsonl_rows(path)) == _text_rows(path)


def test_the_break_kinds_by_hand(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'\xef\xbb\xbf[1]\r\n[2]\x0b[3]\xe2\x80\xa8[4]\r[5]\n\xc2\xa0\n[6]')
    got = _plain(dataset_rows._jsonl_rows(path))
    assert got == [([1], 1, True), ([2], 2, True), ([3], 3, True), ([4], 4, True), ([5], 5, True),
                   ([6], 7, True)]  # line 6 holds only U+00A0: blank


@pytest.mark.parametrize(("bad", "why"), [(b"\xff", "ff at column 23 (invalid start byte)"),
                                          (b"\xed\xa0\x80", "ed at column 23 (invalid continuation byte)"),
                                          (b"\xe2\x80", "e2 80 at column 23 (invalid continuation byte)")])
@pytest.mark.parametrize("block", [7, dataset_rows.BLOCK_BYTES])
def test_a_line_that_is_not_utf8_is_one_bad_row(tmp_path, monkeypatch, bad, why, block):
    monkeypatch.setattr(dataset_rows, "BLOCK_BYTES", block)
    path = tmp_path / "cases.jsonl"
    good = [f'{{"id": "c{i}", "input": "caf\u00e9 {i}"}}\n'.encode() for i in range(4)]
    path.write_bytes(b"".join(good[:2]) + b'{"id": "b", "input": "' + bad + b'"}\n' + b"".join(good[2:]))
    cases, errors = dataset.load_cases_report(path)
    assert [c.id for c in cases] == ["c0", "c1", "c2", "c3"]
    assert errors == [f"{path}:3: not UTF-8: byte(s) {why}"]
    with pytest.raises(DatasetError, match=f"{path}:3: not UTF-8"):
        load_case_store(path)
    assert not load_case_store_ranges(path, [(0, path.stat().st_size)], CaseStore())


def test_a_json_dataset_that_is_not_utf8_names_line_and_column(tmp_path):
    path = tmp_path / "cases.json"
    path.write_bytes(b'\xef\xbb\xbf[{"id": "a", "input": "x"},\n {"id": "b", "input": "caf\xe9"}]\n')
    with pytest.raises(DatasetError) as e:
        dataset.load_cases_report(path)
    assert str(e.value) == f"{path}: not UTF-8 at line 2, column 27: byte(s) e9 (invalid continuation byte)"


def test_ranges_load_the_whole_store(tmp_path):
    rows = [{"id": f"c{i}", "input": "é" * (i % 3), "expected_calls": [{"name": "t", "args": {"n": i}}]}
            for i in range(50)]
    text = "\ufeff" + "".join(json.dumps(r, ensure_ascii=False) + ("\r\n" if i % 2 else "\n")
                              for i, r in enumerate(rows))
    path = tmp_path / "cases.jsonl"
    path.write_bytes(text.encode("utf-8"))
    data = path.read_bytes()
    cuts = [0] + [i + 1 for i in range(len(data)) if data[i:i + 1] == b"\n"][::7]
    if cuts[-1] != len(data):
        cuts.append(len(data))
    store = CaseStore()
    assert load_case_store_ranges(path, list(zip(cuts, cuts[1:])), store)
    whole = load_case_store(path)
    assert list(store) == list(whole) and all(store[c] == whole[c] for c in whole)
