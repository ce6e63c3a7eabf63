"""Never silent (issue 28): a record holding tool calls that its reader did not turn into
calls is reported (``LoadResult.unread``), ``trajcheck eval`` exits 2 on it unless
--allow-unread, and no committed trace file that holds tool calls reads as 0 calls quietly."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli import main
from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import load
from trajcheck.read.traces.unread import call_shapes

ROOT = Path(__file__).parent / "data"
REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real_traces"
SHARED_REAL = Path("/work/shared/data/real_traces")

# the Vercel AI SDK's message shape: no reader of trajcheck reads it
VERCEL = [
    {"role": "user", "content": "Wetter in Zürich?"},
    {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "weather",
                                       "args": {"city": "Zürich", "opts": {"units": ["C"]}}},
                                      {"type": "tool-call", "toolCallId": "c2", "toolName": "time",
                                       "args": {"tz": "CET"}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "weather",
                                  "result": {"t": 3}}]},
    {"role": "assistant", "content": "3 Grad"},
]


def _files() -> list[Path]:
    roots = [ROOT] + [r for r in (REAL, SHARED_REAL) if r.is_dir()]
    seen: set[Path] = set()
    out = []
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.resolve() not in seen and (
                    p.suffix in (".json", ".jsonl", ".ndjson", ".eval") or p.name.endswith((".json.gz", ".jsonl.gz"))):
                seen.add(p.resolve())
                out.append(p)
    return out


def _held(p: Path) -> int:
    """Tool calls + results the file holds by the detector's own count (0 for a zip)."""
    if p.suffix == ".eval":
        return 1
    data = p.read_bytes()
    if p.suffix == ".gz":
        data = gzip.decompress(data)
    text = data.decode("utf-8", "replace")
    try:
        docs = [json.loads(text)]
    except ValueError:
        docs = []
        for line in text.splitlines():
            try:
                docs.append(json.loads(line))
            except ValueError:
                continue
    return sum(call_shapes(d).calls + call_shapes(d).results for d in docs)


def test_every_committed_trace_with_tool_calls_reads_calls_or_says_so() -> None:
    files = _files()
    assert len(files) >= 60  # tests/data alone holds more; the walk must not find nothing
    quiet_zero: list[str] = []
    checked = 0
    for p in files:
        held = _held(p)
        if not held:
            continue
        checked += 1
        try:
            res = load(p)
        except TraceFormatError:
            continue  # refused: exit 2, named; nothing scored as 0 calls
        calls = sum(len(t.tool_calls()) for t in res)
        if calls == 0 and not res.unread:
            quiet_zero.append(f"{p}: holds {held}, read 0 calls, no problem")
    assert checked >= 50
    assert quiet_zero == []


