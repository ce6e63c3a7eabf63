"""The engine-neutral batch API (trajcheck.engines.batch): Arrow batches of runs in any
split, partials merged in any grouping, give the local eval's scorecard."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from local_eval import local_eval, mixed_format_files  # noqa: E402

from trajcheck.engines.batch import (  # noqa: E402
    BatchPartial,
    BatchScorer,
    finalize,
    result_schema,
    score_batches,
)
from trajcheck.errors import MetricInputError  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402
from trajcheck.score.pipeline import evaluate_stream  # noqa: E402

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def tau_jsonl(tmp_path_factory):
    """The 200 real tau-bench runs shuffled into trajcheck JSONL, its cases, and the local
    streaming eval's scorecard of that file."""
    tau = load(TAU)
    trajs = list(tau)
    random.Random(7).shuffle(trajs)
    lines = [json.dumps(t.to_dict()) for t in trajs]
    p = tmp_path_factory.mktemp("tau") / "runs.jsonl"
    p.write_text("".join(x + "\n" for x in lines))
    want = local_eval(p, tau.cases, n_boot=100).to_dict()
    assert want["meta"]["formats"] == {"trajcheck": 200}
    return lines, tau.cases, want


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_any_batches_any_grouping_give_the_local_scorecard(tau_jsonl, seed):
    lines, cases, want = tau_jsonl
    rnd = random.Random(seed)
    table = pa.table({"trace": lines, "seq": list(range(len(lines)))})
    size = rnd.randint(1, 80)
    batches = table.to_batches(max_chunksize=size)
    rnd.shuffle(batches)  # an engine hands batches to workers in any order
    parts = []
    for b in batches:
        res, p = score_batches([b], cases, keep_runs=1000)
        assert res[0].schema == result_schema() and res[0].num_rows == b.num_rows
        parts.append(BatchPartial.from_bytes(p.to_bytes()))
    while len(parts) > 1:
        i = rnd.randrange(len(parts) - 1)
        parts[i:i + 2] = [parts[i].merge(parts[i + 1])]
    assert finalize(parts, cases, n_boot=100).to_dict() == want


def test_results_table_and_bad_rows(tau_jsonl):
    lines, cases, _ = tau_jsonl
    rows = [lines[0], "not json",
            json.dumps({"calls": [{"name": "x", "args": {}}], "metadata": {"case_id": "zz"}}), ""]
    res, part = score_batches([pa.record_batch({"trace": rows})], cases)
    t = pa.Table.from_batches(res)
    assert t.num_rows == 1 and t.column("seq").to_pylist() == [0]
    r = t.to_pylist()[0]
    assert r["case_id"] == json.loads(lines[0])["metadata"]["case_id"]
    assert isinstance(r["success"], bool) and 0 <= r["f1"] <= 1
    sc = finalize([part], cases, n_boot=20)
    assert sc.suite.n_runs == 1
    assert any(p.startswith("row 1: not valid JSON") for p in sc.problems)
    assert any("'zz' is not among the cases" in p for p in sc.problems)
    with pytest.raises(MetricInputError, match="no column 'trace'"):
        BatchScorer(cases).score(pa.record_batch({"x": [1]}), BatchScorer(cases).new_partial())
    with pytest.raises(MetricInputError, match="no trace could be matched"):
        finalize([score_batches([pa.record_batch({"trace": ["[]"]})], cases)[1]], cases)


def test_span_rows_grouped_by_trace_equal_the_local_eval(tmp_path):
    """OTel span rows gathered per trace id (in any row order) and read together give the
    scorecard of a local eval of the same spans."""
    from otel_span_rows import local_scorecard, span_cases, span_rows

    from trajcheck.engines.batch import group_spans

    rows = span_rows()
    want = local_scorecard(rows, tmp_path)
    assert want.suite.n_runs == 12 and want.suite.n_successes == 4
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["trace_id"], []).append(r)
    runs = [{"trace": group_spans((x["pos"], x["span"]) for x in reversed(g)),
             "seq": min(x["pos"] for x in g), "case_id": g[0]["case_id"]} for g in groups.values()]
    halves = [pa.RecordBatch.from_pylist(runs[::2]), pa.RecordBatch.from_pylist(runs[1::2])]
    parts = [score_batches([b], span_cases(), grouped=True, case_column="case_id")[1] for b in halves]
    got = finalize(parts, span_cases(), n_boot=200)
    assert got.to_dict() == want.to_dict()
    # without grouped=True a row of spans is not read one span at a time: a problem, no run
    _, part = score_batches([halves[0]], span_cases(), case_column="case_id")
    assert part.suite.n == 0 and "read with the other records of its file" in part.read[0][1]


