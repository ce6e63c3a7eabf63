"""The local eval's scorecard for the engine tests (tests/test_engines_batch.py and the Spark
and Ray engine tests): the stream scored with the meta `trajcheck eval` notes (how its
traces were read), and a file of runs in two formats, one of them guessed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
