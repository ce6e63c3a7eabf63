"""The one place adapters call trajcheck's metrics: ``compute(kind, traj, case, ...)``.

A thin keyword front of :mod:`trajcheck.adapters._catalog`, which holds the table of every
metric a host can show (:data:`~trajcheck.adapters._catalog.ROW_METRICS`), what reference
each needs, and how a missing reference is reported. Adapters copy the core result's
``score``, ``reason`` and ``passed`` into their framework's result and never recompute.
``KINDS`` lists the metric keys (old names ``argument_correctness`` and ``forbidden`` are
aliases of ``argument_accuracy`` and ``forbidden_calls``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from trajcheck.errors import DatasetError
from trajcheck.metrics.result import MetricResult
from trajcheck.model import Case, Trajectory

from . import _catalog
from ._catalog import forbidden_rules  # noqa: F401  (re-exported)

KINDS: tuple[str, ...] = tuple(m.key for m in _catalog.ROW_METRICS)


def final_state_result(case: Case, before: Any, after: Any,
                       ignore: Sequence[str] | None = None) -> MetricResult:
    """``check_final_state(before, after, case.expected_final_state)``; raises
    ``DatasetError`` naming the case when a state or the expectation is missing."""
    if case.expected_final_state is None:
        raise DatasetError(f"case {case.id!r}: no expected_final_state to check")
    return _catalog.compute("final_state", case=case, traj=Trajectory(),
                            opts=_catalog.Options(before_state=before, after_state=after, ignore=ignore))


def compute(kind: str, traj: Trajectory, case: Case, *, mode: str | None = None,
            dialect: str | None = None, args_mode: str | None = None,
            semantic_scorer: Callable[[str, str], float] | None = None,
            judge: Callable[[str, Any, Any], bool] | None = None,
            weights: Mapping[str, float] | None = None,
            before_state: Any = None, after_state: Any = None,
            ignore: Sequence[str] | None = None, id_args: Sequence[str] | None = None,
            retry_budget: int = 2, provided: Iterable[str] = (), how: str = "") -> MetricResult:
    """Run the core metric ``kind`` (a ``_catalog.ROW_METRICS`` key) on ``(traj, case)``.

    ``provided``: the reference fields the host test case gave explicitly (see
    ``_catalog.require``); ``how``: where the host expects a missing one (for the message).
    Raises ``_catalog.MissingReference`` (a ``DatasetError``) when the reference is missing,
    ``MetricInputError`` for an unknown kind; the core's own errors pass through.
    """
    opts = _catalog.Options(mode=mode, dialect=dialect, args_mode=args_mode,
                            semantic_scorer=semantic_scorer, judge=judge, weights=weights,
                            before_state=before_state, after_state=after_state, ignore=ignore,
                            id_args=id_args, retry_budget=retry_budget)
    return _catalog.compute(kind, traj, case, opts, provided, how)
