"""Step-level evaluation: one verdict per expected call and per predicted call.

``step_eval`` builds the table a report shows: for every expected call, whether it was made,
by which predicted call and with the right arguments; for every predicted call, a verdict
(``matched``, ``wrong_args``, ``optional``, ``retried``, ``unnecessary``, ``forbidden``,
``duplicate``, ``parse_error``) with a reason. ``metrics.sequences.call_rates`` and
``metrics.composite`` read their counts from it, so the table and the scores always agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..match.matching import _hopcroft_karp, call_matching, match_calls, retried_failures
from ..model import Case, ExpectedCall, ToolCall
from ..score.run_matching import shared
from ..score.runmemo import memoized
from .calls import TrajLike, as_trajectory, context_for
from .formulas import duplicates_from, n_counted, prf_counts
from .result import MetricResult

#: Verdicts, in the priority used when several flags apply to one predicted call.
VERDICTS: tuple[str, ...] = ("forbidden", "retried", "parse_error", "matched", "wrong_args",
                             "duplicate", "optional", "unnecessary")


@dataclass(frozen=True)
class ExpectedRow:
    """One expected call's line in the table.

    ``made``: some counted predicted call of that tool was paired with it (by name);
    ``args_ok``: that call's arguments match too (None when not made); ``pred_index``: the
    paired call's index in ``traj.tool_calls()`` or None.
    """

    index: int
    name: str
    made: bool
    args_ok: bool | None
    pred_index: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PredictedRow:
    """One predicted call's line: ``verdict`` (highest-priority flag in ``VERDICTS`` order),
    every applicable ``flags``, the paired expected index (full or name-only) and a reason."""

    index: int
    step: int
    name: str
    verdict: str
    flags: tuple[str, ...]
    exp_index: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = dataclasses.asdict(self)
        d["flags"] = list(self.flags)
        return d


@dataclass(frozen=True)
class StepEval(MetricResult):
    """``MetricResult`` plus the two tables (``expected`` and ``predicted`` rows)."""

    expected: tuple[ExpectedRow, ...] = ()
    predicted: tuple[PredictedRow, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus both tables."""
        d = super().to_dict()
        d["expected"] = [r.to_dict() for r in self.expected]
        d["predicted"] = [r.to_dict() for r in self.predicted]
        return d


def effective_expected(case: Case) -> list[ExpectedCall]:
    """``case.expected_calls`` with ``case.args_mode`` filled into calls that set none.

    Priority of the argument mode: the caller's ``args_mode`` > the expected call's own >
    the case's > ``expected_keys`` (``matching.call_matches`` default).
    """
    if case.args_mode is None:
        return list(case.expected_calls)
    return [e if e.args_mode is not None else dataclasses.replace(e, args_mode=case.args_mode)
            for e in case.expected_calls]


class _Unkeyable(Exception):
    pass


