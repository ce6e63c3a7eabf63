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
framework names map to :func:`trajcheck.metrics.calls.tool_call_prf`'s numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from ..matchers import MatchContext
from ..matching import _hopcroft_karp, compatibility, compile_all
from ..model import ARGS_MODES, Case, ExpectedCall, ToolCall, Trajectory
from .calls import TrajLike, calls_and_retries, context_for, prf_from_calls
from .result import MetricResult

BINARY_MODES: tuple[str, ...] = ("exact", "in_order", "unordered", "superset", "subset")
SCORE_MODES: tuple[str, ...] = ("precision", "recall", "f1")
NEUTRAL_MODES: tuple[str, ...] = BINARY_MODES + SCORE_MODES


@dataclass(frozen=True)
class ModeRow:
    """One framework mode name and its neutral meaning.

    ``dialect``: framework; ``name``: the framework's own name (``aliases`` are other
    spellings); ``neutral``: one of NEUTRAL_MODES; ``args_mode``: the argument mode the
    framework's metric implies (None = the caller's / case's); ``documented``: what the
    framework's docs say; ``implementation_differs``: where the framework's own code
    differs from that (empty when it does not, as far as the research notes found);
    ``source``: where that was established.
    """

    dialect: str
    name: str
    neutral: str
    args_mode: str | None
    documented: str
    implementation_differs: str
    source: str
    aliases: tuple[str, ...] = ()


_AE_GREEDY = ("pairs calls greedily (first fit), so with a non-equivalence argument matcher "
              "(subset/superset/custom) it returns False where a one-to-one pairing exists")
_AE_SRC = "research/langsmith_agentevals.md §2.3-2.5 (agentevals 0.0.9, openevals 0.2.2, RAN)"

