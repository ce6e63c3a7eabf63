"""Single-call and call-set metrics: precision/recall/F1, selection, schema validity,
argument accuracy and exact call correctness (argument provenance is in
:mod:`trajcheck.metrics.provenance`, re-exported here).

All pairing goes through :func:`trajcheck.match.matching.match_calls` (maximum one-to-one
matching). Failed-and-retried attempts (:func:`trajcheck.match.matching.retried_failures`) are
set aside before matching (DESIGN.md, "Policies").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from ..errors import MetricInputError, SchemaError
from ..match.explain import explain_all, explain_mismatch
from ..match.matchers import MatchContext
from ..match.matching import (
    CompiledCall,
    _check_mode,
    _hopcroft_karp,
    _matches_compiled,
    argument_checks,
    assign_per_tool,
    compatibility,
    compile_all,
    compile_expected,
    retried_failures,
)
from ..model import DEFAULT_ARGS_MODE, Case, ExpectedCall, Step, ToolCall, Trajectory
from ..score.run_matching import shared
from ..score.runmemo import memoized
from .formulas import argument_weight, mean_accuracy, n_counted, prf_counts
from .result import MetricResult

TrajLike = Trajectory | Sequence[ToolCall]


# ---------------------------------------------------------------------------------------
# shared helpers (also used by metrics.trajectory)


def calls_and_retries(traj: TrajLike, *, what: str = "trajectory") -> tuple[list[ToolCall], frozenset[int]]:
    """The flat call list and the indices of failed-and-retried calls.

    A plain sequence of ToolCall carries no results, so nothing is set aside. Raises
    MetricInputError for anything else (e.g. None).
    """
    if isinstance(traj, Trajectory):
        return traj.tool_calls(), retried_failures(traj)
    if isinstance(traj, (list, tuple)):
        for i, c in enumerate(traj):
            if type(c) is not ToolCall and not isinstance(c, ToolCall):
                raise MetricInputError(f"{what}: item {i} is {type(c).__name__}, not a ToolCall "
                                      "(expected a Trajectory or a list of ToolCall)")
        return list(traj), _NO_RETRIES
    raise MetricInputError(
        f"{what}: expected a Trajectory or a list of ToolCall, got {type(traj).__name__}")


_NO_RETRIES: frozenset[int] = frozenset()


def as_trajectory(traj: TrajLike, *, what: str = "trajectory") -> Trajectory:
    """``traj`` itself, or a list of ToolCall as a Trajectory of one ``tool_call`` step per call.

    The same coercion as :func:`calls_and_retries` (the one ``tool_call_prf`` uses): a plain
    list carries no results, no final response and no parallel steps, so nothing is a
    failed-and-retried attempt and call ``i`` is at step ``i``. Raises MetricInputError
    (naming ``what``) for anything that is neither.
    """
    if isinstance(traj, Trajectory):
        return traj
    calls, _ = calls_and_retries(traj, what=what)
    return Trajectory(steps=tuple(Step(i, "tool_call", tool_calls=(c,)) for i, c in enumerate(calls)))


def require_trajectory(traj: Any, *, what: str, needs: str) -> Trajectory:
    """``traj`` when it is a Trajectory; else MetricInputError naming ``what``, the expected
    type and what a list of ToolCall lacks (``needs``, e.g. "the tool results")."""
    if isinstance(traj, Trajectory):
        return traj
    if isinstance(traj, (list, tuple)):
        raise MetricInputError(
            f"{what}: expected a Trajectory, got a {type(traj).__name__}; it needs {needs}, "
            "which a list of ToolCall does not carry")
    raise MetricInputError(f"{what}: expected a Trajectory, got {type(traj).__name__}")


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(v)


def context_for(case: Case | None, context: MatchContext | None) -> MatchContext:
    """``context`` with ``case_input``/``user`` filled from ``case`` where unset."""
    if context is None and case is not None:
        # same as replace(MatchContext(), ...) below, without the copy; one (frozen) object
        # per case within runmemo.per_run, shared by the metrics of a run
        return memoized("context_for", (case,), None, lambda: MatchContext(
            case_input=None if case.input is None else _text(case.input), user=case.user))
    ctx = context or MatchContext()
    if case is None:
        return ctx
    changes: dict[str, Any] = {}
    if ctx.case_input is None and case.input is not None:
        changes["case_input"] = _text(case.input)
    if ctx.user is None and case.user is not None:
        changes["user"] = case.user
    return replace(ctx, **changes) if changes else ctx


def _check_case(case: Any) -> Case:
    if not isinstance(case, Case):
        raise MetricInputError(f"expected a Case, got {type(case).__name__}")
    return case


@dataclass(frozen=True)
class Matched:
    """Internal: outcome of matching the kept (non-retried) predicted calls."""

    kept: list[int]                 # indices into the full call list
    match_of_kept: list[int]        # per kept call: expected index or -1
    n_expected: int

    @property
    def tp(self) -> int:
        return sum(1 for j in self.match_of_kept if j != -1)


def match_kept(calls: Sequence[ToolCall], retried: frozenset[int], expected: Sequence[ExpectedCall],
               *, args_mode: str | None, default_mode: str | None, ctx: MatchContext) -> Matched:
    """Maximum matching of the non-retried calls against ``expected``.

    Per-call args mode: ``args_mode`` if given, else the expected call's own, else
    ``default_mode`` (the case's), else ``expected_keys`` (``DEFAULT_ARGS_MODE``).
    """
    cexp = compile_all(expected)
    return match_compiled(calls, retried, cexp, args_mode=args_mode, default_mode=default_mode,
                          ctx=ctx)


def match_compiled(calls: Sequence[ToolCall], retried: frozenset[int],
                   cexp: Sequence[CompiledCall | ExpectedCall],
                   *, args_mode: str | None, default_mode: str | None, ctx: MatchContext) -> Matched:
    """:func:`match_kept` on expected calls already compiled (``matching.compile_all``)."""
    if retried:
        kept = [i for i in range(len(calls)) if i not in retried]
        kept_calls: Sequence[ToolCall] = [calls[i] for i in kept]
    else:
        kept, kept_calls = list(range(len(calls))), calls
    adj = compatibility(kept_calls, cexp, args_mode, ctx, default_mode=default_mode)
    return Matched(kept, _hopcroft_karp(adj, len(cexp)), len(cexp))


# ---------------------------------------------------------------------------------------
# precision / recall / F1


@dataclass(frozen=True)
class PRFResult(MetricResult):
    """Tool-call precision/recall/F1 (``score`` = F1) with the counts they came from."""

    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    tp: int = 0
    n_counted: int = 0
    n_expected: int = 0


def prf_from_calls(calls: Sequence[ToolCall], retried: frozenset[int],
                   expected: Sequence[ExpectedCall], optional: Sequence[str], *,
                   args_mode: str | None, default_mode: str | None, ctx: MatchContext,
                   name: str = "tool_call_prf", matched: Matched | None = None) -> PRFResult:
    """Shared core of :func:`tool_call_prf` (also used by ``trajectory_match``).
    ``matched``: the matching ``match_kept`` gives for these arguments, when the caller
    holds it already (``run_matching``)."""
    m = matched if matched is not None else match_kept(
        calls, retried, expected, args_mode=args_mode, default_mode=default_mode, ctx=ctx)

    def note(extra: list[int], near: list[int]) -> str:
        return _wrong_args_note(calls, extra, expected, near, args_mode, default_mode, ctx)

    return prf_result(m, [c.name for c in calls], retried, [e.name for e in expected], optional,
                      note, name)


def kept_counts(m: Matched, call_names: Sequence[str], optional: Sequence[str]
                ) -> tuple[int, int, list[int]]:
    """``(tp, n_counted, unexpected)`` of a matching ``m`` (internal): matched calls, counted
    calls (every kept call except an unmatched call of an optional tool) and the kept calls
    that are counted but unmatched, in call order."""
    opt = set(optional)
    tp = n_nonopt = nonopt_tp = 0
    extra: list[int] = []
    for i, j in zip(m.kept, m.match_of_kept):
        o = call_names[i] in opt
        if not o:
            n_nonopt += 1
        if j != -1:
            tp += 1
            nonopt_tp += not o
        elif not o:
            extra.append(i)
    return tp, n_counted(tp, n_nonopt, nonopt_tp), extra


def prf_result(m: Matched, call_names: Sequence[str], retried: frozenset[int],
               exp_names: Sequence[str], optional: Sequence[str],
               note: Callable[[list[int], list[int]], str], name: str = "tool_call_prf") -> PRFResult:
    """The ``PRFResult`` of a matching ``m`` (internal): counts, reason and parts.

    ``call_names``/``exp_names``: the tool name of every predicted / expected call;
    ``note(extra, near)``: the argument-difference note for the unexpected calls ``extra``
    (``_wrong_args_note``), called only when there is an unexpected call."""
    tp, counted, extra = kept_counts(m, call_names, optional)
    n_exp = m.n_expected
    p, r, f = prf_counts(tp, counted, n_exp)
    matched_exp = {j for j in m.match_of_kept if j != -1}
    missing = [j for j in range(n_exp) if j not in matched_exp]
    reason = (f"precision {p:.3f} ({tp}/{counted} counted calls matched), recall {r:.3f} "
              f"({tp}/{n_exp} expected calls found), F1 {f:.3f}")
    if missing:
        reason += "; missing: " + ", ".join(exp_names[j] for j in missing[:5])
    if extra:
        reason += "; unexpected: " + ", ".join(call_names[i] for i in extra[:5])
        # the closest expected call of the same tool: a missing one first, else any
        near = missing + [j for j in range(n_exp) if j in matched_exp]
        reason += note(extra, near)
    parts = {
        "precision": p, "recall": r, "f1": f, "tp": tp, "n_counted": counted,
        "n_expected": n_exp, "n_predicted": len(call_names),
        "retried_set_aside": sorted(retried),
        "pairs": [[i, j] for i, j in zip(m.kept, m.match_of_kept) if j != -1],
        "unexpected_calls": extra, "missing_expected": missing,
    }
    # positional (name, score, reason, parts, passed, precision, recall, f1, tp, n_counted,
    # n_expected): same object as the keyword form, cheaper to build
    return PRFResult(name, f, reason, parts, None, p, r, f, tp, counted, n_exp)


def _wrong_args_note(calls: Sequence[ToolCall], extra: Sequence[int],
                     expected: Sequence[ExpectedCall], missing: Sequence[int],
                     args_mode: str | None, default_mode: str | None, ctx: MatchContext) -> str:
    """``"; <tool>: <differences>"`` for the first of ``missing`` (expected indices, in the
    order to try) that an unexpected call of the same tool could have been: every argument
    that differs, is missing or (``exact_keys``) is extra (``explain.explain_all``), else ""."""
    by_name: dict[str, int] = {}
    for i in extra:
        by_name.setdefault(calls[i].name, i)
    for j in missing:
        e = expected[j]
        i = by_name.get(e.name, -1)
        if i == -1:
            continue
        mode = args_mode or e.args_mode or default_mode
        why = explain_all(calls[i], e, args_mode=mode, context=ctx)
        return f"; {e.name}: {why}" if why else ""
    return ""


def tool_call_prf(traj: TrajLike, case: Case, *, args_mode: str | None = None,
                  context: MatchContext | None = None) -> PRFResult:
    """Tool-call precision, recall and F1 of a run against ``case.expected_calls``.

    Args:
        traj: a Trajectory (retries detectable) or a list of ToolCall.
        case: the dataset row: expected calls, optional calls, args mode.
        args_mode: overrides every expected call's mode (else the call's, else
            ``case.args_mode``, else ``expected_keys``).
        context: a ``MatchContext``; ``case_input``/``user`` come from the case when unset.

    Returns:
        ``PRFResult`` with ``precision``, ``recall``, ``f1`` in [0, 1]; ``score`` is F1,
        ``passed`` is None (threshold it).

    Raises:
        MetricInputError: ``traj`` is not a trajectory or ``case`` not a Case.
        MatcherError: a bad matcher spec (SchemaError for a bad schema matcher).

    Examples:
        An extra lookup costs precision, not recall:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> run = [ToolCall("get_order", {"order": 7}), ToolCall("refund", {"order": 7})]
        >>> r = tool_call_prf(run, case)
        >>> r.precision, r.recall, round(r.f1, 4)
        (0.5, 1.0, 0.6667)

    Calls are paired with expected calls by maximum one-to-one matching
    (:func:`trajcheck.match.matching.match_calls`), with the DESIGN.md policies:

    - failed-and-retried attempts are set aside before matching (neither precision nor recall);
    - precision = matched / counted, where every predicted call counts except an unmatched
      call of a tool in ``case.optional_calls``; with no counted calls precision is 1.0 when
      nothing was expected, else 0.0;
    - a call whose arguments did not parse never matches but still counts as predicted;
    - recall = matched / len(expected), 1.0 when nothing was expected;
    - F1 = 2PR/(P+R), 0.0 when P + R = 0.
    """
    case = _check_case(case)
    calls, retried = calls_and_retries(traj)
    sm = shared(traj, case) if args_mode is None or args_mode == "ignore" else None
    matched = None
    if sm is not None:  # the run's one matching (run_matching): the rows match_kept builds
        ml = sm.ml if args_mode is None else sm.name_ml()
        matched = Matched(sm.kept, ml, sm.n_expected)
    return prf_from_calls(calls, retried, case.expected_calls, case.optional_calls,
                          args_mode=args_mode, default_mode=case.args_mode,
                          ctx=context_for(case, context), matched=matched)


# ---------------------------------------------------------------------------------------
# selection accuracy


def _expected_behavior(case: Case) -> str:
    b = case.metadata.get("expected_behavior") if isinstance(case.metadata, Mapping) else None
    if b is None:
        return "tool" if case.expected_calls else "no_tool"
    if b not in ("tool", "no_tool", "clarify"):
        raise MetricInputError(f"case {case.id!r}: metadata.expected_behavior must be 'tool', "
                               f"'no_tool' or 'clarify', got {b!r}")
    return str(b)


def _final_text(traj: TrajLike) -> str:
    if isinstance(traj, Trajectory):
        if traj.final_response:
            return traj.final_response
        for s in reversed(traj.steps):
            if s.kind in ("final_response", "assistant") and s.content:
                return s.content
    return ""


def selection_accuracy(cases: Sequence[tuple[TrajLike, Case]]) -> MetricResult:
    """Fraction of cases whose run selected the right tools (names only).

    Args:
        cases: a non-empty list of ``(trajectory, case)``.

    Returns:
        ``MetricResult`` with ``score`` in [0, 1] and ``parts["per_case"]``, each case's verdict.

    Raises:
        MetricInputError: an empty list or a malformed item.

    Examples:
        Arguments are not judged here, so the first run is right; the second picked the wrong
        tool:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> selection_accuracy([([ToolCall("refund", {"order": 8})], case),
        ...                     ([ToolCall("get_order", {"order": 7})], case)]).score
        0.5

    Per case, after setting aside failed-and-retried attempts and calls to
    ``case.optional_calls`` tools that are not expected, the expected behaviour
    (``case.metadata["expected_behavior"]``, else ``"tool"`` with expected calls and
    ``"no_tool"`` without) decides:

    - ``no_tool``: correct iff no (non-optional) tool was called;
    - ``clarify``: correct iff no (non-optional) tool was called and the final response
      contains a question mark;
    - ``tool``: correct iff the set of called names equals the set of expected names.

    Call counts are judged by ``tool_call_prf`` and ``call_rates``. Source: the tool-selection
    accuracy of BFCL's relevance/irrelevance categories and DESIGN.md.
    """
    if not isinstance(cases, (list, tuple)) or not cases:
        raise MetricInputError("selection_accuracy needs a non-empty list of (trajectory, case)")
    per: list[dict[str, Any]] = []
    for k, item in enumerate(cases):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise MetricInputError(f"selection_accuracy: item {k} must be (trajectory, case)")
        traj, case = item
        case = _check_case(case)
        calls, retried = calls_and_retries(traj, what=f"case {case.id!r}")
        exp_names = {e.name for e in case.expected_calls}
        opt = set(case.optional_calls) - exp_names
        called = {c.name for i, c in enumerate(calls) if i not in retried and c.name not in opt}
        behavior = _expected_behavior(case)
        if behavior == "tool":
            ok = called == exp_names
        elif behavior == "no_tool":
            ok = not called
        else:
            ok = not called and "?" in _final_text(traj)
        per.append({"case_id": case.id, "expected": behavior, "expected_tools": sorted(exp_names),
                    "called_tools": sorted(called), "correct": ok})
    n_ok = sum(1 for p in per if p["correct"])
    score = n_ok / len(per)
    wrong = [p["case_id"] for p in per if not p["correct"]]
    reason = f"{n_ok}/{len(per)} cases selected the right tools"
    if wrong:
        reason += "; wrong: " + ", ".join(map(str, wrong[:5]))
    return MetricResult(name="selection_accuracy", score=score, reason=reason,
                        parts={"correct": n_ok, "total": len(per), "per_case": per},
                        passed=n_ok == len(per))


# ---------------------------------------------------------------------------------------
# schema validity


def tool_schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Map tool name -> its argument JSON Schema, from OpenAI, Anthropic or plain definitions.

    Accepted forms: OpenAI ``{"type": "function", "function": {"name", "parameters"}}``
    (also ``{"function": {...}}``), Anthropic ``{"name", "input_schema"}``, plain
    ``{"name", "parameters" | "schema"}``. A definition without a schema accepts any
    object. Raises SchemaError for a definition with no name.
    """
    out: dict[str, Any] = {}
    for k, t in enumerate(tools):
        if not isinstance(t, Mapping):
            raise SchemaError(f"tool definition {k} must be an object, got {type(t).__name__}")
        fn = t.get("function")
        d: Mapping[str, Any] = fn if isinstance(fn, Mapping) else t
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"tool definition {k} has no name")
        schema = None
        for key in ("parameters", "input_schema", "schema", "inputSchema"):
            if key in d:
                schema = d[key]
                break
        out[name] = {"type": "object"} if schema is None else schema
    return out


