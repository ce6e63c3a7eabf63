"""Producer: the scenario (scenario.py) as an agent loop over ``litellm.completion`` against the
scripted OpenAI-compatible server (scripted_openai_server.py, 127.0.0.1), logged by a LiteLLM
``CustomLogger`` that writes each call's ``standard_logging_object`` (LiteLLM's standard logging
payload), one per line. Two runs: ``litellm_trace_id`` ``trip-1`` (session ``sess-1``) and
``trip-2``. The tools run in the loop (LiteLLM logs model calls only). Writes under
tests/data/sdk_traces/litellm/: ``standard_logging.jsonl`` and ``truth.json`` (per run).

Run with the pinned environment: ``make sdk-traces`` (requirements/litellm.txt).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price list: offline

import litellm  # noqa: E402
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import scenario  # noqa: E402
import scripted_openai_server  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdk_traces" / "litellm"
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("get_weather", "book_hotel")]


class Recorder(CustomLogger):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self.lines.append(json.dumps(kwargs["standard_logging_object"], ensure_ascii=False, default=str))


def run(base: str, trace_id: str, session_id: str | None) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": scenario.USER}]
    extra: dict[str, Any] = {"litellm_trace_id": trace_id}
    if session_id:
        extra["litellm_session_id"] = session_id
    while True:
        r = litellm.completion(model="openai/scripted-model", api_base=base, api_key="none", messages=messages,
                               tools=TOOLS, **extra)
        msg = r.choices[0].message
        calls = msg.tool_calls or []
        messages.append({"role": "assistant", "content": msg.content,
                         "tool_calls": [{"id": c.id, "type": "function", "function": {
                             "name": c.function.name, "arguments": c.function.arguments}} for c in calls] or None})
        if not calls:
            return
        for c in calls:
            out, _ = scenario.result_of(c.function.name, json.loads(c.function.arguments))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": out})


def main() -> None:
    rec = Recorder()
    litellm.callbacks = [rec]
    srv, base = scripted_openai_server.start()
    try:
        run(base, "trip-1", "sess-1")
        run(base, "trip-2", None)
    finally:
        srv.shutdown()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "standard_logging.jsonl").write_text("\n".join(rec.lines) + "\n", encoding="utf-8")
    from importlib.metadata import version

    scenario.write_truth(OUT, sdk="litellm", version=version("litellm"))
    print(f"wrote {OUT} ({len(rec.lines)} calls)")


if __name__ == "__main__":
    main()
