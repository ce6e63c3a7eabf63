"""trajcheck's test scoring function for promptfoo (``assertScoringFunction``).

promptfoo has no skipped state for an assertion: a trajcheck assertion whose figure does not
apply to the run (error recovery on a run with no failed call, say) passes with score 1 and
``metadata.trajcheck.not_applicable``. promptfoo's own test score would still average that 1
in. With this function as the test's (or ``defaultTest``'s) ``assertScoringFunction`` the
test's score and named scores leave such assertions out::

    defaultTest:
      assertScoringFunction: file://trajcheck_scoring.py:score_test

Everything else is promptfoo's default rule (promptfoo 0.123.1, ``AssertionsResult``): the
weighted mean of the assertions' scores (``weight``, default 1), pass when no counted
assertion failed, or, when the test has a ``threshold``, when the score reaches it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _not_applicable(result: Mapping[str, Any]) -> bool:
    meta = result.get("metadata")
    own = meta.get("trajcheck") if isinstance(meta, Mapping) else None
    return isinstance(own, Mapping) and own.get("not_applicable") is True


def _assertion_results(components: list[Any]) -> list[Mapping[str, Any]]:
    """The test's own assertion results from promptfoo's flattened ``componentResults``.

    promptfoo lists each assertion's result followed by its sub-results, which carry the
    parent's assertion when they have none of their own, and an ``assert-set``'s members
    (each with its own assertion). So a result repeating an assertion already seen, or holding
    a member of an ``assert-set`` already seen, is a sub-result. Two assertions with identical
    configs in one test give identical results, so counting the first alone changes no mean.
    """
    seen: set[str] = set()
    in_sets: set[str] = set()
    out = []
    for r in components:
        if not isinstance(r, Mapping):
            continue
        a = r.get("assertion")
        key = json.dumps(a, sort_keys=True, default=str)
        if key in seen or key in in_sets:
            continue
        seen.add(key)
        if isinstance(a, Mapping) and a.get("type") == "assert-set":
            for member in a.get("assert") or []:
                in_sets.add(json.dumps(member, sort_keys=True, default=str))
        out.append(r)
    return out


def _weight(result: Mapping[str, Any]) -> float:
    a = result.get("assertion")
    w = a.get("weight", 1) if isinstance(a, Mapping) else 1
    return float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) else 1.0


def score_test(named_scores: Mapping[str, float], context: Mapping[str, Any]) -> dict[str, Any]:
    """A promptfoo test's result with not-applicable trajcheck assertions left out.

    Args:
        named_scores: promptfoo's named scores of the test (``{name: mean score}``).
        context: promptfoo's scoring context: ``componentResults`` (the assertions' results,
            flattened), ``threshold`` (the test's, or None).

    Returns:
        A promptfoo grading result: ``pass``, ``score`` (0..1; 1 when every assertion is
        not applicable, promptfoo's value for a test with no assertions), ``reason`` (says how
        many assertions were left out) and ``namedScores`` without the not-applicable
        assertions' ``metric`` labels (a label shared with counted assertions is their mean).
    """
    results = _assertion_results(list(context.get("componentResults") or []))
    counted = [r for r in results if not _not_applicable(r)]
    total_w = sum(_weight(r) for r in counted)
    score = sum(float(r.get("score") or 0.0) * _weight(r) for r in counted) / total_w if total_w > 0 else 1.0
    failed = [r for r in counted if r.get("pass") is not True]
    skipped = len(results) - len(counted)
    threshold = context.get("threshold")
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        passed = score >= threshold
        reason = f"Aggregate score {score:.2f} {'>=' if passed else '<'} {threshold} threshold"
    else:
        passed = not failed
        reason = str(failed[0].get("reason")) if failed else "All assertions passed"
    if skipped:
        reason += f" ({skipped} not-applicable trajcheck assertion(s) not counted)"
    # a label's score: the weighted mean of the counted assertions carrying it
    sums: dict[str, list[float]] = {}
    na_labels: set[str] = set()
    for r in results:
        a = r.get("assertion")
        label = a.get("metric") if isinstance(a, Mapping) else None
        if not isinstance(label, str):
            continue
        if _not_applicable(r):
            na_labels.add(label)
            continue
        acc = sums.setdefault(label, [0.0, 0.0])
        acc[0] += float(r.get("score") or 0.0) * _weight(r)
        acc[1] += _weight(r)
    named = {k: v for k, v in named_scores.items() if k not in na_labels or k in sums}
    for label, (total, w) in sums.items():
        if label in na_labels and w > 0:
            named[label] = total / w
    return {"pass": passed, "score": score, "reason": reason, "namedScores": named}
