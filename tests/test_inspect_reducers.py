"""trajcheck's ``pass_hat_k`` / ``pass_at_k`` epoch reducers inside a real Inspect AI eval
(``inspect_ai.eval``, mockllm, offline), side by side with Inspect's own ``pass_k`` / ``pass_at``
on the same scores (issue 29).

One sample, eight epochs; a solver writes each epoch's run into the sample's messages:

* epochs 1-6 call ``issue_refund`` once and it succeeds (error recovery does not apply: NaN,
  ``reason="not_applicable"``), epoch 7 fails with a 503 and retries successfully (recovered,
  1.0), epoch 8 fails and gives up (0.0);
* the final answer says "refund issued" in epochs 1-7 and "sorry" in epoch 8, scored by
  Inspect's own ``includes()`` scorer (C in 7 of 8 epochs).

Hand-computed: ``includes``: pass^1 = 7/8 = 0.875, pass^2 = C(7,2)/C(8,2) = 21/28 = 0.75,
pass@2 = 1 - C(1,2)/C(8,2) = 1. ``error_recovery``: two scored epochs (the six not-applicable
ones are left out, as Inspect's reducers leave NaN out), one passed: pass^1 = 1/2 = 0.5,
pass^2 = C(1,2)/C(2,2) = 0, pass@2 = 1 - C(1,2)/C(2,2) = 1. Before issue 29 trajcheck's reducers
read only ``metadata["passed"]`` (0.0 on ``includes``) and counted not-applicable epochs as
failures (0.125).
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Epochs, Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ModelOutput  # noqa: E402
from inspect_ai.scorer import Score, includes, pass_at, pass_k  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.tool import ToolCall, ToolCallError  # noqa: E402

from trajcheck.adapters import inspect_ai as ai  # noqa: E402
from trajcheck.errors import MetricInputError  # noqa: E402


def _call(i: int) -> ToolCall:
    return ToolCall(id=f"c{i}", function="issue_refund", arguments={"order_id": "981", "note": "r\u00e9sum\u00e9"})


@solver
def scripted_epochs():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        e = state.epoch
        results = {7: [True, False], 8: [True]}.get(e, [False])  # failed? per call
        for i, failed in enumerate(results):
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[_call(i)], model="mockllm"))
            state.messages.append(ChatMessageTool(
                content="503 Service Unavailable" if failed else "refunded", tool_call_id=f"c{i}",
                function="issue_refund", error=ToolCallError("unknown", "503 Service Unavailable") if failed else None))
        text = "Sorry, the refund service is down." if e == 8 else "Your refund issued: 40 USD."
        state.messages.append(ChatMessageAssistant(content=text, model="mockllm"))
        state.output = ModelOutput.from_content(model="mockllm", content=text)
        return state

    return solve


@pytest.fixture(scope="module")
def reductions(tmp_path_factory):
    reducers = [ai.pass_hat_k(1), pass_k(1), ai.pass_hat_k(2), pass_k(2), ai.pass_at_k(2), pass_at(2)]
    task = Task(dataset=[Sample(id="refund", input="Refund order 981.", target="refund issued")],
                solver=scripted_epochs(), scorer=[ai.trajcheck_scorer("error_recovery"), includes()],
                epochs=Epochs(8, reducers))
    log = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path_factory.mktemp("logs")),
                       display="none")[0]
    assert log.status == "success", log.error
    per_epoch = {name: [s.scores[name] for s in sorted(log.samples, key=lambda s: s.epoch)]
                 for name in ("trajcheck_error_recovery", "includes")}
    red = {(r.scorer, r.reducer): r.samples[0].value for r in log.reductions}
    return per_epoch, red


def test_the_epochs_are_scored_as_scripted(reductions):
    per_epoch, _red = reductions
    er = per_epoch["trajcheck_error_recovery"]
    assert [s.reason for s in er[:6]] == ["not_applicable"] * 6 and all(math.isnan(s.value) for s in er[:6])
    assert [s.value for s in er[6:]] == [1.0, 0.0]
    assert [s.metadata["passed"] for s in er[6:]] == [True, False]
    assert [s.value for s in per_epoch["includes"]] == ["C"] * 7 + ["I"]


@pytest.mark.parametrize(("scorer", "ours", "theirs", "want"), [
    ("includes", "pass_hat_k_1", "pass_k_1", 0.875),
    ("includes", "pass_hat_k_2", "pass_k_2", 0.75),
    ("includes", "pass_at_k_2", "pass_at_2", 1.0),
    ("trajcheck_error_recovery", "pass_hat_k_1", "pass_k_1", 0.5),
    ("trajcheck_error_recovery", "pass_hat_k_2", "pass_k_2", 0.0),
    ("trajcheck_error_recovery", "pass_at_k_2", "pass_at_2", 1.0),
])
def test_reducers_equal_inspects_own_and_hand_values(reductions, scorer, ours, theirs, want):
    _per_epoch, red = reductions
    assert red[(scorer, ours)] == pytest.approx(want, abs=1e-12)
    assert red[(scorer, theirs)] == pytest.approx(want, abs=1e-12)


def test_trajcheck_verdict_wins_for_its_own_scores_and_dict_values_per_key():
    # a composite of 0.85 passes at trajcheck's threshold 0.80 (Inspect's pass_k would need 1.0);
    # a rate passes at or below its threshold: trajcheck's own verdict is kept
    own = [Score(value=0.85, metadata={"metric": "composite", "passed": True}),
           Score(value=0.5, metadata={"metric": "false_success", "passed": False}),
           Score(value=math.nan, reason="not_applicable", metadata={"metric": "composite", "passed": None})]
    r = ai.pass_hat_k(1)(own)
    assert r.value == 0.5 and r.metadata["trials"] == [True, False] and r.metadata["skipped"] == 1
    # dict values key by key, NaN left out per key: a: 2 of 3 pass, b: 1 of 2
    d = [Score(value={"a": 1.0, "b": "C"}), Score(value={"a": 1.0, "b": math.nan}), Score(value={"a": 0.2, "b": "I"})]
    assert ai.pass_hat_k(1)(d).value == {"a": pytest.approx(2 / 3), "b": 0.5}
    assert pass_k(1)(d).value == {"a": pytest.approx(2 / 3), "b": 0.5}
    # a threshold below 1 for another scorer's numbers, as Inspect's value=
    nums = [Score(value=v) for v in (0.9, 0.7, 0.4, 0.95)]
    assert ai.pass_hat_k(2, value=0.7)(nums).value == pytest.approx(3 / 6) == pass_k(2, value=0.7)(nums).value
    # fewer scored epochs than k: unscored with the reason, never 0
    short = ai.pass_hat_k(2)([Score(value=1.0), Score(value=math.nan)])
    assert math.isnan(short.value) and "1 unscored epoch" in short.explanation
    with pytest.raises(MetricInputError, match="value must be a number"):
        ai.pass_at_k(2, value="high")
