"""Every trajcheck metric inside pydantic-evals' Dataset.evaluate on the refund desk (offline:
pydantic-ai's FunctionModel replays the recorded runs; the tools are real pydantic-ai tools
returning the recorded results).

One command, from the repository root:  python examples/pydantic_evals/refund_desk.py

Each ``Case`` is one refund-desk case (``examples/refund_desk/``: an optional lookup, a duplicate
refund, a refund that fails with a 503 and is retried, two lookups in parallel, the refund
e-mail sent before and after the refund, a forbidden delete, a question needing no tool), its
reference in ``Case(metadata={"trajcheck": {...}})``. The task runs a pydantic-ai ``Agent``
whose ``FunctionModel`` asks for the recorded run's tool calls turn by turn (the parallel pair
in one response); the failed call raises ``ModelRetry``. pydantic-ai's OpenTelemetry
instrumentation writes the spans pydantic-evals records as the case's span tree, which the
evaluators read (``source="span_tree"``); ``trajcheck_tool_call_f1__output`` scores the same
run from the task's output (the message history) instead. The report prints pydantic-evals'
own table; the scores and their reasons follow, then the suite figures of a two-repeat run
(``TrajcheckReportEvaluator``). Then final state from a sandbox fixture: three more cases whose
database starts from ``examples/refund_desk/shop.sql`` (``initial_state``); each replays a
recorded run whose calls were also run on a real trajcheck sandbox loaded from that fixture, and
the case's metadata carries the database after the run (``after_state``).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "refund_desk"))

from data import (  # noqa: E402
    CASES,
    FIXTURE_CASES,
    FIXTURE_RUNS,
    METRICS,
    MODES,
    REPLAYS,
    RUNS,
    expected,
    fixture_settings,
    settings,
)
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry, Tool  # noqa: E402
from pydantic_ai.capabilities.instrumentation import Instrumentation  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_evals import Case, Dataset  # noqa: E402

from trajcheck.adapters.pydantic_evals import (  # noqa: E402
    TrajcheckEvaluator,
    TrajcheckReportEvaluator,
    case_metadata,
)
from trajcheck.match.matching import is_failed  # noqa: E402


def ensure_tracer_provider() -> None:
    """pydantic-evals records a case's span tree only under an SDK TracerProvider."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())


def _script(cid: str):  # type: ignore[no-untyped-def]
    """pydantic-ai FunctionModel replaying the recorded run of case ``cid`` turn by turn."""
    run = RUNS[REPLAYS.get(cid, cid)]
    turns: list[list[Any]] = [[ToolCallPart(c.name, dict(c.args or {}), tool_call_id=c.call_id or f"{cid}-{s.index}-{j}")
                               for j, c in enumerate(s.tool_calls)] for s in run.steps if s.tool_calls]
    turns.append([TextPart(run.final_response or "")])

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=turns[sum(1 for m in messages if m.kind == "response")])

    return respond


def _tools(cid: str) -> list[Tool[Any]]:
    """Real pydantic-ai tools from the case's JSON Schemas, answering with the recorded results."""
    pending = [(c.name, None if r is None else r.output, r is not None and is_failed(r))
               for c, r in RUNS[REPLAYS.get(cid, cid)].pairs()]

    def make(name: str):  # type: ignore[no-untyped-def]
        def call(**kwargs: Any) -> str:
            i = next(j for j, (n, _o, _e) in enumerate(pending) if n == name)
            _n, output, failed = pending.pop(i)
            text = output if isinstance(output, str) else json.dumps(output)
            if failed:
                raise ModelRetry(text)
            return text

        return call

    return [Tool.from_schema(make(d["name"]), name=d["name"], description=f"refund desk tool {d['name']}",
                             json_schema=d["parameters"]) for d in {**CASES, **FIXTURE_CASES}[cid].to_dict()["tools"]]


async def run_agent(inputs: dict[str, str]) -> Any:
    """The task: a pydantic-ai agent replaying the case's recorded run; returns its messages."""
    cid = inputs["case_id"]
    agent = Agent(FunctionModel(_script(cid)), tools=_tools(cid), retries=2,
                  capabilities=[Instrumentation(settings=InstrumentationSettings())])
    result = await agent.run(inputs["question"])
    return result.all_messages()


def dataset(repeat_suite: bool = True) -> Dataset:
    """The eight cases, every metric on the span tree, one on the output, the suite figures."""
    cases = [Case(name=cid, inputs={"case_id": cid, "question": str(c.input)},
                  metadata=case_metadata(RUNS[cid], expected(c), **settings(c))) for cid, c in CASES.items()]
    evs = [TrajcheckEvaluator(k, source="span_tree") for k in METRICS]
    evs += [TrajcheckEvaluator("trajectory_match", mode=m, dialect=d, source="span_tree") for d, m in MODES]
    evs.append(TrajcheckEvaluator("tool_call_f1", source="output", evaluation_name="trajcheck_tool_call_f1__output"))
    return Dataset(name="refund-desk", cases=cases, evaluators=evs, report_evaluators=[TrajcheckReportEvaluator()] if repeat_suite else [])


def main() -> None:
    ensure_tracer_provider()
    report = dataset().evaluate_sync(run_agent, progress=False)
    report.print(include_input=False, include_output=False, include_durations=False)
    for c in report.cases:
        print(f"== {c.name}")
        for name, r in c.scores.items():
            print(f"  {name}: {r.value!r} - {r.reason}")
        for name, r in c.labels.items():
            print(f"  {name}: {r.value} - {r.reason}")
        for f in c.evaluator_failures:
            print(f"  {f.name}: failed - {f.error_message}")
    report2 = dataset().evaluate_sync(run_agent, repeat=2, progress=False)
    print("== suite figures (two runs per task; TrajcheckReportEvaluator)")
    for a in report2.analyses:
        print(f"  {a.title}: {a.value!r} - {a.description}")
    print("== final state from the sandbox fixture examples/refund_desk/shop.sql")
    fixture = Dataset(name="refund-desk-fixture",
                      cases=[Case(name=cid, inputs={"case_id": cid, "question": str(c.input)},
                                  metadata=case_metadata(FIXTURE_RUNS[cid], expected(c), **fixture_settings(c)))
                             for cid, c in FIXTURE_CASES.items()],
                      evaluators=[TrajcheckEvaluator("final_state", source="span_tree")])
    report3 = fixture.evaluate_sync(run_agent, progress=False)
    for c in report3.cases:
        print(f"== {c.name}")
        for name, r in c.scores.items():
            print(f"  {name}: {r.value!r} - {r.reason}")


if __name__ == "__main__":
    main()
