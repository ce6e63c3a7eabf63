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
import math
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError, TrajcheckError
from ..model import Case, _unknown_key, did_you_mean
from . import limits
from .dataset_rows import BOM, BadJSON, read_rows, rows_of_blocks

if TYPE_CHECKING:  # pragma: no cover
    from .case_store import CaseStore

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


_FAST: list[Any] = []
_BUILD_LOCK = threading.RLock()  # guards the validators' one-time build (_FAST, _SLOW)


def _fast_validator() -> Any:
    """A compiled validator of the case schema (jsonschema-rs, a core dependency) used only to
    tell valid rows apart quickly -- about a hundred times faster than ``jsonschema`` on
    large datasets -- or None when it is not installed. Invalid rows are always explained
    by ``jsonschema`` (its messages and paths)."""
    if not _FAST:
        with _BUILD_LOCK:  # hosts load cases from threads: built once
            if not _FAST:
                try:
                    import jsonschema_rs

                    _FAST.append(jsonschema_rs.validator_for(case_schema()))
                except Exception:  # not installed (or cannot compile the schema): jsonschema alone
                    _FAST.append(None)
    return _FAST[0]


_SLOW: list[Any] = []


def _slow_validator() -> Any:
    """``jsonschema``'s validator of the case schema, which explains invalid rows; built (and
    ``jsonschema`` imported, ~0.05 s) only when a row needs explaining or jsonschema-rs is
    not installed."""
    if not _SLOW:
        with _BUILD_LOCK:
            if not _SLOW:
                from jsonschema import Draft202012Validator

                _SLOW.append(Draft202012Validator(case_schema()))
    return _SLOW[0]


