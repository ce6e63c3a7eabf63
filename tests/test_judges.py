"""Judges on a deterministic ScriptedModel: verdicts, repair/retry of bad JSON, rendering."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from trajcheck.errors import JudgeError, MatcherError, MetricInputError
from trajcheck.judges import (
    CallableModel,
    DeepEvalModel,
    LangChainModel,
    ScriptedModel,
    ajudge_trajectory,
    argument_judge,
    as_model,
    judge_plan_adherence,
    judge_plan_quality,
    judge_task_completion,
    judge_trajectory,
    messages_to_prompt,
    parse_json_reply,
    render_trajectory,
)
from trajcheck.judges.fencing import request_nonce
from trajcheck.match.matchers import MatchContext, get_matcher
from trajcheck.model import Case, Step, ToolCall, ToolResult, Trajectory


def _traj(*, fail: bool = False, long_output: str = "x" * 50) -> Trajectory:
    steps = [Step(0, "user", "Open a ticket: laptop won't boot"),
             Step(1, "tool_call", tool_calls=(ToolCall("search_docs", {"q": "boot"}, "c1"),)),
             Step(2, "tool_result", tool_result=ToolResult("c1", "search_docs", long_output, False))]
    if fail:
        steps += [Step(3, "tool_call", tool_calls=(ToolCall("create_ticket", {"title": "Laptop"}, "c2"),)),
                  Step(4, "tool_result", tool_result=ToolResult(
                      "c2", "create_ticket", None, True, "ServiceUnavailable: ticket DB down " + "E" * 900))]
    else:
        steps += [Step(3, "tool_call", tool_calls=(ToolCall("create_ticket", {"title": "Laptop"}, "c2"),)),
                  Step(4, "tool_result", tool_result=ToolResult("c2", "create_ticket", {"id": "INC-7"}, False))]
    return Trajectory(steps=tuple(steps), final_response="Created INC-7.")


def _checks(**over: object) -> str:
    base: dict[str, object] = {n: {"pass": True, "reason": f"{n} ok"} for n in (
        "tool_results_used", "no_unnecessary_calls", "no_unrequested_actions", "failure_handled",
        "response_faithful")}
    base.update(over)
    return json.dumps({"checks": base})


# ------------------------------------------------------------------ rendering


def test_render_truncates_long_outputs_but_keeps_errors_whole() -> None:
    long = "A" * 2000
    traj = _traj(fail=True, long_output=long)
    text = render_trajectory(traj, max_output_chars=100)
    # the long successful output is cut to 100 chars with a marker naming the sizes
    assert "A" * 100 + "... [truncated 1900 of 2000 chars]" in text
    assert "A" * 101 not in text
    # the 932-char error message is kept whole
    err = "ServiceUnavailable: ticket DB down " + "E" * 900
    assert f"RESULT create_ticket (id c2) ERROR: {err}" in text
    assert text.endswith("FINAL RESPONSE: Created INC-7.")


def test_render_keeps_error_looking_outputs_whole_and_shows_unparsed_args() -> None:
    payload = {"error": "quota exceeded " + "Q" * 700}
    traj = Trajectory(steps=(
        Step(0, "tool_call", tool_calls=(ToolCall("run_sql", None, "c1", raw_args="{bad",
                                                  args_parse_error="not JSON"),)),
        Step(1, "tool_result", tool_result=ToolResult("c1", "run_sql", payload, None)),
    ))
    text = render_trajectory(traj, max_output_chars=50)
    assert "Q" * 700 in text  # an {"error": ...} output is not truncated even with is_error None
    assert "CALL run_sql (id c1) with unparsed arguments '{bad' (not JSON)" in text
    assert "FINAL RESPONSE: (none)" in text
    with pytest.raises(MetricInputError):
        render_trajectory(traj, max_output_chars=0)


def test_trajectory_prompt_contains_rendered_trajectory() -> None:
    m = ScriptedModel([_checks()])
    judge_trajectory(m, _traj(fail=True, long_output="B" * 3000), max_output_chars=200)
    prompt = m.calls[0][1]["content"]
    n = request_nonce(m.calls[0])
    assert n is not None and len(n) == 16
    assert "B" * 200 + "... [truncated 2800 of 3000 chars]" in prompt
    assert "E" * 900 in prompt
    assert f"USER REQUEST: <data-{n}>Open a ticket: laptop won't boot</data-{n}>" in prompt


# ------------------------------------------------------------------ trajectory judge


def test_trajectory_judge_all_pass_and_failure_check_na_without_failures() -> None:
    m = ScriptedModel([_checks(failure_handled={"pass": "n/a", "reason": "none failed"})])
    v = judge_trajectory(m, _traj())
    # no tool failed and the model said n/a -> n/a; 4 of 4 applicable pass (a model's false
    # is kept: tests/test_judges_errors.py)
    assert v.item("failure_handled").passed is None
    assert v.passed is True and v.score == 1.0
    assert v.reason == "all 4 checks passed"
    assert v.attempts == 1 and v.error is None
    d = v.to_dict()
    assert d["items"][0] == {"name": "tool_results_used", "passed": True, "reason": "tool_results_used ok"}
    metric = v.to_metric()
    assert metric.name == "judge:trajectory" and metric.score == 1.0 and metric.passed is True


def test_trajectory_judge_failures_counted() -> None:
    reply = _checks(no_unnecessary_calls={"pass": False, "reason": "searched twice"},
                    failure_handled={"pass": "fail", "reason": "ignored the outage"},
                    response_faithful={"pass": False, "reason": "claims INC-7 was created"})
    v = judge_trajectory(ScriptedModel([reply]), _traj(fail=True))
    assert v.passed is False
    assert v.score == pytest.approx(2 / 5)
    assert v.reason == "3 of 5 failed: no_unnecessary_calls, failure_handled, response_faithful"
    assert v.item("failure_handled").reason == "ignored the outage"


def test_na_when_a_tool_failed_is_reasked_then_accepted() -> None:
    bad = _checks(failure_handled={"pass": "n/a", "reason": "none"})
    good = _checks(failure_handled={"pass": True, "reason": "told the user"})
    m = ScriptedModel([bad, good])
    v = judge_trajectory(m, _traj(fail=True))
    assert v.attempts == 2 and v.passed is True and v.score == 1.0
    reask = m.calls[1]
    # the model's reply as sent back (the scripted model wrote the request's nonce first)
    assert reask[-2]["role"] == "assistant"
    assert json.loads(reask[-2]["content"]) == {"nonce": request_nonce(reask), **json.loads(bad)}
    assert "failure_handled" in reask[-1]["content"] and "a tool call failed" in reask[-1]["content"]


def _with_nonce(reply: str) -> Any:
    """A script writing ``reply`` with the request's nonce put in its object, first."""
    def fn(msgs: list[dict[str, str]]) -> str:
        obj = json.dumps({"nonce": request_nonce(msgs), **json.loads(_checks())})
        return reply.replace(_checks(), obj)
    return fn


