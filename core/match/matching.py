"""Matching predicted tool calls to expected calls: ``call_matches`` and maximum matching.

Everything that pairs calls (precision/recall, trajectory modes, argument accuracy) goes
through :func:`match_calls`, which pairs calls one-to-one by a maximum bipartite matching
(Hopcroft-Karp), never greedily (DESIGN.md, "Semantics that must be exactly right").
Failed-and-retried attempts are identified by :func:`retried_failures` so that metrics can
set them aside before matching (DESIGN.md, "Policies: retry").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, TypeVar

from ..errors import MatcherError
from ..metrics.formulas import result_failed, retried_indices
from ..model import ARGS_MODES, DEFAULT_ARGS_MODE, ExpectedCall, ToolCall, ToolResult, Trajectory
from ..score.runmemo import memoized
from .matchers import DEFAULT_CONTEXT, MISSING, MatchContext, Matcher, exact_equal, get_matcher

_EXACT = get_matcher("exact")


@dataclass(frozen=True)
class CompiledCall:
    """An ExpectedCall with its matchers resolved once (internal fast path).

    ``checks``: (arg, expected value, matcher) for every expected argument;
    ``unexpected``: (arg, matcher) for ``match`` entries with no expected value;
    ``allowed``: argument names a predicted call may carry under ``exact_keys``;
    ``exact_args``: the expected arguments when every one is compared with ``exact`` and
    no ``match`` entry lacks an expected value (then ``allowed`` is exactly their names and
    the comparison takes a fast path with the same result), else None.
    """

    name: str
    constrained: bool
    checks: tuple[tuple[str, Any, Matcher], ...]
    unexpected: tuple[tuple[str, Matcher], ...]
    allowed: frozenset[str]
    args_mode: str | None
    exact_args: Mapping[str, Any] | None = None


def _check_mode(mode: str) -> str:
    if mode not in ARGS_MODES:
        raise MatcherError(f"unknown args_mode {mode!r}; known: {', '.join(ARGS_MODES)}")
    return mode


def compile_expected(exp: ExpectedCall, *, index: int | None = None) -> CompiledCall:
    """Resolve ``exp``'s matcher specs once. Raises MatcherError/SchemaError naming the call/arg."""
    if type(exp) is ExpectedCall and not exp.match:
        # fast path: no matcher specs to resolve (every argument compared with ``exact``)
        args = exp.args
        am = exp.args_mode
        if (am is None or am in ARGS_MODES) and (args is None or type(args) is dict):
            if args is None:
                return CompiledCall(exp.name, False, (), (), frozenset(), am, None)
            return CompiledCall(exp.name, True, tuple(zip(args, args.values(), repeat(_EXACT))),
                                (), frozenset(args), am, args)
    if not isinstance(exp, ExpectedCall):
        raise MatcherError(f"expected call {index if index is not None else ''} must be an "
                           f"ExpectedCall, got {type(exp).__name__}")
    where = f"expected call {index} ({exp.name!r})" if index is not None else f"expected call {exp.name!r}"
    if exp.args is not None and not isinstance(exp.args, Mapping):
        raise MatcherError(f"{where}: args must be an object or null, got {exp.args!r}")
    match = exp.match or {}
    if not isinstance(match, Mapping):
        raise MatcherError(f"{where}: match must be an object, got {match!r}")
    resolved: dict[str, Matcher] = {}
    for k, spec in match.items():
        try:
            resolved[k] = get_matcher(spec)
        except MatcherError as e:
            raise MatcherError(f"{where}, argument {k!r}: {e}") from e
        except Exception as e:
            from ..errors import SchemaError

            if isinstance(e, SchemaError):
                raise SchemaError(f"{where}, argument {k!r}: {e}") from e
            raise
    if exp.args_mode is not None:
        _check_mode(exp.args_mode)
    args = exp.args
    checks = tuple((k, v, resolved.get(k, _EXACT)) for k, v in (args or {}).items())
    unexpected = tuple((k, m) for k, m in resolved.items() if args is None or k not in args)
    allowed = frozenset(args or ()) | frozenset(resolved)
    exact_args = args if (args is not None and not unexpected
                          and all(m is _EXACT for _, _, m in checks)) else None
    return CompiledCall(exp.name, args is not None, checks, unexpected, allowed, exp.args_mode,
                        exact_args)


