"""One normaliser of chat messages and their content blocks, for every provider convention.

A message list from any of these reads the same way, each convention a few lines of mapping
in ``_block`` / ``normalise`` rather than a parser of its own:

==========================  ==================================================================
convention                  what is read
==========================  ==================================================================
OpenAI chat (and Mistral,   ``tool_calls`` / ``function_call`` on the message; ``role: tool``
Cohere v2, AG2)             results joined by ``tool_call_id``; Cohere's ``tool_plan`` is the
                            call step's text, its ``document`` parts the result's text; AG2's
                            ``tool_responses``. No error field (``is_error`` None).
Anthropic                   ``tool_use`` / ``tool_result`` blocks, ``is_error``; ``thinking``
Bedrock Converse, Strands   ``toolUse`` / ``toolResult`` blocks (``content`` of ``text`` /
                            ``json`` parts), ``status: "error"`` -> failed; ``reasoningContent``
Gemini, google-genai        ``parts`` with ``functionCall`` / ``functionResponse`` (camel or
                            snake case), role ``model``; a response whose ``error`` key is set
                            (the SDK's automatic function calling writes ``{"error": ...}``)
                            -> failed, ``{"result"|"output": x}`` -> output x
LangChain dumps             ``tool_calls`` of ``{name, args, id}`` (read by ``langchain``;
                            here too when mixed in a list)
LlamaIndex ``ChatMessage``  ``blocks`` (``block_type`` text / tool_call), tool calls in
                            ``additional_kwargs.tool_calls``, results ``role: tool`` with
                            ``additional_kwargs.tool_call_id``
Haystack ``ChatMessage``    ``content`` parts ``{text}``, ``{tool_call}``, ``{tool_call_result:
                            {result, origin, error}}``, ``{reasoning}``; ``meta.usage``
Semantic Kernel             ``items`` with ``content_type`` text / function_call /
``ChatHistory``             function_result, named by ``function_name`` (the plugin dropped);
                            ``metadata.usage``; no error field (failures are text)
==========================  ==================================================================

The blocks and calls several readers meet are read here only: ``block_call`` /
``block_result`` (Anthropic ``tool_use`` / ``*_tool_result`` blocks, LangChain ``tool_call``
blocks) and ``openai_calls`` (OpenAI ``tool_calls`` / ``function_call``) serve the
``openai_chat``, ``anthropic``, ``langchain`` and ``promptfoo`` readers as well as this one.

``normalise(message)`` gives a ``Message`` (role, texts, calls, results, reasoning, usage,
model); ``read_list(messages)`` turns a list into steps; ``read(obj)`` is the ``messages``
format's reader (a list, ``{"messages": [...]}``, a Semantic Kernel history, a google-genai
``GenerateContentResponse`` with its ``automatic_function_calling_history``, or a Bedrock
Converse response). ``is_source(obj)`` says whether a list holds a mark only these
conventions write (and that the ``openai_chat`` / ``anthropic`` readers would not read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    call_args,
    finalize,
    get,
    is_seq,
    mapping,
    parse_args,
    result_content,
    sum_usage,
    to_int,
    tool_name,
    usage_or_none,
)

FORMAT = "messages"
_ROLES = {"model": "assistant", "assistant": "assistant", "ai": "assistant", "chatbot": "assistant",
          "user": "user", "human": "user", "system": "system", "developer": "system",
          "tool": "tool", "function": "tool", "ipython": "tool"}


@dataclass
class Message:
    """One message in the common form: ``role`` (system / user / assistant / tool), its
    ``texts``, ``calls``, ``results`` (in block order), ``reasoning``, ``usage``, ``model``."""

    role: str
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    usage: Usage | None = None
    model: str | None = None


def _s(v: Any) -> str | None:
    return None if v is None else str(v)


def _call(name: Any, raw: Any, cid: Any, problems: list[str], where: str) -> ToolCall:
    nm = name if isinstance(name, str) and name else ""
    if not nm:
        problems.append(f"{where}: call has no name")
    if raw is None:
        problems.append(f"{where} ({nm}): no arguments recorded; arguments unknown")
        return ToolCall(name=nm, args=None, call_id=_s(cid), args_parse_error="no arguments recorded")
    args, rawtxt, err = parse_args(raw, problems, f"{where} ({nm})")
    return ToolCall(name=nm, args=args, call_id=_s(cid), raw_args=rawtxt, args_parse_error=err)


def openai_calls(msg: Mapping[str, Any], problems: list[str], where: str) -> list[ToolCall]:
    """The calls of an OpenAI-convention message (chat ``tool_calls``: function and custom
    tools; the legacy ``function_call``), as the ``openai_chat``, ``langchain`` (its
    ``additional_kwargs``), ``promptfoo`` and ``messages`` readers read them.

    Args:
        msg: the message (a mapping holding ``tool_calls`` and/or ``function_call``).
        problems: receives each tolerated fault, located from ``where``.
        where: the message's path, e.g. ``messages[2]``.

    Returns:
        The calls in order; a call with no name or unreadable arguments is kept (named ``""``
        / ``args=None``) with a problem.
    """
    calls: list[ToolCall] = []
    tcs = msg.get("tool_calls")
    if tcs is not None and not is_seq(tcs):
        problems.append(f"{where}: field 'tool_calls' is not a list; ignored")
        tcs = None
    for j, tc in enumerate(tcs or ()):
        tc = as_plain(tc)
        w = f"{where}.tool_calls[{j}]"
        if not isinstance(tc, Mapping):
            problems.append(f"{w}: not an object; ignored")
            continue
        ttype = tc.get("type")
        if ttype == "custom" or isinstance(tc.get("custom"), Mapping):
            c = tc.get("custom") or {}
            name = get(c, "name")
            raw = get(c, "input")
            calls.append(ToolCall(name=str(name) if name is not None else "", args={"input": raw},
                                  call_id=_s(tc.get("id")), raw_args=raw if isinstance(raw, str) else None,
                                  tool_type="custom"))
            if name is None:
                problems.append(f"{w}: custom tool call has no name")
            continue
        fn = tc.get("function")
        fn = as_plain(fn) if fn is not None else {}
        if not isinstance(fn, Mapping):
            fn = {}
        name = tool_name(fn.get("name", tc.get("name")), problems, w, "function.name")
        args, raw, err = call_args(fn if fn.get("arguments") is not None else tc, ("arguments",), problems,
                               f"{w} ({name})")
        calls.append(ToolCall(name=name, args=args, call_id=_s(tc.get("id")), raw_args=raw,
                              args_parse_error=err, tool_type="function" if ttype in (None, "function") else str(ttype)))
    fc = msg.get("function_call")
    if fc is not None:
        fc = as_plain(fc)
        w = f"{where}.function_call"
        if isinstance(fc, Mapping):
            name = tool_name(fc.get("name"), problems, w)
            args, raw, err = call_args(fc, ("arguments",), problems, f"{w} ({name})")
            calls.append(ToolCall(name=name, args=args, call_id=None, raw_args=raw,
                                  args_parse_error=err, tool_type="function"))
        else:
            problems.append(f"{w}: not an object; ignored")
    return calls


# Anthropic-convention content blocks (also in LangChain and mixed message lists)
_BLOCK_CALL_TYPES = {"tool_use": "function", "server_tool_use": "server", "mcp_tool_use": "mcp",
                     "tool_call": "function"}


def is_call_block(t: Any) -> bool:
    """True for a content block type that is one call: Anthropic ``tool_use`` /
    ``server_tool_use`` / ``mcp_tool_use``, LangChain's standard ``tool_call`` block."""
    return t in _BLOCK_CALL_TYPES


