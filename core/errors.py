"""One error hierarchy for everything trajcheck raises on purpose.

Messages name where the fault is: file, line, case id, call index, field or JSON path,
so that a user can go straight to it. Nothing in trajcheck relies on ``assert`` for
input validation.
"""

from __future__ import annotations


class TrajcheckError(Exception):
    """Root of every error trajcheck raises deliberately."""


class TraceFormatError(TrajcheckError, ValueError):
    """The input is not a trace in any supported (or the requested) format.

    Readers raise this only when the input as a whole is not a trace; a malformed call
    or line inside a trace is kept and recorded instead (see ``Trajectory.metadata``).
    """


class DatasetError(TrajcheckError, ValueError):
    """A dataset row (a ``Case``) is invalid; the message names the file, line and JSON path."""


class MatcherError(TrajcheckError, ValueError):
    """An argument matcher spec is unknown or malformed."""


class SchemaError(TrajcheckError, ValueError):
    """A tool definition or JSON Schema given to trajcheck is not a valid schema."""


class MetricInputError(TrajcheckError, ValueError):
    """A metric's inputs make it undefined (n < k, mismatched lengths, empty suite...)."""


class SandboxError(TrajcheckError, RuntimeError):
    """A sandbox fixture failed to load or a snapshot could not be taken."""


class JudgeError(TrajcheckError, RuntimeError):
    """A judge model failed or returned a reply that could not be parsed."""


class AgentError(TrajcheckError, RuntimeError):
    """An agent callable could not be loaded, raised, or timed out."""


class InputLimitError(TrajcheckError, ValueError):
    """Input exceeds a safety limit: nesting depth, YAML aliases, size (``trajcheck.read.limits``)."""


class SecurityError(TrajcheckError, PermissionError):
    """Something from data tried to leave its confinement: a fixture outside the allowed
    folders, a SQL statement the sandbox refuses, a schema ``$ref`` to a file or URL."""


class EngineError(TrajcheckError, RuntimeError):
    """A distributed engine (Spark, Ray) or the OpenTelemetry exporter cannot be used: not
    installed, no Java, a session that failed to start, an unreachable endpoint."""


__all__ = [
    "EngineError",
    "TrajcheckError",
    "TraceFormatError",
    "DatasetError",
    "MatcherError",
    "SchemaError",
    "MetricInputError",
    "SandboxError",
    "JudgeError",
    "AgentError",
    "InputLimitError",
    "SecurityError",
]