def schema_errors(calls: TrajLike, tools: Sequence[Mapping[str, Any]]) -> MetricResult:
    """Validate each call's arguments against its tool's JSON Schema (Draft 2020-12).

    Args:
        calls: a Trajectory or list of ToolCall.
        tools: tool definitions (see :func:`tool_schemas`).

    Returns:
        ``MetricResult``: ``score`` = fraction of valid calls, None when there are no calls;
        ``passed`` = no errors; ``parts["errors"]`` holds ``{"index", "name", "error"}`` items.

    Raises:
        SchemaError: a tool's schema is not a valid JSON Schema (names the tool).

    Examples:
        >>> from trajcheck.model import ToolCall
        >>> tools = [{"name": "refund", "parameters": {
        ...     "type": "object", "properties": {"order": {"type": "integer"}}}}]
        >>> r = schema_errors([ToolCall("refund", {"order": 7}), ToolCall("refund", {"order": "7"})],
        ...                   tools)
        >>> r.score, r.parts["errors"][0]["index"]
        (0.5, 1)

    A call is an error when its tool is unknown, its arguments did not parse (``args`` None)
    or parsed to a non-object, or they fail validation (every failure is listed with its JSON
    path). jsonschema is imported on first use.
    """
    from ..match.matchers import compile_schema

    call_list, _ = calls_and_retries(calls, what="schema_errors")
    if not isinstance(tools, (list, tuple)):
        raise MetricInputError(f"schema_errors: tools must be a list of definitions, got "
                               f"{type(tools).__name__}")
    schemas = tool_schemas(tools)
    validators: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    bad: set[int] = set()

    def err(i: int, c: ToolCall, msg: str) -> None:
        errors.append({"index": i, "name": c.name, "error": msg})
        bad.add(i)

    for i, c in enumerate(call_list):
        if c.name not in schemas:
            err(i, c, f"unknown tool {c.name!r} (known: {', '.join(sorted(schemas)) or 'none'})")
            continue
        if c.args is None:
            err(i, c, f"arguments did not parse: {c.args_parse_error or 'no arguments object'}")
            continue
        if not isinstance(c.args, Mapping):
            err(i, c, f"arguments are {type(c.args).__name__}, not an object")
            continue
        v = validators.get(c.name)
        if v is None:
            v = compile_schema(schemas[c.name], where=f"tool {c.name!r}")
            validators[c.name] = v
        try:
            found = sorted(v.iter_errors(c.args), key=lambda e: list(e.absolute_path))
        except RecursionError:
            err(i, c, "arguments nested too deeply to validate")
            continue
        for e in found:
            path = "/".join(str(p) for p in e.absolute_path) or "(root)"
            err(i, c, f"{path}: {e.message}")
    n = len(call_list)
    if n == 0:
        return MetricResult(name="schema_errors", score=None, reason="no tool calls to validate",
                            parts={"errors": [], "n_calls": 0, "n_invalid": 0}, passed=True)
    score = (n - len(bad)) / n
    reason = (f"{n - len(bad)}/{n} calls valid" + (f"; first error: call {errors[0]['index']} "
              f"({errors[0]['name']}): {errors[0]['error']}" if errors else ""))
    return MetricResult(name="schema_errors", score=score, reason=reason,
                        parts={"errors": errors, "n_calls": n, "n_invalid": len(bad)},
                        passed=not errors)


