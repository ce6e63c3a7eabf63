"""The outcome part of fast per-run scoring (``fast_scoring``): the verdict and its one-line
reason of ``metrics.outcome.outcome_from_calls`` for a case inside the fast path's scope
(every expected call ``exact``; no snapshots, replay or no-effect metadata, no required
response), from the run facts ``fast_scoring`` read once.

The reason for a missing write names the closest call of its tool and where it differs,
as ``metrics.outcome._closest_call_note`` does, from the calls read and their failed
flags instead of a second join of results to calls; the difference itself is
``explain.explain_exact``, the very phrase ``explain_mismatch`` gives for such a call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from ..match.explain import explain_exact, value_diff
from ..match.matching import _hopcroft_karp
from ..metrics.outcome import unchanged_note, unchanged_writes, writes_made
from ..model import Trajectory
from .case_plan import CasePlan


def outcome(cid: str, plan: CasePlan, cnames: list[str], cargs: list[Any],
            failed: list[bool] | None, kept: Sequence[int], knames: list[str],
            rows: list[list[int]], kml: list[int], all_paired: bool,
            pairs: Callable[[], list[Any]] | None) -> tuple[bool, str]:
    """``metrics.outcome.outcome_from_calls`` (module doc) against the case of ``plan`` (id
    ``cid``): ``cnames``/``cargs`` every call's tool name and arguments, in run order,
    ``failed`` whether each failed (None: none did), ``kept`` the calls not set aside as
    retried failures, ``knames`` their tool names, ``rows``/``kml`` their compatibility rows
    and maximum matching against the expected calls, ``all_paired`` whether that matching
    pairs every kept call of a non-optional tool and every expected call; ``pairs`` gives
    the run's calls joined to results (``Trajectory.pairs``) when some result is a JSON
    object (only those can show a write changed nothing), else None."""
    opt = plan.optional
    writes = plan.writes
    if failed is None and len(writes) == len(plan.exp_names):
        # every expected call is a write and no call failed: the calls set aside are the
        # optional ones, whose rows are empty, so the matching is the run's own one
        if all_paired:  # every write made, no other: nothing missing or extra
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
    if n_w == len(ml) and -1 not in ml:  # every call pairs with a write: nothing missing or extra
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
    if n_problems:
        if missing:
            j = missing[0]
            why = closest_call_note(plan, j, set(extra), cnames, cargs, failed)
            first = f"case {cid!r}: expected call {j} ({plan.exp_names[j]}) not matched: {why}"
        else:
            i = extra[0]
            first = (f"case {cid!r}: unexpected state-changing call {i} of the run: "
                     f"{cnames[i]} {cargs[i]!r}")
        return False, first + (f" (and {n_problems - 1} more)" if n_problems > 1 else "")
    return True, writes_made(n_w) + unchanged_note(same, [c for c, _ in joined])


def closest_call_note(plan: CasePlan, j: int, unmatched: set[int], cnames: list[str],
                      cargs: list[Any], failed: list[bool] | None) -> str:
    """``metrics.outcome._closest_call_note`` for expected call ``j`` of the plan: the tool
    was never called, every call of it failed, or the closest successful call (most
    expected arguments equal, calls left unpaired by the matching first, then the
    earliest) and ``explain_mismatch``'s phrase for it."""
    name = plan.exp_names[j]
    same = [i for i, nm in enumerate(cnames) if nm == name]
    if not same:
        return "the tool was never called"
    ok = same if failed is None else [i for i in same if not failed[i]]
    if not ok:
        which = ", ".join(str(i) for i in same[:5]) + (", ..." if len(same) > 5 else "")
        return (f"{'every call' if len(same) > 1 else 'the call'} of the tool failed "
                f"({'calls' if len(same) > 1 else 'call'} {which} of the run)")
    eargs = plan.exp_args[j] or {}

    def closeness(i: int) -> tuple[int, int, int]:
        a = cargs[i]
        if a is None:
            return (1, 0 if i in unmatched else 1, i)
        n_eq = 0
        for k, v in eargs.items():
            if k in a:
                pv = a[k]
                t = type(v)
                if t is type(pv) and (t is str or t is int or t is bool):
                    n_eq += v == pv  # value_diff's verdict for these types
                elif value_diff(v, pv) is None:
                    n_eq += 1
        return (-n_eq, 0 if i in unmatched else 1, i)

    best = ok[0] if len(ok) == 1 else min(ok, key=closeness)
    args = cargs[best]
    mode = plan.exp_modes[j]
    if args is None:
        why: str | None = "arguments did not parse as a JSON object"
    elif mode == "ignore" or plan.exp_args[j] is None:
        why = None
    else:
        why = explain_exact(args, plan.exp_args[j], mode)
    if why is None:
        return f"call {best} of the run matches it but is paired with another expected call"
    return f"closest call {best} of the run differs: {why}"


__all__ = ["closest_call_note", "outcome"]