def test_unread_calls_are_named_with_record_and_shape(tmp_path) -> None:
    p = tmp_path / "vercel.jsonl"
    p.write_text(json.dumps({"messages": VERCEL}) + "\n" + json.dumps(
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n",
        encoding="utf-8")
    res = load(p)
    assert len(res) == 2 and sum(len(t.tool_calls()) for t in res) == 0
    assert len(res.unread) == 1  # the plain chat on line 2 holds no tool and is not reported
    u = res.unread[0]
    assert u.startswith(f"{p}:1: holds 2 tool call(s) and 1 tool result(s): tool-call items (2), "
                        "tool-result items (1) (first at messages[1].content[0])")
    assert "openai_chat reader did not read" in u and u in res.problems


def test_shapes_counted_by_provider_convention() -> None:
    cases = {
        "bedrock": ({"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f", "input": {}}},
                                                      {"toolUse": {"toolUseId": "b", "name": "g", "input": {}}}]},
                    (2, 0)),
        "gemini": ({"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": 1}}}]}, (1, 0)),
        "gemini_result": ({"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}, (0, 1)),
        "openai": ({"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{}"}}]},
                   (1, 0)),
        "sk": ({"role": "assistant", "items": [{"content_type": "function_call", "id": "1", "name": "p-f"}]}, (1, 0)),
        "llamaindex": ({"role": "assistant", "blocks": [{"block_type": "tool_call", "tool_name": "f"}]}, (1, 0)),
        "haystack": ({"role": "assistant", "content": [{"tool_call": {"tool_name": "f", "arguments": {}}}]}, (1, 0)),
        "autogen": ({"type": "ToolCallRequestEvent", "content": [{"id": "1", "name": "f", "arguments": "{}"}] * 2},
                    (2, 0)),
        "otel": ({"attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "f"}}]}, (1, 0)),
        "otel_flat": ({"llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "f"}, (1, 0)),
        "json_text": ({"attributes": {"gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "arguments": {}}]}])}}, (1, 0)),
        "none": ({"role": "assistant", "content": "no tools here, only the word tool_calls"}, (0, 0)),
    }
    got = {k: (call_shapes(v).calls, call_shapes(v).results) for k, (v, _) in cases.items()}
    assert got == {k: want for k, (_, want) in cases.items()}


def test_refused_record_holding_calls_is_unread(tmp_path) -> None:
    p = tmp_path / "mixed.jsonl"
    good = {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}
    odd = {"events": [{"type": "ToolCallRequestEvent", "content": [{"id": "9", "name": "g", "arguments": "{}"}]}]}
    p.write_text(json.dumps(good) + "\n" + json.dumps(odd) + "\n", encoding="utf-8")
    res = load(p)
    assert len(res) == 1 and len(res[0].tool_calls()) == 1
    assert res.unread == [f"{p}:2: holds 1 tool call(s): ToolCallRequestEvent (1) (first at "
                          "events[0]), but is in no format trajcheck reads; not read"]
    assert res.skipped[0].startswith(f"{p}:2: not a trace") and res.skipped == res.problems


def test_eval_exits_2_unless_allow_unread_and_scorecard_names_reading(tmp_path) -> None:
    tr = tmp_path / "t.json"
    tr.write_text(json.dumps({"messages": VERCEL, "metadata": {"case_id": "c1"}}), encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "input": "w?", "expected_calls": [
        {"name": "weather", "args": {"city": "Zürich"}}]}) + "\n", encoding="utf-8")
    md, js = tmp_path / "sc.md", tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(tr), "--cases", str(cases), "-q", "--md", str(md), "--json", str(js)])
    assert r.exit_code == 2 and "with tool calls that were not read as calls" in r.output
    meta = json.loads(js.read_text(encoding="utf-8"))["meta"]  # reports are written first
    assert meta["formats"] == {"openai_chat": 1} and len(meta["unread"]) == 1
    assert "Read as: openai_chat (1 run); 1 record(s) hold tool calls that were not read" in md.read_text(
        encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", str(tr), "--cases", str(cases), "-q", "--allow-unread"])
    assert r.exit_code == 0, r.output


def test_guessed_format_is_named_in_inspect_and_scorecard(tmp_path) -> None:
    tr = tmp_path / "t.json"
    tr.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                              "metadata": {"case_id": "c1"}}), encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "input": "hi", "expected_calls": []}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["inspect", str(tr)], env={"COLUMNS": "400"})
    assert r.exit_code == 0 and "guessed: role/content messages with no field only OpenAI chat writes" in \
        " ".join(r.output.split())
    js = tmp_path / "sc.json"
    r = CliRunner().invoke(main, ["eval", str(tr), "--cases", str(cases), "-q", "--json", str(js)])
    assert r.exit_code == 0, r.output
    assert json.loads(js.read_text(encoding="utf-8"))["meta"]["guessed_formats"] == {
        "openai_chat": "role/content messages with no field only OpenAI chat writes"}


@pytest.mark.parametrize("native_calls", [0, 2])
def test_native_lines_scanned_only_without_calls(tmp_path, native_calls) -> None:
    from trajcheck.model import Step, ToolCall, Trajectory
    from trajcheck.read.traces.stream import stream

    steps = [Step(index=0, kind="user", content="x")]
    if native_calls:
        steps.append(Step(index=1, kind="tool_call", tool_calls=tuple(
            ToolCall(name=f"f{i}", args={}) for i in range(native_calls))))
    d = Trajectory(steps=tuple(steps)).to_dict()
    # a copy of a provider message kept in metadata: read calls are trusted, none read is looked into
    d["metadata"] = {"raw": {"role": "model", "parts": [{"functionCall": {"name": "g", "args": {}}}]}}
    p = tmp_path / "runs.jsonl"
    p.write_text(json.dumps(d) + "\n", encoding="utf-8")
    s = stream(p)
    runs = list(s.fused_runs())
    assert len(runs) == 1
    assert len(s.unread) == (1 if native_calls == 0 else 0)


def test_error_hint_never_proposes_a_pattern_matching_a_false_flag() -> None:
    from trajcheck.hints import error_pattern_hint
    from trajcheck.match.safe_regex import compile_pattern
    from trajcheck.model import Step, ToolResult, Trajectory

    def run(*outs: object) -> Trajectory:
        return Trajectory(steps=tuple(Step(index=i, kind="tool_result", tool_result=ToolResult(
            call_id=str(i), name="t", output=o, is_error=None)) for i, o in enumerate(outs)))

    falses = [{"result": "ok", "error": False}, {"error": None, "v": 1}, '{"error": 0}', '{"error": ""}',
              {"error": {}}, {"error": []}, '{"error" : false}']
    assert error_pattern_hint([run(*falses)]) is None  # Haystack-style results: nothing looks failed
    trues = [{"error": True}, {"error": "timeout"}, {"error": {"code": 503}}, '{"error": [ "x"]}', '{"error": 2}']
    hint = error_pattern_hint([run(*falses, *trues)])
    assert hint is not None and "5 of 12 tool results" in hint
    pat = compile_pattern(hint.split("--error-pattern '")[1].split("'")[0], where="t")
    text = [x if isinstance(x, str) else json.dumps(x) for x in (*falses, *trues)]
    assert [bool(pat.search(x)) for x in text] == [False] * 7 + [True] * 5