def test_case_store_kept_compact_and_partial_only_scoring(tau_jsonl, tmp_path):
    """Cases held compressed (what `trajcheck eval` loads) are used as they are, not built
    again into a dict; scoring for the partial alone builds no result rows and gives the
    same scorecard; the partial counts its batches and the scoring CPU."""
    from trajcheck.engines.batch import ShippedScorer, case_lookup
    from trajcheck.read.dataset import load_case_store

    lines, cases, want = tau_jsonl
    cp = tmp_path / "cases.jsonl"
    cp.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in cases.values()))
    store = load_case_store(cp)
    assert case_lookup(store) is store
    scorer = ShippedScorer(BatchScorer(store), lambda: store).get()
    assert scorer.case_map is store
    part = scorer.new_partial()
    half = len(lines) // 2
    assert scorer.score(pa.record_batch({"trace": lines[:half], "seq": list(range(half))}),
                        part, rows=False) is None
    assert scorer.score_texts(list(range(half, len(lines))), lines[half:], part, rows=False) is None
    assert part.batches == 2 and part.cpu_s > 0 and part.n_rows == len(lines)
    assert finalize([part], store, n_boot=100).to_dict() == want


@pytest.mark.parametrize(("seed", "keep"), [(1, 0), (2, 3), (3, 17)])
def test_kept_runs_scored_in_full_once_on_finalize(tau_jsonl, seed, keep):
    """With defer_full, partials keep their report runs compact with their rows, and
    finalize scores in full only the runs the merged scorecard shows: the local eval's
    scorecard, transcripts included, for any split and a cap smaller than any partial."""
    lines, cases, _ = tau_jsonl
    want = evaluate_stream(iter(load_lines(lines)), cases, n_boot=50, keep_runs=keep).to_dict()
    want["meta"]["formats"] = {"trajcheck": len(lines)}  # what `trajcheck eval` notes
    rnd = random.Random(seed)
    table = pa.table({"trace": lines, "seq": list(range(len(lines)))})
    batches = table.to_batches(max_chunksize=rnd.randint(5, 60))
    rnd.shuffle(batches)
    scorer = BatchScorer(cases, keep_runs=keep, defer_full=True)
    parts = []
    for b in batches:
        p = scorer.new_partial()
        scorer.score(b, p, rows=False)
        parts.append(BatchPartial.from_bytes(p.to_bytes()))
        assert len(parts[-1].pending) <= len(parts[-1].suite.kept) <= max(2 * keep, 64)
    got = finalize(parts, cases, n_boot=50)
    assert got.to_dict() == want
    assert len(got.runs) == keep
    # a compact run has no call table; every shown run has its full one, as locally
    assert all(r.metrics for r in got.runs)


def load_lines(lines):
    from trajcheck.read.traces.stream import read_row

    for i, x in enumerate(lines):
        yield from read_row(x, f"row {i}")[0]


def test_kept_runs_scored_in_full_raise_first(tau_jsonl, monkeypatch):
    """finalize scores the kept runs in full before the figures: their error is raised
    (before one the figures meet), and the runs scored are the ones the scorecard lists."""
    import trajcheck.engines.batch as eb
    from trajcheck.aggregate.partials import KTooLargeError

    lines, cases, _ = tau_jsonl
    scorer = BatchScorer(cases, keep_runs=4, defer_full=True)
    part = scorer.new_partial()
    scorer.score_texts(list(range(len(lines))), lines, part, rows=False)
    blob = part.to_bytes()
    with pytest.raises(KTooLargeError):  # finalize's own error, the kept runs scored fine
        finalize([BatchPartial.from_bytes(blob)], cases, n_boot=20, ks=[99])
    real = eb._score_pending

    def failing(p, cm):
        real(p, cm)
        raise MetricInputError("row 7: planted")

    monkeypatch.setattr(eb, "_score_pending", failing)
    for ks in (None, [99]):
        with pytest.raises(MetricInputError, match="planted"):
            finalize([BatchPartial.from_bytes(blob)], cases, n_boot=20, ks=ks)
    monkeypatch.setattr(eb, "_score_pending", real)
    got = finalize([BatchPartial.from_bytes(blob)], cases, n_boot=20)
    assert len(got.runs) == 4 and all(r.metrics for r in got.runs)


