"""Reader for Vertex AI agent-evaluation trajectories and Google ADK eval invocations
(research notes traces.md §6.3).

Accepted shapes:

- a list of ``{"tool_name", "tool_input"}`` (a Vertex ``predicted_trajectory``, or ADK's
  legacy ``expected_tool_use`` / ``actual_tool_use``);
- a Vertex row / agent output ``{"predicted_trajectory": [...], "response"?: str,
  "reference_trajectory"?: [...], "prompt"?: str}``: the predicted trajectory is read;
  the reference is kept as ``metadata["reference_trajectory"]`` (``[{name, args}]``). A row
  with only ``reference_trajectory`` reads that, with ``metadata["trajectory"] = "reference"``;
- an ADK ``Invocation`` (``user_content``, ``final_response``, ``intermediate_data`` with
  ``tool_uses`` / ``tool_responses``, or ``invocation_events``), an ``EvalCase``
  (``conversation``: a list of invocations, read in order into one trajectory). snake_case
  and camelCase keys are both accepted (ADK models use a camelCase alias generator).

Vertex trajectories have no ids, results or errors. ADK ``FunctionCall.id`` is often null;
results then pair by position. An event's ``usage_metadata`` is one model call's usage: it is
kept on the step the event makes (its calls, its text, or its reasoning when it only thought),
and an event with usage but no parts (the model returned nothing) is an empty ``assistant``
step carrying it, so a run's usage counts every call. ADK has no error flag; by ADK's conventions a response
with a non-null ``error`` key, ``{"status": "error"}`` or the ``ReflectAndRetryToolPlugin``'s failure record
is marked ``is_error=True``, ``{"status": "success"}`` False, any other None (``_failure``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    finalize,
    get,
    is_seq,
    parse_args,
    sum_usage,
    text_of,
    to_float,
    to_int,
    tool_name,
    usage_or_none,
)
from .wrappers import is_adk_session, is_gemini_contents, is_legacy_case, is_legacy_turns

FORMAT = "vertex"


def is_tool_list(obj: Any) -> bool:
    """True for a non-empty list of ``{tool_name, ...}`` dicts."""
    return is_seq(obj) and bool(obj) and all(
        isinstance(as_plain(x), Mapping) and "tool_name" in as_plain(x) for x in obj)


def is_event(obj: Any) -> bool:
    """True for one ADK ``Event`` dump (``author``, ``invocation_id``, ``id`` and ``content`` or
    ``actions``): a record of an event log, grouped into runs by ``adk_events``."""
    return (isinstance(obj, Mapping) and isinstance(obj.get("author"), str) and "id" in obj
            and ("invocation_id" in obj or "invocationId" in obj) and ("content" in obj or "actions" in obj))


def is_adk(obj: Any) -> bool:
    """True for an ADK Invocation, EvalCase or EvalSet dict (snake or camel case), or one
    logged ADK event (``is_event``)."""
    if not isinstance(obj, Mapping):
        return False
    return is_event(obj) or any(k in obj for k in ("user_content", "userContent", "intermediate_data", "intermediateData",
                                  "invocation_events", "invocationEvents")) or (
        is_seq(obj.get("conversation")) and ("eval_id" in obj or "evalId" in obj))


def _tool_steps(sl: StepList, lst: Any, problems: list[str], where: str) -> None:
    for i, t in enumerate(lst or ()):
        t = as_plain(t)
        w = f"{where}[{i}]"
        if not isinstance(t, Mapping):
            problems.append(f"{w}: not an object; skipped")
            continue
        name = tool_name(t.get("tool_name"), problems, w, "tool_name")
        args, raw, err = parse_args(t.get("tool_input"), problems, f"{w} ({name})")
        sl.call([ToolCall(name=name, args=args, raw_args=raw, args_parse_error=err)])


def _content_text(c: Any) -> str | None:
    c = as_plain(c)
    if isinstance(c, str):
        return c
    parts = get(c, "parts")
    return text_of(parts) if is_seq(parts) else None


def _fc(part: Mapping[str, Any], problems: list[str], w: str) -> ToolCall:
    name = tool_name(part.get("name"), problems, w)
    args, raw, err = parse_args(part.get("args"), problems, f"{w} ({name})")
    cid = part.get("id")
    return ToolCall(name=name, args=args, call_id=None if cid is None else str(cid), raw_args=raw,
                    args_parse_error=err)


RETRY_PLUGIN_MARK = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"


def _failure(resp: Any) -> tuple[bool | None, str | None]:
    """(is_error, error text) of an ADK function response by ADK's conventions: an ``error``
    key that is set; ``{"status": "error", "error_message"}`` (ADK's documented tool failure;
    another ``status`` is a success); the ``ReflectAndRetryToolPlugin``'s record of a raised
    tool (``response_type`` = ``RETRY_PLUGIN_MARK``, ``error_type``, ``error_details``). None
    when the response carries no mark (ADK has no error flag)."""
    if not isinstance(resp, Mapping):
        return None, None
    if resp.get("response_type") == RETRY_PLUGIN_MARK:
        kind, details = resp.get("error_type"), resp.get("error_details")
        return True, ": ".join(str(x) for x in (kind, details) if x) or RETRY_PLUGIN_MARK
    if resp.get("error") is not None:
        return True, str(resp["error"])
    status = resp.get("status")
    if isinstance(status, str) and status.lower() == "error":
        msg = resp.get("error_message")
        return True, str(msg) if msg is not None else "status: error"
    if isinstance(status, str) and status.lower() == "success":
        return False, None
    return None, None


def _fr(part: Mapping[str, Any]) -> ToolResult:
    resp = as_plain(part.get("response"))
    is_err, error = _failure(resp)
    cid = part.get("id")
    return ToolResult(call_id=None if cid is None else str(cid), name=part.get("name"), output=resp,
                      is_error=is_err, error=error)


def _gemini_usage(um: Any) -> Usage | None:
    """Gemini ``usageMetadata``: thinking tokens are reported apart from the candidates' tokens;
    the neutral ``output_tokens`` includes them (``Usage`` docstring)."""
    um = as_plain(um)
    if not isinstance(um, Mapping):
        return None
    cand = to_int(get(um, "candidates_token_count", "candidatesTokenCount"))
    thoughts = to_int(get(um, "thoughts_token_count", "thoughtsTokenCount"))
    return usage_or_none(Usage(
        input_tokens=to_int(get(um, "prompt_token_count", "promptTokenCount")),
        output_tokens=None if cand is None and thoughts is None else (cand or 0) + (thoughts or 0),
        total_tokens=to_int(get(um, "total_token_count", "totalTokenCount")),
        cache_read_tokens=to_int(get(um, "cached_content_token_count", "cachedContentTokenCount")),
        reasoning_tokens=thoughts))


def _events(sl: StepList, events: Any, problems: list[str], w: str, *, gemini: bool = False) -> None:
    """ADK events (``{author, content: {role, parts}, usage_metadata?}``) or Gemini ``contents``
    (``{role, parts}``; ``gemini=True``) into steps: the function calls of one event are one
    step (parallel calls), each function response a result step, text a user or assistant
    step (``thought`` parts a reasoning step)."""
    for j, ev in enumerate(events):
        ev = as_plain(ev)
        loc = f"{w}[{j}]"
        if not isinstance(ev, Mapping):
            problems.append(f"{loc}: not an object; skipped")
            continue
        if not gemini:
            author = ev.get("author")
            parts = get(get(ev, "content", default={}), "parts", default=[])
        else:
            author = "user" if ev.get("role") in (None, "user") else ev.get("role")
            parts = ev.get("parts")
        usage = _gemini_usage(get(ev, "usage_metadata", "usageMetadata"))
        calls: list[ToolCall] = []
        texts: list[str] = []
        thoughts: list[str] = []
        agent = author if isinstance(author, str) and author not in ("user", "model") else None
        n_results = 0
        for k, p in enumerate(parts if is_seq(parts) else ()):
            p = as_plain(p)
            if not isinstance(p, Mapping):
                continue
            fc = get(p, "function_call", "functionCall")
            fr = get(p, "function_response", "functionResponse")
            if isinstance(fc, Mapping):
                calls.append(_fc(fc, problems, f"{loc} part {k}"))
            elif isinstance(fr, Mapping):
                sl.result(_fr(fr), agent_name=agent)
                n_results += 1
            elif isinstance(p.get("text"), str):
                (thoughts if p.get("thought") is True else texts).append(p["text"])
        text = "\n".join(texts) if texts else None
        carried = bool(calls) or text is not None
        if thoughts:  # a model call that only thought: its usage goes on the reasoning step
            sl.add("reasoning", content="\n".join(thoughts), agent_name=agent, usage=None if carried else usage)
        if calls:
            sl.call(calls, content=text, usage=usage, agent_name=agent)
        elif text is not None:
            sl.add("user" if author == "user" else "assistant", content=text, usage=usage, agent_name=agent)
        elif usage is not None and not thoughts and not n_results:
            # a model call that returned no parts still spent its tokens: an empty model turn
            sl.add("assistant", content=None, usage=usage, agent_name=agent)


def _invocation(sl: StepList, inv: Mapping[str, Any], problems: list[str], w: str) -> None:
    uc = get(inv, "user_content", "userContent")
    if uc is not None:
        sl.add("user", content=_content_text(uc))
    inter = as_plain(get(inv, "intermediate_data", "intermediateData"))
    events = get(inv, "invocation_events", "invocationEvents")
    if events is None and isinstance(inter, Mapping):
        events = get(inter, "invocation_events", "invocationEvents")
    if is_seq(events):
        _events(sl, events, problems, f"{w} invocation_events")
    elif isinstance(inter, Mapping):
        for j, fc in enumerate(get(inter, "tool_uses", "toolUses", default=[]) or []):
            fc = as_plain(fc)
            if isinstance(fc, Mapping):
                sl.call([_fc(fc, problems, f"{w} tool_uses[{j}]")])
        for fr in get(inter, "tool_responses", "toolResponses", default=[]) or []:
            fr = as_plain(fr)
            if isinstance(fr, Mapping):
                sl.result(_fr(fr))
    fr_content = get(inv, "final_response", "finalResponse")
    if fr_content is not None:
        sl.add("final_response", content=_content_text(fr_content))


def _legacy(sl: StepList, obj: Any, problems: list[str], meta: dict[str, Any]) -> None:
    """ADK's legacy test file (one conversation): per turn the user's ``query``, each
    ``expected_tool_use`` call (``{tool_name, tool_input}``) as its own step, and the
    ``reference`` answer. These are the expected turns, so ``metadata["trajectory"]`` is
    ``"reference"``."""
    turns = obj
    if isinstance(obj, Mapping):
        turns = obj["data"]
        meta["case_id"] = obj["name"]
    meta["trajectory"] = "reference"
    for i, t in enumerate(turns):
        t = as_plain(t)
        if isinstance(t.get("query"), str):
            sl.add("user", content=t["query"])
        _tool_steps(sl, t.get("expected_tool_use"), problems, f"[{i}].expected_tool_use")
        if isinstance(t.get("reference"), str) and t["reference"]:
            sl.add("assistant", content=t["reference"])


def read(obj: Any) -> Trajectory:
    """Read a Vertex trajectory or ADK invocation/eval case into a ``Trajectory``.

    Raises ``TraceFormatError`` for anything else. ``total_latency_ms`` comes from ADK
    ``duration`` (seconds) summed over invocations when present.
    """
    obj = as_plain(obj) if not is_seq(obj) else obj
    problems: list[str] = []
    sl = StepList()
    meta: dict[str, Any] = {}
    latency = None
    session_id: str | None = None
    if is_legacy_turns(obj) or is_legacy_case(obj):
        _legacy(sl, obj, problems, meta)
    elif is_seq(obj):
        _tool_steps(sl, obj, problems, "trajectory")
    elif is_adk_session(obj):
        _events(sl, obj["events"], problems, "events")
        stamps = [t for t in (to_float(as_plain(e).get("timestamp")) for e in obj["events"]
                              if isinstance(as_plain(e), Mapping)) if t is not None]
        if len(stamps) > 1:
            latency = (max(stamps) - min(stamps)) * 1000.0
        for k in ("app_name", "appName", "user_id", "userId"):
            if isinstance(obj.get(k), str):
                meta[k] = obj[k]
        sid = obj.get("id")
        session_id = None if sid is None else str(sid)
    elif is_gemini_contents(obj):
        si = as_plain(get(obj, "systemInstruction", "system_instruction"))
        if si is not None:
            txt = _content_text(si)
            if txt:
                sl.add("system", content=txt)
        _events(sl, obj["contents"], problems, "contents", gemini=True)
    elif isinstance(obj, Mapping) and ("predicted_trajectory" in obj or "reference_trajectory" in obj):
        prompt = obj.get("prompt")
        if isinstance(prompt, str):
            sl.add("user", content=prompt)
        ref = obj.get("reference_trajectory")
        if "predicted_trajectory" in obj:
            _tool_steps(sl, obj.get("predicted_trajectory"), problems, "predicted_trajectory")
        else:
            _tool_steps(sl, ref, problems, "reference_trajectory")
            meta["trajectory"] = "reference"
        if is_seq(ref):
            meta["reference_trajectory"] = [
                {"name": as_plain(r).get("tool_name"), "args": as_plain(r).get("tool_input")}
                for r in ref if isinstance(as_plain(r), Mapping)]
        if isinstance(obj.get("response"), str):
            sl.add("final_response", content=obj["response"])
    elif is_event(obj):  # one logged event read alone (a log's events are grouped by adk_events)
        _events(sl, [obj], problems, "event")
    elif is_adk(obj):
        invs = obj.get("conversation") if is_seq(obj.get("conversation")) else [obj]
        for i, inv in enumerate(invs):
            inv = as_plain(inv)
            if not isinstance(inv, Mapping):
                problems.append(f"invocation {i}: not an object; skipped")
                continue
            _invocation(sl, inv, problems, f"invocation {i}")
            d = to_float(inv.get("duration"))
            if d is not None:
                latency = (latency or 0.0) + d * 1000.0
        eid = get(obj, "eval_id", "evalId", "invocation_id", "invocationId")
        if eid is not None:
            meta["case_id"] = str(eid)
    else:
        raise TraceFormatError(f"{FORMAT}: expected a list of {{tool_name, tool_input}}, a row with "
                               f"'predicted_trajectory', or an ADK invocation/eval case")
    final_steps, final = finalize(sl.steps)
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      total_latency_ms=latency, source_format=FORMAT, session_id=session_id, metadata=meta)
