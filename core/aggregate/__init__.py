"""Aggregation: per-run results into mergeable partials and a scorecard (``partials``),
per-case sums (``case_sums``), categories, the paired comparison of two scorecards
(``paired``, ``paired_cases``) and the regression gate read from it (``regression``)."""

from typing import Any


def __getattr__(name: str) -> Any:
    # ``trajcheck.aggregate`` was one module before the stage packages; its names now live in
    # ``partials``. Forwarded lazily so importing a sibling (``case_sums``) stays cheap.
    import importlib

    partials = importlib.import_module(f"{__name__}.partials")
    try:
        return getattr(partials, name)
    except AttributeError:
        raise AttributeError(f"module 'trajcheck.aggregate' has no attribute {name!r}") from None
