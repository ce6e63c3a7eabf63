"""The fast scorer's scope is one whitelist (``score.fast_scope``): every ``Case`` field and
every metadata key trajcheck reads is classified, and a case or run outside the whitelist
is scored by the general path (same result, counted as a fallback)."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

import trajcheck
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory
from trajcheck.score import fast_scope
from trajcheck.score.case_plan import case_plan
from trajcheck.score.fast_scoring import fast_compact
from trajcheck.score.row_plan import direct
from trajcheck.score.scoring import score_run

CORE = pathlib.Path(trajcheck.__file__).parent


def test_every_case_field_is_classified() -> None:
    names = {f.name for f in dataclasses.fields(Case)}
    fast, general = fast_scope.CASE_FIELDS_FAST, fast_scope.CASE_FIELDS_GENERAL
    assert not fast & general
    unclassified = names - fast - general
    assert not unclassified, f"Case fields nobody classified for the fast path: {unclassified}"
    assert fast | general == names  # nothing classified that Case does not have
    assert fast_scope.ROW_KEYS_DIRECT <= fast


def _metadata_keys_read() -> dict[str, set[str]]:
    """Every string key read from a ``.metadata`` mapping in core (``x.metadata.get("k")``,
    ``x.metadata["k"]``, and the same through a name bound to ``x.metadata``, keys given as
    module constants resolved), by key -> where; step metadata (``s.metadata``) left out."""
    found: dict[str, set[str]] = {}
    for p in sorted(CORE.rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                  and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                  for t in n.targets if isinstance(t, ast.Name)}
        aliases: set[str] = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign):
                v = n.value.values[0] if isinstance(n.value, ast.BoolOp) else n.value
                if isinstance(v, ast.Attribute) and v.attr == "metadata":
                    aliases.update(t.id for t in n.targets if isinstance(t, ast.Name))

        def owner(e: ast.expr, aliases: set[str] = aliases) -> str | None:
            if isinstance(e, ast.Attribute) and e.attr == "metadata":
                return ast.unparse(e)
            return e.id if isinstance(e, ast.Name) and e.id in aliases else None

        for n in ast.walk(tree):
            key: ast.expr | None = None
            who = None
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("get", "pop") and n.args):
                who, key = owner(n.func.value), n.args[0]
            elif isinstance(n, ast.Subscript):
                who, key = owner(n.value), n.slice
            if who is None or key is None or who.split(".")[0] in ("s", "step"):
                continue
            k = (key.value if isinstance(key, ast.Constant)
                 else consts.get(key.id) if isinstance(key, ast.Name) else None)
            if isinstance(k, str):
                found.setdefault(k, set()).add(f"{p.relative_to(CORE)}: {who}")
    return found


def test_every_metadata_key_read_is_classified() -> None:
    found = _metadata_keys_read()
    # the scan does find what it must (a scan that finds nothing proves nothing)
    assert {"case_id", "run_id", "trial", "reward", "route", "state_before", "category",
            "scoring_weights", "expected_last_observation"} <= found.keys()
    known = (fast_scope.RUN_META_FAST | fast_scope.RUN_META_GENERAL
             | fast_scope.CASE_META_FAST | fast_scope.CASE_META_GENERAL)
    unclassified = {k: sorted(v) for k, v in found.items() if k not in known}
    assert not unclassified, f"metadata keys nobody classified for the fast path: {unclassified}"
    assert not fast_scope.RUN_META_FAST & fast_scope.RUN_META_GENERAL
    assert not fast_scope.CASE_META_FAST & fast_scope.CASE_META_GENERAL


_BASE = Case("c1", "hi", expected_calls=(ExpectedCall("lookup", {"id": 1}),))
_SET = {"precedence": (("lookup", "refund"),),
        "forbidden_sequences": ({"tool": "drop", "severity": "warning"},),
        "faults": ({"tool": "lookup", "error": "boom"},),
        "response_must_include": ("done",), "expected_route": "billing",
        "read_only_calls": ("lookup",), "claim_patterns": ("issued",),
        "negation_patterns": ("not issued",)}


def test_the_whitelist_decides_the_case_scope() -> None:
    assert set(_SET) == fast_scope.CASE_FIELDS_GENERAL
    assert case_plan(_BASE) is not None
    for name, value in _SET.items():
        c = dataclasses.replace(_BASE, **{name: value})
        assert not fast_scope.case_in_scope(c), name
        assert case_plan(c) is None, name
    assert case_plan(dataclasses.replace(_BASE, metadata={"category": "x"})) is not None
    assert case_plan(dataclasses.replace(_BASE, metadata={"scoring_weights": {}})) is None
    assert direct({"id": "c1", "input": "hi", "expected_calls": ["lookup"]}) is not None
    for k in ("precedence", "tools", "initial_state", "novel_field"):
        assert direct({"id": "c1", "input": "hi", "expected_calls": ["lookup"], k: []}) is None, k


@pytest.mark.parametrize("key", sorted(fast_scope.RUN_META_GENERAL | {"novel_key"}))
def test_a_run_key_outside_the_whitelist_takes_the_general_path(key: str) -> None:
    steps = (Step(0, "assistant", tool_calls=(ToolCall("lookup", {"id": 1}),)),)
    plain = Trajectory(steps, metadata={"case_id": "c1"})
    other = Trajectory(steps, metadata={"case_id": "c1", key: None})
    # the fast scorer takes the plain run and refuses the other; the general path scores it alike
    assert fast_compact(plain, _BASE) is not None
    assert fast_compact(other, _BASE) is None
    r1 = score_run(plain, _BASE, compact=True)
    r2 = score_run(other, _BASE, compact=True)
    assert (r1.success, r1.f1, r1.composite) == (r2.success, r2.f1, r2.composite) == (True, 1.0, 1.0)
