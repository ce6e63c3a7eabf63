"""trajcheck's promptfoo test scoring function (``promptfoo_provider/scoring.py``) on the
shapes promptfoo 0.123.1 hands it: flattened componentResults, weights, an assert-set, a test
threshold. The real CLI run is in tests/test_promptfoo_hosts.py (refund desk)."""

from __future__ import annotations

import pytest

from promptfoo_provider.scoring import score_test

NA = {"trajcheck": {"not_applicable": True}}


def _r(metric, score, passed=True, *, na=False, weight=None, typ="python", cfg=None):
    a = {"type": typ, "value": "file://trajcheck_assert.py", "metric": metric, "config": cfg or {"metric": metric}}
    if weight is not None:
        a["weight"] = weight
    out = {"pass": passed, "score": score, "reason": f"{metric} reason", "assertion": a}
    if na:
        out["metadata"] = NA
    return out


def test_not_applicable_left_out_of_score_pass_and_named_scores():
    f1, rec, dup = _r("f1", 0.5, False), _r("recovery", 1.0, na=True), _r("dup", 0.75, weight=3)
    # promptfoo flattens a negated trajcheck assertion's own component after it (same assertion)
    neg = _r("no_delete", 1.0, typ="not-python")
    neg_sub = {"pass": True, "score": 1.0, "reason": "kept reason", "assertion": neg["assertion"]}
    named = {"f1": 0.5, "recovery": 1.0, "dup": 0.75, "dup.rate": 0.25, "no_delete": 1.0}
    got = score_test(named, {"componentResults": [f1, rec, dup, neg, neg_sub], "threshold": None})
    # (0.5 + 3 * 0.75 + 1.0) / (1 + 3 + 1): recovery and the flattened sub-result not counted
    assert got["score"] == pytest.approx(3.75 / 5)
    assert got["pass"] is False and got["reason"].startswith("f1 reason")
    assert "1 not-applicable trajcheck assertion(s) not counted" in got["reason"]
    assert got["namedScores"] == {"f1": 0.5, "dup": 0.75, "dup.rate": 0.25, "no_delete": 1.0}


def test_threshold_decides_and_shared_label_keeps_the_counted_mean():
    a, b = _r("order", 0.6), _r("order", 1.0, na=True, cfg={"metric": "ordering_accuracy", "x": 1})
    got = score_test({"order": 0.8}, {"componentResults": [a, b], "threshold": 0.7})
    assert (got["pass"], got["score"]) == (False, pytest.approx(0.6))
    assert got["reason"].startswith("Aggregate score 0.60 < 0.7 threshold")
    assert got["namedScores"] == {"order": pytest.approx(0.6)}  # promptfoo's 0.8 averaged the 1 in


def test_every_assertion_not_applicable_and_an_assert_set_counted_once():
    only = score_test({"r": 1.0}, {"componentResults": [_r("r", 1.0, na=True)]})
    assert (only["pass"], only["score"], only["namedScores"]) == (True, 1.0, {})
    m1, m2 = _r("m1", 1.0), _r("m2", 0.0, False)
    s = {"pass": False, "score": 0.5, "reason": "set", "assertion": {"type": "assert-set",
                                                                      "assert": [m1["assertion"], m2["assertion"]]}}
    got = score_test({}, {"componentResults": [s, m1, m2, _r("f1", 1.0)]})
    assert got["score"] == pytest.approx((0.5 + 1.0) / 2) and got["pass"] is False