def _canon(v: Any) -> Any:
    """A hashable key equal for two values exactly when ``matchers.exact_equal`` holds.

    Raises ``_Unkeyable`` for NaN (equal to nothing) and unhashable foreign objects.
    """
    t = type(v)  # the plain types first, each as its isinstance branch below keys it
    if t is str:
        return ("s", v)
    if t is int:
        return ("n", v)
    if t is dict:
        return ("d", frozenset((k, _canon(x)) for k, x in v.items()))
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        if v != v:
            raise _Unkeyable
        return ("n", v)
    if isinstance(v, str):
        return ("s", v)
    if v is None:
        return ("z",)
    if isinstance(v, Mapping):
        return ("d", frozenset((k, _canon(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return ("l", tuple(_canon(x) for x in v))
    try:
        hash(v)
    except TypeError:
        raise _Unkeyable from None
    return ("o", type(v).__qualname__, v)


def canon_value(v: Any) -> Any:
    """Hashable key of a value, equal exactly when ``matchers.exact_equal`` holds; None for
    NaN, unhashable foreign objects or nesting too deep to key."""
    try:
        return _canon(v)
    except (_Unkeyable, RecursionError):
        return None


def call_key(call: ToolCall) -> Any:
    """Identity key of a call for duplicate detection: name plus arguments under the
    ``exact`` rule; None (never a duplicate) for unparsed arguments, NaN, unhashable
    values or nesting too deep to key.
    Source: seed 000 §2.5 (duplicate_call_rate: identical name + args).
    """
    if call.args is None:
        return None
    try:
        return (call.name, _canon(call.args))
    except (_Unkeyable, RecursionError):
        return None


def step_eval(traj: TrajLike, case: Case, *, args_mode: str | None = None,
              context: Any = None) -> StepEval:
    """Per-call verdicts of one run against one case (computed once per run within
    ``runmemo.per_run``).

    Args:
        traj: the run (calls indexed as in ``traj.tool_calls()``), or a list of ToolCall
            (``calls.as_trajectory``: no results, so nothing is retried; call i at step i).
        case: ``expected_calls``, ``optional_calls`` (exact tool names), ``forbidden_calls``
            (fnmatch patterns, case-sensitive) and ``args_mode``.
        args_mode: overrides every expected call's mode (``exact_keys``, ``expected_keys``,
            ``ignore``); None -> per call, then ``case.args_mode``, then ``expected_keys``.
        context: a ``matchers.MatchContext`` for semantic/judge/input-checked matchers.

    Returns:
        ``StepEval``: ``score`` = expected calls made with matching arguments / expected
        calls, in [0, 1]; None when the case expects no call. ``passed``: every expected call
        matched and no forbidden call (with nothing expected: no unnecessary and no forbidden
        call). ``parts``: ``n_expected``, ``matched``, ``name_matched`` (expected calls made
        by the right tool, with or without the right arguments), ``n_calls``, ``n_counted``
        and a count per verdict.

    Raises:
        MetricInputError: ``traj`` is neither a Trajectory nor a list of ToolCall.
        MatcherError: from the matching (unknown matcher, bad schema, args_mode).

    Examples:
        The refund has the wrong order number; the lookup was not expected:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> r = step_eval([ToolCall("refund", {"order": 8}), ToolCall("get_order")], case)
        >>> r.score, r.parts["name_matched"], r.parts["verdicts"]["wrong_args"]
        (0.0, 1, 1)

    Procedure (DESIGN.md "Semantics" and "Policies"):

    1. Failed-and-retried attempts (``matching.retried_failures``) are set aside: verdict
       ``retried``; they are never duplicate or unnecessary.
    2. The other ("counted") calls are paired with expected calls by the maximum
       one-to-one matching (``matching.match_calls``). Identical counted calls (same name,
       ``exact``-equal arguments) match the same expected calls, so their pairs are
       given to the earliest of them; the result is still a maximum matching.
    3. Unpaired counted calls are paired by tool name alone with still-unmade expected
       calls (a second maximum matching, ``args_mode="ignore"``): verdict ``wrong_args``.
       Because names form equivalence classes, matched + wrong_args equals the maximum
       name-only matching (``name_matched``).
    4. ``duplicate``: an unpaired counted call identical to an earlier counted call; per
       identity class the first ``max(m, 1)`` calls are not duplicates, where m is the
       number of the class's calls that matched an expected call (so expecting two
       identical calls makes two identical calls right). The earlier call did not fail:
       a failed call followed by an identical one is a retry, already set aside.
    5. ``optional``: an unpaired counted call whose name is in ``optional_calls``;
       ``unnecessary``: any other unpaired counted call (including ``wrong_args``,
       ``duplicate`` and ``parse_error`` ones, as a flag).
    6. ``forbidden``: the name matches a ``forbidden_calls`` pattern (every attempt,
       including retried ones); ``parse_error``: arguments did not parse (never match).
    """
    # call_rates and run_detail.call_detail both ask for it within one score_run
    return memoized("step_eval", (traj, case, context), args_mode,
                    lambda: _step_eval(traj, case, args_mode, context))


def _step_eval(traj: TrajLike, case: Case, args_mode: str | None, context: Any) -> StepEval:
    traj = as_trajectory(traj, what="step_eval")
    calls = traj.tool_calls()
    step_of = [si for si, _c in traj.iter_call_steps()]
    retried = retried_failures(traj)
    counted = [i for i in range(len(calls)) if i not in retried]
    exp = effective_expected(case)
    context = context_for(case, context)

    sm = shared(traj, case) if args_mode is None else None
    if sm is not None:  # the run's one matching (run_matching): its kept calls are ``counted``
        m = call_matching(sm.ml, len(exp))
    else:
        m = match_calls([calls[i] for i in counted], exp, args_mode=args_mode, context=context)
    pair_of: dict[int, int] = {counted[i]: j for i, j in m.pairs}

    # identity classes of counted calls; give each class's pairs to its earliest members
    classes: dict[Any, list[int]] = {}
    for i in counted:
        k = call_key(calls[i])
        if k is not None:
            classes.setdefault(k, []).append(i)
    duplicates: dict[int, int] = {}
    for members in classes.values():
        if len(members) < 2:
            continue
        js = sorted(pair_of.pop(i) for i in members if i in pair_of)
        for i, j in zip(members, js):
            pair_of[i] = j
        for i in members[duplicates_from(len(js)):]:
            duplicates[i] = members[0]

    unpaired = [i for i in counted if i not in pair_of]
    made = set(pair_of.values())
    left_exp = [j for j in range(len(exp)) if j not in made]
    name_pair: dict[int, int] = {}
    if unpaired and left_exp:
        if sm is not None:
            # by name alone, from the run's name rows: each unpaired call's expected calls
            # of its tool among those left, renumbered (what match_calls builds in "ignore")
            at_b = {j: b for b, j in enumerate(left_exp)}
            at_k = {i: k for k, i in enumerate(sm.kept)}
            name_rows = sm.name_rows()
            sub = [[at_b[j] for j in name_rows[at_k[i]] if j in at_b] for i in unpaired]
            m2 = call_matching(_hopcroft_karp(sub, len(left_exp)), len(left_exp))
        else:
            m2 = match_calls([calls[i] for i in unpaired], [exp[j] for j in left_exp],
                             args_mode="ignore", context=context)
        name_pair = {unpaired[a]: left_exp[b] for a, b in m2.pairs}

    optional = set(case.optional_calls)
    forb = tuple(case.forbidden_calls)
    rows: list[PredictedRow] = []
    for i, c in enumerate(calls):
        flags: list[str] = []
        reasons: dict[str, str] = {}
        pat = next((p for p in forb if fnmatchcase(c.name, p)), None) if forb else None
        if pat is not None:
            flags.append("forbidden")
            reasons["forbidden"] = f"matches forbidden pattern {pat!r}"
        if i in retried:
            flags.append("retried")
            reasons["retried"] = "failed and retried later (set aside; see error_recovery)"
        if c.args is None:
            flags.append("parse_error")
            reasons["parse_error"] = f"arguments did not parse: {c.args_parse_error or c.raw_args!r}"
        exp_index: int | None = None
        if i in pair_of:
            exp_index = pair_of[i]
            flags.append("matched")
            reasons["matched"] = f"matches expected call {exp_index} ({exp[exp_index].name})"
        elif i not in retried:
            if i in name_pair:
                exp_index = name_pair[i]
                flags.append("wrong_args")
                reasons["wrong_args"] = (f"right tool for expected call {exp_index} but the "
                                         "arguments do not match")
            if i in duplicates:
                flags.append("duplicate")
                reasons["duplicate"] = f"same name and arguments as call {duplicates[i]}"
            if c.name in optional:
                flags.append("optional")
                reasons["optional"] = "allowed optional call"
            else:
                flags.append("unnecessary")
                reasons["unnecessary"] = "matches no expected call"
        # flags were added in VERDICTS order, so the first is the verdict
        rows.append(PredictedRow(i, step_of[i], c.name, flags[0], tuple(flags), exp_index,
                                 reasons[flags[0]]))

    by_exp_full = {j: i for i, j in pair_of.items()}
    by_exp_name = {j: i for i, j in name_pair.items()}
    erows: list[ExpectedRow] = []
    for j, e in enumerate(exp):
        if j in by_exp_full:
            erows.append(ExpectedRow(j, e.name, True, True, by_exp_full[j],
                                     f"made by call {by_exp_full[j]} with matching arguments"))
        elif j in by_exp_name:
            erows.append(ExpectedRow(j, e.name, True, False, by_exp_name[j],
                                     f"call {by_exp_name[j]} used {e.name} with wrong arguments"))
        else:
            erows.append(ExpectedRow(j, e.name, False, None, None, f"no call of {e.name} made it"))

    n_exp = len(exp)
    n_matched = len(pair_of)
    counts = dict.fromkeys(VERDICTS, 0)
    n_forbidden = n_unnecessary = 0
    for r in rows:
        counts[r.verdict] += 1
        n_forbidden += "forbidden" in r.flags
        n_unnecessary += "unnecessary" in r.flags
    parts: dict[str, Any] = {"n_expected": n_exp, "matched": n_matched,
                             "name_matched": n_matched + len(name_pair),
                             "n_calls": len(calls), "n_counted": len(counted),
                             "verdicts": counts}
    missing = [r.name for r in erows if not r.made]
    if n_exp == 0:
        score = None
        passed = n_forbidden == 0 and n_unnecessary == 0
        reason = ("no call expected; " + (f"{len(counted)} counted calls, {n_unnecessary} "
                  f"unnecessary, {n_forbidden} forbidden" if calls else "none made"))
    else:
        # the matching's recall (tool_call_prf's over the same matching); n_counted as it
        # counts calls, though recall reads only the pairs and the expected calls
        n_nonopt = sum(calls[i].name not in optional for i in counted)
        n_matched_nonopt = sum(calls[i].name not in optional for i in pair_of)
        score = prf_counts(n_matched, n_counted(n_matched, n_nonopt, n_matched_nonopt), n_exp)[1]
        passed = n_matched == n_exp and n_forbidden == 0
        bits = [f"{n_matched}/{n_exp} expected calls made with matching arguments"]
        if len(name_pair):
            bits.append(f"{len(name_pair)} with wrong arguments")
        if missing:
            bits.append("missing " + ", ".join(missing))
        if n_forbidden:
            bits.append(f"{n_forbidden} forbidden")
        reason = "; ".join(bits)
    return StepEval("step_eval", score, reason, parts, passed, tuple(erows), tuple(rows))


__all__ = ["VERDICTS", "ExpectedRow", "PredictedRow", "StepEval", "call_key",
           "canon_value", "effective_expected", "step_eval"]
