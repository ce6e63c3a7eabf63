"""The stream's one-parse, one-pass route for the usual line of trajcheck's own JSONL
(``limits.plain_loads`` + ``native.read_line``) gives exactly what the general route gives:
``limits.loads`` -> ``wrappers.unwrap`` -> ``detect`` -> ``native.read`` through
``Trajectory.from_dict`` -> ``with_wrapper_metadata`` -> ``clean_figures``. The same
trajectories (field values, types and dict order), problems, skipped lines, formats and
sources, on generated volume lines, the example runs, every JSONL test file and hostile
lines. No timing here (bench/stages.py)."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.read import limits
from trajcheck.read.traces import native
from trajcheck.read.traces import stream as stream_mod
from trajcheck.read.traces.native import _TEXT_CALL, _TEXT_RESULT, _TEXT_STEP
from trajcheck.read.traces.stream import stream

ROOT = Path(__file__).resolve().parent.parent


def _same(a: object, b: object) -> bool:
    """Same type and value all the way down: dataclasses by their instance dicts (keys in
    order), dicts with keys in order, 1 and 1.0 apart, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return _same(vars(a), vars(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))  # type: ignore[arg-type]
    if isinstance(a, float):
        return (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))  # type: ignore[arg-type]
    return a == b


def _read(path: Path, general: bool, monkeypatch: pytest.MonkeyPatch, **kw):
    """Everything a stream over ``path`` gives, by the general route when ``general``."""
    with monkeypatch.context() as m:
        if general:
            m.setattr(stream_mod, "plain_loads", lambda raw: limits.NOT_PLAIN)
            m.setattr(stream_mod, "read_line", lambda d: pytest.fail("read_line called"))
            m.setattr(native, "_read_plain", lambda d: None)  # native.read through from_dict
        s = stream(path, **kw)
        try:
            trajs = list(s)
        except TraceFormatError as e:
            return ("error", str(e))
        return (trajs, s.problems, s.skipped, s.formats, s._acc.sources, s.n_read, s.cases)


def _check(path: Path, monkeypatch: pytest.MonkeyPatch, **kw) -> None:
    got = _read(path, False, monkeypatch, **kw)
    want = _read(path, True, monkeypatch, **kw)
    if want[0] == "error":
        assert got == want
        return
    assert len(got[0]) == len(want[0]), path
    for i, (g, w) in enumerate(zip(got[0], want[0])):
        assert g == w and _same(g, w), (path, i)
    assert got[1:] == want[1:], path


