"""The local eval's scorecard for the engine tests (tests/test_engines_batch.py and the Spark
and Ray engine tests): the stream scored with the meta `trajcheck eval` notes (how its
traces were read), and a file of runs in two formats, one of them guessed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.cli.app import main
from trajcheck.cli.eval_cmd import _note_reading
from trajcheck.model import Case
from trajcheck.read.traces.stream import stream
from trajcheck.score.pipeline import evaluate_stream

TRACES = Path(__file__).parent / "data" / "traces"


def local_eval(path: Path, cases: Any, **kw: Any) -> Any:
    """``evaluate_stream`` of ``path`` with ``meta`` as ``trajcheck eval`` notes it
    (``formats``, ``guessed_formats``, ``unread``)."""
    s = stream(path)
    sc = evaluate_stream(s, cases, **kw)
    _note_reading(sc, s)
    return sc


def mixed_format_files(tmp: Path, native_lines: list[str], cases: dict[str, Case]) -> tuple[Path, Path]:
    """``native_lines`` (trajcheck JSONL of ``cases``' runs) with, after the first, OpenAI
    chat records between them: three of tests/data/traces/openai_chat.json (tool calls:
    recognised) and one of role/content messages only (guessed); all for a case ``w1``.
    Returns the runs file and the cases file (``cases`` and ``w1``)."""
    chat = json.loads((TRACES / "openai_chat.json").read_text())
    chat["metadata"] = {"case_id": "w1"}
    plain = {"messages": [{"role": "user", "content": "Weather in Oslo?"},
                          {"role": "assistant", "content": "12C and rain."}],
             "metadata": {"case_id": "w1"}}
    others = [json.dumps(chat), json.dumps(plain), json.dumps(chat), json.dumps(chat)]
    lines = [native_lines[0]]
    for i, x in enumerate(native_lines[1:]):
        if i < len(others):
            lines.append(others[i])
        lines.append(x)
    p = tmp / "mixed.jsonl"
    p.write_text("".join(x + "\n" for x in lines))
    w1 = Case.from_dict({"id": "w1", "input": "Weather in Oslo and Bergen?",
                         "expected_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}]})
    cp = tmp / "mixed_cases.jsonl"
    cp.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in [*cases.values(), w1]))
    return p, cp


def check_engine_notes_formats(engine: str, runs_file: Path, cases: dict[str, Case], tmp: Path) -> None:
    """``trajcheck eval --engine ENGINE`` on six native runs of ``runs_file`` with four OpenAI
    chat records among them (``mixed_format_files``): its scorecard notes meta['formats'] and
    meta['guessed_formats'] as the local eval does, and every figure is the local one's
    (only the problems differ: they name engine rows instead of file lines)."""
    lines = runs_file.read_text().splitlines()[:6]
    own = {c: cases[c] for c in (json.loads(x)["metadata"]["case_id"] for x in lines)}
    mp, mcp = mixed_format_files(tmp, lines, own)
    out, local = tmp / "sc.json", tmp / "local.json"
    for extra, dest in ((["--engine", engine], out), ([], local)):
        with pytest.raises(SystemExit) as ei:
            main(["eval", str(mp), "--cases", str(mcp), "-q", "--json", str(dest), *extra])
        assert ei.value.code in (0, None)
    got, lw = json.loads(out.read_text()), json.loads(local.read_text())
    assert got["meta"]["formats"] == lw["meta"]["formats"] == {"trajcheck": 6, "openai_chat": 4}
    assert list(got["meta"]["formats"]) == ["trajcheck", "openai_chat"]
    assert got["meta"]["guessed_formats"] == lw["meta"]["guessed_formats"] == {
        "openai_chat": "role/content messages with no field only OpenAI chat writes"}
    assert got["meta"] == lw["meta"]
    assert [k for k in lw if got[k] != lw[k]] == ["problems"]
