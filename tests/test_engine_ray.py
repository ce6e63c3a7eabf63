"""Ray Data (a local Ray with 2 CPUs, one for the module): trajcheck's scoring through
map_batches gives the local eval's scorecard, and `trajcheck eval --engine ray` too."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.data")
pytest.importorskip("pyarrow")

from local_eval import check_engine_notes_formats, local_eval  # noqa: E402

from trajcheck.cli.app import main  # noqa: E402
from trajcheck.engines import ray as tray  # noqa: E402
from trajcheck.read.traces import load  # noqa: E402

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def ray():
    r = tray.init(2)
    yield r
    r.shutdown()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """80 of the real tau-bench runs, shuffled, as trajcheck JSONL; cases; local scorecard."""
    tau = load(TAU)
    trajs = list(tau)[80:160]
    random.Random(6).shuffle(trajs)
    d = tmp_path_factory.mktemp("ray")
    p = d / "runs.jsonl"
    p.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajs))
    cases = {t.metadata["case_id"]: tau.cases[t.metadata["case_id"]] for t in trajs}
    cp = d / "cases.jsonl"
    cp.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in cases.values()))
    return p, cp, cases, local_eval(p, cases, n_boot=200, source=str(p))


def test_dataset_scored_with_map_batches_equals_local(ray, runs):
    p, _, cases, want = runs
    ds = ray.data.read_text(str(p)).rename_columns({"text": "trace"})
    results, sc = tray.score_dataset(ds, cases, n_boot=200, source=str(p))
    assert sc.to_dict() == want.to_dict()
    rows = sorted(results.take_all(), key=lambda r: r["seq"])
    assert len(rows) == 80 and [r["run_id"] for r in rows] == [r.run_id for r in want.runs]
    assert sum(r["success"] for r in rows) == want.suite.n_successes


def test_cli_engine_ray_equals_local(ray, runs, tmp_path):
    p, cp, _, _ = runs
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "ray", "-q", "--json", str(out)])
    assert ei.value.code in (0, None)
    with pytest.raises(SystemExit):
        main(["eval", str(p), "--cases", str(cp), "-q", "--json", str(local)])
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    assert got["suite"] == lw["suite"] and got["cases"] == lw["cases"] and got["runs"] == lw["runs"]


def test_span_rows_grouped_by_trace_id_equal_local(ray, tmp_path):
    """A Dataset of OTel span rows (one span per row, traces interleaved): grouped by trace
    id (groupby().map_groups) into one run each, scored, the local eval's scorecard."""
    from otel_span_rows import local_scorecard, span_cases, span_rows

    rows = span_rows()
    want = local_scorecard(rows, tmp_path)
    ds = ray.data.from_items(rows)
    results, sc = tray.score_span_dataset(ds, span_cases(), case_column="case_id",
                                          seq_column="pos", n_boot=200)
    assert sc.to_dict() == want.to_dict()
    assert sc.suite.n_runs == 12 and sc.suite.n_successes == 4
    assert len(results.take_all()) == 12


def test_cli_engine_ray_events_equal_local_events(ray, tmp_path):
    """`eval --engine ray --events`: the evaluation events of a local eval."""
    from otel_span_rows import event_records, span_runs_file

    runs, cases = span_runs_file(tmp_path)
    outs = {}
    for name, extra in (("ray", ["--engine", "ray"]), ("local", [])):
        outs[name] = tmp_path / f"events_{name}.jsonl"
        with pytest.raises(SystemExit) as ei:
            main(["eval", str(runs), "--cases", str(cases), "-q", "--events", str(outs[name]), *extra])
        assert ei.value.code in (0, None)
    got, want = event_records(outs["ray"]), event_records(outs["local"])
    assert got == want and len(got) == 12 * 5 and all(r[0] and r[1] for r in got)


def test_eval_file_ranges_spread_over_two_actors(ray, runs, monkeypatch):
    """Many small ranges handed to two actors as they free up: one partial per actor, the
    local scorecard, and the result rows in input order."""
    p, _, cases, want = runs
    monkeypatch.setattr(tray, "RANGE_BYTES", 16 * 1024)  # ~50 ranges of the 80 runs
    got: list = []
    stats: dict = {}
    sc = tray.eval_file(str(p), cases, workers=2, n_boot=200, on_rows=got.extend, stats=stats)
    assert sc.to_dict() == want.to_dict()
    assert stats["partials"] == 2 and stats["rows"] == 80 and stats["partial_bytes"] > 0
    assert [r["run_id"] for r in got] == [r.run_id for r in want.runs]
    assert [r["seq"] for r in got] == sorted(r["seq"] for r in got)


def test_cli_engine_ray_bad_case_file_names_the_line(ray, runs, tmp_path, capsys):
    """The cases load while the engine starts; a bad row still fails the eval with its line."""
    p, cp, _, _ = runs
    lines = cp.read_text().splitlines()
    lines[2] = lines[2].replace('"expected_calls"', '"expected_callz"', 1)
    bad = tmp_path / "cases.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(bad), "--engine", "ray", "-q"])
    assert ei.value.code == 2
    assert f"{bad}:3:" in capsys.readouterr().err.replace("\n", "")
    # the actors started ahead of the evaluation are stopped: both CPUs free again
    assert not tray._SPARE
    for _ in range(300):
        if ray.available_resources().get("CPU") == 2:
            break
        time.sleep(0.1)
    assert ray.available_resources().get("CPU") == 2


