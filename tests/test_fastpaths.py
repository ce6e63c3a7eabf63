"""The matching fast paths (issue 8) give exactly the general path's answers.

``exact_equal``'s same-type shortcut is checked against the general iterative walk, and the
all-``exact`` argument check (``compile_all`` pass-through and ``exact_args``) against the
general per-matcher loop, on random JSON-like values built so that equal, nearly equal and
type-confusable values (``1`` / ``1.0`` / ``True`` / ``"1"``, list / tuple, NaN) are common.
No timing is asserted here (see bench/).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from trajcheck.match.matchers import DEFAULT_CONTEXT, _exact_equal_walk, exact_equal
from trajcheck.match.matching import (
    _args_ok,
    _exact_args_ok,
    compatibility,
    compile_all,
    compile_expected,
)
from trajcheck.model import ARGS_MODES, ExpectedCall, ToolCall

scalars = st.sampled_from([0, 1, 1.0, 2, 2.0, True, False, "1", "a", "A", "", None,
                           float("nan"), -0.0, 0.0, 10**20, 1e20])
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.sampled_from("abc"), inner, max_size=3)), max_leaves=6)


@settings(max_examples=600, deadline=None)
@given(values, values)
def test_exact_equal_same_as_general_walk(a, b):
    assert exact_equal(a, b) == _exact_equal_walk(a, b)
    assert exact_equal(a, a) == _exact_equal_walk(a, a)


def test_exact_equal_worked_examples():
    # the DESIGN rule, by hand: numbers by value, bools apart, strings apart, NaN never
    assert exact_equal(2, 2.0) and exact_equal([1, "x"], (1.0, "x"))
    assert not exact_equal(True, 1) and not exact_equal([True], [1]) and not exact_equal("1", 1)
    assert not exact_equal(float("nan"), float("nan"))
    assert exact_equal({"a": [1, {"b": False}]}, {"a": [1.0, {"b": False}]})
    assert not exact_equal({"a": 1}, {"a": 1, "b": 2})


args_dicts = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)


@settings(max_examples=600, deadline=None)
@given(args_dicts, args_dicts, st.sampled_from(ARGS_MODES[:2]))
def test_exact_args_fast_check_same_as_general_loop(pargs, eargs, mode):
    cc = compile_expected(ExpectedCall("t", eargs))
    general = _args_ok(pargs, replace(cc, exact_args=None), mode, DEFAULT_CONTEXT)
    assert _exact_args_ok(pargs, eargs, mode) == general


calls = st.lists(st.tuples(st.sampled_from(["s", "t"]), st.one_of(args_dicts, st.none())),
                 max_size=5)
exp_calls = st.lists(st.tuples(st.sampled_from(["s", "t"]), st.one_of(args_dicts, st.none()),
                               st.sampled_from([None, *ARGS_MODES])), max_size=5)


@settings(max_examples=400, deadline=None)
@given(calls, exp_calls, st.sampled_from([None, *ARGS_MODES]), st.sampled_from([None, *ARGS_MODES]))
def test_compatibility_fast_paths_same_as_general(pred, exp, args_mode, default_mode):
    pcalls = [ToolCall(n, a) for n, a in pred]
    ecalls = [ExpectedCall(n, a, args_mode=m) for n, a, m in exp]
    fast = compatibility(pcalls, compile_all(ecalls), args_mode, DEFAULT_CONTEXT,
                         default_mode=default_mode)
    # the general path: every call compiled, exact_args switched off, modes as the original
    # code set them (the case default copied onto calls without their own mode)
    general_cexp = []
    for e in ecalls:
        cc = replace(compile_expected(e), exact_args=None)
        if args_mode is None and default_mode is not None and cc.args_mode is None:
            cc = replace(cc, args_mode=default_mode)
        general_cexp.append(cc)
    general = compatibility(pcalls, general_cexp, args_mode, DEFAULT_CONTEXT)
    assert fast == general


# ---------------------------------------------------------------------------------------
# Construction and reading fast paths (issue 8, second round): ``from_dict`` and the
# adapters build objects without the dataclasses' generated ``__init__`` and read pydantic
# objects without pydantic's ``__getattr__``; each must give exactly what the plain route
# gives.

import ast  # noqa: E402
import dataclasses  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from pathlib import Path  # noqa: E402

import pydantic  # noqa: E402
import pytest  # noqa: E402

from trajcheck.adapters import _case, _convert  # noqa: E402
from trajcheck.errors import DatasetError  # noqa: E402
from trajcheck.model import Case, Step, ToolResult, Trajectory, Usage  # noqa: E402


def _same(a, b) -> bool:
    """Same type and the same instance dict, recursively through dataclasses and tuples."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        va, vb = vars(a), vars(b)
        return va.keys() == vb.keys() and all(_same(va[k], vb[k]) for k in va)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)


