"""Reader for BFCL result files (Berkeley Function Calling Leaderboard, ``bfcl generate``).

``bfcl generate`` writes one JSON object per line, ``{"id": "parallel_0", "result": ...,
"input_token_count", "output_token_count", "latency"}`` (``result/<model>/.../BFCL_v4_<category>_result.json``).
``result`` is what the model answered:

- prompt-style models: a string holding a Python list of calls,
  ``"[spotify.play(artist=\\"Taylor Swift\\", duration=20), ...]"``; decoded as BFCL's own
  ``default_decode_ast_prompting`` does: code fences and blanks stripped, brackets added when
  missing, parsed with ``ast``, keyword arguments only (BFCL ignores positional ones; they
  are listed as a problem), literal values as Python values, anything else (a variable
  name, an expression) as its source text, which BFCL then treats as a variable;
- function-calling models: a list of ``{func_name: arguments}`` where the arguments are an
  object or a JSON string.

A result that does not decode, or an inference-error line (``"Error during inference:
..."``), is kept as a run with no calls and a problem naming the line, so the entry counts
as wrong (as BFCL counts it). One ``Trajectory`` per
line: one ``tool_call`` step; ``metadata``: ``case_id`` = ``run_id`` = the entry id,
``trial`` 0, ``category`` (the id without its trailing number, e.g. ``live_simple``);
``total_usage`` from the token counts; ``total_latency_ms`` = ``latency`` x 1000.

The expected answers are not in the result file: ``trajcheck.match.bfcl.cases_from_ground_truth``
turns BFCL's ground truth (function docs and possible answers) into the cases.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from ...errors import TraceFormatError
from ...model import Step, ToolCall, Trajectory, Usage
from ._util import as_plain, is_seq, to_float, to_int, usage_or_none

FORMAT = "bfcl"
_ENTRY_NO = re.compile(r"_\d+(?:-\d+)*$")
_RUN_KEYS = ("input_token_count", "output_token_count", "latency")
# every key a ``bfcl generate`` line may hold (an inference error line has only id, result
# and sometimes traceback)
_KNOWN_KEYS = frozenset({"id", "result", "input_token_count", "output_token_count", "latency",
                         "reasoning_content", "traceback", "inference_log"})
_BFCL_ID = re.compile(r"^[a-z][a-z_]*_\d+(?:-\d+)*$")
_INFERENCE_ERROR = "Error during inference"


def category_of(entry_id: str) -> str:
    """BFCL's test category of an entry id: ``simple_python_12`` -> ``simple_python``,
    ``live_multiple_3-1-0`` -> ``live_multiple``."""
    return _ENTRY_NO.sub("", entry_id)


def is_record(obj: Any) -> bool:
    """True for one ``bfcl generate`` line: a string ``id``, a ``result`` (string or list)
    and either one of BFCL's run fields (token counts, latency) or only BFCL's keys with a
    BFCL entry id (an inference-error line: ``{"id": "live_multiple_180-76-0", "result":
    "Error during inference: ..."}``)."""
    if not (isinstance(obj, Mapping) and isinstance(obj.get("id"), str)
            and isinstance(obj.get("result"), (str, list))):
        return False
    if any(k in obj for k in _RUN_KEYS):
        return True
    return set(obj) <= _KNOWN_KEYS and _BFCL_ID.match(obj["id"]) is not None


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _arith(node: ast.expr) -> Any:
    """An arithmetic expression over number literals (BFCL evaluates a ``BinOp`` argument,
    e.g. ``area=3*4``); anything else raises ValueError. No code is run."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        a, b = _arith(node.left), _arith(node.right)
        return _ARITH[type(node.op)](a, b)
    v = ast.literal_eval(node)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError("not a number")
    return v


