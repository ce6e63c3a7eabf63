"""Agents under test run in worker processes (``run_suite(isolation="process")``, the default):
the grader is out of their reach, and an agent that exits, hangs, forges messages or breaks
the protocol fails its own run while the suite goes on (README "Security model").

The agents are in tests/data/hostile/agents.py; the cases ask for ``add_note("note N")``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import AgentError
from trajcheck.read.dataset import load_cases
from trajcheck.run.runner import load_agent, run_suite
from trajcheck.run.worker_pool import agent_spec

HERE = Path(__file__).parent / "data" / "hostile"
AGENTS = HERE / "agents.py"
CASES = HERE / "cases.jsonl"


def _agent(name: str):
    return load_agent(f"{AGENTS}:{name}")


def _calls(t) -> list[dict]:
    return [c.args for s in t.steps for c in s.tool_calls]


def _by_case(res) -> dict:
    return {t.metadata["case_id"]: t for t, _c in res.runs}


def test_introspecting_agent_finds_nothing_in_its_worker() -> None:
    cases = load_cases(CASES)
    agent = _agent("introspector")
    # in trajcheck's own process the same agent does find the expected calls (the cheat is real)
    inline = run_suite(agent, cases, base_dir=HERE, progress=False, isolation="inline")
    assert inline.scorecard.suite.n_successes == 2
    assert [t.metadata["agent_metadata"]["found"] for t in _by_case(inline).values()] == [1, 1]
    # in its worker it finds no case, makes the wrong call, and scores what it did
    res = run_suite(agent, cases, base_dir=HERE, progress=False)
    runs = _by_case(res)
    assert [runs[c].metadata["agent_metadata"]["found"] for c in ("c0", "c1")] == [0, 0]
    assert [_calls(runs[c]) for c in ("c0", "c1")] == [[{"text": "wrong note"}]] * 2
    assert res.scorecard.suite.n_successes == 0
    assert sorted(r.f1 for r in res.scorecard.runs) == [0.0, 0.0]


def test_os_exit_fails_its_run_and_the_suite_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    res = run_suite(_agent("hard_exit"), load_cases(CASES), trials=2, out=out, base_dir=HERE, progress=False)
    assert res.n_new == 4 and res.scorecard.suite.n_successes == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 4
    assert {r["metadata"]["error"] for r in recs} == {"agent worker process exited with code 0 during the run"}
    # what it did before exiting is in the registry's record, and in the sandbox's state
    c0 = next(r for r in recs if r["metadata"]["case_id"] == "c0")
    assert [c["args"] for s in c0["steps"] for c in s.get("tool_calls", ())] == [{"text": "note 0"}]
    assert c0["metadata"]["state_after"] == {"notes": [{"id": 1, "text": "note 0"}]}
    assert c0["metadata"]["terminated"] is False


def test_os_exit_fails_the_cli_gate(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(main, ["run", "--agent", f"{AGENTS}:hard_exit", "--cases", str(CASES), "--out",
                                  str(out), "--no-progress", "--fail-under", "1.0"])
    assert r.exit_code == 1, r.output
    assert len(out.read_text().splitlines()) == 2


def test_hung_agent_is_stopped_at_its_timeout_and_the_suite_goes_on() -> None:
    res = run_suite(_agent("hangs_on_first"), load_cases(CASES), timeout_s=3.0, base_dir=HERE, progress=False)
    runs = _by_case(res)
    assert runs["c0"].metadata["error"] == "timeout after 3s"
    assert _calls(runs["c0"]) == [{"text": "started"}]
    assert "error" not in runs["c1"].metadata and _calls(runs["c1"]) == [{"text": "note 1"}]
    assert [(r.case_id, r.success) for r in res.scorecard.runs] == [("c0", False), ("c1", True)]


def test_forged_done_message_and_edited_results_do_not_change_the_record() -> None:
    res = run_suite(_agent("forger"), load_cases(CASES)[:1], base_dir=HERE, progress=False)
    (t, _case), = res.runs
    # the forged message's answer is what the agent said; its "steps" are ignored
    assert t.final_response == "saved it"
    assert _calls(t) == [{"text": "wrong note"}]
    assert [s.tool_result.output for s in t.steps if s.tool_result] == [{"saved": ["wrong note"]}]
    assert t.metadata["state_after"] == {"notes": [{"id": 1, "text": "wrong note"}]}
    assert res.scorecard.suite.n_successes == 0 and res.scorecard.runs[0].f1 == 0.0


def test_protocol_breaker_fails_its_run_only() -> None:
    res = run_suite(_agent("garbler"), load_cases(CASES), base_dir=HERE, progress=False, timeout_s=30)
    runs = _by_case(res)
    assert runs["c0"].metadata["error"].startswith("agent worker broke the protocol (unreadable message")
    assert "error" not in runs["c1"].metadata
    assert [(r.case_id, r.success) for r in res.scorecard.runs] == [("c0", False), ("c1", True)]


def test_honest_agents_score_the_same_in_both_modes() -> None:
    cases = load_cases(CASES)
    for name in ("honest", "honest_async"):
        got = {}
        for mode in ("process", "inline"):
            res = run_suite(_agent(name), cases, trials=2, concurrency=2, base_dir=HERE, progress=False,
                            isolation=mode)
            got[mode] = [(r.case_id, r.success, r.f1) for r in res.scorecard.runs]
            assert res.scorecard.suite.n_successes == 4
            if name == "honest_async":
                t = res.runs[0][0]
                assert [s.kind for s in t.steps] == ["user", "tool_call", "tool_result", "assistant",
                                                     "final_response"]
                assert (t.total_usage.input_tokens, t.total_cost_usd) == (3, 0.5)
                assert t.metadata["route"] == ["notes"] and t.metadata["agent_metadata"] == {"defs": 1}
        assert got["process"] == got["inline"]


def test_runs_use_another_process_and_reuse_its_worker() -> None:
    import os

    res = run_suite(_agent("whoami"), load_cases(CASES), trials=3, base_dir=HERE, progress=False)
    pids = {t.metadata["agent_metadata"]["pid"] for t, _c in res.runs}
    assert len(res.runs) == 6 and res.scorecard.suite.n_successes == 6
    assert len(pids) == 1 and os.getpid() not in pids  # one worker for all six runs, not this process
    inline = run_suite(_agent("whoami"), load_cases(CASES)[:1], base_dir=HERE, progress=False, isolation="inline")
    assert inline.runs[0][0].metadata["agent_metadata"]["pid"] == os.getpid()


def test_agents_a_worker_cannot_load_are_refused_clearly() -> None:
    def local(inp, tools):
        return "x"

    with pytest.raises(AgentError, match="cannot be loaded by name in a worker process.*isolation='inline'"):
        run_suite(local, load_cases(CASES), base_dir=HERE, progress=False)
    with pytest.raises(AgentError, match="isolation must be 'sandbox', 'process' or 'inline', got 'thread'$"):
        run_suite(_agent("honest"), load_cases(CASES), base_dir=HERE, progress=False, isolation="thread")
    with pytest.raises(AgentError, match="got 'sandbx' \\(did you mean 'sandbox'\\?\\)"):
        run_suite(_agent("honest"), load_cases(CASES), base_dir=HERE, progress=False, isolation="sandbx")
    assert agent_spec(_agent("honest")) == f"{AGENTS}:honest"
    assert agent_spec(load_cases) == "trajcheck.read.dataset:load_cases"


# ---------------------------------------------------------------- simulated-user conversations

def _user(messages: list[dict[str, str]]) -> str:
    from trajcheck.run.simulated_user import STOP_MARKER

    return STOP_MARKER  # satisfied after the agent's first answer


def test_scenario_turns_run_in_workers_too() -> None:
    from trajcheck.judges import CallableModel
    from trajcheck.run.simulated_user import load_scenarios, run_scenarios

    scen = load_scenarios(HERE / "scenarios.yaml")
    user = CallableModel(_user)
    inline = run_scenarios(scen, _agent("introspector"), user, seeds=[0, 1], base_dir=HERE, isolation="inline")
    assert inline.scorecard.suite.n_successes == 2  # in trajcheck's process the cheat works
    res = run_scenarios(scen, _agent("introspector"), user, seeds=[0, 1], base_dir=HERE)
    assert res.scorecard.suite.n_successes == 0
    assert [_calls(r.trajectory) for r in res.results] == [[{"text": "wrong note"}]] * 2
    # an agent that ends its worker ends its conversation, with the reason; the next seed runs
    res = run_scenarios(scen, _agent("hard_exit"), user, seeds=[0, 1], base_dir=HERE)
    assert [(r.termination, r.error) for r in res.results] == [
        ("agent_error", "agent worker process exited with code 0 during the run")] * 2
    assert [_calls(r.trajectory) for r in res.results] == [[{"text": "note 0"}]] * 2
    # the history parameter reaches a worker's agent, turn by turn
    replies = iter(["and?", "and?", "and?"])
    res = run_scenarios(scen, _agent("honest_with_history"), CallableModel(lambda m: next(replies)),
                        seeds=[0], base_dir=HERE)
    (r,) = res.results
    assert [m["content"] for m in r.conversation if m["role"] == "assistant"] == [
        "saved it", "saved it (2 earlier messages)", "saved it (4 earlier messages)"]
    assert r.termination == "max_turns" and r.trajectory.metadata["terminated"] is False  # cut off at 3
