"""Reader for RAGAS multi-turn messages (research notes traces.md §6.2; ragas 0.4 ``ragas.messages``).

Accepted: a list of ``HumanMessage`` / ``AIMessage(tool_calls=[ToolCall(name, args)])`` /
``ToolMessage`` objects or their dicts (``{"type": "human"|"ai"|"tool", "content", ...}``),
a ``MultiTurnSample`` (its ``user_input``), or ``{"user_input": [...]}``.

RAGAS messages have no tool-call ids, no ``tool_call_id`` on ``ToolMessage`` and no error
flag: results pair with calls by position (``Trajectory.pairs``) and ``is_error`` is None.
The message handling is shared with ``trajcheck.read.traces.langchain``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import Trajectory
from ._util import as_plain, finalize, get, is_seq, sum_usage
from .langchain import read_messages

FORMAT = "ragas"


def read(obj: Any) -> Trajectory:
    """Read RAGAS messages into a ``Trajectory``; raises ``TraceFormatError`` if ``obj`` holds no message list."""
    msgs = obj
    if not is_seq(obj):
        ui = get(obj, "user_input")
        if ui is None and isinstance(as_plain(obj), Mapping):
            ui = as_plain(obj).get("messages")
        msgs = ui
    if not is_seq(msgs):
        raise TraceFormatError(f"{FORMAT}: expected a list of messages or a sample with 'user_input', "
                               f"got {type(obj).__name__}")
    problems: list[str] = []
    steps = read_messages(msgs, problems, error_channel=False)
    final_steps, final = finalize(steps)
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      source_format=FORMAT, metadata={"problems": problems} if problems else {})
