"""Trajectory match modes and the one table mapping every framework's mode names onto them.

Neutral modes (DESIGN.md, "Semantics that must be exactly right"), over the flat list of
tool calls with failed-and-retried attempts set aside, each under any argument mode:

=========== ==============================================================================
exact       same length and pairwise match in order (unmatched calls of optional tools may
            be skipped)
in_order    the expected calls form a subsequence of the predicted calls (extras anywhere)
unordered   one-to-one: every expected call matched and every predicted call matched (the
            same multiset; unmatched optional calls allowed)
superset    every expected call matched by a distinct predicted call; extras allowed
subset      every predicted call matched by a distinct expected call (or an optional call)
=========== ==============================================================================

Calls issued in one parallel step (one model turn) have no order among themselves in the
ordered modes: ``exact`` and ``in_order`` hold when some order of each step's calls makes
them hold (DESIGN.md policy, as for precedence). A list of ToolCall has one call per step.

Pairing is always a maximum one-to-one matching, never greedy. Precision/recall/F1-style
framework names map to :func:`trajcheck.metrics.calls.tool_call_prf`'s numbers (the multiset
scores; names only with ``args_mode="ignore"``), LCS-style ones to
:func:`trajcheck.metrics.trajectory_scores.lcs_prf`'s (in-order partial credit). The table of
framework mode names is :data:`trajcheck.metrics.trajectory_modes.MODE_TABLE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import MetricInputError
from ..match.matchers import MatchContext
from ..match.matching import _hopcroft_karp, compatibility, compile_all
from ..model import ARGS_MODES, Case, ExpectedCall, ToolCall, Trajectory
from .calls import TrajLike, calls_and_retries, context_for, prf_from_calls
from .result import MetricResult
from .trajectory_modes import (
    BINARY_MODES,
    DIALECTS,
    MODE_TABLE,
    NEUTRAL_MODES,
    SCORE_MODES,
    ModeRow,
    deepeval_mode,
    lookup_mode,
    normalize_mode,
    ragas_mode,
)
from .trajectory_scores import LCS_MODES, lcs_prf, multiset_prf, step_groups

# ---------------------------------------------------------------------------------------


def _as_expected(x: Any, k: int) -> ExpectedCall:
    if isinstance(x, ExpectedCall):
        return x
    if isinstance(x, str):
        return ExpectedCall(name=x)
    if isinstance(x, ToolCall):
        if not isinstance(x.args, Mapping):
            raise MetricInputError(f"reference call {k} ({x.name!r}) has arguments that did not "
                                   "parse; it cannot serve as an expected call")
        return ExpectedCall(name=x.name, args=dict(x.args))
    if isinstance(x, Mapping):
        if "tool_name" in x:  # Vertex {"tool_name", "tool_input"}
            return ExpectedCall(name=x["tool_name"], args=x.get("tool_input"))
        if "name" not in x:
            raise MetricInputError(f"reference call {k}: an object needs 'name', got keys {sorted(x)}")
        return ExpectedCall.from_dict(x)
    raise MetricInputError(f"reference call {k}: cannot use a {type(x).__name__} as an expected call")


def _type_of(tool_type: Any) -> str:
    t = str(getattr(tool_type, "value", tool_type) or "function").lower()
    return "function" if t in ("function", "custom") else t


def typed_name(name: str, tool_type: Any) -> str:
    """``name`` for a dialect that compares tool types: unchanged for a function tool, else
    ``"<name> [<type>]"`` (so an MCP call never pairs with a function call of the same name)."""
    t = _type_of(tool_type)
    return name if t == "function" else f"{name} [{t}]"


def _typed(pred: Any, expected: Any) -> tuple[Any, Any]:
    """``(pred, expected)`` with every call named by :func:`typed_name`: the predicted calls
    by their ``tool_type``, expected ``ToolCall``s by theirs and expected dicts by their
    ``tool_type`` (or DeepEval's ``type``) key; a Case's expected calls are function tools."""
    from dataclasses import replace

    if isinstance(pred, Trajectory):
        renamed: dict[str, str] = {}
        steps = []
        for st in pred.steps:
            if st.tool_calls:
                calls = tuple(replace(c, name=typed_name(c.name, c.tool_type)) for c in st.tool_calls)
                for c0, c1 in zip(st.tool_calls, calls):
                    if c0.call_id is not None:
                        renamed[c0.call_id] = c1.name
                st = replace(st, tool_calls=calls)
            r = st.tool_result
            if r is not None and r.call_id in renamed:
                st = replace(st, tool_result=replace(r, name=renamed[r.call_id]))
            steps.append(st)
        pred = replace(pred, steps=tuple(steps))
    elif isinstance(pred, (list, tuple)):
        pred = [replace(c, name=typed_name(c.name, c.tool_type)) if isinstance(c, ToolCall) else c for c in pred]
    if isinstance(expected, Trajectory):
        expected = expected.tool_calls()
    if isinstance(expected, (list, tuple)):
        out: list[Any] = []
        for x in expected:
            if isinstance(x, ToolCall):
                x = replace(x, name=typed_name(x.name, x.tool_type))
            elif isinstance(x, Mapping) and "name" in x and ("tool_type" in x or "type" in x):
                x = {**{k: v for k, v in x.items() if k not in ("tool_type", "type")},
                     "name": typed_name(x["name"], x.get("tool_type", x.get("type")))}
            out.append(x)
        expected = out
    return pred, expected


def _expected_list(expected: Any) -> tuple[list[ExpectedCall], Case | None]:
    if isinstance(expected, Case):
        return list(expected.expected_calls), expected
    if isinstance(expected, Trajectory):
        return [_as_expected(c, k) for k, c in enumerate(expected.tool_calls())], None
    if isinstance(expected, (list, tuple)):
        return [_as_expected(c, k) for k, c in enumerate(expected)], None
    raise MetricInputError(
        f"expected must be a Case, a Trajectory or a list of expected calls, got {type(expected).__name__}")


def _exact_ok(kept_calls: Sequence[ToolCall], adj: list[set[int]], n_exp: int,
              optional: set[str]) -> bool:
    if not any(c.name in optional for c in kept_calls):
        return len(kept_calls) == n_exp and all(i in adj[i] for i in range(n_exp))
    reach = {0}
    for i, c in enumerate(kept_calls):
        nxt: set[int] = set()
        skip = c.name in optional
        for j in reach:
            if j < n_exp and j in adj[i]:
                nxt.add(j + 1)
            if skip:
                nxt.add(j)
        reach = nxt
        if not reach:
            return False
    return n_exp in reach


def _window_matching(group: Sequence[int], adj: list[set[int]], j: int, t: int) -> list[int]:
    """Maximum matching of the calls in ``group`` (kept indices) to expected ``j..j+t-1``:
    for each call its matched expected index, or -1."""
    sub = [[e - j for e in sorted(adj[i]) if j <= e < j + t] for i in group]
    ml = _hopcroft_karp(sub, t)
    return [-1 if m == -1 else m + j for m in ml]


def _groups(steps: Sequence[int]) -> list[list[int]]:
    """Kept call indices grouped by step (calls of one parallel step together), in order."""
    return step_groups(range(len(steps)), steps)


def _exact_ok_steps(kept_calls: Sequence[ToolCall], adj: list[set[int]], n_exp: int,
                    optional: set[str], steps: Sequence[int]) -> bool:
    """``exact`` where calls of one parallel step have no order among themselves: the steps'
    calls, each step's in some order, match the expected calls position by position
    (unmatched optional calls skipped)."""
    reach = {0}
    for g in _groups(steps):
        must = [i for i in g if kept_calls[i].name not in optional]
        nxt: set[int] = set()
        for j in reach:
            for t in range(len(must), len(g) + 1):
                if j + t > n_exp:
                    break
                ml = _window_matching(g, adj, j, t)
                if sum(m != -1 for m in ml) != t:
                    continue  # the window cannot be filled from this step
                # every non-optional call must be matched too (with both sides coverable, one
                # matching covers both: Mendelsohn-Dulmage)
                if all(m != -1 for m in _window_matching(must, adj, j, t)):
                    nxt.add(j + t)
        reach = nxt
        if not reach:
            return False
    return n_exp in reach


def _in_order_ok_steps(adj: list[set[int]], n_exp: int, steps: Sequence[int]) -> bool:
    """``in_order`` where calls of one parallel step have no order among themselves: each step
    takes the longest run of the next expected calls it can match one-to-one (taking the most
    is never worse for a subsequence)."""
    j = 0
    for g in _groups(steps):
        t = 0
        while j + t < n_exp and sum(m != -1 for m in _window_matching(g, adj, j, t + 1)) == t + 1:
            t += 1
        j += t
    return j == n_exp


def _in_order_ok(adj: list[set[int]], n_exp: int) -> bool:
    # leftmost greedy embedding is optimal for subsequence tests under any compatibility relation
    j = 0
    for row in adj:
        if j < n_exp and j in row:
            j += 1
    return j == n_exp


def trajectory_match(pred: TrajLike, expected: Any, mode: str = "superset", *,
                     dialect: str | None = None, args_mode: str | None = None,
                     context: MatchContext | None = None,
                     optional: Sequence[str] = ()) -> MetricResult:
    """Whether the predicted calls match the expected ones in ``mode``.

    Args:
        pred: a Trajectory (failed-and-retried attempts are set aside, DESIGN.md) or a list
            of ToolCall.
        expected: a Case (its expected calls, optional calls, args mode and input are used), a
            reference Trajectory or list of ToolCall (args compared), or a list of
            ExpectedCall / names / ``{"name", "args", "match"}`` / Vertex ``{"tool_name",
            "tool_input"}`` dicts.
        mode: a neutral mode (module docstring) or, with ``dialect``, a framework's name from
            :data:`MODE_TABLE` (``mode="any_order_match", dialect="vertex"`` means superset).
        dialect: the framework whose mode names ``mode`` uses.
        args_mode: overrides the argument mode (else the table row's, else each call's, else
            the case's, else ``expected_keys``).
        context: a ``MatchContext`` for the matchers.
        optional: tool names whose unmatched calls are ignored (added to a Case's
            ``optional_calls``).

    Returns:
        ``MetricResult``. Binary modes give ``score`` 1.0/0.0 and ``passed``;
        ``precision``/``recall``/``f1`` (Vertex trajectory_precision, promptfoo tool-call-f1)
        give ``tool_call_prf``'s value and ``lcs_precision``/``lcs_recall``/``lcs_f1``
        (pydantic-evals TrajectoryMatch in_order) ``trajectory_scores.lcs_prf``'s, each with
        ``passed`` = value == 1. ``parts["mode"]`` is the neutral mode.

    Raises:
        MetricInputError: an unknown mode or dialect, or bad inputs.

    Examples:
        The run holds the expected call among others (superset) but is not exactly it:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> run = [ToolCall("get_order", {"order": 7}), ToolCall("refund", {"order": 7})]
        >>> trajectory_match(run, case, "superset").score, trajectory_match(run, case, "exact").score
        (1.0, 0.0)
        >>> trajectory_match(run, ["get_order", "refund"], "in_order").passed
        True

    Pairing is maximum one-to-one. A row that compares tool types (DeepEval's) pairs calls of
    the same ``tool_type`` only (an expected ``ToolCall``'s type, or a dict's
    ``tool_type``/``type``; a Case's expected calls and calls without a type are function
    tools).
    """
    row = lookup_mode(mode, dialect)
    neutral = mode if row is None else row.neutral
    if row is not None and row.compares_tool_type:
        pred, expected = _typed(pred, expected)
    eff_args_mode = args_mode if args_mode is not None else (row.args_mode if row else None)
    if eff_args_mode is not None and eff_args_mode not in ARGS_MODES:
        raise MetricInputError(f"unknown args_mode {eff_args_mode!r}; known: {', '.join(ARGS_MODES)}")
    exp_calls, case = _expected_list(expected)
    opt = set(optional) | (set(case.optional_calls) if case else set())
    ctx = context_for(case, context)
    default_mode = case.args_mode if case else None
    calls, retried = calls_and_retries(pred, what="predicted trajectory")
    base_parts: dict[str, Any] = {"mode": neutral, "requested_mode": mode, "dialect": dialect,
                                  "args_mode": eff_args_mode, "retried_set_aside": sorted(retried)}
    if neutral in LCS_MODES:
        lr = lcs_prf(pred, expected, args_mode=eff_args_mode, context=context, optional=optional)
        score = {"lcs_precision": lr.precision, "lcs_recall": lr.recall, "lcs_f1": lr.f1}[neutral]
        return MetricResult(name="trajectory_match", score=score,
                            reason=f"{neutral} {score:.3f}: {lr.reason}",
                            parts={**base_parts, **lr.parts, "args_mode": eff_args_mode},
                            passed=score == 1.0)
    if neutral in SCORE_MODES:
        r = prf_from_calls(calls, retried, exp_calls, sorted(opt), args_mode=eff_args_mode,
                           default_mode=default_mode, ctx=ctx)
        score = {"precision": r.precision, "recall": r.recall, "f1": r.f1}[neutral]
        return MetricResult(name="trajectory_match", score=score,
                            reason=f"{neutral} {score:.3f}: {r.reason}",
                            parts={**base_parts, **r.parts}, passed=score == 1.0)
    if retried:
        kept = [i for i in range(len(calls)) if i not in retried]
        kept_calls = [calls[i] for i in kept]
    else:
        kept, kept_calls = list(range(len(calls))), calls
    # the step of each kept call: calls of one parallel step have no order among themselves
    all_steps = ([s for s, _ in pred.iter_call_steps()] if isinstance(pred, Trajectory)
                 else list(range(len(calls))))
    kept_steps = [all_steps[i] for i in kept]
    parallel = len(set(kept_steps)) < len(kept_steps)
    cexp = compile_all(exp_calls)
    adj_l = compatibility(kept_calls, cexp, eff_args_mode, ctx, default_mode=default_mode)
    adj = [set(a) for a in adj_l]
    n_exp = len(cexp)
    ml = _hopcroft_karp(adj_l, n_exp)
    matched_exp = {j for j in ml if j != -1}
    missing = [j for j in range(n_exp) if j not in matched_exp]
    extra = [kept[i] for i, j in enumerate(ml) if j == -1 and kept_calls[i].name not in opt]
    if neutral == "superset":
        ok = not missing
    elif neutral == "subset":
        ok = not extra
    elif neutral == "unordered":
        ok = not missing and not extra
    elif neutral == "in_order":
        ok = _in_order_ok_steps(adj, n_exp, kept_steps) if parallel else _in_order_ok(adj, n_exp)
    elif neutral == "exact":
        ok = (_exact_ok_steps(kept_calls, adj, n_exp, opt, kept_steps) if parallel
              else _exact_ok(kept_calls, adj, n_exp, opt))
    else:  # pragma: no cover - lookup_mode only yields known modes
        raise MetricInputError(f"unknown trajectory mode {mode!r}")
    if ok:
        n = len(kept_calls)
        reason = f"{neutral} match: {n} call{'' if n == 1 else 's'} against {n_exp} expected"
    else:
        bits = []
        if missing:
            bits.append("missing " + ", ".join(exp_calls[j].name for j in missing[:5]))
        if extra:
            bits.append("unexpected " + ", ".join(f"{calls[i].name} (call {i})" for i in extra[:5]))
        if not bits:
            bits.append("calls present but not in the required order" if neutral != "exact"
                        else "calls present but not position by position")
        reason = f"no {neutral} match: " + "; ".join(bits)
    parts = {**base_parts, "missing_expected": missing, "unexpected_calls": extra,
             "pairs": [[kept[i], j] for i, j in enumerate(ml) if j != -1],
             "n_predicted": len(calls), "n_expected": n_exp}
    return MetricResult(name="trajectory_match", score=1.0 if ok else 0.0, reason=reason,
                        parts=parts, passed=ok)


__all__ = [
    "BINARY_MODES",
    "DIALECTS",
    "LCS_MODES",
    "MODE_TABLE",
    "NEUTRAL_MODES",
    "SCORE_MODES",
    "ModeRow",
    "deepeval_mode",
    "lookup_mode",
    "normalize_mode",
    "lcs_prf",
    "multiset_prf",
    "ragas_mode",
    "trajectory_match",
]
