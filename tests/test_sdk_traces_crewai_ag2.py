"""CrewAI event streams and AG2 chat histories as JSON Lines (issue 28: per-call logs split one
run per line). Real SDKs wrote them on the scripted scenario (scripts/sdk_traces/scenario.py,
scripted_openai_server.py on 127.0.0.1): crewai_run.py logs every CrewAI event-bus event of two
crew kickoffs (pydantic ``model_dump_json``, one per line); ag2_run.py writes two AG2
``initiate_chat`` conversations as ChatResult lines and as chat_id message lines. Each file is
compared with the truth.json its producer wrote from the scenario: the calls and their
arguments, parallel steps, error flags (CrewAI's tool_usage_error; AG2 has none), outputs, the
final answer, the summed usage -- by load and by the stream, grouped into runs as inspect says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.read.traces import load
from trajcheck.read.traces.stream import stream

D = Path(__file__).parent / "data" / "sdk_traces"


def truth(sdk: str) -> dict[str, Any]:
    return json.loads((D / sdk / "truth.json").read_text(encoding="utf-8"))


def check_run(t: Any, want: dict[str, Any], *, usage: bool) -> None:
    assert [(c.name, c.args) for c in t.tool_calls()] == [(c["name"], c["args"]) for c in want["calls"]]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == want["call_steps"] == [2, 1, 1]
    results = t.tool_results()
    assert [(r.output, r.is_error) for r in results] == [(c["output"], c["is_error"]) for c in want["calls"]]
    # each result joined to its call by the model's call id
    assert [(c.call_id, r.call_id) for c, r in t.pairs()] == [(f"call_{k}_{i}", f"call_{k}_{i}")
                                                              for k, i in ((0, 0), (0, 1), (1, 0), (2, 0))]
    assert t.final_response == want["final_response"]
    assert t.user_input == want["user"]
    if usage:
        assert t.total_usage is not None
        assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (880, 140) == (
            want["usage"]["input_tokens"], want["usage"]["output_tokens"])
    else:
        assert t.total_usage is None


@pytest.mark.parametrize("how", ["load", "stream"])
def test_crewai_event_log_reads_as_two_kickoffs_exactly(how: str) -> None:
    want = truth("crewai")
    p = D / "crewai" / "events.jsonl"
    src = load(p) if how == "load" else stream(p)
    runs = list(src)
    assert src.formats == {"crewai_events": 2} and src.problems == [] and src.unread == []
    assert len(runs) == want["runs"] == 2
    for t in runs:
        check_run(t, want, usage=True)
        failed = t.tool_results()[2]
        assert failed.is_error is True and failed.error == "Kein Zimmer im oberen Stock frei"
    assert len({t.metadata["run_root"] for t in runs}) == 2


def test_crewai_grouping_is_stated_for_inspect() -> None:
    p = D / "crewai" / "events.jsonl"
    res = load(p)
    assert res.sources[str(p)].grouped == {"crewai_events": "50 records grouped into 2 runs by parent_event_id"}


def test_crewai_lines_out_of_order_and_runs_interleaved_still_group(tmp_path: Path) -> None:
    lines = (D / "crewai" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = lines[:25], lines[25:]
    mixed = [x for pair in zip(reversed(first), second) for x in pair]
    p = tmp_path / "mixed.jsonl"
    p.write_text("\n".join(mixed) + "\n", encoding="utf-8")
    res = load(p)
    assert res.formats == {"crewai_events": 2} and res.problems == []
    for t in res:
        check_run(t, truth("crewai"), usage=True)


def test_crewai_tool_events_without_model_responses_are_calls(tmp_path: Path) -> None:
    # CrewAI's ReAct text mode: no llm_call_completed lists the calls; the tool usage events
    # alone give them, the error event the failure
    evs = [json.loads(x) for x in (D / "crewai" / "events.jsonl").read_text(encoding="utf-8").splitlines()[:25]]
    evs = [e for e in evs if e["type"] != "llm_call_completed"]
    p = tmp_path / "react.jsonl"
    p.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in evs), encoding="utf-8")
    (t,) = load(p)
    want = truth("crewai")
    assert [(c.name, c.args) for c in t.tool_calls()] == [(c["name"], c["args"]) for c in want["calls"]]
    assert [r.is_error for r in t.tool_results()] == [False, False, True, False]
    assert t.final_response == want["final_response"]  # from crew_kickoff_completed.output.raw


def test_crewai_tool_events_no_reader_reads_are_a_problem(tmp_path: Path) -> None:
    # tool usage events forced under a reader that does not read them: never silent
    evs = [json.loads(x) for x in (D / "crewai" / "events.jsonl").read_text(encoding="utf-8").splitlines()[:25]]
    tool_evs = [e for e in evs if e["type"].startswith("tool_usage")]
    p = tmp_path / "tools.json"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}], "events": tool_evs}), encoding="utf-8")
    res = load(p)
    assert res.unread and "tool_usage_started" in res.unread[0]


@pytest.mark.parametrize(("name", "usage", "grouped"), [
    ("chat_results.jsonl", True, "2 records grouped into 2 runs by ChatResult"),
    ("chat_messages.jsonl", False, "16 records grouped into 2 runs by chat_id"),
])
@pytest.mark.parametrize("how", ["load", "stream"])
def test_ag2_chat_histories_read_as_two_conversations_exactly(name: str, usage: bool, grouped: str, how: str) -> None:
    want = truth("ag2")
    p = D / "ag2" / name
    src = load(p) if how == "load" else stream(p)
    runs = list(src)
    assert src.formats == {"ag2_chats": 2} and src.problems == [] and src.unread == []
    assert len(runs) == want["conversations"] == 2
    for t in runs:
        check_run(t, want, usage=usage)
        assert t.tool_results()[2].output == "Error: Kein Zimmer im oberen Stock frei"
    assert len({t.session_id for t in runs}) == 2
    if how == "load":
        assert load(p).sources[str(p)].grouped == {"ag2_chats": grouped}


def test_ag2_interleaved_message_lines_group_by_chat_id(tmp_path: Path) -> None:
    lines = (D / "ag2" / "chat_messages.jsonl").read_text(encoding="utf-8").splitlines()
    mixed = [x for pair in zip(lines[:8], lines[8:]) for x in pair]
    p = tmp_path / "mixed.jsonl"
    p.write_text("\n".join(mixed) + "\n", encoding="utf-8")
    res = load(p)
    assert res.formats == {"ag2_chats": 2} and res.problems == []
    for t in res:
        check_run(t, truth("ag2"), usage=False)


@pytest.mark.parametrize(("sdk", "name", "bad_line", "fmt"), [
    ("crewai", "events.jsonl", 7, "crewai_events"),
    ("ag2", "chat_results.jsonl", 2, "ag2_chats"),
    ("ag2", "chat_messages.jsonl", 5, "ag2_chats"),
])
def test_a_malformed_line_is_named_and_nothing_else_is_lost(tmp_path: Path, sdk: str, name: str, bad_line: int,
                                                            fmt: str) -> None:
    lines = (D / sdk / name).read_text(encoding="utf-8").splitlines()
    lines.insert(bad_line - 1, '{"type": "tool_usage_started", "tool_name": ')
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = load(p)
    assert len(res.skipped) == 1 and f"{p}:{bad_line}" in res.skipped[0], res.problems
    assert res.formats == {fmt: 2}
    whole = load(D / sdk / name)
    assert [t.tool_calls() for t in res] == [t.tool_calls() for t in whole]
    assert [t.final_response for t in res] == [t.final_response for t in whole]


@pytest.mark.parametrize("how", ["load", "stream"])
def test_ag2_runtime_log_reads_as_two_conversations_and_names_its_text_lines(how: str) -> None:
    # autogen.runtime_logging's file logger: JSON lines of events, model calls (reprs) and tool
    # runs, plus plain-text lines it writes itself (banner, "Failed to log ..."): those are
    # named as not read; the received_message events give the two conversations
    want = truth("ag2")
    p = D / "ag2" / "runtime.log"
    src = load(p) if how == "load" else stream(p)
    runs = list(src)
    assert src.formats == {"ag2_chats": 2} and src.unread == []
    text_lines = [i for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                  if not line.startswith("{")]
    assert len(text_lines) == 9
    assert [s.split(": ", 1)[0] for s in src.skipped] == [f"{p}:{i}" for i in text_lines]
    assert src.faults == []
    for t in runs:
        check_run(t, want, usage=True)  # usage from each model call's CompletionUsage repr
    if how == "load":
        assert load(p).sources[str(p)].grouped["ag2_chats"].endswith("into 2 runs by runtime log termination")


@pytest.mark.parametrize(("sdk", "name"), [("crewai", "events.jsonl"), ("ag2", "chat_messages.jsonl")])
def test_an_engine_row_never_reads_one_event_or_message_as_a_run(sdk: str, name: str) -> None:
    from trajcheck.read.traces.stream import read_row

    lines = (D / sdk / name).read_text(encoding="utf-8").splitlines()
    row = next(x for x in lines if '"tool_usage_started"' in x or '"tool_calls": [' in x)
    got: list[str] = []
    trajs, problems = read_row(row, "row 7", unread=got)
    assert trajs == [] and "not one row at a time" in problems[0]
    assert len(got) == 1 and got[0].startswith("row 7: holds ")
    # every record of the file in one cell (an engine's group-by) reads as load does
    whole, _ = read_row("[" + ",".join(lines) + "]", "row 0", whole=True)
    assert [t.tool_calls() for t in whole] == [t.tool_calls() for t in load(D / sdk / name)]


def test_a_record_whose_type_is_not_a_string_is_still_detected_as_its_format() -> None:
    from trajcheck.read.traces.detection import detect

    # the CrewAI check runs before most formats: an unhashable "type" must not fail detection
    assert detect({"messages": [{"role": "user", "content": "x"}], "type": {"k": 1}}) == "openai_chat"


@pytest.mark.parametrize(("sdk", "name"), [("crewai", "events.jsonl"), ("ag2", "chat_results.jsonl"),
                                           ("ag2", "chat_messages.jsonl"), ("ag2", "runtime.log")])
def test_odd_field_values_raise_only_trace_format_errors(sdk: str, name: str) -> None:
    import random

    from trajcheck.errors import TraceFormatError
    from trajcheck.read.traces import ag2_chats, crewai_events

    mod = crewai_events if sdk == "crewai" else ag2_chats
    recs = []
    for line in (D / sdk / name).read_text(encoding="utf-8").splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    odd: list[Any] = [None, 1, [], "x", {}, [1, "a"], {"a": 1}, True, -5, "{bad"]
    rnd = random.Random(7)

    def mutate(d: dict[str, Any], depth: int = 0) -> dict[str, Any]:
        d = dict(d)
        for k in list(d):
            r = rnd.random()
            if r < 0.15:
                d[k] = rnd.choice(odd)
            elif isinstance(d[k], dict) and depth < 3 and r < 0.5:
                d[k] = mutate(d[k], depth + 1)
            elif isinstance(d[k], list) and r < 0.5:
                d[k] = [mutate(x, depth + 1) if isinstance(x, dict) else x for x in d[k]]
        return d

    for _ in range(60):
        try:
            mod.read_all([mutate(r) for r in recs])
        except TraceFormatError:
            pass


@pytest.mark.parametrize("how", ["load", "stream"])
def test_crewai_hierarchical_crew_reads_as_one_run_with_each_agents_calls(how: str) -> None:
    # crewai_hierarchical_run.py: the manager delegates to Researcher (three parallel calls) and
    # Booker (book_hotel fails, then the retry succeeds), then answers
    want = json.loads((D / "crewai" / "hierarchical_truth.json").read_text(encoding="utf-8"))
    p = D / "crewai" / "hierarchical_events.jsonl"
    src = load(p) if how == "load" else stream(p)
    runs = list(src)
    assert src.formats == {"crewai_events": 1} and src.problems == [] and src.unread == []
    assert len(runs) == want["runs"] == 1
    t = runs[0]
    by_call = [(c.name, s.agent_name, c.args) for s in t.steps for c in s.tool_calls]
    assert by_call == [(c["name"], c["agent_name"], c["args"]) for c in want["calls"]]
    assert [(n, a) for n, a, _ in by_call] == [
        ("delegate_work_to_coworker", "Crew Manager"), ("get_weather", "Researcher"), ("get_weather", "Researcher"),
        ("get_time", "Researcher"), ("delegate_work_to_coworker", "Crew Manager"), ("book_hotel", "Booker"),
        ("book_hotel", "Booker")]
    assert [c["coworker"] for n, _, c in by_call if n == "delegate_work_to_coworker"] == ["Researcher", "Booker"]
    assert [len(s.tool_calls) for s in t.steps if s.kind == "tool_call"] == want["call_steps"] == [1, 3, 1, 1, 1]
    # results joined by the model's call ids, each on the step of the agent whose call it answers;
    # the parallel triple's results come in the order its threads finished (emission_sequence),
    # which a regenerated log may change, so they are compared by call id
    ids = ["call_manager_0_0", "call_researcher_0_0", "call_researcher_0_1", "call_researcher_0_2",
           "call_manager_1_0", "call_booker_0_0", "call_booker_1_0"]
    got = {s.tool_result.call_id: (s.tool_result.output, s.tool_result.is_error, s.agent_name)
           for s in t.steps if s.tool_result is not None}
    assert got == {i: (c["output"], c["is_error"], c["agent_name"]) for i, c in zip(ids, want["calls"])}
    assert [c.call_id for c in t.tool_calls()] == ids
    # a delegation's result comes after its coworker's steps
    assert [s.tool_result.call_id for s in t.steps if s.tool_result is not None and s.agent_name != "Researcher"] == [
        "call_manager_0_0", "call_booker_0_0", "call_booker_1_0", "call_manager_1_0"]
    failed = [r for r in t.tool_results() if r.is_error]
    assert [(r.name, r.error) for r in failed] == [("book_hotel", "Kein Zimmer im oberen Stock frei")]
    assert t.final_response == want["final_response"]
    assert t.user_input == want["user"]
    assert t.total_usage is not None
    assert (t.total_usage.input_tokens, t.total_usage.output_tokens) == (2690, 300) == (
        want["usage"]["input_tokens"], want["usage"]["output_tokens"])


def test_crewai_hierarchical_without_the_closing_events_splits_the_manager_out(tmp_path: Path) -> None:
    # the manager's agent_execution_started is not in the log: only its closing event
    # (agent_execution_completed, started_event_id) ties the manager's scope to the kickoff
    lines = (D / "crewai" / "hierarchical_events.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    manager_open = {r["parent_event_id"] for r in recs if r["type"] == "flow_started"} - {
        r["event_id"] for r in recs}
    assert len(manager_open) == 1  # the one opening event the listener did not get
    kept = [x for x, r in zip(lines, recs) if r.get("started_event_id") not in manager_open]
    p = tmp_path / "no_close.jsonl"
    p.write_text("\n".join(kept) + "\n", encoding="utf-8")
    assert load(p).formats == {"crewai_events": 2}
    assert load(D / "crewai" / "hierarchical_events.jsonl").formats == {"crewai_events": 1}
