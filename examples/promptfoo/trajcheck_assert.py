"""trajcheck's promptfoo assertion (type: python / not-python); written by python -m trajcheck.promptfoo init."""

from trajcheck.promptfoo.assertion import get_assert  # noqa: F401
