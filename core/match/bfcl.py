"""BFCL possible-answer compatibility (Berkeley Function Calling Leaderboard, AST checker).

Parity mode, not trajcheck's own policy: these rules reproduce BFCL's AST checker
(bfcl-eval 2026.3.23; research/realdata.md §3) so trajcheck's verdicts can be compared with
BFCL's on its own data (tests/test_bfcl.py).

- ``BfclMatcher`` -- the ``bfcl`` per-argument matcher (``get_matcher("bfcl")`` or a spec
  ``{"type": "bfcl", "param_type": ..., ...}``). The registry in ``trajcheck.match.matchers``
  imports this module on first use of the name, so ``import trajcheck`` does not load it.
- ``bfcl_standardize`` -- BFCL's string normalisation.
- ``bfcl_expected_calls`` / ``bfcl_predicted_calls`` -- a BFCL entry's possible answer and
  a model's output as ``ExpectedCall``s / ``ToolCall``s.
- ``bfcl_valid`` -- trajcheck's verdict on one BFCL AST entry.
- ``cases_from_ground_truth`` / ``load_ground_truth`` -- BFCL's ground truth (function docs
  and possible answers) as ``Case``s, so ``trajcheck eval <bfcl result folder> --cases
  <ground truth>`` scores ``bfcl generate`` output (read by ``trajcheck.read.traces.bfcl_result``)
  and reports the AST accuracy per test category.

Before this module existed, ``BfclMatcher``/``bfcl_standardize`` lived in
``trajcheck.match.matchers`` and ``bfcl_expected_calls``/``bfcl_predicted_calls``/``bfcl_valid``
in ``trajcheck.metrics.calls``; both still resolve those names (on first access).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DatasetError, MatcherError, MetricInputError
from ..metrics.calls import match_kept
from ..model import Case, ExpectedCall, ToolCall
from .matchers import DEFAULT_CONTEXT, MISSING, MatchContext, Matcher

# ---------------------------------------------------------------------------------------
# the bfcl matcher (BFCL AST rules, bfcl-eval 2026.3.23)

_BFCL_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "any": str,
}
_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")


def bfcl_standardize(s: str) -> str:
    """BFCL's string normalisation: drop spaces and ``,./-_*^``, lowercase, ``'`` -> ``"``."""
    return _BFCL_STRIP.sub("", s).lower().replace("'", '"')


def _bfcl_std(v: Any) -> Any:
    return bfcl_standardize(v) if type(v) is str else v


def _bfcl_answer_type(options: Sequence[Any]) -> type | None:
    for o in options:
        if not (type(o) is str and o == ""):
            return type(o)
    return None


def _bfcl_in(v: Any, options: Sequence[Any]) -> bool:
    # BFCL compares with Python ``in`` (==), where 1 == 1.0 == True; kept for parity.
    try:
        return any(v == o for o in options)
    except Exception:
        return False


