"""Graded trajectory scores: partial credit whose 1.0 point is a neutral mode's pass.

Two families, each with precision / recall / F1 forms, over the predicted calls with
failed-and-retried attempts set aside (as every trajcheck metric):

``lcs`` (in-order partial credit)
    L = the length of a longest common subsequence of predicted and expected calls, where a
    predicted call and an expected call are "common" when they match under the argument mode
    (the same compatibility relation as ``trajectory_match``; names only with
    ``args_mode="ignore"``). Among the alignments of length L, the one matching the most
    predicted calls of non-optional tools is used, and unmatched calls of optional tools do
    not count. Calls of one parallel step (one model turn) have no order among themselves:
    the step may be aligned in any order. precision = L / counted predicted calls, recall =
    L / expected calls, F1 = 2PR / (P + R), with DESIGN.md's empty-case rules
    (``calls.prf_counts``: nothing expected gives recall 1.0; no counted calls gives
    precision 1.0 when nothing was expected, else 0.0).

    ``lcs_f1`` = 1.0 exactly when ``trajectory_match(..., "exact")`` passes and
    ``lcs_recall`` = 1.0 exactly when ``"in_order"`` passes (tests/test_trajectory_scores.py
    checks both by brute force). ``lcs_precision`` = 1.0 when every counted predicted call
    is aligned in order (an ordered subset; no neutral mode).

    Source: the LCS-based trajectory F1 of pydantic-evals ``TrajectoryMatch(order="in_order")``
    (names only, pydantic-evals 2.62.0 ``evaluators/agentic.py``), generalised to argument
    matching, optional tools and parallel steps; the partial-credit requests in the
    frameworks' trackers (research/landscape_2026-12.md §18 item 2).

``multiset`` (unordered partial credit)
    The precision / recall / F1 of a maximum one-to-one matching between predicted and
    expected calls: ``calls.tool_call_prf``'s numbers. By default names only
    (``args_mode="ignore"``), where the matched count is the multiset intersection
    sum over names of min(count predicted, count expected). ``multiset_f1`` = 1.0 exactly when
    ``"unordered"`` passes under the same argument mode; recall = 1.0 exactly when
    ``"superset"`` does; precision = 1.0 exactly when ``"subset"`` does, except that no
    counted call against a non-empty expectation has precision 0.0 (DESIGN.md).

    Source: pydantic-evals ``TrajectoryMatch(order="any_order")`` and Azure AI Evaluation's
    task-navigation precision/recall/F1 (research/landscape_2026-12.md §4, §13).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

from ..errors import MetricInputError
from ..match.matchers import MatchContext
from ..match.matching import compatibility, compile_all, name_matchable
from ..model import ARGS_MODES, Trajectory
from ..score.run_matching import shared
from .calls import PRFResult, TrajLike, calls_and_retries, context_for, prf_from_calls
from .formulas import n_counted, name_counts, prf_counts

#: The graded neutral modes (``trajectory_match`` accepts them; ``f1`` etc. are the multiset forms).
LCS_MODES: tuple[str, ...] = ("lcs_precision", "lcs_recall", "lcs_f1")

_Val = tuple[int, int]  # (aligned calls, aligned calls of non-optional tools): compared lexicographically


def _add(a: _Val, b: _Val) -> _Val:
    return (a[0] + b[0], a[1] + b[1])


def _window_value(group: Sequence[int], adj: Sequence[set[int]], lo: int, hi: int,
                  nonopt: Sequence[bool]) -> _Val:
    """Largest one-to-one matching of the calls in ``group`` to expected ``lo..hi-1``,
    the one with the most non-optional calls among the largest: augmenting paths tried from
    non-optional calls first (the matchable sets of a bipartite graph form a transversal
    matroid, so this greedy order gives the lexicographic maximum)."""
    order = sorted(group, key=lambda i: not nonopt[i])
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in adj[i]:
            if lo <= j < hi and j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    n = m = 0
    for i in order:
        if augment(i, set()):
            n += 1
            m += nonopt[i]
    return (n, m)


def _lcs_groups(groups: Sequence[Sequence[int]], adj: Sequence[set[int]], n_exp: int,
                nonopt: Sequence[bool]) -> _Val:
    """Lexicographically largest (aligned, aligned non-optional) over monotone alignments
    where each group (parallel step) takes a one-to-one matching into a window of expected
    calls after the previous group's window."""
    best: list[_Val] = [(0, 0)] * (n_exp + 1)  # best[j]: expected calls before j used up
    for g in groups:
        if len(g) == 1:  # one call: the classic LCS row update
            i = g[0]
            gain = (1, int(nonopt[i]))
            new = list(best)
            for j in range(1, n_exp + 1):
                cand = new[j - 1]
                if (j - 1) in adj[i]:
                    cand = max(cand, _add(best[j - 1], gain))
                new[j] = max(new[j], cand)
            best = new
            continue
        new = list(best)
        for hi in range(1, n_exp + 1):
            cand = new[hi - 1]
            for lo in range(hi):
                cand = max(cand, _add(best[lo], _window_value(g, adj, lo, hi, nonopt)))
            new[hi] = max(new[hi], cand)
        best = new
    return best[n_exp]


