"""Per-argument matchers: DESIGN.md's matcher policies, registry and bad input."""

from __future__ import annotations

import math

import pytest

from trajcheck.errors import MatcherError, SchemaError
from trajcheck.match.matchers import (
    MISSING,
    MatchContext,
    get_matcher,
    known_matchers,
    normalize_text,
    register_matcher,
)

CTX = MatchContext()


def m(spec, e, p, ctx=CTX):
    return get_matcher(spec)(e, p, ctx)


@pytest.mark.parametrize("e,p,want", [
    (2, 2.0, True), (True, 1, False), (1, True, False), ("1", 1, False), (None, None, True),
    (None, 0, False), ({"a": 1, "b": [1, 2]}, {"b": [1, 2.0], "a": 1}, True),
    ([1, 2], [2, 1], False), ({"a": 1}, {"a": 1, "b": 2}, False), ([1, [2, {"x": "y"}]], (1, (2, {"x": "y"})), True),
    (float("nan"), float("nan"), False), ([float("nan")], [float("nan")], False), (False, False, True),
])
def test_exact_type_aware(e, p, want):
    assert m("exact", e, p) is want


def test_exact_deeply_nested_no_recursion_error():
    a: list = []
    b: list = []
    x, y = a, b
    for _ in range(50_000):
        x.append([])
        y.append([])
        x, y = x[0], y[0]
    assert m("exact", a, b) is True
    y.append(1)
    assert m("exact", a, b) is False


def test_normalized():
    assert normalize_text("  Ｈｅｌｌｏ \t  World\n") == "hello world"
    assert m("normalized", "New  York", " new york ") is True
    assert m("normalized", "Straße", "STRASSE") is True  # casefold
    assert m("normalized", "newyork", "new york") is False
    assert m("normalized", 1, 1.0) is True and m("normalized", "1", 1) is False


def test_numeric():
    assert m({"type": "numeric", "abs_tol": 0.01}, 1.0, 1.005) is True
    assert m({"type": "numeric", "abs_tol": 0.01}, 1.0, 1.02) is False
    assert m({"type": "numeric", "rel_tol": 0.1, "abs_tol": 0}, 100, 109) is True
    assert m("numeric", 1, True) is False
    assert m("numeric", 1, "1") is False
    assert m("numeric", 1.0, float("nan")) is False
    assert m("numeric", float("nan"), float("nan")) is False
    with pytest.raises(MatcherError, match="expected value must be an int or float"):
        m("numeric", "1", 1)
    with pytest.raises(MatcherError, match="abs_tol"):
        get_matcher({"type": "numeric", "abs_tol": -1})


def test_unordered_and_set():
    assert m("unordered", [1, 2, 2], [2, 1, 2.0]) is True
    assert m("unordered", [1, 2, 2], [2, 1, 1]) is False
    assert m("unordered", [True], [1]) is False
    assert m("set", [1, 2, 2], [2, 1]) is True
    assert m("set", [1, 2], [1, 3]) is False
    assert m("unordered", [{"a": 1}, {"b": 2}], [{"b": 2}, {"a": 1}]) is True


def test_regex_and_contains():
    assert m({"type": "regex", "pattern": r"INC-\d+"}, None, "INC-1042") is True
    assert m({"type": "regex", "pattern": r"INC-\d+"}, None, "x INC-1042") is False  # fullmatch
    assert m("regex", r"[a-z]+", "abc") is True
    assert m({"type": "regex", "pattern": "abc", "flags": "i"}, None, "ABC") is True
    assert m("regex", r"\d+", 12) is False
    with pytest.raises(MatcherError, match="invalid pattern"):
        get_matcher({"type": "regex", "pattern": "("})
    assert m("contains", "VPN  mac", "how to set up vpn mac client") is True
    assert m("contains", "vpn mac", "vpn") is False
    assert m("contains", "vpn", 3) is False


def test_one_of_and_missing():
    oo = get_matcher("one_of")
    assert oo(["a", "b"], "b", CTX) is True
    assert oo([1, 2], 2.0, CTX) is True
    assert oo([1, 2], True, CTX) is False
    assert oo(["x", ""], MISSING, CTX) is True and oo.allows_missing(["x", ""])
    assert oo(["x"], MISSING, CTX) is False
    assert oo(["x", ""], "", CTX) is False  # "" means omit, not the empty string
    nm = get_matcher({"type": "one_of", "item": "normalized"})
    assert nm(["New York"], "new york", CTX) is True
    with pytest.raises(MatcherError, match="list of acceptable values"):
        oo("abc", "abc", CTX)


