"""Runs for the never-silent route tests (tests/test_never_silent_routes.py and the Spark and
Ray engine tests): a JSON Lines file where some lines hold tool calls no reader reads."""

from __future__ import annotations

import json
from pathlib import Path

from trajcheck.model import Step, ToolCall, Trajectory

# the Vercel AI SDK's message shape: no reader of trajcheck reads it (2 calls, 1 result)
VERCEL = [
    {"role": "user", "content": "Wetter in Zürich?"},
    {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "args": {"city": "Zürich"}},
        {"type": "tool-call", "toolCallId": "c2", "toolName": "time", "args": {"tz": "CET"}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "weather",
                                  "result": {"t": 3}}]},
    {"role": "assistant", "content": "3 Grad"},
]


def native_run(case_id: str, calls: int, raw: object = None) -> dict:
    steps = [Step(index=0, kind="user", content="x")]
    if calls:
        steps.append(Step(index=1, kind="tool_call", tool_calls=tuple(
            ToolCall(name="weather", args={"city": "Zürich"}) for _ in range(calls))))
    d = Trajectory(steps=tuple(steps), metadata={"case_id": case_id}).to_dict()
    if raw is not None:  # a provider message kept beside the run: its call was not read
        d["metadata"]["raw"] = raw
    return d


GEMINI_RAW = {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Zürich"}}}]}
OTEL_SPAN = {"traceId": "t1", "spanId": "s1", "name": "execute_tool weather",
             "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                            {"key": "gen_ai.tool.name", "value": {"stringValue": "weather"}}]}


def mixed_files(tmp_path: Path) -> tuple[Path, Path]:
    """Four runs as JSONL: line 1 native with a call (read), line 2 the Vercel messages (2
    calls unread), line 3 native with no call but a Gemini call in its metadata (unread),
    line 4 native with no call and nothing held (quiet); and their cases."""
    p = tmp_path / "runs.jsonl"
    lines = [native_run("c1", 1), {"messages": VERCEL, "metadata": {"case_id": "c1"}},
             native_run("c1", 0, GEMINI_RAW), native_run("c1", 0)]
    p.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "input": "w?", "expected_calls": [
        {"name": "weather", "args": {"city": "Zürich"}}]}) + "\n", encoding="utf-8")
    return p, cases
