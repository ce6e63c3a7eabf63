"""Apache Spark (local mode, one session for the module): trajcheck's scoring through
mapInArrow gives the local eval's scorecard, and `trajcheck eval --engine spark` too."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
if not shutil.which("java"):
    pytest.skip("Spark needs a Java runtime (.ci/run installs one)", allow_module_level=True)

from local_eval import check_engine_notes_formats, local_eval  # noqa: E402

from trajcheck.cli.app import main  # noqa: E402
from trajcheck.engines import spark as tspark  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def spark():
    s = tspark.session(2, app="trajcheck-tests")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """80 of the real tau-bench runs, shuffled, as trajcheck JSONL; cases; local scorecard."""
    tau = load(TAU)
    trajs = list(tau)[:80]
    random.Random(5).shuffle(trajs)
    d = tmp_path_factory.mktemp("spark")
    p = d / "runs.jsonl"
    p.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajs))
    cases = {t.metadata["case_id"]: tau.cases[t.metadata["case_id"]] for t in trajs}
    cp = d / "cases.jsonl"
    cp.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in cases.values()))
    return p, cp, cases, local_eval(p, cases, n_boot=200, source=str(p))


def test_dataframe_scored_with_mapinarrow_equals_local(spark, runs):
    p, _, cases, want = runs
    # a repartitioned frame has no input order: positions come from a column we add first
    lines = [(line, i) for i, line in enumerate(p.read_text().splitlines())]
    df = spark.createDataFrame(lines, ["trace", "pos"]).repartition(3)
    results, sc = tspark.score_dataframe(df, cases, seq_column="pos", n_boot=200, source=str(p))
    assert sc.to_dict() == want.to_dict()
    rows = sorted(results.collect(), key=lambda r: r["seq"])
    assert len(rows) == 80 and [r["run_id"] for r in rows] == [r.run_id for r in want.runs]
    assert sum(r["success"] for r in rows) == want.suite.n_successes


def test_cli_engine_spark_equals_local(spark, runs, tmp_path):
    p, cp, _, want = runs
    out = tmp_path / "sc.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "spark", "-q", "--json", str(out)])
    assert ei.value.code in (0, None)
    got = json.loads(out.read_text())
    w = want.to_dict()
    assert got["suite"]["n_runs"] == 80 and got["suite"]["n_successes"] == w["suite"]["n_successes"]
    # the default seed is 0 and n_boot 2000 on the CLI: compare with a local run of the same
    local = tmp_path / "local.json"
    with pytest.raises(SystemExit):
        main(["eval", str(p), "--cases", str(cp), "-q", "--json", str(local)])
    lw = json.loads(local.read_text())
    assert got["suite"] == lw["suite"] and got["cases"] == lw["cases"] and got["runs"] == lw["runs"]


def test_span_rows_grouped_by_trace_id_equal_local(spark, tmp_path):
    """A DataFrame of OTel span rows (one span per row, traces interleaved, repartitioned):
    grouped by trace id into one run each, scored, the local eval's scorecard."""
    from otel_span_rows import local_scorecard, span_cases, span_rows

    rows = span_rows()
    want = local_scorecard(rows, tmp_path)
    df = spark.createDataFrame([(r["trace_id"], r["span"], r["case_id"], r["pos"]) for r in rows],
                               ["trace_id", "span", "case_id", "pos"]).repartition(3)
    results, sc = tspark.score_span_dataframe(df, span_cases(), case_column="case_id",
                                              seq_column="pos", n_boot=200)
    assert sc.to_dict() == want.to_dict()
    assert sc.suite.n_runs == 12 and sc.suite.n_successes == 4
    assert sorted(r["seq"] for r in results.collect()) == sorted(
        min(x["pos"] for x in rows if x["trace_id"] == t) for t in {x["trace_id"] for x in rows})


def test_cli_engine_spark_events_equal_local_events(spark, tmp_path):
    """`eval --engine spark --events`: the evaluation events of a local eval (same runs,
    attributes, trace and root span ids, order)."""
    from otel_span_rows import event_records, span_runs_file

    runs, cases = span_runs_file(tmp_path)
    outs = {}
    for name, extra in (("spark", ["--engine", "spark"]), ("local", [])):
        outs[name] = tmp_path / f"events_{name}.jsonl"
        with pytest.raises(SystemExit) as ei:
            main(["eval", str(runs), "--cases", str(cases), "-q", "--events", str(outs[name]), *extra])
        assert ei.value.code in (0, None)
    got, want = event_records(outs["spark"]), event_records(outs["local"])
    assert got == want and len(got) == 12 * 5
    assert {r[0] for r in got} == {f"{i + 1:032x}" for i in range(12)} and all(r[1] for r in got)


def test_eval_file_one_partial_per_core_rows_in_order(spark, runs):
    """eval_file: one byte range per core, each read by its task into one partial; the
    local scorecard, and the result rows in input order."""
    p, _, cases, want = runs
    got: list = []
    stats: dict = {}
    sc = tspark.eval_file(str(p), cases, spark=spark, n_boot=200, on_rows=got.extend, stats=stats)
    assert sc.to_dict() == want.to_dict()
    assert stats["partials"] == 2 and stats["rows"] == 80
    assert [r["run_id"] for r in got] == [r.run_id for r in want.runs]
    assert [r["seq"] for r in got] == sorted(r["seq"] for r in got)