def matching_in_order(kept: Sequence[int], call_step: Sequence[int], ml: Sequence[int]) -> bool:
    """Whether the matching ``ml`` of the kept calls (``kept``: their indices into
    ``call_step``, each call's step position; ``ml``: per kept call its expected index or
    -1) runs in order across steps: each step's pairs come after every pair of the steps
    before it. A maximum matching of compatibility rows that runs in order is a longest
    common subsequence: its pairs align, no alignment has more (each is a matching), and
    rows join only calls of one tool, so every maximum matching pairs as many calls of
    each tool (as many non-optional ones as any LCS)."""
    prev_hi = hi = -1
    last = None
    for k, i in enumerate(kept):
        st = call_step[i]
        if st != last:  # a new step: its pairs must all come after the previous steps'
            if hi > prev_hi:
                prev_hi = hi
            hi, last = -1, st
        j = ml[k]
        if j != -1:
            if j <= prev_hi:
                return False
            if j > hi:
                hi = j
    return True


def step_groups(kept: Sequence[int], call_step: Sequence[int]) -> list[list[int]]:
    """The kept calls grouped by step (a parallel step is one group), as positions in
    ``kept`` (``kept``: the kept calls' indices into ``call_step``, each call's step)."""
    groups: list[list[int]] = []
    last = None
    for k, i in enumerate(kept):
        st = call_step[i]
        if groups and st == last:
            groups[-1].append(k)
        else:
            groups.append([k])
        last = st
    return groups


def lcs_counts(kept: Sequence[int], call_step: Sequence[int], ml: Sequence[int] | None,
               rows: Callable[[], Sequence[Sequence[int]]], n_exp: int, knames: Sequence[str],
               optional: Container[str], matched: tuple[int, int] | None = None
               ) -> tuple[int, int]:
    """``(aligned, aligned non-optional)`` calls of a longest in-order alignment of the kept
    calls to the expected calls (``lcs_prf``; parallel steps unordered).

    Args:
        kept: the kept calls' indices into ``call_step`` (each call's step position).
        ml: the kept calls' maximum matching (per kept call its expected index or -1), or
            None when the caller has none.
        rows: gives the kept calls' compatibility rows (called only when needed).
        n_exp: the number of expected calls.
        knames: the kept calls' tool names; ``optional``: the optional tool names.
        matched: ``ml``'s (pairs, non-optional pairs) when the caller has counted them.

    Returns:
        The two counts for ``n_counted`` and ``prf_counts``. When ``ml`` runs in order
        across steps (``matching_in_order``) it is a longest common subsequence and its
        counts are returned; else the alignment is computed over ``rows``.

    Raises:
        Nothing for rows of indices below ``n_exp``.
    """
    if ml is not None and matching_in_order(kept, call_step, ml):
        if matched is not None:
            return matched
        n = m = 0
        for j, nm in zip(ml, knames):
            if j != -1:
                n += 1
                m += nm not in optional
        return n, m
    return _lcs_groups(step_groups(kept, call_step), [set(r) for r in rows()], n_exp,
                       [nm not in optional for nm in knames])