# ---------------------------------------------------------------------------------------
# argument accuracy and call correctness


def call_exact_correct(traj: TrajLike, case: Case, *, args_mode: str | None = None,
                       context: MatchContext | None = None) -> MetricResult:
    """Of the expected calls whose tool was called, the fraction called exactly right.

    Args:
        traj: a Trajectory or a list of ToolCall.
        case: the dataset row.
        args_mode: overrides every expected call's argument mode.
        context: a ``MatchContext`` for the matchers.

    Returns:
        ``MetricResult`` with ``score`` in [0, 1], or None when no expected tool was called (not
        applicable, never a vacuous 1.0; cf. deepeval #2242).

    Raises:
        MetricInputError: as ``tool_call_prf``.
        MatcherError: as ``tool_call_prf``.

    Examples:
        The right tool with a wrong argument:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> call_exact_correct([ToolCall("refund", {"order": 8})], case).score
        0.0
        >>> call_exact_correct([ToolCall("get_order", {"order": 7})], case).score is None
        True

    Seed 000 §2.2: ``call_exact_correct = tool name matches AND all required args matched``.
    Denominator: the maximum number of expected calls that can be paired one-to-one with a
    (non-retried) predicted call of the same name. Numerator: the maximum number paired when
    the whole call must match (``call_matches`` under ``args_mode``; under ``exact_keys`` an
    extra argument also fails it). This separates argument errors from selection errors.
    """
    case = _check_case(case)
    calls, retried = calls_and_retries(traj)
    ctx = context_for(case, context)
    cexp = compile_all(case.expected_calls)
    by_name = match_compiled(calls, retried, cexp, args_mode="ignore",
                             default_mode=None, ctx=ctx).tp
    with_args = match_compiled(calls, retried, cexp, args_mode=args_mode,
                               default_mode=case.args_mode, ctx=ctx).tp
    if by_name == 0:
        return MetricResult(name="call_exact_correct", score=None,
                            reason="not applicable: no expected tool was called",
                            parts={"correct": 0, "selected": 0, "n_expected": len(case.expected_calls)})
    score = with_args / by_name
    return MetricResult(name="call_exact_correct", score=score,
                        reason=f"{with_args}/{by_name} selected expected calls exactly right",
                        parts={"correct": with_args, "selected": by_name,
                               "n_expected": len(case.expected_calls)},
                        passed=with_args == by_name)


