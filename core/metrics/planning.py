"""Planning metrics for plan-then-execute agents that emit a plan artefact (seed 000 §5.2).

Seed 000 §5.2 defines plan_coverage = |user sub-goals addressed by plan| / |user sub-goals|
and plan_adherence = |plan steps executed (or explicitly revised)| / |plan steps|:

- ``plan_coverage(plan, subgoals, match=...)``: the fraction of the case's labelled
  sub-goals that the plan covers, each plan step covering at most one sub-goal (maximum
  one-to-one matching); free-text sub-goals are matched by their words (``"literal"``, the
  default, standard library only), by sentence-embedding similarity (``"semantic"``) or by
  a judge (``"judge"``);
- ``plan_adherence(plan, traj, revisions=...)``: the fraction of plan steps the agent then
  executed in the plan's order (longest common subsequence of plan steps and tool calls) or
  explicitly revised (dropped or replaced by a later plan version, or marked ``revised``).

These are trajcheck's deterministic counterparts of the LLM-judged plan metrics of the
field: DeepEval's ``PlanQualityMetric`` (is the plan complete for the task?) and
``PlanAdherenceMetric`` (did execution follow the plan?), and the plan / sub-goal progress
measures of agent benchmarks (e.g. AgentBoard's progress rate over labelled sub-goals, Ma et
al. 2024, arXiv 2401.13178). The labels live in the case; only ``match="judge"`` needs a
model (the plan judges are in ``trajcheck.judges.planning``).

A plan step (and a sub-goal) is one of:

- a string: a tool name (``"search_flights"``), or free text (``"find a flight to Paris"``);
- a mapping ``{"name": tool, "args": {...}}`` (``args`` optional; ``"tool"`` is accepted
  for ``"name"``, and ``"description"``/``"text"``/``"content"`` hold free text; a plan
  step may carry ``"revised": "<reason>"``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MetricInputError
from ..match.matchers import exact_equal
from ..match.matching import max_matching
from ..model import ToolCall, Trajectory
from .result import MetricResult

__all__ = [
    "MATCH_MODES",
    "PLAN_COVERAGE_THRESHOLD",
    "PlanStep",
    "parse_plan_step",
    "args_agree",
    "PlanCoverageResult",
    "plan_coverage",
    "PlanAdherenceResult",
    "merge_plan_versions",
    "plan_adherence",
    "same_step",
]


@dataclass(frozen=True)
class PlanStep:
    """A normalised plan step or sub-goal: a tool ``name`` (or None), an ``args`` constraint
    (None = no constraint) and free ``text`` (or None)."""

    name: str | None = None
    args: dict[str, Any] | None = None
    text: str | None = None
    revised: str | None = None
    """Set when the plan artefact itself marks the step as explicitly revised (its
    ``"revised"`` field: the reason, or ``"revised"`` for a bare true); never part of a
    step's identity between plan versions (:func:`same_step`)."""

    def label(self) -> str:
        """A short human label."""
        if self.name is not None:
            return self.name if self.args is None else f"{self.name}({self.args})"
        return repr(self.text)


def parse_plan_step(item: Any, where: str = "plan step") -> PlanStep:
    """Normalise a plan step / sub-goal (see the module doc) to a ``PlanStep``.

    A string without whitespace is a tool name (and also its own text); a string with
    whitespace is free text. Raises ``MetricInputError`` (naming ``where``) for other shapes,
    an empty string, a non-string name, or non-mapping ``args``.
    """
    if isinstance(item, PlanStep):
        return item
    if isinstance(item, str):
        s = item.strip()
        if not s:
            raise MetricInputError(f"{where}: empty string")
        if re.search(r"\s", s):
            return PlanStep(text=s)
        return PlanStep(name=s, text=s)
    if isinstance(item, Mapping):
        name = item.get("name", item.get("tool"))
        text = item.get("description", item.get("text", item.get("content")))
        args = item.get("args", item.get("arguments"))
        if name is not None and not isinstance(name, str):
            raise MetricInputError(f"{where}: name must be a string, got {name!r}")
        if text is not None and not isinstance(text, str):
            raise MetricInputError(f"{where}: description must be a string, got {text!r}")
        if args is not None and not isinstance(args, Mapping):
            raise MetricInputError(f"{where}: args must be an object, got {args!r}")
        if name is None and not text:
            raise MetricInputError(f"{where}: needs a tool name or a description, got {item!r}")
        rev = item.get("revised")
        if rev is not None and not (isinstance(rev, bool) or (isinstance(rev, str) and rev.strip())):
            raise MetricInputError(f"{where}: revised must be true/false or a non-empty reason, "
                                   f"got {rev!r}")
        mark = "revised" if rev is True else rev.strip() if isinstance(rev, str) else None
        return PlanStep(name=name, args=dict(args) if args is not None else None, text=text,
                        revised=mark)
    raise MetricInputError(
        f"{where}: expected a string or {{name, args}} object, got {type(item).__name__}")


