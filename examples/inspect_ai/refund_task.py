"""The refund desk as an Inspect AI task scored by trajcheck (offline: Inspect's mockllm model
replays the recorded runs; the tools are real Inspect tools returning the recorded results).

One command, from the repository root:

    inspect eval examples/inspect_ai/refund_task.py --epochs 4

Each sample is one refund-desk case (``examples/refund_desk/``: an optional lookup, a duplicate
refund, a refund that fails with a 503 and is retried, two lookups in parallel, the refund
e-mail sent before and after the refund, a forbidden delete, a question needing no tool). The
mock model asks for the recorded run's tool calls turn by turn (a parallel pair in one turn),
the tools answer with the recorded results (the 503 raised as a ``ToolError``), and Inspect's
own loop (``generate(tool_calls="loop")``) writes the messages trajcheck scores. In some epochs
a case replays a different recorded run (``VARIANTS``), so pass^k and pass@k over the epochs
differ from 0 and 1. Every metric of the README table and every trajectory mode of every
dialect is a ``trajcheck_scorer``; ``task_success`` is reduced over epochs with trajcheck's
``pass_hat_k(2)`` and ``pass_at_k(2)`` reducers and carries the ``success_rate`` and
``routing_macro_f1`` metrics. Inspect prints its own results table; the log holds every score
with the core's reason as its explanation.

A second task in this file, ``refund_desk_final_state``, scores final state from a sandbox
fixture: three more cases whose database starts from ``examples/refund_desk/shop.sql``
(``initial_state``); each replays a recorded run whose calls were also run on a real trajcheck
sandbox loaded from that fixture, and the sample carries the database after the run
(``after_state``). ``inspect eval`` on this file runs both tasks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

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
from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageSystem,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import mean  # noqa: E402
from inspect_ai.solver import Generate, TaskState, generate, solver  # noqa: E402
from inspect_ai.tool import ToolCall, ToolDef, ToolError, ToolParams  # noqa: E402
from inspect_ai.util import store  # noqa: E402

from trajcheck.adapters.inspect_ai import (  # noqa: E402
    routing_macro_f1,
    sample_metadata,
    success_rate,
    trajcheck_epochs,
    trajcheck_scorer,
)
from trajcheck.match.matching import is_failed  # noqa: E402

#: (case, epoch) -> the recorded run replayed instead of the case's own.
VARIANTS = {("order_kept", 2): "order_broken", ("optional", 3): "forbidden", ("optional", 4): "forbidden",
            ("duplicate", 3): "no_tool", ("retry", 2): "no_tool", ("retry", 4): "no_tool"}
_MARK = "replay: "


def replayed(cid: str, epoch: int) -> str:
    """The recorded run sample ``cid`` replays in ``epoch`` (1-based)."""
    if cid in REPLAYS:  # a final-state case on the sandbox fixture
        return REPLAYS[cid]
    return VARIANTS.get((cid, epoch), cid)


def _turns(run_id: str) -> list[ModelOutput]:
    """The model outputs of one recorded run: one per tool-call step, then the final text."""
    t = RUNS[run_id]
    out = []
    for s in t.steps:
        if s.tool_calls:
            calls = [ToolCall(id=c.call_id or f"{run_id}-{s.index}-{j}", function=c.name, arguments=dict(c.args or {}))
                     for j, c in enumerate(s.tool_calls)]
            msg = ChatMessageAssistant(content=s.content or "", tool_calls=calls, model="mockllm")
            out.append(ModelOutput(model="mockllm", choices=[ChatCompletionChoice(message=msg, stop_reason="tool_calls")]))
    out.append(ModelOutput.from_content(model="mockllm", content=t.final_response or ""))
    for o in out:  # usage given, so mockllm does not count tokens (which would fetch a tokenizer)
        o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out


def mock_model(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """mockllm's custom output: the next turn of the run named in the system message."""
    run_id = next(str(m.text)[len(_MARK):] for m in messages if m.role == "system" and str(m.text).startswith(_MARK))
    n = sum(1 for m in messages if m.role == "assistant")
    return _turns(run_id)[n]


