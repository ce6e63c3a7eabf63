"""The public metric functions, by module: what the API pages document and what
tests/test_metric_docs.py holds to the docstring rule (Args, Returns, an example run as a
doctest). Names only, so importing this module imports no metric.

Every figure a host shows (``adapters._catalog.ROW_METRICS``) is computed by one of these.
"""

from __future__ import annotations

#: ``"module:function"`` of every public metric function, module by module.
PUBLIC_METRICS: tuple[str, ...] = (
    "trajcheck.metrics.calls:tool_call_prf",
    "trajcheck.metrics.calls:selection_accuracy",
    "trajcheck.metrics.calls:argument_accuracy",
    "trajcheck.metrics.calls:call_exact_correct",
    "trajcheck.metrics.calls:call_correctness",
    "trajcheck.metrics.calls:schema_errors",
    "trajcheck.metrics.provenance:argument_provenance",
    "trajcheck.metrics.trajectory:trajectory_match",
    "trajcheck.metrics.trajectory_scores:lcs_prf",
    "trajcheck.metrics.trajectory_scores:multiset_prf",
    "trajcheck.metrics.sequences:ordering_accuracy",
    "trajcheck.metrics.sequences:check_forbidden_sequences",
    "trajcheck.metrics.sequences:call_rates",
    "trajcheck.metrics.sequences:error_recovery",
    "trajcheck.metrics.steps:step_eval",
    "trajcheck.metrics.outcome:response_includes",
    "trajcheck.metrics.outcome:task_success",
    "trajcheck.metrics.outcome:outcome_from_calls",
    "trajcheck.metrics.final_state:state_diff",
    "trajcheck.metrics.final_state:check_final_state",
    "trajcheck.metrics.recovery:recovery_rate",
    "trajcheck.metrics.recovery:is_false_success",
    "trajcheck.metrics.recovery:false_success_rate",
    "trajcheck.metrics.recovery:max_retries_exceeded",
    "trajcheck.metrics.efficiency:run_stats",
    "trajcheck.metrics.efficiency:efficiency_summary",
    "trajcheck.metrics.efficiency:efficiency_by_task",
    "trajcheck.metrics.efficiency:cost_per_success",
    "trajcheck.metrics.efficiency:step_efficiency",
    "trajcheck.metrics.routing:confusion_matrix",
    "trajcheck.metrics.routing:routing_metrics",
    "trajcheck.metrics.routing:accuracy",
    "trajcheck.metrics.routing:macro_f1",
    "trajcheck.metrics.routing:multilabel_routing",
    "trajcheck.metrics.routing:misroute_cost",
    "trajcheck.metrics.routing:recall_floor_gate",
    "trajcheck.metrics.planning:plan_coverage",
    "trajcheck.metrics.planning:plan_adherence",
    "trajcheck.metrics.reliability:pass_hat_k",
    "trajcheck.metrics.reliability:pass_at_k",
    "trajcheck.metrics.reliability:pass_hat_k_curve",
    "trajcheck.metrics.reliability:pass_at_k_curve",
    "trajcheck.metrics.reliability:success_rate",
    "trajcheck.metrics.reliability:wilson_interval",
    "trajcheck.metrics.reliability:rule_of_three",
    "trajcheck.metrics.reliability:bootstrap_ci",
    "trajcheck.metrics.comparison:paired_compare",
    "trajcheck.metrics.composite:score_trajectory",
    "trajcheck.metrics.composite:efficiency_score",
)

__all__ = ["PUBLIC_METRICS"]