def args_agree(constraint: Mapping[str, Any] | None, args: Mapping[str, Any] | None) -> bool:
    """True when every key of ``constraint`` is in ``args`` with an exactly equal value
    (type-aware, DESIGN.md ``exact``: ``matchers.exact_equal``); extra keys in ``args`` are
    allowed. A None constraint
    agrees with anything except unparsed arguments (``args`` None never matches, DESIGN.md)."""
    if args is None:
        return False
    if constraint is None:
        return True
    return all(k in args and exact_equal(v, args[k]) for k, v in constraint.items())


def _norm_text(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).casefold()
    return " ".join(re.findall(r"\w+", s))


def _contains_words(hay: str, needle: str) -> bool:
    h, n = _norm_text(hay), _norm_text(needle)
    return bool(n) and f" {n} " in f" {h} "


PLAN_COVERAGE_THRESHOLD = 0.78
"""Default cosine for ``plan_coverage(match="semantic")`` with all-MiniLM-L6-v2, measured on
plan-step pairs (asserted in tests/test_planning_semantic.py). Paraphrases of a sub-goal:
0.9170 "find a flight to Paris" / "search flights to Paris", 0.9139, 0.8792, 0.8502, 0.8469,
0.8065 ("cancel the reservation" / "cancel the booking"), 0.7707 ("tell the user the total
price" / "report the total cost to the user"), 0.7069. Near misses: 0.7704 ("cancel the
reservation" / "confirm the reservation"), 0.7172, 0.7066, 0.6453, 0.5944 ("find a flight
to Paris" / "find a flight to Rome"), 0.5825, 0.5606, 0.5539. 0.78 accepts 6 of the 8
paraphrases and none of the 8 near misses; the semantic matcher's 0.75 would accept
cancel/confirm. Opposite actions on the same object score high, so prefer the judge where
that matters."""

MATCH_MODES = ("literal", "semantic", "judge")
"""How ``plan_coverage`` decides that a plan step covers a free-text sub-goal."""


def _id_tokens(text: str) -> list[str]:
    # Tokens an embedding cannot tell apart (1234, INC-7, 2026-07-18, a.rao): they must
    # appear in the step as written (casefolded), as the semantic matcher requires.
    from ..match.matchers import _exact_kind

    toks = (t.strip(".,;:!?()[]{}\"'") for t in text.split())
    return [t.casefold() for t in toks if t and _exact_kind(t)]


def _step_text(step: PlanStep) -> str:
    """A plan step as one text for a similarity scorer or judge: its tool name (``_`` read
    as a space) and its description."""
    parts = [step.name.replace("_", " ")] if step.name else []
    if step.text and step.text != step.name:
        parts.append(step.text)
    if step.args:
        parts.append(" ".join(f"{k}={v}" for k, v in step.args.items()))
    return " ".join(parts)


def _free_text(goal: PlanStep) -> bool:
    """A sub-goal matched by meaning: it has its own text and no ``args`` (a bare tool name
    or ``{name, args}`` is structured and matched exactly in every mode)."""
    return goal.args is None and goal.text is not None and goal.text != goal.name


def _semantic_adjacency(steps: Sequence[PlanStep], goals: Sequence[PlanStep],
                        scorer: Callable[[str, str], float], threshold: float,
                        sims: dict[tuple[int, int], float]) -> list[list[int]]:
    """For each sub-goal, the steps covering it literally or by similarity (``sims`` gets
    the cosine of every pair scored)."""
    adj: list[list[int]] = []
    for i, goal in enumerate(goals):
        row: list[int] = []
        free = _free_text(goal)
        ids = _id_tokens(goal.text or "") if free else []
        for j, step in enumerate(steps):
            if _step_covers(step, goal):
                row.append(j)
                continue
            if not free:  # structured sub-goals (a tool name, {name, args}) stay exact
                continue
            stext = _step_text(step)
            hay = {t.casefold().strip(".,;:!?()[]{}\"'") for t in stext.split()}
            if any(t not in hay for t in ids):
                continue
            sims[(i, j)] = float(scorer(goal.text or "", stext))
            if sims[(i, j)] >= threshold:
                row.append(j)
        adj.append(row)
    return adj


