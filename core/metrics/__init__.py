"""Metric functions, grouped by concern. Each is a pure function returning a frozen
``result.MetricResult`` (or a subclass adding typed fields) with a score, its parts and a
one-line reason.

Nothing is imported here: ``import trajcheck`` stays fast, and each submodule is imported
where it is used (``from trajcheck.metrics.calls import tool_call_prf``).

Module map (one place per policy; DESIGN.md "Semantics" and "Policies"):

- ``formulas``: every count-to-figure step (P/R/F1 and counted calls, name counts,
  retried failures, the failed-result test, token totals, unrecovered failures, run ids,
  argument weights, duplicates, the composite's weighted parts, run figures), pure
  functions over counts that the metrics and the fast scorer both call.
- ``result``: ``MetricResult`` (name, score, reason, parts, passed) and ``to_dict()``.
- ``calls``: one run's tool calls against the case's expected calls -- ``tool_call_prf``
  (precision / recall / F1 under maximum one-to-one matching, optional calls and retried
  failures set aside), ``selection_accuracy``, ``argument_accuracy``, ``schema_errors``,
  ``call_exact_correct``, ``call_correctness``.
- ``provenance``: ``argument_provenance`` (ID-like argument values grounded in the request,
  the user context or an earlier result).
- ``trajectory``: ``trajectory_match`` in the neutral modes exact / in_order / unordered /
  superset / subset, and ``MODE_TABLE`` mapping every framework's mode names onto them.
- ``sequences``: ``ordering_accuracy`` (precedence rules), ``check_forbidden_sequences``,
  ``call_rates`` (unnecessary / duplicate / forbidden), ``error_recovery``.
- ``steps``: ``step_eval``, one verdict per expected and per predicted call (matched,
  wrong_args, optional, retried, unnecessary, forbidden, duplicate, parse_error); the
  counts behind ``sequences.call_rates`` and ``composite``.
- ``final_state``: final-state diff (``state_diff``, ``check_final_state``).
- ``outcome``: ``response_includes``, ``task_success``, and ``outcome_from_calls`` (success
  judged from the calls when there is no database); re-exports ``final_state``'s names.
- ``recovery``: over fault-injected runs only -- recovery rate, false success, retry budget.
- ``efficiency``: ``run_stats`` (steps, calls, tokens, cost, latency of one run),
  ``efficiency_summary`` / ``efficiency_by_task`` (over successful runs, p50/p95/p99 by linear
  interpolation), ``cost_per_success`` (cost of all runs / successes) and
  ``step_efficiency`` (the composite's efficiency part; the only implementation of it).
- ``routing``: single-label ``routing_metrics`` (accuracy, per-class and macro P/R/F1,
  confusion matrix), ``multilabel_routing``, ``misroute_cost``, ``recall_floor_gate``.
- ``planning``: seed 000 §5.2's ``plan_coverage`` (labelled sub-goals covered by a plan
  artefact, matched literally, semantically or by a judge) and ``plan_adherence`` (plan
  steps executed in order or explicitly revised); matching and exact comparison come from
  ``trajcheck.match.matching`` / ``trajcheck.match.matchers``.
- ``reliability``: ``pass_hat_k``, ``pass_at_k``, ``bootstrap_ci`` (seeded, over tasks),
  ``wilson_interval``, ``rule_of_three``.
- ``comparison``: ``paired_compare`` (two agents on the same tasks: paired bootstrap of the
  rate difference, exact McNemar test).
- ``catalog``: ``PUBLIC_METRICS``, the public metric functions by name (each docstring
  has Args, Returns and a doctest example; tests/test_metric_docs.py runs them).
- ``composite``: ``score_trajectory`` -- outcome 0.50, tool selection 0.25, arguments 0.15,
  efficiency 0.10 by default; a critical forbidden-sequence violation makes it 0.

``trajcheck.score.suite`` combines them into a ``Scorecard`` (per run, per case, per suite).
"""