def test_code_fenced_reply_accepted_chatty_reply_reasked() -> None:
    # one code fence that is the whole reply is the object; prose around the object (even
    # the right one, with the right nonce) is not a whole-reply object: re-asked
    m = ScriptedModel(_with_nonce("```json\n" + _checks() + "\n```"), echo_nonce=False)
    v = judge_trajectory(m, _traj())
    assert v.passed is True and v.attempts == 1 and len(m.calls) == 1
    for chatty in ("Here you go:\n```json\n" + _checks() + "\n```\nHope this helps",
                   "Sure! " + _checks() + " -- done."):
        m = ScriptedModel(_with_nonce(chatty), echo_nonce=False)
        v = judge_trajectory(m, _traj(), retries=1)
        assert v.passed is None and v.error is not None and len(m.calls) == 2
        assert "not one JSON object and nothing else" in m.calls[1][-1]["content"]


def test_unparseable_replies_become_judge_error_never_pass() -> None:
    m = ScriptedModel(["I think it is fine.", "PASS", "{not json"])
    v = judge_trajectory(m, _traj(), retries=2)
    assert len(m.calls) == 3  # first ask + 2 bounded re-asks
    assert v.passed is None and v.score is None
    assert v.error is not None and "unusable after 3 attempts" in v.error
    assert v.to_metric().passed is None
    with pytest.raises(JudgeError, match="unusable after 1 attempts"):
        judge_trajectory(ScriptedModel(["nope"]), _traj(), retries=0, raise_on_error=True)


