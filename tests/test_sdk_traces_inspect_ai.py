"""Inspect AI writes the trace: a real ``inspect_ai.eval`` on Inspect's own ``mockllm`` model
with scripted outputs (a parallel pair, a call whose tool raises ``ToolError``, its retry, the
answer, each with usage), logged in both of Inspect's formats: ``.eval`` (a zip whose members
Inspect compresses with zstd) and ``.json``. trajcheck reads both exactly; a sample that
crashed is listed with its reason, not scored."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import ToolCall, ToolError, tool

from trajcheck.model import Usage
from trajcheck.read.traces import load

_TURNS = [  # (calls, text, input tokens, output tokens)
    ([("get_weather", {"city": "Oslo"}, "w1"), ("get_weather", {"city": "Bergen"}, "w2")], "", 50, 12),
    ([("book", {"day": "mon"}, "b1")], "", 80, 9),
    ([("book", {"day": "tue"}, "b2")], "", 95, 9),
    ([], "Booked Tuesday; Oslo is 12C.", 110, 7),
]


@tool
def get_weather():
    async def execute(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city
        """
        return "12C"

    return execute


@tool
def book():
    async def execute(day: str) -> str:
        """Book a slot.

        Args:
            day: the day
        """
        if day == "mon":
            raise ToolError("Monday is full")
        if day == "crash":
            raise RuntimeError("booking service down")
        return f"booked {day}"

    return execute


def _outputs(turns) -> list[ModelOutput]:
    outs = []
    for calls, text, i, o in turns:
        msg = ChatMessageAssistant(content=text, model="mockllm/model",
                                   tool_calls=[ToolCall(id=c, function=f, arguments=a) for f, a, c in calls] or None)
        out = ModelOutput.from_message(msg, stop_reason="tool_calls" if calls else "stop")
        out.usage = ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o)
        outs.append(out)
    return outs


def _eval(turns, log_dir: Path, fmt: str, **kw):
    task = Task(dataset=[Sample(input="Book a slot and tell me the weather", target="Tuesday")],
                solver=[use_tools(get_weather(), book()), generate()], scorer=includes())
    logs = eval(task, model=get_model("mockllm/model", custom_outputs=_outputs(turns)), log_dir=str(log_dir),
                log_format=fmt, display="none", **kw)
    return logs[0]


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_inspect_log_read_exactly(tmp_path, fmt) -> None:
    log = _eval(_TURNS, tmp_path, fmt)
    path = Path(log.location)
    assert log.status == "success" and path.suffix == f".{fmt}"
    if fmt == "eval":  # Inspect compresses the members with zstd (zip method 93)
        assert {i.compress_type for i in zipfile.ZipFile(path).infolist()} == {93}
    res = load(path)
    assert res.formats == {"inspect_ai": 1} and res.problems == []
    t = res[0]
    assert [(c.name, c.args, c.call_id) for c in t.tool_calls()] == [
        ("get_weather", {"city": "Oslo"}, "w1"), ("get_weather", {"city": "Bergen"}, "w2"),
        ("book", {"day": "mon"}, "b1"), ("book", {"day": "tue"}, "b2")]
    assert [len(s.tool_calls) for s in t.steps if s.tool_calls] == [2, 1, 1]
    assert [(r.call_id, r.output, r.is_error, r.error) for r in t.tool_results()] == [
        ("w1", "12C", False, None), ("w2", "12C", False, None), ("b1", "", True, "Monday is full"),
        ("b2", "booked tue", False, None)]
    assert [s.usage for s in t.steps if s.usage] == [
        Usage(input_tokens=i, output_tokens=o, total_tokens=i + o) for _, _, i, o in _TURNS]
    mu = log.stats.model_usage["mockllm/model"]  # Inspect's own total
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (mu.input_tokens, mu.output_tokens) == (335, 37)
    assert t.final_response == "Booked Tuesday; Oslo is 12C."
    assert t.metadata["case_id"] == "1" and t.metadata["trial"] == 1
    assert t.metadata["scores"]["includes"]["value"] == "C"


def test_inspect_crashed_sample_is_listed_not_scored(tmp_path) -> None:
    crash = [([("book", {"day": "crash"}, "b1")], "", 40, 5)]
    log = _eval(crash, tmp_path, "eval", fail_on_error=False)
    assert log.samples is None or log.samples[0].error is not None
    res = load(Path(log.location))
    assert len(res) == 0 and res.formats == {}
    assert len(res.skipped) == 1
    assert "sample 1 epoch 1: the sample failed with an error (RuntimeError" in res.skipped[0]
    assert "booking service down" in res.skipped[0] and "not an agent run" in res.skipped[0]