def _volume_lines(n_cases: int) -> list[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from volume import case_of, run_of
    finally:
        sys.path.pop(0)
    return [json.dumps(run_of(0, case_of(0, i), trial)) for i in range(n_cases) for trial in range(4)]


def test_volume_lines_take_the_one_pass_route_and_equal_the_general_one(tmp_path, monkeypatch):
    p = tmp_path / "runs.jsonl"
    p.write_text("".join(x + "\n" for x in _volume_lines(60)))
    calls = []
    real = stream_mod.read_line
    monkeypatch.setattr(stream_mod, "read_line", lambda d: calls.append(1) or real(d))
    _check(p, monkeypatch)
    assert len(calls) == 240  # every line took it
    # and each is the trajectory from_dict builds from the line, its top-level ids merged
    trajs = list(stream(p))
    from trajcheck.model import Trajectory
    for line, t in zip(p.read_text().splitlines(), trajs):
        assert _same(t, Trajectory.from_dict(json.loads(line)))


def test_example_and_test_jsonl_files_read_alike(monkeypatch):
    # the examples' run files (JSONL, and the tau-bench suite's JSON, read whole through the
    # native reader's one pass) and every JSONL test file
    files = sorted([*(ROOT / "examples").rglob("*.jsonl"), *(ROOT / "examples").rglob("*.json"),
                    *(ROOT / "tests" / "data").rglob("*.jsonl")])
    assert len(files) >= 10
    for p in files:
        _check(p, monkeypatch)


_STEPS = [{"index": 0, "kind": "user", "content": "hi"},
          {"index": 1, "kind": "tool_call", "tool_calls": [{"name": "f", "args": {"a": 1}, "call_id": "c"}],
           "usage": {"input_tokens": 3, "output_tokens": 1}, "cost_usd": 0.5, "latency_ms": 10.0},
          {"index": 2, "kind": "tool_result",
           "tool_result": {"call_id": "c", "name": "f", "output": {"ok": [1, 2]}, "is_error": False}}]


def _line(**over: object) -> str:
    d: dict[str, object] = {"steps": _STEPS, "metadata": {"case_id": "c1", "trial": 0}}
    d.update(over)
    return json.dumps(d)


def _step(**over: object) -> str:
    return _line(steps=[*_STEPS[:2], {**_STEPS[2], **over}])


HOSTILE = [
    _line(),
    "",
    "   ",
    "not json",
    '{"steps": [',
    b"\xff\xfe bad bytes".decode("latin-1"),  # written as latin-1 below: not UTF-8
    "\ufeff" + _line(),  # a BOM inside the file, not at its start
    _line(final_response="NaN is text here"),
    _line(total_cost_usd=float("nan")).replace("NaN", "NaN"),  # a NaN literal
    _line(total_cost_usd=10**30),  # an integer beyond 64 bits
    _line(total_cost_usd=-1),
    _line(total_cost_usd=3),  # an int figure: plain, but not by the one-pass test
    _line(total_latency_ms="fast"),
    _line(total_usage={"input_tokens": 2**70, "output_tokens": True}),
    _line(total_usage={"input_tokens": 5, "extra": "x"}),
    _line(total_usage=[]),
    _line(metadata="m"),
    _line(metadata={"problems": ["earlier problem"], "case_id": "c2"}),
    _line(metadata={"problems": "a string"}),
    _line(metadata={"problems": 5}),
    _line(metadata={"problems": {"k": 1}}),
    _line(case_id="top", run_id="r9", trial=None),
    _line(case_id="top", metadata={}),
    _line(case_id="top", metadata=None),
    _line(zzz=1),  # a key no trajectory has
    _line(spans=[{"name": "s", "span_id": "1"}]),  # a span dump wrapper's key
    _line(steps=[]),
    _line(steps=[{"index": 0}]),
    _line(steps=[{"index": 0, "kind": "user", "extra": [1]}]),
    _line(steps=[{"index": 0, "extra": [1]}]),
    _line(steps=[{"kind": "user", "extra": [1]}]),
    _line(steps=[{"index": 0, "kind": None}]),
    _line(steps="x"),
    _step(tool_result={}),
    _step(tool_result={"call_id": "c", "extra": 1}),
    _step(tool_result="oops"),
    _step(usage={}),
    _step(usage={"input_tokens": -4}),
    _step(usage=7),
    _step(metadata={}),
    _step(metadata={"k": [1]}),
    _step(metadata=[1]),
    _step(cost_usd="free", latency_ms=float("inf")).replace("Infinity", "1e400"),
    _step(cost_usd=1e400).replace("Infinity", "1e400"),
    _step(tool_calls=[]),
    _step(tool_calls={}),
    _step(tool_calls="f"),
    _step(tool_calls=[{"name": "g", "args": '{"x": 1}'}]),
    _step(tool_calls=[{"name": "g", "args": "not json"}]),
    _step(tool_calls=[{"name": "", "args": {}}]),
    _step(tool_calls=[{"args": {}}]),
    _step(tool_calls=[{"name": "g", "args": [1]}]),
    _step(tool_calls=[{"name": "g", "args": None, "zz": 1}]),
    _step(tool_calls=["g"]),
    _step(tool_calls=[{"args": {}, "zz": 1}]),
    _step(tool_calls=[{"name": "g", "args": "{}", "zz": 1}]),
    _step(tool_result={"extra": 1}),
    _step(usage={"input_tokens": 1, "extra": "x"}),
    _step(content="\\ud800 lone"),
    _line(final_response="\ud83d\ude00 emoji") ,
    '{"steps": [{"index": 0, "kind": "user", "content": "\\ud83d\\ude00"}]}',
    '{"steps": [{"index": 0, "kind": "user", "content": "\\ud800"}]}',
    '{"a": 1, "a": 2, "steps": [{"index": 0, "kind": "user"}]}',
    '{"steps": [{"index": 0, "kind": "user", "content": ' + "[" * 101 + "]" * 101 + "}]}",
    '{"steps": [{"index": 0, "kind": "user", "content": ' + "[" * 99 + "]" * 99 + "}]}",
    '{"steps": [{"index": 0, "kind": "user", "content": "' + "[" * 150 + '"}]}',
    '{"steps": [{"index": 0, "kind": "user", "content": 1234567890123456789}]}',
    '{"steps": [{"index": 0, "kind": "user", "content": 123456789012345678}]}',
    json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}),
    json.dumps({"calls": [{"name": "x", "args": {}}], "metadata": {"case_id": "c9"}}),
    json.dumps([json.loads(_line()), json.loads(_line())]),
    "[]",
    "3",
    '"text"',
    _line(),
    # every text field of a step, a call and a result holding a number, a list or null
    *[_line(steps=[{**_STEPS[0], f: v}, *_STEPS[1:]]) for f in _TEXT_STEP for v in (7, ["x"], None)],
    *[_line(steps=[_STEPS[0], {**_STEPS[1], "tool_calls": [{**_STEPS[1]["tool_calls"][0], f: v}]},  # type: ignore[index]
                   _STEPS[2]]) for f in _TEXT_CALL for v in (7, ["x"], None)],
    *[_step(tool_result={**_STEPS[2]["tool_result"], f: v}) for f in _TEXT_RESULT  # type: ignore[dict-item]
      for v in (7, ["x"], None)],
]