@dataclass(frozen=True, repr=False)
class BfclMatcher(Matcher):
    """One BFCL parameter: the expected value is BFCL's list of acceptable values.

    Rules (research/realdata.md §3, from BFCL's AST checker): the value's Python type must
    equal the declared type (``bool`` is never ``int``; an ``int`` is accepted for a
    ``float`` and converted; ``tuple`` accepts a list; ``any`` means ``str``), except that a
    value of the acceptable answers' own type is accepted when that differs from the
    declared type (BFCL's "variable" escape, then compared by ``in``). Arrays check their
    items' types one level deep, exactly (no int -> float conversion inside an array), and
    an array whose items fail that check is rejected outright (BFCL returns the failed check
    from its variable branch too). Strings, list items and one-level dict values are compared
    after :func:`bfcl_standardize`; lists in order; dict keys must be a subset of the
    answer's keys and missing keys need ``""``; lists of dicts position by position; other
    values by ``in``. ``""`` means the parameter may be omitted unless ``required`` (the
    function doc's ``required`` wins). ``in_doc`` False (a parameter the doc lacks) never
    matches when present. This is parity mode, not trajcheck's own policy: e.g. it uses
    Python ``==`` inside ``in``.
    """

    param_type: str | None = None
    item_type: str | None = None
    required: bool = False
    in_doc: bool = True
    name = "bfcl"

    def __post_init__(self) -> None:
        for t in (self.param_type, self.item_type):
            if t is not None and t not in _BFCL_TYPES:
                raise MatcherError(f"bfcl matcher: unknown BFCL type {t!r}; known: "
                                   f"{', '.join(_BFCL_TYPES)}")

    def allows_missing(self, expected: Any) -> bool:
        if self.required or not isinstance(expected, (list, tuple)):
            return False
        return any(type(o) is str and o == "" for o in expected)

    def _type_ok(self, v: Any, options: Any, declared: type,
                 item: type | None) -> tuple[bool, bool]:
        """(valid, is_variable) per BFCL's type rule."""
        ans = _bfcl_answer_type(options)
        is_var = ans is not None and ans is not declared
        seq: Any = v
        if type(v) is declared:
            if item is None:
                return True, is_var
            for o in options:
                if type(o) is not list:
                    return True, is_var  # BFCL: a non-list answer (e.g. "") passes the item check
                if all(self._type_ok(x, o, item, None)[0] for x in seq):
                    return True, is_var
            # BFCL's type_checker marks the value invalid here; its "variable" check that
            # follows returns that same failed result, so an int array given for float items
            # (or floats for int items) is rejected, never rescued as a variable.
            return False, is_var
        if ans is not None and type(v) is ans:
            return True, True
        return False, is_var

    def _dict_ok(self, v: Mapping[str, Any], options: Sequence[Any]) -> bool:
        for o in options:
            if type(o) is str and o == "":
                continue
            if not isinstance(o, Mapping):
                continue
            if any(k not in o for k in v):
                continue
            if not all(_bfcl_in(_bfcl_std(x), [_bfcl_std(a) for a in o[k]]) for k, x in v.items()):
                continue
            if any(k not in v and "" not in vals for k, vals in o.items()):
                continue
            return True
        return False

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if predicted is MISSING:
            return self.allows_missing(expected)
        if not isinstance(expected, (list, tuple)):
            raise MatcherError(f"bfcl matcher: expected value must be the list of acceptable "
                               f"values, got {expected!r}")
        if not self.in_doc or self.param_type is None:
            return False
        declared = _BFCL_TYPES[self.param_type]
        item = _BFCL_TYPES[self.item_type] if (
            self.item_type is not None and self.param_type in ("array", "tuple")) else None
        v = predicted
        if self.param_type == "tuple" and type(v) is tuple:
            v = list(v)
        if self.param_type == "float" and type(v) is int:
            v = float(v)
        ok, is_var = self._type_ok(v, expected, declared, item)
        if not ok:
            return False
        if not is_var:
            if declared is dict:
                return self._dict_ok(v, expected)
            if declared is list and item is dict:
                for o in expected:
                    seq = o if isinstance(o, (list, tuple)) else []
                    if len(seq) == len(v) and all(self._dict_ok(d, [a]) for d, a in zip(v, seq)):
                        return True
                return False
            if declared is str:
                return bfcl_standardize(v) in [bfcl_standardize(o) for o in expected if type(o) is str]
            if declared is list:
                sv = [_bfcl_std(x) for x in v]
                opts = [[_bfcl_std(x) for x in o] if isinstance(o, (list, tuple, str)) else o
                        for o in expected]
                return _bfcl_in(sv, opts)
        return _bfcl_in(v, expected)


# ---------------------------------------------------------------------------------------
# BFCL entries as expected / predicted calls, and the verdict on one entry


def bfcl_expected_calls(ground_truth: Sequence[Mapping[str, Any]],
                        functions: Sequence[Mapping[str, Any]]) -> tuple[ExpectedCall, ...]:
    """ExpectedCalls for one BFCL entry, each argument a ``bfcl`` (one_of-style) matcher.

    ``ground_truth``: BFCL's possible answer, a list of ``{func_name: {param: [acceptable
    values...]}}``; ``functions``: the entry's function docs ``{name, parameters: {type:
    "dict", properties, required}}``. Each expected call uses ``exact_keys`` (BFCL rejects a
    parameter that is not in the possible answer), per-parameter
    :class:`BfclMatcher` with the doc's declared type, ``required`` from
    the doc (so ``""`` cannot waive a doc-required parameter), and a doc-required parameter
    missing from the possible answer becomes an argument that nothing satisfies (BFCL:
    required but unexpected). Source: research/realdata.md §3 and BFCL's ast_checker.py.
    Raises MetricInputError for malformed entries.
    """
    docs: dict[str, Mapping[str, Any]] = {}
    for f in functions:
        if isinstance(f, Mapping) and isinstance(f.get("name"), str):
            docs.setdefault(f["name"], f)
    out: list[ExpectedCall] = []
    for k, g in enumerate(ground_truth):
        if not isinstance(g, Mapping) or len(g) != 1:
            raise MetricInputError(f"BFCL ground truth {k} must be a one-key object, got {g!r}")
        (fname, params), = g.items()
        if not isinstance(params, Mapping):
            raise MetricInputError(f"BFCL ground truth {k} ({fname}): parameters must be an object")
        doc = docs.get(fname, {})
        schema = doc.get("parameters") or {}
        props = schema.get("properties") or {}
        required = set(schema.get("required") or ())

        def spec(p: str, props: Mapping[str, Any] = props,
                 required: set[str] = required) -> dict[str, Any]:
            d = props.get(p) or {}
            item = (d.get("items") or {}).get("type") if d.get("type") in ("array", "tuple") else None
            return {"type": "bfcl", "param_type": d.get("type"), "item_type": item,
                    "required": p in required, "in_doc": p in props}

        args: dict[str, Any] = {}
        match: dict[str, Any] = {}
        for p, opts in params.items():
            if not isinstance(opts, list):
                raise MetricInputError(f"BFCL ground truth {k} ({fname}): {p!r} must list "
                                       "acceptable values")
            args[p] = opts
            match[p] = spec(p)
        for p in sorted(required - set(params)):
            args[p] = []
            match[p] = spec(p)
        out.append(ExpectedCall(name=fname, args=args, match=match, args_mode="exact_keys"))
    return tuple(out)


