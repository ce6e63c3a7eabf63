"""Reader for LangSmith run trees exported as dicts (research notes traces.md §4).

Accepted: a root run dict with nested ``child_runs``; a flat list of runs linked by
``parent_run_id`` (every root in the list and its descendants go into one trajectory; use
``read_all`` for one trajectory per root); ``langsmith`` ``Run``/``RunTree`` objects via
``model_dump()``/``dict()``; the SDK's ``{"post": [...], "patch": [...]}`` payload arrives
here already merged by run id (``wrappers``).

Runs are flattened depth-first; the root first, the others ordered by ``dotted_order``
(lexicographic order is execution order), falling back to ``start_time`` then file order.
The root run is read like any other (a traced LLM call at the root, e.g. ``wrap_openai``,
is the run's model step). Model turns and tool runs become steps by the rules of ``_turns``
(the tool runs after an LLM run are that turn's one ``tool_call`` step, ordered as the
model requested them). Mapping:

- ``tool`` run -> a call (name = run ``name``, args = ``inputs``, or ``None`` with a
  problem when the run has no inputs; id = ``extra.tool_call_id``, else the requested
  call's id) and its result (``outputs.output``, unwrapping an lc-serialised ToolMessage;
  ``is_error`` = ``error`` is set or the ToolMessage status is "error"; otherwise False,
  LangSmith having an error channel);
- ``llm`` run -> a model turn with the generated text, the calls it requested (LangChain
  or OpenAI ``tool_calls``), usage (``outputs.usage_metadata``, then the generation
  message's ``usage_metadata``, then ``extra.metadata.usage_metadata``, then
  ``prompt_tokens``/``completion_tokens``/``total_tokens``), ``total_cost`` (USD), model
  (``extra.metadata.ls_model_name`` or ``invocation_params.model``);
- the root run's first user message (``inputs.messages``, OpenAI dicts or LangChain
  messages), else its string input (``input``/``question``/``query``/``prompt``, or the
  value of a sole input) -> the first ``user`` step; never a parameter such as ``model``.

Each step's ``latency_ms`` = ``end_time - start_time``; the trajectory's latency is the
root's, its cost the root's ``total_cost`` or else the sum over LLM runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._turns import ModelTurn, ToolRun, build, mark_final
from ._util import (
    StepList,
    as_plain,
    figure,
    get,
    is_seq,
    mapping,
    parse_args,
    result_content,
    sum_usage,
    text_of,
    to_float,
    to_int,
    to_unix_seconds,
    usage_or_none,
)
from .langchain import is_message_list, normalize_message, read_messages
from .langchain import parse_usage as lc_usage

FORMAT = "langsmith"


def is_run(obj: Any) -> bool:
    """True for a run dict (``run_type`` and ``name``)."""
    return isinstance(obj, Mapping) and isinstance(obj.get("run_type"), str) and "name" in obj


def _flatten(run: Mapping[str, Any], out: list[Mapping[str, Any]], depth: int = 0) -> None:
    out.append(run)
    if depth > 200:
        return
    for c in run.get("child_runs") or ():
        c = as_plain(c)
        if isinstance(c, Mapping):
            _flatten(c, out, depth + 1)


def _times(r: Mapping[str, Any]) -> tuple[float | None, float | None, float | None]:
    s = to_unix_seconds(r.get("start_time"))
    e = to_unix_seconds(r.get("end_time"))
    lat = (e - s) * 1000.0 if s is not None and e is not None else None
    return s, e, lat


def _llm_usage(r: Mapping[str, Any]) -> Usage | None:
    outs = mapping(r.get("outputs"))
    u = lc_usage(outs.get("usage_metadata"))
    if u is None:
        msg = _gen_message(outs)
        if msg is not None:
            u = lc_usage(msg.get("usage_metadata"))
    if u is None:
        extra = mapping(r.get("extra"))
        md = mapping(extra.get("metadata"))
        u = lc_usage(md.get("usage_metadata"))
    if u is None:
        u = usage_or_none(Usage(input_tokens=to_int(r.get("prompt_tokens")),
                                output_tokens=to_int(r.get("completion_tokens")),
                                total_tokens=to_int(r.get("total_tokens"))))
    return u


def _gen_message(outs: Mapping[str, Any]) -> dict[str, Any] | None:
    gens = outs.get("generations")
    if is_seq(gens) and gens:
        first = gens[0]
        if is_seq(first) and first:
            first = first[0]
        if isinstance(first, Mapping):
            m = first.get("message")
            if m is not None:
                return normalize_message(m)
            if isinstance(first.get("text"), str):
                return {"type": "ai", "content": first["text"]}
    for k in ("output", "message"):
        if outs.get(k) is not None and not isinstance(outs.get(k), str):
            m = normalize_message(outs[k])
            if m is not None:
                return m
    if is_seq(outs.get("choices")) and outs["choices"]:
        msg = get(outs["choices"][0], "message")
        if isinstance(msg, Mapping):
            return {"type": "ai", "content": msg.get("content"), "tool_calls": msg.get("tool_calls")}
    return None


def _user_text(inputs: Any) -> str | None:
    if not isinstance(inputs, Mapping):
        return None
    for k in ("input", "question", "query", "prompt"):
        if isinstance(inputs.get(k), str):
            return str(inputs[k])
    # a sole string value is the input only when it is the run's only input (never a
    # parameter such as ``model`` beside the messages)
    if len(inputs) == 1:
        v = next(iter(inputs.values()))
        return v if isinstance(v, str) else None
    return None


def read_all(obj: Any) -> list[Trajectory]:
    """One trajectory per root run of ``obj`` (a run dict or a list of runs)."""
    runs = [as_plain(r) for r in obj] if is_seq(obj) else [as_plain(obj)]
    runs = [r for r in runs if is_run(r)]
    if not runs:
        raise TraceFormatError(f"{FORMAT}: expected a run dict with 'run_type' or a list of runs")
    ids = {str(r.get("id")) for r in runs if r.get("id") is not None}
    roots = [r for r in runs if r.get("parent_run_id") is None or str(r.get("parent_run_id")) not in ids]
    kids: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        p = r.get("parent_run_id")
        if p is not None and str(p) in ids:
            kids.setdefault(str(p), []).append(r)
    out = []
    for root in roots:
        tree = _attach(root, kids)
        out.append(_read_tree(tree))
    return out


def _attach(r: Mapping[str, Any], kids: dict[str, list[Mapping[str, Any]]], depth: int = 0) -> dict[str, Any]:
    d = dict(r)
    extra = kids.get(str(r.get("id")), []) if depth < 200 else []
    if extra:
        d["child_runs"] = list(d.get("child_runs") or []) + [_attach(k, kids, depth + 1) for k in extra]
    return d


def read(obj: Any) -> Trajectory:
    """Read a run tree (or a flat run list) into one ``Trajectory``; raises ``TraceFormatError`` if no run is found."""
    trajs = read_all(obj)
    if len(trajs) == 1:
        return trajs[0]
    runs = [as_plain(r) for r in obj]
    return _read_tree({"name": "root", "run_type": "chain", "child_runs": runs})


def _requested(msg: Mapping[str, Any], problems: list[str], w: str) -> list[ToolCall]:
    """The calls a generation message requested: LangChain ``{name, args, id}`` or OpenAI
    ``{id, function: {name, arguments}}`` entries of its ``tool_calls``."""
    out: list[ToolCall] = []
    for j, tc in enumerate(msg.get("tool_calls") or ()):
        tc = as_plain(tc)
        if not isinstance(tc, Mapping):
            continue
        fn = mapping(tc.get("function"))
        name = tc.get("name") if "name" in tc else fn.get("name")
        name = name if isinstance(name, str) else str(name or "")
        raw = tc.get("args") if "args" in tc else fn.get("arguments")
        args, raw_s, err = parse_args(raw, problems, f"{w} tool_calls[{j}] ({name})")
        cid = tc.get("id")
        out.append(ToolCall(name=name, args=args, call_id=None if cid is None else str(cid), raw_args=raw_s,
                            args_parse_error=err))
    return out


def _prompt_results(inputs: Any) -> list[ToolResult]:
    """Tool messages in an LLM run's ``inputs.messages`` (OpenAI dicts or LangChain messages,
    flat or one list per prompt)."""
    msgs = inputs.get("messages") if isinstance(inputs, Mapping) else None
    if is_seq(msgs) and msgs and all(is_seq(m) for m in msgs):
        msgs = [x for m in msgs for x in m]
    out: list[ToolResult] = []
    for m in msgs or ():
        d = normalize_message(m) if not (isinstance(m, Mapping) and "role" in m) else dict(m)
        if not isinstance(d, Mapping) or (d.get("role") != "tool" and d.get("type") != "tool"):
            continue
        c = d.get("content")
        cid = d.get("tool_call_id")
        out.append(ToolResult(call_id=None if cid is None else str(cid), name=d.get("name"),
                              output=result_content(c),
                              is_error=True if d.get("status") == "error" else None))
    return out


def _role_pair(m: Any) -> bool:
    return is_seq(m) and len(m) == 2 and isinstance(m[0], str) and isinstance(m[1], str) and m[0] in (
        "user", "human", "ai", "assistant", "system", "tool")


def _user_message(inputs: Any) -> str | None:
    """The first user message of a run's ``inputs``: a ``messages`` list (OpenAI dicts or
    LangChain messages, flat or one list per prompt), else a string input (see ``_user_text``)."""
    msgs = inputs.get("messages") if isinstance(inputs, Mapping) else None
    if is_seq(msgs) and msgs and all(is_seq(m) and not _role_pair(m) for m in msgs):
        msgs = [x for m in msgs for x in m]
    for m in msgs if is_seq(msgs) else ():
        if _role_pair(m):  # LangChain's ("user", "text") shorthand
            if m[0] in ("user", "human"):
                return str(m[1])
            continue
        d = dict(m) if isinstance(m, Mapping) and "role" in m else normalize_message(m)
        if isinstance(d, Mapping) and (d.get("role") == "user" or d.get("type") == "human"):
            t = text_of(d.get("content"))
            if t:
                return t
    return _user_text(inputs)


def _tool_run(r: Mapping[str, Any], problems: list[str], w: str, times: dict[str, Any]) -> ToolRun:
    name = r.get("name")
    name = name if isinstance(name, str) else str(name or "")
    inputs = r.get("inputs")
    if inputs is None:
        problems.append(f"{w}: tool run has no 'inputs'; arguments unknown")
        err: str | None = "no arguments recorded"
        args, raw = None, None
    elif isinstance(inputs, Mapping) and set(inputs) == {"input"} and isinstance(inputs["input"], str):
        args, raw, err = parse_args(inputs["input"], [], w)
        if args is None:
            args, raw, err = {"input": inputs["input"]}, None, None
    else:
        args, raw, err = parse_args(inputs, problems, w)
    extra = mapping(r.get("extra"))
    cid = extra.get("tool_call_id")
    cid = None if cid is None else str(cid)
    outs = r.get("outputs")
    output: Any = (outs.get("output", outs) or None) if isinstance(outs, Mapping) else outs
    status = None
    m = normalize_message(output) if isinstance(output, Mapping) and (
        "lc" in output or "tool_call_id" in output) else None
    if m is not None:
        status = m.get("status")
        c = m.get("content")
        output = result_content(c)
        if cid is None and m.get("tool_call_id") is not None:
            cid = str(m["tool_call_id"])
    error = r.get("error")
    is_err = bool(error) or status == "error"
    call = ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err)
    res = ToolResult(call_id=cid, name=name, output=output, is_error=is_err,
                     error=str(error) if error else (output if is_err and isinstance(output, str) else None))
    return ToolRun(call=call, result=res, **times)


def _model_turn(r: Mapping[str, Any], problems: list[str], w: str, times: dict[str, Any]) -> ModelTurn:
    outs = mapping(r.get("outputs"))
    msg = _gen_message(outs) or {}
    text = text_of(msg.get("content"))
    extra = mapping(r.get("extra"))
    md = mapping(extra.get("metadata"))
    ip = mapping(extra.get("invocation_params"))
    model = md.get("ls_model_name") or ip.get("model") or ip.get("model_name")
    req = _requested(msg, problems, w)
    if r.get("error"):
        problems.append(f"{w}: llm run failed: {str(r['error'])[:200]}")
    return ModelTurn(content=text if text else None, requested=req, requested_any=bool(msg.get("tool_calls")),
                     input_results=_prompt_results(r.get("inputs")), usage=_llm_usage(r),
                     cost_usd=figure(r.get("total_cost"), f"{w}.total_cost", problems), model=model if isinstance(model, str) else None,
                     **times)


def _read_tree(root: Mapping[str, Any]) -> Trajectory:
    """One trajectory from a run tree; the root run is read like any other run (a traced LLM
    call at the root, e.g. ``wrap_openai``, is the run's model step)."""
    flat: list[Mapping[str, Any]] = []
    _flatten(root, flat)
    keyed = [(str(r.get("dotted_order") or ""), to_unix_seconds(r.get("start_time")) or 0.0, i, r)
             for i, r in enumerate(flat)]
    use_dotted = all(k[0] for k in keyed[1:])
    keyed[1:] = sorted(keyed[1:], key=lambda k: (k[0] if use_dotted else "", k[1], k[2]))
    problems: list[str] = []
    sl = StepList()
    ut = _user_message(root.get("inputs"))
    if ut is not None:
        sl.add("user", content=ut)
    events: list[ModelTurn | ToolRun] = []
    for _, _, i, r in keyed:
        w = f"run {r.get('id', i)} ({r.get('name')})"
        rt = r.get("run_type")
        s, e, lat = _times(r)
        times = {"start": s, "end": e, "latency_ms": lat,
                 "span_id": None if r.get("id") is None else str(r["id"]),
                 "parent_id": None if r.get("parent_run_id") is None else str(r["parent_run_id"])}
        if rt == "tool":
            events.append(_tool_run(r, problems, w, times))
        elif rt == "llm":
            events.append(_model_turn(r, problems, w, times))
    ro_msgs = mapping(root.get("outputs")).get("messages")
    if not events and is_seq(ro_msgs) and is_message_list(ro_msgs):
        # a root run exported alone (run.json(), no child runs): a LangGraph/agent state in
        # its outputs holds the whole conversation, calls and results included
        sl = StepList()
        for st in read_messages(ro_msgs, problems, where="outputs.messages"):
            sl.steps.append(st)
    build(events, sl)
    final_steps, final = mark_final(sl.steps)
    if final is None:
        ro = root.get("outputs")
        if isinstance(ro, Mapping):
            final = next((v for k, v in ro.items() if k in ("output", "answer", "result") and isinstance(v, str)), None)
    meta: dict[str, Any] = {}
    # the run's case: extra.metadata.case_id (what traceable(metadata=...) and
    # langsmith_extra record), else the dataset example the run was made from
    cid = mapping(mapping(root.get("extra")).get("metadata")).get("case_id",
                                                                 mapping(root.get("metadata")).get("case_id"))
    if cid is None:
        cid = root.get("reference_example_id")
    if cid is not None:
        meta["case_id"] = str(cid)
    if root.get("error"):
        meta["error"] = str(root["error"])
    if problems:
        meta["problems"] = problems
    _, _, root_lat = _times(root)
    root_cost = to_float(root.get("total_cost"))
    costs = [st.cost_usd for st in final_steps if st.cost_usd is not None]
    llm_cost = sum(costs) if costs else None
    rid = root.get("trace_id") or root.get("id")
    return Trajectory(steps=final_steps, final_response=final, total_usage=sum_usage(final_steps),
                      total_cost_usd=root_cost if root_cost is not None else llm_cost, total_latency_ms=root_lat,
                      source_format=FORMAT, trace_id=None if rid is None else str(rid),
                      session_id=None if root.get("session_id") is None else str(root["session_id"]),
                      metadata=meta)
