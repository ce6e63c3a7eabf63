"""Outcome metrics: the required response content, task success, success judged from calls.

``response_includes`` checks ``response_must_include``; ``task_success`` combines it with the
final-state check (``state_diff`` / ``check_final_state``, defined in
``trajcheck.metrics.final_state`` and importable from here); ``outcome_from_calls`` is the
tau-bench-style proxy for runs without a database.
Definitions: DESIGN.md ("Final state", "Task success" policies) and tau-bench's reward
(``tau_bench/envs/base.py calculate_reward``: final-database hash equality plus
case-insensitive, comma-stripped output substrings).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import MetricInputError
from ..match.explain import explain_mismatch, value_diff
from ..match.matchers import MatchContext, exact_equal
from ..match.matching import _hopcroft_karp, call_matches, call_matching, is_failed, match_calls
from ..model import Case, Step, ToolCall, Trajectory, read_only_tools
from ..score.run_matching import same_modes, shared
from .calls import require_trajectory
from .final_state import (
    DEFAULT_IGNORE,
    StateDiff,
    check_final_state,
    describe_rows,
    state_diff,
)
from .result import MetricResult

__all__ = [
    "DEFAULT_IGNORE",
    "NO_EFFECT_KEY",
    "PRECONDITIONS_KEY",
    "REPLAYED_KEY",
    "StateDiff",
    "check_final_state",
    "describe_rows",
    "outcome_from_calls",
    "response_includes",
    "response_text",
    "state_diff",
    "task_success",
    "unchanged_writes",
]


# ---------------------------------------------------------------------------------------
# response content

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

_TEXT_KINDS = ("assistant", "final_response")


def response_text(traj_or_text: Trajectory | str | None) -> list[str]:
    """The agent's user-facing text pieces that ``response_includes`` searches.

    A string is one piece. For a ``Trajectory``: the ``content`` of every step of kind
    ``assistant`` or ``final_response`` (text an assistant turn carrying tool calls is
    kept too), then ``traj.final_response`` when it is not already one of them. Reasoning,
    tool results, user and system text are never searched. None gives no pieces.
    Source: seed 000 §4.1 (response contains required info) and tau-bench.
    """
    if traj_or_text is None:
        return []
    if isinstance(traj_or_text, str):
        return [traj_or_text]
    if not isinstance(traj_or_text, Trajectory):
        what = ("a list (a list of ToolCall carries no response text)"
                if isinstance(traj_or_text, (list, tuple)) else type(traj_or_text).__name__)
        raise MetricInputError(f"response_includes needs a Trajectory or a string, got {what}")
    pieces: list[str] = []
    for s in traj_or_text.steps:
        if isinstance(s, Step) and s.kind in _TEXT_KINDS and isinstance(s.content, str) and s.content:
            pieces.append(s.content)
        elif s.kind == "tool_call" and isinstance(s.content, str) and s.content:
            pieces.append(s.content)
    fr = traj_or_text.final_response
    if isinstance(fr, str) and fr and fr not in pieces:
        pieces.append(fr)
    return pieces


def _norm_resp(s: str) -> str:
    return _THOUSANDS.sub("", s).casefold()


def response_includes(traj_or_text: Trajectory | str | None, required: Sequence[str]) -> MetricResult:
    """Whether the agent's user-facing text contains every required item.

    Args:
        traj_or_text: a Trajectory (its text, see ``response_text``), a string, or None.
        required: the items, a list of strings.

    Returns:
        ``MetricResult`` named ``response_includes``: ``score`` = fraction of items found
        (1.0 when nothing is required), ``passed`` = all found, ``parts`` with ``found`` and
        ``missing``.

    Raises:
        MetricInputError: ``required`` is a bare string or holds a non-string.

    Examples:
        Thousands separators do not count, case does not matter:

        >>> r = response_includes("Refunded $1,234 for order 7", ["1234", "ORDER 7", "order 9"])
        >>> round(r.score, 4), r.parts["missing"]
        (0.6667, ['order 9'])

    Text searched: every assistant text step plus the final response, each piece separately,
    so tau-bench's rule ("each output appears in some ``respond`` action") is met. Matching:
    case-insensitive (casefold) substring; thousands separators are removed from numbers in
    both the text and the item (``"1,234"`` -> ``"1234"``), as tau-bench strips commas before
    its substring test.
    """
    if isinstance(required, str):
        raise MetricInputError("required must be a list of strings, not one string")
    req = list(required or ())
    for i, r in enumerate(req):
        if not isinstance(r, str):
            raise MetricInputError(f"response_must_include[{i}] must be a string, got {type(r).__name__}")
    texts = response_text(traj_or_text)  # read even when nothing is required: its errors
    if not req:
        return MetricResult("response_includes", 1.0, "nothing required in the response",
                            {"found": [], "missing": []}, True)
    pieces = [_norm_resp(p) for p in texts]
    found = [r for r in req if any(_norm_resp(r) in p for p in pieces)]
    missing = [r for r in req if r not in found]
    ok = not missing
    reason = ((f"response contains all {len(req)} required items" if len(req) > 1
               else "response contains the required item") if ok
              else f"response is missing {missing[0]!r}"
              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return MetricResult("response_includes", len(found) / len(req), reason,
                        {"found": found, "missing": missing}, ok)


# ---------------------------------------------------------------------------------------
# task success


def task_success(final_state_result: MetricResult | None,
                 response_result: MetricResult | None) -> MetricResult:
    """Task success = final-state assertions hold AND the response contains every required item.

    Args:
        final_state_result: the result of ``check_final_state`` (or ``outcome_from_calls``),
            or None when the case has no such check.
        response_result: the result of ``response_includes``, or None.

    Returns:
        ``MetricResult`` named ``task_success``: score 1.0/0.0 and a reason naming the failing
        check; score None and ``passed`` None when no check applies.

    Examples:
        >>> r = task_success(None, response_includes("Refund issued", ["refund", "order 7"]))
        >>> r.score, r.passed
        (0.0, False)
        >>> task_success(None, None).score is None
        True

    Policy (DESIGN.md "Task success"): a result with ``passed`` None (not applicable) counts
    as no check; success needs every applicable check to pass.
    """
    checks = [(n, r) for n, r in (("final state", final_state_result), ("response", response_result))
              if r is not None and r.passed is not None]
    if not checks:
        return MetricResult("task_success", None, "no outcome check applies to this case", {}, None)
    failed = [(n, r) for n, r in checks if not r.passed]
    parts = {n.replace(" ", "_"): bool(r.passed) for n, r in checks}
    if failed:
        n, r = failed[0]
        return MetricResult("task_success", 0.0, f"task failed: {n}: {r.reason}", parts, False)
    return MetricResult("task_success", 1.0, "task succeeded: " + " and ".join(n for n, _ in checks)
                        + " checks hold", parts, True)


# ---------------------------------------------------------------------------------------
# outcome from calls (no database)


def call_closeness(expected_args: Mapping[str, Any], args: Any) -> int:
    """How close one call's arguments come to an expected call's: the ranking of the
    closest call in an outcome reason (``closest_call_note``), for both scoring paths.

    Args:
        expected_args: the expected call's top-level arguments.
        args: the call's arguments (an object, or anything else when they did not parse).

    Returns:
        The number of expected top-level arguments the call gives with an equal value
        (``explain.value_diff`` finds no difference), or -1 when ``args`` is not an object.

    Raises:
        Nothing.
    """
    if type(args) is not dict and not isinstance(args, Mapping):
        return -1
    n_eq = 0
    for k, v in expected_args.items():
        if k in args:
            pv = args[k]
            t = type(v)
            if t is type(pv) and (t is str or t is int or t is bool):
                # two values of one of these exact types: value_diff compares them with ==
                # and nothing else (no container, NaN or number-kind case applies)
                n_eq += v == pv
            elif value_diff(v, pv) is None:
                n_eq += 1
    return n_eq


def closest_call_note(name: str, expected_args: Mapping[str, Any] | None, unmatched: Container[int],
                      names: Sequence[str], args: Sequence[Any], failed: Sequence[bool] | None,
                      explain: Callable[[int], str | None]) -> str:
    """Why no call satisfied an expected call, for an outcome failure reason (both scoring
    paths): the tool was never called, every call of it failed, or the closest successful
    call of it and where its arguments differ. Closest = most expected top-level arguments
    equal (``call_closeness``), calls left unpaired by the matching first, then the
    earliest. Call numbers count from 0.

    Args:
        name: the expected call's tool.
        expected_args: its arguments (None: none).
        unmatched: the run's calls the matching left unpaired.
        names: every call's tool name, in run order.
        args: every call's arguments, in run order.
        failed: per call, whether its result failed (``matching.is_failed``); None: none did.
        explain: gives where call ``i``'s arguments differ from the expected call's
            (``explain.explain_mismatch``'s phrase), or None when they match.

    Returns:
        The note, e.g. ``"closest call 4 of the run differs: flights[0]: unexpected keys
        origin, destination"``.

    Raises:
        Nothing beyond what ``explain`` raises.
    """
    same = [i for i, nm in enumerate(names) if nm == name]
    if not same:
        return "the tool was never called"
    ok = same if failed is None else [i for i in same if not failed[i]]
    if not ok:
        which = ", ".join(str(i) for i in same[:5]) + (", ..." if len(same) > 5 else "")
        return (f"{'every call' if len(same) > 1 else 'the call'} of the tool failed "
                f"({'calls' if len(same) > 1 else 'call'} {which} of the run)")
    eargs = expected_args or {}
    best = ok[0] if len(ok) == 1 else min(
        ok, key=lambda i: (-call_closeness(eargs, args[i]), 0 if i in unmatched else 1, i))
    why = explain(best)
    if why is None:
        return f"call {best} of the run matches it but is paired with another expected call"
    return f"closest call {best} of the run differs: {why}"


def outcome_problems(case_id: str, missing: Iterable[int], extra: Iterable[int],
                     expected_names: Sequence[str], why_missing: Callable[[int], str],
                     names: Sequence[str], args: Sequence[Any]) -> Iterator[str]:
    """The write problems of an outcome judged from calls, in reason order (both scoring
    paths; lazy, so a caller that needs only the first builds only it).

    Args:
        case_id: the case's id.
        missing: the expected calls (indices into the case's expected calls) no successful
            call satisfied and that are required.
        extra: the run's other successful state-changing calls (indices into its calls)
            that are side effects.
        expected_names: every expected call's tool name.
        why_missing: gives the note for a missing expected call (``closest_call_note``).
        names: every call's tool name, in run order.
        args: every call's arguments, in run order.

    Returns:
        One line per missing expected call, then one per extra write: ``"case '5':
        expected call 0 (tool) not matched: <note>"``, ``"case '5': unexpected
        state-changing call 13 of the run: <tool> <args>"``.

    Raises:
        Nothing beyond what ``why_missing`` raises.
    """
    for j in missing:
        yield f"case {case_id!r}: expected call {j} ({expected_names[j]}) not matched: {why_missing(j)}"
    for i in extra:
        yield f"case {case_id!r}: unexpected state-changing call {i} of the run: {names[i]} {args[i]!r}"


def outcome_verdict(problems: Iterable[str], n_problems: int, made: str, *,
                    reason: bool = True) -> tuple[bool, str | None]:
    """The verdict and one-line reason of an outcome judged from calls (both scoring paths).

    Args:
        problems: the problems in order (``outcome_problems``, then any response problem);
            only the first is read.
        n_problems: how many there are.
        made: the reason when there is none (``writes_made`` and its notes).
        reason: False for a caller that reads no failing run's reason: ``problems`` is
            then not read.

    Returns:
        ``(True, made)`` with no problem, else ``(False, first problem)`` with
        ``" (and N more)"`` when there are others (``(False, None)`` without ``reason``).

    Raises:
        StopIteration: ``problems`` is empty while ``n_problems`` is not 0.
    """
    if not n_problems:
        return True, made
    if not reason:
        return False, None
    first = next(iter(problems))
    return False, first + (f" (and {n_problems - 1} more)" if n_problems > 1 else "")


#: ``Trajectory.metadata`` key under which a reader lists expected calls its source proves
#: changed nothing (each ``{"name", "args", "evidence"}``): e.g. tau2 records an expected
#: write's action check as unmet while its DB check matched the expected database.
NO_EFFECT_KEY = "no_effect_calls"
#: ``Case.metadata`` flag a reader sets when the case's expected final state is, by the
#: benchmark's definition, the state after replaying its expected calls in a deterministic
#: environment (tau-bench, tau2): an expected call that the tool rejects then contributes
#: nothing to that state. Without it a failed expected call is a task failure (it may be a
#: transient or injected fault).
REPLAYED_KEY = "expected_state_is_replay"
#: ``Case.metadata`` key for what a tool requires of the record it writes, from the tool's
#: code: ``{tool: {"key": arg naming the record, "field": field of the record, "allowed":
#: [values], "why": text}}`` (tau retail: a return needs a delivered order).
PRECONDITIONS_KEY = "preconditions"


def _json_object(v: Any) -> dict[str, Any] | None:
    if type(v) is not str and isinstance(v, Mapping):  # a str is never one: no ABC check
        return dict(v)
    if isinstance(v, str) and v[:1] == "{":
        import json

        try:
            out = json.loads(v)
        except ValueError:
            return None
        return out if isinstance(out, dict) else None
    return None


def _ids(obj: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, repr(v)) for k, v in obj.items() if k == "id" or k.endswith("_id")))


def unchanged_writes(traj: Trajectory, indices: Sequence[int],
                     pairs: Sequence[tuple[ToolCall, Any]] | None = None) -> dict[int, int]:
    """Which successful calls (positions in ``traj.pairs()``) provably changed nothing:
    ``{call: earlier call}`` where the call's result is a JSON object equal to the latest
    earlier successful result about the same object (same key set and same ``id`` /
    ``*_id`` values), i.e. the tool returned the state that was already there.

    Tools of tau-bench and tau2 return the record they wrote (a reservation, an order, a
    user); when that record is what an earlier call (a read, or the same write) returned,
    the write left it as it was. A result that is not a JSON object, or with no earlier
    result about the same object, proves nothing and is not listed. ``pairs``: the run's
    ``traj.pairs()`` when the caller holds them already.
    """
    if pairs is None:
        pairs = traj.pairs()
    seen: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    out: dict[int, int] = {}
    want = set(indices)
    for i, (_c, r) in enumerate(pairs):
        if r is None or is_failed(r):
            continue
        obj = _json_object(r.output)
        if obj is None:
            continue
        key = (tuple(sorted(obj)), _ids(obj))
        if not key[1]:
            continue
        prev = seen.get(key)
        if i in want and prev is not None and prev[1] == obj:
            out[i] = prev[0]
        seen[key] = (i, obj)
    return out


def _precondition_fails(traj: Trajectory, case: Case, j: int, mode: str | None,
                        context: Any) -> str | None:
    """Why expected write ``j`` would be rejected, from the record as the run first read it,
    or None. Needs the tool's precondition (``case.metadata[PRECONDITIONS_KEY]``), a
    read-only call's JSON result about the record (its ``key`` value equal to the expected
    argument) made before any successful write naming that record, and no expected write
    before ``j`` naming it (so the record is, at ``j`` in the expected sequence, as first
    read). The reason names the record, the value seen and the rule."""
    exp = case.expected_calls[j]
    pre = (case.metadata.get(PRECONDITIONS_KEY) or {}).get(exp.name)
    if not isinstance(pre, Mapping) or not isinstance(exp.args, Mapping):
        return None
    key, fld, allowed = pre.get("key"), pre.get("field"), pre.get("allowed")
    if not isinstance(key, str) or not isinstance(fld, str) or not isinstance(allowed, list):
        return None
    target = exp.args.get(key)
    if target is None:
        return None
    read_only = non_writing_tools(case)
    if any(e.name not in read_only and isinstance(e.args, Mapping) and e.args.get(key) == target
           for e in case.expected_calls[:j]):
        return None
    for c, r in traj.pairs():
        if c.name not in read_only:
            if not is_failed(r) and isinstance(c.args, Mapping) and c.args.get(key) == target:
                return None  # the run wrote to the record before reading it
            continue
        obj = _json_object(r.output) if r is not None and not is_failed(r) else None
        if obj is None or obj.get(key) != target or fld not in obj:
            continue
        if obj[fld] in allowed:
            return None
        return (f"the run's first read of {key} {target!r} shows {fld} {obj[fld]!r}, and "
                f"{pre.get('why') or 'the tool rejects it'}, so it changes nothing")
    return None


def _no_effect_evidence(traj: Trajectory, case: Case, j: int, mode: str | None,
                        context: Any) -> str | None:
    """Why expected write ``case.expected_calls[j]`` changed nothing, from what the run
    records, or None.

    1. Only for cases flagged ``metadata[REPLAYED_KEY]``: a call of the run that matches it
       failed, and every successful write the run made
       before that call matches an expected write listed before it (so the run's state
       then was one the expected sequence passes through): the tool rejected exactly this
       write in that state, so it changes nothing. A failure caused by the agent's own
       earlier, unexpected or out-of-order write proves nothing.
    2. Only for cases flagged ``metadata[REPLAYED_KEY]``: the tool's precondition on the
       record it writes (``metadata[PRECONDITIONS_KEY]``) fails on the record as the run
       first read it (``_precondition_fails``).
    3. The reader lists it under ``metadata[NO_EFFECT_KEY]`` (the source's own checks prove
       the expected database was reached without it).
    """
    exp = case.expected_calls[j]
    read_only = non_writing_tools(case)
    earlier = [e for e in case.expected_calls[:j] if e.name not in read_only]
    pairs = traj.pairs() if case.metadata.get(REPLAYED_KEY) is True else []
    for i, (c, r) in enumerate(pairs):
        if not (c.name == exp.name and is_failed(r) and call_matches(c, exp, args_mode=mode, context=context)):
            continue
        before = [pc for pc, pr in pairs[:i] if pc.name not in read_only and not is_failed(pr)]
        if all(any(call_matches(pc, e, args_mode=mode, context=context) for e in earlier) for pc in before):
            return f"call {i} of the run made it and the tool rejected it, so it changes nothing"
    pre_why = _precondition_fails(traj, case, j, mode, context) if pairs else None
    if pre_why is not None:
        return pre_why
    for item in traj.metadata.get(NO_EFFECT_KEY) or ():
        if (isinstance(item, Mapping) and item.get("name") == exp.name
                and exact_equal(item.get("args"), exp.args)):
            return str(item.get("evidence") or "the source records that it changed nothing")
    return None


def non_writing_tools(case: Case) -> frozenset[str]:
    """The tools whose calls the call-based outcome never counts as writes: the case's
    ``optional_calls`` and its read-only tools (``read_only_calls`` and tool definitions
    annotated ``readOnlyHint: true``, ``model.read_only_tools``). An optional call is also
    free in precision; a read-only call that is not expected still costs precision (it is
    counted and flagged unnecessary) but never fails the outcome."""
    ro = read_only_tools(case) if case.read_only_calls or case.tools else ()
    return frozenset(case.optional_calls).union(ro)


def writes_made(n_expected: int) -> str:
    """The outcome reason of a run whose writes all held, ``n_expected`` the required
    state-changing calls (internal; shared with the fast scorer, so both say the same)."""
    return ("no state-changing call expected and none made" if n_expected == 0
            else "the expected state-changing call made, no other write" if n_expected == 1
            else f"all {n_expected} expected state-changing calls made, no other write")


def unchanged_note(same: Mapping[int, int], calls: Sequence[ToolCall]) -> str:
    """``"; call i (tool) changed nothing: ..."`` for the first write whose result equals an
    earlier call's (``unchanged_writes``), or "" when there is none (internal)."""
    if not same:
        return ""
    i, k = next(iter(same.items()))
    return (f"; call {i} ({calls[i].name}) changed nothing: its result equals call {k}'s"
            + (f" (and {len(same) - 1} more)" if len(same) > 1 else ""))


def outcome_from_calls(traj: Trajectory, case: Case, *, context: Any = None,
                       check_response: bool = True, args_mode: str | None = None) -> MetricResult:
    """Task success judged from the calls when there is no database (tau-bench-style proxy).

    Args:
        traj: the run.
        case: the dataset row: expected, optional and read-only calls, tools, required
            response.
        context: a ``MatchContext``; None builds one from the case's input and user.
        check_response: also require ``response_includes(traj, case.response_must_include)``.
        args_mode: the argument mode; None -> ``case.args_mode``, then each expected call's
            own mode, then ``expected_keys``.

    Returns:
        ``MetricResult`` named ``outcome_from_calls`` (score 1.0/0.0, ``passed``) with parts
        ``missing_expected`` / ``extra_calls`` (indices into the expected list and into
        ``traj.tool_calls()``), ``response``, ``writes_ok`` and ``writes_reason``.

    Raises:
        MetricInputError: ``traj`` is not a Trajectory or ``case`` not a Case.
        MatcherError: a bad matcher spec.

    Examples:
        A lookup is read-only when the case lists it as optional; the refund is the one write:

        >>> from trajcheck.model import Case, ToolCall
        >>> from trajcheck.metrics.calls import as_trajectory
        >>> case = Case(id="c1", input="refund order 7", optional_calls=["get_order"],
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> run = as_trajectory([ToolCall("get_order", {"order": 7}), ToolCall("refund", {"order": 7})])
        >>> outcome_from_calls(run, case).score
        1.0
        >>> outcome_from_calls(as_trajectory([ToolCall("refund", {"order": 8})]), case).score
        0.0

    tau-bench rewards a run when its final database equals the one produced by replaying
    the task's expected actions. Without a database, trajcheck approximates that from the
    calls: tools named in ``case.optional_calls`` or ``case.read_only_calls``, and tools whose
    definition in ``case.tools`` carries the MCP annotation ``readOnlyHint: true``, are
    read-only (they cannot change state; ``non_writing_tools``); every other tool is
    state-changing. Success needs:

    1. every expected call that is not read-only paired one-to-one with a *successful*
       predicted call of a state-changing tool (``trajcheck.match.matching.match_calls``,
       maximum matching; ``args_mode`` None -> ``case.args_mode``, then each expected
       call's own mode, then ``expected_keys``);
    2. no other successful state-changing call (an extra write, e.g. a duplicate booking,
       fails the run); failed calls (``matching.is_failed``) changed nothing and are
       ignored, so a recovered error does not fail the outcome (DESIGN.md policy);
    3. when ``check_response``: ``response_includes(traj, case.response_must_include)``.

    Writes that change nothing (the run's own records decide; nothing is guessed):

    - an expected write with no matching successful call is not required when the run
      shows it changes nothing (``_no_effect_evidence``): in a benchmark whose expected state
      is the replay of its expected calls (``case.metadata["expected_state_is_replay"]``), a
      call of the run made exactly it and the tool rejected it; or the reader lists it under ``metadata["no_effect_calls"]``
      because the source's own checks prove it (tau2: its action check unmet while the DB
      check matched). The reason names the evidence (``parts["not_required"]``);
    - an extra successful write is not a side effect when its result equals the latest
      earlier result about the same object (``unchanged_writes``: the tool returned the
      record as it already was, e.g. a repeated identical update), listed in
      ``parts["unchanged"]``. Without such evidence the write counts, and the reason says
      the run does not show whether it changed anything.

    Reasons: a missing expected call says the tool was never called, that its calls failed,
    or names the closest call of the same tool and the first place its arguments differ
    (``closest_call_note``, ``trajcheck.match.explain``), e.g. ``"case '5': expected call 0
    (update_reservation_flights) not matched: closest call 4 of the run differs: flights[0]:
    unexpected keys origin, destination"``; an extra write reads ``"unexpected
    state-changing call 13 of the run: <tool> <args>"``. Call numbers are positions in
    ``traj.tool_calls()``, counted from 0.

    ``parts["writes_ok"]`` / ``parts["writes_reason"]``: the verdict and reason on the
    writes alone (1 and 2, without the response), comparable with a benchmark's own DB check.

    Known limit: writes that reach the same state with different arguments are judged
    wrong unless the case's argument matchers say the difference does not count (the
    tau-bench and tau2 readers set them per tool, ``trajcheck.read.traces.tau_domains``).
    """
    require_trajectory(traj, what="outcome_from_calls",
                       needs="the tool results (failed writes changed nothing) and the final response")
    if not isinstance(case, Case):
        raise MetricInputError(f"outcome_from_calls needs a Case, got {type(case).__name__}")
    if context is None:
        context = MatchContext(case_input=case.input if isinstance(case.input, str) else None,
                               user=case.user)
    read_only = non_writing_tools(case)
    exp_idx = [j for j, e in enumerate(case.expected_calls) if e.name not in read_only]
    expected = [case.expected_calls[j] for j in exp_idx]
    pred_idx: list[int] = []
    pred: list[ToolCall] = []
    for i, (c, r) in enumerate(traj.pairs()):
        if c.name in read_only or is_failed(r):
            continue
        pred_idx.append(i)
        pred.append(c)
    mode = args_mode or case.args_mode
    sm = shared(traj, case) if same_modes(case, mode) else None
    if sm is not None:
        # the run's one set of rows (run_matching): a write's row holds only expected calls
        # of its own (state-changing) tool, so its row among the expected writes is that
        # row renumbered; the writes succeeded, so none was set aside as retried
        at_w = {j: b for b, j in enumerate(exp_idx)}
        at_k = {i: k for k, i in enumerate(sm.kept)}
        rows = sm.rows
        sub = [[at_w[j] for j in rows[at_k[i]]] for i in pred_idx]
        m = call_matching(_hopcroft_karp(sub, len(expected)), len(expected))
    else:
        m = match_calls(pred, expected, args_mode=mode, context=context)
    missing = [exp_idx[j] for j in m.unmatched_exp]
    extra = [pred_idx[i] for i in m.unmatched_pred]
    not_required: dict[int, str] = {}
    for j in missing:
        why_none = _no_effect_evidence(traj, case, j, mode, context)
        if why_none is not None:
            not_required[j] = why_none
    missing = [j for j in missing if j not in not_required]
    same = unchanged_writes(traj, extra)
    extra = [i for i in extra if i not in same]
    calls = traj.tool_calls()
    names = [c.name for c in calls]
    cargs = [c.args for c in calls]
    unpaired = set(extra)
    pairs = traj.pairs()
    failed = [is_failed(r) for _, r in pairs] if missing else []

    def why_missing(j: int) -> str:
        e = case.expected_calls[j]
        why = closest_call_note(
            e.name, e.args, unpaired, names, cargs, failed,
            lambda i: explain_mismatch(pairs[i][0], e, args_mode=mode, context=context))
        if case.metadata.get(REPLAYED_KEY) is True and why == "the tool was never called":
            why += " (nothing the run records shows whether it would have changed the database)"
        return why

    problems = list(outcome_problems(case.id, missing, extra,
                                     [e.name for e in case.expected_calls], why_missing,
                                     names, cargs))
    parts: dict[str, Any] = {"missing_expected": missing, "extra_calls": extra,
                             "matched": len(m.pairs), "expected_writes": len(expected),
                             "writes_ok": not missing and not extra}
    if not_required:
        parts["not_required"] = {str(j): w for j, w in not_required.items()}
    if same:
        parts["unchanged"] = {str(i): f"its result equals call {k}'s: the record was already so"
                              for i, k in same.items()}
    n_write_problems = len(problems)
    resp: MetricResult | None = None
    if check_response:
        resp = response_includes(traj, case.response_must_include)
        parts["response"] = resp.to_dict()
        if not resp.passed:
            problems.append(f"case {case.id!r}: {resp.reason}")
    n_exp = len(expected) - len(not_required)
    made = writes_made(n_exp)
    if not_required:
        j, w = next(iter(not_required.items()))
        made += (f"; expected call {j} ({case.expected_calls[j].name}) not required: {w}"
                 + (f" (and {len(not_required) - 1} more)" if len(not_required) > 1 else ""))
    made += unchanged_note(same, calls)
    ok, reason = outcome_verdict(
        problems, len(problems),
        made + (", response complete" if resp is not None and case.response_must_include else ""))
    assert reason is not None  # asked with its reason
    parts["problems"] = problems
    parts["writes_reason"] = (problems[0] if n_write_problems else made)
    return MetricResult("outcome_from_calls", 1.0 if ok else 0.0, reason, parts, ok)