def is_result_block(t: Any) -> bool:
    """True for a content block type that is one result: ``tool_result``,
    ``mcp_tool_result`` and the server tools' ``*_tool_result`` blocks."""
    return isinstance(t, str) and (t in ("tool_result", "mcp_tool_result") or t.endswith("_tool_result"))


def block_call(b: Mapping[str, Any], problems: list[str], where: str) -> ToolCall:
    """One call content block (``is_call_block``) as a ``ToolCall``.

    Args:
        b: the block, ``{type, id, name, input}`` (Anthropic) or ``{type, id, name, args}``
            (LangChain).
        problems: receives a missing name or arguments that are not an object.
        where: the block's path, e.g. ``messages[1].content[0]``.

    Returns:
        The call, ``tool_type`` function / server / mcp by the block type.
    """
    name = tool_name(b.get("name"), problems, where)
    args, raw, err = call_args(b, ("args",) if b.get("type") == "tool_call" else ("input",), problems,
                               f"{where} ({name})")
    return ToolCall(name=name, args=args, call_id=_s(b.get("id")), raw_args=raw, args_parse_error=err,
                    tool_type=_BLOCK_CALL_TYPES.get(str(b.get("type")), "function"))


def block_result(b: Mapping[str, Any], name: str | None, *, error_channel: bool = True) -> ToolResult:
    """One result content block (``is_result_block``) as a ``ToolResult``.

    Args:
        b: the block, ``{type, tool_use_id, content, is_error}``.
        name: the answered call's name when known (the block names none).
        error_channel: False for sources that carry no error flag (RAGAS): ``is_error`` None.

    Returns:
        The result: its content as ``result_content`` keeps it; failed when ``is_error`` is
        True (``tool_result`` / ``mcp_tool_result``) or, for a server tool's result, when its
        content is an ``*_error`` object.
    """
    t = b.get("type")
    content = as_plain(b.get("content"))
    out = result_content(content)
    is_err: bool | None
    if t in ("tool_result", "mcp_tool_result"):
        flag = b.get("is_error")
        is_err = flag if isinstance(flag, bool) else False
    else:
        is_err = isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error")
    if not error_channel:
        is_err = None
    return ToolResult(call_id=_s(b.get("tool_use_id")), name=name, output=out, is_error=is_err,
                      error=out if is_err and isinstance(out, str) else None)


