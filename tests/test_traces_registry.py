"""The reader registry (trajcheck.read.traces.registry): every format name has a one-object
reader (``read(obj, fmt)``) and a ``Reader`` of a file's records, and ``read`` of an object
that is no trace raises ``TraceFormatError`` naming the format, never a KeyError (the
llamaindex_events one-object reader was missing: ``read(None, "llamaindex_events")`` raised
KeyError)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.errors import TraceFormatError
from trajcheck.read.traces import FORMATS, REGISTRY, read
from trajcheck.read.traces.registry import GROUPED, READERS, read_each, read_grouped

DATA = Path(__file__).parent / "data" / "sdk_traces" / "llamaindex"


def test_every_format_has_both_readers() -> None:
    assert sorted(READERS) == sorted(FORMATS)
    assert sorted(REGISTRY) == sorted(FORMATS)
    assert all(REGISTRY[f] is read_grouped for f in GROUPED)
    assert [f for f in FORMATS if REGISTRY[f] is not read_each] == [
        "tau_bench", "tau2", "inspect_ai", "openai_agents", "anthropic_managed", "mlflow",
        "autogen", "langchain_events", "litellm", "bedrock_invocations", "llamaindex_events", "crewai_events",
        "ag2_chats", "otel",
            "langsmith"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_read_of_no_trace_names_the_format(fmt: str) -> None:
    with pytest.raises(TraceFormatError):
        read(None, fmt)


def test_llamaindex_events_read_one_run() -> None:
    events = [json.loads(x) for x in (DATA / "workflow_events.jsonl").read_text(encoding="utf-8").splitlines()]
    truth = json.loads((DATA / "workflow_events.truth.json").read_text(encoding="utf-8"))
    t = read(events, "llamaindex_events")
    assert [c.name for c in t.tool_calls()] == [c["name"] for c in truth["calls"]]
    assert t.final_response == truth["final_response"]
