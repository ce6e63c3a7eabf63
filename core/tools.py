"""Old import path of ``trajcheck.run.tools``, kept so code written against earlier
README and examples (``from trajcheck.tools import ...``) still runs; new code imports from
``trajcheck.run``. Importing it warns (DeprecationWarning)."""

import warnings

from .run.tools import (
    AgentTools,
    BoundTools,
    Tool,
    ToolContext,
    ToolRegistry,
    normalize_definition,
)

warnings.warn("trajcheck.tools is now trajcheck.run.tools; import from trajcheck.run",
              DeprecationWarning, stacklevel=2)

__all__ = [
    "AgentTools", "BoundTools", "Tool", "ToolContext", "ToolRegistry", "normalize_definition",
]
