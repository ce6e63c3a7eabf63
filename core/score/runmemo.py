"""Per-run work done once: a memo that lives for the scoring of one run.

Scoring one run calls several metrics, and each of them joins calls to results
(``Trajectory.pairs``), sets retried failures aside (``matching.retried_failures``) and
matches predicted to expected calls (``matching.match_calls``) on the very same objects.
Inside ``per_run()`` (``scoring.score_run`` opens one) those functions compute each answer
once and hand the same answer to every metric. Entries are keyed by the identity of the
objects they were computed from and keep those objects alive, so a key can never be
reused by another object while the memo lives; outside a ``per_run`` block nothing is
cached. The answers are the functions' own, so every figure is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_MEMO: ContextVar[dict[Any, tuple[Any, Any]] | None] = ContextVar("trajcheck_run_memo",
                                                                  default=None)


@contextmanager
def per_run() -> Iterator[None]:
    """Open a memo for the scoring of one run (nested blocks share the outer one)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def memo_open() -> bool:
    """Whether a ``per_run`` block is open (so ``memoized`` keeps answers)."""
    return _MEMO.get() is not None


def memoized(tag: str, objs: tuple[Any, ...], extra: Any, compute: Callable[[], T]) -> T:
    """``compute()``, or its earlier answer for the same ``tag``, the same objects
    (``objs``, by identity) and an equal ``extra`` within the current ``per_run`` block."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    key = (tag, tuple(map(id, objs)), extra)
    hit = memo.get(key)
    if hit is not None:
        return hit[1]  # type: ignore[no-any-return]
    val = compute()
    memo[key] = (objs, val)  # holding objs keeps their ids from being reused
    return val


__all__ = ["memo_open", "memoized", "per_run"]
