"""One set of bootstrap resampling indices shared by many figures.

``bootstrap_ci`` (``metrics.reliability``) draws, for each figure, ``n_boot`` replicates of
``m`` task indices with ``random.Random(seed)``; every figure over the same ``m`` tasks and
seed therefore draws the very same indices. ``bootstrap_means`` draws them once per
replicate and reuses them for every figure (column) of that length, and returns, for each
column, exactly the ``(estimate, lo, hi)`` that ``bootstrap_ci(column, n_boot=..., seed=...,
confidence=...)`` returns -- same floats, not approximately.

Two paths, the same results:

- with numpy installed: the index stream is produced by numpy's MT19937 started from the
  state of ``random.Random(seed)``, whose doubles are ``random()``'s (both are
  ``((a >> 5) * 2**26 + (b >> 6)) / 2**53`` of two 32-bit outputs), times ``m``, floored), counted
  per task, and each replicate's exact sum of every column is an integer product of those
  counts with the column's values split into limbs of a common binary scale (limbs narrow
  enough that no sum reaches 2**53, so none is ever rounded); the mean is that exact sum
  correctly rounded, divided by ``m`` -- ``reliability.mean_from_sum``'s rule, what
  ``reliability.exact_mean`` gives. Columns
  with few distinct values (pass^k's per-task values) are counted per distinct row of
  them instead of per task. Replicates go in batches of a few megabytes whatever ``m``.
  With many draws and more than one processor, a second thread draws the doubles (numpy's
  generator releases the GIL) while the first turns them into indices and counts and sums them: the
  same stream, taken in the same order, so the same floats;
- otherwise (or for values whose binary exponents span too far for the limbs): plain
  Python: ``reliability.draw_tasks`` (``bootstrap_ci``'s draw) over the task indices,
  ``reliability.exact_mean`` per column.

Both paths end in ``reliability.percentile_interval``, the one definition of the interval
from the replicates' means: the paths differ only in how they gather those means.

Definitions: Efron & Tibshirani (1993), ch. 13 (percentile interval); DESIGN.md
"Intervals" (tasks are the unit, seeded).
"""

from __future__ import annotations

import math
import os
import queue
import random
import threading
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import MetricInputError
from .reliability import draw_tasks, exact_mean, mean_from_sum, percentile_interval

MAX_BITS = 312  # values spanning more than ~2**-250..1 take the plain path
_BATCH = 1 << 21  # task counts per batch of replicates (16 MB as float64), whatever m
_FEW = 64  # a column with at most this many distinct values is counted per distinct row
_CHUNK = 1 << 18  # draws per block handed from the drawing thread (2 MB as float64)
_THREAD_MIN = 1 << 26  # draws (tasks x replicates) from which a second thread draws them:
# below, its hand-offs cost more CPU (~5% at 25k tasks) than the wall time it saves matters


