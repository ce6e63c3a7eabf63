"""Tests for trajcheck.metrics.reliability: pass^k / pass@k on published tau-bench and
tau2-bench figures, worked examples, brute force, intervals, bootstrap coverage, paired tests."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError, TrajcheckError
from trajcheck.metrics.reliability import (
    BootstrapCI,
    PairedComparison,
    binomial_two_sided_p,
    bootstrap_ci,
    normal_quantile,
    paired_compare,
    pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
    pass_hat_k_curve,
    percentile,
    rule_of_three,
    success_rate,
    wilson_interval,
)

DATA = Path(__file__).parent / "data"

# realdata.md §1.3: successes (of 4 trials) of GPT-4o on tau-bench airline tasks 0..49.
GPT4O_AIRLINE = "01100111000142021140430040220122003443413241222144"


def _hist_to_pairs(hist: list[int], n: int = 4) -> list[tuple[int, int]]:
    """A histogram [m_0, ..., m_n] (tasks with c successes) -> one (c, n) pair per task."""
    return [(c, n) for c, m in enumerate(hist) for _ in range(m)]


# --------------------------------------------------------------------------------------------
# Published numbers
# --------------------------------------------------------------------------------------------


def test_gpt4o_airline_published_pass_hat_k_and_pass_at_k():
    results = {f"task{i}": (int(ch), 4) for i, ch in enumerate(GPT4O_AIRLINE)}
    # tau-bench README "TC (gpt-4o)" airline: 0.420, 0.273, 0.220, 0.200; pass^2 = 41/150.
    assert [pass_hat_k(results, k) for k in (1, 2, 3, 4)] == pytest.approx(
        [0.42, 41 / 150, 0.22, 0.20], abs=1e-12)
    assert round(pass_hat_k(results, 2), 4) == 0.2733
    # unbiased pass@k (Chen et al.): 0.42, 0.5667 (= 85/150), 0.66, 0.72 (= 36/50)
    assert [pass_at_k(results, k) for k in (1, 2, 3, 4)] == pytest.approx(
        [0.42, 85 / 150, 0.66, 0.72], abs=1e-12)
    assert pass_hat_k_curve(results) == pytest.approx(
        {1: 0.42, 2: 41 / 150, 3: 0.22, 4: 0.2}, abs=1e-12)
    assert pass_at_k_curve(results, [2, 4]) == pytest.approx({2: 85 / 150, 4: 0.72}, abs=1e-12)


def test_gpt4o_airline_from_the_200_recorded_runs():
    """Derive per-trial outcomes from the rewards in the real trajectories file (success =
    reward within 1e-6 of 1, tau2-bench's rule) and reproduce the published row."""
    path = DATA / "tau_bench" / "gpt-4o-airline.json"
    if not path.exists():  # copied into tests/data by the traces tests; guard a partial clone
        pytest.skip("tests/data/tau_bench/gpt-4o-airline.json not present")
    runs = json.loads(path.read_text())
    assert len(runs) == 200
    trials: dict[int, list[bool]] = {}
    for r in sorted(runs, key=lambda r: (r["task_id"], r["trial"])):
        trials.setdefault(r["task_id"], []).append(abs(r["reward"] - 1.0) < 1e-6)
    assert sorted(trials) == list(range(50)) and all(len(v) == 4 for v in trials.values())
    assert "".join(str(sum(trials[t])) for t in range(50)) == GPT4O_AIRLINE
    assert [round(pass_hat_k(trials, k), 4) for k in (1, 2, 3, 4)] == [0.42, 0.2733, 0.22, 0.2]
    assert [round(pass_at_k(trials, k), 4) for k in (1, 2, 3, 4)] == [0.42, 0.5667, 0.66, 0.72]


def _decimals(x: float) -> int:
    s = repr(float(x))
    return len(s.split(".")[1]) if "." in s and "e" not in s else 0


def test_tau_bench_readme_rows_reproduced_from_histograms():
    doc = json.loads((DATA / "tau_bench" / "readme_passk.json").read_text())
    checked = 0
    for domain, rows in doc["reconstructed_success_histograms_n4"].items():
        for agent, row in rows.items():
            hist = [row["tasks_with_c_successes"][str(c)] for c in range(5)]
            assert sum(hist) == row["n_tasks"]
            pairs = _hist_to_pairs(hist, row["n_trials"])
            ours = [pass_hat_k(pairs, k) for k in (1, 2, 3, 4)]
            # the 6-decimal exact values in the file
            assert ours == pytest.approx(row["exact_passk"], abs=5e-7), (domain, agent)
            # the published README row, rounded to 3 decimals
            published = doc[domain][agent]
            assert [round(v, 3) for v in ours] == pytest.approx(published, abs=1e-12), agent
            checked += 1
    assert checked == 5  # airline gpt-4o, gpt-4o-mini, Act, ReAct; retail gpt-4o


def test_tau2_leaderboard_rows_reproduced_from_histograms():
    rows = json.loads((DATA / "tau2" / "leaderboard_passk_inversion.json").read_text())
    checked = 0
    for row in rows:
        hist = row["tasks_with_c_successes_c0_to_c4"]
        if hist is None:  # the tau2 paper rows: no histogram fits (rounded figures)
            continue
        assert sum(hist) == row["n_tasks_assumed"]
        pairs = _hist_to_pairs(hist, row["n_trials_assumed"])
        for k, pub in zip((1, 2, 3, 4), row["published_pass_1_to_4_percent"]):
            ours = 100 * pass_hat_k(pairs, k)
            tol = 0.5 * 10 ** -_decimals(pub) + 1e-9  # half a unit in the last published digit
            assert abs(ours - pub) <= tol, (row["model"], row["domain"], k, ours, pub)
        checked += 1
    assert checked == 60


def test_gpt5_airline_tau2_example():
    # realdata.md §2: GPT-5 airline [13,3,4,6,24] -> 62.5 / 55.33 / 51 / 48
    pairs = _hist_to_pairs([13, 3, 4, 6, 24])
    assert [100 * pass_hat_k(pairs, k) for k in (1, 2, 3, 4)] == pytest.approx(
        [62.5, 55.333333, 51.0, 48.0], abs=1e-5)


# --------------------------------------------------------------------------------------------
# Worked examples and brute force
# --------------------------------------------------------------------------------------------


def test_worked_example_three_tasks():
    # tasks with 4/4, 3/4 and 2/4 successes, given as (c, n) as in seed 000 §4.3
    r = [(4, 4), (3, 4), (2, 4)]
    assert pass_hat_k(r, 1) == pytest.approx(0.75)  # (1 + 3/4 + 2/4) / 3
    assert pass_hat_k(r, 4) == pytest.approx(1 / 3)  # (1 + 0 + 0) / 3
    assert round(pass_hat_k(r, 4), 4) == 0.3333
    # pass@2 = 1 - C(n-c,2)/C(4,2): (1 + 1 + (1 - 1/6)) / 3 = 17/18
    assert pass_at_k(r, 2) == pytest.approx(17 / 18)
    assert round(pass_at_k(r, 2), 4) == 0.9444
    # the same from bool trial lists
    bools = {"a": [True] * 4, "b": [True, False, True, True], "c": [False, True, False, True]}
    assert pass_hat_k(bools, 4) == pytest.approx(1 / 3)
    assert pass_at_k(bools, 2) == pytest.approx(17 / 18)


def _brute(trials: list[list[bool]], k: int) -> tuple[float, float]:
    at = hat = 0.0
    for t in trials:
        subsets = list(itertools.combinations(range(len(t)), k))
        at += sum(any(t[i] for i in s) for s in subsets) / len(subsets)
        hat += sum(all(t[i] for i in s) for s in subsets) / len(subsets)
    return at / len(trials), hat / len(trials)


def test_brute_force_k_subsets_on_random_instances():
    rng = random.Random(7)
    for _ in range(200):
        n_tasks = rng.randint(1, 6)
        n = rng.randint(1, 7)
        trials = [[rng.random() < rng.random() for _ in range(n)] for _ in range(n_tasks)]
        for k in range(1, n + 1):
            at, hat = _brute(trials, k)
            assert pass_at_k(trials, k) == pytest.approx(at, abs=1e-12)
            assert pass_hat_k(trials, k) == pytest.approx(hat, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=3, max_size=6), min_size=1, max_size=5))
