"""Multi-call sequence metrics: precedence, forbidden sequences, call rates, error recovery.

Every function takes a ``Trajectory`` (and rules or a ``Case``) and returns a
``MetricResult`` with the score, the counts it came from in ``parts`` and a one-line
reason. Definitions follow ../shared/DESIGN.md ("Semantics that must be exactly right"
and "Policies"); each function's docstring states the policy it applies.

Call indices in results are positions in ``traj.tool_calls()`` (0-based); step indices
are positions in ``traj.steps`` (calls of one parallel step share a step index).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..errors import DatasetError, MetricInputError
from ..match.matchers import exact_equal
from ..match.matching import is_failed, retried_failures
from ..model import Case, ToolCall, Trajectory
from .calls import TrajLike, as_trajectory, require_trajectory
from .formulas import unrecovered_failures
from .result import MetricResult
from .steps import step_eval

# ---------------------------------------------------------------------------------------
# precedence


def _precedence_pairs(precedence: Any) -> list[tuple[str, str]]:
    """Validate ``precedence`` (a sequence of ``[A, B]`` pairs, or a ``Case``)."""
    if isinstance(precedence, Case):
        precedence = precedence.precedence
    if precedence is None or isinstance(precedence, (str, bytes, Mapping)):
        raise MetricInputError(
            "precedence must be a list of [before, after] tool-name pairs, "
            f"got {type(precedence).__name__}")
    out: list[tuple[str, str]] = []
    for i, rule in enumerate(precedence):
        if isinstance(rule, (str, bytes, Mapping)) or not isinstance(rule, Sequence) or len(rule) != 2:
            raise MetricInputError(
                f"precedence[{i}]: a rule must be a pair [before, after] of tool names, got {rule!r}")
        a, b = rule[0], rule[1]
        for pos, name in ((0, a), (1, b)):
            if not isinstance(name, str) or not name:
                raise MetricInputError(
                    f"precedence[{i}][{pos}]: a tool name must be a non-empty string, got {name!r}")
        if a == b:
            raise MetricInputError(
                f"precedence[{i}]: {a!r} before itself can never hold; remove the rule")
        out.append((a, b))
    return out


def _counted_call_steps(traj: Trajectory) -> list[tuple[int, int, ToolCall]]:
    """``(call_index, step_index, call)`` for every call except failed-and-retried attempts."""
    skip = retried_failures(traj)
    return [(ci, si, c) for ci, (si, c) in enumerate(traj.iter_call_steps()) if ci not in skip]


def ordering_accuracy(traj: TrajLike, precedence: Any) -> MetricResult:
    """Fraction of applicable precedence rules ``A before B`` that hold in ``traj``.

    Args:
        traj: the run, or a list of ToolCall (``calls.as_trajectory``: no results, so
            nothing failed or was retried; call i is at step i).
        precedence: a sequence of ``(A, B)`` pairs of exact tool names (``Case.precedence``
            form; a ``Case`` is also accepted and its ``precedence`` used).

    Returns:
        ``MetricResult`` named ``ordering_accuracy``: ``score`` in [0, 1] = held / applicable,
        or None when no rule is applicable (the reason says so; never a vacuous 1.0).
        ``parts``: ``rules`` (one dict per rule: ``before``, ``after``, ``status`` in
        ``held``/``violated``/``not_applicable``, and for violations ``call_index`` and
        ``step`` of the first offending ``after`` call and a ``why``), ``held``,
        ``violated``, ``applicable``, ``n_rules``. ``passed`` is True when every applicable
        rule holds, None when none applies.

    Raises:
        MetricInputError: ``precedence`` is not a list of pairs of non-empty, distinct
            tool names (the message names the rule index).

    Examples:
        The second rule does not apply (``email`` never ran), so 1 of 1 applicable holds:

        >>> from trajcheck.model import ToolCall
        >>> rules = [("get_order", "refund"), ("refund", "email")]
        >>> ordering_accuracy([ToolCall("get_order"), ToolCall("refund")], rules).score
        1.0
        >>> ordering_accuracy([ToolCall("refund"), ToolCall("get_order")], rules[:1]).score
        0.0

    Policy (DESIGN.md "Semantics" and "Policies: Precedence"):

    * ``A before B`` holds when every call of B has some call of A at an earlier step;
      it is violated when B ran and A never did, or when some B call has no A before it;
      it is not applicable, and left out of the denominator, when B never ran.
    * Calls in the same parallel step are not before each other (step indices from
      ``Trajectory.iter_call_steps()`` must be strictly smaller).
    * Failed attempts that were later retried (``matching.retried_failures``) are set
      aside, as before matching: a B attempt that failed and was retried after A ran
      does not violate the rule, and a failed-and-retried A attempt does not satisfy
      it (its retry may). A failed attempt that was not retried is the final attempt of
      that tool and still counts as the tool having run; whether it achieved anything is
      the outcome metrics' business.
    """
    traj = as_trajectory(traj, what="ordering_accuracy")
    rules = _precedence_pairs(precedence)
    calls = _counted_call_steps(traj)
    first_step: dict[str, int] = {}
    for _ci, si, c in calls:
        first_step.setdefault(c.name, si)
    rows: list[dict[str, Any]] = []
    held = violated = 0
    for a, b in rules:
        row: dict[str, Any] = {"before": a, "after": b}
        b_calls = [(ci, si) for ci, si, c in calls if c.name == b]
        if not b_calls:
            row["status"] = "not_applicable"
            row["why"] = f"{b} never ran"
        else:
            a_first = first_step.get(a)
            bad = next(((ci, si) for ci, si in b_calls if a_first is None or a_first >= si), None)
            if bad is None:
                row["status"] = "held"
                held += 1
            else:
                row["status"] = "violated"
                row["call_index"], row["step"] = bad
                if a_first is None:
                    row["why"] = f"{b} ran (call {bad[0]}) but {a} never did"
                elif a_first == bad[1]:
                    row["why"] = (f"{b} (call {bad[0]}) is in the same parallel step {bad[1]} "
                                  f"as the first {a}")
                else:
                    row["why"] = f"{b} (call {bad[0]}, step {bad[1]}) has no {a} before it"
                violated += 1
        rows.append(row)
    applicable = held + violated
    parts = {"rules": rows, "held": held, "violated": violated, "applicable": applicable,
             "n_rules": len(rules)}
    if applicable == 0:
        why = "no precedence rules" if not rules else "no rule applicable (no 'after' tool ran)"
        return MetricResult("ordering_accuracy", None, f"not applicable: {why}", parts, None)
    score = held / applicable
    if violated:
        first_bad = next(r for r in rows if r["status"] == "violated")
        reason = (f"{held}/{applicable} precedence rules hold; "
                  f"{first_bad['before']} before {first_bad['after']} violated: {first_bad['why']}")
    else:
        reason = f"all {applicable} applicable precedence rules hold"
    return MetricResult("ordering_accuracy", score, reason, parts, violated == 0)


# ---------------------------------------------------------------------------------------
# forbidden sequences

SEVERITIES: tuple[str, ...] = ("critical", "warning")
RULE_KEYS: tuple[str, ...] = ("tool", "requires_prior", "severity", "link", "name", "description",
                              "pattern", "without_prior", "rationale")
#: Seed 001's ``ForbiddenSequenceRule`` field names and the field each one is read as.
SEED001_RULE_KEYS: dict[str, str] = {"pattern": "tool", "without_prior": "requires_prior",
                                     "rationale": "description"}
LINK_KEYS: tuple[str, ...] = ("arg", "prior_arg")


def _reject_unknown_keys(obj: Mapping[Any, Any], allowed: Sequence[str], where: str) -> None:
    """DatasetError ``"<where>: unknown key 'k' (allowed: ...)"`` naming the first unknown key
    of ``obj`` in sorted order; nothing when every key is in ``allowed``."""
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        raise DatasetError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(allowed)})")


#: JSON-Schema (Draft 2020-12) fragment for one ``forbidden_sequences`` item of a case.
FORBIDDEN_RULE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["tool"],
    "additionalProperties": False,
    "properties": {
        "tool": {"type": "string", "minLength": 1,
                 "description": "fnmatch pattern (case-sensitive) for the gated tool"},
        "requires_prior": {
            "oneOf": [{"type": "string", "minLength": 1},
                      {"type": "array", "minItems": 1,
                       "items": {"type": "string", "minLength": 1}}],
            "description": "patterns; any one earlier successful call satisfies the rule. "
                           "Absent: the tool is never allowed"},
        "severity": {"enum": list(SEVERITIES), "default": "critical"},
        "link": {"type": "object", "required": ["arg"], "additionalProperties": False,
                 "properties": {"arg": {"type": "string", "minLength": 1},
                                "prior_arg": {"type": "string", "minLength": 1}}},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "pattern": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                    "description": "seed 001 form of tool: a list of patterns"},
        "without_prior": {"type": "array", "minItems": 1,
                          "items": {"type": "string", "minLength": 1},
                          "description": "seed 001 form of requires_prior"},
        "rationale": {"type": "string", "description": "seed 001 form of description"},
    },
}


@dataclass(frozen=True)
class ForbiddenRule:
    """One validated forbidden-sequence rule (see ``check_forbidden_sequences``)."""

    index: int
    name: str
    tool: str
    requires_prior: tuple[str, ...] | None
    severity: str
    link_arg: str | None = None
    link_prior_arg: str | None = None
    patterns: tuple[str, ...] = ()
    description: str | None = None

    def gates(self, tool_name: str) -> bool:
        """Whether a call of ``tool_name`` is gated by this rule (any of its patterns)."""
        return any(fnmatchcase(tool_name, p) for p in (self.patterns or (self.tool,)))


def validate_forbidden_rules(rules: Any) -> tuple[ForbiddenRule, ...]:
    """Check and normalise forbidden-sequence rule dicts.

    Args:
        rules: a sequence of dicts with keys ``tool`` (required, fnmatch pattern),
            ``requires_prior`` (a pattern or a non-empty list of patterns; absent = never
            allowed), ``severity`` (``critical`` default, or ``warning``), ``link``
            (``{"arg": name, "prior_arg": name}``, ``prior_arg`` defaulting to ``arg``),
            ``name`` and ``description`` (free text). Schema: ``FORBIDDEN_RULE_SCHEMA``.
            Seed 001's ``ForbiddenSequenceRule`` shape is read into the same form:
            ``pattern`` (a list of patterns, any of which gates the call) for ``tool``,
            ``without_prior`` for ``requires_prior``, ``rationale`` for ``description``
            (``name`` and ``severity`` as above); a rule giving both spellings of one field
            is an error.

    Returns:
        A tuple of ``ForbiddenRule``; ``name`` defaults to ``forbidden_sequences[i]``.

    Raises:
        DatasetError: naming ``forbidden_sequences[i]`` and the field, for a non-dict rule,
            an unknown key, a missing or non-string ``tool``, an empty ``requires_prior``,
            an unknown severity, or a malformed ``link`` (or a link without ``requires_prior``).
    """
    if type(rules) is not list and type(rules) is not tuple and (  # the usual two: no ABC check
            rules is None or isinstance(rules, (str, bytes, Mapping)) or not isinstance(rules, Sequence)):
        raise DatasetError(
            f"forbidden_sequences must be a list of rule objects, got {type(rules).__name__}")
    out: list[ForbiddenRule] = []
    for i, r in enumerate(rules):
        where = f"forbidden_sequences[{i}]"
        if type(r) is not dict and not isinstance(r, Mapping):
            raise DatasetError(f"{where}: a rule must be an object, got {type(r).__name__}")
        _reject_unknown_keys(r, RULE_KEYS, where)
        both = [f"{k}/{v}" for k, v in SEED001_RULE_KEYS.items() if k in r and v in r]
        if both:
            raise DatasetError(f"{where}: give one of {both[0]}, not both")
        if any(k in r for k in SEED001_RULE_KEYS):
            r = {SEED001_RULE_KEYS.get(k, k): v for k, v in r.items()}
        tool = r.get("tool")
        patterns: tuple[str, ...] = ()
        if isinstance(tool, (list, tuple)) and tool:
            for j, p in enumerate(tool):
                if not isinstance(p, str) or not p:
                    raise DatasetError(f"{where}.pattern[{j}]: must be a non-empty string, got {p!r}")
            patterns = tuple(tool)
            tool = ", ".join(patterns)
        elif not isinstance(tool, str) or not tool:
            raise DatasetError(f"{where}.tool: required non-empty pattern string (or 'pattern': "
                               f"a list of patterns), got {tool!r}")
        prior: tuple[str, ...] | None = None
        if "requires_prior" in r:
            rp = r["requires_prior"]
            if isinstance(rp, str):
                rp = [rp]
            if not isinstance(rp, Sequence) or isinstance(rp, (bytes, Mapping)) or not rp:
                raise DatasetError(
                    f"{where}.requires_prior: a pattern or a non-empty list of patterns, got {rp!r}")
            for j, p in enumerate(rp):
                if not isinstance(p, str) or not p:
                    raise DatasetError(
                        f"{where}.requires_prior[{j}]: must be a non-empty string, got {p!r}")
            prior = tuple(rp)
        severity = r.get("severity", "critical")
        if severity not in SEVERITIES:
            raise DatasetError(
                f"{where}.severity: must be 'critical' or 'warning', got {severity!r}")
        link_arg = link_prior = None
        if "link" in r:
            link = r["link"]
            if not isinstance(link, Mapping):
                raise DatasetError(f"{where}.link: must be an object {{arg, prior_arg}}, got {link!r}")
            _reject_unknown_keys(link, LINK_KEYS, f"{where}.link")
            link_arg = link.get("arg")
            link_prior = link.get("prior_arg", link_arg)
            for fld, v in (("arg", link_arg), ("prior_arg", link_prior)):
                if not isinstance(v, str) or not v:
                    raise DatasetError(f"{where}.link.{fld}: must be a non-empty string, got {v!r}")
            if prior is None:
                raise DatasetError(f"{where}.link: needs requires_prior (a link ties the call to a prior call)")
        name = r.get("name", where)
        if not isinstance(name, str):
            raise DatasetError(f"{where}.name: must be a string, got {name!r}")
        desc = r.get("description")
        if desc is not None and not isinstance(desc, str):
            raise DatasetError(f"{where}.description: must be a string, got {desc!r}")
        out.append(ForbiddenRule(i, name, tool, prior, severity, link_arg, link_prior, patterns, desc))
    return tuple(out)


def _rules_from(rules: Any) -> tuple[ForbiddenRule, ...]:
    if isinstance(rules, tuple) and all(isinstance(r, ForbiddenRule) for r in rules):
        return rules
    return validate_forbidden_rules(rules)


def check_forbidden_sequences(traj: TrajLike, rules: Any) -> MetricResult:
    """Check forbidden tools and "needs a prior call" rules on one run.

    Args:
        traj: the run, or a list of ToolCall (``calls.as_trajectory``: no results, so
            nothing failed or was retried; call i is at step i).
        rules: rule dicts as described in ``validate_forbidden_rules`` (``Case.forbidden_sequences``
            form), e.g. ``{"tool": "delete_booking", "requires_prior": ["confirm*"],
            "link": {"arg": "booking_id"}, "severity": "critical"}`` (deleting booking X needs an
            earlier successful confirm of booking X), or ``{"tool": "update_*"}`` (never allowed).

    Returns:
        ``MetricResult`` named ``forbidden_sequences``: ``score`` 1.0 when no critical rule is
        violated else 0.0 (warnings are reported, not scored); ``passed`` likewise.
        ``parts``: ``violations`` (list of ``{rule, rule_index, call_index, step, tool,
        tool_called, required_prior, severity, rationale, why}`` in call order; ``step`` is
        the trajectory step index, where seed 001 numbers calls from 1: its ``step`` is
        ``call_index + 1`` when each call is its own step), ``critical`` and ``warning``
        counts, ``n_rules``.

    Raises:
        DatasetError: a malformed rule (names the rule index and field).
        MetricInputError: ``traj`` is neither a Trajectory nor a list of ToolCall.

    Examples:
        >>> from trajcheck.model import ToolCall
        >>> r = check_forbidden_sequences([ToolCall("refund"), ToolCall("drop_db")],
        ...                               [{"tool": "drop_*", "severity": "critical"}])
        >>> r.score, r.parts["critical"], r.parts["violations"][0]["call_index"]
        (0.0, 1, 1)

    Policy (DESIGN.md "Composite": critical violations zero the composite; warnings are
    reported, not scored). Tool patterns are ``fnmatch.fnmatchcase`` (case-sensitive) over
    the whole tool name. Every attempt of a gated tool is checked, including failed and
    retried ones: trying a forbidden action is the violation. A prior call satisfies a rule
    only if it is at a strictly earlier step (calls of one parallel step are not before each
    other, as for precedence) and did not fail (``matching.is_failed``; an unknown status
    counts as not failed). With a ``link``, the prior call's ``prior_arg`` must equal the
    gated call's ``arg`` by the type-aware ``exact`` rule (``matchers.exact_equal``: 7 ==
    7.0, "7" != 7); a gated call whose arguments did not parse or lack ``arg`` cannot be
    linked and is a violation.

    Reason: ``"no violations of 2 forbidden-sequence rules"``; rules named
    ``forbidden_calls[i]`` (the composite's form of ``Case.forbidden_calls``) are counted as
    forbidden calls: ``"none of 1 forbidden call made"``.
    """
    traj = as_trajectory(traj, what="check_forbidden_sequences")
    checked = _rules_from(rules)
    pairs = traj.pairs()
    steps = [si for si, _c in traj.iter_call_steps()]
    ok_prior = [not is_failed(res) for _c, res in pairs]
    index = {r.index: _PriorIndex(r, pairs, steps, ok_prior)
             for r in checked if r.requires_prior is not None}
    violations: list[dict[str, Any]] = []
    for ci, (call, _res) in enumerate(pairs):
        for rule in checked:
            if not rule.gates(call.name):
                continue
            why: str | None
            if rule.requires_prior is None:
                why = f"{call.name} is never allowed"
            else:
                why = _prior_missing(rule, call, steps[ci], index[rule.index])
            if why is not None:
                # seed 001's violation keys too: tool_called, required_prior, rationale
                violations.append({"rule": rule.name, "rule_index": rule.index, "call_index": ci,
                                   "step": steps[ci], "tool": call.name, "tool_called": call.name,
                                   "required_prior": list(rule.requires_prior or ()),
                                   "severity": rule.severity, "rationale": rule.description,
                                   "why": why})
    critical = sum(v["severity"] == "critical" for v in violations)
    warning = len(violations) - critical
    parts = {"violations": violations, "critical": critical, "warning": warning,
             "n_rules": len(checked)}
    if not checked:
        return MetricResult("forbidden_sequences", 1.0, "no forbidden-sequence rules", parts, True)
    if not violations:
        reason = _no_violation_reason(checked)
    else:
        v = violations[0]
        reason = (f"{critical} critical, {warning} warning violations; first: call {v['call_index']} "
                  f"{v['tool']} breaks {v['rule']} ({v['why']})")
    return MetricResult("forbidden_sequences", 0.0 if critical else 1.0, reason, parts,
                        critical == 0)


def _no_violation_reason(rules: Sequence[ForbiddenRule]) -> str:
    n_calls = sum(r.name.startswith("forbidden_calls[") for r in rules)
    n_seq = len(rules) - n_calls
    bits = []
    if n_seq:
        bits.append(f"no violations of {n_seq} forbidden-sequence rule{'s' if n_seq != 1 else ''}")
    if n_calls:
        bits.append(f"none of {n_calls} forbidden call{'s' if n_calls != 1 else ''} made")
    return "; ".join(bits)


class _PriorIndex:
    """For one rule: the earliest step of a usable prior call, overall and per linked value.

    Built once per rule so that checking every gated call is linear in the run's length.
    Linked values are keyed by ``steps.call_key``'s canonical form (equal exactly when
    ``matchers.exact_equal`` holds); values that cannot be keyed are compared one by one.
    """

    def __init__(self, rule: ForbiddenRule, pairs: Sequence[tuple[ToolCall, Any]],
                 steps: Sequence[int], ok_prior: Sequence[bool]) -> None:
        from .steps import canon_value

        self.first: float = math.inf
        self.by_key: dict[Any, int] = {}
        self.loose: list[tuple[int, Any]] = []
        priors = rule.requires_prior or ()
        key = rule.link_prior_arg or rule.link_arg
        for (c, _r), si, ok in zip(pairs, steps, ok_prior):
            if not ok or not any(fnmatchcase(c.name, p) for p in priors):
                continue
            self.first = min(self.first, si)
            if key is None or c.args is None or key not in c.args:
                continue
            k = canon_value(c.args[key])
            if k is None:
                self.loose.append((si, c.args[key]))
            elif k not in self.by_key:
                self.by_key[k] = si

    def linked_before(self, value: Any, step: int) -> bool:
        from .steps import canon_value

        k = canon_value(value)
        if k is not None and self.by_key.get(k, step) < step:
            return True
        return any(si < step and exact_equal(v, value) for si, v in self.loose)


def _prior_missing(rule: ForbiddenRule, call: ToolCall, step: int, idx: _PriorIndex) -> str | None:
    """None when an earlier successful prior call satisfies ``rule`` for ``call``, else why not."""
    priors = rule.requires_prior or ()
    needed = " or ".join(priors)
    if rule.link_arg is None:
        return None if idx.first < step else f"no earlier successful {needed}"
    if call.args is None or rule.link_arg not in call.args:
        return (f"{call.name} has no parsed {rule.link_arg!r} argument to link to a prior "
                f"{'/'.join(priors)}")
    want = call.args[rule.link_arg]
    if idx.linked_before(want, step):
        return None
    if idx.first < step:
        return f"no earlier successful {needed} with {rule.link_prior_arg}={want!r}"
    return f"no earlier successful {needed}"


# ---------------------------------------------------------------------------------------
# call rates


def call_rates(traj: TrajLike, case: Case, *, args_mode: str | None = None,
               context: Any = None) -> MetricResult:
    """Unnecessary, duplicate and forbidden call rates of one run against a case.

    Args:
        traj: the run, or a list of ToolCall (``calls.as_trajectory``: no results, so
            nothing failed or was retried; call i is at step i).
        case: supplies ``expected_calls``, ``optional_calls``, ``forbidden_calls`` and
            ``args_mode``.
        args_mode, context: passed to the matching (``matching.match_calls``).

    Returns:
        ``MetricResult`` named ``call_rates`` with ``parts``: ``unnecessary_rate``,
        ``duplicate_rate``, ``forbidden_rate`` (each in [0, 1]), their counts
        ``unnecessary``, ``duplicate``, ``forbidden``, the denominator ``n_calls`` (all calls
        of the run) and ``n_counted`` (calls that can be flagged). ``score`` = fraction of
        all calls with none of the three flags, or None when the run made no call (the
        rates are then 0.0 and the reason says there were no calls).

    Raises:
        MetricInputError: ``traj`` is neither a Trajectory nor a list of ToolCall.
        MatcherError: as ``tool_call_prf``.

    Examples:
        A repeated refund (duplicate and unnecessary) and a forbidden call, of 3 calls:

        >>> from trajcheck.model import Case, ToolCall
        >>> case = Case(id="c3", input="refund order 7", forbidden_calls=["drop_*"],
        ...             expected_calls=[{"name": "refund", "args": {"order": 7}}])
        >>> refund = ToolCall("refund", {"order": 7})
        >>> p = call_rates([refund, refund, ToolCall("drop_db")], case).parts
        >>> p["unnecessary"], p["duplicate"], p["forbidden"], p["n_calls"]
        (2, 1, 1, 3)

    Definitions (per call, from ``metrics.steps.step_eval``; flags may overlap):

    * Denominator: all calls of the run (seed 000 §2.5: ``... / |calls|``).
      Failed-and-retried attempts are in it but never flagged duplicate or unnecessary
      (DESIGN: they are scored by ``error_recovery``), so a recovered retry does not
      raise a rate.
    * unnecessary: a counted call that the maximum one-to-one matching pairs with no
      expected call and whose name is not in ``optional_calls`` (a right-tool call with
      wrong arguments, a duplicate and an unparsed call all count).
    * duplicate: a counted call identical (same name, ``exact_equal`` arguments) to an
      earlier counted call that did not fail, beyond the number of such identical calls
      the case expects (two identical expected calls make two identical calls fine).
      Retries are never duplicates; unparsed calls are never duplicates.
    * forbidden: a counted call whose name matches a ``forbidden_calls`` pattern
      (``fnmatchcase``). Forbidden attempts among retried failures are not in this rate
      but are still violations in ``check_forbidden_sequences`` and the composite.
    """
    ev = step_eval(as_trajectory(traj, what="call_rates"), case, args_mode=args_mode, context=context)
    counted = [r for r in ev.predicted if "retried" not in r.flags]
    n = len(ev.predicted)
    counts = {k: sum(k in r.flags for r in counted) for k in ("unnecessary", "duplicate", "forbidden")}
    parts: dict[str, Any] = {f"{k}_rate": (v / n if n else 0.0) for k, v in counts.items()}
    parts.update(counts)
    parts["n_counted"] = len(counted)
    parts["n_calls"] = n
    if n == 0:
        return MetricResult("call_rates", None,
                            "no calls: every rate is 0.0 (nothing to rate)", parts, None)
    clean = n - sum(bool({"unnecessary", "duplicate", "forbidden"} & set(r.flags)) for r in counted)
    retried = n - len(counted)
    also = f" ({retried} failed-and-retried, never flagged)" if retried else ""
    reason = (f"of {n} calls{also}: {counts['unnecessary']} unnecessary, "
              f"{counts['duplicate']} duplicate, {counts['forbidden']} forbidden")
    return MetricResult("call_rates", clean / n, reason, parts, clean == n)


# ---------------------------------------------------------------------------------------
# error recovery and success claims

#: Default claim phrases: a completed action reported in the past/perfect tense or as done.
CLAIM_PATTERN = (
    r"\b(?:has|have|had)\s+(?:now\s+|successfully\s+|already\s+)*been\b"
    r"|\b(?:was|were|is|are)\s+(?:now\s+)?(?:successfully\s+)?"
    r"(?:[a-z]+ed|done|sent|made|set\s+up|paid|booked|cancell?ed|confirmed|complete)\b"
    r"|\bsuccessfully\b"
    r"|\bI(?:['’]ve|\s+have|\s+just)?\s+(?:now\s+|successfully\s+|already\s+)*"
    r"(?:[a-z]+ed|made|sent|done|set\s+up|paid)\b"
    r"|\bdone!|\b(?:all\s+set|all\s+done|taken\s+care\s+of|gone\s+ahead\s+and\s+[a-z]+ed|went\s+through|is\s+confirmed)\b"
)
#: Default negation / hedge cues: a sentence with one of these is not a success claim.
NEGATION_PATTERN = (
    r"n['’]t\b|\b(?:not|never|unable|cannot|can't|couldn't|could\s+not|failed|fail|failure|error|"
    r"unfortunately|sorry|unsuccessful|wasn't|weren't|hasn't|haven't|didn't|won't|would|"
    r"will|if|once|try|trying|attempt(?:ed)?|pending)\b"
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_STOP = frozenset({"get", "set", "the", "and", "for", "with", "tool", "api", "call", "run"})


def _action_terms(action: str) -> list[str]:
    words = re.split(r"[^a-z0-9]+", re.sub(r"(?<=[a-z])(?=[A-Z])", "_", action).lower())
    return [w[:-1] if w.endswith("e") and len(w) > 4 else w for w in words
            if len(w) >= 3 and w not in _STOP]


def claims_success(text: str | None, action: str | None = None, *,
                   pattern: str | None = None, negation: str | None = None,
                   extra_claims: Sequence[str] = (), extra_negations: Sequence[str] = ()) -> bool:
    """Whether ``text`` claims, in some sentence, that an action happened.

    Args:
        text: the final response (None or empty -> False).
        action: optional tool name or verb (``"cancel_reservation"``, ``"book"``); when given,
            the claiming sentence must also mention one of its words (split on ``_``,
            non-letters and camelCase; words of >= 3 letters except get/set/the/...; a final
            ``e`` of a long word is dropped so ``update`` finds ``updated``), as a word prefix,
            case-insensitively.
        pattern: regex (case-insensitive) for a claim; default ``CLAIM_PATTERN`` (perfect
            or passive past tense, "successfully", "I booked/created/...", "all set", "done!").
        negation: regex (case-insensitive); a sentence matching it is not a claim; default
            ``NEGATION_PATTERN`` (not, n't, unable, failed, error, unfortunately, sorry,
            will/would/if/once/try, pending...).
        extra_claims: regexes from data (a case's ``claim_patterns``), searched
            case-insensitively on RE2 (``match.safe_regex``) beside ``pattern``: a sentence
            matching one of them is a claim too ("Refund issued." with ``\bissued\b``).
        extra_negations: regexes from data (a case's ``negation_patterns``), on RE2 beside
            ``negation``: a sentence matching one of them is not a claim.

    Returns:
        True when some sentence (split at . ! ? ; and newlines) matches ``pattern``, does not
        match ``negation`` and, with ``action``, names the action.

    This is a documented heuristic (trajcheck policy for the false-success check of DESIGN.md
    "Policies: Error recovery"); pass your own ``pattern``/``negation`` for other phrasings or
    languages, or use a judge.

    Raises:
        MetricInputError: ``pattern`` or ``negation`` is not a valid regex.
        MatcherError: an ``extra_claims`` / ``extra_negations`` pattern RE2 refuses.
    """
    if not text:
        return False
    if extra_claims or extra_negations:
        return _claims(text, action, pattern, negation, tuple(extra_claims), tuple(extra_negations))
    if (type(text) is str and len(text) <= 8192 and (action is None or type(action) is str)
            and (pattern is None or type(pattern) is str)
            and (negation is None or type(negation) is str)):
        # a full score asks the same of one final response several times (a bounded
        # number of texts of bounded length is kept)
        return _claims_cached(text, action, pattern, negation)
    return _claims(text, action, pattern, negation)


@functools.lru_cache(maxsize=256)
def _claims_cached(text: str, action: str | None, pattern: str | None,
                   negation: str | None) -> bool:
    """``_claims`` of strings, remembered (a pure function of them)."""
    return _claims(text, action, pattern, negation)


def _extra(patterns: tuple[str, ...], where: str) -> list[Any]:
    from ..match.safe_regex import compile_pattern

    return [compile_pattern(p, "i", where=f"{where}[{k}]") for k, p in enumerate(patterns)]


def _claims(text: Any, action: str | None, pattern: str | None, negation: str | None,
            extra_claims: tuple[str, ...] = (), extra_negations: tuple[str, ...] = ()) -> bool:
    """``claims_success`` of a non-empty ``text`` (its docstring)."""
    try:
        claim = re.compile(pattern or CLAIM_PATTERN, re.IGNORECASE)
        neg = re.compile(negation or NEGATION_PATTERN, re.IGNORECASE)
    except re.error as e:
        raise MetricInputError(f"claims_success: invalid regex ({e})") from e
    more = _extra(extra_claims, "claim_patterns")
    less = _extra(extra_negations, "negation_patterns")
    terms = _action_terms(action) if action else []
    if action and not terms:
        terms = [action.lower()]
    for sentence in _SENTENCE.split(text):
        if not (claim.search(sentence) or any(p.search(sentence) for p in more)):
            continue
        if neg.search(sentence) or any(p.search(sentence) for p in less):
            continue
        if terms:
            low = sentence.lower()
            if not any(re.search(r"\b" + re.escape(t), low) for t in terms):
                continue
        return True
    return False


def error_recovery(traj: Trajectory, *, retry_budget: int = 2,
                   action_tools: Sequence[str] | None = None,
                   claim_pattern: str | None = None, case: Case | None = None) -> MetricResult:
    """Error-recovery counts on one run.

    Args:
        traj: the run; calls are joined to results with ``Trajectory.pairs()`` and a result
            is an error per ``matching.is_failed`` (``is_error`` True or ``error`` set).
        retry_budget: how many retries of a failing tool are acceptable (>= 0).
        action_tools: fnmatch patterns of the tools whose success the final response may
            claim; default: the tools that had an error in this run, each by its own
            name (``formulas.unrecovered_failures``).
        claim_pattern: regex overriding ``CLAIM_PATTERN`` in ``claims_success``.
        case: when given, its ``claim_patterns`` / ``negation_patterns`` are added to the
            claim and negation cues (``claims_success``'s ``extra_claims`` / ``extra_negations``).

    Returns:
        ``MetricResult`` named ``error_recovery``; ``score`` = recovered / errors in [0, 1],
        None when no call failed. ``passed`` = no unrecovered error, no retries beyond the
        budget and no false success. ``parts``: ``errors``, ``recovered``, ``unrecovered``,
        ``longest_retry_run``, ``retries_beyond_budget``, ``retry_budget``, ``claims_success``,
        ``false_success``, ``unsatisfied_actions`` and ``failed_calls`` (call indices).

    Raises:
        MetricInputError: ``retry_budget`` is not a non-negative int, or ``traj`` is not a
            Trajectory (a list of ToolCall has no results to recover from).

    Examples:
        A refund fails, is retried once and succeeds; the claim is then true:

        >>> from trajcheck.model import Trajectory
        >>> run = Trajectory.from_dict({"final_response": "Refund issued.", "steps": [
        ...     {"index": 0, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": "a"}]},
        ...     {"index": 1, "kind": "tool_result",
        ...      "tool_result": {"call_id": "a", "name": "refund", "is_error": True}},
        ...     {"index": 2, "kind": "tool_call", "tool_calls": [{"name": "refund", "call_id": "b"}]},
        ...     {"index": 3, "kind": "tool_result",
        ...      "tool_result": {"call_id": "b", "name": "refund", "is_error": False}}]})
        >>> r = error_recovery(run)
        >>> r.score, r.parts["errors"], r.parts["longest_retry_run"], r.passed
        (1.0, 1, 1, True)

    Definitions (DESIGN.md "Policies: Error recovery" and "A retry is..."):

    * errors: calls whose result failed.
    * recovered: a failed call followed later by a call of the same tool whose result did
      not fail (unknown status counts as not failed); unrecovered = errors - recovered.
    * retry run: starting at a failed call of tool T, the number of later T calls up to
      and including the first one that did not fail (calls of other tools in between do
      not end the run: by DESIGN any later call of the same tool is a retry).
      ``longest_retry_run`` is the maximum over errors; ``retries_beyond_budget`` =
      max(0, longest_retry_run - retry_budget).
    * false success: the final response claims the action happened (``claims_success``
      with the action name) while no call of that action tool succeeded. Checked for each
      action tool; a truthful claim after a recovered retry is not a false success.
      Rates over fault-injected runs are computed by ``metrics.recovery``, not here.
    """
    traj = require_trajectory(traj, what="error_recovery", needs="the tool results")
    if isinstance(retry_budget, bool) or not isinstance(retry_budget, int) or retry_budget < 0:
        raise MetricInputError(f"retry_budget must be an int >= 0, got {retry_budget!r}")
    pairs = traj.pairs()
    failed = [is_failed(res) for _c, res in pairs]
    names = [c.name for c, _r in pairs]
    # run[i] / rec[i] for a failed call i: later same-tool calls up to and including the first
    # that did not fail, and whether one did not fail; computed backwards in linear time.
    nxt: list[int | None] = [None] * len(pairs)
    last: dict[str, int] = {}
    for i in range(len(pairs) - 1, -1, -1):
        nxt[i] = last.get(names[i])
        last[names[i]] = i
    run = [0] * len(pairs)
    rec = [False] * len(pairs)
    for i in range(len(pairs) - 1, -1, -1):
        j = nxt[i]
        if not failed[i] or j is None:
            continue
        run[i], rec[i] = (1, True) if not failed[j] else (1 + run[j], rec[j])
    failed_idx = [i for i, bad in enumerate(failed) if bad]
    errors = len(failed_idx)
    recovered = sum(rec[i] for i in failed_idx)
    longest = max((run[i] for i in failed_idx), default=0)
    if action_tools is None:  # the failed tools themselves, by name (not as patterns)
        unsatisfied = unrecovered_failures(names, failed)
    else:
        if isinstance(action_tools, str):
            action_tools = [action_tools]
        succeeded = [n for n, bad in zip(names, failed) if not bad]
        unsatisfied = [a for a in action_tools if not any(fnmatchcase(n, a) for n in succeeded)]
    more = case.claim_patterns if case is not None else ()
    less = case.negation_patterns if case is not None else ()
    claim_any = claims_success(traj.final_response, pattern=claim_pattern,
                               extra_claims=more, extra_negations=less)
    false_for = [a for a in unsatisfied
                 if claims_success(traj.final_response, a.replace("*", " ").replace("?", " "),
                                   pattern=claim_pattern, extra_claims=more, extra_negations=less)]
    beyond = max(0, longest - retry_budget)
    unrecovered = errors - recovered
    parts = {"errors": errors, "recovered": recovered, "unrecovered": unrecovered,
             "longest_retry_run": longest, "retries_beyond_budget": beyond,
             "retry_budget": retry_budget, "claims_success": claim_any,
             "false_success": bool(false_for), "unsatisfied_actions": unsatisfied,
             "false_success_actions": false_for, "failed_calls": failed_idx}
    passed = unrecovered == 0 and beyond == 0 and not false_for
    bits = [f"{errors} errors, {recovered} recovered"]
    if beyond:
        bits.append(f"retry run of {longest} exceeds budget {retry_budget}")
    if false_for:
        bits.append(f"false success claim for {', '.join(false_for)}")
    if errors == 0:
        return MetricResult("error_recovery", None, "; ".join(["no failed calls"] + bits[1:]),
                            parts, passed)
    return MetricResult("error_recovery", recovered / errors, "; ".join(bits), parts, passed)


__all__ = [
    "CLAIM_PATTERN",
    "FORBIDDEN_RULE_SCHEMA",
    "NEGATION_PATTERN",
    "ForbiddenRule",
    "call_rates",
    "check_forbidden_sequences",
    "claims_success",
    "error_recovery",
    "ordering_accuracy",
    "validate_forbidden_rules",
]
