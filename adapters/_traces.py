"""Recorded traces -> what each host's test-case builder needs (no host imported here).

``trajcheck.read.traces.load`` reads the trace (any supported format, ``error_pattern`` marking
failed results where the source has no error channel); these helpers then list the calls
with their results, which of them failed, and which were issued together in one step, so
that a host whose test case is a flat call list (DeepEval) can carry both facts in its
metadata (``failed_calls``, ``parallel_calls``) and score exactly as the core does.
"""

from __future__ import annotations

from typing import Any

from trajcheck.errors import TraceFormatError
from trajcheck.model import ToolCall, ToolResult, Trajectory


def trajectories(source: Any, *, format: str = "auto", error_pattern: str | None = None) -> list[Trajectory]:
    """Every run in ``source``: a ``Trajectory``, a list of them, what
    ``trajcheck.read.traces.load`` returned (a ``LoadResult``), or anything
    ``trajcheck.read.traces.load`` reads (a path, a folder, a parsed object). ``error_pattern``
    (a regex) marks results whose text matches as failed (``traces.apply_error_pattern``;
    never overriding a source's own flag). Raises ``TraceFormatError`` when nothing is a
    trace."""
    from trajcheck.read.traces import LoadResult, apply_error_pattern, load

    if isinstance(source, Trajectory):
        out = [source]
    elif isinstance(source, LoadResult):  # what traces.load returned: its runs, read once
        if source.unread:
            raise TraceFormatError(f"{len(source.unread)} record(s) of this load hold tool calls "
                                   f"that were not read, first: {source.unread[0]}")
        out = list(source.trajectories)
    elif isinstance(source, (list, tuple)) and source and all(isinstance(t, Trajectory) for t in source):
        out = list(source)
    else:
        return list(load(source, format, error_pattern=error_pattern).trajectories)
    return [apply_error_pattern(t, error_pattern) for t in out] if error_pattern else out


def one_trajectory(source: Any, *, format: str = "auto", error_pattern: str | None = None) -> Trajectory:
    """The single run in ``source`` (see :func:`trajectories`); ``TraceFormatError`` when it
    holds none or several (use :func:`trajectories` then)."""
    ts = trajectories(source, format=format, error_pattern=error_pattern)
    if len(ts) != 1:
        raise TraceFormatError(f"expected one run, found {len(ts)}; build one test case per run: "
                               "[test_case_from_trace(t) for t in traces.load(...)]")
    return ts[0]


def calls_with_results(traj: Trajectory) -> list[tuple[ToolCall, ToolResult | None]]:
    """Every call in order with its result (``Trajectory.pairs``)."""
    return list(traj.pairs())


def failed_indices(traj: Trajectory) -> list[int]:
    """Indices of the calls whose result failed (``matching.is_failed``)."""
    from trajcheck.match.matching import is_failed

    return [i for i, (_c, r) in enumerate(traj.pairs()) if is_failed(r)]


def parallel_groups(traj: Trajectory) -> list[list[int]]:
    """Groups (2 or more) of call indices issued together in one step."""
    out: list[list[int]] = []
    i = 0
    for s in traj.steps:
        n = len(s.tool_calls)
        if n > 1:
            out.append(list(range(i, i + n)))
        i += n
    return out


def state_settings(traj: Trajectory) -> dict[str, Any]:
    """``{"before_state", "after_state"}`` from the run's recorded database snapshots
    (``metadata["state_before"]``/``["state_after"]``, as ``trajcheck run`` records them), or
    ``{}``: what a host's per-row settings carry for the final-state metrics."""
    meta = traj.metadata or {}
    b, a = meta.get("state_before"), meta.get("state_after")
    return {"before_state": b, "after_state": a} if isinstance(b, dict) and isinstance(a, dict) else {}
