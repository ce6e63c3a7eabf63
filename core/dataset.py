"""Dataset files: rows of ``Case`` in JSONL, JSON or YAML, validated by a shipped JSON Schema.

The schema (``trajcheck/schemas/case.schema.json``, JSON Schema Draft 2020-12) mirrors
``trajcheck.model.Case`` / ``ExpectedCall`` and the row in DESIGN.md. Unknown top-level
keys are rejected so typos (``expected_call``) are caught.

Policy (DESIGN.md, "The dataset row"): a bad row is rejected with its line number and the
JSON-Schema path of the fault, and nothing else in the file is lost. ``load_cases_report``
returns the good rows and one message per bad row; ``load_cases`` raises a single
``DatasetError`` listing every bad row. Duplicate case ids are an error (the later row is
rejected). A relative ``initial_state`` path is resolved against the dataset file's folder
and stored resolved in the ``Case``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import DatasetError
from .model import Case

_YAML_SUFFIXES = (".yaml", ".yml")


@lru_cache(maxsize=1)
def case_schema() -> dict[str, Any]:
    """The shipped Case JSON Schema (Draft 2020-12) as a dict."""
    text = resources.files("trajcheck").joinpath("schemas/case.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _json_path(parts: Any) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _rows_json_list(text: str, start: int) -> list[tuple[Any, int]]:
    """Elements of the JSON array starting at ``text[start] == '['`` with their 1-based line numbers."""
    dec = json.JSONDecoder()
    rows: list[tuple[Any, int]] = []
    i = start + 1
    n = len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n or text[i] == "]":
            break
        val, j = dec.raw_decode(text, i)
        rows.append((val, text.count("\n", 0, i) + 1))
        i = j
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i < n and text[i] == ",":
            i += 1
    return rows


def _read_rows(path: Path) -> list[tuple[Any, int]]:
    """``(row, line)`` pairs of a dataset file; raises ``DatasetError`` when the file is unreadable."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"{path}: cannot read dataset file ({e})") from e
    suffix = path.suffix.lower()
    if suffix in _YAML_SUFFIXES:
        import yaml

        try:
            data = yaml.safe_load(text)
            node = yaml.compose(text)
        except yaml.YAMLError as e:
            raise DatasetError(f"{path}: not valid YAML ({e})") from e
        items_node = node
        if isinstance(data, Mapping) and "cases" in data and isinstance(node, yaml.MappingNode):
            data = data["cases"]
            items_node = next((v for k, v in node.value if getattr(k, "value", None) == "cases"), None)
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a YAML list of cases or a mapping with 'cases'")
        lines = [c.start_mark.line + 1 for c in getattr(items_node, "value", [])] \
            if isinstance(items_node, yaml.SequenceNode) else [1] * len(data)
        return list(zip(data, lines + [1] * (len(data) - len(lines))))
    if suffix in (".jsonl", ".ndjson"):
        rows: list[tuple[Any, int]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((json.loads(line), n))
            except ValueError as e:
                rows.append((_BadJSON(str(e)), n))
        return rows
    try:
        data = json.loads(text)
    except ValueError as e:
        raise DatasetError(f"{path}: not valid JSON ({e})") from e
    if isinstance(data, list):
        return _rows_json_list(text, text.index("["))
    if isinstance(data, Mapping) and isinstance(data.get("cases"), list):
        m = re.search(r'"cases"\s*:\s*\[', text)
        if m:
            try:
                return _rows_json_list(text, m.end() - 1)
            except ValueError:
                pass
        return [(r, 1) for r in data["cases"]]
    raise DatasetError(f"{path}: expected a JSON list of cases or an object with 'cases'")


class _BadJSON:
    def __init__(self, msg: str) -> None:
        self.msg = msg


def load_cases_report(path: str | os.PathLike[str]) -> tuple[list[Case], list[str]]:
    """Read a dataset file; return ``(good cases, errors)``.

    ``path``: a ``.jsonl``/``.ndjson`` file (one row per line), a ``.json`` file (a list of
    rows or ``{"cases": [...]}``) or a ``.yaml``/``.yml`` file (same shapes). Each row is
    validated against ``case_schema()``; each error string reads
    ``"<file>:<line>: case <id>: <JSON path>: <message>"``. A row that is not valid JSON, a
    row failing the schema, and a row repeating an earlier id are errors; the other rows are
    returned as ``Case`` objects in file order. Raises ``DatasetError`` only when the file
    as a whole cannot be read or has the wrong top-level shape.
    """
    from jsonschema import Draft202012Validator

    p = Path(path)
    validator = Draft202012Validator(case_schema())
    cases: list[Case] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    for row, line in _read_rows(p):
        where = f"{p}:{line}"
        if isinstance(row, _BadJSON):
            errors.append(f"{where}: not valid JSON ({row.msg})")
            continue
        cid = row.get("id") if isinstance(row, Mapping) else None
        label = f"case {cid!r}" if cid is not None else "case ?"
        errs = sorted(validator.iter_errors(row), key=lambda e: list(map(str, e.absolute_path)))
        if errs:
            for e in errs:
                errors.append(f"{where}: {label}: {_json_path(e.absolute_path)}: {e.message}")
            continue
        sid = str(cid)
        if sid in seen:
            errors.append(f"{where}: {label}: $.id: duplicate case id (first on line {seen[sid]})")
            continue
        seen[sid] = line
        d = dict(row)
        st = d.get("initial_state")
        if isinstance(st, str) and st and not Path(st).is_absolute():
            d["initial_state"] = str((p.parent / st).resolve())
        try:
            cases.append(Case.from_dict(d))
        except DatasetError as e:
            errors.append(f"{where}: {e}")
    return cases, errors


def load_cases(path: str | os.PathLike[str]) -> list[Case]:
    """Read and validate a dataset file (see ``load_cases_report``) and return its cases.

    Raises one ``DatasetError`` listing every bad row (file, line, case id, JSON path,
    message) when any row is bad; no row is silently dropped.
    """
    cases, errors = load_cases_report(path)
    if errors:
        raise DatasetError(f"{path}: {len(errors)} problem(s) in dataset:\n  " + "\n  ".join(errors))
    return cases


__all__ = ["case_schema", "load_cases", "load_cases_report"]
