"""Reader for Inspect AI eval logs (``inspect_ai.log``: ``EvalLog`` / ``EvalSample``).

Accepted: a log in Inspect's JSON format (``{"version", "status", "eval", "samples": [...],
...}``), one ``EvalSample`` object, or a ``.eval`` log: a zip archive holding ``header.json``
and ``samples/<id>_epoch_<n>.json`` members, stored, deflated or zstd-compressed (zip method
93, read with ``zstandard``; see ``load_eval_zip``). One run per sample and epoch:
``metadata`` gets ``case_id`` = the sample id, ``trial`` = the epoch, ``run_id`` = the
sample's ``uuid`` (else ``<id>-<epoch>``), and the sample's ``scores``.

Mapping of a sample's ``messages`` (``ChatMessage`` fields): ``system`` / ``user`` -> steps;
an ``assistant`` message is one model turn: its ``tool_calls`` (``id``, ``function``,
``arguments``; ``parse_error`` when the model's JSON did not parse) stay in one step with the
message text; a ``tool`` message (``tool_call_id``, ``function``, ``error`` =
``{type, message}`` or null) is a result, failed when ``error`` is set. ``content`` may be a
string or a list of content parts (``text``, ``reasoning`` -> a ``reasoning`` step); strings
``attachment://<hash>`` are resolved from the sample's ``attachments``.

Usage, once per model call: each ``model`` event's ``output.usage`` is the usage of the
assistant message whose ``id`` it produced (``output.choices[0].message.id``); model events
that produced no message of the conversation (a scorer's model calls) are not counted.
``input_tokens`` includes cache reads and writes: when ``total_tokens`` equals input + output
+ cache tokens, the provider's input excluded the cache and the cache tokens are added.
Latency per turn is the model event's ``output.time`` (seconds). Without model events, the
sample's ``model_usage`` (summed over models) is the run total.

A sample that is not an agent run is not read and is reported with its reason: a sample
that failed with an ``error`` (the run crashed) and a sample with no model turn (no
assistant message). A log with no samples (written with ``log_samples=False``, or still
running) is reported the same way.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import TraceFormatError
from ...model import ToolCall, ToolResult, Trajectory, Usage
from ._util import (
    StepList,
    as_plain,
    is_seq,
    mapping,
    mark_last_reply,
    parse_args,
    sum_usage,
    to_float,
    to_int,
    usage_or_none,
)

FORMAT = "inspect_ai"
_ZSTD = 93  # zip compression method id of Zstandard (APPNOTE 4.4.5)
_ATTACH = "attachment://"


def is_log(obj: Any) -> bool:
    """True for an ``EvalLog`` (``eval`` object with ``task`` / ``eval_id``, plus ``version`` or
    ``samples``) or one ``EvalSample`` (``id``, ``epoch``, ``input``, ``messages``)."""
    if not isinstance(obj, Mapping):
        return False
    ev = obj.get("eval")
    if isinstance(ev, Mapping) and ("task" in ev or "eval_id" in ev) and ("version" in obj or "samples" in obj):
        return True
    return is_sample(obj)


def is_sample(obj: Any) -> bool:
    """True for one ``EvalSample`` object."""
    return isinstance(obj, Mapping) and all(k in obj for k in ("id", "epoch", "input")) and is_seq(obj.get("messages"))


# ----------------------------------------------------------------------------- .eval zip files


def is_eval_zip(path: Path) -> bool:
    """True for a file whose bytes start as a zip archive (``.eval`` logs are zips)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    if info.compress_type != _ZSTD:
        return zf.read(info)
    try:
        import zstandard
    except ImportError as e:  # pragma: no cover - zstandard is a core dependency
        raise TraceFormatError(f"{path}: member {info.filename} is zstd-compressed; install zstandard "
                               "(pip install zstandard) to read it") from e
    # zipfile cannot decompress method 93: take the raw bytes after the local file header
    fp = zf.fp
    if fp is None:
        raise TraceFormatError(f"{path}: archive closed while reading {info.filename}")
    fp.seek(info.header_offset)
    head = fp.read(30)
    if head[:4] != b"PK\x03\x04":
        raise TraceFormatError(f"{path}: member {info.filename} has no local file header")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    try:
        # Inspect writes several zstd frames per member when it is large: read across them
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as r:
            return r.read()
    except zstandard.ZstdError as e:
        raise TraceFormatError(f"{path}: member {info.filename} is not valid zstd data: {e}") from e