def test_eval_file_tasks_pull_ranges_and_send_partials_to_the_driver(spark, runs, monkeypatch):
    """eval_file without result rows: the two tasks pull small ranges from the driver's
    range server as they free up and send their partials back to it: the local scorecard."""
    from trajcheck.engines import range_server

    p, _, cases, want = runs
    monkeypatch.setattr(range_server, "MIN_BYTES", 4096)
    monkeypatch.setattr(range_server, "MAX_BYTES", 16384)
    cut: list = []
    take = range_server.RangeServer.take

    def spy(self):
        r = take(self)
        cut.append(r)
        return r
    monkeypatch.setattr(range_server.RangeServer, "take", spy)
    stats: dict = {}
    sc = tspark.eval_file(str(p), cases, spark=spark, n_boot=200, stats=stats)
    assert sc.to_dict() == want.to_dict()
    assert stats["partials"] == 2 and stats["rows"] == 80 and stats["partial_bytes"] > 0
    ranges = [r for r in cut if r is not None]
    assert len(ranges) >= 8 and ranges[-1][1] == p.stat().st_size
    assert stats["batches"] == len(ranges)  # one batch a range: each scored once


def engine_stats(monkeypatch) -> dict:
    """The ``stats`` of the next ``engines.eval_files`` call (the CLI's) in this test."""
    import trajcheck.engines as engines

    stats: dict = {}
    real = engines.eval_files
    monkeypatch.setattr(engines, "eval_files", lambda *a, **kw: real(*a, stats=stats, **kw))
    return stats


def _split_case_load(monkeypatch):
    """The case file's first rows loaded on the driver (until its compression dictionary is
    made), the rest by the workers, one byte range each (engines.case_load)."""
    from trajcheck.engines import case_load
    from trajcheck.read import case_store

    monkeypatch.setattr(case_load, "MIN_BYTES", 0)
    monkeypatch.setattr(case_load, "BLOCK_BYTES", 512)
    monkeypatch.setattr(case_load, "FRONT_MOST", 1)
    monkeypatch.setattr(case_load, "DICT_WAIT_BYTES", 0)  # tau cases have no plan parts
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 8)  # the driver's (workers take its dictionary)


def test_cli_engine_spark_cases_loaded_partly_on_workers(spark, runs, tmp_path, monkeypatch, capsys):
    """Cases loaded partly on the workers: the local eval's scorecard; a bad row or an id
    repeated in the workers' part fails the eval with the line, as the local load does."""
    p, cp, _, _ = runs
    _split_case_load(monkeypatch)
    stats = engine_stats(monkeypatch)
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "spark", "-q", "--json", str(out)])
    assert ei.value.code in (0, None)
    n_lines = len(cp.read_text().splitlines())
    assert stats["cases_front_bytes"] < stats["cases_bytes"] == cp.stat().st_size
    assert stats["cases_worker_cpu_s"] > 0 and n_lines > 16
    with pytest.raises(SystemExit):
        main(["eval", str(p), "--cases", str(cp), "-q", "--json", str(local)])
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    assert got["suite"] == lw["suite"] and got["cases"] == lw["cases"] and got["runs"] == lw["runs"]
    lines = cp.read_text().splitlines()
    for bad, where in ((lines[:-1] + [lines[-1].replace('"expected_calls"', '"expected_callz"', 1)],
                        f":{n_lines}: case "),
                       (lines + [lines[0]], f":{n_lines + 1}: case ")):
        f = tmp_path / "bad.jsonl"
        f.write_text("\n".join(bad) + "\n")
        with pytest.raises(SystemExit) as ei:
            main(["eval", str(p), "--cases", str(f), "--engine", "spark", "-q"])
        assert ei.value.code == 2
        err = capsys.readouterr().err.replace("\n", "")
        assert f"{f}{where}" in err
    assert "duplicate case id (first on line 1)" in err


def test_cli_engine_spark_refuses_unread_calls_as_local_eval_does(spark, tmp_path):
    """A row holding tool calls no reader read: exit 2 after the reports, its row named in
    meta['unread'] as the local eval names its line; --allow-unread scores it."""
    from unread_rows import mixed_files

    p, cp = mixed_files(tmp_path)
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "spark", "-q", "--json", str(out)])
    assert ei.value.code == 2
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "-q", "--json", str(local)])
    assert ei.value.code == 2
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    # a row is named by its engine position (range index in the high bits), a line by number
    assert [u.split(": ", 1)[0].split()[0] for u in got["meta"]["unread"]] == ["row", "row"]
    assert [u.split(": ", 1)[0] for u in lw["meta"]["unread"]] == [f"{p}:2", f"{p}:3"]
    assert [u.split(": ", 1)[1] for u in got["meta"]["unread"]] == [
        u.split(": ", 1)[1] for u in lw["meta"]["unread"]]
    assert got["suite"]["n_runs"] == lw["suite"]["n_runs"] == 4
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "spark", "-q", "--allow-unread"])
    assert ei.value.code in (0, None)


def test_cli_engine_spark_notes_formats_read_as_local_eval_does(spark, runs, tmp_path):
    """Six native runs and four OpenAI chat records (one guessed) in one file: the scorecard
    of --engine spark notes how the rows were read as the local eval does."""
    p, _, cases, _ = runs
    check_engine_notes_formats("spark", p, cases, tmp_path)