def _parts_text(content: Any) -> Any:
    """A result's content parts (Bedrock ``[{text}|{json}]``, Cohere documents, text blocks)
    as one output: joined text when all parts are text, the JSON value of a lone json part."""
    if not is_seq(content):
        return content
    texts: list[str] = []
    for p in content:
        p = as_plain(p)
        if isinstance(p, str):
            texts.append(p)
        elif isinstance(p, Mapping) and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif isinstance(p, Mapping) and isinstance(p.get("document"), Mapping) and "data" in p["document"]:
            d = p["document"]["data"]
            texts.append(d if isinstance(d, str) else json.dumps(d, ensure_ascii=False))
        elif isinstance(p, Mapping) and "json" in p and len(content) == 1:
            return p["json"]
        else:
            return result_content(content)
    return "\n".join(texts)


def _gemini_result(fr: Mapping[str, Any]) -> ToolResult:
    resp = as_plain(fr.get("response"))
    out: Any = resp
    err: str | None = None
    is_err = False
    if isinstance(resp, Mapping):
        if resp.get("error") not in (None, False, "", {}, []):
            is_err = True
            e = resp["error"]
            out = e
            err = e if isinstance(e, str) else json.dumps(e, ensure_ascii=False, default=str)
        elif len(resp) == 1 and ("result" in resp or "output" in resp):
            out = next(iter(resp.values()))
    return ToolResult(call_id=_s(fr.get("id")), name=_s(fr.get("name")), output=out, is_error=is_err, error=err)