# Subclasses go through the constructors (``cls(**values)``); the classes themselves through
# model._frozen. Both routes read the row the same way, so comparing them checks exactly the
# construction shortcut, whatever the reading rules are.


class _CaseViaInit(Case):
    pass


class _ExpectedViaInit(ExpectedCall):
    pass


class _ToolCallViaInit(ToolCall):
    pass


class _StepViaInit(Step):
    pass


def _outcome(fn, *a):
    try:
        return "ok", fn(*a)
    except Exception as e:  # noqa: BLE001 - the two routes must fail alike
        return "error", (type(e), str(e))


def _same_fields(a, b) -> bool:
    """Same field values and the same instance dict keys (types may differ by the subclass)."""
    return vars(a).keys() == vars(b).keys() and all(
        _same(vars(a)[k], vars(b)[k]) for k in vars(a))


def test_frozen_runs_post_init_like_the_constructor():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int
        y: list = dataclasses.field(default_factory=list)

        def __post_init__(self):
            if self.x < 0:
                raise ValueError("x < 0")
            object.__setattr__(self, "y", tuple(self.y))

    from trajcheck.model import _frozen

    assert _same(_frozen(Checked, {"x": 1, "y": [2]}), Checked(1, [2]))
    with pytest.raises(ValueError, match="x < 0"):
        _frozen(Checked, {"x": -1, "y": []})


small = st.one_of(st.none(), st.integers(-3, 3), st.text("ab", max_size=2), st.booleans())
call_row = st.one_of(
    st.text("xy", min_size=1, max_size=2),
    st.fixed_dictionaries({"name": st.text("xy", min_size=1, max_size=2)}, optional={
        "args": st.none() | args_dicts, "match": st.none() | st.just({}) | st.just({"a": "normalized"}),
        "args_mode": st.none() | st.sampled_from(ARGS_MODES)}),
    st.just({"args": {}}),  # no name: KeyError -> DatasetError
    st.just(5),             # not an object: TypeError -> DatasetError
)
# values that are sometimes well-formed and sometimes not (None, wrong shapes)
row_value = {
    "user": st.none() | st.just({"tier": "gold"}),
    "initial_state": st.none() | st.just("s0"),
    "expected_calls": st.none() | st.lists(call_row, max_size=3),
    "optional_calls": st.none() | st.lists(st.text("ab", max_size=2), max_size=2) | st.just(3),
    "forbidden_calls": st.none() | st.lists(st.text("ab", max_size=2), max_size=2),
    "precedence": st.none() | st.lists(st.lists(small, min_size=1, max_size=3), max_size=2),
    "expected_final_state": st.none() | st.just({"t": []}),
    "response_must_include": st.none() | st.lists(st.text("ab", max_size=2), max_size=2),
    "max_steps": small, "optimal_steps": small,
    "forbidden_sequences": st.none() | st.lists(st.just({"tool": "x"}) | st.just([1]), max_size=2),
    "faults": st.none() | st.lists(st.just({"tool": "x"}), max_size=1),
    "tools": st.none() | st.lists(st.just({"name": "x"}) | st.just(7), max_size=2),
    "expected_route": small, "args_mode": st.none() | st.sampled_from(ARGS_MODES),
    "threshold": st.none() | st.floats(0, 1), "metadata": st.none() | st.just({"k": 1}),
    "unknown_key": small,
}
case_rows = st.fixed_dictionaries({"id": st.text("ab", max_size=3) | st.integers(0, 9),
                                   "input": small}, optional=row_value)


