"""Scoring: one run of one case into one ``RunResult`` (``scoring``), and the streaming
evaluation that reads, scores and aggregates a whole file (``pipeline``)."""
