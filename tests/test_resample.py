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
