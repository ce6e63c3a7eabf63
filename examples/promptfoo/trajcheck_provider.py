"""trajcheck's promptfoo provider (runs your agent, returns its run); written by python -m trajcheck.promptfoo init."""

from trajcheck.promptfoo.provider import call_api  # noqa: F401
