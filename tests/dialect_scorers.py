"""Each framework's own trajectory scorer on a batch of cases, run in the side environment
that scripts/dialects_venv.sh builds (google-adk, pydantic-evals, strands-agents-evals and
azure-ai-evaluation pin versions the main environment does not have; mlflow-skinny runs
there too for its wrapper of ADK's evaluator).

stdin: a list of requests ``{"framework": F, "mode": M, "cases": [[pred, ref], ...]}`` with
``pred``/``ref`` lists of ``[name, args]`` (``pred`` items may carry a third element
``"err"``: the attempt failed). stdout: one JSON list with, per request, the list of the
framework's scores per case (a number, or ``{"error": "<exception class>"}``). Used by
tests/test_differential_dialects.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings

warnings.filterwarnings("ignore")


# ----------------------------------------------------------------------------- Google ADK


def adk_scores(mode: str, cases: list) -> list:
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    from google.genai import types

    match_type, _, ignore = mode.partition(":")
    crit = ToolTrajectoryCriterion(threshold=1.0, match_type=match_type, ignore_args=bool(ignore))
    ev = TrajectoryEvaluator(eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score",
                                                     criterion=crit))

    def inv(calls):
        return Invocation(user_content=types.Content(role="user", parts=[types.Part(text="q")]),
                          intermediate_data=IntermediateData(tool_uses=[
                              types.FunctionCall(name=c[0], args=c[1]) for c in calls]))

    return [ev.evaluate_invocations([inv(p)], [inv(r)]).overall_score for p, r in cases]


def mlflow_adk_scores(mode: str, cases: list) -> list:
    """MLflow's wrapper ``mlflow.genai.scorers.google_adk.ToolTrajectory`` (default threshold).

    mlflow-skinny 3.17.2 builds ``ToolTrajectoryCriterion(match_type=...)`` without the
    threshold google-adk 2.13.0 requires, so the scorer cannot be constructed as shipped
    (mode ``"construct:<match_type>"`` reports that error); otherwise the wrapper's own
    ``__call__`` (its input mapping and ADK's evaluator) runs with the criterion given the
    threshold it lacks."""
    import mlflow.genai.scorers.google_adk as mga

    if mode.startswith("construct:"):
        import importlib

        importlib.reload(mga)  # as shipped (an earlier request may have patched it)
        try:
            mga.ToolTrajectory(match_type=mode.split(":", 1)[1])
            return ["constructed"]
        except Exception as e:  # noqa: BLE001 - the incompatibility is the result
            return [{"error": type(e).__name__}]

    def evaluator(threshold: float, match_type: str):  # the shipped helper plus threshold=
        from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
        from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

        crit = ToolTrajectoryCriterion(match_type=match_type.upper(), threshold=threshold)
        return TrajectoryEvaluator(eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score",
                                                          threshold=threshold, criterion=crit))

    mga._create_trajectory_evaluator = evaluator
    sc = mga.ToolTrajectory(match_type=mode)
    out: list = []
    for p, r in cases:
        fb = sc(inputs="q", outputs="done", expectations={
            "expected_tool_calls": [{"name": c[0], "args": c[1]} for c in r],
            "actual_tool_calls": [{"name": c[0], "args": c[1]} for c in p]})
        out.append({"error": type(fb.error).__name__} if fb.error is not None
                   else (1.0 if fb.value == "yes" else 0.0))
    return out


# ----------------------------------------------------------------------------- pydantic-evals


def pydantic_evals_scores(mode: str, cases: list) -> list:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode
    from pydantic_evals.evaluators import EvaluatorContext, ToolCorrectness, TrajectoryMatch
    from pydantic_evals.otel.span_tree import SpanNode, SpanTree

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("dialect-scorers")

    def tree(calls):
        # the spans pydantic-ai (instrumentation v3+) writes for tool executions
        exporter.clear()
        with tracer.start_as_current_span("agent run"):
            for c in calls:
                with tracer.start_as_current_span(f"execute_tool {c[0]}") as s:
                    s.set_attribute("gen_ai.tool.name", c[0])
                    s.set_attribute("gen_ai.tool.call.arguments", json.dumps(c[1]))
                    if len(c) > 2 and c[2] == "err":
                        s.record_exception(ValueError("tool failed"))
                        s.set_status(Status(StatusCode.ERROR, "tool failed"))
        t = SpanTree()
        t.add_spans([SpanNode.from_readable_span(s) for s in exporter.get_finished_spans()])
        return t

    kind, _, opt = mode.partition(":")
    out = []
    for p, r in cases:
        names = [c[0] for c in r]
        ev = (TrajectoryMatch(expected_trajectory=names, order=opt) if kind == "TrajectoryMatch"
              else ToolCorrectness(expected_tools=names, allow_extra=opt == "allow_extra"))
        ctx = EvaluatorContext(name="case", inputs="q", metadata=None, expected_output=None,
                               output=None, duration=0.0, _span_tree=tree(p), attributes={},
                               metrics={})
        v = ev.evaluate(ctx).value
        out.append(float(v))
    return out


# ----------------------------------------------------------------------------- Strands


def strands_scores(mode: str, cases: list) -> list:
    from strands_evals.tools import evaluation_tools as et

    if mode == "ToolCalled":  # the deterministic evaluator; the tool is the first expected name
        from strands_evals.evaluators.deterministic.trajectory import ToolCalled
        from strands_evals.types import EvaluationData

        return [ToolCalled(r[0][0] if r else "c").evaluate(
            EvaluationData(input="q", actual_trajectory=[c[0] for c in p]))[0].score for p, r in cases]
    tool = getattr(et, mode)
    fn = getattr(tool, "_tool_func", None) or tool  # the decorated function itself
    out: list = []
    for p, r in cases:
        try:
            out.append(float(fn([c[0] for c in p], [c[0] for c in r])))
        except Exception as e:  # noqa: BLE001 - the framework's own failure is the result
            out.append({"error": type(e).__name__})
    return out


# ----------------------------------------------------------------------------- Azure


def azure_scores(mode: str, cases: list) -> list:
    from azure.ai.evaluation._evaluators._task_navigation_efficiency._task_navigation_efficiency import (
        _TaskNavigationEfficiencyEvaluator,
    )

    matching, _, field = mode.partition(":")
    ev = _TaskNavigationEfficiencyEvaluator(matching_mode=matching)
    out: list = []
    for k, (p, r) in enumerate(cases):
        response = [{"role": "assistant", "content": [
            {"type": "tool_call", "tool_call_id": f"c{k}_{i}", "name": c[0], "arguments": c[1]}]}
            for i, c in enumerate(p)]
        if field == "params":  # (names, {name: params}): parameters given once per tool name
            gt: object = ([c[0] for c in r], {c[0]: c[1] for c in r})
        else:
            gt = [c[0] for c in r]
        try:
            res = asyncio.run(ev._do_eval({"response": response, "ground_truth": gt}))
        except Exception as e:  # noqa: BLE001 - the framework's own failure is the result
            out.append({"error": type(e).__name__})
            continue
        if field in ("precision_score", "recall_score", "f1_score"):
            out.append(float(res["task_navigation_efficiency_properties"][field]))
        else:
            out.append(float(res["task_navigation_efficiency"]))
    return out


SCORERS = {"adk": adk_scores, "mlflow_adk": mlflow_adk_scores, "pydantic_evals": pydantic_evals_scores,
           "strands": strands_scores, "azure": azure_scores}


def main() -> None:
    reqs = json.load(sys.stdin)
    json.dump([SCORERS[r["framework"]](r["mode"], r["cases"]) for r in reqs], sys.stdout)


if __name__ == "__main__":
    main()