def _inputs(pred: TrajLike, expected: Any, args_mode: str | None, context: MatchContext | None,
            optional: Sequence[str]) -> tuple[Any, ...]:
    from .trajectory import _expected_list  # one reading of "expected" for every mode

    if args_mode is not None and args_mode not in ARGS_MODES:
        raise MetricInputError(f"unknown args_mode {args_mode!r}; known: {', '.join(ARGS_MODES)}")
    if isinstance(optional, str) or not all(isinstance(o, str) for o in optional):
        raise MetricInputError(f"optional must be a list of tool names, got {optional!r}")
    exp_calls, case = _expected_list(expected)
    opt = set(optional) | (set(case.optional_calls) if case else set())
    ctx = context_for(case, context)
    default_mode = case.args_mode if case else None
    calls, retried = calls_and_retries(pred, what="predicted trajectory")
    return exp_calls, opt, ctx, default_mode, calls, retried


def lcs_prf(pred: TrajLike, expected: Any, *, args_mode: str | None = None,
            context: MatchContext | None = None, optional: Sequence[str] = ()) -> PRFResult:
    """In-order partial credit: precision / recall / F1 of a longest common subsequence of
    matched calls (definition and source in the module docstring).

    Args:
        pred: a Trajectory (retried failures set aside, parallel steps unordered) or a list
            of ToolCall.
        expected: as ``trajectory_match`` (a Case, a reference trajectory, or a list of
            expected calls / names / dicts).
        args_mode: overrides the argument mode (else each expected call's, else the case's,
            else ``expected_keys``); ``"ignore"`` compares names only.
        context: a ``MatchContext`` for the matchers.
        optional: tool names whose unaligned calls do not count (added to a Case's
            ``optional_calls``).

    Returns:
        ``PRFResult`` with ``precision``, ``recall``, ``f1`` in [0, 1], ``score`` = F1,
        ``tp`` = L, ``passed`` None; ``parts["lcs"]`` = L.

    Raises:
        MetricInputError: bad inputs or an unknown args mode.

    Examples:
        ``a, c, b`` against ``a, b, d``: the longest common subsequence ``a, b`` has length
        2, so P = 2/3 and R = 2/3:

        >>> from trajcheck.model import ToolCall
        >>> r = lcs_prf([ToolCall("a"), ToolCall("c"), ToolCall("b")], ["a", "b", "d"])
        >>> r.tp, round(r.precision, 4), round(r.recall, 4)
        (2, 0.6667, 0.6667)
    """
    exp_calls, opt, ctx, default_mode, calls, retried = _inputs(pred, expected, args_mode,
                                                                  context, optional)
    kept = [i for i in range(len(calls)) if i not in retried]
    kept_calls = [calls[i] for i in kept]
    knames = [c.name for c in kept_calls]
    all_steps = ([s for s, _ in pred.iter_call_steps()] if isinstance(pred, Trajectory)
                 else list(range(len(calls))))
    cexp = compile_all(exp_calls)
    # the run's one maximum matching and rows (run_matching), or the rows built here
    sm = shared(pred, expected) if args_mode is None else None
    n_lcs, n_nonopt_aligned = lcs_counts(
        kept, all_steps, sm.ml if sm is not None else None,
        (lambda: sm.rows) if sm is not None else (  # type: ignore[union-attr]
            lambda: compatibility(kept_calls, cexp, args_mode, ctx, default_mode=default_mode)),
        len(cexp), knames, opt)
    counted = n_counted(n_lcs, sum(nm not in opt for nm in knames), n_nonopt_aligned)
    p, r, f = prf_counts(n_lcs, counted, len(cexp))
    reason = (f"LCS {n_lcs}: precision {p:.3f} ({n_lcs}/{counted} counted calls in order), "
              f"recall {r:.3f} ({n_lcs}/{len(cexp)} expected calls in order), F1 {f:.3f}")
    parts = {"precision": p, "recall": r, "f1": f, "lcs": n_lcs, "tp": n_lcs, "n_counted": counted,
             "n_expected": len(cexp), "n_predicted": len(calls), "retried_set_aside": sorted(retried),
             "args_mode": args_mode}
    return PRFResult("lcs_prf", f, reason, parts, None, p, r, f, n_lcs, counted, len(cexp))