def argument_accuracy(traj: TrajLike, case: Case, *, args_mode: str | None = None,
                      context: MatchContext | None = None) -> MetricResult:
    """Per-argument accuracy: expected arguments matched / expected arguments, per expected
    call whose tool was called, averaged over those calls (seed 000 §2.2 ``arg_accuracy``).

    Args:
        traj: a Trajectory or a list of ToolCall.
        case: the dataset row.
        args_mode: overrides every expected call's argument mode.
        context: a ``MatchContext`` for semantic, judge or input-checked matchers.

    Returns:
        ``MetricResult``: ``score`` in [0, 1], None when no expected tool was called (a
        selection error, not an argument error). ``parts``: ``per_call`` (``{"expected",
        "predicted", "passed", "total", "accuracy", "exact"}`` per pair), ``pooled`` (all passed
        checks / all checks, seed 001's ``arg_correctness``; None with no checks),
        ``call_exact_correct`` (pairs whose whole call matched).

    Raises:
        MetricInputError: as ``tool_call_prf``.
        MatcherError: as ``tool_call_prf``.

    Examples:
        One of two arguments right:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c2", input="x", expected_calls=[{"name": "a", "args": {"x": 1, "y": 2}}])
        >>> argument_accuracy([ToolCall("a", {"x": 1, "y": 3})], case).score
        0.5

    Pairing: each expected call is paired with a distinct (non-retried, parsed) predicted
    call of the same tool; as many pairs as possible, and among those the pairing with the
    most argument credit (a maximum-weight assignment, never first-fit). Per pair, one check
    per expected argument (its matcher; see ``matching.argument_checks``) and per ``match``
    entry without an expected value. An expected call with no argument constraint scores 1.0
    when the whole call matches (``call_matches``; under ``exact_keys`` an extra argument
    fails it), else 0.0. Under ``args_mode="ignore"`` every paired call scores 1.0.
    """
    case = _check_case(case)
    calls, retried = calls_and_retries(traj)
    ctx = context_for(case, context)
    compiled: list[CompiledCall] = [compile_expected(e, index=j) for j, e in enumerate(case.expected_calls)]
    groups: dict[str, tuple[list[int], list[int]]] = {}  # per tool: (expected, parsed predicted)
    for j, cc in enumerate(compiled):
        groups.setdefault(cc.name, ([], []))[0].append(j)
    for i, c in enumerate(calls):
        if (i not in retried and c.name in groups
                and (type(c.args) is dict or isinstance(c.args, Mapping))):
            groups[c.name][1].append(i)
    cells: dict[tuple[int, int], tuple[int, int, bool]] = {}

    def row(j: int, preds: Sequence[int]) -> list[float]:  # expected call j's weights
        cc = compiled[j]
        mode = args_mode or cc.args_mode or case.args_mode or DEFAULT_ARGS_MODE
        checked = _check_mode(mode)  # as call_matches checks it, once per expected call
        weights: list[float] = []
        for i in preds:
            # call_matches(calls[i], case.expected_calls[j], args_mode=mode, context=ctx)
            # on the call compiled above (the same compilation, not repeated per pair)
            exact = _matches_compiled(calls[i], cc, checked, ctx)
            if mode == "ignore":
                ok, tot = 1, 1
            else:
                ok, tot = argument_checks(calls[i].args, cc, ctx)  # type: ignore[arg-type]
            weights.append(argument_weight(ok, tot, exact, mode == "ignore"))
            if tot == 0:  # no argument constraint: the whole call is the one check
                ok, tot = (1 if exact else 0), 1
            cells[(j, i)] = (ok, tot, exact)
        return weights

    per_call: list[dict[str, Any]] = []
    for j, i, weight in assign_per_tool(groups.values(), row):
        ok, tot, exact = cells[(j, i)]
        n_checks = len(compiled[j].checks) + len(compiled[j].unexpected)
        per_call.append({"expected": j, "predicted": i, "passed": ok if n_checks else None,
                         "total": n_checks, "accuracy": weight, "exact": exact})
    per_call.sort(key=lambda d: d["expected"])
    n_exp = len(case.expected_calls)
    if not per_call:
        return MetricResult(name="argument_accuracy", score=None,
                            reason="not applicable: no expected tool was called",
                            parts={"per_call": [], "pooled": None, "call_exact_correct": 0,
                                   "selected": 0, "n_expected": n_exp})
    score = cast(float, mean_accuracy([d["accuracy"] for d in per_call]))
    n_checks = sum(d["total"] for d in per_call)
    n_passed = sum(d["passed"] or 0 for d in per_call)
    pooled = n_passed / n_checks if n_checks else None
    n_exact = sum(1 for d in per_call if d["exact"])
    reason = (f"argument accuracy {score:.3f} over {len(per_call)} called expected "
              f"call{'s' if len(per_call) != 1 else ''} ({n_passed}/{n_checks} argument checks passed; "
              f"{n_exact}/{len(per_call)} calls exactly right)")
    worst = min(per_call, key=lambda d: (d["accuracy"], d["expected"]))
    if worst["accuracy"] < 1.0:
        j, i = worst["expected"], worst["predicted"]
        e = case.expected_calls[j]
        why = explain_mismatch(calls[i], e, args_mode=args_mode or e.args_mode or case.args_mode,
                               context=ctx)
        if why:
            reason += f"; {e.name} (call {i}): {why}"
    return MetricResult(name="argument_accuracy", score=score, reason=reason,
                        parts={"per_call": per_call, "pooled": pooled, "call_exact_correct": n_exact,
                               "selected": len(per_call), "n_expected": n_exp},
                        passed=score == 1.0)


