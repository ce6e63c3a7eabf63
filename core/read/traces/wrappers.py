"""Envelopes that real tools wrap around traces, cut open before format detection.

``unwrap(doc)`` recognises a parsed JSON document that is not itself a trace but holds
traces, and returns the trace objects inside it with a label for each, plus the wrapper's
name (shown by ``trajcheck inspect``). A document that is already a trace returns None.

=============================  ==============================================================
wrapper                        shape (what each unit is)
=============================  ==============================================================
``ADK EvalSet``                ``{"eval_set_id", "eval_cases": [EvalCase]}`` -> each EvalCase
``ADK legacy test file``       ``[{"query", "expected_tool_use", "reference"}]`` (one
                               conversation) or ``[{"name", "data": [...]}]`` -> one run per
                               conversation, calls ``{tool_name, tool_input}``
``ADK Session``                ``{"id", "events": [Event], ...}`` -> the session (vertex
                               reader reads ``events``)
``Gemini generateContent``     ``{"contents": [{"role", "parts"}]}`` request -> the request
``span dump``                  ``{"spans": [span...]}`` (any-agent ``AgentTrace``) -> the spans
``Phoenix REST``               ``{"data": [span...], "next_cursor"}`` -> the spans
``promptfoo eval output``      ``promptfoo eval -o out.json``: ``results.results[i].response``
                               -> each provider response (with the test's ids in metadata)
``LangSmith run payload``      ``{"post": [run], "patch": [run]}`` -> the runs, each patch
                               merged into the posted run with the same ``id``
=============================  ==============================================================

Sources: ADK ``EvalSet`` / ``EvalCase`` / ``Session`` pydantic models and its legacy
``*.test.json`` converter (google/adk-python, ``evaluation/``); Gemini API
``models.generateContent`` request body; any-agent ``AgentTrace``; Phoenix REST
``GET /v1/projects/{id}/spans``; promptfoo ``EvaluateSummaryV3`` output files; the
langsmith-py client's ``/runs/batch`` body. Every wrapper is checked by its own keys, so a
trace that merely has a ``data`` or ``spans`` field of another kind is not cut open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._util import as_plain, is_seq

ADK_EVAL_SET = "ADK EvalSet"
ADK_LEGACY = "ADK legacy test file"
ADK_SESSION = "ADK Session"
GEMINI_REQUEST = "Gemini generateContent request"
SPAN_DUMP = "span dump"
PHOENIX_REST = "Phoenix REST response"
PROMPTFOO_OUTPUT = "promptfoo eval output"
LANGSMITH_PAYLOAD = "LangSmith run payload"


@dataclass(frozen=True)
class Unwrapped:
    """What ``unwrap`` found: ``wrapper`` (a name from this module), ``units`` (the trace
    objects inside, each with a label such as ``eval_cases[0]`` or None when the wrapper is the
    only unit), and ``skipped`` (``(label, reason)`` for entries of the wrapper that hold no
    trace, e.g. a promptfoo result whose provider failed). ``batch``: the units are spans or
    runs that belong together and are handed to their reader as one list."""

    wrapper: str
    units: list[tuple[Any, str | None]]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    batch: bool = False


def _is_span_like(x: Any) -> bool:
    return isinstance(x, Mapping) and "name" in x and (
        isinstance(x.get("context"), Mapping) or "span_id" in x or "spanId" in x)


def _legacy_turn(x: Any) -> bool:
    x = as_plain(x)
    return isinstance(x, Mapping) and "query" in x and (
        "expected_tool_use" in x or "reference" in x or "expected_intermediate_agent_responses" in x)


def is_legacy_turns(obj: Any) -> bool:
    """True for ADK's legacy test file: a non-empty list of ``{query, expected_tool_use?,
    expected_intermediate_agent_responses?, reference?}`` turns of one conversation."""
    return is_seq(obj) and bool(obj) and all(_legacy_turn(x) for x in obj)


def is_legacy_case(obj: Any) -> bool:
    """True for one named conversation of ADK's legacy eval set: ``{name, data: [turns]}``."""
    obj = as_plain(obj)
    return isinstance(obj, Mapping) and isinstance(obj.get("name"), str) and is_legacy_turns(obj.get("data"))


def is_gemini_contents(obj: Any) -> bool:
    """True for a Gemini ``generateContent`` request: ``contents``, a non-empty list of
    ``{role?, parts: [...]}`` objects."""
    c = obj.get("contents") if isinstance(obj, Mapping) else None
    return is_seq(c) and bool(c) and all(isinstance(x, Mapping) and is_seq(x.get("parts")) for x in c)


def is_adk_session(obj: Any) -> bool:
    """True for an ADK ``Session`` dump: an ``events`` list of objects with an ``author``."""
    ev = obj.get("events") if isinstance(obj, Mapping) else None
    return is_seq(ev) and bool(ev) and all(isinstance(e, Mapping) and "author" in e for e in ev)


