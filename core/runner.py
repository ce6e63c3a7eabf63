"""Old import path of ``trajcheck.run.runner``, kept so code written against earlier
README and examples (``from trajcheck.runner import ...``) still runs; new code imports from
``trajcheck.run``. Importing it warns (DeprecationWarning)."""

import warnings

from .run.runner import (
    AgentRun,
    RecordedRuns,
    SuiteRun,
    load_agent,
    parse_agent_return,
    read_runs,
    resolve_tools,
    run_suite,
)

warnings.warn("trajcheck.runner is now trajcheck.run.runner; import from trajcheck.run",
              DeprecationWarning, stacklevel=2)

__all__ = [
    "AgentRun", "RecordedRuns", "SuiteRun", "load_agent", "parse_agent_return", "read_runs",
    "resolve_tools", "run_suite",
]