def _step_covers(step: PlanStep, goal: PlanStep) -> bool:
    """Does plan step ``step`` cover sub-goal ``goal``? (definition in ``plan_coverage``)"""
    if goal.name is not None and step.name == goal.name:
        return goal.args is None or (step.args is not None and args_agree(goal.args, step.args))
    if goal.args is not None:
        return False  # a {name, args} sub-goal needs a step naming that tool
    needle = goal.text or goal.name
    if not needle:
        return False
    hay = " ".join(x for x in (step.name, step.text) if x)
    return _contains_words(hay, needle)


@dataclass(frozen=True)
class PlanCoverageResult(MetricResult):
    """Plan coverage: ``covered`` / ``n_subgoals`` (= score, None when no sub-goals);
    ``missing`` lists the uncovered sub-goals' labels; ``pairs`` the (subgoal, plan step)
    index pairs of the matching."""

    covered: int = 0
    n_subgoals: int = 0
    missing: tuple[str, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(covered=self.covered, n_subgoals=self.n_subgoals, missing=list(self.missing),
                 pairs=[list(p) for p in self.pairs])
        return d


def _plan_list(plan: Any, what: str) -> list[Any]:
    if isinstance(plan, Mapping) and isinstance(plan.get("steps"), Sequence):
        plan = plan["steps"]
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence):
        raise MetricInputError(f"{what} must be a list of steps, got {type(plan).__name__}")
    return list(plan)