def compile_all(expected: Sequence[ExpectedCall]) -> list[CompiledCall | ExpectedCall]:
    """What :func:`compatibility` reads for ``expected`` (internal fast path).

    An ExpectedCall with no ``match`` specs, ``args`` a dict or None and a valid (or no)
    ``args_mode`` is used as it is (every argument is compared with ``exact``, exactly as its
    compiled form would); any other is compiled by :func:`compile_expected`, which raises the
    same errors, naming the call index, as compiling every call would.
    """
    out: list[CompiledCall | ExpectedCall] = []
    for j, e in enumerate(expected):
        if (type(e) is ExpectedCall and not e.match
                and (e.args is None or type(e.args) is dict)
                and (e.args_mode is None or e.args_mode in ARGS_MODES)):
            out.append(e)
        else:
            out.append(compile_expected(e, index=j))
    return out


def _exact_args_ok(pargs: Mapping[str, Any], eargs: Mapping[str, Any], mode: str) -> bool:
    """``_args_ok`` for a call whose arguments are all compared with ``exact``.

    Same result as the general loop: every expected argument must be present and exactly
    equal; under ``exact_keys`` the predicted call may carry no other argument, which (given
    the first rule) is the same as having as many arguments.
    """
    if mode == "exact_keys" and len(pargs) != len(eargs):
        return False
    for k, ev in eargs.items():
        pv = pargs.get(k, MISSING)
        t = type(ev)
        if t is type(pv) and (t is str or t is int or t is float or t is bool):
            if ev != pv:
                return False
        elif not exact_equal(ev, pv):
            return False
    return True


def name_matchable(pred: ToolCall) -> bool:
    """True when ``pred`` can match by name alone (``args_mode="ignore"``): its arguments
    parsed to an object, or the source did not record them (:func:`_unrecorded`)."""
    a = pred.args
    return type(a) is dict or isinstance(a, Mapping) or _unrecorded(pred)


def _unrecorded(pred: ToolCall) -> bool:
    """True when the source did not record the call's arguments (``args`` None with no parse
    error: content recording off), as opposed to arguments that did not parse."""
    return pred.args is None and pred.args_parse_error is None and pred.raw_args is None


def _matches_compiled(pred: ToolCall, cc: CompiledCall, mode: str, ctx: MatchContext) -> bool:
    if pred.name != cc.name:
        return False
    pargs = pred.args
    if type(pargs) is not dict and not isinstance(pargs, Mapping):
        # unparsed / non-object args never match (DESIGN policy); arguments the source did
        # not record (None, no parse error) match by name where names alone are compared
        return mode == "ignore" and _unrecorded(pred)
    if mode == "ignore":
        return True
    if cc.exact_args is not None:
        return _exact_args_ok(pargs, cc.exact_args, mode)
    return _args_ok(pargs, cc, mode, ctx)


def _args_ok(pargs: Mapping[str, Any], cc: CompiledCall, mode: str, ctx: MatchContext) -> bool:
    for k, m in cc.unexpected:
        if not m.check_unexpected(pargs.get(k, MISSING), ctx):
            return False
    if not cc.constrained:
        return True
    for k, ev, m in cc.checks:
        if k in pargs:
            if not m(ev, pargs[k], ctx):
                return False
        elif not m.allows_missing(ev):
            return False
    if mode == "exact_keys":
        for k in pargs:
            if k not in cc.allowed:
                return False
    return True


def argument_checks(pargs: Mapping[str, Any], cc: CompiledCall, ctx: MatchContext) -> tuple[int, int]:
    """``(passed, total)`` per-argument checks of predicted arguments ``pargs`` against the
    compiled expected call ``cc`` (seed 000 §2.2 ``arg_accuracy``; seed 001 counts the same
    checks in ``arg_correctness``).

    One check per expected argument (its matcher on the predicted value; an absent argument
    passes only when the matcher allows it: ``ignore``, ``one_of`` with ``""``) and one per
    ``match`` entry without an expected value (``check_unexpected``). Extra predicted
    arguments are not checks here (``exact_keys`` judges them in :func:`call_matches`).
    ``total`` is 0 for a call with no argument constraint.
    """
    passed = 0
    for k, m in cc.unexpected:
        passed += bool(m.check_unexpected(pargs.get(k, MISSING), ctx))
    for k, ev, m in cc.checks:
        if k in pargs:
            passed += bool(m(ev, pargs[k], ctx))
        else:
            passed += bool(m.allows_missing(ev))
    return passed, len(cc.unexpected) + len(cc.checks)


