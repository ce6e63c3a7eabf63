"""trajcheck: exactly-defined metrics for AI agents' tool use.

``import trajcheck`` stays light (standard library only); submodules that need jsonschema
or more are imported on first use of the names below.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _compat
from .errors import (
    DatasetError,
    MatcherError,
    MetricInputError,
    SchemaError,
    TraceFormatError,
    TrajcheckError,
)
from .model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory, Usage

_compat.install()  # import paths from before the stage packages (trajcheck.scoring, ...)

__version__ = "0.1.0"

# name -> module that defines it; resolved lazily so `import trajcheck` stays fast.
_LAZY = {
    "load_cases": "trajcheck.read.dataset",
    "load_traces": "trajcheck.read.traces",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        mod = importlib.import_module(_LAZY[name])
        return getattr(mod, "load" if name == "load_traces" else name)
    raise AttributeError(f"module 'trajcheck' has no attribute {name!r}")


__all__ = [
    "Case",
    "DatasetError",
    "ExpectedCall",
    "MatcherError",
    "MetricInputError",
    "SchemaError",
    "Step",
    "ToolCall",
    "ToolResult",
    "TraceFormatError",
    "Trajectory",
    "TrajcheckError",
    "Usage",
    "load_cases",
    "load_traces",
]
