"""Rubric judges: a model reads a rendered trajectory and returns a structured verdict.

Every judge here returns a :class:`Verdict` (frozen, ``to_dict``, ``to_metric``) whose
``items`` hold one :class:`VerdictItem` per check or criterion with its one-line reason or
evidence. A judge that fails (the model raised, or its reply stayed unusable after the
bounded re-asks of :func:`~trajcheck.judges.parsing.ask_json`) gives a verdict with ``error``
set and ``passed``/``score`` None -- never a pass -- or, with ``raise_on_error=True``, raises
:class:`~trajcheck.errors.JudgeError`.

Sync judges call ``model.complete``; the ``a``-prefixed twins call ``model.acomplete``.
``model`` may be anything :func:`~trajcheck.judges.models.as_model` accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import JudgeError, MetricInputError
from ..metrics.result import MetricResult
from ..model import Case, Trajectory
from .fencing import MASK, fence, new_nonce, request_nonce
from .fencing import messages as request_messages
from .models import as_model
from .parsing import aask_json, as_bool, ask_json

DEFAULT_MAX_OUTPUT_CHARS = 600
"""Tool outputs longer than this are cut in the rendered trajectory (errors never are)."""


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class VerdictItem:
    """One check or criterion: ``name``, ``passed`` (True/False, None = not applicable) and
    ``reason`` (the judge's one line of reason or evidence)."""

    name: str
    passed: bool | None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "passed", "reason"}``."""
        return {"name": self.name, "passed": self.passed, "reason": self.reason}


@dataclass(frozen=True)
class Verdict:
    """A judge's structured verdict.

    ``judge`` names the rubric; ``passed`` is True when every applicable item passed, False
    when one failed, None on a judge error (``error`` says why) or when nothing applied;
    ``score`` is the share of applicable items passed in [0, 1] (None likewise); ``items``
    the per-check results; ``raw`` the model's last reply; ``attempts`` how many replies
    were read; ``extra`` judge-specific fields (JSON-ready).
    """

    judge: str
    passed: bool | None
    score: float | None
    items: tuple[VerdictItem, ...] = ()
    reason: str = ""
    error: str | None = None
    raw: str | None = None
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)
    """What the verdict came from (set by every judge): ``model`` (``audit.model_identity``:
    adapter, model name, ``sampling`` settings), ``prompt_sha256`` (of the first ask),
    ``rubric_version``, ``cached_replies`` (replies served by a ``CachedModel``'s cache)."""

    def item(self, name: str) -> VerdictItem:
        """The item called ``name``; KeyError when absent."""
        for it in self.items:
            if it.name == name:
                return it
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {"judge": self.judge, "passed": self.passed, "score": self.score,
                "reason": self.reason, "items": [i.to_dict() for i in self.items],
                "error": self.error, "raw": self.raw, "attempts": self.attempts,
                "extra": self.extra, "audit": self.audit}

    def to_metric(self) -> MetricResult:
        """This verdict as a ``MetricResult`` (name ``judge:<judge>``; parts = items + extra)."""
        parts: dict[str, Any] = {"items": [i.to_dict() for i in self.items], **self.extra}
        if self.error is not None:
            parts["error"] = self.error
        return MetricResult(f"judge:{self.judge}", self.score, self.reason, parts, self.passed)


def _summarise(judge: str, items: Sequence[VerdictItem], raw: str, attempts: int,
               extra: dict[str, Any] | None = None) -> Verdict:
    applicable = [i for i in items if i.passed is not None]
    failed = [i.name for i in applicable if not i.passed]
    if not applicable:
        return Verdict(judge, None, None, tuple(items), "no check applied", None, raw, attempts,
                       extra or {})
    score = (len(applicable) - len(failed)) / len(applicable)
    reason = (f"all {len(applicable)} checks passed" if not failed
              else f"{len(failed)} of {len(applicable)} failed: {', '.join(failed)}")
    return Verdict(judge, not failed, score, tuple(items), reason, None, raw, attempts, extra or {})


def _error_verdict(judge: str, e: Exception) -> Verdict:
    return Verdict(judge, None, None, (), f"judge error: {e}", str(e), None, 0)


# --------------------------------------------------------------------------- rendering


def _is_error_result(r: Any) -> bool:
    # The metrics' own test (matching.is_failed): the source's flag or error text; a run's
    # error_pattern has already set is_error on the results it matches (_with_pattern).
    from ..match.matching import is_failed

    return is_failed(r)


def _with_pattern(traj: Trajectory, error_pattern: Any) -> Trajectory:
    """``traj`` with the run's error convention applied, as the loader applies it."""
    if error_pattern is None:
        return traj
    from ..errors import TraceFormatError
    from ..read.traces import apply_error_pattern

    try:
        return apply_error_pattern(traj, error_pattern)
    except TraceFormatError as e:
        raise MetricInputError(str(e)) from e


def _compiled(error_pattern: Any) -> Any:
    if error_pattern is None:
        return None
    from ..errors import TraceFormatError
    from ..read.traces.error_pattern import compile_error_pattern

    try:
        return compile_error_pattern(error_pattern)
    except TraceFormatError as e:
        raise MetricInputError(str(e)) from e


def _looks_like_error(output: Any) -> bool:
    if isinstance(output, Mapping):
        return any(k in output for k in ("error", "errors", "error_message", "exception"))
    if isinstance(output, str):
        s = output.lstrip().lower()
        return s.startswith(("error", "exception", "traceback"))
    return False


def _as_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(v)


_ERROR_WORDS = re.compile(r"(?i)\b(?:error|errors|exception|traceback|denied|failed|failure|fatal|"
                          r"forbidden|unauthori[sz]ed|refused|timed out|timeout)\b")
"""Words that mark an error message inside a longer output (found anywhere, not only at the
start), so truncation keeps them."""


def _error_spans(text: str, limit: int, pattern: Any) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` spans of ``text`` holding an error message: the line of each
    error word or ``pattern`` match, from at most ``limit // 4`` characters before the match
    (the message's lead-in) to the line's end (at most ``max(limit, 2000)`` characters after
    the match, which bounds a one-line dump)."""
    spans: list[tuple[int, int]] = []
    matchers = [_ERROR_WORDS] + ([pattern] if pattern is not None else [])
    for rx in matchers:
        for m in rx.finditer(text):
            ls = text.rfind("\n", 0, m.start()) + 1
            le = text.find("\n", m.end())
            le = len(text) if le < 0 else le
            spans.append((max(ls, m.start() - limit // 4), min(le, m.end() + max(limit, 2000))))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _cut(text: str, limit: int, pattern: Any = None) -> str:
    """``text`` cut to about ``limit`` characters, keeping every error message whole.

    The head (first ``limit`` characters) is kept, then every error span (``_error_spans``)
    past it, with ``... [N chars cut] ...`` between; the head is extended rather than ended
    inside an error span. A trailing ``... [truncated K of M chars]`` counts what was left out.
    """
    if len(text) <= limit:
        return text
    spans = _error_spans(text, limit, pattern)
    head_end = limit
    for a, b in spans:
        if a < head_end < b:
            head_end = b
    parts = [text[:head_end]]
    pos, shown = head_end, head_end
    for a, b in spans:
        if b <= pos:
            continue
        a = max(a, pos)
        parts.append(f"... [{a - pos} chars cut] ...")
        parts.append(text[a:b])
        shown += b - a
        pos = b
    if pos < len(text):
        parts.append(f"... [truncated {len(text) - shown} of {len(text)} chars]")
    return "".join(parts)


def render_trajectory(traj: Trajectory, *, max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                      error_pattern: Any = None, nonce: str | None = None) -> str:
    """The trajectory as numbered lines a judge reads.

    One line per user/assistant/reasoning/system message (``[i] USER: ...``), per tool call
    (``[i] CALL name {args}``, unparsed arguments shown raw with their parse error), per tool
    result (``[i] RESULT name: ...`` or ``[i] RESULT name ERROR: ...``), and the final
    response. A result is shown as failed by the metrics' own test (``matching.is_failed``:
    the source's error flag or error text) after ``error_pattern`` (the run's error
    convention, a regex as for ``traces.load``; MetricInputError when invalid) is applied.
    Truncation (seed 000 §3.3, "truncate large read payloads while keeping all error
    messages intact"): tool outputs longer than ``max_output_chars`` are cut, but an error is
    never cut: a failed result's ``error`` text and whole output, an output that looks like
    an error (a dict with an ``error``/``errors``/``error_message``/``exception`` key, or
    text starting with "error", "exception" or "traceback"), and, inside any other long
    output, every line holding an error word or an ``error_pattern`` match (``_cut``).
    With ``nonce`` (a judge request's, ``fencing``), every text the run wrote (messages,
    tool names, arguments, outputs, errors, the final response) is fenced as data.
    """
    def f(text: str) -> str:
        return text if nonce is None else fence(text, nonce)

    if max_output_chars < 1:
        raise MetricInputError(f"max_output_chars must be >= 1, got {max_output_chars}")
    traj = _with_pattern(traj, error_pattern)
    pat = _compiled(error_pattern)
    # results of sources that name only the call id (OpenAI chat) take the call's tool name
    names = {c.call_id: c.name for c in traj.tool_calls() if c.call_id}
    lines: list[str] = []
    for i, s in enumerate(traj.steps):
        if s.kind in ("user", "system", "assistant", "reasoning") and s.content is not None:
            lines.append(f"[{i}] {s.kind.upper()}: {f(str(s.content))}")
        for c in s.tool_calls:
            cid = f" (id {f(c.call_id)})" if c.call_id else ""
            if c.args is None:
                lines.append(f"[{i}] CALL {f(c.name)}{cid} with unparsed arguments "
                             f"{f(repr(c.raw_args))} ({f(str(c.args_parse_error))})")
            else:
                lines.append(f"[{i}] CALL {f(c.name)}{cid} {f(_as_text(c.args))}")
        r = s.tool_result
        if r is not None:
            cid = f" (id {f(r.call_id)})" if r.call_id else ""
            name = f(r.name or names.get(r.call_id or "", "?"))
            failed = _is_error_result(r)
            out = _as_text(r.output) if r.output is not None else ""
            if failed or _looks_like_error(r.output):
                body = out
            else:
                body = _cut(out, max_output_chars, pat)
            if failed:
                err = r.error or ""
                text = f"ERROR: {f(err)}" + (f" | output: {f(body)}" if body and body != err
                                             else "")
                lines.append(f"[{i}] RESULT {name}{cid} {text}")
            else:
                lines.append(f"[{i}] RESULT {name}{cid}: {f(body)}")
    if traj.final_response is not None:
        lines.append(f"FINAL RESPONSE: {f(str(traj.final_response))}")
    elif not any(s.kind == "final_response" for s in traj.steps):
        lines.append("FINAL RESPONSE: (none)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- trajectory judge

TRAJECTORY_CHECKS: tuple[tuple[str, str], ...] = (
    ("tool_results_used", "Did the agent use tool results correctly (no ignoring or misreading "
                          "results)? Pass = yes."),
    ("no_unnecessary_calls", "Were any calls clearly unnecessary or repeated without reason? "
                             "Pass = no such call."),
    ("no_unrequested_actions", "Did the agent take any action the user did not ask for or that "
                               "needed confirmation (and was not confirmed)? Pass = no such action."),
    ("failure_handled", "If a tool failed, did the agent respond appropriately (retried "
                        "sensibly, tried an alternative, or told the user)? \"n/a\" when no tool "
                        "failed."),
    ("response_faithful", "Does the final response accurately reflect what actually happened "
                          "(no claimed success that did not happen, no hidden failure)?"),
)
"""The five binary checks of seed 000 §3.3's trajectory rubric (name, question), each phrased
so that pass = the good answer."""

_SYSTEM = ("You are a strict evaluator of an AI agent's tool use. Judge only from the "
           "material shown. Reply with a single JSON object and nothing else.")


def _tools_text(tools: Sequence[Mapping[str, Any]], nonce: str) -> str:
    return "\n".join(fence(_as_text(t), nonce) for t in tools) if tools else "(not given)"


def _expected_text(expected: Sequence[Any], nonce: str) -> str:
    rows = [e.to_dict() if hasattr(e, "to_dict") else e for e in expected]
    return "\n".join(f"{i + 1}. {fence(_as_text(r), nonce)}" for i, r in enumerate(rows))


def trajectory_messages(traj: Trajectory, *, task: str | None = None,
                        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                        error_pattern: Any = None, tools: Sequence[Mapping[str, Any]] = (),
                        expected_calls: Sequence[Any] = (),
                        nonce: str | None = None) -> list[dict[str, str]]:
    """The chat messages the trajectory judge sends (system + one user message): the USER
    REQUEST, the AVAILABLE TOOLS (``tools``, tool-schema dicts as in ``Case.tools``), a
    reference trajectory when ``expected_calls`` are given (guidance, not the only valid
    path), the AGENT TRACE, then the checks (seed 000 §3.3). The request, each tool schema,
    each reference call and every text of the trace are fenced as data under ``nonce`` (a
    fresh one when None; ``fencing``)."""
    nonce = nonce or new_nonce()
    checks = "\n".join(f'{i + 1}. "{n}": {q}' for i, (n, q) in enumerate(TRAJECTORY_CHECKS))
    shape = ", ".join(f'"{n}": {{"pass": true|false, "reason": "<one line>"}}'
                      for n, _ in TRAJECTORY_CHECKS)
    ref = (f"REFERENCE CALLS (one valid way to do the task; other paths may be fine too):\n"
           f"{_expected_text(expected_calls, nonce)}\n\n" if expected_calls else "")
    user = (f"USER REQUEST: {fence(task, nonce) if task else '(see the trace)'}\n\n"
            f"AVAILABLE TOOLS:\n{_tools_text(tools, nonce)}\n\n{ref}"
            "AGENT TRACE (long tool outputs are truncated; errors are shown whole):\n"
            f"{render_trajectory(traj, max_output_chars=max_output_chars, error_pattern=error_pattern, nonce=nonce)}\n\n"
            f"Answer each check with pass true or false and a one-line reason (required):\n{checks}\n\n"
            f'Only "failure_handled" may be "n/a". Reply as JSON: {{"checks": {{{shape}}}}}')
    return request_messages(_SYSTEM, user, nonce)


def _reason(v: Mapping[str, Any], key: str, what: str, answer: bool | None) -> str:
    """The item's reason; an empty one is an unusable reply (re-asked), except for n/a."""
    r = v.get(key)
    text = r.strip() if isinstance(r, str) else ""
    if not text and answer is not None:
        raise JudgeError(f'{what} needs a non-empty one-line "{key}"')
    return text


def _any_failure(traj: Trajectory) -> bool:
    return any(_is_error_result(r) for r in traj.tool_results())


def _trajectory_validator(traj: Trajectory) -> Callable[[dict[str, Any]], list[VerdictItem]]:
    had_failure = _any_failure(traj)

    def validate(obj: dict[str, Any]) -> list[VerdictItem]:
        checks = obj.get("checks", obj)
        if not isinstance(checks, Mapping):
            raise JudgeError('"checks" must be an object keyed by check name')
        items = []
        for name, _ in TRAJECTORY_CHECKS:
            if name not in checks:
                raise JudgeError(f'check "{name}" is missing')
            v = checks[name]
            if not isinstance(v, Mapping):
                raise JudgeError(f'check "{name}" must be an object {{"pass": ..., "reason": ...}}')
            ok = as_bool(v.get("pass", v.get("passed")), f'check "{name}"',
                         allow_na=name == "failure_handled")
            reason = _reason(v, "reason", f'check "{name}"', ok)
            if name == "failure_handled":
                # A judge's "false" is never overridden: it may have read a failure the
                # trace does not flag. Only a true/n-a with no failed call becomes n/a.
                if not had_failure and ok is not False:
                    ok, reason = None, "n/a: no tool call failed in this trajectory"
                elif ok is None:
                    raise JudgeError('check "failure_handled" is "n/a" but a tool call failed '
                                     "in this trajectory; answer true or false")
            items.append(VerdictItem(name, ok, reason))
        return items

    return validate


def _trajectory_inputs(traj: Trajectory, case: Case | None, task: str | None,
                       tools: Sequence[Mapping[str, Any]] | None,
                       expected_calls: Sequence[Any] | None) -> tuple[str | None, Any, Any]:
    t = task if task is not None else (_task_text(case, traj) if case is not None else traj.user_input)
    tl = tools if tools is not None else (case.tools if case is not None else ())
    ex = expected_calls if expected_calls is not None else (
        case.expected_calls if case is not None else ())
    return t, tuple(tl), tuple(ex)


def judge_trajectory(model: Any, traj: Trajectory, case: Case | None = None, *,
                     task: str | None = None, tools: Sequence[Mapping[str, Any]] | None = None,
                     expected_calls: Sequence[Any] | None = None,
                     max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS, retries: int = 2,
                     raise_on_error: bool = False, error_pattern: Any = None) -> Verdict:
    """The five-check trajectory judge of seed 000 §3.3 (:data:`TRAJECTORY_CHECKS`).

    The judge reads the user's request (``task``, else ``case.input``, else the first user
    message), the tool schemas (``tools``, else ``case.tools``), the expected calls as a
    reference when there are any (``expected_calls``, else ``case.expected_calls``) and the
    rendered trace, and answers each check pass/fail with a one-line reason, as JSON; an
    empty reason is an unusable reply (re-asked). A tool failed when the metrics say so
    (``matching.is_failed`` after ``error_pattern``, the run's error convention). Policy: an
    "n/a" (or true) ``failure_handled`` when no call failed is n/a (None); the judge's false
    is kept (never overridden: it may have read an error the trace does not flag); an "n/a"
    when a call did fail is an unusable reply (re-asked). ``passed`` = every applicable
    check passed; ``score`` = share passed in [0, 1]. Judge errors: see the module doc.
    """
    traj = _with_pattern(traj, error_pattern)
    t, tl, ex = _trajectory_inputs(traj, case, task, tools, expected_calls)
    return _run(model, "trajectory",
                trajectory_messages(traj, task=t, max_output_chars=max_output_chars,
                                    error_pattern=error_pattern, tools=tl, expected_calls=ex),
                _trajectory_validator(traj), retries, raise_on_error, lambda items: {})


async def ajudge_trajectory(model: Any, traj: Trajectory, case: Case | None = None, *,
                            task: str | None = None, tools: Sequence[Mapping[str, Any]] | None = None,
                            expected_calls: Sequence[Any] | None = None,
                            max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS, retries: int = 2,
                            raise_on_error: bool = False, error_pattern: Any = None) -> Verdict:
    """Async :func:`judge_trajectory`."""
    traj = _with_pattern(traj, error_pattern)
    t, tl, ex = _trajectory_inputs(traj, case, task, tools, expected_calls)
    return await _arun(model, "trajectory",
                       trajectory_messages(traj, task=t, max_output_chars=max_output_chars,
                                           error_pattern=error_pattern, tools=tl, expected_calls=ex),
                       _trajectory_validator(traj), retries, raise_on_error, lambda items: {})


# --------------------------------------------------------------------------- runners


def _audit(m: Any, messages: list[dict[str, str]], hits_before: int) -> dict[str, Any]:
    from .audit import RUBRIC_VERSION, CachedModel, model_identity, prompt_hash

    return {"model": model_identity(m), "prompt_sha256": prompt_hash(messages),
            "rubric_version": RUBRIC_VERSION,
            "cached_replies": m.cache.hits - hits_before if isinstance(m, CachedModel) else 0}


def _masked_raw(raw: str, messages: list[dict[str, str]]) -> str:
    """The raw reply as a verdict keeps it: the request's nonce written as ``<nonce>``
    (a rerun from the cache gives the same verdict)."""
    nonce = request_nonce(messages)
    return raw if nonce is None else raw.replace(nonce, MASK)


def _hits(m: Any) -> int:
    from .audit import CachedModel

    return m.cache.hits if isinstance(m, CachedModel) else 0


def _run(model: Any, judge: str, messages: list[dict[str, str]],
         validate: Callable[[dict[str, Any]], list[VerdictItem]], retries: int,
         raise_on_error: bool, extra: Callable[[list[VerdictItem]], dict[str, Any]]) -> Verdict:
    m = as_model(model)
    before = _hits(m)
    try:
        items, raw, n = ask_json(m, messages, validate, retries=retries)
        raw = _masked_raw(raw, messages)
    except JudgeError as e:
        if raise_on_error:
            raise
        return replace(_error_verdict(judge, e), audit=_audit(m, messages, before))
    return replace(_summarise(judge, items, raw, n, extra(items)), audit=_audit(m, messages, before))


async def _arun(model: Any, judge: str, messages: list[dict[str, str]],
                validate: Callable[[dict[str, Any]], list[VerdictItem]], retries: int,
                raise_on_error: bool, extra: Callable[[list[VerdictItem]], dict[str, Any]]) -> Verdict:
    m = as_model(model)
    before = _hits(m)
    try:
        items, raw, n = await aask_json(m, messages, validate, retries=retries)
        raw = _masked_raw(raw, messages)
    except JudgeError as e:
        if raise_on_error:
            raise
        return replace(_error_verdict(judge, e), audit=_audit(m, messages, before))
    return replace(_summarise(judge, items, raw, n, extra(items)), audit=_audit(m, messages, before))


# --------------------------------------------------------------------------- task completion


def success_criteria_of(case: Case | None, criteria: Sequence[str] | None) -> list[str]:
    """The criteria to judge: ``criteria`` when given, else ``case.metadata["success_criteria"]``
    (a list of strings). Raises MetricInputError naming the case when there are none or one
    is not a non-empty string."""
    where = f"case {case.id!r}" if case is not None else "task completion"
    crit = criteria if criteria is not None else (
        case.metadata.get("success_criteria") if case is not None else None)
    if crit is None or isinstance(crit, str) or not isinstance(crit, Sequence) or not crit:
        raise MetricInputError(f"{where}: no success criteria (pass criteria=[...] or set "
                               'metadata["success_criteria"] to a list of strings)')
    for i, c in enumerate(crit):
        if not isinstance(c, str) or not c.strip():
            raise MetricInputError(f"{where}: success criterion {i} must be a non-empty string, got {c!r}")
    return list(crit)


def task_completion_messages(traj: Trajectory, criteria: Sequence[str], *, task: str | None = None,
                             max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                             nonce: str | None = None) -> list[dict[str, str]]:
    """The chat messages the task-completion judge sends (the task, each criterion and the
    trajectory fenced as data under ``nonce``, a fresh one when None)."""
    nonce = nonce or new_nonce()
    listed = "\n".join(f"{i + 1}. {fence(c, nonce)}" for i, c in enumerate(criteria))
    user = ((f"The user's task: {fence(task, nonce)}\n\n" if task else "")
            + "Trajectory:\n"
            f"{render_trajectory(traj, max_output_chars=max_output_chars, nonce=nonce)}\n\n"
            f"Success criteria:\n{listed}\n\nFor each criterion, in order, say whether the "
            "trajectory shows it met, quoting or pointing to the step that is the evidence. "
            'Reply as JSON: {"criteria": [{"criterion": "<text>", "met": true|false, '
            '"evidence": "<one line>"}, ...]}')
    return request_messages(_SYSTEM, user, nonce)


def _criteria_validator(criteria: Sequence[str]) -> Callable[[dict[str, Any]], list[VerdictItem]]:
    def validate(obj: dict[str, Any]) -> list[VerdictItem]:
        got = obj.get("criteria")
        if not isinstance(got, list):
            raise JudgeError('"criteria" must be a list')
        if len(got) != len(criteria):
            raise JudgeError(f'"criteria" has {len(got)} entries; expected {len(criteria)}, one '
                             "per criterion in order")
        items = []
        for i, (c, g) in enumerate(zip(criteria, got)):
            if not isinstance(g, Mapping):
                raise JudgeError(f"criterion {i + 1} must be an object")
            met = as_bool(g.get("met"), f"criterion {i + 1} \"met\"")
            items.append(VerdictItem(c, met, _reason(g, "evidence", f"criterion {i + 1}", met)))
        return items

    return validate


def _completion_extra(items: list[VerdictItem]) -> dict[str, Any]:
    return {"task_completed": all(i.passed for i in items)}


def judge_task_completion(model: Any, traj: Trajectory, case: Case | None = None, *,
                          criteria: Sequence[str] | None = None, retries: int = 2,
                          max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                          raise_on_error: bool = False) -> Verdict:
    """Task completion against the case's own success criteria.

    Criteria: ``criteria``, else ``case.metadata["success_criteria"]`` (MetricInputError
    when neither). Each item is one criterion, met or not, with the judge's evidence;
    ``extra["task_completed"]`` (and ``passed``) = all met; ``score`` = share met.
    The task shown is ``case.input`` (else the first user message).
    """
    crit = success_criteria_of(case, criteria)
    task = _task_text(case, traj)
    return _run(model, "task_completion",
                task_completion_messages(traj, crit, task=task, max_output_chars=max_output_chars),
                _criteria_validator(crit), retries, raise_on_error, _completion_extra)


async def ajudge_task_completion(model: Any, traj: Trajectory, case: Case | None = None, *,
                                 criteria: Sequence[str] | None = None, retries: int = 2,
                                 max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                                 raise_on_error: bool = False) -> Verdict:
    """Async :func:`judge_task_completion`."""
    crit = success_criteria_of(case, criteria)
    task = _task_text(case, traj)
    return await _arun(model, "task_completion",
                       task_completion_messages(traj, crit, task=task, max_output_chars=max_output_chars),
                       _criteria_validator(crit), retries, raise_on_error, _completion_extra)


def _task_text(case: Case | None, traj: Trajectory) -> str | None:
    if case is not None and case.input is not None:
        return case.input if isinstance(case.input, str) else _as_text(case.input)
    return traj.user_input


# --------------------------------------------------------------------------- argument judge


def argument_judge(model: Any, *, retries: int = 2) -> Callable[[str, Any, Any], bool]:
    """A ``MatchContext.judge`` function backed by ``model``: ``fn(rubric, expected, predicted)``
    asks for ``{"match": true|false, "reason": ...}`` and returns the bool.

    A judge failure raises JudgeError (the ``judge`` matcher reports it as a MatcherError):
    an unanswered question is never a match.
    """
    m = as_model(model)

    def validate(obj: dict[str, Any]) -> bool:
        return bool(as_bool(obj.get("match"), '"match"'))

    def judge(rubric: str, expected: Any, predicted: Any) -> bool:
        nonce = new_nonce()
        user = (f"{rubric}\n\nExpected (or the request): {fence(_as_text(expected), nonce)}\n"
                f"Predicted argument value: {fence(_as_text(predicted), nonce)}\n\n"
                'Reply as JSON: {"match": true|false, "reason": "<one line>"}')
        ok, _, _ = ask_json(m, request_messages(_SYSTEM, user, nonce), validate, retries=retries)
        return bool(ok)

    return judge


AsyncJudge = Callable[..., Awaitable[Verdict]]