def _hostile_file(tmp_path: Path, lines: list[str], bom: bool = False) -> Path:
    p = tmp_path / "hostile.jsonl"
    data = b"\xef\xbb\xbf" if bom else b""
    for x in lines:
        data += (x.encode("latin-1") if x.startswith("\xff") else x.encode("utf-8", "surrogatepass")) + b"\n"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("bom", [False, True])
def test_hostile_lines_read_alike(tmp_path, monkeypatch, bom):
    p = _hostile_file(tmp_path, HOSTILE, bom)
    _check(p, monkeypatch)
    got = _read(p, False, monkeypatch)
    assert len(got[0]) > 30 and len(got[2]) > 5  # both kinds present: read lines and skipped ones


@pytest.mark.parametrize("kw", [{"format": "trajcheck"}, {"format": "plain"}, {"format": "openai_chat"},
                                {"error_pattern": "ok"}])
def test_forced_formats_and_error_pattern_read_alike(tmp_path, monkeypatch, kw):
    lines = [x for x in HOSTILE if x.startswith("{") and "messages" not in x and "calls" not in x]
    p = _hostile_file(tmp_path, lines)
    _check(p, monkeypatch, **kw)
    p.write_text("".join(x + "\n" for x in _volume_lines(5)))
    _check(p, monkeypatch, **kw)


def test_plain_loads_leaves_to_loads_what_loads_treats_specially():
    ok = b'{"a": [1, 2.5, "x", null, true], "b": {"c": "\\u00e9\\ud83d\\ude00"}}\n'
    assert limits.plain_loads(ok) == limits.loads(ok.decode())
    for raw in (b"", b"  \n", b"not json", b"[NaN]", b"[Infinity]", b"[1e400]", b"[12345678901234567890]",
                b"[-1234567890123456789]", b'["\\ud800"]', b"\xef\xbb\xbf[1]", b"\xff[1]",
                b"[" * 101 + b"]" * 101):
        assert limits.plain_loads(raw) is limits.NOT_PLAIN, raw
    assert limits.plain_loads(b"[" * 100 + b"]" * 100) is not limits.NOT_PLAIN
    # 19 digits are read (exact), a minus before them or a 20th digit leaves the text to loads
    assert limits.plain_loads(b"[1234567890123456789, -123456789012345678]") == [
        1234567890123456789, -123456789012345678]
    for raw in (b'["-1234567890123456789"]', b"[9999999999999999999, 1.5, -9999999999999999999]",
                b'{"t": 12345678901234567890}'):
        assert limits.plain_loads(raw) is limits.NOT_PLAIN, raw
    assert limits.plain_loads(b'[["' + b"[" * 101 + b'"]]') == [["[" * 101]]


def test_a_line_whose_metadata_problems_is_not_a_list_does_not_sink_the_file(tmp_path):
    # problems recorded in a line's metadata are reported with the line; a value that is not
    # a list is one problem (it used to raise TypeError and end the whole read)
    p = _hostile_file(tmp_path, [_line(metadata={"problems": 5}), _line(metadata={"problems": "bad"}),
                                 _line(metadata={"problems": ["a", "b"]}), _line()])
    s = stream(p)
    assert len(list(s)) == 4
    assert s.problems == [f"{p}:1: 5", f"{p}:2: bad", f"{p}:3: a", f"{p}:3: b"]
    assert s.skipped == []


@pytest.mark.parametrize("kw", [{}, {"format": "trajcheck"}, {"format": "plain"}, {"error_pattern": "ok"},
                                {"whole": True}])
def test_read_row_reads_alike(monkeypatch, kw):
    # read_row (one JSON text: an engine's table cell) takes the same one-pass route
    from trajcheck.read.traces.stream import read_row

    def both(text: str):
        got = read_row(text, "row 7", **kw)
        with monkeypatch.context() as m:
            m.setattr(stream_mod, "plain_loads", lambda raw: limits.NOT_PLAIN)
            m.setattr(stream_mod, "read_line", lambda d: pytest.fail("read_line called"))
            m.setattr(native, "_read_plain", lambda d: None)
            want = read_row(text, "row 7", **kw)
        return got, want

    texts = [x for x in HOSTILE if not x.startswith("\xff")] + _volume_lines(5) + [
        '{"steps": [{"index": 0, "kind": "user", "content": "\ud800"}]}']  # a lone surrogate itself
    for text in texts:
        (gt, gp), (wt, wp) = both(text)
        assert gp == wp, text
        assert len(gt) == len(wt) and all(g == w and _same(g, w) for g, w in zip(gt, wt)), text
