"""The benchmark's seeded synthetic workload (issue 8).

``make_workload(n=2000, seed=0)`` returns ``n`` plain-dict items, the form a user holds before
any framework or trajcheck object exists::

    {"id": "case-0", "input": "...",
     "calls":    [{"name": "search_flights", "args": {...}}, ...],   # what the agent did
     "expected": [{"name": "search_flights", "args": {...}}, ...]}   # what it should have done

Each trajectory has 3-12 calls over 8 tool names; arguments are dicts of str / int / float /
bool / list values. The expected calls are a perturbed copy of the predicted ones: a call
dropped, a call inserted, an argument value changed, an argument added or removed, a tool
renamed, or two calls swapped, each with a fixed probability, so every metric sees a mix of
perfect, partial and failing trajectories. Everything is derived from ``random.Random(seed)``.

The ``to_*`` helpers build each framework's input objects from one item; the benchmark times
them both inside the timed path ("from plain dicts") and ahead of it ("prebuilt").
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

TOOLS: tuple[str, ...] = (
    "search_flights", "get_reservation", "book_reservation", "cancel_reservation",
    "update_baggage", "get_user", "send_email", "calculate",
)
_KEYS = ("user_id", "origin", "destination", "date", "cabin", "count", "amount", "refundable",
         "passengers", "flight_numbers", "note", "priority")
_WORDS = ("JFK", "SEA", "LAX", "ORD", "economy", "business", "mia_li", "noah_k", "urgent",
          "window seat", "refund", "2024-05-20", "2024-06-01")


def _value(rng: random.Random) -> Any:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.choice(_WORDS)
    if kind == 1:
        return rng.randrange(0, 500)
    if kind == 2:
        return round(rng.uniform(0, 1000), 2)
    if kind == 3:
        return rng.random() < 0.5
    return [rng.choice(_WORDS) for _ in range(rng.randrange(1, 4))]


def _call(rng: random.Random) -> dict[str, Any]:
    keys = rng.sample(_KEYS, rng.randrange(1, 5))
    return {"name": rng.choice(TOOLS), "args": {k: _value(rng) for k in keys}}


def _perturb(calls: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    exp = copy.deepcopy(calls)
    if rng.random() < 0.25 and len(exp) > 1:          # the agent made an extra call
        del exp[rng.randrange(len(exp))]
    if rng.random() < 0.20:                           # the agent missed a call
        exp.insert(rng.randrange(len(exp) + 1), _call(rng))
    if rng.random() < 0.30:                           # a wrong argument value
        c = rng.choice(exp)
        if c["args"]:
            k = rng.choice(sorted(c["args"]))
            c["args"][k] = _value(rng)
    if rng.random() < 0.10:                           # an argument missing / extra
        c = rng.choice(exp)
        if c["args"] and rng.random() < 0.5:
            del c["args"][rng.choice(sorted(c["args"]))]
        else:
            c["args"]["note"] = rng.choice(_WORDS)
    if rng.random() < 0.10:                           # the wrong tool
        rng.choice(exp)["name"] = rng.choice(TOOLS)
    if rng.random() < 0.20 and len(exp) > 1:          # order differs
        i, j = rng.sample(range(len(exp)), 2)
        exp[i], exp[j] = exp[j], exp[i]
    return exp


def make_workload(n: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` plain-dict trajectories (see the module doc); deterministic for a given seed."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        calls = [_call(rng) for _ in range(rng.randrange(3, 13))]
        items.append({"id": f"case-{i}", "input": f"request {i}: " + " ".join(rng.sample(_WORDS, 3)),
                      "calls": calls, "expected": _perturb(calls, rng)})
    return items


def scaling_pair(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` predicted and ``n`` expected calls of one tool, all with the argument ``q``.

    With an ``ignore`` matcher on ``q`` (see ``bench/run.py``) every (predicted, expected) pair
    is a candidate, so the matching sees n*n edges."""
    pred = [{"name": "search", "args": {"q": f"p{i}"}} for i in range(n)]
    exp = [{"name": "search", "args": {"q": f"e{i}"}, "match": {"q": "ignore"}} for i in range(n)]
    return pred, exp


# ----------------------------------------------------------------------------- converters


def to_trajcheck(item: dict[str, Any]) -> tuple[Any, Any]:
    """``(list[ToolCall], Case)`` built with the constructors, as in the README examples."""
    from trajcheck.model import Case, ExpectedCall, ToolCall

    calls = [ToolCall(name=c["name"], args=c["args"]) for c in item["calls"]]
    case = Case(id=item["id"], input=item["input"],
                expected_calls=tuple(ExpectedCall(name=e["name"], args=e["args"])
                                     for e in item["expected"]))
    return calls, case


def to_trajcheck_from_dict(item: dict[str, Any]) -> tuple[Any, Any]:
    """``(list[ToolCall], Case)`` through ``ToolCall.from_dict`` / ``Case.from_dict`` (the
    dataset-row route, which checks required fields)."""
    from trajcheck.model import Case, ToolCall

    calls = [ToolCall.from_dict(c) for c in item["calls"]]
    case = Case.from_dict({"id": item["id"], "input": item["input"],
                           "expected_calls": item["expected"]})
    return calls, case


def to_trajcheck_trajectory(item: dict[str, Any]) -> tuple[Any, Any]:
    """``(Trajectory, Case)``: user step, one tool_call step per call, final response."""
    from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory

    steps = [Step(index=0, kind="user", content=item["input"])]
    steps += [Step(index=i + 1, kind="tool_call",
                   tool_calls=(ToolCall(name=c["name"], args=c["args"]),))
              for i, c in enumerate(item["calls"])]
    steps.append(Step(index=len(steps), kind="final_response", content="done"))
    traj = Trajectory(steps=tuple(steps), final_response="done")
    case = Case(id=item["id"], input=item["input"],
                expected_calls=tuple(ExpectedCall(name=e["name"], args=e["args"])
                                     for e in item["expected"]))
    return traj, case


def to_ragas(item: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """``(user_input, reference_tool_calls)`` for RAGAS: a HumanMessage and one AIMessage
    holding every call."""
    from ragas.messages import AIMessage, HumanMessage, ToolCall

    msgs = [HumanMessage(content=item["input"]),
            AIMessage(content="", tool_calls=[ToolCall(name=c["name"], args=c["args"])
                                              for c in item["calls"]])]
    return msgs, [ToolCall(name=c["name"], args=c["args"]) for c in item["expected"]]


def to_ragas_sample(item: dict[str, Any]) -> Any:
    """A RAGAS ``MultiTurnSample`` (for ``ragas.evaluate``)."""
    from ragas.dataset_schema import MultiTurnSample

    msgs, ref = to_ragas(item)
    return MultiTurnSample(user_input=msgs, reference_tool_calls=ref)


def to_deepeval(item: dict[str, Any], name: str | None = None) -> Any:
    """A DeepEval ``LLMTestCase`` with ``tools_called`` and ``expected_tools``."""
    from deepeval.test_case import LLMTestCase, ToolCall

    return LLMTestCase(
        input=item["input"], actual_output="done", name=name,
        tools_called=[ToolCall(name=c["name"], input_parameters=c["args"]) for c in item["calls"]],
        expected_tools=[ToolCall(name=c["name"], input_parameters=c["args"])
                        for c in item["expected"]])


def openai_messages(item: dict[str, Any], key: str = "calls") -> list[dict[str, Any]]:
    """OpenAI chat messages (the agentevals/openevals input): user, then one assistant message
    holding every call (arguments as JSON strings)."""
    return [{"role": "user", "content": item["input"]},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                for i, c in enumerate(item[key])]}]
