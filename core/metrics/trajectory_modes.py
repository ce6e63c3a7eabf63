"""The one table mapping every framework's trajectory mode names onto trajcheck's neutral modes.

Neutral modes (``trajectory.py`` docstring): the binary exact / in_order / unordered /
superset / subset, the multiset scores precision / recall / f1 (``calls.tool_call_prf``;
names only with ``args_mode="ignore"``), and the in-order graded scores lcs_precision /
lcs_recall / lcs_f1 (``trajectory_scores.lcs_prf``). Each row gives a framework's own name,
the neutral mode that name maps to, what the framework documents, and where its own code
departs from that (``implementation_differs``). docs/modes.md is rendered from this table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import MetricInputError
from .trajectory_scores import LCS_MODES

BINARY_MODES: tuple[str, ...] = ("exact", "in_order", "unordered", "superset", "subset")
SCORE_MODES: tuple[str, ...] = ("precision", "recall", "f1") + LCS_MODES
NEUTRAL_MODES: tuple[str, ...] = BINARY_MODES + SCORE_MODES


@dataclass(frozen=True)
class ModeRow:
    """One framework mode name and its neutral meaning.

    ``dialect``: framework; ``name``: the framework's own name (``aliases`` are other
    spellings); ``neutral``: one of NEUTRAL_MODES; ``args_mode``: the argument mode the
    framework's metric implies (None = the caller's / case's); ``documented``: what the
    framework's docs say; ``implementation_differs``: where the framework's own code
    differs from that (empty when it does not, as far as the research notes found);
    ``source``: where that was established. ``compares_tool_type``: the framework pairs a
    call only with an expected call of the same tool type (function vs MCP).
    """

    dialect: str
    name: str
    neutral: str
    args_mode: str | None
    documented: str
    implementation_differs: str
    source: str
    aliases: tuple[str, ...] = ()
    compares_tool_type: bool = False


_AE_GREEDY = ("pairs calls greedily (first fit), so with a non-equivalence argument matcher "
              "(subset/superset/custom) it returns False where a one-to-one pairing exists")
_DE_TYPES = ("names only by default (evaluation_params=[]; with INPUT_PARAMETERS arguments "
             "are compared, give args_mode); a call pairs only with an expected call of the same "
             "tool type, FUNCTION or MCP, in every mode (DeepEval >= 4.1.9; trajcheck reads the "
             "type from the trace's tool_type and from typed expected calls)")
_AE_SRC = "research/langsmith_agentevals.md §2.3-2.5 (agentevals 0.0.9, openevals 0.2.2, RAN)"

_ADK_COMMON = ("whole argument objects compared with Python == after JSON parsing (1 == 1.0 and True == 1 "
               "match; trajcheck keeps True != 1); scored per invocation (user turn), 1.0/0.0, "
               "averaged over invocations, unequal invocation counts raise ValueError; "
               "ignore_args=True compares names only (args_mode ignore)")
_ADK_SRC = "research/landscape_2026-12.md §1 (google-adk 2.13.0 trajectory_evaluator.py, READ)"
_MLF_SRC = ("research/landscape_2026-12.md §2 (mlflow 3.18.0 builtin_scorers.py, scorer_utils.py, "
            "READ; run here on mlflow-skinny 3.17.2)")
_MLF_ARGS = ("signature = name + json.dumps(args, sort_keys=True), so types are strict (1 != 1.0, "
             "true != 1) and a missing argument object equals {}; arguments are compared only "
             "when every expected call has them (one expected call without arguments turns "
             "argument checks off for all); actual calls are the trace's TOOL spans by start "
             "time; an empty expected list means 'no expectations' and raises")
_MLF_ADK_BUILD = ("mlflow-skinny 3.17.2 builds ToolTrajectoryCriterion without the threshold "
                  "google-adk 2.13.0 requires, so the scorer cannot be constructed with that ADK "
                  "(ValidationError)")
_PE_SRC = "research/landscape_2026-12.md §4 (pydantic-evals 2.62.0 evaluators/agentic.py, READ)"
_PE_FAILED = ("every failed attempt is dropped (include_failed=False), trajcheck sets aside only "
              "failed attempts that were retried; a span is a tool call only under pydantic-ai's tool "
              "span names ('running tool', 'execute_tool <name>'), trajcheck reads every span carrying "
              "gen_ai.tool.name (other emitters name their tool spans otherwise); both leave out output "
              "functions and output tools (final_result), deferred calls and tool names that are not strings")
_ST_SRC = ("research/landscape_2026-12.md §5 (strands-agents-evals 1.7.0 "
           "tools/evaluation_tools.py, READ and RAN)")
_AZ_SRC = ("research/landscape_2026-12.md §13 (azure-ai-evaluation 1.18.10 "
           "_task_navigation_efficiency.py, READ)")
_AZ_COMMON = ("steps are tool names, or (name, sorted parameter items) when ground_truth is a "
              "(names, {name: params}) tuple: parameters are given once per tool name, so "
              "repeated calls of one tool share them; a response or ground truth given as JSON "
              "text is parsed first, so a dict equals its JSON text, and values compare with "
              "Python == (1 == 1.0 == True, '1' != 1); an empty ground truth raises")
_JV_SRC = ("research/landscape_2026-12.md §8 (judgeval docs; server-side APIScorer, no public "
           "implementation in judgeval 1.6.0)")

MODE_TABLE: tuple[ModeRow, ...] = (
    # agentevals / openevals create_trajectory_match_evaluator(trajectory_match_mode=...)
    ModeRow("agentevals", "strict", "exact", "exact_keys",
            "same tool calls in the same order",
            "compares the message skeleton: same message count and role at each position, "
            "parallel calls within one message as an unordered multiset, message content "
            "ignored; an extra user/tool/system message fails; " + _AE_GREEDY, _AE_SRC),
    ModeRow("agentevals", "unordered", "unordered", "exact_keys",
            "same tool calls in any order",
            _AE_GREEDY + "; agentevals 0.0.9 passes (reference, output) to the argument "
            "matcher, inverting tool_args_match_mode subset/superset", _AE_SRC),
    ModeRow("agentevals", "superset", "superset", "exact_keys",
            "output contains every reference call; extras allowed", _AE_GREEDY, _AE_SRC),
    ModeRow("agentevals", "subset", "subset", "exact_keys",
            "every output call is in the reference",
            _AE_GREEDY + "; agentevals 0.0.9 swaps argument order; outputs=None scores as a "
            "pass (openevals PR #237)", _AE_SRC),
    ModeRow("openevals", "strict", "exact", "exact_keys",
            "same tool calls in the same order",
            "message skeleton as agentevals strict (roles per position, parallel calls "
            "unordered, content ignored); " + _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "unordered", "unordered", "exact_keys",
            "same tool calls in any order", _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "superset", "superset", "exact_keys",
            "output contains every reference call; extras allowed", _AE_GREEDY, _AE_SRC),
    ModeRow("openevals", "subset", "subset", "exact_keys",
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
    # Google ADK 2.13.0 TrajectoryEvaluator (tool_trajectory_avg_score, criterion match_type)
    ModeRow("adk", "EXACT", "exact", "exact_keys",
            "same tool calls at each position, same length (name and args)",
            _ADK_COMMON, _ADK_SRC),
    ModeRow("adk", "IN_ORDER", "in_order", "exact_keys",
            "the expected calls appear in order; other calls may come between",
            "one greedy left-to-right pass (the same verdict as a maximum matching under "
            "equality); empty expected passes; " + _ADK_COMMON, _ADK_SRC),
    ModeRow("adk", "ANY_ORDER", "superset", "exact_keys",
            "the expected calls appear in any order",
            "superset, not multiset equality: each expected call takes the first unused equal "
            "actual call (multiplicity kept, so [a, a] needs two calls of a), extra calls "
            "allowed; empty expected passes; " + _ADK_COMMON, _ADK_SRC),
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
    ModeRow("deepeval", "ToolCorrectness", "recall", "ignore",
            "fraction of expected tools that were called (extras not penalised)",
            _DE_TYPES + "; greedy pairing with a value-based used set: identical duplicate calls under-score "
            "(#3141); with argument partial credit the score depends on expected-list order "
            "(#3338); arguments get partial credit over the union of keys",
            "research/deepeval_ragas.md §1.5, D1/D2 (RAN)",
            ("ToolCorrectnessMetric", "ToolCorrectness(should_consider_ordering=False,"
             "should_exact_match=False)"), True),
    ModeRow("deepeval", "ToolCorrectness(should_consider_ordering=True)", "in_order", "ignore",
            "expected tools called in order (docs: a reordering with a repeat counts as correct)",
            _DE_TYPES + "; graded weighted LCS / len(expected), not 0/1; the docs' claim is wrong (#3014)",
            "research/deepeval_ragas.md §1.5, D4 (RAN)",
            ("ToolCorrectnessMetric(should_consider_ordering=True)",
             "ToolCorrectness(should_consider_ordering=True,should_exact_match=False)"), True),
    ModeRow("deepeval", "ToolCorrectness(should_exact_match=True)", "exact", "ignore",
            "same calls, same order, same length",
            _DE_TYPES + "; score right; the reason text listed bogus type mismatches (#3245)",
            "research/deepeval_ragas.md §1.5, D5 (RAN)",
            ("ToolCorrectnessMetric(should_exact_match=True)",
             "ToolCorrectness(should_consider_ordering=True,should_exact_match=True)",
             "ToolCorrectness(should_consider_ordering=False,should_exact_match=True)"), True),
    # MLflow 3 mlflow.genai.scorers (deterministic path: should_exact_match=True)
    ModeRow("mlflow", "ToolCallCorrectness(should_exact_match=True,should_consider_ordering=True)",
            "exact", "exact_keys", "the actual calls equal the expected calls position by position",
            "equal lengths, then positional signature equality; " + _MLF_ARGS, _MLF_SRC,
            ("ToolCallCorrectness(should_consider_ordering=True,should_exact_match=True)",)),
    ModeRow("mlflow", "ToolCallCorrectness(should_exact_match=True)", "unordered", "exact_keys",
            "the actual calls equal the expected calls, order ignored",
            "equal lengths, then SET equality of signatures: duplicates collapse after the "
            "length check, so [a, a, b] passes against [a, b, b]; " + _MLF_ARGS, _MLF_SRC,
            ("ToolCallCorrectness(should_exact_match=True,should_consider_ordering=False)",
             "ToolCallCorrectness(should_consider_ordering=False,should_exact_match=True)")),
    ModeRow("mlflow", "ToolTrajectory(match_type=EXACT)", "exact", "exact_keys",
            "mlflow.genai.scorers.google_adk.ToolTrajectory: ADK's EXACT",
            "runs ADK's TrajectoryEvaluator (the adk rows); pass = score >= threshold, "
            "default 0.5; calls from TOOL spans with missing args as {}; " + _MLF_ADK_BUILD, _MLF_SRC,
            ("google_adk.ToolTrajectory(match_type=EXACT)", "ToolTrajectory")),
    ModeRow("mlflow", "ToolTrajectory(match_type=IN_ORDER)", "in_order", "exact_keys",
            "mlflow.genai.scorers.google_adk.ToolTrajectory: ADK's IN_ORDER",
            "runs ADK's TrajectoryEvaluator (the adk rows); pass = score >= threshold, "
            "default 0.5; " + _MLF_ADK_BUILD, _MLF_SRC, ("google_adk.ToolTrajectory(match_type=IN_ORDER)",)),
    ModeRow("mlflow", "ToolTrajectory(match_type=ANY_ORDER)", "superset", "exact_keys",
            "mlflow.genai.scorers.google_adk.ToolTrajectory: ADK's ANY_ORDER",
            "superset with multiplicity, as ADK ANY_ORDER (the adk rows); pass = score >= "
            "threshold, default 0.5; " + _MLF_ADK_BUILD, _MLF_SRC, ("google_adk.ToolTrajectory(match_type=ANY_ORDER)",)),
    # pydantic-evals 2.62.0 span-based evaluators (names only)
    ModeRow("pydantic_evals", "TrajectoryMatch(order=exact)", "exact", "ignore",
            "the list of called tool names equals the expected list", _PE_FAILED, _PE_SRC),
    ModeRow("pydantic_evals", "TrajectoryMatch(order=in_order)", "lcs_f1", "ignore",
            "the default order; F1 of the longest common subsequence of tool names",
            "the name suggests the in-order subsequence test, but the value is a graded "
            "LCS F1 (precision LCS/len(actual), recall LCS/len(expected)) that reaches 1.0 "
            "only for an exact match; both empty 1.0, one empty 0.0 (as trajcheck); "
            + _PE_FAILED, _PE_SRC, ("TrajectoryMatch",)),
    ModeRow("pydantic_evals", "TrajectoryMatch(order=any_order)", "f1", "ignore",
            "F1 of the multiset intersection of tool names",
            "graded (1.0 exactly when unordered holds); both empty 1.0, one empty 0.0 (as "
            "trajcheck); " + _PE_FAILED, _PE_SRC),
    ModeRow("pydantic_evals", "ToolCorrectness", "unordered", "ignore",
            "the multiset of called tool names equals expected_tools (allow_extra=False)",
            _PE_FAILED, _PE_SRC, ("ToolCorrectness(allow_extra=False)",)),
    ModeRow("pydantic_evals", "ToolCorrectness(allow_extra=True)", "superset", "ignore",
            "every expected tool called at least as often as listed; extras allowed",
            _PE_FAILED, _PE_SRC),
    # strands-agents-evals 1.7.0 scoring tools of TrajectoryEvaluator (lists compared with ==)
    ModeRow("strands", "exact_match_scorer", "exact", "ignore",
            "exact match; 1 is a perfect match",
            "graded: positions that agree over zip(actual, expected) / len(expected), so calls "
            "after the expected length are ignored and any actual list that starts with the "
            "expected one scores 1.0; an empty expected list raises ZeroDivisionError", _ST_SRC),
    ModeRow("strands", "in_order_match_scorer", "lcs_recall", "ignore",
            "correct actions in correct order, extra actions allowed",
            "a leftmost greedy scan: the longest PREFIX of expected found in order / "
            "len(expected), which is below LCS/len(expected) when an early expected call is "
            "missing ([b] against [a, b]: 0.0, trajcheck 0.5); 1.0 at the same point "
            "(in_order); empty expected 1.0", _ST_SRC),
    ModeRow("strands", "any_order_match_scorer", "recall", "ignore",
            "correct actions in any order, extra actions allowed",
            "|set(expected) & set(actual)| / len(expected): duplicates collapse, so an "
            "expected list with a repeated item never reaches 1.0 ([a, a] against [a, a] = "
            "0.5); empty expected 1.0", _ST_SRC),
    ModeRow("strands", "ToolCalled", "superset", "ignore",
            "a call of the named tool exists (ToolCalled(tool_name))", "", _ST_SRC),
    # Azure AI Evaluation 1.18.10 _TaskNavigationEfficiencyEvaluator(matching_mode=...)
    ModeRow("azure", "exact_match", "exact", None, "agent steps equal the ground-truth steps",
            _AZ_COMMON, _AZ_SRC, ("TaskNavigationEfficiency(matching_mode=exact_match)",)),
    ModeRow("azure", "in_order_match", "in_order", None,
            "ground-truth steps appear in order; extra steps allowed",
            "greedy left-to-right pass (same verdict); " + _AZ_COMMON, _AZ_SRC,
            ("TaskNavigationEfficiency(matching_mode=in_order_match)",)),
    ModeRow("azure", "any_order_match", "superset", None,
            "every ground-truth step appears at least as often in the agent steps",
            _AZ_COMMON, _AZ_SRC, ("TaskNavigationEfficiency(matching_mode=any_order_match)",)),
    ModeRow("azure", "precision_score", "precision", None,
            "multiset precision of agent steps (always reported)",
            _AZ_COMMON, _AZ_SRC,
            ("task_navigation_efficiency_precision",)),
    ModeRow("azure", "recall_score", "recall", None,
            "multiset recall of ground-truth steps (always reported)",
            _AZ_COMMON, _AZ_SRC),
    ModeRow("azure", "f1_score", "f1", None, "multiset F1 (always reported)",
            _AZ_COMMON, _AZ_SRC),
    # judgeval (server-side scorers; docs only)
    ModeRow("judgeval", "ToolOrderScorer", "in_order", None,
            "the expected order is present, other tools allowed between; parameters checked "
            "where the expected calls give them",
            "unverified: computed server-side; one docs page omits 'other tools allowed'",
            _JV_SRC),
    ModeRow("judgeval", "ToolOrderScorer(exact_match=True)", "exact", None,
            "exactly the expected ordering", "unverified: computed server-side", _JV_SRC),
    ModeRow("judgeval", "ExecutionOrderScorer", "recall", "ignore",
            "set match: |expected & actual| / |expected|",
            "unverified (docs only): over sets, so duplicates collapse as in Strands "
            "any_order_match_scorer", _JV_SRC),
    ModeRow("judgeval", "ExecutionOrderScorer(should_consider_ordering=True)", "lcs_recall", "ignore",
            "LCS(expected, actual) / len(expected)",
            "unverified (docs only); the docs also say 1.0 only when the LCS is the whole "
            "expected list, which the formula gives too", _JV_SRC),
    ModeRow("judgeval", "ExecutionOrderScorer(should_exact_match=True)", "exact", "ignore",
            "1.0 when actual equals expected, else 0.0", "unverified (docs only)", _JV_SRC),
)

DIALECTS: tuple[str, ...] = tuple(dict.fromkeys(r.dialect for r in MODE_TABLE))


#: Other spellings of dialect names (package names) -> the table's dialect.
DIALECT_ALIASES: dict[str, str] = {
    "google_adk": "adk", "googleadk": "adk", "pydanticevals": "pydantic_evals",
    "strands_evals": "strands", "strands_agents_evals": "strands",
    "azure_ai_evaluation": "azure", "azureai": "azure", "azure_ai": "azure",
    "mlflow_genai": "mlflow",
}


def _dialect(dialect: str) -> str:
    d = re.sub(r"[\s\-.]+", "_", dialect.lower().strip())
    return DIALECT_ALIASES.get(d, d)


def _key(s: str) -> str:
    k = re.sub(r"[\s_\-:'\"]", "", s.lower())
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

    Spelling is forgiving: case, spaces, quotes, ``_``, ``-`` and ``:`` are ignored, as are
    a ``trajectory`` prefix and a ``Metric`` suffix; a dialect may be given by its package
    name (``pydantic-evals``, ``google-adk``, ``azure-ai-evaluation``: DIALECT_ALIASES).
    With ``dialect`` None, ``mode`` must be a neutral mode or a name that means the same
    neutral mode in every dialect that has it.
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
    if not isinstance(dialect, str):
        raise MetricInputError(f"dialect must be a string, got {dialect!r}")
    d = _dialect(dialect)
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


