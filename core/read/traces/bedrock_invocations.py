"""Reader for Amazon Bedrock model-invocation logs (``schemaType: "ModelInvocationLog"``): the
records Bedrock writes to CloudWatch Logs or S3, one per model call, as a list or JSON Lines.

A record holds the request body as sent (``input.inputBodyJson``) and the response body
(``output.outputBodyJson``). Two bodies are read: the Converse API's (``operation`` Converse
or ConverseStream: ``messages`` of ``toolUse`` / ``toolResult`` blocks, the answer in
``output.message``, ``usage`` with ``inputTokens`` / ``outputTokens``) and Anthropic's
Messages body through InvokeModel (``messages`` of ``tool_use`` / ``tool_result`` blocks, the
answer is the body itself); both go through the one message normaliser (``messages``).

Grouping into runs (a record is one model call, never a run): records sharing a
``requestMetadata`` session or trace key (``session_id``, ``sessionId``, ``trace_id``,
``traceId``, ``conversation_id``, ``conversationId``) are one run; otherwise a record whose
``messages`` begin with an earlier call's ``messages`` and answer continues that call's run
(the longest such; a run is continued once per call, so identical conversations stay
apart), else it starts a run. ``inspect`` names the grouping. ``requestMetadata.case_id``
(the Converse request's own ``requestMetadata``, which Bedrock copies into the log) ties
the run to its case.

Per call: the answer's text and calls, the call's usage (the response body's, else the
record's ``inputTokenCount`` / ``outputTokenCount``), ``modelId``. A tool's result is a
``toolResult`` block of a later call's request (``status: "error"`` -> failed) or an
Anthropic ``tool_result`` (``is_error``). A record with ``errorCode`` is a problem naming it.
What cannot be known: the last call's results (no later request carries them), and any
body of another model family (a problem names the record; its calls are not guessed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...errors import TraceFormatError
from ...model import Trajectory
from . import messages
from ._util import as_plain, finalize, is_seq, mapping, sum_usage, to_int

FORMAT = "bedrock_invocations"
_GROUP_KEYS = ("session_id", "sessionId", "trace_id", "traceId", "conversation_id", "conversationId")


def is_record(x: Any) -> bool:
    """True for one model-invocation log record (``schemaType`` ModelInvocationLog with an
    ``input`` object)."""
    return isinstance(x, Mapping) and x.get("schemaType") == "ModelInvocationLog" and isinstance(x.get("input"),
                                                                                                 Mapping)


def is_source(obj: Any) -> bool:
    """True for one record or a non-empty list of them."""
    obj = as_plain(obj)
    if is_seq(obj):
        return bool(obj) and all(is_record(as_plain(x)) for x in obj)
    return is_record(obj)


def _body(rec: Mapping[str, Any], side: str) -> Mapping[str, Any]:
    return mapping(as_plain(mapping(rec.get(side)).get(f"{side}BodyJson")))


def _request(rec: Mapping[str, Any]) -> list[Any] | None:
    msgs = _body(rec, "input").get("messages")
    return list(msgs) if is_seq(msgs) else None


def _answer(rec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    out = _body(rec, "output")
    msg = mapping(out.get("output")).get("message")  # Converse
    if isinstance(msg, Mapping):
        return msg
    if out.get("role") == "assistant" and is_seq(out.get("content")):  # Anthropic Messages body
        return out
    return None


def _as_sent(answer: Mapping[str, Any] | None) -> dict[str, Any]:
    """An answer as the next request repeats it: role and content only (an Anthropic body
    also carries ``id``, ``stop_reason``, ``usage``, ...)."""
    a = answer or {}
    return {"role": a.get("role"), "content": a.get("content")}


def _plain(m: Any) -> Any:
    """A request message compared as the previous request + answer: an assistant message
    by role and content only."""
    m = as_plain(m)
    return _as_sent(m) if isinstance(m, Mapping) and m.get("role") == "assistant" else m


def _usage(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    u = mapping(_body(rec, "output").get("usage"))
    tin = to_int(u.get("inputTokens", u.get("input_tokens")))
    tout = to_int(u.get("outputTokens", u.get("output_tokens")))
    if tin is None and tout is None:
        tin = to_int(mapping(rec.get("input")).get("inputTokenCount"))
        tout = to_int(mapping(rec.get("output")).get("outputTokenCount"))
    if tin is None and tout is None:
        return None
    return {"input_tokens": tin, "output_tokens": tout}


def _key(rec: Mapping[str, Any]) -> tuple[str, str] | None:
    meta = mapping(rec.get("requestMetadata"))
    for k in _GROUP_KEYS:
        if isinstance(meta.get(k), str) and meta[k]:
            return k, meta[k]
    return None


def _where(i: int, rec: Mapping[str, Any]) -> str:
    rid = rec.get("requestId")
    return f"record {i}" + (f" (requestId {rid})" if rid else "")


def group(recs: list[Mapping[str, Any]]) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """The readable records' indices grouped into runs (module docstring), each ``(key,
    indices in time order)``, and a problem for each record whose body is not read."""
    order = sorted(range(len(recs)), key=lambda i: str(recs[i].get("timestamp") or ""))
    notes: list[str] = []
    readable = []
    for i in order:
        if _request(recs[i]) is None or _answer(recs[i]) is None:
            r = recs[i]
            notes.append(f"{_where(i, r)}: operation {r.get('operation')!r}, model {r.get('modelId')!r}: the "
                         f"body is neither a Converse nor an Anthropic Messages request and answer; not read")
        else:
            readable.append(i)
    keyed: dict[tuple[str, str], int] = {}
    for i in readable:
        k = _key(recs[i])
        if k is not None:
            keyed[k] = keyed.get(k, 0) + 1
    runs: dict[str, list[int]] = {}
    state: dict[str, list[Any]] = {}  # a chained run's conversation so far: last request + answer
    for i in readable:
        rec = recs[i]
        k = _key(rec)
        if k is not None and keyed[k] > 1:
            runs.setdefault(f"requestMetadata.{k[0]}={k[1]}", []).append(i)
            continue
        req = [_plain(m) for m in _request(rec) or []]
        best = None
        for key, conv in state.items():
            if len(req) > len(conv) and req[:len(conv)] == conv and (best is None or len(conv) > len(state[best])):
                best = key
        key = best or str(rec.get("requestId") or f"record {i}")
        runs.setdefault(key, []).append(i)
        state[key] = req + [_as_sent(_answer(rec))]
    return list(runs.items()), notes


def _run(key: str, recs: list[Mapping[str, Any]], idx: list[int]) -> Trajectory:
    problems: list[str] = []
    convo: list[Any] = []  # as recorded, to find where each request's new messages begin
    marked: list[Any] = []  # the same, each answer carrying its call's usage and model
    for i in idx:
        rec = recs[i]
        req = _request(rec) or []
        if [_plain(m) for m in req[:len(convo)]] == convo:
            new = req[len(convo):]
        else:
            problems.append(f"{_where(i, rec)}: its request does not continue the run's conversation; its "
                            f"messages are read after the previous call's")
            new = req
        convo = convo + [_plain(m) for m in new]
        marked = marked + new
        ans = dict(_answer(rec) or {})
        convo.append(_as_sent(ans))
        extra: dict[str, Any] = {}
        u = _usage(rec)
        if u is not None:
            extra["usage"] = u
        if isinstance(rec.get("modelId"), str):
            extra["model"] = rec["modelId"]
        marked.append({**ans, **extra})
        if rec.get("errorCode"):
            problems.append(f"{_where(i, rec)}: the model call failed: {str(rec['errorCode'])[:200]}")
    steps, final = finalize(messages.read_list(marked, problems, "conversation"))
    first = recs[idx[0]]
    meta: dict[str, Any] = {"grouped_by": key.split("=", 1)[0] if key.startswith("requestMetadata.") else
                            "message chain", "model_calls": len(idx)}
    case_id = (mapping(first.get("requestMetadata")).get("case_id")
               or mapping(_body(first, "input").get("requestMetadata")).get("case_id"))
    if isinstance(case_id, str) and case_id:
        meta["case_id"] = case_id
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=steps, final_response=final, total_usage=sum_usage(steps), source_format=FORMAT,
                      trace_id=key, metadata=meta)


def read_all(objs: list[Any]) -> list[Trajectory]:
    """One trajectory per run (``group``) over the records of ``objs`` (lists or single ones).

    Raises:
        TraceFormatError: an item is not an invocation log record, or no record has a body
            that is read (each named).
    """
    recs: list[Mapping[str, Any]] = []
    for o in objs:
        for x in (as_plain(o) if is_seq(as_plain(o)) else [o]):
            x = as_plain(x)
            if not is_record(x):
                raise TraceFormatError(f"{FORMAT}: expected Bedrock model-invocation log records, got "
                                       f"{type(x).__name__}")
            recs.append(x)
    runs, notes = group(recs)
    if not runs:
        raise TraceFormatError(f"{FORMAT}: no record could be read: " + "; ".join(notes[:3]))
    out = [_run(k, recs, idx) for k, idx in runs]
    if notes:  # records left out are said once, on the first run (they belong to no run)
        meta = dict(out[0].metadata)
        meta["problems"] = list(meta.get("problems") or []) + notes
        out[0] = replace(out[0], metadata=meta)
    return out


def read(obj: Any) -> Trajectory:
    """The records of ``obj`` as one run; raises ``TraceFormatError`` when they form several
    (read those with ``load``)."""
    trajs = read_all([obj])
    if len(trajs) != 1:
        raise TraceFormatError(f"{FORMAT}: the records form {len(trajs)} runs; read them with load()")
    return trajs[0]


__all__ = ["FORMAT", "group", "is_record", "is_source", "read", "read_all"]