def call_correctness(traj: TrajLike, case: Case, *, args_mode: str | None = None,
                     context: MatchContext | None = None) -> MetricResult:
    """Exact call correctness: 1.0 iff the calls are exactly the expected ones, else 0.0.

    Args:
        traj: a Trajectory or a list of ToolCall.
        case: the dataset row.
        args_mode: overrides every expected call's argument mode.
        context: a ``MatchContext`` for the matchers.

    Returns:
        ``MetricResult`` with ``score`` 1.0 or 0.0 and ``passed``.

    Raises:
        MetricInputError: as ``tool_call_prf``.
        MatcherError: as ``tool_call_prf``.

    Examples:
        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c1", input="refund order 7",
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> call_correctness([ToolCall("refund", {"order": 7})], case).score
        1.0
        >>> call_correctness([ToolCall("get_order", {"order": 7}), ToolCall("refund", {"order": 7})],
        ...                  case).score
        0.0

    After setting aside failed-and-retried attempts, every expected call must be matched
    (name and arguments) and every counted predicted call must be matched (unmatched calls of
    optional tools are allowed): precision = recall = 1 in ``tool_call_prf``. Order is not
    judged (see ``trajectory_match``).
    """
    r = tool_call_prf(traj, case, args_mode=args_mode, context=context)
    ok = r.precision == 1.0 and r.recall == 1.0
    return MetricResult(name="call_correctness", score=1.0 if ok else 0.0,
                        reason=("calls exactly as expected" if ok else "calls differ: " + r.reason),
                        parts=dict(r.parts), passed=ok)


# BFCL mode moved to trajcheck.match.bfcl and argument provenance to .provenance (both import
# this module, so they are loaded on first access).
_MOVED_TO_BFCL = frozenset({"bfcl_expected_calls", "bfcl_predicted_calls", "bfcl_valid"})
_MOVED_TO_PROVENANCE = frozenset({"argument_provenance", "default_is_id_arg"})


def __getattr__(name: str) -> Any:
    """Names moved to ``trajcheck.match.bfcl`` and ``.provenance``, resolved from there on
    first access (so old imports keep working); any other name raises AttributeError."""
    if name in _MOVED_TO_PROVENANCE:
        from . import provenance

        return getattr(provenance, name)
    if name in _MOVED_TO_BFCL:
        from ..match import bfcl

        return getattr(bfcl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PRFResult",
    "argument_accuracy",
    "as_trajectory",
    "call_correctness",
    "call_exact_correct",
    "require_trajectory",
    "schema_errors",
    "selection_accuracy",
    "tool_call_prf",
    "tool_schemas",
]
