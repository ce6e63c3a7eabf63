"""Reader for LangSmith run trees exported as dicts (research notes traces.md §4).

Accepted: a root run dict with nested ``child_runs``; a flat list of runs linked by
``parent_run_id`` (every root in the list and its descendants go into one trajectory; use
``read_all`` for one trajectory per root); ``langsmith`` ``Run``/``RunTree`` objects via
``model_dump()``/``dict()``.

Runs are flattened depth-first and ordered by ``dotted_order`` (lexicographic order is
execution order), falling back to ``start_time`` then file order. Mapping:

- ``tool`` run -> a ``tool_call`` step (name = run ``name``, args = ``inputs``, id =
  ``extra.tool_call_id``) followed by a ``tool_result`` (``outputs.output``, unwrapping an
  lc-serialised ToolMessage; ``is_error`` = ``error`` is set or the ToolMessage status is
  "error"; otherwise False, LangSmith having an error channel);
- ``llm`` run -> an ``assistant`` step with the generated text, usage (``outputs.usage_metadata``,
  then the generation message's ``usage_metadata``, then ``extra.metadata.usage_metadata``,
  then ``prompt_tokens``/``completion_tokens``/``total_tokens``), ``total_cost`` (USD),
  model (``extra.metadata.ls_model_name`` or ``invocation_params.model``); tool calls the
  model requested are not steps (the tool runs are the executed calls);
- the root run's string input (``input``/``question``/``query`` or a sole string value) ->
  the first ``user`` step. Other chain runs add no steps.

Each step's ``latency_ms`` = ``end_time - start_time``; the trajectory's latency is the
root's, its cost the root's ``total_cost`` or else the sum over LLM runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import TraceFormatError
from ..model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    get,
    is_seq,
    mapping,
    parse_args,
    sum_usage,
    text_of,
    to_float,
    to_int,
    to_unix_seconds,
    usage_or_none,
)
from .langchain import normalize_message
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
    strs = [v for v in inputs.values() if isinstance(v, str)]
    return strs[0] if len(strs) == 1 else None


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


def _read_tree(root: Mapping[str, Any]) -> Trajectory:
    flat: list[Mapping[str, Any]] = []
    _flatten(root, flat)
    body = flat[1:]
    keyed = [(str(r.get("dotted_order") or ""), to_unix_seconds(r.get("start_time")) or 0.0, i, r)
             for i, r in enumerate(body)]
    use_dotted = all(k[0] for k in keyed)
    keyed.sort(key=lambda k: (k[0] if use_dotted else "", k[1], k[2]))
    problems: list[str] = []
    sl = StepList()
    ut = _user_text(root.get("inputs"))
    if ut is not None:
        sl.add("user", content=ut)
    llm_cost = None
    for _, _, i, r in keyed:
        w = f"run {r.get('id', i)} ({r.get('name')})"
        rt = r.get("run_type")
        s, e, lat = _times(r)
        rid = None if r.get("id") is None else str(r["id"])
        pid = None if r.get("parent_run_id") is None else str(r["parent_run_id"])
        if rt == "tool":
            name = r.get("name")
            name = name if isinstance(name, str) else str(name or "")
            inputs = r.get("inputs")
            if isinstance(inputs, Mapping) and set(inputs) == {"input"} and isinstance(inputs["input"], str):
                args, raw, err = parse_args(inputs["input"], [], w)
                if args is None:
                    args, raw, err = {"input": inputs["input"]}, None, None
            else:
                args, raw, err = parse_args(inputs, problems, w)
            extra = mapping(r.get("extra"))
            cid = extra.get("tool_call_id")
            cid = None if cid is None else str(cid)
            sl.call([ToolCall(name=name, args=args, call_id=cid, raw_args=raw, args_parse_error=err)],
                    start_time=s, end_time=e, latency_ms=lat, span_id=rid, parent_id=pid)
            outs = r.get("outputs")
            output: Any = (outs.get("output", outs) or None) if isinstance(outs, Mapping) else outs
            status = None
            m = normalize_message(output) if isinstance(output, Mapping) and (
                "lc" in output or "tool_call_id" in output) else None
            if m is not None:
                status = m.get("status")
                c = m.get("content")
                output = text_of(c) if is_seq(c) else c
                if cid is None and m.get("tool_call_id") is not None:
                    cid = str(m["tool_call_id"])
            error = r.get("error")
            is_err = bool(error) or status == "error"
            sl.result(ToolResult(call_id=cid, name=name, output=output, is_error=is_err,
                                 error=str(error) if error else (output if is_err and isinstance(output, str) else None)),
                      start_time=s, end_time=e, span_id=rid, parent_id=pid)
        elif rt == "llm":
            outs = mapping(r.get("outputs"))
            msg = _gen_message(outs) or {}
            text = text_of(msg.get("content"))
            extra = mapping(r.get("extra"))
            md = mapping(extra.get("metadata"))
            ip = mapping(extra.get("invocation_params"))
            model = md.get("ls_model_name") or ip.get("model") or ip.get("model_name")
            cost = to_float(r.get("total_cost"))
            if cost is not None:
                llm_cost = (llm_cost or 0.0) + cost
            has_calls = bool(msg.get("tool_calls"))
            sl.add("assistant", content=text if text else None, usage=_llm_usage(r), cost_usd=cost,
                   model=model if isinstance(model, str) else None, latency_ms=lat, start_time=s, end_time=e,
                   span_id=rid, parent_id=pid, metadata={"requested_tool_calls": True} if has_calls else {})
            if r.get("error"):
                problems.append(f"{w}: llm run failed: {str(r['error'])[:200]}")
    steps = sl.steps
    # A final response never comes from an LLM turn that requested tools.
    from dataclasses import replace
    cand = [st for st in steps if st.kind == "assistant" and st.content and not st.metadata.get("requested_tool_calls")]
    final = cand[-1].content if cand else None
    if cand:
        steps[cand[-1].index] = replace(cand[-1], kind="final_response")
    final_steps = tuple(steps)
    if final is None:
        ro = root.get("outputs")
        if isinstance(ro, Mapping):
            final = next((v for k, v in ro.items() if k in ("output", "answer", "result") and isinstance(v, str)), None)
    meta: dict[str, Any] = {}
    if root.get("error"):
        meta["error"] = str(root["error"])
    if problems:
        meta["problems"] = problems
    _, _, root_lat = _times(root)
    root_cost = to_float(root.get("total_cost"))
    rid = root.get("trace_id") or root.get("id")
    return Trajectory(steps=tuple(final_steps), final_response=final, total_usage=sum_usage(final_steps),
                      total_cost_usd=root_cost if root_cost is not None else llm_cost, total_latency_ms=root_lat,
                      source_format=FORMAT, trace_id=None if rid is None else str(rid),
                      session_id=None if root.get("session_id") is None else str(root["session_id"]),
                      metadata=meta)
