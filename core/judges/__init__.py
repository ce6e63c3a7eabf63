"""Rubric judges on a pluggable model, and their validation against human labels.

Models (``trajcheck.judges.models``): the :class:`JudgeModel` protocol (sync ``complete`` and
async ``acomplete`` of chat messages) and adapters :class:`OpenAICompatibleModel`,
:class:`LangChainModel`, :class:`DeepEvalModel`, :class:`CallableModel`, and the test double
:class:`ScriptedModel`. Judges (``trajcheck.judges.rubrics``): :func:`judge_trajectory`,
:func:`judge_task_completion` (plus ``a``-prefixed async twins) returning :class:`Verdict`;
:func:`argument_judge` for the ``judge`` argument matcher. Plan judges
(``trajcheck.judges.planning``): :func:`judge_plan_quality`, :func:`judge_plan_adherence`,
:func:`subgoal_matches`. Every judge request fences the judged text under a fresh nonce and
reads the reply only as one whole JSON object carrying it (``trajcheck.judges.fencing``;
:func:`request_nonce` gives a request's nonce to a judge function of your own). Validation:
:func:`judge_agreement`. See docs/judges.md.

Only the standard library is imported here; httpx is imported when an HTTP model is used.
"""

from __future__ import annotations

from .anthropic_model import AnthropicModel
from .audit import RUBRIC_VERSION, CachedModel, JudgeCache, model_identity, prompt_hash
from .fencing import request_nonce
from .models import (
    CallableModel,
    DeepEvalModel,
    JudgeModel,
    LangChainModel,
    OpenAICompatibleModel,
    ScriptedModel,
    as_model,
    messages_to_prompt,
    parse_retry_after,
    seeded_model,
)
from .parsing import aask_json, ask_json, parse_json_reply
from .planning import (
    PLAN_QUALITY_CHECKS,
    STEP_STATUSES,
    ajudge_plan_adherence,
    ajudge_plan_quality,
    judge_plan_adherence,
    judge_plan_quality,
    subgoal_matches,
)
from .rubrics import (
    TRAJECTORY_CHECKS,
    Verdict,
    VerdictItem,
    ajudge_task_completion,
    ajudge_trajectory,
    argument_judge,
    judge_task_completion,
    judge_trajectory,
    render_trajectory,
    success_criteria_of,
)
from .validate_run import load_labels, validate_judge
from .validation import Agreement, AgreementReport, cohen_kappa, judge_agreement, kappa_interval

__all__ = [
    "AnthropicModel",
    "RUBRIC_VERSION",
    "CachedModel",
    "JudgeCache",
    "model_identity",
    "prompt_hash",
    "PLAN_QUALITY_CHECKS",
    "STEP_STATUSES",
    "TRAJECTORY_CHECKS",
    "Agreement",
    "AgreementReport",
    "CallableModel",
    "DeepEvalModel",
    "JudgeModel",
    "LangChainModel",
    "OpenAICompatibleModel",
    "ScriptedModel",
    "Verdict",
    "VerdictItem",
    "aask_json",
    "ajudge_plan_adherence",
    "ajudge_plan_quality",
    "ajudge_task_completion",
    "ajudge_trajectory",
    "argument_judge",
    "as_model",
    "ask_json",
    "cohen_kappa",
    "judge_agreement",
    "kappa_interval",
    "load_labels",
    "validate_judge",
    "judge_plan_adherence",
    "judge_plan_quality",
    "judge_task_completion",
    "judge_trajectory",
    "messages_to_prompt",
    "parse_json_reply",
    "parse_retry_after",
    "render_trajectory",
    "request_nonce",
    "seeded_model",
    "subgoal_matches",
    "success_criteria_of",
]
