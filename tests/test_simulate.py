"""Simulated users driven by a ScriptedModel against a small scripted help-desk agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajcheck.errors import AgentError, DatasetError
from trajcheck.judges import ScriptedModel
from trajcheck.run.simulated_user import (
    GIVE_UP_MARKER,
    STOP_MARKER,
    Scenario,
    load_scenarios,
    simulate,
    simulate_one,
    unprompted_reveals,
)
from trajcheck.run.tools import ToolRegistry
from trajcheck.score.suite import run_outcome, score_runs

FIXTURE = ("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
           "priority TEXT NOT NULL, requester TEXT NOT NULL);\n")


def _registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.register
    def create_ticket(title: str, priority: str, requester: str, ctx: Any) -> dict[str, Any]:
        """Create a help-desk ticket."""
        ctx.sandbox.execute("INSERT INTO tickets (title, priority, requester) VALUES (?, ?, ?)",
                            [title, priority, requester])
        return {"id": ctx.sandbox.execute("SELECT max(id) AS id FROM tickets")[0]["id"]}

    return reg


def agent(message: str, tools: Any, history: list[dict[str, str]]) -> str:
    """Asks for the employee ID, then files the ticket with it."""
    if "u_" in message:
        uid = "u_" + message.split("u_")[1].split(".")[0].split()[0]
        r = tools.call("create_ticket", {"title": "Laptop won't boot", "priority": "high",
                                         "requester": uid})
        return f"Created ticket {r.output['id']} for {uid}."
    if history:
        return "Anything else?"
    return "Sorry to hear that. What is your employee ID?"


@pytest.fixture()
def scenario(tmp_path: Path) -> Scenario:
    (tmp_path / "tickets.sql").write_text(FIXTURE)
    return Scenario.from_dict({
        "id": "laptop_boot", "goal": "Get a high-priority ticket for a laptop that won't boot",
        "persona": "terse employee", "hidden_facts": {"employee_id": "u_381"},
        "rules": ["Do not mention your ID unless asked."],
        "success_criteria": ["a ticket was created for u_381"], "max_turns": 5,
        "initial_state": "tickets.sql",
        "expected_final_state": {"tickets": [{"priority": "high", "requester": "u_381"}]},
    })


def test_scripted_conversation_reproduced_exactly(scenario: Scenario, tmp_path: Path) -> None:
    user = ScriptedModel(["My laptop won't boot. Please open a ticket.", "It's u_381.",
                          f"Thanks! {STOP_MARKER}"])
    r = simulate_one(scenario, agent, user, seed=7, tools=_registry(), base_dir=tmp_path, isolation="inline")
    assert list(r.conversation) == [
        {"role": "user", "content": "My laptop won't boot. Please open a ticket."},
        {"role": "assistant", "content": "Sorry to hear that. What is your employee ID?"},
        {"role": "user", "content": "It's u_381."},
        {"role": "assistant", "content": "Created ticket 1 for u_381."},
        {"role": "user", "content": "Thanks!"},
    ]
    assert r.termination == "goal_met" and r.error is None
    t = r.trajectory
    assert [s.kind for s in t.steps] == ["user", "assistant", "user", "tool_call", "tool_result",
                                         "assistant", "user", "final_response"]
    assert [s.index for s in t.steps] == list(range(8))
    assert t.final_response == "Created ticket 1 for u_381."
    assert t.tool_calls()[0].args == {"title": "Laptop won't boot", "priority": "high",
                                      "requester": "u_381"}
    assert t.metadata["state_after"]["tickets"] == [
        {"id": 1, "title": "Laptop won't boot", "priority": "high", "requester": "u_381"}]
    assert t.metadata["state_before"] == {"tickets": []}
    assert (t.metadata["trial"], t.metadata["run_id"], t.metadata["user_turns"]) == (7, "laptop_boot-7", 3)
    assert "terminated" not in t.metadata
    # the user model saw the conversation with roles flipped, and its instructions
    second = user.calls[1]
    assert second[0]["role"] == "system" and "employee_id: u_381" in second[0]["content"]
    assert "Variation seed: 7" in second[0]["content"]
    assert second[1:] == [
        {"role": "assistant", "content": "My laptop won't boot. Please open a ticket."},
        {"role": "user", "content": "Sorry to hear that. What is your employee ID?"}]
    # the result feeds the suite's final-state check
    case = scenario.to_case()
    assert case.metadata["success_criteria"] == ["a ticket was created for u_381"]
    assert run_outcome(t, case).passed is True
    # the ID was given only after the agent asked for it
    rev = unprompted_reveals(r, scenario)
    assert rev.passed is True and rev.score == 1.0 and rev.parts["revealed"] == ["employee_id"]


def test_stops_at_max_turns_across_seeds(scenario: Scenario, tmp_path: Path) -> None:
    sc = Scenario.from_dict({**_dict(scenario), "max_turns": 3})
    user = ScriptedModel(lambda msgs: "It is still broken.")
    calls: list[str] = []

    def stubborn(message: str, tools: Any) -> str:
        calls.append(message)
        return "Looking into it."

    rs = simulate(sc, stubborn, user, seeds=[0, 1], tools=_registry(), base_dir=tmp_path, isolation="inline")
    assert [r.seed for r in rs] == [0, 1]
    for r in rs:
        assert r.termination == "max_turns"
        assert [m["role"] for m in r.conversation] == ["user", "assistant"] * 3
        assert r.trajectory.metadata["terminated"] is False
        assert r.trajectory.metadata["user_turns"] == 3
        assert run_outcome(r.trajectory, sc.to_case()).passed is False
    assert len(calls) == 6 and len(user.calls) == 6
    card = score_runs([(r.trajectory, sc.to_case()) for r in rs])
    assert card.suite.n_runs == 2 and card.suite.n_successes == 0


def test_give_up_opening_and_agent_error(scenario: Scenario, tmp_path: Path) -> None:
    sc = Scenario.from_dict({**_dict(scenario), "opening": "Laptop dead. I am u_381."})
    user = ScriptedModel([f"Forget it. {GIVE_UP_MARKER}"])
    r = simulate_one(sc, lambda m, t: "Which laptop?", user, tools=_registry(), base_dir=tmp_path, isolation="inline")
    assert r.termination == "gave_up"
    assert [m["content"] for m in r.conversation] == ["Laptop dead. I am u_381.", "Which laptop?",
                                                      "Forget it."]
    assert len(user.calls) == 1  # the opening came from the scenario, not the model
    # the opening is the scenario author's text, so revealing there is not flagged
    assert unprompted_reveals(r, sc).passed is True

    def broken(message: str, tools: Any) -> str:
        raise ValueError("model offline")

    r2 = simulate_one(scenario, broken, ScriptedModel(["hello"]), tools=_registry(), base_dir=tmp_path, isolation="inline")
    assert r2.termination == "agent_error" and r2.error == "ValueError: model offline"
    assert r2.trajectory.metadata["terminated"] is False
    with pytest.raises(AgentError, match="seeds"):
        simulate(scenario, agent, ScriptedModel([]), seeds=[], isolation="inline")


def test_unprompted_reveal_flagged(scenario: Scenario, tmp_path: Path) -> None:
    user = ScriptedModel(["Laptop won't boot, my ID is u_381.", STOP_MARKER])
    r = simulate_one(scenario, agent, user, tools=_registry(), base_dir=tmp_path, isolation="inline")
    rev = unprompted_reveals(r, scenario)
    assert rev.passed is False and rev.score == 0.0
    assert rev.parts["flagged"] == [{"fact": "employee_id", "turn": 0, "how": "literal"}]
    assert "employee_id (user turn 0)" in rev.reason


def _dict(s: Scenario) -> dict[str, Any]:
    return {"id": s.id, "goal": s.goal, "persona": s.persona,
            "hidden_facts": [{"name": f.name, "value": f.value} for f in s.hidden_facts],
            "rules": list(s.rules), "success_criteria": list(s.success_criteria),
            "max_turns": s.max_turns, "case": dict(s.case)}


def test_load_scenarios_json_yaml_and_errors(tmp_path: Path) -> None:
    y = tmp_path / "s.yaml"
    y.write_text("scenarios:\n  - id: a\n    goal: reset my password\n    max_turns: 4\n"
                 "    hidden_facts:\n      - {name: employee_id, value: u_1, keywords: [ID]}\n")
    [a] = load_scenarios(y)
    assert a.max_turns == 4 and a.hidden_facts[0].ask_phrases == ("ID",)
    j = tmp_path / "s.json"
    j.write_text(json.dumps([{"id": "b", "goal": "g"}, {"id": "c", "goal": "h", "opening": "hi"}]))
    assert [s.id for s in load_scenarios(j)] == ["b", "c"]
    assert load_scenarios(j)[1].to_case().input == "hi"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "b", "goal": "g"}, {"id": "x", "goal": "g", "max_turns": 0}]))
    with pytest.raises(DatasetError, match=r"bad.json\[1\] 'x': field 'max_turns'"):
        load_scenarios(bad)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps([{"id": "b", "goal": "g"}, {"id": "b", "goal": "g"}]))
    with pytest.raises(DatasetError, match="appears twice"):
        load_scenarios(dup)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(DatasetError, match="not valid json"):
        load_scenarios(broken)