def plan_coverage(plan: Sequence[Any] | Mapping[str, Any], subgoals: Sequence[Any],
                  *, match: str = "literal", scorer: Callable[[str, str], float] | None = None,
                  threshold: float | None = None, judge: Any = None,
                  covers: Callable[[PlanStep, PlanStep], bool] | None = None,
                  name: str = "plan_coverage") -> PlanCoverageResult:
    """Fraction of the case's labelled sub-goals that the plan artefact covers.

    Args:
        plan: the agent's plan, a list of plan steps (or ``{"steps": [...]}``).
        subgoals: the case's labelled sub-goals (same step shapes, module doc).
        match: ``"literal"`` (default, no model), ``"semantic"`` or ``"judge"``.
        scorer: ``scorer(a, b) -> [0, 1]`` for ``"semantic"`` (default: the offline
            ``trajcheck.match.semantic.EmbeddingScorer``).
        threshold: the semantic cover threshold (default :data:`PLAN_COVERAGE_THRESHOLD`).
        judge: the judge model for ``"judge"`` (``trajcheck.judges``).
        covers: ``covers(step, goal) -> bool``, replacing the rule altogether.
        name: the result's name.

    Returns:
        ``PlanCoverageResult``: ``score`` = covered / len(subgoals) in [0, 1], None with no
        sub-goals; ``parts["match"]`` names the mode, ``parts["similarity"]`` (semantic) the
        cosine of each matched pair, ``parts["judge_reasons"]`` (judge) the judge's reason per
        sub-goal.

    Raises:
        MetricInputError: a malformed plan or sub-goal (naming its index), an unknown
            ``match``, a threshold outside [0, 1], or ``match="judge"`` without ``judge``.
        JudgeError: the judge could not answer.

    Examples:
        "refund" occurs as a word in the step "issue a refund"; nothing covers "notify":

        >>> plan_coverage(["get_order", "issue a refund"], ["refund", "notify"]).score
        0.5

    A plan step covers a sub-goal (``match="literal"``) when:

    - the sub-goal names a tool and the step names the same tool: covered when the sub-goal
      has no ``args``, or the step's args contain the sub-goal's args with exactly equal
      values (type-aware, DESIGN.md ``exact``);
    - otherwise, a sub-goal with ``args`` is not covered; one without is covered when its
      text (its description, else its name) occurs as whole words, contiguous and in order,
      in the step's name + description (NFKC, casefolded, punctuation ignored).

    ``match="semantic"`` also covers a free-text sub-goal when the cosine similarity of its
    text and the step's text (tool name with ``_`` as a space, description, args) is at least
    ``threshold`` (0.78, measured with all-MiniLM-L6-v2); tokens that look like IDs, numbers
    or dates (``INC-7``, ``1234``, ``2026-07-18``) must still appear in the step, as the
    semantic matcher requires. "find a flight to Paris" is covered by "search flights to
    Paris" (0.917), not by "find a flight to Rome" (0.594). ``match="judge"`` asks the judge
    once which plan steps address each sub-goal (``trajcheck.judges.planning.subgoal_matches``);
    a literal cover also counts. Structured sub-goals (a tool name, ``{name, args}``) are
    matched exactly in every mode.

    Each plan step covers at most one sub-goal and vice versa; the count is a maximum
    one-to-one matching (``matching.max_matching``), so two identical sub-goals need two plan
    steps. Source: seed 000 §5.2, plan_coverage = |user sub-goals addressed by plan| / |user
    sub-goals|; trajcheck's deterministic form of plan completeness (DeepEval
    PlanQualityMetric, LLM-judged) and of sub-goal progress (AgentBoard, arXiv 2401.13178).
    """
    if match not in MATCH_MODES:
        raise MetricInputError(f"plan_coverage: match must be one of {', '.join(MATCH_MODES)}, "
                               f"got {match!r}")
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, (int, float))
                                  or not 0.0 <= threshold <= 1.0):
        raise MetricInputError(f"plan_coverage: threshold must be in [0, 1], got {threshold!r}")
    if match == "judge" and judge is None:
        raise MetricInputError('plan_coverage: match="judge" needs judge=<a judge model>')
    steps = [parse_plan_step(s, f"plan step {i}") for i, s in enumerate(_plan_list(plan, "plan"))]
    goals = [parse_plan_step(g, f"subgoal {i}")
             for i, g in enumerate(_plan_list(subgoals, "subgoals"))]
    if not goals:
        return PlanCoverageResult(name=name, score=None, reason="no labelled sub-goals",
                                  parts={"covered": 0, "n_subgoals": 0, "match": match})
    sims: dict[tuple[int, int], float] = {}
    extra: dict[str, Any] = {"match": match}
    if covers is not None:
        adj = [[j for j, s in enumerate(steps) if covers(s, g)] for g in goals]
    elif match == "semantic":
        if scorer is None:
            from ..match.semantic import EmbeddingScorer

            scorer = EmbeddingScorer()
        t = PLAN_COVERAGE_THRESHOLD if threshold is None else float(threshold)
        adj = _semantic_adjacency(steps, goals, scorer, t, sims)
        extra["threshold"] = t
    elif match == "judge":
        from ..judges.planning import subgoal_matches

        free = [i for i, g in enumerate(goals) if _free_text(g)]  # only these are asked
        judged, why = subgoal_matches(judge, [_step_text(s) for s in steps],
                                      [goals[i].text or "" for i in free])
        by_goal = dict(zip(free, judged))
        adj = [sorted({j for j, s in enumerate(steps) if _step_covers(s, g)}
                      | set(by_goal.get(i, ())))
               for i, g in enumerate(goals)]
        reasons: list[str | None] = [None] * len(goals)
        for i, r in zip(free, why):
            reasons[i] = r
        extra["judge_reasons"] = reasons
    else:
        adj = [[j for j, s in enumerate(steps) if _step_covers(s, g)] for g in goals]
    matched = max_matching(adj, len(steps))
    pairs = tuple((i, j) for i, j in enumerate(matched) if j != -1)
    missing = tuple(goals[i].label() for i, j in enumerate(matched) if j == -1)
    if match == "semantic" and covers is None:
        extra["similarity"] = [sims.get(p) for p in pairs]
    cov = len(pairs) / len(goals)
    reason = f"plan covers {len(pairs)}/{len(goals)} sub-goals"
    if match != "literal":
        reason += f" ({match} match)"
    if missing:
        reason += "; missing " + ", ".join(missing)
    return PlanCoverageResult(name=name, score=cov, reason=reason,
                              parts={"covered": len(pairs), "n_subgoals": len(goals),
                                     "missing": list(missing),
                                     "pairs": [list(p) for p in pairs], **extra},
                              covered=len(pairs), n_subgoals=len(goals), missing=missing,
                              pairs=pairs)