def multiset_prf(pred: TrajLike, expected: Any, *, args_mode: str | None = "ignore",
                 context: MatchContext | None = None, optional: Sequence[str] = ()) -> PRFResult:
    """Unordered partial credit: precision / recall / F1 of a maximum one-to-one matching of
    predicted to expected calls, by default over names only (the multiset intersection).

    Args:
        pred: a Trajectory or a list of ToolCall.
        expected: as ``lcs_prf``.
        args_mode: defaults to ``"ignore"`` (names only); None uses the expected calls' /
            case's own argument modes.
        context: a ``MatchContext`` for the matchers.
        optional: as ``lcs_prf``.

    Returns:
        ``PRFResult`` (``score`` = F1, ``passed`` None).

    Raises:
        MetricInputError: bad inputs.

    Examples:
        ``{a, a, b}`` and ``{a, b, b}`` share ``{a, b}``: 2 of 3 on each side.

        >>> from trajcheck.model import ToolCall
        >>> r = multiset_prf([ToolCall("a"), ToolCall("a"), ToolCall("b")], ["a", "b", "b"])
        >>> r.tp, round(r.f1, 4)
        (2, 0.6667)

    Definition and source in the module docstring.
    """
    if args_mode == "ignore":  # names only: counts per name, no matching needed
        exp_calls, opt, calls, retried = _names_inputs(pred, expected, optional)
        return _name_counts_prf(calls, retried, exp_calls, opt)
    exp_calls, opt, ctx, default_mode, calls, retried = _inputs(pred, expected, args_mode,
                                                                  context, optional)
    r = prf_from_calls(calls, retried, exp_calls, sorted(opt), args_mode=args_mode,
                       default_mode=default_mode, ctx=ctx, name="multiset_prf")
    r.parts["args_mode"] = args_mode
    return r


def _names_inputs(pred: TrajLike, expected: Any, optional: Sequence[str]) -> tuple[Any, ...]:
    from .trajectory import _expected_list

    if isinstance(optional, str) or not all(isinstance(o, str) for o in optional):
        raise MetricInputError(f"optional must be a list of tool names, got {optional!r}")
    exp_calls, case = _expected_list(expected)
    opt = set(optional) | (set(case.optional_calls) if case else set())
    calls, retried = calls_and_retries(pred, what="predicted trajectory")
    return exp_calls, opt, calls, retried


def _name_counts_prf(calls: Sequence[Any], retried: frozenset[int], exp_calls: Sequence[Any],
                     opt: set[str]) -> PRFResult:
    """``prf_from_calls`` with ``args_mode="ignore"``, from counts: per name, min(calls whose
    arguments parsed or were not recorded, expected calls) are matched (any such pair is
    compatible); a call whose arguments did not parse never matches; unmatched calls of optional tools do not
    count (tests/test_trajectory_scores.py checks it equals ``tool_call_prf``)."""
    n_kept: dict[str, int] = {}  # per tool: kept calls, and those that can match by name
    n_ok: dict[str, int] = {}
    for i, c in enumerate(calls):
        if i not in retried:
            n_kept[c.name] = n_kept.get(c.name, 0) + 1
            if name_matchable(c):
                n_ok[c.name] = n_ok.get(c.name, 0) + 1
    want: dict[str, list[Any]] = {}
    for e in exp_calls:
        want.setdefault(e.name, []).append(e)
    tp, counted = name_counts(n_kept, n_ok, want, opt)
    p, r, f = prf_counts(tp, counted, len(exp_calls))
    reason = (f"precision {p:.3f} ({tp}/{counted} counted calls matched by name), recall {r:.3f} "
              f"({tp}/{len(exp_calls)} expected calls found), F1 {f:.3f}")
    parts = {"precision": p, "recall": r, "f1": f, "tp": tp, "n_counted": counted,
             "n_expected": len(exp_calls), "n_predicted": len(calls),
             "retried_set_aside": sorted(retried), "args_mode": "ignore"}
    return PRFResult("multiset_prf", f, reason, parts, None, p, r, f, tp, counted, len(exp_calls))


__all__ = ["LCS_MODES", "lcs_counts", "lcs_prf", "matching_in_order", "multiset_prf", "step_groups"]
