"""BFCL result files (``bfcl generate`` output) scored against BFCL's ground truth.

tests/data/bfcl/results/roshangrewal_gemma4-e4b-toolcall-v02 holds five result files of a
real BFCL v4 submission (ShishirPatil/gorilla commit c46a818, Apache-2.0). The submission's
commit message publishes BFCL's own AST accuracy per category: Parallel 90.0%, Multiple
95.0%, Live Simple 79.8%, Live Parallel 68.8%; ``trajcheck eval`` must give the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import DatasetError
from trajcheck.match.bfcl import bfcl_valid, cases_from_ground_truth, load_ground_truth
from trajcheck.read.traces import detect, load
from trajcheck.read.traces.bfcl_result import category_of

DATA = Path(__file__).parent / "data" / "bfcl"
RESULTS = DATA / "results" / "roshangrewal_gemma4-e4b-toolcall-v02"
GT = DATA / "ast_ground_truth.jsonl"


def test_reads_prompt_style_lines() -> None:
    lr = load(RESULTS / "non_live" / "BFCL_v4_parallel_result.json")  # JSON Lines despite .json
    assert lr.formats == {"bfcl": 200} and not lr.skipped
    t0 = lr[0]
    assert t0.metadata == {"case_id": "parallel_0", "run_id": "parallel_0", "trial": 0, "category": "parallel"}
    assert [(c.name, c.args) for c in t0.tool_calls()] == [
        ("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
        ("spotify.play", {"artist": "Maroon 5", "duration": 15})]
    assert t0.total_usage is not None and t0.total_usage.input_tokens == 458
    assert t0.total_latency_ms == pytest.approx(2980.2517890930176)
    # parallel_11 ends with "<end_of_turn>": BFCL's decoder fails on it, and so does this one
    t11 = next(t for t in lr if t.metadata["case_id"] == "parallel_11")
    assert t11.tool_calls() == [] and "not a Python list of calls" in t11.metadata["problems"][0]


def test_function_calling_lines_and_inference_errors(tmp_path: Path) -> None:
    lines = [
        {"id": "simple_python_2", "result": [{"math.hypot": "{\"x\": 4, \"y\": 5}"}],
         "input_token_count": 10, "output_token_count": 5, "latency": 0.5},
        {"id": "simple_python_3", "result": [{"algebra.quadratic_roots": {"a": 1, "b": -3, "c": 2}}],
         "input_token_count": 10, "output_token_count": 5, "latency": 0.5},
        # the shape of a real inference-error line (live_multiple_180-76-0 of the same model)
        {"id": "simple_python_4", "result": "Error during inference: Error code: 400 - {'error': "
                                             "{'message': \"maximum context length is 8192 tokens\"}}"},
        {"id": "simple_python_6", "result": "[solve_quadratic(2, 5, 3)]", "latency": 1.0},
        {"id": "simple_python_7", "result": "[calculate_circumference(radius=3*2, unit=cm)]", "latency": 1.0},
    ]
    p = tmp_path / "BFCL_v4_simple_python_result.json"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert detect(lines[2]) == "bfcl"
    lr = load(p)
    assert len(lr) == 5
    calls = [[(c.name, c.args) for c in t.tool_calls()] for t in lr]
    assert calls[0] == [("math.hypot", {"x": 4, "y": 5})]
    assert calls[1] == [("algebra.quadratic_roots", {"a": 1, "b": -3, "c": 2})]
    assert calls[2] == [] and "the model call failed" in lr[2].metadata["problems"][0]
    assert calls[3] == [("solve_quadratic", {})]  # positional arguments: ignored, as BFCL does
    assert "positional arguments; ignored" in lr[3].metadata["problems"][0]
    assert calls[4] == [("calculate_circumference", {"radius": 6, "unit": "cm"})]  # 3*2 evaluated; a name as text


def test_category_of_ids() -> None:
    assert category_of("simple_python_12") == "simple_python"
    assert category_of("live_multiple_180-76-0") == "live_multiple"
    assert category_of("parallel_multiple_3") == "parallel_multiple"


def test_eval_on_the_result_folder_gives_bfcls_published_ast_accuracy(tmp_path: Path) -> None:
    out = tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(RESULTS), "--cases", str(GT), "--json", str(out), "-q"])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    got = {k: (v["successes"], v["runs"]) for k, v in d["meta"]["by_category"].items()}
    assert got == {"live_parallel_multiple": (13, 24), "live_parallel": (11, 16), "live_simple": (206, 258),
                   "multiple": (190, 200), "parallel": (180, 200), "overall": (600, 698)}
    published = {"parallel": 0.900, "multiple": 0.950, "live_simple": 0.798, "live_parallel": 0.688}
    for cat, acc in published.items():
        s, n = got[cat]
        assert round(s / n, 3) == acc
    # the ground truth's other categories have no result file here: left out, not "no traces"
    assert not any("no traces" in p for p in d["problems"])


def test_each_verdict_is_bfcl_valid_on_the_decoded_output() -> None:
    """The eval verdict of every run equals ``bfcl_valid`` (checked against BFCL's own AST
    checker in test_bfcl.py) on the calls the reader decoded."""
    from trajcheck.score.suite import evaluate

    lr = load(RESULTS)
    gt = {json.loads(x)["id"]: json.loads(x) for x in GT.read_text().splitlines() if x.strip()}
    cases = [c for c in load_ground_truth(GT) or [] if c.id in {t.metadata["case_id"] for t in lr}]
    sc = evaluate(lr, cases, n_boot=10)
    by_run = {r.run_id: r.success for r in sc.runs}
    n = 0
    for t in lr:
        g = gt[t.metadata["case_id"]]
        out = [{c.name: c.args} for c in t.tool_calls()]
        assert by_run[t.metadata["run_id"]] == bfcl_valid(out, g["ground_truth"], g["functions"]), t.metadata
        n += 1
    assert n == 698


def test_ground_truth_faults_are_named() -> None:
    cases, problems = cases_from_ground_truth([{"id": "x_1", "ground_truth": [{"f": {"a": 1}}],
                                                "functions": []}, {"nope": 1}], "gt.jsonl")
    assert cases == [] and problems[0].startswith("gt.jsonl row 0 (x_1): BFCL ground truth 0 (f): 'a' must list")
    assert problems[1] == "gt.jsonl row 1: not a BFCL ground-truth entry (needs id, ground_truth, functions)"


def test_bad_ground_truth_file_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "gt.jsonl"
    p.write_text(json.dumps({"id": "a_1", "ground_truth": [], "functions": []}) + "\n{oops\n")
    with pytest.raises(DatasetError, match=r"gt.jsonl:2: not valid JSON"):
        load_ground_truth(p)
    other = tmp_path / "cases.jsonl"
    other.write_text(json.dumps({"id": "c1", "input": "x"}) + "\n")
    assert load_ground_truth(other) is None  # an ordinary dataset


def test_a_line_that_is_not_utf8_is_named_not_the_whole_file(tmp_path: Path) -> None:
    row = json.dumps({"id": "a_1", "ground_truth": [], "functions": []}).encode()
    p = tmp_path / "gt.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + row + b"\n" + row.replace(b"a_1", b"a_\xff2") + b"\n")
    with pytest.raises(DatasetError) as e:
        load_ground_truth(p)
    assert str(e.value).endswith("gt.jsonl:2: not UTF-8: byte(s) ff at column 11 (invalid start byte)")
    # an ordinary dataset with such a line is not BFCL: the dataset reader names the line
    other = tmp_path / "cases.jsonl"
    other.write_bytes(b'{"id": "c1", "input": "x"}\n{"id": "c\xff2", "input": "x"}\n')
    assert load_ground_truth(other) is None
