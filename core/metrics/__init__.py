"""Metric functions, grouped by concern: calls, trajectory, sequences, outcome, efficiency,
routing, reliability, composite. Each is a pure function returning a frozen result object."""