def test_missing_check_and_model_failure_are_errors() -> None:
    partial = json.dumps({"checks": {"tool_results_used": {"pass": True, "reason": "read INC-7"}}})
    v = judge_trajectory(ScriptedModel([partial]), _traj(), retries=0)
    assert v.passed is None and 'check "no_unnecessary_calls" is missing' in (v.error or "")

    def boom(messages: list[dict[str, str]]) -> str:
        raise RuntimeError("rate limited")

    v2 = judge_trajectory(boom, _traj())
    assert v2.passed is None and "RuntimeError: rate limited" in (v2.error or "")


def test_async_trajectory_judge() -> None:
    v = asyncio.run(ajudge_trajectory(ScriptedModel(["oops", _checks()]), _traj()))
    assert v.passed is True and v.attempts == 2


# ------------------------------------------------------------------ task completion


def test_task_completion_against_case_criteria() -> None:
    case = Case(id="hd_01", input="Open a high-priority ticket", metadata={
        "success_criteria": ["a ticket was created", "priority is high", "the user got the ID"]})
    reply = json.dumps({"criteria": [
        {"criterion": "a ticket was created", "met": True, "evidence": "step 4 returned INC-7"},
        {"criterion": "priority is high", "met": False, "evidence": "no priority argument"},
        {"criterion": "the user got the ID", "met": True, "evidence": "final response names INC-7"},
    ]})
    m = ScriptedModel([reply])
    v = judge_task_completion(m, _traj(), case)
    assert [i.passed for i in v.items] == [True, False, True]
    assert v.item("priority is high").reason == "no priority argument"
    assert v.extra["task_completed"] is False and v.passed is False
    assert v.score == pytest.approx(2 / 3)
    n = request_nonce(m.calls[0])
    assert f"1. <data-{n}>a ticket was created</data-{n}>" in m.calls[0][1]["content"]
    # criteria argument overrides the case's; all met -> task_completed
    ok = json.dumps({"criteria": [{"criterion": "x", "met": "met", "evidence": "e"}]})
    v2 = judge_task_completion(ScriptedModel([ok]), _traj(), case, criteria=["x"])
    assert v2.extra["task_completed"] is True and v2.passed is True


def test_task_completion_wrong_count_reasked_and_no_criteria_error() -> None:
    case = Case(id="c", input="q", metadata={"success_criteria": ["a", "b"]})
    short = json.dumps({"criteria": [{"met": True}]})
    v = judge_task_completion(ScriptedModel([short, short]), _traj(), case, retries=1)
    assert v.passed is None and "has 1 entries; expected 2" in (v.error or "")
    with pytest.raises(MetricInputError, match="case 'nocrit'"):
        judge_task_completion(ScriptedModel([]), _traj(), Case(id="nocrit", input="q"))


# ------------------------------------------------------------------ plans