@dataclass(frozen=True)
class PlanAdherenceResult(MetricResult):
    """Plan adherence: (``executed_in_order`` + len(``revised``)) / ``n_plan_steps`` (= score,
    None for an empty plan). ``executed_any_order``: steps executed ignoring order
    (one-to-one); ``not_executed``: labels of steps neither executed in the in-order
    alignment nor revised; ``revised``: labels of the explicitly revised steps;
    ``off_plan_calls``: indices of tool calls that matched no plan step at all."""

    executed_in_order: int = 0
    executed_any_order: int = 0
    n_plan_steps: int = 0
    not_executed: tuple[str, ...] = ()
    off_plan_calls: tuple[int, ...] = ()
    revised: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The common fields plus the typed ones."""
        d = super().to_dict()
        d.update(executed_in_order=self.executed_in_order,
                 executed_any_order=self.executed_any_order, n_plan_steps=self.n_plan_steps,
                 not_executed=list(self.not_executed), off_plan_calls=list(self.off_plan_calls),
                 revised=list(self.revised))
        return d


def _call_executes(step: PlanStep, call: ToolCall) -> bool:
    if step.name is None:
        return False
    return call.name == step.name and args_agree(step.args, call.args)


def same_step(a: PlanStep, b: PlanStep) -> bool:
    """True when two plan versions hold the same step: equal name, args (type-aware exact)
    and description (a bare tool name has none); a ``revised`` mark does not count."""
    def text(s: PlanStep) -> str | None:  # "b" and {"name": "b"} are the same step
        return None if s.text == s.name else s.text

    if a.name != b.name or text(a) != text(b) or (a.args is None) != (b.args is None):
        return False
    return a.args is None or exact_equal(a.args, b.args)


def _lcs_pairs(ok: Sequence[Sequence[bool]], m: int) -> list[tuple[int, int]]:
    """Index pairs (i, j) of one longest common subsequence of ``len(ok)`` left and ``m``
    right items, where ``ok[i][j]`` says they may pair (earliest pairs first)."""
    n = len(ok)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(dp[i + 1][j], dp[i][j + 1])
            if ok[i][j]:
                best = max(best, 1 + dp[i + 1][j + 1])
            dp[i][j] = best
    i = j = 0
    out: list[tuple[int, int]] = []
    while i < n and j < m:
        if ok[i][j] and dp[i][j] == 1 + dp[i + 1][j + 1]:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def merge_plan_versions(versions: Sequence[Sequence[PlanStep]]) -> tuple[list[PlanStep], list[bool]]:
    """Every step the agent planned across ``versions`` (first plan, then its revisions, in
    the order emitted), each once, and whether each was explicitly revised.

    Consecutive versions are aligned by a longest common subsequence of equal steps
    (:func:`same_step`): an aligned step is the same step kept; a step of the earlier
    version left out of the alignment was dropped or replaced by the later one, so it is
    revised; a step new in the later version is inserted right after the step before it in
    that version (at the front when it comes first). A step whose artefact marks it
    ``revised`` is revised too. Returns ``(steps, revised)`` of equal length."""
    if not versions:
        return [], []
    entries: list[PlanStep] = list(versions[0])
    revised = [s.revised is not None for s in entries]
    order = list(range(len(entries)))  # entry ids in plan order
    cur = list(order)  # entry id of each step of the current version
    for ver in versions[1:]:
        eq = [[same_step(entries[e], step) for step in ver] for e in cur]
        kept = {k: cur[i] for i, k in _lcs_pairs(eq, len(ver))}
        for e in set(cur) - set(kept.values()):
            revised[e] = True
        nxt: list[int] = []
        for k, step in enumerate(ver):
            if k in kept:
                e = kept[k]
            else:
                e = len(entries)
                entries.append(step)
                revised.append(False)
                order.insert(order.index(nxt[-1]) + 1 if nxt else 0, e)
            if step.revised is not None:
                revised[e] = True
            nxt.append(e)
        cur = nxt
    return [entries[e] for e in order], [revised[e] for e in order]


def plan_adherence(plan: Sequence[Any] | Mapping[str, Any],
                   traj: Trajectory | Sequence[ToolCall],
                   *, revisions: Sequence[Sequence[Any] | Mapping[str, Any]] = (),
                   name: str = "plan_adherence") -> PlanAdherenceResult:
    """Fraction of plan steps executed in the plan's order, or explicitly revised.

    Args:
        plan: plan steps given as tool names or ``{name, args}`` (free-text-only steps cannot
            be executed by a call and count as not executed unless revised).
        traj: a ``Trajectory`` (its ``tool_calls()``) or a list of ``ToolCall``.
        revisions: the plan's later versions the agent emitted, oldest first (same shapes).
        name: the result's name.

    Returns:
        ``PlanAdherenceResult``: ``score`` = (executed_in_order + revised) / plan steps in
        [0, 1], None for an empty plan; parts ``executed_in_order``, ``executed_any_order``,
        ``not_executed``, ``off_plan_calls`` (calls matching no plan step), ``revised``.

    Raises:
        MetricInputError: a malformed plan step or revision (naming its index), or a ``traj``
            that is neither a Trajectory nor a list of ToolCall.

    Examples:
        Both calls were planned but in the other order, and ``notify`` never ran: 1 of 3 in
        order, 2 of 3 in any order.

        >>> from trajcheck.model import ToolCall
        >>> r = plan_adherence(["get_order", "refund", "notify"],
        ...                    [ToolCall("refund"), ToolCall("get_order")])
        >>> round(r.score, 4), r.parts["executed_any_order"]
        (0.3333, 2)

    Seed 000 §5.2: plan_adherence = |plan steps executed (or explicitly revised)| / |plan
    steps|. A step is explicitly revised when the agent said so in its plan artefact: a later
    version drops or replaces it (versions aligned as :func:`merge_plan_versions` says), or
    the step carries ``"revised": "<reason>"`` (or true). The plan steps are every step of
    the first plan plus those the revisions added, each once.

    A call executes a step when the names are equal and the call's arguments contain the
    step's ``args`` with exactly equal values (type-aware; extra arguments allowed; unparsed
    arguments never match, DESIGN.md). Every call counts, retries included (they do not
    break the order: extra calls between plan steps are allowed). executed_in_order = the
    length of the longest common subsequence of the steps not revised and the calls under
    that relation. Source: seed 000 §5.2; trajcheck's deterministic form of DeepEval's
    PlanAdherenceMetric (LLM-judged); LCS alignment as in the in-order trajectory match.
    """
    versions = [[parse_plan_step(s, f"plan step {i}") for i, s in enumerate(_plan_list(plan, "plan"))]]
    if isinstance(revisions, (str, bytes, Mapping)) or not isinstance(revisions, Sequence):
        raise MetricInputError(f"plan_adherence: revisions must be a list of plans, "
                               f"got {type(revisions).__name__}")
    for r, rev in enumerate(revisions):
        versions.append([parse_plan_step(s, f"revision {r + 1} step {i}")
                         for i, s in enumerate(_plan_list(rev, f"revision {r + 1}"))])
    steps, revised = merge_plan_versions(versions)
    from .calls import calls_and_retries

    calls, _retried = calls_and_retries(traj, what="plan_adherence")  # every call counts
    if not steps:
        return PlanAdherenceResult(name=name, score=None, reason="empty plan",
                                   parts={"n_plan_steps": 0})
    n, m = len(steps), len(calls)
    ok = [[_call_executes(s, c) for c in calls] for s in steps]
    live = [i for i in range(n) if not revised[i]]  # revised steps count without a call
    aligned = _lcs_pairs([ok[i] for i in live], m)
    done = [False] * n
    for a, _ in aligned:
        done[live[a]] = True
    in_order = len(aligned)
    any_order = sum(1 for x in max_matching(
        [[j for j in range(m) if ok[i][j]] for i in live], m) if x != -1)
    n_rev = sum(revised)
    rev_labels = tuple(steps[i].label() for i in range(n) if revised[i])
    not_executed = tuple(steps[i].label() for i in range(n) if not done[i] and not revised[i])
    off_plan = tuple(j for j in range(m) if not any(ok[i][j] for i in range(n)))
    score = (in_order + n_rev) / n
    reason = f"{in_order}/{n} plan steps executed in order"
    if n_rev:
        reason += f", {n_rev} explicitly revised"
    if any_order > in_order:
        reason += f" ({any_order} ignoring order)"
    if not_executed:
        reason += "; not executed in order: " + ", ".join(not_executed)
    if off_plan:
        reason += f"; {len(off_plan)} off-plan call(s)"
    return PlanAdherenceResult(
        name=name, score=score, reason=reason,
        parts={"executed_in_order": in_order, "executed_any_order": any_order,
               "n_plan_steps": n, "not_executed": list(not_executed),
               "off_plan_calls": list(off_plan), "revised": list(rev_labels)},
        executed_in_order=in_order, executed_any_order=any_order, n_plan_steps=n,
        not_executed=not_executed, off_plan_calls=off_plan, revised=rev_labels)
