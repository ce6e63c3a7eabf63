"""Streaming eval (trajcheck.score.pipeline, trajcheck.read.traces.stream): one pass, the same scorecard
as the batch evaluate on the same input, in any order of the runs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from trajcheck.cli.app import main
from trajcheck.read.traces import load
from trajcheck.read.traces.stream import stream
from trajcheck.score.pipeline import evaluate_stream
from trajcheck.score.suite import evaluate

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau():
    return load(TAU)


def test_stream_reads_what_load_reads_on_every_test_file():
    files = sorted(p for p in (Path(__file__).parent / "data").rglob("*")
                   if p.suffix in (".json", ".jsonl"))
    assert len(files) > 20
    for p in files:
        try:
            want = load(p)
        except Exception as e:  # the same error, raised while iterating
            with pytest.raises(type(e)):
                list(stream(p))
            continue
        s = stream(p)
        got = [t.to_dict() for t in s]
        assert got == [t.to_dict() for t in want], p
        assert (s.problems, s.skipped, s.formats) == (want.problems, want.skipped, want.formats), p


def test_tau_bench_streamed_equals_batch(tau):
    want = evaluate(tau, n_boot=300).to_dict()
    got = evaluate_stream(stream(TAU), n_boot=300).to_dict()
    assert got == want
    assert got["suite"]["n_runs"] == 200 and got["recorded_reward"]["agreement"]["agree"] == 200


@pytest.mark.parametrize("seed", [1, 2])
def test_shuffled_jsonl_streamed_equals_batch_on_the_same_order(tau, tmp_path, seed):
    trajs = list(tau)
    random.Random(seed).shuffle(trajs)
    # a line with no case id and one naming an unknown case: problems, the rest scored
    extra = [{"calls": [{"name": "x", "args": {}}]},
             {"calls": [{"name": "x", "args": {}}], "metadata": {"case_id": "nope"}}]
    p = tmp_path / "runs.jsonl"
    p.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajs)
                 + "".join(json.dumps(x) + "\n" for x in extra) + "not json\n")
    want = evaluate(load(p), tau.cases, n_boot=200).to_dict()
    got = evaluate_stream(stream(p), tau.cases, n_boot=200).to_dict()
    assert got == want
    assert any("not valid JSON" in x for x in got["problems"])
    assert any("'nope' is not among the cases" in x for x in got["problems"])
    # a capped scorecard keeps the first failing runs in input order, every figure unchanged
    capped = evaluate_stream(stream(p), tau.cases, n_boot=200, keep_runs=5).to_dict()
    failing = [r for r in want["runs"] if not r["success"]][:5]
    assert capped.pop("runs") == failing  # in full: transcripts, call tables, every metric
    assert {k: v for k, v in want.items() if k != "runs"} == capped
    assert all(r["transcript"] for r in got["runs"][:5])


def test_cli_eval_streams_and_writes_the_batch_scorecard(tau, tmp_path, capsys):
    out = tmp_path / "sc.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(TAU), "-q", "--json", str(out), "--keep-runs", "0"])
    assert ei.value.code in (0, None)
    got = json.loads(out.read_text())
    want = evaluate(tau, source=str(TAU)).to_dict()
    assert got["suite"] == want["suite"] and got["cases"] == want["cases"]
    assert len(got["runs"]) == 200