MODE_TABLE: tuple[ModeRow, ...] = (
    # agentevals / openevals create_trajectory_match_evaluator(trajectory_match_mode=...)
    ModeRow("agentevals", "strict", "exact", None,
            "same tool calls in the same order",
            "compares the message skeleton: same message count and role at each position, "
            "parallel calls within one message as an unordered multiset, message content "
            "ignored; an extra user/tool/system message fails; " + _AE_GREEDY, _AE_SRC),
    ModeRow("agentevals", "unordered", "unordered", None,
            "same tool calls in any order",
            _AE_GREEDY + "; agentevals 0.0.9 passes (reference, output) to the argument "
            "matcher, inverting tool_args_match_mode subset/superset", _AE_SRC),
    ModeRow("agentevals", "superset", "superset", None,
            "output contains every reference call; extras allowed", _AE_GREEDY, _AE_SRC),
    ModeRow("agentevals", "subset", "subset", None,
            "every output call is in the reference",
            _AE_GREEDY + "; agentevals 0.0.9 swaps argument order; outputs=None scores as a "
            "pass (openevals PR #237)", _AE_SRC),
    ModeRow("openevals", "strict", "exact", None,
            "same tool calls in the same order",
            "message skeleton as agentevals strict (roles per position, parallel calls "
            "unordered, content ignored); " + _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "unordered", "unordered", None,
            "same tool calls in any order", _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "superset", "superset", None,
            "output contains every reference call; extras allowed", _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "subset", "subset", None,
            "every output call is in the reference",
            _AE_GREEDY + "; outputs=None scores as a pass (PR #237 open)", _AE_SRC),
    # Vertex AI Gen AI evaluation (server-side; docs only)
    ModeRow("vertex", "trajectory_exact_match", "exact", None,
            "predicted identical to reference: same calls, same order",
            "unverified: computed server-side; argument comparison method not documented",
            "research/langsmith_agentevals.md §4 [DOCS]", ("exact_match",)),
    ModeRow("vertex", "trajectory_in_order_match", "in_order", None,
            "all reference calls in the same order; extra calls allowed",
            "unverified: computed server-side", "research/langsmith_agentevals.md §4 [DOCS]",
            ("in_order_match",)),
    ModeRow("vertex", "trajectory_any_order_match", "superset", None,
            "all reference calls in any order; extra calls allowed (superset, despite the "
            "name; not multiset equality)",
            "unverified: computed server-side", "research/langsmith_agentevals.md §4 [DOCS]",
            ("any_order_match",)),
    ModeRow("vertex", "trajectory_precision", "precision", None,
            "predicted calls that appear in the reference / predicted calls",
            "unverified; duplicate handling undocumented (wording suggests membership, not "
            "one-to-one); trajcheck pairs one-to-one",
            "research/langsmith_agentevals.md §4 [DOCS]", ("precision",)),
    ModeRow("vertex", "trajectory_recall", "recall", None,
            "reference calls that appear in predicted / reference calls",
            "unverified; duplicate handling undocumented; trajcheck pairs one-to-one",
            "research/langsmith_agentevals.md §4 [DOCS]", ("recall",)),
    # Google ADK TrajectoryEvaluator (open source)
    ModeRow("adk", "EXACT", "exact", None, "positional name and args ==", "",
            "research/langsmith_agentevals.md §4 [READ]"),
    ModeRow("adk", "IN_ORDER", "in_order", None, "reference a subsequence", "",
            "research/langsmith_agentevals.md §4 [READ]"),
    ModeRow("adk", "ANY_ORDER", "superset", None,
            "each reference call found, each actual call consumed once", "",
            "research/langsmith_agentevals.md §4 [READ]"),
    # promptfoo 0.123.1 assertions
    ModeRow("promptfoo", "trajectory:tool-used", "superset", "ignore",
            "every listed tool appears at least once",
            "names only with set semantics: a tool listed twice needs one call; glob "
            "patterns, case-insensitive; reads OpenTelemetry spans only (no trace = ERROR)",
            "research/promptfoo.md §3.F (RAN)", ("tool-used",)),
    ModeRow("promptfoo", "trajectory:tool-sequence", "in_order", "ignore",
            "listed tools occur in order as a subsequence (mode in_order, the default)",
            "names only; glob patterns", "research/promptfoo.md §3.F (RAN)",
            ("tool-sequence", "trajectory:tool-sequence(mode=in_order)",
             "tool-sequence(mode=in_order)")),
    ModeRow("promptfoo", "trajectory:tool-sequence(mode=exact)", "exact", "ignore",
            "same length and each position matches",
            "names only; a '*' step matches any tool", "research/promptfoo.md §3.F (RAN)",
            ("tool-sequence(mode=exact)",)),
    ModeRow("promptfoo", "trajectory:tool-args-match", "superset", "expected_keys",
            "some call of the named tool has the expected args (mode partial, the default)",
            "one expected call per assertion; partial recurses into objects and needs "
            "arrays of equal length; deep strict equality so '1' != 1; 'defaults' and "
            "'ignore' options", "research/promptfoo.md §3.F (RAN)",
            ("tool-args-match", "trajectory:tool-args-match(mode=partial)",
             "tool-args-match(mode=partial)")),
    ModeRow("promptfoo", "trajectory:tool-args-match(mode=exact)", "superset", "exact_keys",
            "some call of the named tool has exactly the expected args",
            "one expected call per assertion; deep strict equality",
            "research/promptfoo.md §3.F (RAN)", ("tool-args-match(mode=exact)",)),
    ModeRow("promptfoo", "tool-call-f1", "f1", "ignore",
            "F1 of called vs expected tool names",
            "sets of names: duplicates collapse, order and arguments ignored; not-tool-call-f1 "
            "flips pass but keeps the raw F1 as score (PR #10120)",
            "research/promptfoo.md §3.B (RAN)"),
    # RAGAS 0.4.3
    ModeRow("ragas", "ToolCallAccuracy(strict_order=True)", "exact", None,
            "the predicted calls match the reference calls in order, with argument accuracy",
            "0.4.3: gate = equal name sequences (any length difference gives 0), then the "
            "mean over positions of per-reference-key str() equality (graded; extra predicted "
            "keys ignored; 1 != 1.0, '1' == 1, nested dict key order matters)",
            "research/deepeval_ragas.md §2 (RAN)", ("ToolCallAccuracy",)),
    ModeRow("ragas", "ToolCallAccuracy(strict_order=False)", "unordered", None,
            "the same calls in any order",
            "0.4.3 pairs calls by sorting both lists on str(args) and zipping, not a matching "
            "(R7); any length difference gives 0", "research/deepeval_ragas.md §2, R7 (RAN)"),
    ModeRow("ragas", "ToolCallF1", "f1", None,
            "F1 of predicted vs reference tool calls",
            "sets of (name, args): duplicates collapse; both empty gives 0.0; hash equality "
            "makes 1 == 1.0 == True; rounded to 4 decimals",
            "research/deepeval_ragas.md §2, R3/R8 (RAN)"),
    # DeepEval 4.3.1 ToolCorrectnessMetric
    ModeRow("deepeval", "ToolCorrectness", "recall", None,
            "fraction of expected tools that were called (extras not penalised)",
            "greedy pairing with a value-based used set: identical duplicate calls under-score "
            "(#3141); with argument partial credit the score depends on expected-list order "
            "(#3338); arguments get partial credit over the union of keys",
            "research/deepeval_ragas.md §1.5, D1/D2 (RAN)",
            ("ToolCorrectnessMetric", "ToolCorrectness(should_consider_ordering=False,"
             "should_exact_match=False)")),
    ModeRow("deepeval", "ToolCorrectness(should_consider_ordering=True)", "in_order", None,
            "expected tools called in order (docs: a reordering with a repeat counts as correct)",
            "graded weighted LCS / len(expected), not 0/1; the docs' claim is wrong (#3014)",
            "research/deepeval_ragas.md §1.5, D4 (RAN)",
            ("ToolCorrectnessMetric(should_consider_ordering=True)",
             "ToolCorrectness(should_consider_ordering=True,should_exact_match=False)")),
    ModeRow("deepeval", "ToolCorrectness(should_exact_match=True)", "exact", None,
            "same calls, same order, same length",
            "score right; the reason text listed bogus type mismatches (#3245)",
            "research/deepeval_ragas.md §1.5, D5 (RAN)",
            ("ToolCorrectnessMetric(should_exact_match=True)",
             "ToolCorrectness(should_consider_ordering=True,should_exact_match=True)",
             "ToolCorrectness(should_consider_ordering=False,should_exact_match=True)")),
)

