"""One set of bootstrap resampling indices shared by many figures.

``bootstrap_ci`` (``metrics.reliability``) draws, for each figure, ``n_boot`` replicates of
``m`` task indices with ``random.Random(seed)``; every figure over the same ``m`` tasks and
seed therefore draws the very same indices. ``bootstrap_means`` draws them once per
replicate and reuses them for every figure (column) of that length, and returns, for each
column, exactly the ``(estimate, lo, hi)`` that ``bootstrap_ci(column, n_boot=..., seed=...,
confidence=...)`` returns -- same floats, not approximately.

Two paths, the same results:

- with numpy installed: the index stream is produced by numpy's MT19937 started from the
  state of ``random.Random(seed)``, turned into ``random()``'s 53-bit doubles exactly as
  CPython does (``(a >> 5) * 2**26 + (b >> 6)) / 2**53``), and each replicate's exact sum
  of every column is an integer dot product (values split into 26-bit limbs of a common
  binary scale, so no sum is ever rounded); the mean is that exact sum correctly rounded,
  divided by ``m`` -- what ``math.fsum(xs) / len(xs)`` gives;
- otherwise (or for values whose binary exponents span too far for the limbs): plain
  Python, one ``random()`` per index, ``math.fsum`` per column.

Definitions: Efron & Tibshirani (1993), ch. 13 (percentile interval); DESIGN.md
"Intervals" (tasks are the unit, seeded).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from ..errors import MetricInputError
from .reliability import percentile

LIMB_BITS = 26
MAX_LIMBS = 12  # values spanning more than ~2**-250..1 take the plain path
_BATCH = 1 << 17  # indices drawn per numpy call: about 10 MB of working arrays for any m


def bootstrap_means(columns: Sequence[Sequence[float]], *, n_boot: int = 2000, seed: int = 0,
                    confidence: float = 0.95,
                    use_numpy: bool | None = None) -> list[tuple[float, float, float]]:
    """For each column of per-task values, ``(estimate, lo, hi)``: the mean and its seeded
    percentile bootstrap interval, equal to ``reliability.bootstrap_ci(column, n_boot=n_boot,
    seed=seed, confidence=confidence)``'s ``estimate``, ``lo``, ``hi``.

    ``columns``: sequences of finite floats (one value per task); columns of equal length
    share one draw of indices per replicate. ``use_numpy``: None uses numpy when importable,
    False forces the plain path (True requires numpy). Raises ``MetricInputError`` for an
    empty column, a non-finite value, n_boot < 1 or confidence outside (0, 1).
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise MetricInputError(f"n_boot must be an int >= 1, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"confidence must be in (0, 1), got {confidence!r}")
    # the columns are read, not kept: a list of floats is used as it is (no copy: at 250k
    # tasks a copy of a dozen columns is ~100 MB)
    cols = [c if type(c) is list and all(type(x) is float for x in c) else [float(x) for x in c]
            for c in columns]
    for j, c in enumerate(cols):
        if not c:
            raise MetricInputError(f"column {j}: empty suite: no tasks to bootstrap")
        if not all(math.isfinite(x) for x in c):
            raise MetricInputError(f"column {j}: a per-task value is not finite")
    np: Any = None
    if use_numpy is not False:
        try:
            import numpy as np
        except ImportError:
            if use_numpy:
                raise
    by_len: dict[int, list[int]] = {}
    for j, c in enumerate(cols):
        by_len.setdefault(len(c), []).append(j)
    out: list[tuple[float, float, float] | None] = [None] * len(cols)
    alpha = 1.0 - confidence
    for m, js in by_len.items():
        group = [cols[j] for j in js]
        reps = None
        if np is not None:
            reps = _reps_numpy(np, group, m, n_boot, seed)
        if reps is None:
            reps = _reps_plain(group, m, n_boot, seed)
        for j, col, rs in zip(js, group, reps):
            rs.sort()
            out[j] = (math.fsum(col) / m, percentile(rs, alpha / 2.0),
                      percentile(rs, 1.0 - alpha / 2.0))
    return [x for x in out if x is not None]


def _one_thread() -> Any:
    """A context limiting BLAS to one thread (threadpoolctl), or a no-op without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - the 'scale' extra installs it
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def _reps_plain(group: list[list[float]], m: int, n_boot: int, seed: int) -> list[list[float]]:
    rnd = random.Random(seed).random
    fm = float(m)
    floor = math.floor
    reps: list[list[float]] = [[] for _ in group]
    for _ in range(n_boot):
        idx = [floor(rnd() * fm) for _ in range(m)]
        for col, rs in zip(group, reps):
            rs.append(math.fsum([col[i] for i in idx]) / m)
    return reps


def _limbs(np: Any, col: list[float]) -> tuple[Any, int] | None:
    """The column as an (m, L) float64 array of 26-bit limbs of integers N_i with
    value_i = N_i / 2**E, and E; None when a value is negative or L would exceed MAX_LIMBS."""
    if any(x < 0 for x in col):
        return None
    nz = [x for x in col if x]
    if not nz:
        return np.zeros((len(col), 1)), 0
    # x = mant * 2**exp with an integer mantissa below 2**53
    exps = [math.frexp(x)[1] - 53 for x in nz]
    e_min = min(exps)
    top = max(math.frexp(x)[1] for x in nz) - e_min  # bits of the largest N_i
    n_limbs = max(1, -(-top // LIMB_BITS))
    if n_limbs > MAX_LIMBS:
        return None
    mask = (1 << LIMB_BITS) - 1
    arr = np.zeros((len(col), n_limbs))
    for i, x in enumerate(col):
        if not x:
            continue
        f, e = math.frexp(x)
        n = int(f * (1 << 53)) << (e - 53 - e_min)
        for j in range(n_limbs):
            arr[i, j] = (n >> (LIMB_BITS * j)) & mask
    return arr, -e_min


def _reps_numpy(np: Any, group: list[list[float]], m: int, n_boot: int,
                seed: int) -> list[list[float]] | None:
    # tasks with equal values in every column are interchangeable: count draws per key (a
    # row of equal floats). The limbs are built for one task of each key only: the keys'
    # values are the columns' values, so the limb scale and the fallback are the same.
    _, first, kid = np.unique(np.array(group, dtype=np.float64).T, axis=0, return_index=True,
                              return_inverse=True)
    kid = kid.reshape(-1)
    firsts = first.tolist()
    parts = [_limbs(np, [c[i] for i in firsts]) for c in group]
    if any(p is None for p in parts):
        return None
    mats: list[Any] = []
    spans: list[tuple[int, int]] = []
    scales: list[int] = []
    for arr, e in parts:  # type: ignore[misc]
        spans.append((sum(x.shape[1] for x in mats), arr.shape[1]))
        mats.append(arr)
        scales.append(e)
    limbs = np.concatenate(mats, axis=1)
    n_keys = len(firsts)
    bg = np.random.MT19937()
    st = random.Random(seed).getstate()[1]
    state = bg.state
    state["state"]["key"] = np.array(st[:624], dtype=np.uint32)
    state["state"]["pos"] = st[624]
    bg.state = state
    fm = float(m)
    reps: list[list[float]] = [[] for _ in group]
    per_call = max(1, _BATCH // m)
    done = 0
    shifts = [1 << (LIMB_BITS * j) for j in range(MAX_LIMBS)]
    # BLAS limited to one thread once, not per batch (threadpoolctl reads the loaded
    # libraries each time it is entered)
    with _one_thread():
        while done < n_boot:
            b = min(per_call, n_boot - done)
            _batch(np, bg, m, b, fm, kid, n_keys, limbs, spans, scales, shifts, reps)
            done += b
    return reps


def _batch(np: Any, bg: Any, m: int, b: int, fm: float, kid: Any, n_keys: int, limbs: Any,
           spans: list[tuple[int, int]], scales: list[int], shifts: list[int],
           reps: list[list[float]]) -> None:
    """``b`` more replicates of every column into ``reps``."""
    raw = bg.random_raw(2 * m * b)
    a = (raw[0::2] >> 5).astype(np.float64)
    c = (raw[1::2] >> 6).astype(np.float64)
    u = (a * 67108864.0 + c) * (1.0 / 9007199254740992.0)
    idx = np.floor(u * fm).astype(np.int64).reshape(b, m)
    cnt = np.empty((b, n_keys))
    for r in range(b):
        cnt[r] = np.bincount(kid[idx[r]], minlength=n_keys)
    sums = cnt @ limbs  # exact: every partial sum is an integer below 2**53
    for r in range(b):
        row = sums[r].tolist()
        for j, ((s0, nl), e) in enumerate(zip(spans, scales)):
            total = 0
            for q in range(nl):
                total += int(row[s0 + q]) * shifts[q]
            reps[j].append(math.ldexp(float(total), -e) / m if total else 0.0)


__all__ = ["bootstrap_means"]