def test_property_monotone_and_bounded(trials):
    kmax = min(len(t) for t in trials)
    hats = [pass_hat_k(trials, k) for k in range(1, kmax + 1)]
    ats = [pass_at_k(trials, k) for k in range(1, kmax + 1)]
    assert hats[0] == pytest.approx(ats[0])  # pass^1 == pass@1 == mean rate
    assert all(0.0 <= h <= a <= 1.0 for h, a in zip(hats, ats))
    assert all(x >= y - 1e-15 for x, y in zip(hats, hats[1:]))
    assert all(x <= y + 1e-15 for x, y in zip(ats, ats[1:]))


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_n_less_than_k_names_the_task():
    r = {"t1": (2, 4), "t2": (1, 2)}
    with pytest.raises(MetricInputError, match=r"'t2' \(n=2\)"):
        pass_hat_k(r, 3)
    with pytest.raises(MetricInputError, match="'t2'"):
        pass_at_k(r, 3)
    with pytest.raises(MetricInputError, match="'t2'"):
        pass_hat_k_curve(r, [1, 2, 3])


@pytest.mark.parametrize("bad, match", [
    ({}, "empty suite"),
    ([], "empty suite"),
    ({"x": []}, "'x': no trials"),
    ({"x": (5, 4)}, r"'x': \(c, n\) = \(5, 4\): c = 5 successes is more than n = 4 trials; "
                    r"pairs are \(successes, trials\), successes first"),
    ({"x": (-1, 4)}, r"'x': \(c, n\) = \(-1, 4\): c = -1 successes is negative"),
    ({"x": (0, 0)}, r"'x': \(c, n\) = \(0, 0\): n = 0"),
    ({"x": [True, 1, False]}, "'x', trial 1: trial outcomes must be bool"),
    ({"x": "TTF"}, "'x'"),
    ({"x": 3}, "'x'"),
])
def test_bad_suites(bad, match):
    with pytest.raises(MetricInputError, match=match):
        pass_hat_k(bad, 1)


