"""trajcheck's test scoring function, leaves not-applicable assertions out (assertScoringFunction: file://trajcheck_scoring.py:score_test); written by python -m trajcheck.promptfoo init."""

from trajcheck.promptfoo.scoring import score_test  # noqa: F401
