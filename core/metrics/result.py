"""The result object every metric returns: a score, its parts, and a one-line reason.

Metrics may subclass ``MetricResult`` to add typed fields, but every result keeps these
four so that adapters and reports can show any metric the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MetricResult:
    """A metric's outcome.

    ``score`` is in [0, 1], or None when the metric is not applicable (the reason says why).
    ``parts`` holds the counts and sub-scores the score was computed from (JSON-ready).
    ``reason`` is one human-readable line that adapters reuse verbatim.
    """

    name: str
    score: float | None
    reason: str
    parts: dict[str, Any] = field(default_factory=dict)
    passed: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the four common fields (and ``passed`` when set)."""
        d: dict[str, Any] = {"name": self.name, "score": self.score, "reason": self.reason,
                             "parts": self.parts}
        if self.passed is not None:
            d["passed"] = self.passed
        return d