def test_bad_k_and_error_hierarchy():
    for k in (0, -1, 1.0, True):
        with pytest.raises(MetricInputError, match="k must be"):
            pass_at_k([(1, 4)], k)
    assert issubclass(MetricInputError, TrajcheckError)


def test_two_int_pair_is_counts_not_trials():
    # [1, 0] is (c=1, n=0): n must be >= 1; two trial outcomes must be bools
    with pytest.raises(MetricInputError, match="n = 0"):
        pass_hat_k([[1, 0]], 1)
    assert pass_hat_k([[0, 1]], 1) == 0.0  # (c=0, n=1)
    assert pass_hat_k([[True, False]], 1) == 0.5


# --------------------------------------------------------------------------------------------
# Normal quantile, Wilson, rule of three
# --------------------------------------------------------------------------------------------


def test_normal_quantile_against_stdlib():
    nd = statistics.NormalDist()
    ps = [1e-300, 1e-50, 1e-12, 1e-6, 0.001, 0.01, 0.02425, 0.025, 0.05, 0.1, 0.25, 0.5,
          0.6, 0.9, 0.95, 0.975, 0.99, 0.995, 1 - 1e-6, 1 - 1e-12]
    ps += [random.Random(3).random() for _ in range(500)]
    for p in ps:
        assert abs(normal_quantile(p) - nd.inv_cdf(p)) < 1e-9 * max(1.0, abs(nd.inv_cdf(p)))
    assert round(normal_quantile(0.975), 6) == 1.959964
    for bad in (0.0, 1.0, -0.1, 2, float("nan")):
        with pytest.raises(MetricInputError):
            normal_quantile(bad)