def _block(b: Any, msg: Message, problems: list[str], where: str) -> None:
    """Read one content block / part / item into ``msg`` (see the module table)."""
    b = as_plain(b)
    if isinstance(b, str):
        msg.texts.append(b)
        return
    if not isinstance(b, Mapping):
        problems.append(f"{where}: not an object; ignored")
        return
    t = b.get("type") or b.get("block_type") or b.get("content_type")
    if t in ("tool_use", "server_tool_use", "mcp_tool_use"):  # Anthropic
        msg.calls.append(block_call(b, problems, where))
    elif is_result_block(t):
        msg.results.append(block_result(b, None))
    elif t in ("thinking", "redacted_thinking"):
        if isinstance(b.get("thinking"), str):
            msg.reasoning.append(b["thinking"])
    elif t == "tool_call" and "tool_name" in b:  # LlamaIndex ToolCallBlock
        msg.calls.append(_call(b.get("tool_name"), b.get("tool_kwargs", b.get("arguments")),
                               b.get("tool_call_id"), problems, where))
    elif t == "function_call" or t == "FunctionCallContent":  # Semantic Kernel: the function, not
        name = b.get("function_name") or b.get("name")      # "{plugin}-{function}"
        msg.calls.append(_call(name, b.get("arguments", {}), b.get("id"), problems, where))
    elif t == "function_result" or t == "FunctionResultContent":
        name = b.get("function_name") or b.get("name")
        msg.results.append(ToolResult(call_id=_s(b.get("id")), name=name or None, output=b.get("result"),
                                      is_error=None))
    elif isinstance(b.get("toolUse"), Mapping):  # Bedrock Converse / Strands
        tu = b["toolUse"]
        msg.calls.append(_call(tu.get("name"), tu.get("input"), tu.get("toolUseId"), problems, where))
    elif isinstance(b.get("toolResult"), Mapping):
        tr = b["toolResult"]
        out = _parts_text(tr.get("content"))
        is_err = tr.get("status") == "error"
        msg.results.append(ToolResult(call_id=_s(tr.get("toolUseId")), name=None, output=out, is_error=is_err,
                                      error=out if is_err and isinstance(out, str) else None))
    elif isinstance(b.get("reasoningContent"), Mapping):
        rt = mapping(b["reasoningContent"].get("reasoningText")).get("text")
        if isinstance(rt, str):
            msg.reasoning.append(rt)
    elif isinstance(b.get("functionCall") or b.get("function_call"), Mapping):  # Gemini
        fc = mapping(b.get("functionCall") or b.get("function_call"))
        msg.calls.append(_call(fc.get("name"), fc.get("args", {}), fc.get("id"), problems, where))
    elif isinstance(b.get("functionResponse") or b.get("function_response"), Mapping):
        msg.results.append(_gemini_result(mapping(b.get("functionResponse") or b.get("function_response"))))
    elif isinstance(b.get("tool_call"), Mapping):  # Haystack
        tc = b["tool_call"]
        msg.calls.append(_call(tc.get("tool_name"), tc.get("arguments"), tc.get("id"), problems, where))
    elif isinstance(b.get("tool_call_result"), Mapping):
        r = b["tool_call_result"]
        origin = mapping(r.get("origin"))
        is_err = r.get("error") is True
        out = r.get("result")
        msg.results.append(ToolResult(call_id=_s(origin.get("id")), name=_s(origin.get("tool_name")), output=out,
                                      is_error=is_err, error=out if is_err and isinstance(out, str) else None))
    elif isinstance(b.get("reasoning"), Mapping):  # Haystack ReasoningContent
        rt = b["reasoning"].get("reasoning_text")
        if isinstance(rt, str):
            msg.reasoning.append(rt)
    elif t in (None, "text", "input_text", "output_text") and isinstance(b.get("text"), str):
        if not b.get("thought"):  # Gemini thought summaries are reasoning
            msg.texts.append(b["text"])
        else:
            msg.reasoning.append(b["text"])
    elif t == "document" and isinstance(b.get("document"), Mapping):
        msg.texts.append(str(_parts_text([b])))


def _usage(m: Mapping[str, Any]) -> Usage | None:
    meta = mapping(m.get("meta")) or mapping(m.get("metadata"))  # Haystack / Semantic Kernel
    u = as_plain(m.get("usage") or meta.get("usage") or m.get("usage_metadata"))
    if not isinstance(u, Mapping):
        return None
    return usage_or_none(Usage(
        input_tokens=to_int(u.get("input_tokens", u.get("prompt_tokens", u.get("inputTokens",
                                                                                   u.get("prompt_token_count"))))),
        output_tokens=to_int(u.get("output_tokens", u.get("completion_tokens", u.get(
            "outputTokens", u.get("candidates_token_count")))))))


