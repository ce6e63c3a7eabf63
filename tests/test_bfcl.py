"""Agreement with BFCL's own AST checker on tests/data/bfcl (Apache-2.0, see LICENSE there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajcheck.errors import MatcherError
from trajcheck.match.bfcl import bfcl_expected_calls, bfcl_valid
from trajcheck.match.matchers import get_matcher

DATA = Path(__file__).parent / "data" / "bfcl"


@pytest.fixture(scope="module")
def bfcl():
    gt = {}
    with open(DATA / "ast_ground_truth.jsonl") as f:
        for line in f:
            d = json.loads(line)
            gt[d["id"]] = d
    with open(DATA / "ast_verdicts_sample.jsonl") as f:
        rows = [json.loads(line) for line in f]
    return gt, rows


def ours(row, gt):
    g = gt[row["id"]]
    return bfcl_valid(row["output"], g["ground_truth"], g["functions"])


def test_agreement_on_rows_without_note(bfcl):
    gt, rows = bfcl
    plain = [r for r in rows if not r["note"]]
    assert len(plain) == 3934
    disagree = [(r["id"], r["perturbation"]) for r in plain if ours(r, gt) != r["bfcl_valid"]]
    # every disagreement would be listed here with the reason trajcheck is right; there are none
    assert disagree == []
    assert 1 - len(disagree) / len(plain) >= 0.995
    n_valid = sum(r["bfcl_valid"] for r in plain)
    assert 0 < n_valid < len(plain)  # both verdicts are exercised


def test_noted_rows_only_disagreement_is_greedy_parallel_178(bfcl):
    gt, rows = bfcl
    noted = [r for r in rows if r["note"]]
    assert len(noted) == 167
    disagree = [r for r in noted if ours(r, gt) != r["bfcl_valid"]]
    # parallel_178: BFCL's parallel checker pairs greedily (first fit). GT[0] accepts company
    # ["Microsoft", "Apple"] in either spelling and grabs the reversed output's Apple call first,
    # leaving no partner for GT[1]; a one-to-one pairing of all calls exists, so the output is
    # correct and trajcheck (maximum matching) accepts it.
    assert [(r["id"], r["bfcl_valid"]) for r in disagree] == [("parallel_178", False)]
    assert "greedy" in disagree[0]["note"]


FUNCS = [{"name": "f", "parameters": {"type": "dict", "properties": {
    "s": {"type": "string"}, "i": {"type": "integer"}, "x": {"type": "float"},
    "b": {"type": "boolean"}, "l": {"type": "array", "items": {"type": "string"}},
    "d": {"type": "dict"}, "opt": {"type": "string"}}, "required": ["s", "i"]}}]
GT = [{"f": {"s": ["New York", "NYC"], "i": [5], "x": [2.0, ""], "b": [True, ""],
             "l": [["a", "b"], ""], "d": [{"k": ["v"], "o": ["", 1]}, ""], "opt": ["", "z"]}}]


@pytest.mark.parametrize("args,want", [
    ({"s": "new-york", "i": 5}, True),            # normalized string, optional params omitted
    ({"s": "NYC!", "i": 5}, False),               # "!" is not stripped by BFCL
    ({"s": "nyc", "i": 5.0}, False),              # float for integer
    ({"s": "nyc", "i": True}, False),             # bool is never int
    ({"s": "nyc", "i": 5, "x": 2}, True),         # int accepted for float
    ({"s": "nyc", "i": 5, "l": ["B", "a"]}, False),  # lists keep order
    ({"s": "nyc", "i": 5, "l": ["A", "b"]}, True),
    ({"s": "nyc", "i": 5, "d": {"k": "V"}}, True),   # dict key "o" optional
    ({"s": "nyc", "i": 5, "d": {"o": 1}}, False),    # dict key "k" required
    ({"s": "nyc", "i": 5, "zz": 1}, False),          # unexpected param
    ({"i": 5}, False),                                # doc-required missing
])
def test_bfcl_rules(args, want):
    assert bfcl_valid([{"f": args}], GT, FUNCS) is want


def test_bfcl_required_wins_over_empty_string_and_unknown_type():
    gt = [{"f": {"s": ["a", ""], "i": [1]}}]
    assert bfcl_valid([{"f": {"i": 1}}], gt, FUNCS) is False
    (e,) = bfcl_expected_calls(gt, FUNCS)
    assert e.match["s"]["required"] is True
    with pytest.raises(MatcherError, match="unknown BFCL type"):
        get_matcher({"type": "bfcl", "param_type": "String"})


def test_bfcl_loads_on_first_use_and_old_names_still_import():
    # trajcheck.match.bfcl is not loaded by importing the matchers; get_matcher("bfcl") loads it,
    # and the names that used to live in matchers / metrics.calls resolve to the same objects.
    code = (
        "import sys, trajcheck, trajcheck.match.matchers as m, trajcheck.metrics.calls as c\n"
        "print('trajcheck.match.bfcl' in sys.modules, 'bfcl' in m.known_matchers())\n"
        "x = m.get_matcher({'type': 'bfcl', 'param_type': 'integer'})\n"
        "import trajcheck.match.bfcl as b\n"
        "print('trajcheck.match.bfcl' in sys.modules, type(x) is b.BfclMatcher, x([1, 2], 2))\n"
        "print(m.BfclMatcher is b.BfclMatcher, m.bfcl_standardize is b.bfcl_standardize,\n"
        "      c.bfcl_valid is b.bfcl_valid, c.bfcl_expected_calls is b.bfcl_expected_calls,\n"
        "      c.bfcl_predicted_calls is b.bfcl_predicted_calls)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True", "True", "True"] + ["True"] * 5


# BFCL's type_checker on arrays (bfcl_eval/eval_checker/ast_eval/ast_checker.py): the items
# are checked one level deep against the declared item type with no int -> float conversion,
# and a failed item check stays failed (the "variable" branch that follows returns it).
ARR_FUNCS = [{"name": "g", "parameters": {"type": "dict", "properties": {
    "ints": {"type": "array", "items": {"type": "integer"}},
    "floats": {"type": "array", "items": {"type": "float"}}}, "required": []}}]


def test_bfcl_rejects_an_integer_array_given_as_floats() -> None:
    gt = [{"g": {"ints": [[1, 2]], "floats": [""]}}]
    assert bfcl_valid([{"g": {"ints": [1, 2]}}], gt, ARR_FUNCS) is True
    assert bfcl_valid([{"g": {"ints": [1.0, 2.0]}}], gt, ARR_FUNCS) is False
    assert bfcl_valid([{"g": {"ints": [1, 2.0]}}], gt, ARR_FUNCS) is False


def test_bfcl_rejects_a_float_array_given_as_integers() -> None:
    gt = [{"g": {"floats": [[1.5, 2.0]], "ints": [""]}}]
    assert bfcl_valid([{"g": {"floats": [1.5, 2.0]}}], gt, ARR_FUNCS) is True
    assert bfcl_valid([{"g": {"floats": [1.5, 2]}}], gt, ARR_FUNCS) is False
    gt_int = [{"g": {"floats": [[1.0, 2.0]], "ints": [""]}}]
    assert bfcl_valid([{"g": {"floats": [1, 2]}}], gt_int, ARR_FUNCS) is False
    # a scalar float parameter does take an int (BFCL converts it), unlike array items
    f = [{"name": "h", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}, "required": ["x"]}}]
    assert bfcl_valid([{"h": {"x": 2}}], [{"h": {"x": [2.0]}}], f) is True