def test_plan_quality_and_adherence() -> None:
    q = json.dumps({"checks": {"complete": {"pass": True, "reason": "covers it"},
                               "feasible": {"pass": True, "reason": "tools exist"},
                               "efficient": {"pass": False, "reason": "searches twice"},
                               "grounded": {"pass": "yes", "reason": "no assumed facts"}}})
    v = judge_plan_quality(ScriptedModel([q]), ["search docs", "search docs", "create ticket"],
                           task="open a ticket", tools=["search_docs", "create_ticket"])
    assert v.passed is False and v.score == 0.75 and v.item("efficient").reason == "searches twice"

    a = json.dumps({"steps": [{"step": "search docs", "followed": True, "evidence": "step 1"},
                              {"step": "create ticket", "followed": True, "evidence": "step 3"}],
                    "unplanned_actions": ["called update_ticket"]})
    m = ScriptedModel([a])
    v2 = judge_plan_adherence(m, "search docs\n\ncreate ticket\n", _traj())
    assert v2.extra == {"steps_followed": 2, "steps_revised": [], "n_steps": 2,
                        "unplanned_actions": ["called update_ticket"]}
    assert v2.passed is False and v2.score == pytest.approx(2 / 3)
    assert "1. search docs\n2. create ticket" in m.calls[0][1]["content"]
    with pytest.raises(MetricInputError):
        judge_plan_adherence(m, [], _traj())


# ------------------------------------------------------------------ parsing and adapters


def test_parse_json_reply() -> None:
    assert parse_json_reply('{"a": 1}') == {"a": 1}
    assert parse_json_reply("```\n{\"a\": 2}\n```") == {"a": 2}
    assert parse_json_reply('noise [1] {"b": {"c": 3}} tail {"d": 4}') == {"b": {"c": 3}}
    with pytest.raises(JudgeError, match="no JSON object"):
        parse_json_reply("[1, 2]")


def test_adapters_duck_typed() -> None:
    class Msg:
        def __init__(self, c: object) -> None:
            self.content = c

    class LC:
        def __init__(self) -> None:
            self.seen: list[object] = []

        def invoke(self, msgs: object) -> Msg:
            self.seen.append(msgs)
            return Msg([{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}])

        async def ainvoke(self, msgs: object) -> Msg:
            return Msg("async hi")

    class DE:
        def generate(self, prompt: str) -> tuple[str, float]:
            return ("de:" + prompt[:6], 0.01)

        async def a_generate(self, prompt: str) -> str:
            return "ade"

    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    lc = LC()
    assert isinstance(as_model(lc), LangChainModel)
    assert as_model(lc).complete(msgs) == "hello"
    assert lc.seen[0] == [("system", "S"), ("user", "U")]
    assert asyncio.run(as_model(lc).acomplete(msgs)) == "async hi"
    assert isinstance(as_model(DE()), DeepEvalModel)
    assert as_model(DE()).complete(msgs) == "de:SYSTEM"
    assert asyncio.run(as_model(DE()).acomplete(msgs)) == "ade"
    assert messages_to_prompt(msgs) == "SYSTEM:\nS\n\nUSER:\nU"

    async def afn(messages: list[dict[str, str]]) -> str:
        return "A" + messages[-1]["content"]

    cm = as_model(afn)
    assert isinstance(cm, CallableModel)
    assert cm.complete(msgs) == "AU" and asyncio.run(cm.acomplete(msgs)) == "AU"
    with pytest.raises(JudgeError, match="cannot use a int"):
        as_model(3)
    with pytest.raises(JudgeError, match="message 0"):
        ScriptedModel(["x"]).complete([{"role": "user"}])  # type: ignore[list-item]
    s = ScriptedModel(["one"])
    assert s.complete(msgs) == "one" and s.remaining == 0
    with pytest.raises(JudgeError, match="exhausted after 1"):
        s.complete(msgs)


# ------------------------------------------------------------------ judge matcher


def test_argument_judge_backs_the_judge_matcher() -> None:
    def by_content(messages: list[dict[str, str]]) -> str:
        ok = "Laptop does not start" in messages[-1]["content"]
        return json.dumps({"match": ok, "reason": "same issue" if ok else "different"})

    ctx = MatchContext(judge=argument_judge(ScriptedModel(by_content)))
    m = get_matcher("judge")
    assert m("Laptop won't boot", "Laptop does not start", ctx) is True
    assert m("Laptop won't boot", "VPN down", ctx) is False
    # a judge that never answers usably is an error, not a match
    bad = MatchContext(judge=argument_judge(ScriptedModel(lambda ms: "maybe"), retries=1))
    with pytest.raises(MatcherError, match="JudgeError"):
        m("a", "b", bad)
