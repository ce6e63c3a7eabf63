"""The outcome part of fast per-run scoring (``fast_scoring``): the verdict and its one-line
reason of ``metrics.outcome.outcome_from_calls`` for a case inside the fast path's scope
(every expected call ``exact``; no snapshots, replay or no-effect metadata, no required
response), from the run facts ``fast_scoring`` read once.

Only the gathering of missing and extra writes is its own (from the run's one matching);
the verdict, the reason's text and the closest-call ranking are ``metrics.outcome``'s
``outcome_verdict``, ``outcome_problems`` and ``closest_call_note``, fed the calls read
and their failed flags instead of a second join of results to calls; the difference
itself is ``explain.explain_exact``, the very phrase ``explain_mismatch`` gives for such a
call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from ..match.explain import explain_exact
from ..match.matching import _hopcroft_karp
from ..metrics.outcome import (
    closest_call_note,
    outcome_problems,
    outcome_verdict,
    unchanged_note,
    unchanged_writes,
    writes_made,
)
from ..model import Trajectory
from .case_plan import CasePlan


def outcome(cid: str, plan: CasePlan, cnames: list[str], cargs: list[Any],
            failed: list[bool] | None, kept: Sequence[int], knames: list[str],
            rows: list[list[int]], kml: list[int], all_paired: bool,
            pairs: Callable[[], list[Any]] | None, reasons: bool = True) -> tuple[bool, str | None]:
    """``metrics.outcome.outcome_from_calls`` (module doc) against the case of ``plan`` (id
    ``cid``): ``cnames``/``cargs`` every call's tool name and arguments, in run order,
    ``failed`` whether each failed (None: none did), ``kept`` the calls not set aside as
    retried failures, ``knames`` their tool names, ``rows``/``kml`` their compatibility rows
    and maximum matching against the expected calls, ``all_paired`` whether that matching
    pairs every kept call of a non-optional tool and every expected call; ``pairs`` gives
    the run's calls joined to results (``Trajectory.pairs``) when some result is a JSON
    object (only those can show a write changed nothing), else None; ``reasons`` False:
    a failing run's reason is not written (None; the verdict is the same)."""
    opt = plan.optional
    writes = plan.writes
    if failed is None and len(writes) == len(plan.exp_names):
        # every expected call is a write and no call failed: the calls set aside are the
        # optional ones, whose rows are empty, so the matching is the run's own one
        if all_paired:  # every write made, no other: no problem, outcome_verdict's True
            return True, writes_made(len(writes))
        if opt:
            pred_idx = [kept[k] for k, nm in enumerate(knames) if nm not in opt]
            ml = [kml[k] for k, nm in enumerate(knames) if nm not in opt]
        else:
            pred_idx, ml = list(kept), kml
    else:
        pos = plan.write_pos
        pred_idx = []
        out_rows: list[list[int]] = []
        for k, i in enumerate(kept):  # retried calls failed, so every write candidate is kept
            if cnames[i] in opt or (failed is not None and failed[i]):
                continue
            pred_idx.append(i)
            out_rows.append([pos[j] for j in rows[k]])  # a row holds calls of its own (write) tool
        ml = _hopcroft_karp(out_rows, len(writes))
    n_w = len(writes)
    if n_w == len(ml) and -1 not in ml:  # every call pairs with a write: no problem (as above)
        return True, writes_made(n_w)
    matched_w = set(ml)
    missing = [writes[b] for b in range(n_w) if b not in matched_w]
    extra = [pred_idx[a] for a, b in enumerate(ml) if b == -1]
    same: dict[int, int] = {}
    joined: list[Any] = []
    if extra and pairs is not None:
        joined = pairs()
        # the pairs are given, so unchanged_writes reads no trajectory
        same = unchanged_writes(cast(Trajectory, None), extra, joined)
        extra = [i for i in extra if i not in same]
    n_problems = len(missing) + len(extra)
    # the reason of no problem (every write left changed nothing), written only then
    made = "" if n_problems else writes_made(n_w) + unchanged_note(same, [c for c, _ in joined])
    problems: Iterable[str] = ()
    if reasons and n_problems:  # else outcome_verdict reads no problem
        unpaired = set(extra)
        problems = outcome_problems(
            cid, missing, extra, plan.exp_names,
            lambda j: closest_call_note(plan.exp_names[j], plan.exp_args[j], unpaired, cnames,
                                        cargs, failed, lambda i: _differs(plan, j, cargs[i])),
            cnames, cargs)  # lazy: the verdict reads the first problem only
    return outcome_verdict(problems, n_problems, made, reason=reasons)


def _differs(plan: CasePlan, j: int, args: Any) -> str | None:
    """``explain_mismatch``'s phrase for a call with arguments ``args`` against expected call
    ``j`` of the plan (every expected call in scope is ``exact``, so ``explain_exact`` gives
    it), or None when they match."""
    if args is None:
        return "arguments did not parse as a JSON object"
    if plan.exp_modes[j] == "ignore" or plan.exp_args[j] is None:
        return None
    return explain_exact(args, plan.exp_args[j], plan.exp_modes[j])


__all__ = ["outcome"]
