"""The reading stage's shortcuts give what the plain route gives: ``limits.loads`` (orjson when
installed, the bracket count before the depth walk) against ``json.loads``, and
``clean_figures``' all-plain check against its field-by-field route."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.errors import InputLimitError
from trajcheck.model import Step, Trajectory, Usage
from trajcheck.read import limits


def _same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (1 and 1.0 differ; -0.0 and 0.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))  # type: ignore[arg-type]
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (a != a and b != b))  # type: ignore[arg-type]
    return a == b


scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4)
                      | st.dictionaries(st.text(max_size=5), kids, max_size=4), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_loads_equals_json_loads(v: object, ascii_only: bool) -> None:
    text = json.dumps(v, ensure_ascii=ascii_only)
    assert _same(limits.loads(text, []), json.loads(text))


def test_loads_edge_values() -> None:
    # integers beyond 64 bits stay integers; duplicate keys keep the last value in the first
    # key's place; big exponents overflow to infinity as json.loads has it
    for text in ("[18446744073709551616, -9223372036854775809, 1]", '{"a": 1, "b": 2, "a": 3}',
                 "1e400", "[-0.0, 0.1, 2.2250738585072011e-308]", '"\\u00e9\\ud83d\\ude00"'):
        assert _same(limits.loads(text, []), json.loads(text)), text
    notes: list[str] = []
    assert limits.loads('["\\ud800", NaN]', notes) == ["\ufffd", None]
    assert len(notes) == 2
    deep = "[" * 101 + "]" * 101
    try:
        limits.loads(deep)
    except InputLimitError:
        pass
    else:  # pragma: no cover - the assertion below names the failure
        raise AssertionError("101 levels were read")
    assert limits.loads("[" * 100 + "]" * 100) is not None
    # 101 brackets, but only 2 levels deep: the walk runs and passes
    assert limits.loads('[["' + "[" * 101 + '"]]') == [["[" * 101]]


figures = st.none() | st.integers(-5, 10**400) | st.floats() | st.booleans() | st.just("free")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(figures, figures, figures), max_size=4), figures)
def test_clean_figures_shortcut_equals_walk(steps: list, total: object) -> None:
    t = Trajectory(steps=tuple(Step(i, "tool_call", cost_usd=c, latency_ms=lat,
                                    usage=Usage(input_tokens=tok))  # type: ignore[arg-type]
                               for i, (c, lat, tok) in enumerate(steps)),
                   total_cost_usd=total)  # type: ignore[arg-type]
    got, notes = limits.clean_figures(t)
    plain = limits._all_plain(t)
    if plain:
        assert got is t and notes == []
    else:
        assert notes  # the field-by-field route found something to note
