"""Mutation strategies for the hostile-input fuzz tests (tests/test_fuzz.py, ``make fuzz``).

The seeds are the real samples of every trace format in ``tests/data`` (and a few tau-bench
records) and the rows of the bundled example datasets. A mutation replaces, deletes or adds
one value somewhere inside a parsed sample, with values chosen to break naive code: huge
and non-finite numbers, booleans where numbers or strings are expected, deep nesting, lone
surrogates, markup and terminal escapes, wrong container types.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "data" / "traces"
REAL = ROOT / "tests" / "data" / "real_traces"
REAL_MAX_BYTES = 50_000  # real files up to this size join the seeds (larger ones slow every example)
TAU = ROOT / "tests" / "data" / "tau_bench" / "gpt-4o-airline.json"
DATASETS = (ROOT / "examples" / "helpdesk" / "cases.jsonl", ROOT / "examples" / "flights" / "cases.jsonl")


def _deep(n: int) -> Any:
    v: Any = "x"
    for _ in range(n):
        v = [v]
    return v


def _deep_dict(n: int) -> Any:
    v: Any = {}
    for _ in range(n):
        v = {"a": v}
    return v


HOSTILE: tuple[Any, ...] = (
    None, True, False, 0, -1, 10 ** 30, -(10 ** 30), 10 ** 400, 1e308, -1e308, float("inf"),
    float("nan"), 1e-320, 0.5, "", " ", "[/bold]", "[red]x[/red]", "\x1b[31mred\x1b[0m", "\ud800",
    "a\x00b", "<script>alert(1)</script>", "| a | b |", "1e999", "NaN", "free", "{\"a\": ", "9" * 5000,
    {}, [], [None], {"": None}, {"type": "x"}, {"role": "user"}, {"cases": []}, _deep(60),
    _deep(3000), _deep_dict(3000), {"nested": _deep_dict(40)}, [1, "a", {}, []],
    {"traceId": True}, {"output": True}, {"source_format": {}}, "../../../etc/passwd",
)


def samples() -> dict[str, Any]:
    """Every trace sample of tests/data/traces and every real trace file of
    tests/data/real_traces up to ``REAL_MAX_BYTES`` (the newer formats and wrappers: ATIF,
    Langfuse, Agents SDK, Managed Agents, ADK sessions, span dumps...), parsed (JSONL files:
    their first line), plus three tau-bench records; keyed by a short name."""
    out: dict[str, Any] = {}
    files = [*sorted(TRACES.iterdir()),
             *sorted(p for p in REAL.rglob("*") if p.suffix in (".json", ".jsonl")
                     and p.stat().st_size <= REAL_MAX_BYTES)]
    for p in files:
        text = p.read_text(encoding="utf-8")
        name = p.stem if p.parent == TRACES else f"real-{p.parent.name}-{p.stem}"
        if p.suffix == ".jsonl":
            out[name] = json.loads(next(ln for ln in text.splitlines() if ln.strip()))
        else:
            out[name] = json.loads(text)
    out["tau_bench"] = json.loads(TAU.read_text(encoding="utf-8"))[:3]
    return out


def dataset_rows() -> list[dict[str, Any]]:
    """The rows of the bundled example datasets (their ``initial_state`` dropped: the fuzzed
    file lives elsewhere)."""
    rows = []
    for p in DATASETS:
        for ln in p.read_text(encoding="utf-8").splitlines():
            if ln.strip():
                r = json.loads(ln)
                r.pop("initial_state", None)
                rows.append(r)
    return rows


def _paths(obj: Any, prefix: tuple[Any, ...] = (), limit: int = 400) -> list[tuple[Any, ...]]:
    """Paths to every node of ``obj`` (breadth-first, at most ``limit``)."""
    out: list[tuple[Any, ...]] = [prefix]
    todo = [(obj, prefix)]
    while todo and len(out) < limit:
        node, p = todo.pop(0)
        kids = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in kids:
            out.append((*p, k))
            todo.append((v, (*p, k)))
    return out[:limit]


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for k in path[:-1]:
        obj = obj[k]
    return obj


def apply(obj: Any, op: str, path_i: int, value: Any, key: str) -> Any:
    """A mutated deep copy of ``obj``: ``op`` is ``set`` (the node at path index ``path_i``
    becomes ``value``), ``delete`` (the node is removed), ``add`` (``value`` is added under
    ``key`` to a mapping, or appended to a list) or ``wrap`` (the node is put in a list)."""
    obj = copy.deepcopy(obj)
    paths = _paths(obj)
    path = paths[path_i % len(paths)]
    if not path:
        if op == "set":
            return copy.deepcopy(value)
        if op == "wrap":
            return [obj]
        node = obj
    else:
        parent = _parent(obj, path)
        node = parent[path[-1]]
        if op == "set":
            parent[path[-1]] = copy.deepcopy(value)
            return obj
        if op == "delete":
            del parent[path[-1]]
            return obj
        if op == "wrap":
            parent[path[-1]] = [node]
            return obj
    if op == "add":
        if isinstance(node, dict):
            node[key] = copy.deepcopy(value)
        elif isinstance(node, list):
            node.append(copy.deepcopy(value))
    return obj


KEYS = ("role", "type", "content", "name", "args", "arguments", "tool_calls", "metadata", "cases",
        "id", "cost_usd", "usage", "output", "traceId", "spanId", "startTimeUnixNano", "run_type",
        "child_runs", "steps", "kind", "index", "source_format", "total_cost_usd", "reward", "traj",
        "threshold", "match", "pattern", "expected_calls", "initial_state", "$ref", "case_id")

mutation = st.tuples(st.sampled_from(("set", "set", "set", "delete", "add", "add", "wrap")),
                     st.integers(0, 10 ** 6), st.integers(0, len(HOSTILE) - 1), st.sampled_from(KEYS))
"""One mutation: ``(op, path index, index into HOSTILE, key)`` for ``apply`` (an index, so
a failing example prints short even when its value is 3,000 levels deep)."""

mutations = st.lists(mutation, min_size=1, max_size=3)


def mutate(obj: Any, muts: list[tuple[str, int, Any, str]]) -> Any:
    """``obj`` after every mutation in ``muts`` (see ``apply``)."""
    with _deep_ok():
        for op, i, v, k in muts:
            obj = apply(obj, op, i, HOSTILE[v] if isinstance(v, int) else v, k)
    return obj


class _deep_ok:
    """Room on the Python stack for copying and writing the deeply nested values."""

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.old, 20000))

    def __exit__(self, *exc: object) -> None:
        sys.setrecursionlimit(self.old)


def dumps(obj: Any) -> str:
    """One JSON line, whatever the value (NaN written as NaN, lone surrogates escaped; an
    integer too long for ``str`` written via its repr in chunks)."""
    try:
        with _deep_ok():
            return json.dumps(obj, allow_nan=True)
    except ValueError:  # int longer than sys.get_int_max_str_digits
        return '"too-big"'
