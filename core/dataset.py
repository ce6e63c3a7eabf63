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

from .errors import DatasetError, TrajcheckError
from .model import Case, _unknown_key, did_you_mean

_YAML_SUFFIXES = (".yaml", ".yml")


@lru_cache(maxsize=1)
def case_schema() -> dict[str, Any]:
    """The shipped Case JSON Schema (Draft 2020-12) as a dict."""
    text = resources.files("trajcheck").joinpath("schemas/case.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _json_path(parts: Any) -> str:
    """``expected_calls[0].args_mode`` from a JSON-Schema path (0-based; "" for the row itself)."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _at(path: str, msg: str) -> str:
    return f"{path}: {msg}" if path else msg


def _schema_errors(validator: Any, row: Any) -> list[str]:
    """One message per schema fault of ``row``, each at the deepest relevant place.

    A ``oneOf``/``anyOf`` failure (an expected call is a name *or* an object) is reported by
    jsonschema's ``best_match`` inside its alternatives, so a bad ``args_mode`` reads
    ``expected_calls[0].args_mode: 'expected_key' is not one of [...]`` instead of
    ``... is not valid under any of the given schemas``. An unknown key is named with the
    closest known one.
    """
    from jsonschema.exceptions import best_match

    out: list[tuple[list[str], str]] = []
    for e in validator.iter_errors(row):
        if e.context:
            e = best_match([e]) or e
        if e.validator == "additionalProperties" and isinstance(e.instance, Mapping):
            known = set((e.schema.get("properties") or {}) if isinstance(e.schema, Mapping) else ())
            for k in e.instance:
                if k not in known:
                    out.append((list(map(str, e.absolute_path)),
                                _at(_json_path(e.absolute_path), _unknown_key(str(k), known))))
            continue
        msg = e.message
        if e.context and all(c.validator == "type" and not c.relative_path for c in e.context):
            types = [str(c.validator_value) for c in e.context]
            msg = f"{e.instance!r} is not of type {' or '.join(types)}"
        out.append((list(map(str, e.absolute_path)), _at(_json_path(e.absolute_path), msg)))
    return [m for _, m in sorted(out, key=lambda x: x[0])]


def _match_errors(row: Mapping[str, Any]) -> list[str]:
    """Unknown or malformed matcher specs in a valid row's ``expected_calls[i].match``.

    Each spec is resolved with ``trajcheck.matchers.get_matcher`` at load time, so a typo
    (``"contians"``) is reported with its file, line and case instead of at scoring time.
    A ``semantic`` or ``judge`` spec needs no scorer here: only the spec is checked.
    """
    from .matchers import get_matcher, known_matchers

    errors: list[str] = []
    for i, c in enumerate(row.get("expected_calls") or ()):
        if not isinstance(c, Mapping):
            continue
        for arg, spec in (c.get("match") or {}).items():
            try:
                get_matcher(spec)
            except TrajcheckError as e:
                msg = str(e)
                name = spec if isinstance(spec, str) else spec.get("type") if isinstance(spec, Mapping) else None
                known = known_matchers()
                if isinstance(name, str) and name not in known:
                    msg = f"unknown matcher {name!r}" + (did_you_mean(name, known)
                                                         or f"; known matchers: {', '.join(known)}")
                errors.append(f"expected_calls[{i}].match.{arg}: {msg}")
    return errors


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
    validated against ``case_schema()`` (each fault at its deepest relevant place, see
    ``_schema_errors``) and its ``match`` specs against the matcher registry; each error
    string reads ``"<file>:<line>: case <id>: <path>: <message>"`` with a 0-based
    JSON-path-like ``<path>`` such as ``expected_calls[0].match.title`` (left out for the
    row itself). A row that is not valid JSON, a row failing the schema, a row with an
    unknown matcher and a row repeating an earlier id are errors; the other rows are
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
        errs = _schema_errors(validator, row) or _match_errors(row)
        if errs:
            errors.extend(f"{where}: {label}: {m}" for m in errs)
            continue
        sid = str(cid)
        if sid in seen:
            errors.append(f"{where}: {label}: id: duplicate case id (first on line {seen[sid]})")
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
