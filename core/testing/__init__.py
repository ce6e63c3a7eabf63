"""Agent tests in plain pytest: assertions over a run's tool calls whose failure shows the
expected calls beside the calls made (``assertions``), and the pytest plugin (``plugin``:
the ``trajcheck`` fixture and ``--trajcheck-report DIR``, registered by entry point).

The assertion names are loaded on first use, so the plugin, which pytest imports in every
session, costs nothing until a test uses it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["as_trajectory", "assert_called", "assert_calls", "assert_no_forbidden"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import assertions

        return getattr(assertions, name)
    raise AttributeError(f"module 'trajcheck.testing' has no attribute {name!r}")