def bootstrap_means(columns: Sequence[Sequence[float]], *, n_boot: int = 2000, seed: int = 0,
                    confidence: float = 0.95, use_numpy: bool | None = None,
                    threads: int | None = None) -> list[tuple[float, float, float]]:
    """For each column of per-task values, the mean and its seeded percentile bootstrap
    interval, equal to ``reliability.bootstrap_ci(column, n_boot=n_boot, seed=seed,
    confidence=confidence)``'s ``estimate``, ``lo``, ``hi``.

    Args:
        columns: sequences of finite floats (one value per task); columns of equal length
            share one draw of indices per replicate.
        n_boot: replicates (>= 1).
        seed: the ``random.Random`` seed (the stream ``bootstrap_ci`` draws).
        confidence: two-sided, in (0, 1).
        use_numpy: None uses numpy when importable, False forces the plain path (True
            requires numpy).
        threads: numpy path: 1 draws and sums in this thread, 2 draws the doubles in a
            second thread, None uses the second thread from 64M draws (tasks x replicates)
            when more than one processor is available; the same floats either way.

    Returns:
        ``[(estimate, lo, hi), ...]``, one per column in order: ``reliability.exact_mean``
        of the column and ``reliability.percentile_interval`` of its replicates' means.

    Raises:
        MetricInputError: an empty column, a non-finite value, n_boot < 1, confidence
            outside (0, 1) or threads not 1, 2 or None.
    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise MetricInputError(f"n_boot must be an int >= 1, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"confidence must be in (0, 1), got {confidence!r}")
    if threads not in (None, 1, 2) or isinstance(threads, bool):
        raise MetricInputError(f"threads must be 1, 2 or None, got {threads!r}")
    np: Any = None
    if use_numpy is not False:
        try:
            import numpy as np
        except ImportError:
            if use_numpy:
                raise
    # the columns are read, not kept: a list of floats or an array of doubles is used as it
    # is (no copy: at 250k tasks a copy of a dozen columns as lists is ~100 MB)
    cols: list[Sequence[float]] = [c if ((type(c) is array and c.typecode == "d")
                  or (type(c) is list and all(type(x) is float for x in c)))
            else [float(x) for x in c] for c in columns]
    for j, c in enumerate(cols):
        if not len(c):
            raise MetricInputError(f"column {j}: empty suite: no tasks to bootstrap")
        finite = (bool(np.isfinite(np.frombuffer(c, dtype=np.float64)).all()) if np is not None
                  and type(c) is array else all(map(math.isfinite, c)))
        if not finite:
            raise MetricInputError(f"column {j}: a per-task value is not finite")
    by_len: dict[int, list[int]] = {}
    for j, c in enumerate(cols):
        by_len.setdefault(len(c), []).append(j)
    out: list[tuple[float, float, float] | None] = [None] * len(cols)
    for m, js in by_len.items():
        group = [cols[j] for j in js]
        reps: Any = None
        if np is not None:
            reps = _reps_numpy(np, group, m, n_boot, seed, _threads(threads, m * n_boot))
        if reps is None:
            reps = _reps_plain(group, m, n_boot, seed)
        for j, col, rs in zip(js, group, reps):
            # replicate means are >= 0 and never NaN or -0.0: numpy's order is list.sort's
            rs = rs.sort() or rs if type(rs) is list else np.sort(rs).tolist()
            out[j] = (exact_mean(col), *percentile_interval(rs, confidence))
    return [x for x in out if x is not None]


def _threads(threads: int | None, draws: int) -> int:
    """Threads for ``draws`` draws: as asked, else 2 from ``_THREAD_MIN`` draws when this
    process may run on more than one processor."""
    if threads is not None:
        return threads
    if draws < _THREAD_MIN:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return 2 if cpus > 1 else 1


def _one_thread() -> Any:
    """A context limiting BLAS to one thread (threadpoolctl), or a no-op without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a core dependency
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def _reps_plain(group: Sequence[Sequence[float]], m: int, n_boot: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    tasks = list(range(m))  # indexed faster than a range
    reps: list[list[float]] = [[] for _ in group]
    for _ in range(n_boot):
        idx = draw_tasks(rng, tasks)  # bootstrap_ci's draw, as indices: the same tasks
        for col, rs in zip(group, reps):
            rs.append(exact_mean([col[i] for i in idx]))
    return reps


def _limb_bits(m: int) -> int:
    """Limb width for ``m`` draws a replicate: a sum of ``m`` limbs stays below 2**53."""
    return 53 - m.bit_length()


def _limbs(np: Any, v: Any, lb: int) -> tuple[Any, int] | None:
    """The values ``v`` (float64, none negative) as an (len, L) float64 array of ``lb``-bit
    limbs of integers N_i with v_i = N_i / 2**E, and E; None when the values span more than
    ``MAX_BITS`` bits (the plain path then)."""
    nz = v[v != 0]
    if not nz.size:
        return np.zeros((v.size, 1)), 0
    f, e = np.frexp(v)
    _, enz = np.frexp(nz)
    e_min = int(enz.min()) - 53  # v = mant * 2**(e - 53) with an integer mantissa below 2**53
    top = int(enz.max()) - 53 - e_min + 53  # bits of the largest N_i
    if top > MAX_BITS:
        return None
    n_limbs = max(1, -(-top // lb))
    mant = (f * 9007199254740992.0).astype(np.uint64)  # exact: f in [0.5, 1) or 0
    shift = (e.astype(np.int64) - 53 - e_min)  # N_i = mant_i << shift_i (shift >= 0 where v != 0)
    shift[v == 0] = 0
    mask = np.uint64((1 << lb) - 1)
    out = np.empty((v.size, n_limbs))
    for q in range(n_limbs):
        lo_bit = lb * q - shift  # where limb q starts in mant's bits
        right = np.clip(lo_bit, 0, 63).astype(np.uint64)
        left = np.clip(-lo_bit, 0, 63).astype(np.uint64)
        limb = ((mant >> right) << left) & mask
        limb[(lo_bit >= 53) | (-lo_bit >= lb)] = 0
        out[:, q] = limb
    return out, -e_min


def _few_values(np: Any, v: Any) -> Any:
    """The sorted distinct values of ``v`` when there are at most ``_FEW``, else None (a
    prefix with more settles it without sorting the whole column)."""
    if _distinct(np, v[:4096]).size > _FEW:
        return None
    u = _distinct(np, v)
    return u if u.size <= _FEW else None


def _distinct(np: Any, v: Any) -> Any:
    """``np.unique(v)`` of a float64 array (sorted; -0.0 and 0.0 are one value), without
    the import of ``numpy.ma`` that ``np.unique`` makes (~15 ms)."""
    s = np.sort(v)
    keep = np.empty(s.size, dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _key_rows(np: Any, vals: list[Any], uniq: list[Any], m: int) -> tuple[Any, Any] | None:
    """For columns of few distinct values (``uniq[i]``: ``vals[i]``'s): each task's key (its
    row of values, numbered in the rows' sorted order) and one task of each key; None when
    the rows take more than ``_FEW`` distinct values."""
    key = np.zeros(m, dtype=np.intp)
    nk = 1
    for v, u in zip(vals, uniq):
        comb = key * u.size + np.searchsorted(u, v)  # v's values are all in u
        seen = np.zeros(nk * u.size, dtype=bool)
        seen[comb] = True
        rank = np.cumsum(seen) - 1
        nk = int(rank[-1]) + 1
        if nk > _FEW:
            return None
        key = rank[comb]
    first = np.empty(nk, dtype=np.intp)
    first[key] = np.arange(m)  # some task of each key: all of them share its values
    return key, first


def _generator(np: Any, seed: int) -> Any:
    """numpy's MT19937 generator in ``random.Random(seed)``'s state: its doubles are
    ``random()``'s ((a >> 5) * 2**26 + (b >> 6), over 2**53)."""
    bg = np.random.MT19937()
    st = random.Random(seed).getstate()[1]
    state = bg.state
    state["state"]["key"] = np.array(st[:624], dtype=np.uint32)
    state["state"]["pos"] = st[624]
    bg.state = state
    return np.random.Generator(bg)


@contextmanager
def _draws(np: Any, gen: Any, m: int, n_boot: int, threads: int) -> Iterator[Iterator[Any]]:
    """An iterator over the ``n_boot`` replicates' task indices in order (each an intp array
    of ``m``, valid until the next is taken): ``floor(random() * m)`` per draw, the index
    ``reliability.draw_tasks`` takes (``random.Random.choices``). With ``threads`` 2 a second thread draws the doubles
    in blocks ahead (three blocks in flight) while the caller's thread turns them into
    indices and counts them: the drawing thread needs the interpreter once a block only (a
    thread waiting for it waits while the other holds it)."""
    k = max(1, min(n_boot, _CHUNK // m))  # replicates per block
    fm = float(m)

    def indices(rows: Iterator[Any]) -> Iterator[Any]:
        idx = np.empty(m, dtype=np.intp)
        for u in rows:
            # random() * m rounded as Python rounds it, then truncated (= floor: u >= 0)
            np.multiply(u, fm, out=idx, casting="unsafe")
            yield idx

    if threads == 1:
        def serial() -> Iterator[Any]:
            u = np.empty((k, m))
            done = 0
            while done < n_boot:
                b = min(k, n_boot - done)
                gen.random(out=u[:b])  # one stream, row after row
                yield from u[:b]
                done += b
        yield indices(serial())
        return
    free: queue.Queue[Any] = queue.Queue()
    ready: queue.Queue[Any] = queue.Queue()
    for _ in range(3):
        free.put(np.empty((k, m)))

    def produce() -> None:
        try:
            done = 0
            while done < n_boot:
                b = min(k, n_boot - done)
                u = free.get()
                if u is None:  # the caller stopped early
                    return
                gen.random(out=u[:b])
                ready.put((u, b))
                done += b
        except BaseException as e:  # handed to the caller  # pragma: no cover
            ready.put((e, 0))

    def taken() -> Iterator[Any]:
        got = 0
        while got < n_boot:
            u, b = ready.get()
            if isinstance(u, BaseException):  # pragma: no cover - numpy failing
                raise u
            yield from u[:b]
            free.put(u)
            got += b

    th = threading.Thread(target=produce, name="trajcheck-bootstrap-draws", daemon=True)
    th.start()
    try:
        yield indices(taken())
    finally:
        free.put(None)
        th.join()


def _means(np: Any, limbs: Any, lb: int, e: int, m: int) -> Any:
    """Each replicate's mean from its exact sum in ``lb``-bit limbs (``limbs``: replicates x
    limbs, each an integer below 2**53), the sum being N / 2**e: N correctly rounded, times
    2**-e, over m -- ``math.ldexp(float(N), -e) / m``. One or two limbs in whole columns
    (ldexp(hi, lb) + lo is one correctly rounded addition of two exact doubles, as float(N)
    rounds); more limbs as Python integers."""
    nl = limbs.shape[1]
    if nl <= 2:
        tot = limbs[:, 0] if nl == 1 else np.ldexp(limbs[:, 1], lb) + limbs[:, 0]
        with np.errstate(over="ignore"):
            out = np.ldexp(tot, -e) / m  # reliability.mean_from_sum, elementwise
        if np.isfinite(out).all():
            return out
    # more limbs, or a sum past the largest float: Python's integers (math.ldexp raises
    # OverflowError as math.fsum does in bootstrap_ci)
    return np.array([mean_from_sum(math.ldexp(float(sum(int(x) << (lb * q)
                                                        for q, x in enumerate(row))), -e), m)
                     for row in limbs.tolist()])


def _reps_numpy(np: Any, group: Sequence[Sequence[float]], m: int, n_boot: int,
                seed: int, threads: int = 1) -> list[Any] | None:
    vals = [np.frombuffer(c, dtype=np.float64) if type(c) is array else np.asarray(c, dtype=np.float64)
            for c in group]
    if any(bool((v < 0).any()) for v in vals):
        return None
    lb = _limb_bits(m)
    uniq = [_few_values(np, v) for v in vals]
    few = [j for j, u in enumerate(uniq) if u is not None]
    keyed = _key_rows(np, [vals[j] for j in few], [uniq[j] for j in few], m) if few else None
    if keyed is None:
        few = []
    many = [j for j in range(len(vals)) if j not in few]
    # per-task limbs of the other columns; one column a key for the few-valued ones
    spans: list[tuple[int, int, int]] = [(0, 0, 0)] * len(vals)  # (block, first limb, limbs)
    scales = [0] * len(vals)
    blocks: list[Any] = []
    width = 0
    for j in many:
        lim = _limbs(np, vals[j], lb)
        if lim is None:
            return None
        spans[j] = (0, width, lim[0].shape[1])
        scales[j] = lim[1]
        blocks.append(lim[0])
        width += lim[0].shape[1]
    key_limbs = None
    n_keys = 0
    if keyed is not None:
        key, first = keyed
        n_keys = first.size
        kl = []
        kw = 0
        for j in few:
            lim = _limbs(np, vals[j][first], lb)
            if lim is None:
                return None
            spans[j] = (1, kw, lim[0].shape[1])
            scales[j] = lim[1]
            kl.append(lim[0])
            kw += lim[0].shape[1]
        key_limbs = np.concatenate(kl, axis=1)
        onehot = np.zeros((m, n_keys))
        onehot[np.arange(m), key] = 1.0
        blocks.append(onehot)
    mat = np.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]
    del blocks
    gen = _generator(np, seed)
    reps: list[list[Any]] = [[] for _ in group]
    per_call = max(1, min(n_boot, _BATCH // m))
    cnt = np.empty((per_call, m))
    done = 0
    # BLAS limited to one thread once, not per batch (threadpoolctl reads the loaded
    # libraries each time it is entered)
    with _one_thread(), _draws(np, gen, m, n_boot, threads) as draws:
        while done < n_boot:
            b = min(per_call, n_boot - done)
            for r in range(b):
                # counted straight into the float row (exact: counts stay below 2**53);
                # ufunc.at's indexed loop is ~2x bincount plus its int-to-float copy
                row = cnt[r]
                row.fill(0.0)
                np.add.at(row, next(draws), 1.0)
            sums = cnt[:b] @ mat  # exact: every partial sum is an integer below 2**53
            ksums: Any = sums[:, width:width + n_keys] @ key_limbs if n_keys else None
            for j, ((blk, s0, nl), e) in enumerate(zip(spans, scales)):
                reps[j].append(_means(np, (ksums if blk else sums)[:, s0:s0 + nl], lb, e, m))
            done += b
    return [np.concatenate(r) for r in reps]


__all__ = ["bootstrap_means"]