@settings(max_examples=500, deadline=None)
@given(case_rows)
def test_case_from_dict_same_as_constructor_route(row):
    fast, slow = _outcome(Case.from_dict, row), _outcome(_CaseViaInit.from_dict, row)
    assert fast[0] == slow[0]
    if fast[0] == "error":
        assert fast[1] == slow[1]
        assert fast[1][0] is DatasetError and fast[1][1].startswith(f"case {row.get('id')!r}:")
    else:
        assert type(fast[1]) is Case and _same_fields(fast[1], slow[1])


def test_case_from_dict_names_the_field_worked_examples():
    with pytest.raises(DatasetError, match=r"case 'c1': malformed field 'precedence'"):
        Case.from_dict({"id": "c1", "input": "x", "precedence": [["a", "b", "c"]]})
    with pytest.raises(DatasetError, match=r"case 'c2': malformed field 'expected_calls'"):
        Case.from_dict({"id": "c2", "input": "x", "expected_calls": [{"args": {}}]})
    with pytest.raises(DatasetError, match=r"case 'c3': missing required field 'input'"):
        Case.from_dict({"id": "c3"})
    # the first bad field in field order is the one named
    with pytest.raises(DatasetError, match=r"malformed field 'optional_calls'"):
        Case.from_dict({"id": "c4", "input": "x", "tools": [7], "optional_calls": 3})


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({"name": st.text("xy", max_size=2)}, optional={
    "args": st.none() | args_dicts, "call_id": st.none() | st.text(max_size=2),
    "raw_args": st.none() | st.text(max_size=2), "args_parse_error": st.none() | st.text(max_size=2),
    "tool_type": st.none() | st.just("mcp"), "match": st.none() | st.just({"a": "normalized"}),
    "args_mode": st.none() | st.sampled_from([*ARGS_MODES, "bogus"])}))
def test_call_and_step_from_dict_same_as_constructor_route(d):
    for cls, via_init in ((ToolCall, _ToolCallViaInit), (ExpectedCall, _ExpectedViaInit)):
        fast, slow = _outcome(cls.from_dict, d), _outcome(via_init.from_dict, d)
        assert fast[0] == slow[0], cls
        if fast[0] == "ok":
            assert type(fast[1]) is cls and _same_fields(fast[1], slow[1])
        else:
            assert fast[1] == slow[1]
    want = ToolCall(name=d["name"], args=d.get("args"), call_id=d.get("call_id"),
                    raw_args=d.get("raw_args"), args_parse_error=d.get("args_parse_error"),
                    tool_type=d.get("tool_type"))
    assert _same(ToolCall.from_dict(d), want)
    r = {"call_id": d.get("call_id"), "name": d["name"], "output": d.get("args"),
         "is_error": d.get("tool_type") == "mcp", "error": d.get("raw_args")}
    assert _same(ToolResult.from_dict(r), ToolResult(**r))
    step = {"index": 3, "kind": "tool_call", "tool_calls": [d], "tool_result": r,
            "usage": {"input_tokens": 2}, "latency_ms": 1.5, "metadata": {"m": 1}}
    want_step = Step(index=3, kind="tool_call", tool_calls=(want,), tool_result=ToolResult(**r),
                     usage=Usage(input_tokens=2), latency_ms=1.5, metadata={"m": 1})
    assert _same(Step.from_dict(step), want_step)
    assert _same_fields(Step.from_dict(step), _StepViaInit.from_dict(step))
    traj = {"steps": [step, {"index": 4, "kind": "final_response", "content": "ok"}], "final_response": "ok",
            "total_usage": {"output_tokens": 1}, "total_cost_usd": 0.5, "trace_id": d.get("call_id"),
            "metadata": {"case_id": "c"}}
    want_traj = Trajectory(steps=(want_step, Step(index=4, kind="final_response", content="ok")),
                           final_response="ok", total_usage=Usage(output_tokens=1), total_cost_usd=0.5,
                           trace_id=d.get("call_id"), metadata={"case_id": "c"})
    assert _same(Trajectory.from_dict(traj), want_traj)
    with pytest.raises(KeyError):
        ToolCall.from_dict({"args": {}})