DIALECTS: tuple[str, ...] = tuple(dict.fromkeys(r.dialect for r in MODE_TABLE))


def _key(s: str) -> str:
    k = re.sub(r"[\s_\-:]", "", s.lower())
    k = k.replace("metric(", "(")
    if k.endswith("metric"):
        k = k[: -len("metric")]
    return k


def _row_keys(r: ModeRow) -> set[str]:
    keys = {_key(r.name)} | {_key(a) for a in r.aliases}
    more = set()
    for k in keys:
        if k.startswith("trajectory") and len(k) > len("trajectory"):
            more.add(k[len("trajectory"):])
    return keys | more


_INDEX: dict[tuple[str, str], ModeRow] = {}
for _r in MODE_TABLE:
    for _k in _row_keys(_r):
        _INDEX[(_r.dialect, _k)] = _r


def lookup_mode(mode: str, dialect: str | None = None) -> ModeRow | None:
    """The MODE_TABLE row for ``mode`` in ``dialect``; None for a neutral name with no dialect.

    Spelling is forgiving: case, spaces, ``_``, ``-`` and ``:`` are ignored, as are a
    ``trajectory`` prefix and a ``Metric`` suffix. With ``dialect`` None, ``mode`` must be a
    neutral mode or a name that means the same neutral mode in every dialect that has it.
    Raises MetricInputError for an unknown dialect or mode (listing the known ones).
    """
    if not isinstance(mode, str):
        raise MetricInputError(f"mode must be a string, got {mode!r}")
    if dialect is None:
        if mode in NEUTRAL_MODES:
            return None
        k = _key(mode)
        rows = [r for (d, kk), r in _INDEX.items() if kk == k]
        if not rows:
            raise MetricInputError(
                f"unknown trajectory mode {mode!r}; neutral modes: {', '.join(NEUTRAL_MODES)}; "
                f"or give dialect= one of {', '.join(DIALECTS)}")
        if len({(r.neutral, r.args_mode) for r in rows}) > 1:
            raise MetricInputError(
                f"mode {mode!r} means different things in {', '.join(sorted({r.dialect for r in rows}))}; "
                "pass dialect=")
        return rows[0]
    d = dialect.lower().strip()
    if d not in DIALECTS:
        raise MetricInputError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    row = _INDEX.get((d, _key(mode)))
    if row is None:
        names = [r.name for r in MODE_TABLE if r.dialect == d]
        raise MetricInputError(f"unknown {d} mode {mode!r}; known: {', '.join(names)}")
    return row