def load_eval_zip(path: str | Path) -> dict[str, Any]:
    """An ``.eval`` log read into the JSON log shape: ``header.json`` (else
    ``_journal/start.json``) with ``samples`` = every ``samples/*.json`` member, in archive
    order. Raises ``TraceFormatError`` naming the file and member when the archive or a member
    cannot be read or is not JSON."""
    p = Path(path)
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError) as e:
        raise TraceFormatError(f"{p}: not a readable .eval (zip) log: {e}") from e
    with zf:
        infos = {i.filename: i for i in zf.infolist()}

        def load(name: str) -> Any:
            try:
                return json.loads(_member(zf, infos[name], p).decode("utf-8"))
            except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError, RecursionError) as e:
                raise TraceFormatError(f"{p}: member {name} is not a readable JSON document: {e}") from e

        head_name = "header.json" if "header.json" in infos else (
            "_journal/start.json" if "_journal/start.json" in infos else None)
        if head_name is None and not any(n.startswith("samples/") for n in infos):
            raise TraceFormatError(f"{p}: a zip archive without header.json or samples/; not an Inspect AI log")
        doc = dict(mapping(load(head_name))) if head_name else {}
        doc["samples"] = [load(n) for n in infos if n.startswith("samples/") and n.endswith(".json")]
        if not isinstance(doc.get("eval"), Mapping):
            doc["eval"] = {"task": None}
        doc.setdefault("version", None)
        return doc


# ----------------------------------------------------------------------------- reading


def _resolve(v: Any, att: Mapping[str, Any]) -> Any:
    if isinstance(v, str) and v.startswith(_ATTACH):
        return att.get(v[len(_ATTACH):], v)
    if isinstance(v, Mapping):
        return {k: _resolve(x, att) for k, x in v.items()}
    if is_seq(v):
        return [_resolve(x, att) for x in v]
    return v


def _text(content: Any) -> tuple[str | None, list[str]]:
    """``(text, reasoning parts)`` of a message ``content``."""
    if content is None or isinstance(content, str):
        return content, []
    texts: list[str] = []
    reasoning: list[str] = []
    for part in content if is_seq(content) else ():
        part = mapping(part)
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "reasoning" and isinstance(part.get("reasoning"), str):
            reasoning.append(part["reasoning"])
    return ("\n".join(texts) if texts else None), reasoning


def usage_of(u: Any) -> Usage | None:
    """A ``Usage`` from Inspect's ``ModelUsage``; see the module docstring for cache tokens."""
    u = mapping(u)
    if not u:
        return None
    inp, out, tot = to_int(u.get("input_tokens")), to_int(u.get("output_tokens")), to_int(u.get("total_tokens"))
    cr, cw = to_int(u.get("input_tokens_cache_read")), to_int(u.get("input_tokens_cache_write"))
    cache = (cr or 0) + (cw or 0)
    if inp is not None and tot is not None and cache and tot == inp + (out or 0) + cache:
        inp += cache
    return usage_or_none(Usage(input_tokens=inp, output_tokens=out, total_tokens=tot, cache_read_tokens=cr,
                               cache_write_tokens=cw, reasoning_tokens=to_int(u.get("reasoning_tokens"))))


def _model_calls(events: Any) -> dict[str, dict[str, Any]]:
    """Message id -> ``{usage, latency_ms, model}`` from the sample's ``model`` events."""
    out: dict[str, dict[str, Any]] = {}
    for e in events if is_seq(events) else ():
        e = mapping(e)
        if e.get("event") != "model":
            continue
        o = mapping(e.get("output"))
        choices = o.get("choices") if is_seq(o.get("choices")) else []
        mid = mapping(mapping(choices[0]).get("message")).get("id") if choices else None
        if mid is None:
            continue
        t = to_float(o.get("time"))
        out[str(mid)] = {"usage": usage_of(o.get("usage")), "latency_ms": t * 1000.0 if t is not None else None,
                         "model": o.get("model") if isinstance(o.get("model"), str) else None}
    return out


def sample_problem(s: Mapping[str, Any]) -> str | None:
    """Why a sample is not an agent run (see the module docstring), or None when it is one."""
    err = s.get("error")
    if err:
        msg = mapping(err).get("message") if isinstance(err, Mapping) else err
        return f"the sample failed with an error ({str(msg).strip().splitlines()[0] if msg else 'no message'}); " \
               "not an agent run"
    if not any(mapping(m).get("role") == "assistant" for m in s.get("messages") or ()):
        return "the sample has no model turn (no assistant message)"
    return None


