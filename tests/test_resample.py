"""Shared bootstrap indices (trajcheck.metrics.resample): every figure's interval equals
reliability.bootstrap_ci's, float for float, on both the numpy and the plain path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import MetricInputError
from trajcheck.metrics.reliability import bootstrap_ci
from trajcheck.metrics.resample import bootstrap_means

values = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 2 / 3, 1.0]),
                   st.floats(0, 1, allow_nan=False), st.floats(0, 1e-80),
                   st.floats(-1, 1, allow_nan=False))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 60), n_cols=st.integers(1, 4), data=st.data(),
       seed=st.integers(0, 2**40), n_boot=st.integers(1, 80),
       confidence=st.sampled_from([0.5, 0.9, 0.95]))
def test_equals_bootstrap_ci_per_column(m, n_cols, data, seed, n_boot, confidence):
    cols = [data.draw(st.lists(values, min_size=m, max_size=m)) for _ in range(n_cols)]
    cols.append(data.draw(st.lists(values, min_size=1, max_size=9)))  # another length
    want = [(b.estimate, b.lo, b.hi) for b in
            (bootstrap_ci(c, n_boot=n_boot, seed=seed, confidence=confidence) for c in cols)]
    assert bootstrap_means(cols, n_boot=n_boot, seed=seed, confidence=confidence) == want
    assert bootstrap_means(cols, n_boot=n_boot, seed=seed, confidence=confidence,
                           use_numpy=False) == want


def test_many_tasks_many_replicates_on_the_numpy_path():
    # 3,000 tasks x 300 replicates: several numpy batches, keys shared by equal tasks
    cols = [[(i % 5) / 4 for i in range(3000)], [((i * 7919) % 10007) / 10007 for i in range(3000)]]
    want = [(b.estimate, b.lo, b.hi) for b in (bootstrap_ci(c, n_boot=300, seed=11) for c in cols)]
    assert bootstrap_means(cols, n_boot=300, seed=11, use_numpy=True) == want


def test_bad_input_is_an_error():
    with pytest.raises(MetricInputError, match="empty suite"):
        bootstrap_means([[]])
    with pytest.raises(MetricInputError, match="not finite"):
        bootstrap_means([[float("nan")]])
    with pytest.raises(MetricInputError, match="n_boot"):
        bootstrap_means([[1.0]], n_boot=0)


def test_keyed_and_per_task_columns_and_wide_limbs_on_the_numpy_path():
    """Few-valued columns counted per distinct row (and, past 64 distinct rows, per task),
    values spanning ~270 bits in many limbs, and 0.0 rows: the same floats as bootstrap_ci."""
    m = 1500
    cols = [[(i % 3) / 2 for i in range(m)],                     # 3 values: keyed
            [((i * 7) % 5) / 4 for i in range(m)],               # 5 values: keyed with the first
            [((i * 13) % 60) / 59 for i in range(m)],            # 60 values: 900 rows jointly
            [1e-80 * (i % 11) + (1.0 if i % 4 else 0.0) for i in range(m)],  # wide span
            [0.0] * m]
    want = [(b.estimate, b.lo, b.hi) for b in (bootstrap_ci(c, n_boot=40, seed=5) for c in cols)]
    assert bootstrap_means(cols, n_boot=40, seed=5, use_numpy=True) == want
    assert bootstrap_means(cols[:2], n_boot=40, seed=5, use_numpy=True) == want[:2]


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 300), n_boot=st.integers(1, 120), seed=st.integers(0, 2**32),
       chunk=st.sampled_from([1, 64, 500, 1 << 18]), data=st.data())
def test_indices_drawn_in_a_second_thread_give_the_same_floats(m, n_boot, seed, chunk, data):
    """The second thread draws the same stream in blocks (one to many replicates a block,
    three blocks in flight and reused): every interval equals one thread's and
    bootstrap_ci's, float for float."""
    import trajcheck.metrics.resample as rs

    cols = [data.draw(st.lists(st.sampled_from([0.0, 0.25, 1 / 3, 1.0]), min_size=m, max_size=m)),
            data.draw(st.lists(st.floats(0, 1), min_size=m, max_size=m))]
    want = [(b.estimate, b.lo, b.hi) for b in (bootstrap_ci(c, n_boot=n_boot, seed=seed) for c in cols)]
    old = rs._CHUNK
    rs._CHUNK = chunk
    try:
        assert bootstrap_means(cols, n_boot=n_boot, seed=seed, threads=2) == want
        assert bootstrap_means(cols, n_boot=n_boot, seed=seed, threads=1) == want
    finally:
        rs._CHUNK = old


def test_drawing_thread_ends_when_the_caller_stops_early():
    import threading

    import numpy as np

    import trajcheck.metrics.resample as rs

    before = threading.active_count()
    with pytest.raises(RuntimeError, match="stop"):
        with rs._draws(np, rs._generator(np, 3), 1000, 5000, 2) as draws:
            first = next(draws).copy()
            raise RuntimeError("stop")
    assert threading.active_count() == before
    with rs._draws(np, rs._generator(np, 3), 1000, 2, 1) as draws:
        assert (next(draws) == first).all()  # the same stream in either thread
    import random

    rnd = random.Random(3)
    assert first.tolist() == [int(rnd.random() * 1000) for _ in range(1000)]


def test_threads_chosen_by_size_and_checked():
    import trajcheck.metrics.resample as rs

    assert rs._threads(None, 1000) == 1 and rs._threads(1, 10**9) == 1 and rs._threads(2, 5) == 2
    with pytest.raises(MetricInputError, match="threads"):
        bootstrap_means([[1.0]], threads=3)


def test_sums_past_the_largest_float_raise_as_bootstrap_ci_does():
    cols = [[1.7e308, 1.7e308, 1.0]]
    with pytest.raises(OverflowError):
        bootstrap_ci(cols[0], n_boot=30, seed=1)
    with pytest.raises(OverflowError):
        bootstrap_means(cols, n_boot=30, seed=1, use_numpy=True)
