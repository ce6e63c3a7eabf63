"""`trajcheck calibrate-semantic` on a small labelled file with the real offline
all-MiniLM-L6-v2: precision/recall/F1 per threshold and the recommended threshold, computed
by hand from the pairs' cosines (the same cosines tests/test_semantic.py asserts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import DatasetError
from trajcheck.match.semantic_calibration import (
    LabelledPair,
    ThresholdRow,
    calibrate,
    default_thresholds,
    load_pairs,
)

PAIRS = Path(__file__).parent / "data" / "semantic_pairs.jsonl"

# cosines of the 11 text pairs (4 decimals; all-MiniLM-L6-v2): 7 labelled same meaning
# (0.9208 0.9056 0.8221 0.8013 0.6852 0.6830 0.6640) and 4 not (0.7075 0.6492 0.4876 0.2409);
# plus a.rao/b.rao (not the same, decided by equality: never a match) and INC-1042 vs
# " inc-1042" (the same, equal after trimming and case-folding: always a match).
# threshold -> (tp, fp, fn, tn), counted by hand from those numbers
HAND = {0.6: (8, 2, 0, 3), 0.65: (8, 1, 0, 4), 0.7: (5, 1, 3, 4), 0.75: (5, 0, 3, 5),
        0.85: (3, 0, 5, 5)}


def test_cli_table_and_json_match_hand_computed_figures(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    out = tmp_path / "cal.json"
    r = CliRunner().invoke(main, ["calibrate-semantic", str(PAIRS), "--thresholds",
                                  "0.6,0.65,0.7,0.75,0.85", "--target-precision", "0.85",
                                  "--json", str(out)])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert data["n_pairs"] == 13 and data["n_positive"] == 8 and data["n_exact"] == 2
    rows = {row["threshold"]: row for row in data["thresholds"]}
    for t, (tp, fp, fn, tn) in HAND.items():
        row = rows[t]
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (tp, fp, fn, tn), t
        assert row["precision"] == pytest.approx(tp / (tp + fp))
        assert row["recall"] == pytest.approx(tp / (tp + fn))
        assert row["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    # 0.65: P = 8/9 = 0.889 >= 0.85 (0.6: 0.8 does not reach it)
    assert data["recommended_threshold"] == 0.65
    assert "lowest threshold with precision >= 0.85: 0.65" in r.output
    assert "0.889" in r.output and "0.941" in r.output  # P and F1 = 16/17 at 0.65
    by_line = {p["line"]: p for p in data["pairs"]}
    assert by_line[2]["score"] == pytest.approx(0.9056, abs=5e-4)
    assert by_line[12]["decided_by"] == "exact" and by_line[12]["exact_match"] is False
    assert by_line[13]["exact_match"] is True


def test_default_grid_recommends_075_for_precision_095() -> None:
    pytest.importorskip("sentence_transformers")
    r = CliRunner().invoke(main, ["calibrate-semantic", str(PAIRS)])
    assert r.exit_code == 0, r.output
    # 0.70: P = 5/6 = 0.833; 0.75: P = 5/5 (the 0.7075 near miss falls out)
    assert "lowest threshold with precision >= 0.95: 0.75" in r.output


def test_bad_lines_are_listed_and_the_rest_used(tmp_path: Path) -> None:
    f = tmp_path / "pairs.jsonl"
    f.write_text('{"a": "x", "b": "y", "label": true}\nnot json\n{"a": "x", "label": false}\n'
                 '{"a": "p", "b": "q", "label": "yes"}\n{"a": "x", "b": "z", "label": false}\n')
    pairs, problems = load_pairs(f)
    assert [p.line for p in pairs] == [1, 5]
    assert [p.split(": ", 1)[0] for p in problems] == [f"{f}:2", f"{f}:3", f"{f}:4"]
    assert "missing b" in problems[1] and "label must be true or false" in problems[2]
    # a scripted scorer: x/y 0.9, x/z 0.4
    cal = calibrate(pairs, lambda a, b: 0.9 if b == "y" else 0.4, thresholds=[0.3, 0.5],
                    target_precision=1.0)
    assert [(r.tp, r.fp, r.fn, r.tn) for r in cal.rows] == [(1, 1, 0, 0), (1, 0, 0, 1)]
    assert cal.recommended == 0.5
    empty = tmp_path / "empty.jsonl"
    empty.write_text("nope\n")
    r = CliRunner().invoke(main, ["calibrate-semantic", str(empty)])
    assert r.exit_code == 2 and "no usable labelled pair" in r.output


def test_no_threshold_reaching_the_target_and_bad_inputs() -> None:
    pairs = [LabelledPair("a", "b", False, 1), LabelledPair("c", "d", True, 2)]
    cal = calibrate(pairs, lambda a, b: 0.8, thresholds=[0.5])
    assert cal.recommended is None and cal.rows[0].precision == 0.5
    assert calibrate(pairs, lambda a, b: 0.1, thresholds=[0.5]).rows[0].precision is None
    with pytest.raises(DatasetError, match="not a number in"):
        calibrate(pairs, lambda a, b: 1.5)
    with pytest.raises(DatasetError, match="no labelled pairs"):
        calibrate([], lambda a, b: 0.5)
    assert default_thresholds(0.25) == [0.25, 0.5, 0.75]


def test_labelled_files_refuse_deep_nesting_line_by_line(tmp_path: Path) -> None:
    # both labelled-file loaders read through limits.object_lines: a line nested past
    # MAX_DEPTH or not an object is one problem naming its line, the others are kept
    from trajcheck.judges.validate_run import load_labels
    deep = "[" * 5000 + "]" * 5000
    f = tmp_path / "pairs.jsonl"
    f.write_text(f'{deep}\n[1, 2]\n{{"a": "x", "b": "y", "label": true}}\n')
    pairs, problems = load_pairs(f)
    assert [p.line for p in pairs] == [3]
    assert [p.split(": ", 1)[0] for p in problems] == [f"{f}:1", f"{f}:2"]
    assert "nest" in problems[0] and "not a JSON object" in problems[1]
    g = tmp_path / "labels.jsonl"
    g.write_text(f'{deep}\n{{"run_id": "r-0", "labels": {{"task_completed": true}}}}\n')
    rows, problems = load_labels(g)
    assert [r.line for r in rows] == [2] and len(problems) == 1 and problems[0].startswith(f"{g}:1: ")
    with pytest.raises(DatasetError, match="cannot read labels"):
        load_labels(tmp_path / "missing.jsonl")


def test_threshold_row_f1_is_the_one_f1_formula() -> None:
    # P = 1, R = 1/9: F1 = 2 * 1 / (2 * 1 + 0 + 8) = 0.2 exactly as one division; 2PR / (P + R)
    # in floats gives 0.19999999999999998
    assert ThresholdRow(0.5, tp=1, fp=0, fn=8, tn=3).f1 == 0.2
    assert ThresholdRow(0.5, tp=0, fp=2, fn=3, tn=0).f1 == 0.0
    assert ThresholdRow(0.5, tp=0, fp=0, fn=3, tn=0).f1 is None  # no pair matched: P unknown
    assert ThresholdRow(0.5, tp=0, fp=2, fn=0, tn=0).f1 is None  # none labelled true
