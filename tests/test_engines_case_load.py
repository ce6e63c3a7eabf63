"""A case file loaded partly on the driver and partly by workers (engines.case_load), with
the workers' part run in this process: the store equals load_case_store's (ids in order,
hashes, plans, cases), with or without the compression dictionary made before the split,
and a bad row in the workers' part raises the whole file's error."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from trajcheck.engines import case_load
from trajcheck.errors import DatasetError
from trajcheck.read import case_store
from trajcheck.read.dataset import load_case_store

ROOT = Path(__file__).resolve().parent.parent


def _volume_rows(n: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vol)
    return [vol.case_of(0, i) for i in range(n)]


def _load(path: Path, workers: int = 2) -> tuple[case_store.CaseStore, dict]:
    """``start_while_loading`` with an engine that starts at once and loads the parts here."""
    stats: dict = {}

    def rest(handle, todo, codec, d):
        assert handle == "engine" and len(todo) == workers
        return [case_load.load_part(str(path), a, b, codec, d) for a, b in todo]

    store, handle = case_load.start_while_loading(case_load.CaseFile(path), lambda: "engine",
                                                  rest, workers, stats)
    assert handle == "engine"
    return store, stats


def _same(got: case_store.CaseStore, want: case_store.CaseStore) -> None:
    assert list(got) == list(want)
    for cid in list(want)[::97]:
        assert got.case_hash(cid) == want.case_hash(cid)
        assert got[cid] == want[cid]
        a, b = got.plan(cid), want.plan(cid)
        assert (a is None) == (b is None)
        if a is not None:  # every field but those pointing back at the store or case
            for f in dataclasses.fields(a):
                if f.name not in ("source", "forbidden_pattern"):
                    assert getattr(a, f.name) == getattr(b, f.name), f.name


@pytest.mark.parametrize("dict_wait", [case_load.DICT_WAIT_BYTES, 0])
def test_front_and_parts_joined_equal_the_whole_load(tmp_path, monkeypatch, dict_wait):
    monkeypatch.setattr(case_load, "BLOCK_BYTES", 32 * 1024)
    monkeypatch.setattr(case_load, "FRONT_MOST", 1)  # the driver stops as soon as it may
    monkeypatch.setattr(case_load, "DICT_WAIT_BYTES", dict_wait)
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _volume_rows(3000)))
    store, stats = _load(path)
    assert stats["cases_front_bytes"] < stats["cases_bytes"] == path.stat().st_size
    if dict_wait:  # the driver went on until its dictionary was made: about TRAIN_ROWS rows
        assert stats["cases_front_bytes"] < path.stat().st_size / 2
    else:  # at most one block (none when the engine is ready first), the parts plain; the
        # joined store made its dictionary
        assert stats["cases_front_bytes"] <= 33 * 1024
    assert store.dictionary is not None
    _same(store, load_case_store(path))


def test_a_bad_row_in_the_workers_part_raises_the_files_error(tmp_path, monkeypatch):
    monkeypatch.setattr(case_load, "BLOCK_BYTES", 32 * 1024)
    monkeypatch.setattr(case_load, "FRONT_MOST", 1)
    rows = _volume_rows(3000)
    rows[2500]["expected_callz"] = rows[2500].pop("expected_calls")
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=r"cases.jsonl:2501: case 'case0002500'"):
        _load(path)


def test_small_or_other_files_load_on_the_driver(tmp_path):
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps(_volume_rows(1)[0]) + "\n")
    assert not case_load.CaseFile(p).split()  # under MIN_BYTES
    assert list(case_load.CaseFile(p)()) == ["case0000000"]
    assert not case_load.CaseFile(tmp_path / "cases.yaml").split()
