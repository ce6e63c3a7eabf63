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
