"""Matching: per-argument matchers (``matchers``), whether a predicted call satisfies an
expected one and the maximum one-to-one matching (``matching``), and its special cases
(``exact_match``, ``field_matcher``, ``bfcl``, ``semantic``)."""
