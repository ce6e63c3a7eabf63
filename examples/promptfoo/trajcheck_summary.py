"""trajcheck's suite summary hook (extensions: file://trajcheck_summary.py:extension_hook); written by python -m trajcheck.promptfoo init."""

from trajcheck.promptfoo.summary import extension_hook  # noqa: F401
