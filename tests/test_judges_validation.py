"""Judge validation against human labels: accuracy, Cohen's kappa, confusion -- by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.judges import Verdict, VerdictItem, cohen_kappa, judge_agreement

T, F = True, False
# check A: 10 items; check B: items 0-4 (item 4 has no judge label)
JA = [T, T, T, T, T, T, F, F, F, F]
HA = [T, T, T, T, F, F, T, F, F, F]
JB = [T, T, F, F, None]
HB = [T, F, F, F, T]


def _labels() -> tuple[list[dict[str, bool | None]], list[dict[str, bool | None]]]:
    judge = [{"A": a, **({"B": JB[i]} if i < 5 else {})} for i, a in enumerate(JA)]
    human = [{"A": a, **({"B": HB[i]} if i < 5 else {})} for i, a in enumerate(HA)]
    return judge, human


def test_hand_computed_agreement() -> None:
    rep = judge_agreement(*_labels())
    a = rep.per_check["A"]
    # tp=4 fp=2 fn=1 tn=3; accuracy 7/10; p_e = .6*.5 + .4*.5 = .5; kappa = (.7-.5)/.5 = .4
    assert (a.tp, a.fp, a.fn, a.tn, a.n, a.n_skipped) == (4, 2, 1, 3, 10, 0)
    assert a.accuracy == pytest.approx(0.7) and a.kappa == pytest.approx(0.4)
    b = rep.per_check["B"]
    # pairs (T,T) (T,F) (F,F) (F,F), one skipped; acc .75; p_e = .5*.25 + .5*.75 = .5; kappa .5
    assert (b.tp, b.fp, b.fn, b.tn, b.n, b.n_skipped) == (1, 1, 0, 2, 4, 1)
    assert b.accuracy == pytest.approx(0.75) and b.kappa == pytest.approx(0.5)
    o = rep.overall
    # pooled: tp5 fp3 fn1 tn5 over 14; p_o = 10/14, p_e = 96/196; kappa = 44/100
    assert (o.tp, o.fp, o.fn, o.tn, o.n, o.n_skipped) == (5, 3, 1, 5, 14, 1)
    assert o.accuracy == pytest.approx(10 / 14) and o.kappa == pytest.approx(0.44)
    assert rep.to_dict()["per_check"]["A"]["confusion"] == {"tp": 4, "fp": 2, "fn": 1, "tn": 3}


def test_verdicts_as_judge_labels_and_errors_skipped() -> None:
    good = Verdict("trajectory", True, 1.0, (VerdictItem("x", True), VerdictItem("y", None)))
    err = Verdict("trajectory", None, None, (VerdictItem("x", False),), error="timeout")
    rep = judge_agreement([good, err], [{"x": True, "y": False}, {"x": False}])
    assert rep.per_check["x"].n == 1 and rep.per_check["x"].n_skipped == 1
    assert rep.per_check["y"].n == 0 and rep.per_check["y"].accuracy is None
    # plain bools
    rep2 = judge_agreement([True, True, False], [True, False, False])
    assert rep2.overall.accuracy == pytest.approx(2 / 3)
    # p_o = 2/3, p_e = 2/3*1/3 + 1/3*2/3 = 4/9 -> kappa = (6/9-4/9)/(5/9) = 0.4
    assert rep2.overall.kappa == pytest.approx(0.4)


def test_undefined_kappa_and_bad_input() -> None:
    assert cohen_kappa([(True, True)] * 5) is None  # p_e = 1
    assert cohen_kappa([]) is None
    assert judge_agreement([True] * 3, [True] * 3).overall.accuracy == 1.0
    with pytest.raises(MetricInputError, match="3 items but human_labels has 2"):
        judge_agreement([True] * 3, [True] * 2)
    with pytest.raises(MetricInputError, match="no labels"):
        judge_agreement([], [])
    with pytest.raises(MetricInputError, match="check 'a'"):
        judge_agreement([{"a": "yes"}], [{"a": True}])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=30))
def test_kappa_matches_brute_force_definition(pairs: list[tuple[bool, bool]]) -> None:
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    # chance agreement from the 2x2 table's marginals, category by category
    pe = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n)
             for c in (True, False))
    k = cohen_kappa(pairs)
    if pe == 1:
        assert k is None
    else:
        assert k == pytest.approx((po - pe) / (1 - pe))
        assert -1.0 - 1e-12 <= k <= 1.0 + 1e-12