def test_eval_file_of_one_run_on_two_actors(ray, runs, tmp_path):
    """Fewer ranges than actors: the idle actor's empty partial counts once."""
    p, _, cases, _ = runs
    one = tmp_path / "one.jsonl"
    one.write_text(p.read_text().splitlines()[0] + "\n")
    want = local_eval(one, cases, n_boot=200, source=str(one))
    sc = tray.eval_file(str(one), cases, workers=2, n_boot=200)
    assert sc.to_dict() == want.to_dict() and sc.suite.n_runs == 1


def test_cli_engine_ray_cases_loaded_partly_on_actors(ray, runs, tmp_path, monkeypatch, capsys):
    """The case file's first rows loaded on the driver (until its compression dictionary is
    made), the rest by the actors, one byte range each (engines.case_load): the local
    eval's scorecard; a bad row in the actors' part fails the eval with its line."""
    import trajcheck.engines as engines
    from trajcheck.engines import case_load
    from trajcheck.read import case_store

    p, cp, _, _ = runs
    monkeypatch.setattr(case_load, "MIN_BYTES", 0)
    monkeypatch.setattr(case_load, "BLOCK_BYTES", 512)
    monkeypatch.setattr(case_load, "FRONT_MOST", 1)
    monkeypatch.setattr(case_load, "DICT_WAIT_BYTES", 0)  # tau cases have no plan parts
    monkeypatch.setattr(case_store, "TRAIN_ROWS", 8)
    stats: dict = {}  # the CLI's eval_files call's
    real = engines.eval_files
    monkeypatch.setattr(engines, "eval_files", lambda *a, **kw: real(*a, stats=stats, **kw))
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "ray", "-q", "--json", str(out)])
    assert ei.value.code in (0, None)
    assert stats["cases_front_bytes"] < stats["cases_bytes"] == cp.stat().st_size
    assert stats["cases_worker_cpu_s"] > 0
    with pytest.raises(SystemExit):
        main(["eval", str(p), "--cases", str(cp), "-q", "--json", str(local)])
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    assert got["suite"] == lw["suite"] and got["cases"] == lw["cases"] and got["runs"] == lw["runs"]
    lines = cp.read_text().splitlines()
    lines[-1] = lines[-1].replace('"expected_calls"', '"expected_callz"', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(bad), "--engine", "ray", "-q"])
    assert ei.value.code == 2
    assert f"{bad}:{len(lines)}: case " in capsys.readouterr().err.replace("\n", "")
    assert not tray._SPARE


def test_cli_engine_ray_refuses_unread_calls_as_local_eval_does(ray, tmp_path):
    """A row holding tool calls no reader read: exit 2 after the reports, its row named in
    meta['unread'] as the local eval names its line; --allow-unread scores it."""
    from unread_rows import mixed_files

    p, cp = mixed_files(tmp_path)
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    with pytest.raises(SystemExit) as ei:
        main(["eval", str(p), "--cases", str(cp), "--engine", "ray", "-q", "--json", str(out)])
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
        main(["eval", str(p), "--cases", str(cp), "--engine", "ray", "-q", "--allow-unread"])
    assert ei.value.code in (0, None)


def test_cli_engine_ray_reports_a_line_that_is_not_utf8_as_local_eval_does(ray, runs, tmp_path):
    """A run line holding bytes that are not UTF-8 is skipped with a problem, on the engine
    as in the local eval (decoding with replacement scored a changed run silently)."""
    p, cp, _, _ = runs
    lines = p.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b'"name": "', b'"name": "\xff', 1)
    bad = tmp_path / "runs.jsonl"
    bad.write_bytes(b"".join(lines))
    out, local = tmp_path / "sc.json", tmp_path / "local.json"
    for args, to in ((["--engine", "ray"], out), ([], local)):
        with pytest.raises(SystemExit) as ei:
            main(["eval", str(bad), "--cases", str(cp), "-q", "--json", str(to), *args])
        assert ei.value.code in (0, None)
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    assert got["suite"]["n_runs"] == lw["suite"]["n_runs"] == 79
    assert got["suite"] == lw["suite"] and got["runs"] == lw["runs"]
    want = f"{bad}:6: not UTF-8 text (invalid start byte at byte "
    [lp] = [x for x in lw["problems"] if "not UTF-8" in x]
    [gp] = [x for x in got["problems"] if "not UTF-8" in x]
    assert lp.startswith(want) and gp.split(": ", 1)[1] == lp.split(": ", 1)[1]


def test_cli_engine_ray_notes_formats_read_as_local_eval_does(ray, runs, tmp_path):
    """Six native runs and four OpenAI chat records (one guessed) in one file: the scorecard
    of --engine ray notes how the rows were read as the local eval does."""
    p, _, cases, _ = runs
    check_engine_notes_formats("ray", p, cases, tmp_path)