def call_matches(pred: ToolCall, exp: ExpectedCall, *, args_mode: str | None = None,
                 context: MatchContext | None = None) -> bool:
    """Whether predicted call ``pred`` satisfies expected call ``exp``.

    Rules (DESIGN.md policies; seed 000 §3.2 ``call_matches``): the names must be equal.
    ``pred.args`` that did not parse, or are not a dict, never match, in every mode; ``None``
    arguments the source did not record (no ``args_parse_error``, no ``raw_args``) match by
    name in ``"ignore"`` mode only.
    ``args_mode`` (None -> ``exp.args_mode``, else :data:`DEFAULT_ARGS_MODE`,
    ``"expected_keys"``): ``"ignore"`` compares names only; ``"expected_keys"`` checks every
    expected argument (extra predicted arguments allowed, the seed's
    ``ignore_extra_args=True``); ``"exact_keys"`` additionally rejects predicted arguments
    that are neither expected nor named in ``exp.match``.
    ``exp.args`` None means no argument constraint. Each expected argument is compared by
    its ``exp.match`` matcher (default ``exact``); an absent argument passes only for
    ``ignore`` or a ``one_of`` list containing ``""``. A ``match`` entry with no expected
    value checks the predicted value against the case input (present and non-empty; for
    ``semantic``/``judge`` relevant to ``context.case_input``).

    Raises MatcherError for an unknown matcher or args_mode, SchemaError for an invalid
    ``schema`` spec, MatcherError from semantic/judge matchers with no backend configured.
    """
    cc = compile_expected(exp)
    mode = _check_mode(args_mode or cc.args_mode or DEFAULT_ARGS_MODE)
    return _matches_compiled(pred, cc, mode, context or DEFAULT_CONTEXT)