def test_shipped_scorer_built_once_when_tasks_start_together(tau_jsonl):
    """A worker running tasks in threads: 8 tasks asking for the shipped scorer at the same
    moment load the cases once and all get the one scorer (engines.batch._BUILT_LOCK)."""
    import threading
    import time

    from trajcheck.engines.batch import ShippedScorer

    _, cases, _ = tau_jsonl
    loads: list[int] = []

    def load_cases():
        loads.append(1)
        time.sleep(0.05)  # a slow load: without the lock every thread would start its own
        return cases

    shipped = ShippedScorer(BatchScorer(cases), load_cases)
    gate, got = threading.Barrier(8), []

    def task():
        gate.wait()
        got.append(shipped.get())

    threads = [threading.Thread(target=task) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len(got) == 8
    assert len({id(s) for s in got}) == 1 and got[0].case_map is cases


def test_formats_read_noted_as_the_local_eval_notes_them(tau_jsonl, tmp_path):
    """Six native runs and four OpenAI chat records (one of them guessed) in one file: the
    partials count each format's runs and the guessed one's reason, merged in any order,
    and finalize notes them in meta as `trajcheck eval` does; an old partial without them
    is refused by name."""
    from trajcheck.engines.data_codec import CodecError
    from trajcheck.read.dataset import load_cases

    lines, cases, _ = tau_jsonl
    native = [json.loads(x) for x in lines[:6]]
    own = {d["metadata"]["case_id"]: cases[d["metadata"]["case_id"]] for d in native}
    p, cp = mixed_format_files(tmp_path, lines[:6], own)
    all_cases = {c.id: c for c in load_cases(cp)}
    want = local_eval(p, all_cases, n_boot=50)
    formats = {"trajcheck": 6, "openai_chat": 4}
    guessed = {"openai_chat": "role/content messages with no field only OpenAI chat writes"}
    assert want.meta["formats"] == formats and want.meta["guessed_formats"] == guessed
    rows = p.read_text().splitlines()
    table = pa.table({"trace": rows, "seq": list(range(len(rows)))})
    for size in (1, 3, 10):
        parts = [BatchPartial.from_bytes(score_batches([b], all_cases)[1].to_bytes())
                 for b in table.to_batches(max_chunksize=size)]
        for order in (parts, parts[::-1]):
            got = finalize([copy_of(x) for x in order], all_cases, n_boot=50)
            assert got.meta["formats"] == formats and got.meta["guessed_formats"] == guessed
            assert list(got.meta["formats"]) == ["trajcheck", "openai_chat"]  # input order
            # every figure equal; problems name rows instead of file lines
            g, w = got.to_dict(), want.to_dict()
            assert [k for k in w if g[k] != w[k]] == ["problems"]
    # the tau runs alone: one format, none guessed (no guessed_formats key, as locally)
    _, part = score_batches([pa.table({"trace": lines, "seq": list(range(len(lines)))})], cases)
    assert part.formats == {"trajcheck": 200} and part.guessed == {}
    assert "guessed_formats" not in finalize([part], cases, n_boot=20).meta
    old = score_batches([table], all_cases)[1]
    del old.formats, old.guessed, old.formats_at  # a partial of the layout before them
    with pytest.raises(CodecError, match=r"BatchPartial: fields \['formats', 'formats_at', "
                                         r"'guessed'\] missing or unknown \(a partial of another"):
        BatchPartial.from_bytes(old.to_bytes())


def copy_of(part):
    return BatchPartial.from_bytes(part.to_bytes())