def normalise(m: Any, problems: list[str], where: str) -> Message | None:
    """One message of any convention in the common form (module table); None (with a
    problem) when it is not a message."""
    m = as_plain(m)
    if not isinstance(m, Mapping):
        problems.append(f"{where}: not an object ({type(m).__name__}); skipped")
        return None
    raw_role = m.get("role")
    if raw_role is None and isinstance(m.get("_role"), str):  # Haystack < 2.9 dumps
        raw_role = m["_role"]
    role = _ROLES.get(str(raw_role).lower() if raw_role is not None else "")
    if role is None:
        problems.append(f"{where}: unknown role {raw_role!r}; skipped")
        return None
    msg = Message(role=role, usage=_usage(m), model=m.get("model") if isinstance(m.get("model"), str) else None)
    content = m.get("content")
    blocks = m.get("parts") if is_seq(m.get("parts")) else (
        m.get("blocks") if is_seq(m.get("blocks")) else (m.get("items") if is_seq(m.get("items")) else content))
    if isinstance(blocks, str):
        if blocks:
            msg.texts.append(blocks)
    elif is_seq(blocks):
        for j, b in enumerate(blocks):
            _block(b, msg, problems, f"{where}.content[{j}]")
    if isinstance(m.get("tool_plan"), str) and m["tool_plan"]:  # Cohere v2
        msg.texts.insert(0, m["tool_plan"])
    kw = mapping(m.get("additional_kwargs"))
    if not msg.calls and (m.get("tool_calls") or m.get("function_call") or kw.get("tool_calls")):
        src = m if (m.get("tool_calls") or m.get("function_call")) else kw
        oa = openai_calls(src, problems, where)
        for c in oa:  # LangChain's {name, args, id} and OpenAI's {function: {name, arguments}}
            msg.calls.append(c)
        if not oa:
            for j, tc in enumerate(m.get("tool_calls") or ()):
                tc = as_plain(tc)
                if isinstance(tc, Mapping) and "args" in tc:
                    msg.calls.append(_call(tc.get("name"), tc.get("args"), tc.get("id"), problems,
                                           f"{where}.tool_calls[{j}]"))
    if role == "tool" and not msg.results:
        if is_seq(m.get("tool_responses")):  # AG2
            for r in m["tool_responses"]:
                r = mapping(as_plain(r))
                msg.results.append(ToolResult(call_id=_s(r.get("tool_call_id")), name=None,
                                              output=r.get("content"), is_error=None))
        else:
            cid = m.get("tool_call_id") or kw.get("tool_call_id")
            out = _parts_text(content) if is_seq(content) else content
            if out is None and msg.texts:  # LlamaIndex keeps the text in blocks
                out = "\n".join(msg.texts)
            name = m.get("name") or kw.get("name")
            msg.results.append(ToolResult(call_id=_s(cid), name=_s(name), output=out, is_error=None))
            msg.texts = []
    return msg


def read_list(messages: Sequence[Any], problems: list[str], where: str = "messages") -> list[Any]:
    """Steps of a message list of any convention (no final-response marking)."""
    sl = StepList()
    for i, raw in enumerate(messages):
        msg = normalise(raw, problems, f"{where}[{i}]")
        if msg is None:
            continue
        text = "\n".join(msg.texts) if msg.texts else None
        for why in msg.reasoning:
            sl.add("reasoning", content=why)
        if msg.role == "system":
            sl.add("system", content=text)
        elif msg.role == "assistant":
            if msg.calls:
                sl.call(msg.calls, content=text, usage=msg.usage, model=msg.model)
            elif text is not None or msg.usage is not None:
                sl.add("assistant", content=text, usage=msg.usage, model=msg.model)
            for r in msg.results:  # results inside a model turn (Haystack/SK keep them apart; rare)
                sl.result(r)
        else:
            for r in msg.results:
                sl.result(r)
            if msg.role == "user" and text is not None:
                sl.add("user", content=text)
    _name_results(sl)
    return sl.steps


def _name_results(sl: StepList) -> None:
    """Give results without a call id the id of the call they answer when the call's id is
    known and the name pairs them in order (google-genai's automatic function calling echoes
    no id): the n-th unanswered call of that name."""
    from dataclasses import replace

    pending: dict[str, list[str]] = {}
    for i, s in enumerate(sl.steps):
        for c in s.tool_calls:
            if c.call_id is not None:
                pending.setdefault(c.name, []).append(c.call_id)
        r = s.tool_result
        if r is None:
            continue
        if r.call_id is not None:
            for ids in pending.values():
                if r.call_id in ids:
                    ids.remove(r.call_id)
        elif r.name and pending.get(r.name):
            sl.steps[i] = replace(s, tool_result=replace(r, call_id=pending[r.name].pop(0)))


