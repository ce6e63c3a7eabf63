"""Values that look like IDs, numbers or dates never pass a semantic matcher on similarity."""

from __future__ import annotations

from trajcheck.match.matchers import MatchContext, get_matcher


def test_ids_numbers_dates_need_equality_not_similarity() -> None:
    calls: list[tuple[str, str]] = []

    def near(a: str, b: str) -> float:  # a scorer that finds everything similar
        calls.append((a, b))
        return 0.99

    ctx = MatchContext(semantic_scorer=near)
    m = get_matcher({"type": "semantic"})
    # the measured false matches at 0.75 (0.946, 0.914, 0.997 with all-MiniLM-L6-v2)
    for exp, pred in (("a.rao", "b.rao"), ("1234", "1243"), ("2026-07-18", "2026-07-19"),
                      (1234, 1243), ("INC-7", "INC-8")):
        assert m(exp, pred, ctx) is False
    assert calls == []  # decided without the scorer
    assert m("INC-7", " inc-7 ", ctx) is True and m(1234, 1234, ctx) is True
    assert m("laptop won't boot", "laptop does not start", ctx) is True
    assert calls == [("laptop won't boot", "laptop does not start")]
    # one ID-like side is enough: free text never passes for an ID
    assert m("INC-7", "the ticket I opened", ctx) is False