def _schema_errors(row: Any) -> list[str]:
    """One message per schema fault of ``row``, each at the deepest relevant place.

    A ``oneOf``/``anyOf`` failure (an expected call is a name *or* an object) is reported by
    jsonschema's ``best_match`` inside its alternatives, so a bad ``args_mode`` reads
    ``expected_calls[0].args_mode: 'expected_key' is not one of [...]`` instead of
    ``... is not valid under any of the given schemas``. An unknown key is named with the
    closest known one.
    """
    fast = _fast_validator()
    if fast is not None and fast.is_valid(row):
        return []  # a valid row has no faults to explain; only invalid rows take the slow path
    from jsonschema.exceptions import best_match

    out: list[tuple[list[str], str]] = []
    for e in _slow_validator().iter_errors(row):
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

    Each spec is resolved with ``trajcheck.match.matchers.get_matcher`` at load time, so a typo
    (``"contians"``) is reported with its file, line and case instead of at scoring time.
    A ``semantic`` or ``judge`` spec needs no scorer here: only the spec is checked.
    """
    calls = row.get("expected_calls") or ()
    for c in calls:
        if (type(c) is dict or isinstance(c, Mapping)) and c.get("match"):
            break
    else:
        return []  # no matcher spec to check
    from ..match.matchers import get_matcher, known_matchers

    errors: list[str] = []
    for i, c in enumerate(calls):
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


def _value_faults(row: Any) -> list[str]:
    """Values no dataset row may hold, by JSON path: nesting deeper than ``limits.MAX_DEPTH``
    and numbers that are not finite (``NaN``, ``Infinity``: not JSON numbers, and every
    comparison with them is false, so a ``threshold: NaN`` would pass every schema bound).
    Too deep a row is reported as such whatever else it holds; otherwise the first
    non-finite number of a depth-first walk (last key first) is named.

    One walk over plain JSON values (dicts, lists, scalars) does both checks and spells a
    path only for the value it reports; other containers take ``_value_faults_general``."""
    limit = limits.MAX_DEPTH
    # (value, depth, parent entry, key) -- the path is spelled from the parent chain on demand
    todo: list[tuple[Any, int, Any, Any]] = [(row, 0, None, None)]
    bad: Any = None
    while todo:
        entry = todo.pop()
        v, d = entry[0], entry[1]
        tv = type(v)
        if tv is dict:
            if d >= limit:
                return [f"nested deeper than {limit} levels"]
            todo.extend((x, d + 1, entry, k) for k, x in v.items())
        elif tv is list:
            if d >= limit:
                return [f"nested deeper than {limit} levels"]
            todo.extend((x, d + 1, entry, i) for i, x in enumerate(v))
        elif tv is float:
            if bad is None and not math.isfinite(v):
                bad = entry
        elif not (tv is str or tv is int or tv is bool or v is None):
            return _value_faults_general(row)
    if bad is None:
        return []
    chain = []
    e = bad
    while e[2] is not None:
        chain.append((type(e[2][0]) is list, e[3]))
        e = e[2]
    where = ""
    for is_list, k in reversed(chain):
        where = f"{where}[{k}]" if is_list else (f"{where}.{k}" if where else str(k))
    return [_at(where, f"{bad[0]!r} is not a finite number")]


def _value_faults_general(row: Any) -> list[str]:
    """``_value_faults`` for rows holding other containers (mappings, tuples)."""
    if limits.depth_exceeds(row):
        return [f"nested deeper than {limits.MAX_DEPTH} levels"]
    todo: list[tuple[Any, str]] = [(row, "")]
    while todo:
        v, where = todo.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return [_at(where, f"{v!r} is not a finite number")]
        if isinstance(v, Mapping):
            todo.extend((x, f"{where}.{k}" if where else str(k)) for k, x in v.items())
        elif isinstance(v, list):
            todo.extend((x, f"{where}[{i}]") for i, x in enumerate(v))
    return []


def _scoring_errors(case: Case) -> list[str]:
    """Faults of a valid row that would otherwise only show when a run is scored: the
    forbidden-sequence rules, and the row's matchers applied to its own expected values
    (an invalid regex as the expected value, a non-string ``contains``, a non-list
    ``one_of``...). The row is scored once against a run made of its own expected calls and
    once against an empty run, with stand-in semantic and judge models; any trajcheck error
    is reported instead of aborting a later ``eval``."""
    from ..match.matchers import MatchContext
    from ..metrics.sequences import validate_forbidden_rules
    from ..model import Step, ToolCall, Trajectory
    from ..score.suite import score_run

    try:
        if case.forbidden_sequences:
            validate_forbidden_rules(case.forbidden_sequences)
        ctx = MatchContext(semantic_scorer=lambda a, b: 1.0, judge=lambda *a: True)
        calls = tuple(ToolCall(c.name, dict(c.args) if isinstance(c.args, Mapping) else {},
                               call_id=f"c{i}") for i, c in enumerate(case.expected_calls))
        own = Trajectory(steps=(Step(0, "tool_call", tool_calls=calls),) if calls else (),
                         final_response="")
        for t in (own, Trajectory()):
            score_run(t, case, context=ctx, compact=True)
    except TrajcheckError as e:
        return [f"cannot be scored: {e}"]
    except Exception as e:  # a gap in validation: report it with the row, never crash the load
        return [f"cannot be scored: {type(e).__name__}: {e}"]
    return []


try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a core dependency
    _orjson = None  # type: ignore[assignment]

_PLAIN_SCALARS = (str, bool, type(None), float)
_SCALAR_TOKENS = {t: "\x00" + t.__name__ for t in _PLAIN_SCALARS}
_MAX_EXACT_INT = 2**53
SCORING_MEMO_SIZE = 4096  # most row shapes remembered as scoring without error


def _scoring_shape(row: Mapping[str, Any]) -> str | None:
    """The part of a valid row that can decide whether ``_scoring_errors`` finds a fault,
    as a JSON text: the row without its ``id`` and ``input``, with each expected argument
    that has no ``match`` spec (so the ``exact`` matcher compares it) reduced to its type
    when it is a plain scalar (a string, bool, null, float, or an int within 2**53).

    Why this is enough: the stand-in scoring of ``_scoring_errors`` compares each expected
    value with itself and with nothing; ``exact`` (``matchers.exact_equal``) never raises on
    such scalars and decides by type first, and the id and the input are only ever shown or
    handed to the stand-in models. Everything else (names, argument keys, matcher specs
    and their values, rules, tools, metadata) stays in the shape as given, so two rows of
    one shape score the same way. None when the row cannot be written as JSON."""
    d: dict[str, Any] = {k: v for k, v in row.items() if k != "id" and k != "input"}
    d["input"] = type(row.get("input")).__name__
    calls = d.get("expected_calls")
    if calls:
        tokens = _SCALAR_TOKENS
        shaped = []
        for c in calls:
            if isinstance(c, Mapping) and isinstance(a := c.get("args"), Mapping):
                match = c.get("match") or ()
                args = {}
                for k, v in a.items():
                    t = type(v)
                    tok = tokens.get(t)
                    if tok is None and isinstance(v, _PLAIN_SCALARS):  # a subclass: its own name
                        tok = "\x00" + t.__name__
                    elif t is int and -_MAX_EXACT_INT <= v <= _MAX_EXACT_INT:
                        tok = "\x00int"
                    args[k] = v if tok is None or k in match else tok
                c = dict(c, args=args)
            shaped.append(c)
        d["expected_calls"] = shaped
    if _orjson is not None:
        try:
            return _orjson.dumps(d, option=_orjson.OPT_SORT_KEYS).decode()  # type: ignore[no-any-return]
        except TypeError:  # an int past 64 bits, a key that is not a string: json decides
            pass
    try:
        return json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None


class _ScoringCheck:
    """``_scoring_errors`` remembered by row shape (``_scoring_shape``): a row whose shape
    already scored without error is not scored again (a dataset of a quarter of a million
    generated or templated cases has a few hundred shapes). Faults are never remembered:
    every faulty row is scored and reported with its own message."""

    def __init__(self, size: int = SCORING_MEMO_SIZE) -> None:
        self.ok: set[str] = set()
        self.size = size
        self.scored = 0  # rows actually scored (tests read it)

    def errors(self, case: Case, row: Mapping[str, Any]) -> list[str]:
        shape = _scoring_shape(row)
        if shape is not None and shape in self.ok:
            return []
        self.scored += 1
        bad = _scoring_errors(case)
        if not bad and shape is not None and len(self.ok) < self.size:
            self.ok.add(shape)
        return bad


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
    cases: list[Case] = []
    errors: list[str] = []
    for case, _row, _plain in _valid_cases(Path(path), errors):
        cases.append(case)
    return cases, errors


def _label(cid: Any) -> str:
    return f"case {cid!r}" if cid is not None else "case ?"


def _valid_cases(p: Path, errors: list[str],
                 rows: Iterable[tuple[Any, int, bool]] | None = None,
                 store: CaseStore | None = None,
                 ) -> Iterator[tuple[Case, dict[str, Any], bool]]:
    """The valid rows of a dataset file, one at a time, as ``(Case, row dict it was built
    from, plain)`` (``plain``: read by ``limits.plain_loads``, see ``dataset_rows``); each bad
    row's errors go to ``errors`` (``load_cases_report``). ``rows``: the file's rows when
    already read (``dataset_rows.read_rows``' triples), else ``read_rows(p)``.

    ``store`` (a ``case_store.CaseStore``): a valid row in ``row_plan.direct``'s scope goes
    into it, while no error has been found, without building its ``Case`` and without the
    load-time scoring check (such a row has no fault it could find: ``row_plan``'s module
    doc); it is not yielded. The caller
    adds the yielded ones, so the store holds the valid rows in file order."""
    from ..score.row_plan import Reader

    check = _ScoringCheck()
    seen: dict[str, int] = {}
    fast = _fast_validator()
    reader = Reader(store) if store is not None else None
    for row, line, plain in (read_rows(p) if rows is None else rows):
        if not plain and isinstance(row, BadJSON):
            errors.append(f"{p}:{line}: {row.msg}")
            continue
        cid = row.get("id") if type(row) is dict or isinstance(row, Mapping) else None
        dr = None
        if plain and fast is not None and fast.is_valid(row):  # _schema_errors' first step
            if reader is not None:
                dr = reader(row)  # a row it reads has no matcher spec: no _match_errors
            errs = _match_errors(row) if dr is None else ()
        else:
            errs = ((not plain and _value_faults(row)) or _schema_errors(row)
                    or _match_errors(row))
        if errs:
            errors.extend(f"{p}:{line}: {_label(cid)}: {m}" for m in errs)
            continue
        sid = str(cid)
        if sid in seen:
            errors.append(f"{p}:{line}: {_label(cid)}: id: duplicate case id (first on line {seen[sid]})")
            continue
        seen[sid] = line
        if dr is not None and (errors or store.add_plan(  # type: ignore[union-attr]
                dr.cid, dr.hash, dr.key, dr.part, dr.stored, dr.shape)):
            # a row the direct way reads has no fault scoring could find (_scoring_errors:
            # see row_plan's module doc), so it is kept from what direct read, no Case built
            continue
        d = row if plain else dict(row)  # a plain row is this function's own: changed in place
        st = d.get("initial_state")
        if isinstance(st, str) and st and not Path(st).is_absolute():
            d["initial_state"] = str((p.parent / st).resolve())
        try:
            case = Case.from_dict(d)
        except TrajcheckError as e:
            errors.append(f"{p}:{line}: {e}")
            continue
        if dr is not None:  # its hash is the case's (row_plan.direct): add() reads it
            case.__dict__["_case_hash"] = dr.hash.hex() if type(dr.hash) is bytes else dr.hash
        else:
            bad = check.errors(case, d)
            if bad:
                errors.extend(f"{p}:{line}: {_label(cid)}: {m}" for m in bad)
                continue
        yield case, d, plain


def load_cases(path: str | os.PathLike[str]) -> list[Case]:
    """Read and validate a dataset file (see ``load_cases_report``) and return its cases.

    Raises one ``DatasetError`` listing every bad row (file, line, case id, JSON path,
    message) when any row is bad; no row is silently dropped.
    """
    cases, errors = load_cases_report(path)
    if errors:
        raise DatasetError(f"{path}: {len(errors)} problem(s) in dataset:\n  " + "\n  ".join(errors))
    return cases


def load_case_store(path: str | os.PathLike[str]) -> CaseStore:
    """``load_cases`` for large datasets: the same validation and errors (one
    ``DatasetError`` listing every bad row), but the cases are kept compressed in a
    ``case_store.CaseStore`` (about a quarter of a built ``Case``'s memory) and built again
    when a run asks for one."""
    from .case_store import CaseStore

    errors: list[str] = []
    store = CaseStore()
    for case, row, plain in _valid_cases(Path(path), errors, store=store):
        if not errors:  # once a row is bad the load fails: only the errors are collected
            store.add(case, row, plain=plain)
    if errors:
        raise DatasetError(f"{path}: {len(errors)} problem(s) in dataset:\n  " + "\n  ".join(errors))
    return store


def load_case_store_range(path: str | os.PathLike[str], start: int, end: int,
                          store: CaseStore) -> bool:
    """Add to ``store`` the cases of the JSON Lines dataset ``path`` whose lines start in
    the byte range ``[start, end)`` (``start`` 0 or just after a ``\\n``; ``end`` the same
    or the file's size): what ``load_case_store`` adds for those lines, in file order, so
    loading a file's consecutive ranges into one store, or into stores later joined in
    order (``CaseStore.extend``), gives the store ``load_case_store`` gives. For engines
    that load a big dataset on several workers.

    Returns True when every row of the range is valid; False when some row is not (bad
    JSON, schema, matcher, an id repeated within the range) or the range cannot be read or
    decoded: then ``store`` is incomplete and the caller loads the whole file with
    ``load_case_store`` for its ``DatasetError`` (lines numbered in the whole file). An id
    repeated across ranges is the caller's to find (``CaseStore.extend`` refuses it)."""
    return load_case_store_ranges(path, [(start, end)], store)


def load_case_store_ranges(path: str | os.PathLike[str], spans: Iterable[tuple[int, int]],
                           store: CaseStore) -> bool:
    """``load_case_store_range`` of consecutive byte ranges ``spans`` (each ``(start,
    end)`` starting where the one before ended), read one range at a time as ``spans``
    gives them -- a generator may stop early -- and checked as one stream (one validator,
    one scoring-check memo: a range does not start the direct route over). Same result."""
    p = Path(path)
    if p.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DatasetError(f"{p}: only JSON Lines datasets load by byte range")

    def blocks() -> Iterator[bytes]:
        with p.open("rb") as f:
            for start, end in spans:
                f.seek(start)
                raw = f.read(max(end - start, 0))
                # a cut just after b"\n" is a line break for splitlines and a UTF-8
                # boundary, so a range's lines are the whole file's; the BOM is stripped
                # only at the file's start
                yield raw[len(BOM):] if start == 0 and raw.startswith(BOM) else raw

    errors: list[str] = []
    try:
        for case, row, plain in _valid_cases(p, errors, rows_of_blocks(blocks()),
                                             store):
            if errors:
                return False
            store.add(case, row, plain=plain)
    except (OSError, UnicodeDecodeError):  # unreadable, or a range that is not UTF-8
        return False
    return not errors


__all__ = ["case_schema", "load_case_store", "load_case_store_range", "load_case_store_ranges",
           "load_cases", "load_cases_report"]
