"""The regression gate of ``trajcheck compare BASE NEW --fail-on-regression``: did this change
make the agent significantly worse than the baseline?

It reads what the paired comparison already computed (``aggregate.paired.compare_scorecards``: the
exact McNemar / sign test on task success, paired bootstrap intervals over cases for the
other figures; ``aggregate.paired_cases.case_shifts``) and decides; it computes no figure of its own.
The gate fails when either holds:

- the chosen figure's paired difference (NEW - BASE) is significantly negative at ``level``:
  for ``task_success`` the delta is below 0 and the two-sided exact McNemar / sign test
  gives p < ``level``; for a figure without a test (``pass^k``, ``mean_f1``,
  ``mean_composite``) the paired bootstrap interval at confidence 1 - ``level`` lies wholly
  below 0 (the comparison must have been computed at that confidence: ``gate_confidence``);
- a case that passed every trial in the baseline fails every trial now ("broken cases"),
  whatever the test says (one case cannot move a suite's test, but it is a regression).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from ..errors import TrajcheckError

DEFAULT_FIGURE = "task_success"
DEFAULT_LEVEL = 0.05
# the gate's figure names -> the comparison's delta names (pass^k keeps its own name)
_FIGURES = {"task_success": "task_success_rate", "task_success_rate": "task_success_rate",
            "mean_f1": "mean_f1", "mean_composite": "mean_composite"}


def gate_confidence(level: float) -> float:
    """The confidence of the bootstrap intervals the gate reads: 1 - ``level``.

    Args:
        level: the significance level, in (0, 1).

    Returns:
        1 - level.

    Raises:
        TrajcheckError: ``level`` not in (0, 1).
    """
    if not 0 < level < 1:
        raise TrajcheckError(f"--level must be between 0 and 1 (exclusive), got {level}")
    return 1.0 - level


def delta_name(figure: str, available: list[str]) -> str:
    """The comparison's delta name for the gate's ``figure``.

    Args:
        figure: ``task_success`` (default; ``task_success_rate`` too), ``pass^k``,
            ``mean_f1`` or ``mean_composite``.
        available: the delta names the comparison holds (``MetricDelta.metric``).

    Returns:
        The name to look up.

    Raises:
        TrajcheckError: an unknown figure (with "did you mean"), or a ``pass^k`` whose k the
            comparison does not hold (k above the fewest trials of a case).
    """
    name = _FIGURES.get(figure, figure if figure.startswith("pass^") else None)
    known = ["task_success", "mean_f1", "mean_composite"] + [d for d in available
                                                              if d.startswith("pass^")]
    if name is None or name not in available:
        close = difflib.get_close_matches(figure, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        why = ("not computed for these scorecards" if name is not None
               else "not a figure the gate knows")
        raise TrajcheckError(f"--figure {figure!r}: {why} (choose from "
                             f"{', '.join(known)}){hint}")
    return name


@dataclass(frozen=True)
class GateVerdict:
    """The gate's decision: ``failed`` with the ``reasons`` (one line each; empty when it
    passes), the figure and its delta (``delta``: ``MetricDelta.to_dict()``), the
    ``level``, whether the difference is significantly negative, and the ``broken`` cases
    (passed every trial in the baseline, fail every trial now)."""

    figure: str
    level: float
    delta: dict[str, Any]
    significant: bool
    broken: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def failed(self) -> bool:
        """True when the gate fails the build."""
        return bool(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"figure": self.figure, "level": self.level, "delta": dict(self.delta),
                "significant": self.significant, "broken_cases": list(self.broken),
                "failed": self.failed, "reasons": list(self.reasons)}

    def summary(self) -> str:
        """One paragraph for the terminal or a job summary (plain text)."""
        if not self.failed:
            return (f"regression gate passed: {self.figure} not significantly worse at "
                    f"level {self.level:g} and no case that passed every trial fails every trial")
        return "regression gate FAILED:\n" + "\n".join(f"  - {r}" for r in self.reasons)


def regression_gate(cmp: Any, shifts: list[Any], *, figure: str = DEFAULT_FIGURE,
                    level: float = DEFAULT_LEVEL) -> GateVerdict:
    """Decide the gate from a comparison of BASE (A) and NEW (B).

    Args:
        cmp: ``compare_scorecards(base, new, confidence=gate_confidence(level))``.
        shifts: ``case_shifts(base, new)``.
        figure: the figure tested (see ``delta_name``).
        level: the significance level.

    Returns:
        The verdict.

    Raises:
        TrajcheckError: a bad ``figure`` or ``level``, or a comparison computed at another
            confidence than 1 - ``level`` for a bootstrap-only figure.
    """
    conf = gate_confidence(level)
    name = delta_name(figure, [d.metric for d in cmp.deltas])
    d = next(x for x in cmp.deltas if x.metric == name)
    reasons: list[str] = []
    if d.p_value is not None:
        significant = d.delta is not None and d.delta < 0 and d.p_value < level
        how = f"p = {d.p_value:.4g} ({d.test})"
    else:
        got = cmp.meta.get("confidence")
        if got is not None and abs(float(got) - conf) > 1e-12:
            raise TrajcheckError(f"the comparison's intervals are at confidence {got}, the gate "
                                 f"at level {level} needs {conf}")
        significant = d.hi is not None and d.hi < 0
        how = f"{conf:.0%} paired bootstrap interval [{d.lo}, {d.hi}]"
    if significant:
        reasons.append(f"{name} fell from {d.a} to {d.b} (delta {d.delta}), significantly at "
                       f"level {level:g}: {how}")
    broken = tuple(s.case_id for s in shifts
                   if s.a_trials and s.a_successes == s.a_trials and s.b_trials
                   and s.b_successes == 0)
    for cid in broken:
        s = next(x for x in shifts if x.case_id == cid)
        reasons.append(f"case {cid!r} passed all {s.a_trials} trial(s) in the baseline and "
                       f"fails all {s.b_trials} now")
    return GateVerdict(figure=name, level=level, delta=d.to_dict(), significant=significant,
                       broken=broken, reasons=tuple(reasons))


__all__ = ["DEFAULT_FIGURE", "DEFAULT_LEVEL", "GateVerdict", "delta_name", "gate_confidence",
           "regression_gate"]
