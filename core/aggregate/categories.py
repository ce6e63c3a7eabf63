"""Task success per case category (e.g. BFCL's AST accuracy per test category).

A case may name its category in ``Case.metadata["category"]`` (the BFCL ground-truth reader
sets BFCL's test category: ``simple_python``, ``parallel``, ``live_multiple`` ...); each
scored run carries it (``RunResult.category``) and ``aggregate.SuitePartial`` counts runs
and successes per category. When any run has one, the scorecard's ``meta["by_category"]``
is ``category_table``'s result and the reports print it. For BFCL, where a run succeeds
exactly when its calls match the possible answers one-to-one with none extra, the rate of a
category is BFCL's AST accuracy (correct entries / entries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report.scorecard import _r


def category_table(counts: Mapping[str, Sequence[int]]) -> dict[str, dict[str, Any]] | None:
    """``{category: {"runs": n, "successes": s, "rate": s / n}}`` from ``{category: (n, s)}``
    in the given order, plus ``"overall"`` (every categorised run: the micro average); None
    when there is no category. ``rate`` keeps full float precision like every scorecard figure (reports round it)."""
    if not counts:
        return None
    out: dict[str, dict[str, Any]] = {k: {"runs": int(n), "successes": int(s)} for k, (n, s) in counts.items()}
    out["overall"] = {"runs": sum(d["runs"] for d in out.values()),
                      "successes": sum(d["successes"] for d in out.values())}
    for d in out.values():
        d["rate"] = _r(d["successes"] / d["runs"]) if d["runs"] else None
    return out


__all__ = ["category_table"]