def max_matching(adj: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """Maximum bipartite matching (Hopcroft-Karp, O(E sqrt(V)), iterative).

    ``adj[i]`` lists the right indices (0 <= j < n_right) compatible with left index ``i``.
    Returns ``match_of_left``: for each left index its matched right index, or -1. The
    matching is maximum; among maximum matchings the result is deterministic (neighbours
    are tried in the order given). Raises MatcherError for an out-of-range right index.
    """
    for i, row in enumerate(adj):
        for j in row:
            if not (0 <= j < n_right):
                raise MatcherError(f"max_matching: left {i} lists right index {j} "
                                   f"outside 0..{n_right - 1}")
    return _hopcroft_karp(adj, n_right)


def _hopcroft_karp(adj: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """:func:`max_matching` without the index check (for adjacency built here)."""
    n_left = len(adj)
    INF = n_left + n_right + 5
    match_l = [-1] * n_left
    match_r = [-1] * n_right
    # cheap greedy start; Hopcroft-Karp phases then make it maximum
    n_matched = 0
    stuck = False  # a left vertex left free that has a candidate (an augmenting path may start there)
    for i, row in enumerate(adj):
        for j in row:
            if match_r[j] == -1:
                match_l[i] = j
                match_r[j] = i
                n_matched += 1
                break
        else:
            stuck = stuck or bool(row)
    if not stuck or n_matched == n_left or n_matched == n_right:
        # every left vertex is matched or has no candidate, or every right vertex is
        # matched: no augmenting path exists, so the first phase below would stop at once
        # with this same matching
        return match_l
    dist = [0] * n_left
    while True:
        # BFS layering from free left vertices
        q: deque[int] = deque()
        for i in range(n_left):
            if match_l[i] == -1:
                dist[i] = 0
                q.append(i)
            else:
                dist[i] = INF
        found = False
        while q:
            i = q.popleft()
            for j in adj[i]:
                k = match_r[j]
                if k == -1:
                    found = True
                elif dist[k] == INF:
                    dist[k] = dist[i] + 1
                    q.append(k)
        if not found:
            break
        # iterative DFS along layers
        ptr = [0] * n_left
        for root in range(n_left):
            if match_l[root] != -1:
                continue
            stack = [root]
            path_right: list[int] = []
            while stack:
                i = stack[-1]
                row = adj[i]
                advanced = False
                while ptr[i] < len(row):
                    j = row[ptr[i]]
                    ptr[i] += 1
                    k = match_r[j]
                    if k == -1:
                        # augment along stack/path_right + j
                        path_right.append(j)
                        for li, rj in zip(stack, path_right):
                            match_l[li] = rj
                            match_r[rj] = li
                        stack = []
                        advanced = True
                        break
                    if dist[k] == dist[i] + 1:
                        path_right.append(j)
                        stack.append(k)
                        advanced = True
                        break
                if not advanced:
                    dist[i] = INF  # dead end this phase
                    stack.pop()
                    if path_right:
                        path_right.pop()
    return match_l


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[int]:
    """A maximum-weight assignment of rows to distinct columns (Hungarian method, O(n^2 m)).

    ``weights[i][j]`` >= 0 for n rows and m columns. Every row is assigned when n <= m, every
    column when n > m (so the number of pairs is min(n, m), the most possible on a complete
    bipartite graph), and among those assignments the total weight is maximum. Returns the
    column of each row, or -1 for a row left out (only when n > m). Used where every pair is
    allowed and only the quality of a pair varies (per-argument accuracy pairs calls of one
    tool); ties go to the lower column index. Raises MatcherError for ragged rows.
    """
    n = len(weights)
    if n == 0:
        return []
    m = len(weights[0])
    if any(len(r) != m for r in weights):
        raise MatcherError("max_weight_assignment: rows of different lengths")
    if m == 0:
        return [-1] * n
    if n > m:  # solve the transpose, then invert
        cols = max_weight_assignment([[weights[i][j] for i in range(n)] for j in range(m)])
        out = [-1] * n
        for j, i in enumerate(cols):
            out[i] = j
        return out
    # min-cost form: cost = top - weight (all >= 0); potentials u (rows), v (columns)
    top = max(max(r) for r in weights)
    inf = float("inf")
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)      # p[j]: row (1-based) assigned to column j; 0 = none
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            row = weights[i0 - 1]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = (top - row[j - 1]) - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    out = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            out[p[j] - 1] = j - 1
    return out


_P = TypeVar("_P")


def assign_per_tool(groups: Iterable[tuple[Sequence[int], Sequence[_P]]],
                    row: Callable[[int, Sequence[_P]], list[float]]
                    ) -> list[tuple[int, _P, float]]:
    """Argument accuracy's pairing (``metrics.calls.argument_accuracy``, the fast scorer's
    ``fast_figures.argument_accuracy``): per tool, its expected calls paired with its parsed
    predicted calls by the maximum-weight assignment of the expected x predicted weights.

    Args:
        groups: per tool, ``(expected, predicted)``: its expected calls' indices and its
            predicted calls (in the form the caller's ``row`` weighs); a tool with no
            predicted call adds nothing.
        row: ``row(j, predicted)``: expected call ``j``'s weight against each predicted call
            of its tool (``formulas.argument_weight``), called once per expected call.

    Returns:
        ``(j, predicted call, weight)`` per assigned pair, tool by tool and in expected
        order within a tool: min(expected, predicted) pairs per tool, of the most total
        weight (``max_weight_assignment``; one expected and one predicted call are paired
        without it). ``formulas.mean_accuracy`` of the weights is the score.

    Raises:
        MatcherError: ``row`` gives rows of different lengths.
    """
    out: list[tuple[int, _P, float]] = []
    for exps, preds in groups:
        if not preds:
            continue
        weights = [row(j, preds) for j in exps]
        assign = [0] if len(weights) == 1 and len(weights[0]) == 1 else max_weight_assignment(weights)
        for r, col in enumerate(assign):
            if col != -1:
                out.append((exps[r], preds[col], weights[r][col]))
    return out


@dataclass(frozen=True)
class CallMatching:
    """A one-to-one pairing: ``pairs`` of (predicted index, expected index), sorted by
    predicted index; ``unmatched_pred`` and ``unmatched_exp`` in increasing order."""

    pairs: tuple[tuple[int, int], ...]
    unmatched_pred: tuple[int, ...]
    unmatched_exp: tuple[int, ...]


_INDEX_MIN = 8  # expected calls of one tool from which an index beats the pairwise loop
_UNSET: Any = object()


class _NoKey(Exception):
    """A value the exact index cannot key (NaN, an object of another type): loop instead."""


def _exact_key(v: Any) -> Any:
    """A hashable key with ``_exact_key(a) == _exact_key(b)`` exactly when
    ``exact_equal(a, b)``: numbers by value (not bools), strings, None, mappings by key set
    and values, lists and tuples item by item. Raises ``_NoKey`` for anything else."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return ("b", v)
    if t is int:
        return ("n", v)
    if t is float:
        if v != v:
            raise _NoKey  # NaN equals nothing, not even itself
        return ("n", v)
    if v is None:
        return ("z",)
    if isinstance(v, Mapping):
        return ("d", frozenset((k, _exact_key(x)) for k, x in v.items()))
    if t is list or t is tuple:
        return ("l", tuple(_exact_key(x) for x in v))
    raise _NoKey


class _ExactIndex:
    """The expected calls of one tool, all compared with ``exact``, indexed by their
    arguments: a predicted call finds the calls it matches by lookup, not by comparing it
    with each (linear matching where the pairwise loop would be quadratic). ``row`` gives
    exactly the adjacency row the loop gives (same indices, increasing), or None when the
    call has an argument the index cannot key."""

    def __init__(self) -> None:
        self.always: list[int] = []  # mode ignore, or args None: every call of the tool
        # (keys, exact_keys?) -> {key tuple of the values -> [expected indices]}
        self.groups: dict[tuple[tuple[str, ...], bool], dict[Any, list[int]]] = {}

    @staticmethod
    def build(cand: Sequence[int], cexp: Sequence[Any], modes: Sequence[str]) -> _ExactIndex | None:
        ix = _ExactIndex()
        for j in cand:
            cc, mode = cexp[j], modes[j]
            if type(cc) is ExpectedCall:
                args = cc.args
            elif cc.exact_args is not None:
                args = cc.exact_args
            else:
                return None  # a loose matcher: the pairwise loop decides
            if mode == "ignore" or args is None:
                ix.always.append(j)
                continue
            try:
                keys = tuple(sorted(args))
                key = tuple(_exact_key(args[k]) for k in keys)
            except (_NoKey, TypeError):
                return None
            ix.groups.setdefault((keys, mode == "exact_keys"), {}).setdefault(key, []).append(j)
        return ix

    def row(self, pargs: Mapping[str, Any]) -> list[int] | None:
        hits: list[int] = list(self.always)
        try:
            for (keys, exact), table in self.groups.items():
                if exact and len(pargs) != len(keys):
                    continue
                vals = []
                for k in keys:
                    v = pargs.get(k, MISSING)
                    if v is MISSING:
                        break
                    vals.append(_exact_key(v))
                else:
                    found = table.get(tuple(vals))
                    if found:
                        hits.extend(found)
        except _NoKey:
            return None
        if len(self.groups) > 1 or self.always:
            hits.sort()
        return hits


def compatibility(pred: Sequence[ToolCall], cexp: Sequence[CompiledCall | ExpectedCall],
                  args_mode: str | None, ctx: MatchContext, *,
                  default_mode: str | None = None) -> list[list[int]]:
    """``adj[i]`` = expected indices predicted call ``i`` matches (internal helper).

    ``cexp``: compiled expected calls, or plain ExpectedCalls as :func:`compile_all` passes
    them through (all-``exact`` arguments). Mode per expected call: ``args_mode``, else the
    call's own, else ``default_mode`` (used only when ``args_mode`` is None), else
    :data:`DEFAULT_ARGS_MODE`.
    """
    by_name: dict[str, list[int]] = {}
    for j, cc in enumerate(cexp):
        by_name.setdefault(cc.name, []).append(j)
    dm = default_mode if args_mode is None else None
    modes = [_check_mode(args_mode or cc.args_mode or dm or DEFAULT_ARGS_MODE) for cc in cexp]
    indexes: dict[str, _ExactIndex | None] = {}
    adj: list[list[int]] = []
    for p in pred:
        if type(p) is not ToolCall and not isinstance(p, ToolCall):
            raise MatcherError(f"predicted call {len(adj)} must be a ToolCall, got {type(p).__name__}")
        cand = by_name.get(p.name)
        pargs = p.args
        if not cand:
            adj.append([])  # no expected call of this tool
            continue
        if type(pargs) is not dict and not isinstance(pargs, Mapping):
            # unparsed args never match; unrecorded ones match by name in ``ignore`` mode
            adj.append([j for j in cand if modes[j] == "ignore"] if _unrecorded(p) else [])
            continue
        if len(cand) >= _INDEX_MIN:
            ix = indexes.get(p.name, _UNSET)
            if ix is _UNSET:
                ix = indexes[p.name] = _ExactIndex.build(cand, cexp, modes)
            if ix is not None:
                hit = ix.row(pargs)  # type: ignore[union-attr]
                if hit is not None:
                    adj.append(hit)
                    continue
        row = []
        for j in cand:
            cc = cexp[j]
            mode = modes[j]
            if mode == "ignore":
                row.append(j)
            elif type(cc) is ExpectedCall:  # passed through by compile_all: all exact
                if cc.args is None or _exact_args_ok(pargs, cc.args, mode):
                    row.append(j)
            elif cc.exact_args is not None:  # type: ignore[union-attr]
                if _exact_args_ok(pargs, cc.exact_args, mode):  # type: ignore[union-attr]
                    row.append(j)
            elif _args_ok(pargs, cc, mode, ctx):  # type: ignore[arg-type]
                row.append(j)
        adj.append(row)
    return adj


def match_calls(pred: Sequence[ToolCall], exp: Sequence[ExpectedCall], *,
                args_mode: str | None = None, context: MatchContext | None = None) -> CallMatching:
    """Pair predicted with expected calls one-to-one, maximising the number of pairs.

    A pair needs :func:`call_matches` to hold. The matching is maximum (Hopcroft-Karp), so
    e.g. two ``search_docs`` calls ``["vpn mac", "vpn"]`` against expected ``["vpn",
    "vpn mac"]`` with a ``contains`` matcher pair both (a greedy first-fit pairs one).
    Raises what :func:`call_matches` raises. Within ``runmemo.per_run`` the matching of the
    same call objects is computed once per run.
    """
    return memoized("match_calls", (*pred, None, *exp, context), args_mode,
                    lambda: _match_calls(pred, exp, args_mode, context))


def _match_calls(pred: Sequence[ToolCall], exp: Sequence[ExpectedCall], args_mode: str | None,
                 context: MatchContext | None) -> CallMatching:
    ctx = context or DEFAULT_CONTEXT
    cexp = compile_all(exp)
    adj = compatibility(pred, cexp, args_mode, ctx)
    return call_matching(_hopcroft_karp(adj, len(cexp)), len(cexp))


def call_matching(ml: Sequence[int], n_exp: int) -> CallMatching:
    """The ``CallMatching`` of a matching given per predicted call (its expected index, or
    -1) against ``n_exp`` expected calls (internal helper)."""
    pairs = tuple((i, j) for i, j in enumerate(ml) if j != -1)
    matched_exp = {j for _, j in pairs}
    return CallMatching(
        pairs=pairs,
        unmatched_pred=tuple(i for i, j in enumerate(ml) if j == -1),
        unmatched_exp=tuple(j for j in range(n_exp) if j not in matched_exp),
    )


def is_failed(call_result: ToolResult | None) -> bool:
    """True when the result reports an error (``formulas.result_failed``: ``is_error`` is True
    or ``error`` is non-empty).

    A missing result (None) or ``is_error`` None with no error text is not a failure (OpenAI,
    RAGAS and DeepEval traces have no error channel; DESIGN.md, "The neutral model").
    """
    if call_result is None:
        return False
    return result_failed(call_result.is_error, call_result.error)


def retried_failures(traj: Trajectory) -> frozenset[int]:
    """Indices into ``traj.tool_calls()`` of failed calls that were retried.

    DESIGN.md policy: a retry is a later call of the same tool after a call whose result was
    an error (:func:`is_failed`); such failed-and-retried calls are set aside before
    matching and scored by the recovery metrics. A failed call after which the tool is never
    called again (e.g. followed only by a different tool) is not retried and stays in.
    Results are joined to calls by :meth:`Trajectory.pairs`. Computed once per run within
    ``runmemo.per_run``.
    """
    return memoized("retried", (traj,), None, lambda: _retried_failures(traj))


def _retried_failures(traj: Trajectory) -> frozenset[int]:
    if not any(s.tool_result is not None and is_failed(s.tool_result) for s in traj.steps):
        return frozenset()  # no failed result at all: nothing to join (same answer, faster)
    pairs = traj.pairs()
    return frozenset(retried_indices([c.name for c, _ in pairs], [is_failed(r) for _, r in pairs]))


__all__ = [
    "CallMatching",
    "CompiledCall",
    "argument_checks",
    "assign_per_tool",
    "call_matches",
    "compile_expected",
    "is_failed",
    "match_calls",
    "max_matching",
    "max_weight_assignment",
    "retried_failures",
]