def read_sample(s: Any) -> Trajectory:
    """One ``EvalSample`` as a trajectory (whether or not ``sample_problem`` objects)."""
    s = as_plain(s)
    att = mapping(s.get("attachments"))
    problems: list[str] = []
    calls_info = _model_calls(_resolve(s.get("events"), att))
    sl = StepList()
    names: dict[str, str] = {}
    for i, m in enumerate(s.get("messages") or ()):
        m = _resolve(mapping(m), att)
        w = f"messages[{i}]"
        role = m.get("role")
        text, reasoning = _text(m.get("content"))
        if role in ("system", "user"):
            sl.add(role, content=text)
            continue
        if role == "assistant":
            for r in reasoning:
                sl.add("reasoning", content=r)
            info = calls_info.get(str(m.get("id")), {})
            kw = {k: v for k, v in info.items() if v is not None}
            if "model" not in kw and isinstance(m.get("model"), str):
                kw["model"] = m["model"]
            calls: list[ToolCall] = []
            for j, tc in enumerate(m.get("tool_calls") or ()):
                tc = mapping(tc)
                cw = f"{w}.tool_calls[{j}]"
                name = tc.get("function")
                if not isinstance(name, str) or not name:
                    problems.append(f"{cw}: field 'function' is missing")
                    name = "" if name is None else str(name)
                cid = str(tc["id"]) if tc.get("id") is not None else None
                if tc.get("parse_error"):
                    err = f"arguments did not parse: {tc['parse_error']}"
                    problems.append(f"{cw}: {err}")
                    raw = tc.get("arguments")
                    calls.append(ToolCall(name=name, args=None, call_id=cid, args_parse_error=err,
                                          raw_args=raw if isinstance(raw, str) else None))
                elif tc.get("arguments") is None:
                    problems.append(f"{cw}: field 'arguments' is missing; arguments unknown")
                    calls.append(ToolCall(name=name, args=None, call_id=cid, args_parse_error="arguments not recorded"))
                else:
                    args, raw_s, perr = parse_args(tc["arguments"], problems, cw)
                    calls.append(ToolCall(name=name, args=args, call_id=cid, raw_args=raw_s, args_parse_error=perr))
                if cid:
                    names[cid] = name
            if calls:
                sl.call(calls, content=text or None, **kw)
            else:
                sl.add("assistant", content=text, **kw)
            continue
        if role == "tool":
            cid = str(m["tool_call_id"]) if m.get("tool_call_id") is not None else None
            err = m.get("error")
            failed = err is not None
            etext = None
            if failed:
                e = mapping(err)
                etext = str(e.get("message") or e.get("type") or err)
            name = m.get("function") if isinstance(m.get("function"), str) else names.get(cid or "")
            sl.result(ToolResult(call_id=cid, name=name, output=text if text is not None else m.get("content"),
                                 is_error=failed, error=etext))
            continue
        problems.append(f"{w}: unknown role {role!r}; skipped")
    steps, final = mark_last_reply(list(sl.steps))
    fs = tuple(steps)
    total = sum_usage(fs)
    if total is None:
        for u in mapping(s.get("model_usage")).values():
            uu = usage_of(u)
            if uu is not None:
                total = uu if total is None else total + uu
    sid, epoch = s.get("id"), s.get("epoch")
    meta: dict[str, Any] = {"case_id": str(sid), "trial": epoch,
                            "run_id": str(s.get("uuid") or f"{sid}-{epoch}")}
    if s.get("scores") is not None:
        meta["scores"] = s["scores"]
    if s.get("limit"):
        meta["limit"] = s["limit"]
    if problems:
        meta["problems"] = problems
    tt = to_float(s.get("total_time"))
    return Trajectory(steps=fs, final_response=final, total_usage=total,
                      total_latency_ms=tt * 1000.0 if tt is not None else None, source_format=FORMAT, metadata=meta)


@dataclass
class LabeledRead:
    """What ``read_labeled`` read: ``(trajectory, where)`` pairs, the ``skipped`` messages
    and ``references``: each read sample's ``metadata`` (as logged for that epoch) by its
    ``where``, where a ``"trajcheck"`` block is the sample's case (``host_exports.inspect_cases``)."""

    trajectories: list[tuple[Trajectory, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    references: dict[str, Any] = field(default_factory=dict)


def read_labeled(items: Iterable[tuple[Any, str]]) -> LabeledRead:
    """Read logs or samples given with their locations; one trajectory per runnable sample,
    labelled ``<where> sample <id> epoch <n>``. Samples that are not runs and logs without
    samples go to ``skipped`` with their reason."""
    out = LabeledRead()
    for obj, where in items:
        d = as_plain(obj)
        if not is_log(d):
            out.skipped.append(f"{where}: not an Inspect AI log or sample; skipped")
            continue
        samples = [d] if is_sample(d) else list(d.get("samples") or ())
        if not samples:
            status = d.get("status")
            out.skipped.append(f"{where}: the log holds no samples (status {status!r}; written with "
                               "log_samples=False or not finished); no runs")
            continue
        for s in samples:
            s = as_plain(s)
            label = f"{where} sample {mapping(s).get('id')} epoch {mapping(s).get('epoch')}"
            if not is_sample(s):
                out.skipped.append(f"{label}: not an Inspect AI sample; skipped")
                continue
            why = sample_problem(s)
            if why is not None:
                out.skipped.append(f"{label}: {why}; skipped")
                continue
            out.trajectories.append((read_sample(s), label))
            md = s.get("metadata")
            if md:
                out.references[label] = md
    return out


def read(obj: Any) -> Trajectory:
    """One sample, or a log holding exactly one runnable sample, as a trajectory. Raises
    ``TraceFormatError`` otherwise (use ``trajcheck.read.traces.load`` for a log of many samples)."""
    res = read_labeled([(obj, "<input>")])
    if len(res.trajectories) != 1:
        why = "; ".join(res.skipped) if res.skipped else f"{len(res.trajectories)} runnable samples"
        raise TraceFormatError(f"{FORMAT}: expected one runnable sample: {why}")
    return res.trajectories[0][0]


__all__ = ["FORMAT", "LabeledRead", "is_eval_zip", "is_log", "is_sample", "load_eval_zip", "read", "read_labeled",
           "read_sample", "sample_problem", "usage_of"]