def _merge_runs(post: Sequence[Any], patch: Sequence[Any]) -> list[dict[str, Any]]:
    """Posted runs with each patch's fields laid over the run of the same id (a patch with no
    posted run is kept as a run of its own)."""
    runs: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for i, r in enumerate(list(post) + list(patch)):
        r = as_plain(r)
        if not isinstance(r, Mapping):
            continue
        key = str(r.get("id")) if r.get("id") is not None else f"#{i}"
        if key in runs:
            # a patch carries the end of the run: outputs, end_time, error; None never erases
            runs[key].update({k: v for k, v in r.items() if v is not None})
        else:
            runs[key] = dict(r)
            order.append(key)
    return [runs[k] for k in order]


def _promptfoo(doc: Mapping[str, Any]) -> Unwrapped | None:
    res = doc.get("results")
    rows = res.get("results") if isinstance(res, Mapping) else None
    if not is_seq(rows) or not all(isinstance(r, Mapping) and ("response" in r or "testIdx" in r) for r in rows):
        return None
    units: list[tuple[Any, str | None]] = []
    skipped: list[tuple[str, str]] = []
    for i, r in enumerate(rows):
        where = f"results.results[{i}]"
        resp = as_plain(r.get("response"))
        if not isinstance(resp, Mapping) or "output" not in resp:
            err = r.get("error") or (resp.get("error") if isinstance(resp, Mapping) else None)
            skipped.append((where, "no provider response" + (f" (error: {str(err)[:200]})" if err else "")))
            continue
        md: dict[str, Any] = dict(resp.get("metadata") or {}) if isinstance(resp.get("metadata"), Mapping) else {}
        for k_src, k_dst in (("id", "promptfoo_result_id"), ("testIdx", "test_idx"), ("promptIdx", "prompt_idx"),
                             ("success", "success"), ("score", "score")):
            if r.get(k_src) is not None:
                md.setdefault(k_dst, r[k_src])
        prov = r.get("provider")
        pid = prov.get("id") if isinstance(prov, Mapping) else prov
        if isinstance(pid, str):
            md.setdefault("provider", pid)
        tc = r.get("testCase")
        tmd = tc.get("metadata") if isinstance(tc, Mapping) else None
        vars_ = r.get("vars")
        for src in (tmd, vars_):
            if isinstance(src, Mapping) and src.get("case_id") is not None:
                md.setdefault("case_id", src["case_id"])
        unit = dict(resp)
        unit["metadata"] = md
        prompt = r.get("prompt")
        raw = prompt.get("raw") if isinstance(prompt, Mapping) else None
        if isinstance(raw, str):
            unit["prompt"] = raw
        units.append((unit, where))
    return Unwrapped(PROMPTFOO_OUTPUT, units, skipped)


def unwrap(doc: Any) -> Unwrapped | None:
    """The traces inside a wrapper document (see the module table), or None for anything else.

    ``doc``: one parsed JSON value (a whole ``.json`` file, or one JSONL line). Never raises;
    a wrapper whose entries hold no trace gives those entries in ``skipped``.
    """
    doc = as_plain(doc)
    if isinstance(doc, Mapping):
        if "eval_set_id" in doc or "evalSetId" in doc:
            cases = doc.get("eval_cases", doc.get("evalCases"))
            if is_seq(cases):
                return Unwrapped(ADK_EVAL_SET, [(c, f"eval_cases[{i}]") for i, c in enumerate(cases)])
        if is_adk_session(doc):
            return Unwrapped(ADK_SESSION, [(doc, None)])
        if is_gemini_contents(doc):
            return Unwrapped(GEMINI_REQUEST, [(doc, None)])
        spans = doc.get("spans")
        if is_seq(spans) and spans and all(_is_span_like(as_plain(s)) for s in spans):
            return Unwrapped(SPAN_DUMP, [(s, f"spans[{i}]") for i, s in enumerate(spans)], batch=True)
        data = doc.get("data")
        if is_seq(data) and data and ("next_cursor" in doc or "nextCursor" in doc) and all(
                _is_span_like(as_plain(s)) for s in data):
            return Unwrapped(PHOENIX_REST, [(s, f"data[{i}]") for i, s in enumerate(data)], batch=True)
        if "post" in doc or "patch" in doc:
            post, patch = doc.get("post") or [], doc.get("patch") or []
            if is_seq(post) and is_seq(patch) and (post or patch) and all(
                    isinstance(as_plain(r), Mapping) and "id" in as_plain(r) for r in list(post) + list(patch)) \
                    and set(doc) <= {"post", "patch"}:
                return Unwrapped(LANGSMITH_PAYLOAD, [(r, None) for r in _merge_runs(post, patch)], batch=True)
        if "evalId" in doc or ("results" in doc and "config" in doc):
            got = _promptfoo(doc)
            if got is not None:
                return got
    if is_seq(doc) and doc:
        if is_legacy_turns(doc):
            return Unwrapped(ADK_LEGACY, [(doc, None)])
        if all(is_legacy_case(x) for x in doc):
            return Unwrapped(ADK_LEGACY, [(x, f"[{i}] ({as_plain(x)['name']})") for i, x in enumerate(doc)])
    return None


__all__ = ["Unwrapped", "is_adk_session", "is_gemini_contents", "is_legacy_case", "is_legacy_turns", "unwrap"]
