"""Old import path of ``trajcheck.run.sandbox``, kept so code written against earlier
README and examples (``from trajcheck.sandbox import ...``) still runs; new code imports from
``trajcheck.run``. Importing it warns (DeprecationWarning)."""

import warnings

from .run.sandbox import (
    Snapshot,
    SQLAlchemySandbox,
    SQLiteSandbox,
    SqlStatement,
    call_tool,
    open_sandbox,
    resolve_fixture,
    split_sql,
)

warnings.warn("trajcheck.sandbox is now trajcheck.run.sandbox; import from trajcheck.run",
              DeprecationWarning, stacklevel=2)

__all__ = [
    "SQLAlchemySandbox", "SQLiteSandbox", "Snapshot", "SqlStatement", "call_tool", "open_sandbox",
    "resolve_fixture", "split_sql",
]
