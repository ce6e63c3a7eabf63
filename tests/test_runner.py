"""run_suite: agent contract, failures (raise / hang / bad return), resume, problems."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from trajcheck.errors import AgentError
from trajcheck.model import Case
from trajcheck.run.runner import AgentRun, load_agent, read_runs, run_suite
from trajcheck.run.tools import ToolContext, ToolRegistry

FIXTURE = "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"


def _registry() -> ToolRegistry:
    def add_note(text: str, *, ctx: ToolContext) -> str:
        ctx.sandbox.execute("INSERT INTO notes (text) VALUES (:t)", {"t": text})
        return "ok"

    r = ToolRegistry()
    r.register(add_note)
    return r


@pytest.fixture()
def cases(tmp_path: Path) -> list[Case]:
    (tmp_path / "f.sql").write_text(FIXTURE)
    fx = str(tmp_path / "f.sql")
    return [Case(id=f"c{i}", input=f"note {i}", initial_state=fx,
                 expected_final_state={"notes": [{"text": f"note {i}"}]},
                 response_must_include=["saved"]) for i in range(3)]


def good(inp: str, tools) -> str:
    tools.call("add_note", {"text": inp})
    return "saved it"


def test_good_agent_all_pass_and_snapshots_recorded(cases, tmp_path):
    out = tmp_path / "runs.jsonl"
    res = run_suite(good, cases, trials=2, concurrency=3, out=out, tools=_registry(), progress=False)
    sc = res.scorecard
    assert (res.n_new, res.n_resumed) == (6, 0)
    assert sc.suite.pass_hat_k == {1: 1.0, 2: 1.0}
    lines = out.read_text().splitlines()
    assert len(lines) == 6
    recs = [json.loads(x)["metadata"] for x in lines]
    assert sorted((m["case_id"], m["trial"]) for m in recs) == [(f"c{i}", t) for i in range(3) for t in (0, 1)]
    m = next(m for m in recs if m["case_id"] == "c1")
    assert m["state_before"] == {"notes": []}
    assert m["state_after"] == {"notes": [{"id": 1, "text": "note 1"}]}
    assert m["run_id"] == f"c1-{m['trial']}"


def test_agent_that_raises_is_a_failed_run_rest_scored(cases):
    def flaky(inp: str, tools) -> str:
        if inp == "note 1":
            raise ValueError("model returned garbage")
        return good(inp, tools)

    sc = run_suite(flaky, cases, trials=1, tools=_registry(), progress=False, isolation="inline").scorecard
    by = {r.case_id: r for r in sc.runs}
    assert by["c1"].success is False
    assert by["c1"].failure_reason == "agent failed: ValueError: model returned garbage"
    assert by["c0"].success and by["c2"].success
    assert sc.suite.n_successes == 2


def test_hung_agent_times_out_without_hanging_the_suite(cases):
    def hang(inp: str, tools) -> str:
        if inp == "note 0":
            time.sleep(5)
        return good(inp, tools)

    t0 = time.perf_counter()
    res = run_suite(hang, cases, trials=1, concurrency=2, timeout_s=0.3, tools=_registry(), progress=False, isolation="inline")
    assert time.perf_counter() - t0 < 3
    by = {r.case_id: r for r in res.scorecard.runs}
    assert by["c0"].success is False
    assert by["c0"].failure_reason == "agent failed: timeout after 0.3s"
    assert by["c1"].success and by["c2"].success


def test_async_agent_and_async_timeout(cases):
    async def agent(inp: str, tools) -> AgentRun:
        if inp == "note 2":
            await asyncio.sleep(10)
        await tools.acall("add_note", {"text": inp})
        return AgentRun("saved", cost_usd=0.01, metadata={"model": "scripted"})

    res = run_suite(agent, cases, trials=1, timeout_s=0.3, tools=_registry(), progress=False, isolation="inline")
    by = {r.case_id: r for r in res.scorecard.runs}
    assert by["c0"].success and by["c0"].cost_usd == 0.01
    assert by["c2"].failure_reason == "agent failed: timeout after 0.3s"
    t = next(t for t, c in res.runs if c.id == "c0")
    assert t.metadata["agent_metadata"] == {"model": "scripted"}


def test_bad_return_value_is_a_failure(cases):
    res = run_suite(lambda i, t: 42, cases[:1], trials=1, tools=_registry(), progress=False, isolation="inline")
    r = res.scorecard.runs[0]
    assert not r.success
    assert r.failure_reason == "agent failed: agent returned int; expected str, None, AgentRun or a dict with final_response"


def test_interrupt_then_resume_redoes_nothing(cases, tmp_path):
    out = tmp_path / "runs.jsonl"
    calls: list[str] = []

    def make(limit: int | None):
        def agent(inp: str, tools) -> str:
            if limit is not None and len(calls) >= limit:
                raise KeyboardInterrupt
            calls.append(inp)
            return good(inp, tools)
        return agent

    with pytest.raises(KeyboardInterrupt):
        run_suite(make(4), cases, trials=3, out=out, tools=_registry(), progress=False, isolation="inline", agent_name="a")
    assert len(calls) == 4 and len(out.read_text().splitlines()) == 4
    res = run_suite(make(None), cases, trials=3, out=out, tools=_registry(), progress=False, isolation="inline", agent_name="a")
    assert len(calls) == 9  # 4 before + 5 remaining, none redone
    assert (res.n_new, res.n_resumed) == (5, 4)
    assert res.scorecard.suite.n_runs == 9 and res.scorecard.suite.pass_hat_k[3] == 1.0
    # a third run does nothing new
    res3 = run_suite(make(None), cases, trials=3, out=out, tools=_registry(), progress=False, isolation="inline", agent_name="a")
    assert len(calls) == 9 and res3.n_new == 0


def test_truncated_last_line_is_cut_and_redone(cases, tmp_path):
    out = tmp_path / "runs.jsonl"
    run_suite(good, cases, trials=1, out=out, tools=_registry(), progress=False, agent_name="a")
    text = out.read_text()
    lines = text.splitlines(keepends=True)
    killed = lines[0] + lines[1] + lines[2][: len(lines[2]) // 2]
    out.write_text(killed)
    rec = read_runs(out)
    assert len(rec.runs) == 2 and rec.truncated and "line 3 is truncated" in rec.problems[0]
    seen: list[str] = []

    def agent(inp, tools):
        seen.append(inp)
        return good(inp, tools)

    res = run_suite(agent, cases, trials=1, out=out, tools=_registry(), progress=False, isolation="inline", agent_name="a")
    redone = json.loads(lines[2])["metadata"]["case_id"]
    assert seen == [f"note {redone[1:]}"]
    assert len(out.read_text().splitlines()) == 3
    assert all(json.loads(x) for x in out.read_text().splitlines())
    assert res.scorecard.suite.n_successes == 3


def test_unknown_cases_in_file_and_cases_without_runs_are_problems(cases, tmp_path):
    out = tmp_path / "runs.jsonl"
    run_suite(good, cases, trials=1, out=out, tools=_registry(), progress=False, agent_name="a")
    broken = Case(id="c_missing_fixture", input="x", initial_state=str(tmp_path / "nope.sql"))
    res = run_suite(good, cases[1:] + [broken], trials=1, out=out, tools=_registry(), progress=False,
                    agent_name="a")
    probs = " | ".join(res.problems)
    assert "case id 'c0' is not among the cases; not scored" in probs
    assert "case 'c_missing_fixture': not run (SandboxError: fixture" in probs
    assert res.scorecard.suite.n_runs == 2 and res.scorecard.suite.n_cases == 2
    assert list(res.scorecard.problems) == list(res.problems)


def test_a_case_failing_setup_last_with_trials_does_not_hang(cases, tmp_path):
    """Issue 27 (Small): with trials >= 2 a case whose setup failed, listed last, left its
    later trials skipped with no run going, and the runner waited on its queue forever (no
    timeout applies while nothing runs). Every case failing setup: the error lists each one."""
    import threading

    broken = Case(id="z_missing_fixture", input="x", initial_state=str(tmp_path / "nope.sql"))
    got: dict[str, object] = {}

    def go(cs: list[Case], key: str) -> None:
        try:
            got[key] = run_suite(good, cs, trials=2, tools=_registry(), progress=False, isolation="inline",
                                 agent_name="a")
        except Exception as e:  # noqa: BLE001 -- the test reads it
            got[key] = e

    for cs, key in ((cases[:2] + [broken], "mixed"), ([broken, Case(id="y", input="x",
                                                                     initial_state=str(tmp_path / "no.sql"))], "all")):
        th = threading.Thread(target=go, args=(cs, key), daemon=True)
        th.start()
        th.join(60)
        assert not th.is_alive(), f"run_suite hung ({key})"
    res = got["mixed"]
    assert not isinstance(res, Exception), res
    assert res.scorecard.suite.n_runs == 4 and res.scorecard.suite.n_successes == 4
    assert [p for p in res.problems if "z_missing_fixture" in p] == [
        f"case 'z_missing_fixture': not run (SandboxError: fixture '{tmp_path / 'nope.sql'}' not found "
        f"(looked at {tmp_path / 'nope.sql'}))"]
    err = got["all"]
    from trajcheck.errors import MetricInputError
    assert isinstance(err, MetricInputError)
    assert str(err).splitlines() == [
        "no run to score: 2 problems:",
        f"  - case 'z_missing_fixture': not run (SandboxError: fixture '{tmp_path / 'nope.sql'}' not found "
        f"(looked at {tmp_path / 'nope.sql'}))",
        f"  - case 'y': not run (SandboxError: fixture '{tmp_path / 'no.sql'}' not found "
        f"(looked at {tmp_path / 'no.sql'}))"]


def test_out_file_of_another_agent_is_refused(cases, tmp_path):
    out = tmp_path / "runs.jsonl"
    run_suite(good, cases[:1], trials=1, out=out, tools=_registry(), progress=False, agent_name="a")
    with pytest.raises(AgentError, match="holds runs of agent 'a', not 'b'"):
        run_suite(good, cases[:1], trials=1, out=out, tools=_registry(), progress=False, agent_name="b")


def test_bad_arguments():
    with pytest.raises(AgentError, match="trials must be"):
        run_suite(good, [], trials=0, progress=False)
    with pytest.raises(AgentError, match="appears twice"):
        run_suite(good, [Case(id="a", input=""), Case(id="a", input="")], progress=False)


def test_load_agent_messages(tmp_path):
    with pytest.raises(AgentError, match="expected module:callable"):
        load_agent("no_colon")
    with pytest.raises(AgentError, match="module 'no_such_mod_xyz' not found"):
        load_agent("no_such_mod_xyz:agent")
    with pytest.raises(AgentError, match="has no attribute 'nope'"):
        load_agent("json:nope")
    with pytest.raises(AgentError, match="file 'missing.py' not found"):
        load_agent("missing.py:agent")
    f = tmp_path / "my_agent.py"
    f.write_text("X = 3\ndef agent(i, t):\n    return 'hi'\n")
    assert load_agent(f"{f}:agent")("q", None) == "hi"
    with pytest.raises(AgentError, match="'X' is a int, not a callable"):
        load_agent(f"{f}:X")
    assert load_agent("json:dumps") is json.dumps


def test_k_above_trials_raises_before_any_run(cases, tmp_path):
    from trajcheck.score.suite import KTooLargeError

    calls: list[str] = []

    def counting(inp: str, tools) -> str:
        calls.append(inp)
        return "saved"

    out = tmp_path / "runs.jsonl"
    with pytest.raises(KTooLargeError, match=r"k=5 asked, but case 'c0' has 2 run\(s\)"):
        run_suite(counting, cases, trials=2, ks=[1, 2, 3, 4, 5], out=out, tools=_registry(), progress=False, isolation="inline")
    assert calls == [] and not out.exists()  # no run made, nothing lost
    res = run_suite(counting, cases, trials=2, ks=[2], tools=_registry(), progress=False, isolation="inline")
    assert len(calls) == 6 and res.scorecard.suite.pass_hat_k == {2: 0.0}  # "saved" but no note added
