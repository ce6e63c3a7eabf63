"""limits.depth_exceeds, the nesting guard every in-memory input passes before the readers
walk it, against a recursive brute force on random trees, and on shared and cyclic
references (which parsed JSON never has, but an in-memory object may)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.read.limits import depth_exceeds


def _depth(v: Any) -> int:
    """Levels of lists / tuples / mappings in ``v`` (0 for a leaf), by recursion."""
    if isinstance(v, dict | OrderedDict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list | tuple):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


_trees = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3), st.binary(max_size=2)),
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.tuples(kids, kids),
                           st.dictionaries(st.text(max_size=2), kids, max_size=3),
                           st.dictionaries(st.text(max_size=2), kids, max_size=2).map(OrderedDict)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_trees, st.integers(0, 8))
def test_depth_exceeds_equals_recursion(tree: Any, limit: int) -> None:
    # nesting deeper than ``limit`` levels: a container at depth ``limit`` (the root at 0)
    assert depth_exceeds(tree, limit) is (_depth(tree) > limit)


def test_hand_computed_depths() -> None:
    nested: Any = "leaf"
    for _ in range(100):
        nested = [nested]
    assert depth_exceeds(nested) is False  # 100 levels: the limit itself
    assert depth_exceeds([nested]) is True
    assert depth_exceeds({"a": ({"b": [1]},)}, 3) is True
    assert depth_exceeds({"a": ({"b": [1]},)}, 4) is False


def test_shared_and_cyclic_references() -> None:
    cyc: list[Any] = []
    cyc.extend([cyc, cyc])  # holds itself twice: nesting without end
    assert depth_exceeds(cyc) is True
    d: dict[str, Any] = {}
    d["self"] = d
    assert depth_exceeds({"x": [d]}) is True
    # an empty list under 60 levels of a list holding the level below twice: 61 levels,
    # 2**60 paths, 61 distinct lists
    dag: list[Any] = []
    for _ in range(60):
        dag = [dag, dag]
    assert depth_exceeds(dag) is False
    assert depth_exceeds(dag, 61) is False
    assert depth_exceeds(dag, 60) is True