def _unwrap(obj: Any) -> tuple[list[Any], Usage | None, dict[str, Any]]:
    """The message list of a source object, its own usage and metadata."""
    if is_seq(obj):
        return list(obj), None, {}
    if not isinstance(obj, Mapping):
        raise TraceFormatError(f"{FORMAT}: expected a list of messages, got {type(obj).__name__}")
    if is_seq(obj.get("candidates")) or is_seq(obj.get("automatic_function_calling_history")):  # google-genai
        hist = list(obj.get("automatic_function_calling_history") or [])
        cands = obj.get("candidates") or []
        content = as_plain(cands[0]).get("content") if cands and isinstance(as_plain(cands[0]), Mapping) else None
        if content is not None:
            hist.append(content)
        u = mapping(obj.get("usage_metadata") or obj.get("usageMetadata"))
        usage = usage_or_none(Usage(input_tokens=to_int(u.get("prompt_token_count", u.get("promptTokenCount"))),
                                    output_tokens=to_int(u.get("candidates_token_count",
                                                               u.get("candidatesTokenCount")))))
        meta = {"model": obj["model_version"]} if isinstance(obj.get("model_version"), str) else {}
        return hist, usage, meta
    if isinstance(mapping(obj.get("output")).get("message"), Mapping):  # a Bedrock Converse response
        u = mapping(obj.get("usage"))
        return [obj["output"]["message"]], usage_or_none(Usage(
            input_tokens=to_int(u.get("inputTokens")), output_tokens=to_int(u.get("outputTokens")))), {}
    if is_seq(obj.get("messages")):
        return list(obj["messages"]), _usage(obj) if obj.get("usage") is not None else None, {}
    raise TraceFormatError(f"{FORMAT}: expected a list of messages or an object with 'messages'")


def read(obj: Any) -> Trajectory:
    """Read a message list of any convention (module docstring) into a ``Trajectory``.

    Raises ``TraceFormatError`` when ``obj`` holds no message list. Tolerated faults go to
    ``metadata["problems"]``; usage is the source's own total when it has one, else the sum
    of the messages' usage.
    """
    obj = as_plain(obj)
    msgs, top, meta = _unwrap(obj)
    problems: list[str] = []
    steps, final = finalize(read_list(msgs, problems))
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=steps, final_response=final, total_usage=top or sum_usage(steps),
                      source_format=FORMAT, metadata=meta)


_BLOCK_MARKS = ("toolUse", "toolResult", "functionCall", "function_call", "functionResponse",
                "function_response", "tool_call", "tool_call_result", "reasoningContent")


def _marked(m: Mapping[str, Any]) -> bool:
    if is_seq(m.get("parts")) or is_seq(m.get("blocks")) or is_seq(m.get("items")):
        return True
    if m.get("role") == "model" or "tool_plan" in m or "tool_responses" in m or "_role" in m:
        return True
    c = m.get("content")
    if is_seq(c):
        for b in c:
            b = as_plain(b)
            if isinstance(b, Mapping) and "type" not in b and any(k in b for k in _BLOCK_MARKS):
                return True
            if isinstance(b, Mapping) and b.get("type") == "document":
                return True
    return False


def is_source(obj: Any) -> bool:
    """True when ``obj`` is a message list (or ``{"messages"}`` / a google-genai response / a
    Bedrock Converse response) carrying a mark only the conventions read here write: Gemini
    ``parts`` or role ``model``, Bedrock ``toolUse``/``toolResult`` blocks, Haystack
    ``tool_call``/``tool_call_result`` parts, LlamaIndex ``blocks``, Semantic Kernel ``items``,
    Cohere ``tool_plan``/documents, AG2 ``tool_responses``."""
    obj = as_plain(obj)
    if isinstance(obj, Mapping):
        if is_seq(obj.get("automatic_function_calling_history")) or (
                is_seq(obj.get("candidates")) and (obj.get("usage_metadata") or obj.get("usageMetadata")
                                                   or obj.get("model_version") or obj.get("modelVersion"))):
            return True
        if isinstance(mapping(obj.get("output")).get("message"), Mapping) and "stopReason" in obj:
            return True
        msgs = obj.get("messages")
    else:
        msgs = obj
    if not is_seq(msgs) or not msgs:
        return False
    plain = [as_plain(m) for m in msgs]
    if not all(isinstance(m, Mapping) and ("role" in m or "_role" in m) for m in plain):
        return False
    return any(_marked(m) for m in plain)


__all__ = ["FORMAT", "Message", "block_call", "block_result", "is_call_block", "is_result_block", "is_source",
           "normalise", "openai_calls", "read", "read_list"]