def test_schema_matcher():
    s = {"type": "schema", "schema": {"type": "integer", "minimum": 1}}
    assert m(s, None, 3) is True and m(s, None, 0) is False
    assert m("schema", {"type": "string"}, "x") is True
    with pytest.raises(SchemaError, match="not a valid JSON Schema"):
        get_matcher({"type": "schema", "schema": {"type": "nonsense"}})
    with pytest.raises(SchemaError):
        m("schema", {"minimum": "one"}, 3)


def test_ignore():
    ig = get_matcher("ignore")
    assert ig(1, MISSING, CTX) and ig(1, "anything", CTX) and ig.allows_missing(1)


def test_semantic_and_judge_hooks():
    calls = []

    def scorer(a, b):
        calls.append((a, b))
        return 0.9 if "laptop" in b.lower() else 0.1

    ctx = MatchContext(semantic_scorer=scorer, case_input="my laptop won't boot")
    sem = get_matcher("semantic")
    assert sem("laptop broken", "Laptop does not boot", ctx) is True
    assert sem("laptop broken", "printer jam", ctx) is False
    assert get_matcher({"type": "semantic", "threshold": 0.95})("a", "laptop", ctx) is False
    # no expected value: relevance to the case input
    assert sem.check_unexpected("Laptop won't boot", ctx) is True
    assert sem.check_unexpected("", ctx) is False
    assert calls[-1] == ("my laptop won't boot", "Laptop won't boot")
    with pytest.raises(MatcherError, match="semantic_scorer"):
        sem("a", "b", CTX)
    j = get_matcher({"type": "judge", "rubric": "same meaning?"})
    seen = []
    jctx = MatchContext(judge=lambda r, e, p: seen.append((r, e, p)) or p == "yes")
    assert j("x", "yes", jctx) is True and seen[-1] == ("same meaning?", "x", "yes")
    with pytest.raises(MatcherError, match="judge"):
        j("x", "y", CTX)
    with pytest.raises(MatcherError, match="threshold"):
        get_matcher({"type": "semantic", "threshold": 2})


def test_callables_and_registry():
    assert m(lambda e, p: p > e, 1, 2) is True
    assert m(lambda e, p, ctx: ctx is CTX, 1, 2) is True
    boom = get_matcher(lambda e, p: 1 / 0)
    with pytest.raises(MatcherError, match="ZeroDivisionError"):
        boom(1, 2, CTX)
    with pytest.raises(MatcherError, match="must accept"):
        get_matcher(lambda: True)
    register_matcher("_test_startswith", lambda prefix="": (lambda e, p: str(p).startswith(prefix or e)))
    assert m({"type": "_test_startswith", "prefix": "ab"}, None, "abc") is True
    assert m("_test_startswith", "x", "xyz") is True
    assert "_test_startswith" in known_matchers()


def test_unknown_and_malformed_specs():
    with pytest.raises(MatcherError) as ei:
        get_matcher("fuzzy")
    assert "unknown matcher 'fuzzy'" in str(ei.value) and "normalized" in str(ei.value)
    with pytest.raises(MatcherError, match="needs a 'type'"):
        get_matcher({"abs_tol": 1})
    with pytest.raises(MatcherError, match="bad parameters"):
        get_matcher({"type": "numeric", "tolerance": 1})
    with pytest.raises(MatcherError):
        get_matcher(42)  # type: ignore[arg-type]


def test_nan_documented_never_equal():
    for spec in ("exact", "normalized", "unordered", "set"):
        assert m(spec, [math.nan], [math.nan]) is False


def test_name_argument_shorthands():
    from trajcheck.match.matchers import get_matcher

    num = get_matcher("numeric:0.5")  # == {"type": "numeric", "abs_tol": 0.5}
    assert num(10, 10.5) and not num(10, 10.6) and not num(10, "10")
    rx = get_matcher(r"regex:^INC-\d+$")  # the pattern, not the expected value
    assert rx("anything", "INC-1042") and not rx("INC-1042", "inc-1042")
    assert get_matcher("contains:laptop")(None, "my laptop won't boot")
    from trajcheck.errors import MatcherError

    for bad, msg in (("numeric:x", "abs_tol must be a number, got 'x'"),
                     ("exact:1", "'exact' takes no ':' argument"),
                     ("exactt:1", "unknown matcher 'exactt'")):
        with pytest.raises(MatcherError, match=msg):
            get_matcher(bad)
