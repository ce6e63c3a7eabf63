"""One matching per run, shared by every metric of a full score.

Scoring one run in full (``scoring.score_run``) pairs the run's calls with the case's
expected calls in several metrics: tool-call P/R/F1, its name-only form in the composite,
the in-order (LCS) F1, the step table behind the call rates and the call table, the
outcome's writes and the matched tools of the result. Under the case's own argument modes
they all build the same compatibility rows (``matching.compatibility`` over the calls left
after setting retried failures aside) and the same maximum matching. Inside
``runmemo.per_run`` the first of them builds a ``RunMatching`` for the run and case, and
the others read it: the kept calls, the rows, the matching, and the name-only rows and
matching, each computed once.

Shared only where sharing cannot change a result: every expected call is compared with
``exact`` (``matching.compile_all`` passes each through as it is), so no matcher reads a
``MatchContext`` and each metric's own context would give the same rows. For any other
case, outside ``per_run``, or when building the rows raises (each metric then raises its
own error, as before), ``shared`` gives None and every metric matches by itself.
"""

from __future__ import annotations

from typing import Any

from ..errors import TrajcheckError
from ..match.matchers import DEFAULT_CONTEXT
from ..match.matching import _hopcroft_karp, compatibility, name_matchable, retried_failures
from ..model import ARGS_MODES, DEFAULT_ARGS_MODE, Case, ExpectedCall, ToolCall, Trajectory
from .runmemo import memo_open, memoized


class RunMatching:
    """The matching of one run's kept calls with its case's expected calls.

    ``calls``: ``traj.tool_calls()``; ``retried``: ``matching.retried_failures(traj)``;
    ``kept``: the indices of the other calls, increasing, and ``kept_calls`` those calls;
    ``rows``: their compatibility rows against ``case.expected_calls`` (mode per expected
    call: its own, else ``case.args_mode``, else ``expected_keys``); ``ml``: the maximum
    matching of those rows (``matching._hopcroft_karp``), per kept call its expected index
    or -1. Rows and matchings are read, never modified.
    """

    __slots__ = ("_name_ml", "_name_rows", "calls", "kept", "kept_calls", "ml", "n_expected",
                 "retried", "rows", "_by_name")

    def __init__(self, calls: list[ToolCall], retried: frozenset[int], kept: list[int],
                 kept_calls: list[ToolCall], rows: list[list[int]], ml: list[int],
                 expected: tuple[ExpectedCall, ...] | list[ExpectedCall]) -> None:
        self.calls = calls
        self.retried = retried
        self.kept = kept
        self.kept_calls = kept_calls
        self.rows = rows
        self.ml = ml
        self.n_expected = len(expected)
        by_name: dict[str, list[int]] = {}
        for j, e in enumerate(expected):
            by_name.setdefault(e.name, []).append(j)
        self._by_name = by_name
        self._name_rows: list[list[int]] | None = None
        self._name_ml: list[int] | None = None

    def name_rows(self) -> list[list[int]]:
        """The kept calls' rows with ``args_mode="ignore"``: every expected call of the
        call's tool when its arguments parsed to an object or were not recorded, else none (what
        ``matching.compatibility`` gives in that mode)."""
        if self._name_rows is None:
            by_name = self._by_name
            self._name_rows = [
                list(by_name.get(c.name, ())) if name_matchable(c) else [] for c in self.kept_calls]
        return self._name_rows

    def name_ml(self) -> list[int]:
        """The maximum matching of ``name_rows`` (``matching._hopcroft_karp``)."""
        if self._name_ml is None:
            self._name_ml = _hopcroft_karp(self.name_rows(), self.n_expected)
        return self._name_ml


def _all_exact(expected: Any) -> bool:
    """Whether ``matching.compile_all`` passes every expected call through as it is (no
    ``match`` spec, arguments an object or None, a known or no mode): all ``exact``."""
    for e in expected:
        if not (type(e) is ExpectedCall and not e.match
                and (e.args is None or type(e.args) is dict)
                and (e.args_mode is None or e.args_mode in ARGS_MODES)):
            return False
    return True


def shared(traj: Any, case: Any) -> RunMatching | None:
    """The ``RunMatching`` of ``traj`` against ``case`` (module doc), computed once within
    ``runmemo.per_run``; None outside it, for anything but a ``Trajectory`` and a
    ``Case``, for a case with an expected call that is not all-``exact``, or when building
    the rows raises."""
    if not memo_open() or type(traj) is not Trajectory or type(case) is not Case:
        return None
    return memoized("run_matching", (traj, case), None, lambda: _build(traj, case))


def _build(traj: Trajectory, case: Case) -> RunMatching | None:
    expected = case.expected_calls
    if not _all_exact(expected):
        return None
    try:
        calls = traj.tool_calls()
        retried = retried_failures(traj)
        kept = [i for i in range(len(calls)) if i not in retried]
        kept_calls = [calls[i] for i in kept] if retried else calls
        rows = compatibility(kept_calls, expected, None, DEFAULT_CONTEXT,
                             default_mode=case.args_mode)
    except TrajcheckError:
        return None  # each metric raises its own error, naming what it names
    return RunMatching(calls, retried, kept, kept_calls, rows, _hopcroft_karp(rows, len(expected)),
                       expected)


def same_modes(case: Case, args_mode: str | None) -> bool:
    """Whether ``match_calls(..., args_mode=args_mode)`` over ``case.expected_calls``
    (mode per call: ``args_mode``, else the call's own, else ``expected_keys``) gives every
    expected call the mode the shared rows used (its own, else ``case.args_mode``, else
    ``expected_keys``)."""
    cm = case.args_mode
    return all((args_mode or e.args_mode or DEFAULT_ARGS_MODE)
               == (e.args_mode or cm or DEFAULT_ARGS_MODE) for e in case.expected_calls)


__all__ = ["RunMatching", "same_modes", "shared"]
