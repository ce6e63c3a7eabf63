"""Tests for trajcheck.metrics.routing: the 100-query worked example, hand-computed
per-class figures, multi-label routing, misroute cost, recall-floor gates, bad input."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.metrics.routing import (
    accuracy,
    confusion_matrix,
    macro_f1,
    misroute_cost,
    multilabel_routing,
    recall_floor_gate,
    routing_metrics,
)

LABELS = ["docs", "sql", "action", "out_of_scope"]
# rows = true route, columns = predicted route, in LABELS order
MATRIX = [[38, 4, 0, 0],
          [6, 24, 0, 0],
          [1, 0, 17, 0],
          [3, 0, 0, 7]]


def _expand(matrix=MATRIX, labels=LABELS):
    y_true, y_pred = [], []
    for i, row in enumerate(matrix):
        for j, n in enumerate(row):
            y_true += [labels[i]] * n
            y_pred += [labels[j]] * n
    rng = random.Random(4)
    pairs = list(zip(y_true, y_pred))
    rng.shuffle(pairs)  # order must not matter
    return [t for t, _ in pairs], [p for _, p in pairs]


def test_100_query_worked_example():
    y_true, y_pred = _expand()
    assert len(y_true) == 100
    cm = confusion_matrix(y_true, y_pred, labels=LABELS)
    assert [list(r) for r in cm.matrix] == MATRIX
    assert cm.count("out_of_scope", "docs") == 3
    r = routing_metrics(y_true, y_pred, labels=LABELS)
    assert r.accuracy == pytest.approx(0.86)  # (38 + 24 + 17 + 7) / 100
    assert r.score == r.accuracy == accuracy(y_true, y_pred)
    pc = r.per_class
    assert pc is not None
    assert pc["out_of_scope"].recall == pytest.approx(0.70)  # 7 / 10
    assert pc["sql"].recall == pytest.approx(0.80)  # 24 / 30
    # By hand (column sums: docs 48, sql 28, action 17, out_of_scope 7):
    #   docs:  P = 38/48 = 0.79167, R = 38/42 = 0.90476, F1 = 76/90 = 0.84444
    #   sql:   P = 24/28 = 0.85714, R = 24/30 = 0.8,     F1 = 48/58 = 0.82759
    #   action P = 17/17 = 1,       R = 17/18 = 0.94444, F1 = 34/35 = 0.97143
    #   oos:   P = 7/7   = 1,       R = 7/10  = 0.7,     F1 = 14/17 = 0.82353
    #   macro-F1 = (76/90 + 48/58 + 34/35 + 14/17) / 4 = 3.466989 / 4 = 0.866747
    #   macro-P  = (38/48 + 24/28 + 1 + 1) / 4 = 0.91220; macro-R = 0.83730
    expected = {"docs": (38 / 48, 38 / 42, 76 / 90, 42), "sql": (24 / 28, 0.8, 48 / 58, 30),
                "action": (1.0, 17 / 18, 34 / 35, 18), "out_of_scope": (1.0, 0.7, 14 / 17, 10)}
    for lab, (p, rc, f1, sup) in expected.items():
        s = pc[lab]
        assert (s.precision, s.recall, s.f1) == pytest.approx((p, rc, f1)), lab
        assert s.support == sup
    assert r.macro_f1 == pytest.approx((76 / 90 + 48 / 58 + 34 / 35 + 14 / 17) / 4)
    assert round(r.macro_f1, 4) == 0.8667
    assert r.macro_precision == pytest.approx((38 / 48 + 24 / 28 + 2) / 4)
    assert r.macro_recall == pytest.approx((38 / 42 + 0.8 + 17 / 18 + 0.7) / 4)
    assert macro_f1(y_true, y_pred) == pytest.approx(r.macro_f1)
    assert "'out_of_scope' 0.7000" in r.reason
    d = r.to_dict()
    assert d["per_class"]["sql"]["recall"] == pytest.approx(0.8)
    assert d["confusion"]["matrix"] == MATRIX


def test_against_sklearn_if_installed():
    skm = pytest.importorskip("sklearn.metrics")
    rng = random.Random(9)
    for _ in range(30):
        labs = ["a", "b", "c", "d"][: rng.randint(2, 4)]
        n = rng.randint(1, 40)
        yt = [rng.choice(labs) for _ in range(n)]
        yp = [rng.choice(labs) for _ in range(n)]
        r = routing_metrics(yt, yp, labels=labs)
        assert [list(x) for x in confusion_matrix(yt, yp, labs).matrix] == \
            skm.confusion_matrix(yt, yp, labels=labs).tolist()
        assert r.macro_f1 == pytest.approx(
            skm.f1_score(yt, yp, labels=labs, average="macro", zero_division=0))
        assert r.accuracy == pytest.approx(skm.accuracy_score(yt, yp))


def test_zero_division_is_zero_and_default_label_order():
    # 'c' never true and never predicted (given in labels): all zeros; 'b' never predicted
    r = routing_metrics(["a", "b", "a"], ["a", "a", "a"], labels=["a", "b", "c"])
    pc = r.per_class
    assert pc is not None
    assert (pc["b"].precision, pc["b"].recall, pc["b"].f1) == (0.0, 0.0, 0.0)
    assert (pc["c"].precision, pc["c"].recall, pc["c"].f1, pc["c"].support) == (0, 0, 0, 0)
    assert pc["a"].precision == pytest.approx(2 / 3) and pc["a"].recall == 1.0
    assert r.macro_f1 == pytest.approx((0.8 + 0 + 0) / 3)  # F1(a) = 4 / 5
    assert confusion_matrix(["z", "b"], ["a", "b"]).labels == ("a", "b", "z")
    assert confusion_matrix([2, "x"], ["x", 2]).labels == (2, "x")  # unsortable: first seen


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1))
def test_properties(pairs):
    yt = [t for t, _ in pairs]
    yp = [p for _, p in pairs]
    r = routing_metrics(yt, yp)
    cm = r.confusion
    assert cm is not None
    assert sum(map(sum, cm.matrix)) == len(pairs)
    assert r.accuracy == pytest.approx(sum(t == p for t, p in pairs) / len(pairs))
    for s in (r.per_class or {}).values():
        assert 0 <= s.f1 <= 1 and min(s.precision, s.recall) <= s.f1 + 1e-12
        assert s.f1 <= max(s.precision, s.recall) + 1e-12


def test_bad_input():
    with pytest.raises(MetricInputError, match="different lengths: 3 vs 2"):
        routing_metrics(["a", "b", "c"], ["a", "b"])
    with pytest.raises(MetricInputError, match="different lengths"):
        confusion_matrix(["a"], [])
    with pytest.raises(MetricInputError, match="different lengths"):
        accuracy(["a"], ["a", "b"])
    with pytest.raises(MetricInputError, match="empty"):
        routing_metrics([], [])
    with pytest.raises(MetricInputError, match=r"y_pred\[1\] = 'zzz' is not one of labels"):
        routing_metrics(["a", "b"], ["a", "zzz"], labels=["a", "b"])
    with pytest.raises(MetricInputError, match="duplicates"):
        confusion_matrix(["a"], ["a"], labels=["a", "a"])
    with pytest.raises(MetricInputError, match="sequence"):
        routing_metrics("abc", "abc")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Multi-label routing
# --------------------------------------------------------------------------------------------


def test_multilabel_compound_prompts_by_hand():
    y_true = [{"docs", "sql"}, {"action"}, {"docs"}, {"sql", "action"}, set()]
    y_pred = [{"docs", "sql"}, {"action", "docs"}, {"sql"}, {"sql"}, set()]
    r = multilabel_routing(y_true, y_pred)
    # exact sets: queries 0 and 4 -> 2/5
    assert r.exact_set_accuracy == pytest.approx(0.4) and r.score == r.exact_set_accuracy
    # Jaccard: 1, 1/2, 0, 1/2, 1 (two empty sets agree) -> 3/5
    assert r.jaccard == pytest.approx(0.6)
    pl = r.per_label
    assert pl is not None
    # docs: tp 1 (q0), fp 1 (q1), fn 1 (q2) -> P 1/2, R 1/2, F1 1/2
    assert (pl["docs"].precision, pl["docs"].recall, pl["docs"].f1) == pytest.approx((.5, .5, .5))
    # sql: tp 2 (q0, q3), fp 1 (q2), fn 0 -> P 2/3, R 1, F1 4/5
    assert (pl["sql"].precision, pl["sql"].recall, pl["sql"].f1) == pytest.approx((2 / 3, 1, .8))
    # action: tp 1 (q1), fp 0, fn 1 (q3) -> P 1, R 1/2, F1 2/3
    assert (pl["action"].precision, pl["action"].recall) == pytest.approx((1.0, 0.5))
    assert pl["action"].f1 == pytest.approx(2 / 3)
    # micro: tp 4, fp 2, fn 2 -> P = R = F1 = 2/3; macro-F1 = (1/2 + 4/5 + 2/3) / 3
    assert (r.micro_precision, r.micro_recall, r.micro_f1) == pytest.approx((2 / 3,) * 3)
    assert r.macro_f1 == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)
    # Hamming loss: (fp + fn) / (5 queries x 3 labels) = 4 / 15
    assert r.hamming_loss == pytest.approx(4 / 15)
    assert r.to_dict()["per_label"]["sql"]["f1"] == pytest.approx(0.8)


def test_multilabel_bad_input():
    with pytest.raises(MetricInputError, match="different lengths"):
        multilabel_routing([{"a"}], [{"a"}, {"b"}])
    with pytest.raises(MetricInputError, match=r"y_true\[0\] must be a set/list"):
        multilabel_routing(["docs"], [{"docs"}])
    with pytest.raises(MetricInputError, match=r"y_pred\[0\] has routes"):
        multilabel_routing([{"a"}], [{"a", "q"}], labels=["a"])


# --------------------------------------------------------------------------------------------
# Misroute cost and recall floors
# --------------------------------------------------------------------------------------------


def test_risk_weighted_misroute_cost():
    y_true, y_pred = _expand()
    cost = {("out_of_scope", "docs"): 10.0,  # answering what we should refuse: costly
            "docs": {"sql": 1.0, "action": 5.0}, ("sql", "docs"): 1.0,
            ("action", "docs"): 2.0}
    r = misroute_cost(y_true, y_pred, cost)
    # 3 x 10 + 4 x 1 + 6 x 1 + 1 x 2 = 42 over 100 queries, 14 misrouted
    assert r.total_cost == pytest.approx(42.0) and r.mean_cost == pytest.approx(0.42)
    assert r.n_misrouted == 14 and r.score is None
    assert r.by_pair == {"out_of_scope -> docs": 30.0, "docs -> sql": 4.0, "sql -> docs": 6.0,
                         "action -> docs": 2.0}
    # a missing pair is an error unless a default is given
    with pytest.raises(MetricInputError, match="no cost for misroute 'out_of_scope' -> 'docs'"):
        misroute_cost(y_true, y_pred, {("sql", "docs"): 1.0, "docs": {"sql": 1.0},
                                       ("action", "docs"): 1.0})
    d = misroute_cost(y_true, y_pred, {}, default_cost=1.0)
    assert d.total_cost == 14.0
    with pytest.raises(MetricInputError, match="finite number >= 0"):
        misroute_cost(["a"], ["b"], {("a", "b"): float("nan")})
    with pytest.raises(MetricInputError, match="different lengths"):
        misroute_cost(["a"], [], {})


def test_recall_floor_gate():
    y_true, y_pred = _expand()
    g = recall_floor_gate(y_true, y_pred, {"out_of_scope": 0.9, "sql": 0.8, "action": 0.9})
    assert g.passed is False and g.score == 0.0
    assert g.failed == {"out_of_scope": (pytest.approx(0.7), 0.9)}
    assert g.recalls is not None and g.recalls["sql"] == pytest.approx(0.8)  # 0.8 >= 0.8 passes
    ok = recall_floor_gate(y_true, y_pred, {"out_of_scope": 0.7, "docs": 0.9})
    assert ok.passed is True and ok.score == 1.0 and ok.failed == {}
    # a floored class with no examples fails: no evidence
    none = recall_floor_gate(["a", "b"], ["a", "b"], {"c": 0.5})
    assert none.passed is False and none.failed == {"c": (None, 0.5)}
    assert "'c' has no examples" in none.reason
    with pytest.raises(MetricInputError, match="floor for 'a'"):
        recall_floor_gate(["a"], ["a"], {"a": 1.5})
    with pytest.raises(MetricInputError, match="no floors"):
        recall_floor_gate(["a"], ["a"], {})
    with pytest.raises(MetricInputError, match="different lengths"):
        recall_floor_gate(["a"], ["a", "a"], {"a": 0.5})


def test_multilabel_against_sklearn_if_installed():
    skm = pytest.importorskip("sklearn.metrics")
    pre = pytest.importorskip("sklearn.preprocessing")
    rng = random.Random(13)
    labs = ["docs", "sql", "action"]
    for _ in range(20):
        n = rng.randint(1, 15)
        # non-empty sets: sklearn's zero_division convention differs only for two empty sets
        yt = [set(rng.sample(labs, rng.randint(1, 3))) for _ in range(n)]
        yp = [set(rng.sample(labs, rng.randint(1, 3))) for _ in range(n)]
        mlb = pre.MultiLabelBinarizer(classes=labs)
        T, P = mlb.fit_transform(yt), mlb.transform(yp)
        r = multilabel_routing(yt, yp, labels=labs)
        assert r.exact_set_accuracy == pytest.approx(skm.accuracy_score(T, P))
        assert r.jaccard == pytest.approx(skm.jaccard_score(T, P, average="samples"))
        assert r.hamming_loss == pytest.approx(skm.hamming_loss(T, P))
        assert r.micro_f1 == pytest.approx(skm.f1_score(T, P, average="micro", zero_division=0))
        assert r.macro_f1 == pytest.approx(skm.f1_score(T, P, average="macro", zero_division=0))