def bfcl_predicted_calls(output: Sequence[Mapping[str, Any]]) -> list[ToolCall]:
    """BFCL model output ``[{func_name: {param: value}}]`` as ToolCalls (a non-object
    parameter set becomes ``args=None``, i.e. unparsed)."""
    calls: list[ToolCall] = []
    for k, item in enumerate(output):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise MetricInputError(f"BFCL output {k} must be a one-key object, got {item!r}")
        (name, args), = item.items()
        calls.append(ToolCall(name=str(name), args=dict(args) if isinstance(args, Mapping) else None,
                              args_parse_error=None if isinstance(args, Mapping) else "not an object"))
    return calls


def bfcl_valid(output: Sequence[Mapping[str, Any]], ground_truth: Sequence[Mapping[str, Any]],
               functions: Sequence[Mapping[str, Any]]) -> bool:
    """trajcheck's verdict on one BFCL AST entry: the calls match the possible answers
    one-to-one with none extra (the ``unordered`` trajectory mode, maximum matching).

    For BFCL's non-parallel categories (one expected call) this is "exactly one call and it
    matches"; for parallel ones it is BFCL's "same count, every answer matched" but with a
    maximum matching where BFCL pairs greedily (so trajcheck accepts e.g. parallel_178).
    """
    exp = bfcl_expected_calls(ground_truth, functions)
    pred = bfcl_predicted_calls(output)
    if len(pred) != len(exp):
        return False
    m = match_kept(pred, frozenset(), exp, args_mode=None, default_mode=None, ctx=MatchContext())
    return m.tp == len(exp)


# ---------------------------------------------------------------------------------------
# BFCL ground truth as cases


def is_ground_truth_row(row: Any) -> bool:
    """True for one BFCL ground-truth entry: ``{id, ground_truth: [...], function(s): [...]}``
    (bfcl-eval's question and possible-answer rows joined by id, as in
    tests/data/bfcl/ast_ground_truth.jsonl)."""
    return (isinstance(row, Mapping) and isinstance(row.get("id"), str)
            and isinstance(row.get("ground_truth"), list)
            and isinstance(row.get("functions", row.get("function")), list))


def _question_text(q: Any) -> str | None:
    """The last user message of BFCL's ``question`` (a list of turns of messages)."""
    turns = q if isinstance(q, list) else []
    for turn in reversed(turns):
        msgs = turn if isinstance(turn, list) else [turn]
        for m in reversed(msgs):
            if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), str):
                return str(m["content"])
    return None