def _value(node: ast.expr) -> Any:
    """One argument's value as BFCL's ``resolve_ast_by_type`` gives it: a literal as its
    Python value, an arithmetic expression evaluated, a nested call with keywords as
    ``{name: {arg: value}}``, anything else (a variable, another expression) as its text."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.BinOp):
        try:
            return _arith(node)
        except (ValueError, SyntaxError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
            pass
    if isinstance(node, ast.Call) and node.keywords and _name(node.func) is not None:
        return {_name(node.func): {kw.arg: _value(kw.value) for kw in node.keywords if kw.arg is not None}}
    return ast.unparse(node)  # a variable or an expression: BFCL keeps it as text


def _name(func: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(func.id)
    return ".".join(reversed(parts))


def decode_prompt(text: str, problems: list[str], where: str) -> list[ToolCall]:
    """A prompt-style answer (Python call list) -> calls; see the module docstring. An
    answer that does not parse gives no calls and a problem."""
    s = text.strip("`\n ")
    if s.startswith("python\n"):
        s = s[len("python\n"):].strip()
    if not s:
        return []
    if not s.startswith("["):
        s = "[" + s
    if not s.endswith("]"):
        s = s + "]"
    try:
        tree = ast.parse(s, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        problems.append(f"{where}: result is not a Python list of calls ({type(e).__name__}: {e}); "
                        "no calls read")
        return []
    body = tree.body
    elems = [body] if isinstance(body, ast.Call) else list(getattr(body, "elts", []) or [])
    calls: list[ToolCall] = []
    for i, el in enumerate(elems):
        if not isinstance(el, ast.Call) or _name(el.func) is None:
            problems.append(f"{where}: item {i} of the result is not a function call; no calls read")
            return []
        name = _name(el.func) or ""
        if el.args:
            problems.append(f"{where}: call {i} ({name}) has positional arguments; ignored, as BFCL does")
        args = {kw.arg: _value(kw.value) for kw in el.keywords if kw.arg is not None}
        calls.append(ToolCall(name=name, args=args, raw_args=ast.unparse(el), tool_type="function"))
    return calls


def decode_fc(items: list[Any], problems: list[str], where: str) -> list[ToolCall]:
    """A function-calling answer ``[{name: arguments}]`` -> calls (arguments an object or a
    JSON string; one that does not parse is kept with ``args=None``)."""
    calls: list[ToolCall] = []
    for i, it in enumerate(items):
        it = as_plain(it)
        if not isinstance(it, Mapping) or len(it) != 1:
            problems.append(f"{where}: result[{i}] is not a one-key {{name: arguments}} object; ignored")
            continue
        (name, raw), = it.items()
        if isinstance(raw, str):
            try:
                val = json.loads(raw) if raw.strip() else {}
            except ValueError as e:
                problems.append(f"{where}: result[{i}] ({name}): arguments are not valid JSON: {e}")
                calls.append(ToolCall(name=str(name), args=None, raw_args=raw, args_parse_error=str(e)))
                continue
            raw_text: str | None = raw
        else:
            val, raw_text = raw, None
        if not isinstance(val, Mapping):
            problems.append(f"{where}: result[{i}] ({name}): arguments are not an object")
            calls.append(ToolCall(name=str(name), args=None, raw_args=raw_text,
                                  args_parse_error="arguments are not an object"))
            continue
        calls.append(ToolCall(name=str(name), args=dict(val), raw_args=raw_text, tool_type="function"))
    return calls


def read(obj: Any) -> Trajectory:
    """One ``bfcl generate`` line -> ``Trajectory`` (module docstring). Raises
    ``TraceFormatError`` when ``obj`` has no string ``id`` or no ``result``."""
    rec = as_plain(obj)
    if not isinstance(rec, Mapping) or not isinstance(rec.get("id"), str) or "result" not in rec:
        raise TraceFormatError(f"{FORMAT}: a BFCL result line needs a string 'id' and a 'result'")
    problems: list[str] = []
    res = rec["result"]
    if isinstance(res, str) and res.startswith(_INFERENCE_ERROR):
        first = res.splitlines()[0] if res.strip() else res
        problems.append(f"result: the model call failed ({first[:200]}); no calls read, so the "
                        "entry counts as wrong, as BFCL counts it")
        calls = []
    elif isinstance(res, str):
        calls = decode_prompt(res, problems, "result")
    elif is_seq(res):
        if any(is_seq(x) for x in res):
            problems.append("result: a list of turns (a multi-turn category); only single-turn AST "
                            "categories are read; no calls read")
            calls = []
        else:
            calls = decode_fc(list(res), problems, "result")
    else:
        problems.append(f"result: a {type(res).__name__}, not a string or a list; no calls read")
        calls = []
    steps = (Step(index=0, kind="tool_call", tool_calls=tuple(calls)),) if calls else ()
    usage = usage_or_none(Usage(input_tokens=to_int(rec.get("input_token_count")),
                                output_tokens=to_int(rec.get("output_token_count"))))
    lat = to_float(rec.get("latency"))
    meta: dict[str, Any] = {"case_id": rec["id"], "run_id": rec["id"], "trial": 0,
                            "category": category_of(rec["id"])}
    if problems:
        meta["problems"] = problems
    return Trajectory(steps=steps, total_usage=usage,
                      total_latency_ms=None if lat is None else lat * 1000.0,
                      source_format=FORMAT, metadata=meta)


__all__ = ["FORMAT", "category_of", "decode_fc", "decode_prompt", "is_record", "read"]