def normalize_mode(mode: str, dialect: str | None = None) -> str:
    """The neutral mode name (one of NEUTRAL_MODES) for a framework's ``mode`` in ``dialect``.

    ``normalize_mode("any_order_match", "vertex") == "superset"``;
    ``normalize_mode("strict", "agentevals") == "exact"``. Raises MetricInputError as
    :func:`lookup_mode`.
    """
    row = lookup_mode(mode, dialect)
    return mode if row is None else row.neutral


def deepeval_mode(should_consider_ordering: bool = False, should_exact_match: bool = False) -> str:
    """The MODE_TABLE name for a DeepEval ToolCorrectnessMetric configuration
    (``should_exact_match`` wins over ordering, as in DeepEval)."""
    if should_exact_match:
        return "ToolCorrectness(should_exact_match=True)"
    if should_consider_ordering:
        return "ToolCorrectness(should_consider_ordering=True)"
    return "ToolCorrectness"


def ragas_mode(metric: str = "ToolCallAccuracy", strict_order: bool = True) -> str:
    """The MODE_TABLE name for a RAGAS metric (``ToolCallAccuracy`` or ``ToolCallF1``)."""
    if _key(metric) == "toolcallf1":
        return "ToolCallF1"
    return f"ToolCallAccuracy(strict_order={bool(strict_order)})"


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
    out: list[list[int]] = []
    last = None
    for i, s in enumerate(steps):
        if out and s == last:
            out[-1].append(i)
        else:
            out.append([i])
        last = s
    return out


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

    ``pred``: a Trajectory (failed-and-retried attempts are set aside, DESIGN.md) or a list
    of ToolCall. ``expected``: a Case (its expected calls, optional calls, args mode and
    input are used), a reference Trajectory or list of ToolCall (args compared), or a list
    of ExpectedCall / names / ``{"name", "args", "match"}`` / Vertex ``{"tool_name",
    "tool_input"}`` dicts. ``mode``: a neutral mode (module docstring) or, with
    ``dialect``, a framework's name from :data:`MODE_TABLE` (``mode="any_order_match",
    dialect="vertex"`` means superset). ``optional``: tool names whose unmatched calls are
    ignored (added to a Case's ``optional_calls``). ``args_mode``: overrides the argument
    mode (else the table row's, else each call's, else the case's, else ``expected_keys``).

    Binary modes give score 1.0/0.0 and ``passed``; ``precision``/``recall``/``f1`` (e.g.
    Vertex trajectory_precision, promptfoo tool-call-f1) give tool_call_prf's value with
    ``passed`` = value == 1. ``parts["mode"]`` is the neutral mode. Pairing is maximum
    one-to-one. Raises MetricInputError for unknown modes/dialects or bad inputs.
    """
    row = lookup_mode(mode, dialect)
    neutral = mode if row is None else row.neutral
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
    "MODE_TABLE",
    "NEUTRAL_MODES",
    "SCORE_MODES",
    "ModeRow",
    "deepeval_mode",
    "lookup_mode",
    "normalize_mode",
    "ragas_mode",
    "trajectory_match",
]