def cases_from_ground_truth(rows: Sequence[Any], where: str = "<ground truth>") -> tuple[list[Case], list[str]]:
    """BFCL ground-truth entries -> ``(cases, problems)``.

    Each entry ``{id, category?, functions | function, ground_truth, question?}`` becomes a
    ``Case``: ``expected_calls`` = ``bfcl_expected_calls`` (one call per possible answer,
    ``bfcl`` matchers, ``exact_keys``), ``input`` = the question's last user message,
    ``args_mode`` ``exact_keys``, ``metadata`` ``{"source": "bfcl", "category": ...}`` (the
    row's ``category``, else the id without its number). Scored by ``trajcheck eval``, a run
    succeeds exactly when its calls match the possible answers one-to-one with none extra --
    ``bfcl_valid``'s rule -- so the success rate per category is BFCL's AST accuracy. A bad
    entry is listed in ``problems`` (``<where> row <i>: ...``) and the rest are kept.
    """
    from ..read.traces.bfcl_result import category_of

    cases: list[Case] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        w = f"{where} row {i}"
        if not is_ground_truth_row(row):
            problems.append(f"{w}: not a BFCL ground-truth entry (needs id, ground_truth, functions)")
            continue
        cid = row["id"]
        if cid in seen:
            problems.append(f"{w}: id {cid!r} repeats an earlier entry; first kept")
            continue
        try:
            exp = bfcl_expected_calls(row["ground_truth"], row.get("functions", row.get("function")))
        except (MetricInputError, MatcherError) as e:
            problems.append(f"{w} ({cid}): {e}")
            continue
        seen.add(cid)
        cat = row.get("category") if isinstance(row.get("category"), str) else category_of(cid)
        cases.append(Case(id=cid, input=_question_text(row.get("question")), expected_calls=exp,
                          args_mode="exact_keys", metadata={"source": "bfcl", "category": cat}))
    return cases, problems


def load_ground_truth(path: Any) -> list[Case] | None:
    """The cases of a BFCL ground-truth JSON Lines file (``cases_from_ground_truth``), or None
    when its first row is not a BFCL ground-truth entry (then it is an ordinary dataset).
    Raises ``DatasetError`` naming the file and rows when some entry is bad or a line is not
    JSON."""
    import json
    from pathlib import Path

    from ..read.dataset_rows import utf8_fault

    p = Path(path)
    rows: list[Any] = []
    bad: list[str] = []
    # the first row decides; an ordinary dataset (maybe of millions of rows) is not read here.
    # Lines are read as bytes and decoded one at a time, so a line that is not UTF-8 is that
    # line's problem (here or in the dataset reader), not the whole file's.
    try:
        with p.open("rb") as f:
            first = next((piece for line in f if line.strip()
                          for piece in line.splitlines() if piece.strip()), None)
    except OSError as e:
        raise DatasetError(f"{p}: cannot be read ({e})") from e
    try:
        if first is None or not is_ground_truth_row(json.loads(first.removeprefix(b"\xef\xbb\xbf"))):
            return None
    except ValueError:  # UnicodeDecodeError included
        return None  # not JSON Lines in UTF-8: not BFCL ground truth
    try:
        raw = p.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as e:
        raise DatasetError(f"{p}: cannot be read ({e})") from e
    for n, bline in enumerate(raw.splitlines(), 1):
        try:
            line = bline.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append(f"{p}:{n}: not UTF-8: {utf8_fault(e)}")
            continue
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as e:
            if not rows:
                return None  # not JSON Lines: not BFCL ground truth
            bad.append(f"{p}:{n}: not valid JSON ({e})")
    if not rows or not is_ground_truth_row(rows[0]):
        return None
    cases, problems = cases_from_ground_truth(rows, str(p))
    if bad or problems:
        errs = bad + problems
        raise DatasetError(f"{p}: {len(errs)} problem(s) in the BFCL ground truth:\n  " + "\n  ".join(errs))
    return cases


_RESULT_FILE = re.compile(r"^BFCL_v\d+_(.+)_result\.json(?:l)?(?:\.gz)?$")


def result_categories(path: Any) -> set[str]:
    """The BFCL test categories of the result files at ``path`` (a ``bfcl generate`` result
    file or a folder of them), from their names ``BFCL_v<n>_<category>_result.json``; empty
    when no file is named so."""
    from pathlib import Path

    p = Path(path)
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else []
    return {m.group(1) for f in files if (m := _RESULT_FILE.match(f.name))}


def cases_for_results(cases: Sequence[Case], path: Any) -> list[Case]:
    """The BFCL cases of the categories whose result files are at ``path``: a result folder
    holds one file per category the model was run on, and the ground truth lists every
    category; the entries of categories with no result file are left out (they would only
    read as "no traces"), while an entry missing from a category's file stays and is
    reported. All cases when no file at ``path`` has a BFCL result-file name."""
    cats = result_categories(path)
    if not cats:
        return list(cases)
    return [c for c in cases if c.metadata.get("category") in cats]


__all__ = [
    "BfclMatcher",
    "cases_for_results",
    "cases_from_ground_truth",
    "is_ground_truth_row",
    "load_ground_truth",
    "result_categories",
    "bfcl_expected_calls",
    "bfcl_predicted_calls",
    "bfcl_standardize",
    "bfcl_valid",
]