def _tool(spec: dict[str, Any]) -> Any:
    name = spec["name"]

    async def execute(**kwargs: Any) -> str:
        pending = store().get("results", [])
        i = next(j for j, (n, _o, _e) in enumerate(pending) if n == name)
        _n, output, failed = pending.pop(i)
        store().set("results", pending)
        text = output if isinstance(output, str) else json.dumps(output)
        if failed:
            raise ToolError(text)
        return text

    params = json.loads(json.dumps(spec["parameters"]))
    for p, schema in params.get("properties", {}).items():  # Inspect wants every parameter described
        schema.setdefault("description", p.replace("_", " "))
    return ToolDef(execute, name=name, description=f"refund desk tool {name}",
                   parameters=ToolParams.model_validate(params)).as_tool()


@solver
def replay_setup():  # type: ignore[no-untyped-def]
    """Name the run this epoch replays (system message for the mock model), load its recorded
    results into the sample's store for the tools, give the model the case's tools, and put the
    replayed run's database before/after in the sample's trajcheck metadata (for a fixture case:
    the database after the run on the sandbox; the one before comes from its fixture)."""

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        run_id = replayed(str(state.sample_id), state.epoch)
        t = RUNS[run_id]
        state.messages.insert(0, ChatMessageSystem(content=_MARK + run_id))
        store().set("results", [(c.name, None if r is None else r.output, r is not None and is_failed(r))
                                for c, r in t.pairs()])
        cid = str(state.sample_id)
        state.tools = [_tool(d) for d in {**CASES, **FIXTURE_CASES}[cid].to_dict()["tools"]]
        md = dict(state.metadata["trajcheck"])
        if cid in FIXTURE_CASES:
            md["after_state"] = FIXTURE_RUNS[cid].metadata["state_after"]
        else:
            md["before_state"], md["after_state"] = t.metadata.get("state_before"), t.metadata.get("state_after")
        state.metadata["trajcheck"] = md
        return state

    return solve


def scorers(full: bool = True) -> list[Any]:
    """Every row metric and every trajectory mode as trajcheck scorers (``full``), else four;
    task success also carries the suite figures."""
    keys = METRICS if full else ["tool_call_f1", "ordering_accuracy", "duplicate_call_rate", "error_recovery"]
    out = [trajcheck_scorer(k) for k in keys if k != "task_success"]
    out += [trajcheck_scorer("trajectory_match", mode=m, dialect=d) for d, m in MODES] if full else []
    out.append(trajcheck_scorer("task_success", metrics=[mean(), success_rate(), routing_macro_f1()]))
    return out


@task
def refund_desk(epochs: int = 4, k: int = 2, full: bool = True) -> Task:
    """The eight refund-desk cases, every trajcheck metric (``-T full=false``: four of them),
    pass^k and pass@k over epochs."""
    samples = [Sample(id=cid, input=c.input if isinstance(c.input, str) else json.dumps(c.input),
                      metadata=sample_metadata(RUNS[cid], expected(c), **settings(c)))
               for cid, c in CASES.items()]
    return Task(dataset=samples, solver=[replay_setup(), generate(tool_calls="loop")], scorer=scorers(full),
                epochs=trajcheck_epochs(epochs, k),
                model=get_model("mockllm/model", custom_outputs=mock_model))


@task
def refund_desk_final_state() -> Task:
    """The three fixture cases (``examples/refund_desk/fixture_cases.jsonl``), scored on final
    state from the sandbox fixture ``shop.sql``."""
    samples = [Sample(id=cid, input=c.input if isinstance(c.input, str) else json.dumps(c.input),
                      metadata=sample_metadata(FIXTURE_RUNS[cid], expected(c), **fixture_settings(c)))
               for cid, c in FIXTURE_CASES.items()]
    return Task(dataset=samples, solver=[replay_setup(), generate(tool_calls="loop")],
                scorer=[trajcheck_scorer("final_state")],
                model=get_model("mockllm/model", custom_outputs=mock_model))
