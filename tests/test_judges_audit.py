"""Every verdict records what it came from; a persistent cache makes a rerun free and equal;
a user's model raising any exception is a judge error for that run, not a crash."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from trajcheck.judges import (
    RUBRIC_VERSION,
    TRAJECTORY_CHECKS,
    CachedModel,
    JudgeCache,
    OpenAICompatibleModel,
    ScriptedModel,
    ajudge_trajectory,
    judge_trajectory,
    model_identity,
)
from trajcheck.judges.fencing import request_nonce
from trajcheck.judges.rubrics import trajectory_messages
from trajcheck.model import Step, ToolCall, ToolResult, Trajectory

NAMES = [n for n, _ in TRAJECTORY_CHECKS]


def _traj(out: str = "INC-7") -> Trajectory:
    return Trajectory(steps=(
        Step(0, "user", "Open a ticket"),
        Step(1, "tool_call", tool_calls=(ToolCall("create_ticket", {"p": "high"}, "c1"),)),
        Step(2, "tool_result", tool_result=ToolResult("c1", "create_ticket", out, False)),
    ), final_response="Opened.")


def _reply(faithful: bool = True) -> str:
    c = {n: {"pass": True, "reason": "fine"} for n in NAMES}
    c["response_faithful"] = {"pass": faithful, "reason": "matches" if faithful else "invented"}
    return json.dumps({"checks": c})


def test_verdict_records_model_prompt_hash_rubric_and_raw_reply() -> None:
    m = ScriptedModel([_reply()])
    v = judge_trajectory(m, _traj())
    sent = m.calls[0]  # the first ask, exactly as sent, its fresh nonce written as <nonce>
    n = request_nonce(sent)
    blob = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert n is not None and blob.count(n) >= 3  # system rule, the fences, the reply shape
    blob = blob.replace(n, "<nonce>")
    assert v.audit["prompt_sha256"] == hashlib.sha256(blob.encode()).hexdigest()
    assert v.audit["rubric_version"] == RUBRIC_VERSION
    assert v.audit["model"] == {"adapter": "ScriptedModel", "model": "ScriptedModel", "sampling": {}}
    # the raw reply as the model wrote it (the request's nonce first), nonce masked
    assert json.loads(v.raw) == {"nonce": "<nonce>", **json.loads(_reply())}
    assert v.to_dict()["audit"] == v.audit
    oa = OpenAICompatibleModel("http://127.0.0.1:9/v1", "judge-mini", temperature=0.0,
                               extra_body={"seed": 7})
    assert model_identity(oa) == {"adapter": "OpenAICompatibleModel", "model": "judge-mini",
                                  "sampling": {"temperature": 0.0, "extra_body": {"seed": 7}},
                                  "base_url": "http://127.0.0.1:9/v1"}

    def my_judge(messages: list[dict[str, str]]) -> str:
        return _reply()

    v2 = judge_trajectory(my_judge, _traj())
    assert v2.audit["model"]["model"] == f"{__name__}:test_verdict_records_model_prompt_hash_rubric_and_raw_reply.<locals>.my_judge"


def test_cache_serves_a_rerun_with_no_call_and_identical_verdicts(tmp_path: Path) -> None:
    db = tmp_path / "judge.sqlite"
    first = ScriptedModel([_reply(False), _reply()])
    v1 = [judge_trajectory(CachedModel(first, db), _traj(o)) for o in ("INC-7", "INC-8")]
    assert len(first.calls) == 2 and [v.passed for v in v1] == [False, True]
    assert [v.audit["cached_replies"] for v in v1] == [0, 0]
    # a new process would open the same file: a model with no replies left must not be called
    empty = ScriptedModel([])
    cm = CachedModel(empty, JudgeCache(db))
    v2 = [judge_trajectory(cm, _traj(o)) for o in ("INC-7", "INC-8")]
    assert empty.calls == [] and cm.cache.hits == 2 and cm.cache.misses == 0
    assert [v.audit["cached_replies"] for v in v2] == [1, 1]
    strip = [{k: x for k, x in v.to_dict().items() if k != "audit"} for v in v1]
    assert strip == [{k: x for k, x in v.to_dict().items() if k != "audit"} for v in v2]
    # a different prompt (another trajectory) is not served from the cache
    v3 = judge_trajectory(cm, _traj("INC-9"))
    assert v3.passed is None and "script exhausted" in (v3.error or "") and cm.cache.misses == 1


def test_cache_key_covers_model_sampling_and_rubric_version() -> None:
    msgs = trajectory_messages(_traj())
    a = {"adapter": "X", "model": "m1", "sampling": {"temperature": 0.0}}
    keys = {JudgeCache.key(a, msgs), JudgeCache.key({**a, "model": "m2"}, msgs),
            JudgeCache.key({**a, "sampling": {"temperature": 0.7}}, msgs),
            JudgeCache.key(a, msgs[:1])}
    assert len(keys) == 4


def test_bad_cache_file_is_a_judge_error(tmp_path: Path) -> None:
    from trajcheck.errors import JudgeError

    bad = tmp_path / "notdb.sqlite"
    bad.write_text("this is not a database " * 100)
    with pytest.raises(JudgeError, match="cannot open as SQLite"):
        JudgeCache(bad)


class _Raising:
    """A user's own model object (complete/acomplete) that raises a plain exception."""

    def complete(self, messages: list[dict[str, str]]) -> str:
        raise ConnectionResetError("socket closed")

    async def acomplete(self, messages: list[dict[str, str]]) -> str:
        raise KeyError("choices")


def test_users_model_raising_is_a_judge_error_not_a_crash() -> None:
    v = judge_trajectory(_Raising(), _traj())
    assert v.passed is None and v.score is None
    assert v.error == "judge model _Raising.complete raised ConnectionResetError: socket closed"
    assert v.audit["model"]["adapter"] == "_Raising"
    va = asyncio.run(ajudge_trajectory(_Raising(), _traj()))
    assert va.passed is None and va.error == "judge model _Raising.acomplete raised KeyError: 'choices'"