def test_from_dict_on_a_subclass_uses_its_constructor():
    seen = []

    @dataclasses.dataclass(frozen=True)
    class Logged(ToolCall):
        def __post_init__(self):
            seen.append(self.name)

    @dataclasses.dataclass(frozen=True)
    class LoggedCase(Case):
        def __post_init__(self):
            seen.append(self.id)

    assert type(Logged.from_dict({"name": "a"})) is Logged
    assert type(LoggedCase.from_dict({"id": "c", "input": 1})) is LoggedCase
    assert seen == ["a", "c"]
    assert ExpectedCall.from_dict({"name": "a", "match": {"x": "normalized"}}).match == {"x": "normalized"}


# --- reading framework objects: _getter gives getattr(obj, name, None) / obj.get(name)


class _Plain(pydantic.BaseModel):
    name: str = "n"
    args: dict = {}


class _WithProperty(pydantic.BaseModel):
    content: str = "c"

    @property
    def role(self) -> str:  # a class attribute named like a field the adapters read
        return "assistant"


class _WithPrivate(pydantic.BaseModel):
    content: str = "c"
    _status: str = "p"


class _Extra(pydantic.BaseModel, extra="allow"):
    content: str = "c"


class _OwnGetattr(pydantic.BaseModel):
    content: str = "c"

    def __getattr__(self, item):
        return f"dyn:{item}"


class _Obj:
    def __init__(self) -> None:
        self.name = "o"
        self.args = {"a": 1}


class _Map(Mapping):
    def __init__(self, d):
        self._d = d

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def _framework_objects() -> list:
    objs = [_Plain(), _Plain(name="x", args={"q": 1}), _WithProperty(), _WithPrivate(),
            _Extra(), _Extra(status="error", is_error=True, role="tool"), _OwnGetattr(), _Obj(),
            {"name": "d", "role": "user"}, _Map({"type": "ai", "content": "hi"})]
    ragas_messages = pytest.importorskip("ragas.messages")
    objs += [ragas_messages.HumanMessage(content="hi", metadata={"trajcheck": {}}),
             ragas_messages.AIMessage(content="", tool_calls=[ragas_messages.ToolCall(name="a", args={})]),
             ragas_messages.ToolMessage(content="r", metadata={"is_error": True}),
             ragas_messages.ToolCall(name="a", args={"x": 1})]
    lc = pytest.importorskip("langchain_core.messages")
    objs += [lc.AIMessage(content="", tool_calls=[{"name": "a", "args": {}, "id": "1"}]),
             lc.ToolMessage(content="r", tool_call_id="1", status="error"),
             lc.ToolMessage(content="r", tool_call_id="1", is_error=True, metadata={"x": 1}),
             lc.HumanMessage(content="hi")]
    de = pytest.importorskip("deepeval.test_case")
    objs += [de.ToolCall(name="a", input_parameters={"x": 1}, output="o"),
             de.LLMTestCase(input="i", actual_output="o", name="n", metadata={"m": 1})]
    return objs


def test_getter_reads_exactly_what_getattr_reads():
    names = sorted(_convert._READ_NAMES) + ["model_fields_set", "nonexistent", "_status"]
    objs = _framework_objects()
    for o in objs:
        g = _convert._getter(o)
        for n in names:
            want = o.get(n) if isinstance(o, Mapping) else getattr(o, n, None)
            got = g(n) if (n in _convert._READ_NAMES or g.__name__ == "get_attr") else want
            assert got == want or (callable(got) and callable(want)), (type(o).__name__, n)
    # the batch form gives the same readers' answers
    for o, g in zip(objs, _convert._getters(objs)):
        for n in sorted(_convert._READ_NAMES):
            want = o.get(n) if isinstance(o, Mapping) else getattr(o, n, None)
            assert g(n) == want, (type(o).__name__, n)
    # a model whose class supplies a read name, or with its own __getattr__, is not read
    # from its __dict__
    assert not _convert._plain_model_class(_WithProperty)
    assert not _convert._plain_model_class(_OwnGetattr)
    assert _convert._plain_model_class(_Plain) and _convert._plain_model_class(_Extra)
    assert _convert._getter(_Extra(is_error=True))("is_error") is True


