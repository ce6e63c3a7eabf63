"""Never silent on every route (issue 28 item 6): a file holding tool calls that were not read
as calls is reported the same way whether it is read by ``load``, by the stream ``eval``
scores from (plain and fused), by the batch engines' ``read_row`` / ``BatchScorer`` /
``finalize`` (Arrow, and Spark/Ray through them: tests/test_engine_spark.py,
tests/test_engine_ray.py), or by ``trajcheck inspect``; ``eval`` exits 2 on it on the
local route unless --allow-unread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from unread_rows import GEMINI_RAW, OTEL_SPAN, VERCEL, mixed_files, native_run

from trajcheck.cli import main
from trajcheck.read.traces import load
from trajcheck.read.traces.stream import read_row, stream


@pytest.fixture()
def mixed(tmp_path: Path) -> tuple[Path, Path]:
    return mixed_files(tmp_path)


def _lines_of(msgs: list[str]) -> list[str]:
    return [m.split(": ", 1)[0].rsplit(":", 1)[-1] for m in msgs]


def test_load_stream_and_fused_stream_report_the_same_records(mixed) -> None:
    p, _ = mixed
    res = load(p)  # load reads the records format by format: same messages, its own order
    assert sorted(_lines_of(res.unread)) == ["2", "3"]
    s = stream(p)
    assert [len(t.tool_calls()) for t in s] == [1, 0, 0, 0]
    assert s.unread == sorted(res.unread)
    f = stream(p)
    runs = list(f.fused_runs())
    assert len(runs) == 4 and f.unread == s.unread
    assert "2 tool call(s) and 1 tool result(s)" in s.unread[0]
    assert "1 tool call(s): functionCall parts (1) (first at metadata.raw.parts[0].functionCall)" in s.unread[1]


def test_stream_of_a_directory_and_a_json_file(mixed, tmp_path: Path) -> None:
    p, _ = mixed
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a.jsonl").write_bytes(p.read_bytes())
    (d / "b.json").write_text(json.dumps({"messages": VERCEL}), encoding="utf-8")
    s = stream(d)
    assert len(list(s)) == 5
    assert [u.split(": ", 1)[0] for u in s.unread] == [f"{d / 'a.jsonl'}:2", f"{d / 'a.jsonl'}:3",
                                                       str(d / "b.json")]


def test_read_row_reports_unread_on_the_native_fast_path_and_others() -> None:
    got: list[str] = []
    trajs, problems = read_row(json.dumps(native_run("c1", 0, GEMINI_RAW)), "row 7", unread=got)
    assert len(trajs) == 1 and not trajs[0].tool_calls()
    assert len(got) == 1 and got[0].startswith("row 7: holds 1 tool call(s): functionCall parts (1)")
    assert problems == got
    got.clear()
    trajs, problems = read_row(json.dumps(native_run("c1", 2, GEMINI_RAW)), "row 8", unread=got)
    assert len(trajs[0].tool_calls()) == 2 and got == [] and problems == []  # calls read: trusted
    trajs, problems = read_row(json.dumps(native_run("c1", 0)), "row 9", unread=got)
    assert len(trajs) == 1 and got == [] and problems == []
    trajs, problems = read_row(json.dumps({"messages": VERCEL}), "row 10", unread=got)
    assert len(trajs) == 1 and len(got) == 1 and got[0].startswith("row 10: holds 2 tool call(s) and 1 tool result(s)")
    got.clear()
    # a span cannot be read alone: skipped, and its tool call is named
    trajs, problems = read_row(json.dumps(OTEL_SPAN), "row 11", unread=got)
    assert trajs == [] and len(problems) == 1 and "not one row at a time; skipped" in problems[0]
    assert got == ["row 11: holds 1 tool call(s): tool spans (gen_ai.tool.name) (1), which a row read "
                   "alone cannot join into its otel run; not read"]
    # without the list, the same problems (no change for existing callers)
    assert any(x.startswith("row 10: holds 2") for x in read_row(json.dumps({"messages": VERCEL}), "row 10")[1])


def test_batch_scorer_partials_and_finalize_carry_unread(mixed) -> None:
    pa = pytest.importorskip("pyarrow")
    from trajcheck.engines.batch import BatchPartial, BatchScorer, finalize
    from trajcheck.read.dataset import load_cases

    p, cp = mixed
    cases = load_cases(cp)
    texts = p.read_text(encoding="utf-8").splitlines()
    scorer = BatchScorer(cases)
    a, b = scorer.new_partial(), scorer.new_partial()
    scorer.score(pa.RecordBatch.from_pydict({"trace": texts[:2], "seq": [0, 1]}), a)
    scorer.score(pa.RecordBatch.from_pydict({"trace": texts[2:], "seq": [2, 3]}), b)
    assert [s for s, _ in a.unread] == [1] and [s for s, _ in b.unread] == [2]
    b2 = BatchPartial.from_bytes(b.to_bytes())  # crosses processes as data
    assert b2.unread == b.unread
    sc = finalize([b2, a], cases, n_boot=50)
    assert [u.split(":", 1)[0] for u in sc.meta["unread"]] == ["row 1", "row 2"]
    assert sc.suite.n_runs == 4
    # a clean input leaves no unread key
    clean = scorer.new_partial()
    scorer.score(pa.RecordBatch.from_pydict({"trace": [texts[0], texts[3]], "seq": [0, 1]}), clean)
    assert "unread" not in finalize([clean], cases, n_boot=50).meta


def test_eval_of_jsonl_exits_2_unless_allow_unread(mixed, tmp_path: Path) -> None:
    p, cp = mixed
    js = tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(p), "--cases", str(cp), "-q", "--json", str(js)])
    assert r.exit_code == 2, r.output
    assert "2 records with tool calls that were not read as calls" in " ".join(r.output.split())
    assert _lines_of(json.loads(js.read_text(encoding="utf-8"))["meta"]["unread"]) == ["2", "3"]
    r = CliRunner().invoke(main, ["eval", str(p), "--cases", str(cp), "-q", "--allow-unread"])
    assert r.exit_code == 0, r.output
    # the same file without its unread lines scores quietly
    q = tmp_path / "clean.jsonl"
    q.write_text("".join(x + "\n" for i, x in enumerate(p.read_text(encoding="utf-8").splitlines())
                         if i in (0, 3)), encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", str(q), "--cases", str(cp), "-q"])
    assert r.exit_code == 0, r.output


def test_inspect_names_unread_records_and_strict_refuses(mixed) -> None:
    p, _ = mixed
    r = CliRunner().invoke(main, ["inspect", str(p)], env={"COLUMNS": "400"})
    out = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    assert "records with tool calls not read │ 2 (eval exits 2 without --allow-unread)" in out
    assert f"{p}:2: holds 2 tool call(s) and 1 tool result(s)" in out
    assert f"{p}:3: holds 1 tool call(s): functionCall parts (1)" in out
    r = CliRunner().invoke(main, ["inspect", str(p), "--strict"], env={"COLUMNS": "400"})
    assert r.exit_code == 2
