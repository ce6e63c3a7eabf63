"""llama-index writes the trace: the events a ``FunctionAgent`` run streams
(``handler.stream_events()``), each serialised by the workflows package's own
``JsonSerializer`` (``{"__is_pydantic": true, "value": {...}, "qualified_name":
"...ToolCallResult"}``), one per line, as a run's event log is kept. The agent runs on
``llama_index.llms.openai.OpenAI`` pointed at a scripted server on 127.0.0.1; its booking tool
raises once (the agent records the failure as a ``ToolOutput`` with ``is_error``), then the
retry succeeds. Two runs are logged one after the other.

Run with its own venv (``make sdk-traces``, requirements/llamaindex.txt).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _scripted as S  # noqa: E402
import llama_index.core  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.llms.openai import OpenAI  # noqa: E402
from llamaindex_run import _call, _reply, book_hotel, get_time, get_weather  # noqa: E402
from workflows.context.serializers import JsonSerializer  # noqa: E402

IDS = ["call_w1", "call_t1", "call_b1", "call_b2"]


async def _run(url: str) -> list[str]:
    llm = OpenAI(model="gpt-4o-mini", api_key="test-key", api_base=url + "/v1")
    agent = FunctionAgent(tools=[get_weather, get_time, book_hotel], llm=llm, streaming=False)
    handler = agent.run(S.USER)
    ser = JsonSerializer()
    lines = [ser.serialize(ev) async for ev in handler.stream_events()]
    out = await handler
    assert str(out) == S.FINAL, str(out)
    return lines


def main() -> None:
    replies = [
        _reply(0, {"role": "assistant", "content": None, "tool_calls": [
            _call(IDS[0], "get_weather", S.WEATHER_ARGS), _call(IDS[1], "get_time", S.TIME_ARGS)]},
            S.USAGE[0], "tool_calls"),
        _reply(1, {"role": "assistant", "content": None, "tool_calls": [
            _call(IDS[2], "book_hotel", S.BOOK_FAIL_ARGS)]}, S.USAGE[1], "tool_calls"),
        _reply(2, {"role": "assistant", "content": None, "tool_calls": [
            _call(IDS[3], "book_hotel", S.BOOK_OK_ARGS)]}, S.USAGE[2], "tool_calls"),
        _reply(3, {"role": "assistant", "content": S.FINAL}, S.USAGE[3], "stop"),
    ]
    lines: list[str] = []
    for _ in range(2):
        srv = S.Scripted(replies)
        try:
            lines += asyncio.run(_run(srv.url))
        finally:
            srv.close()
    out = S.DATA / "llamaindex"
    out.mkdir(parents=True, exist_ok=True)
    (out / "workflow_events.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    truth = S.truth("llama-index (FunctionAgent.run stream_events, workflows JsonSerializer)",
                    llama_index.core.__version__, "the run's streamed events, one serialised event per line; two runs",
                    ids=IDS, usage=None,
                    usage_note="AgentOutput.raw (the model response) is not serialised: no usage",
                    error_flags=[False, False, True, False], extra={"runs": 2})
    (out / "workflow_events.truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n",
                                                    encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