def test_every_name_read_through_a_getter_is_listed():
    # _getter's dict shortcut is exact only for names in _READ_NAMES: check the source
    src = Path(_convert.__file__).read_text()
    read: set[str] = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = node.args
            if node.func.id in ("g", "gc", "gf") and args and isinstance(args[0], ast.Constant):
                read.add(args[0].value)
            if node.func.id == "_get" and len(args) > 1 and isinstance(args[1], ast.Constant):
                read.add(args[1].value)
    assert read and read <= _convert._READ_NAMES, read - _convert._READ_NAMES


# --- the adapters' conversions equal the constructor-built objects


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["s", "t"]), args_dicts), min_size=1, max_size=4),
       st.lists(st.tuples(st.sampled_from(["s", "t"]), args_dicts), max_size=4),
       st.text("ab", max_size=3), st.sampled_from(["", "done"]))
def test_ragas_conversion_same_objects_as_constructors(pred, exp, text, final):
    rm = pytest.importorskip("ragas.messages")
    msgs = [rm.HumanMessage(content=text),
            rm.AIMessage(content="", tool_calls=[rm.ToolCall(name=n, args=a) for n, a in pred]),
            rm.ToolMessage(content="r", metadata={"is_error": True, "error": "boom"})]
    if final:
        msgs.append(rm.AIMessage(content=final))
    steps = [Step(0, "user", text),
             Step(1, "tool_call", None, tuple(ToolCall(n, dict(a)) for n, a in pred)),
             Step(2, "tool_result", tool_result=ToolResult(None, None, "r", True, "boom"))]
    if final:
        steps.append(Step(3, "final_response", final))
    want = Trajectory(steps=tuple(steps), final_response=final or None, source_format="ragas")
    got = _convert.ragas_trajectory(msgs)
    assert got == want and _same(got, want)
    ref = [rm.ToolCall(name=n, args=a) for n, a in exp]
    want_exp = tuple(ExpectedCall(n, dict(a)) for n, a in exp)
    got_exp = _convert.ragas_expected(ref)
    assert _same(got_exp, want_exp)
    case = _case.build_case("ragas", text, got_exp, {}, None)
    assert _same(case, Case(id="ragas", input=text, expected_calls=want_exp))
    # with settings, the validating route gives the same kind of object
    case2 = _case.build_case("ragas", text, got_exp, {"optional_calls": ["s"]})
    assert _same(case2, Case(id="ragas", input=text, expected_calls=want_exp, optional_calls=("s",)))


def test_deepeval_conversion_same_objects_as_constructors():
    de = pytest.importorskip("deepeval.test_case")
    tc = de.LLMTestCase(input="i", actual_output="o", name="n", metadata={"failed_calls": [0]},
                        tools_called=[de.ToolCall(name="a", input_parameters={"x": 1}, output="err"),
                                      de.ToolCall(name="a", input_parameters={"x": 2}, output="ok"),
                                      de.ToolCall(name="b")],
                        expected_tools=[de.ToolCall(name="a", input_parameters={"x": 2}), de.ToolCall(name="b")])
    t = tc.tools_called[0].type  # DeepEval's call type (an enum, "function" by default)
    tt = str(getattr(t, "value", t)).lower() if t is not None else None
    want = Trajectory(steps=(
        Step(0, "user", "i"),
        Step(1, "tool_call", None, (ToolCall("a", {"x": 1}, "tools_called[0]", tool_type=tt),)),
        Step(2, "tool_result", tool_result=ToolResult("tools_called[0]", "a", "err", True)),
        Step(3, "tool_call", None, (ToolCall("a", {"x": 2}, "tools_called[1]", tool_type=tt),)),
        Step(4, "tool_result", tool_result=ToolResult("tools_called[1]", "a", "ok")),
        Step(5, "tool_call", None, (ToolCall("b", {}, "tools_called[2]", tool_type=tt),)),
        Step(6, "final_response", "o")), final_response="o", source_format="deepeval",
        metadata={"case_id": "n"})
    assert _same(_convert.deepeval_trajectory(tc), want)
    assert _same(_convert.deepeval_expected(tc.expected_tools),
                 (ExpectedCall("a", {"x": 2}), ExpectedCall("b", None)))
    assert _same(_convert.deepeval_expected(tc.expected_tools, compare_args=False),
                 (ExpectedCall("a", None), ExpectedCall("b", None)))