def test_wilson_known_values():
    lo, hi = wilson_interval(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    # hand formula with z = 1.959964: p=0.5, n=100 -> 0.5 -+ 0.0962 ... (0.4038, 0.5962)
    lo, hi = wilson_interval(50, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)
    # 0/10: lower bound exactly 0, upper z^2/(n+z^2) = 3.8415/13.8415 = 0.2775
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and round(lo, 4) == 0.7225
    # 90%: z = 1.644854
    lo, hi = wilson_interval(8, 10, 0.90)
    z = 1.6448536269514722
    c = (0.8 + z * z / 20) / (1 + z * z / 10)
    h = z / (1 + z * z / 10) * math.sqrt(0.8 * 0.2 / 10 + z * z / 400)
    assert (lo, hi) == pytest.approx((c - h, c + h), abs=1e-12)


def test_wilson_bad_input():
    for args in [(1, 0), (11, 10), (-1, 10), (1.5, 10), (5, 10, 1.0), (5, 10, 0)]:
        with pytest.raises(MetricInputError):
            wilson_interval(*args)


def test_rule_of_three_and_success_rate():
    assert rule_of_three(30) == pytest.approx(0.1)
    assert rule_of_three(300) == pytest.approx(0.01)
    with pytest.raises(MetricInputError):
        rule_of_three(0)
    r = success_rate(50, 50)
    assert r.score == 1.0 and r.failure_rate_upper == pytest.approx(3 / 50)
    assert r.success_rate_upper is None and "rule of three" in r.reason
    assert (r.lo, r.hi) == wilson_interval(50, 50)
    z = success_rate(0, 20)
    assert z.success_rate_upper == pytest.approx(0.15) and z.failure_rate_upper is None
    mid = success_rate(7, 20)
    assert mid.failure_rate_upper is None and mid.success_rate_upper is None
    assert mid.to_dict()["rate"] == 0.35


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def test_percentile_matches_numpy_linear_definition():
    xs = [1.0, 2.0, 4.0, 7.0]
    # h = 3q: q=0.5 -> 1.5 -> 2 + 0.5*2 = 3; q=0.95 -> 2.85 -> 4 + 0.85*3 = 6.55
    assert percentile(xs, 0.5) == 3.0
    assert percentile(xs, 0.95) == pytest.approx(6.55)
    assert percentile(xs, 0.0) == 1.0 and percentile(xs, 1.0) == 7.0


def test_bootstrap_is_seeded_and_over_tasks():
    rng = random.Random(11)
    tasks = {f"t{i}": [rng.random() < i / 30 for _ in range(5)] for i in range(30)}
    a = bootstrap_ci(tasks, n_boot=300, seed=5)
    b = bootstrap_ci(tasks, n_boot=300, seed=5)
    seeds = {(bootstrap_ci(tasks, n_boot=300, seed=s).lo, bootstrap_ci(tasks, n_boot=300,
                                                                    seed=s).hi)
             for s in range(5)}
    assert isinstance(a, BootstrapCI) and a == b and len(seeds) > 1
    assert a.estimate == pytest.approx(pass_hat_k(tasks, 1))
    assert a.lo <= a.estimate <= a.hi and a.n_units == 30
    # a custom statistic receives resampled task values
    p2 = bootstrap_ci(tasks, lambda r: pass_hat_k(r, 2), n_boot=200, seed=1)
    assert p2.estimate == pytest.approx(pass_hat_k(tasks, 2)) and p2.lo <= p2.estimate <= p2.hi
    # a constant suite has a degenerate interval
    const = bootstrap_ci([0.5] * 10, n_boot=100)
    assert (const.lo, const.hi) == (0.5, 0.5)


def test_bootstrap_bad_input():
    with pytest.raises(MetricInputError, match="empty"):
        bootstrap_ci([])
    with pytest.raises(MetricInputError, match="not finite"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(MetricInputError, match="n_boot"):
        bootstrap_ci([0.1, 0.2], n_boot=0)
    with pytest.raises(MetricInputError, match="'bad'"):
        bootstrap_ci({"ok": [True], "bad": [1, 2, 3]})


def test_bootstrap_coverage_near_nominal():
    """400 simulated suites of 50 tasks x 4 trials, task difficulty p ~ U(0, 1), so the true
    pass^1 is 0.5; the 95% percentile bootstrap interval (1000 resamples) must cover 0.5 in
    93-97% of suites."""
    rng = random.Random(0)
    covered = 0
    for s in range(400):
        suite = {}
        for i in range(50):
            p = rng.random()
            suite[i] = [rng.random() < p for _ in range(4)]
        ci = bootstrap_ci(suite, n_boot=1000, seed=s)
        covered += ci.lo <= 0.5 <= ci.hi
    assert 0.93 <= covered / 400 <= 0.97, covered


# --------------------------------------------------------------------------------------------
# Paired comparison
# --------------------------------------------------------------------------------------------


def test_binomial_sign_test_exact():
    # 1 vs 9 discordant: 2 * (1 + 10) / 1024 = 0.021484375
    assert binomial_two_sided_p(1, 10) == pytest.approx(22 / 1024)
    assert binomial_two_sided_p(9, 10) == pytest.approx(22 / 1024)
    assert binomial_two_sided_p(5, 10) == 1.0
    assert binomial_two_sided_p(0, 0) == 1.0
    assert binomial_two_sided_p(0, 6) == pytest.approx(2 / 64)


def test_paired_compare_per_run():
    a = {"t1": [True, True, True, True], "t2": [True, False, True, True],
         "t3": [False, False, True, False]}
    b = {"t1": [True, False, False, True], "t2": [False, False, True, False],
         "t3": [False, False, False, False]}
    r = paired_compare(a, b, n_boot=500, seed=0)
    assert isinstance(r, PairedComparison) and r.test_unit == "run"
    # discordant runs: t1 trials 1,2; t2 trials 0,3; t3 trial 2 -> all A-only
    assert (r.a_only, r.b_only) == (5, 0)
    assert r.p_value == pytest.approx(2 / 32)
    # per-task diffs 0.5, 0.5, 0.25 -> mean 5/12
    assert r.diff == pytest.approx(5 / 12)
    assert r.mean_a == pytest.approx(2 / 3) and r.mean_b == pytest.approx(0.25)
    assert r.lo <= r.diff <= r.hi and r.lo >= 0.25 and r.hi <= 0.5
    assert r.score is None and r.to_dict()["p_value"] == r.p_value


def test_paired_compare_per_task_with_counts():
    a = [(4, 4), (3, 4), (2, 4), (2, 4)]
    b = [(2, 4), (3, 4), (3, 4), (0, 4)]
    r = paired_compare(a, b, n_boot=200)
    assert r.test_unit == "task" and (r.a_only, r.b_only) == (2, 1)
    assert r.p_value == 1.0
    assert r.diff == pytest.approx((0.5 + 0 - 0.25 + 0.5) / 4)


def test_paired_compare_missing_tasks_named():
    with pytest.raises(MetricInputError, match=r"missing from B: 'x'.*missing from A: 'y'"):
        paired_compare({"x": [True], "z": [False]}, {"z": [True], "y": [True]})
    with pytest.raises(MetricInputError, match="'z'"):
        paired_compare({"z": [True, True]}, {"z": [True]}, test_unit="run")
