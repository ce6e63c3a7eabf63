"""The pytest plugin (issue 30, item 4), run in a pytest of its own through pytester: a test
file written from docs/pytest.md alone (its example verbatim, plus a scripted agent that is
wrong on one trial) runs the fixture's assertions, fails with a readable diff naming the
deciding argument, and writes the session scorecard with pass^k over the trials."""

from __future__ import annotations

import json
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "pytest.md"


def _doc_example() -> str:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[0]


# what a new user adds after reading the page: an agent that books the wrong amount on trial
# 2, a test that names a forbidden tool the agent calls, a plain-function assertion
USER_TESTS = '''

def flaky_agent(question, trial):
    run = my_agent(question)
    if trial == 2:
        run[3]["tool_calls"][0]["function"]["arguments"] = '{"order_id": "981", "amount": 4}'
    return run


@pytest.mark.parametrize("trial", range(3))
def test_refund_flaky(trajcheck, trial):
    run = flaky_agent("Refund order 981, 40 USD", trial)
    trajcheck.assert_calls(run, [
        {"name": "lookup_order", "args": {"order_id": "981"}},
        {"name": "issue_refund", "args": {"order_id": "981", "amount": 40}},
    ], mode="in_order")


@pytest.mark.parametrize("trial", range(3))
def test_no_delete(trajcheck, trial):
    run = [{"name": "lookup_order", "args": {"order_id": "7"}},
           {"name": "delete_order", "args": {"order_id": "7", "reason": "asked"}}]
    trajcheck.assert_no_forbidden(run, ["delete_order"])


def test_plain_function():
    from trajcheck.testing import assert_calls

    assert_calls(my_agent("x"), ["issue_refund", "lookup_order"], mode="exact")
'''


def test_the_plugin_is_registered_by_entry_point():
    eps = [e for e in entry_points(group="pytest11") if e.name == "trajcheck"]
    assert [e.value for e in eps] == ["trajcheck.testing.plugin"], (
        "reinstall trajcheck (pip install -e .): the pytest11 entry point is missing")


@pytest.fixture
def session(pytester: pytest.Pytester) -> tuple[pytest.RunResult, Path]:
    pytester.makepyfile(test_agent=_doc_example() + USER_TESTS)
    report = pytester.path / "trajcheck-report"
    # a pytest of its own: the plugin comes from the installed entry point, nothing else
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trajcheck-report", str(report))
    return res, report


def test_user_file_fails_readably_and_writes_the_scorecard(session):
    res, report = session
    res.assert_outcomes(passed=5, failed=5)
    out = res.stdout.str()
    # the wrong trial: expected beside actual, the deciding argument named
    assert re.search(r"#1 issue_refund\(order_id=\"981\", amount=40\)\s+\| call 1: issue_refund"
                     r"\(order_id=\"981\", amount=4\)  <- amount: expected 40, got 4", out), out
    assert "#0 lookup_order(order_id=\"981\")" in out
    # the forbidden call, with its arguments
    assert "1 forbidden call made (forbidden: delete_order):" in out
    assert 'call 1: delete_order(order_id="7", reason="asked")' in out
    # exact mode, order swapped: the first expected call is beside the call that took it
    assert "tool calls do not match (exact)" in out
    assert "FAILED test_agent.py::test_refund_flaky[2]" in out
    # the session scorecard: 3 x 3 runs asserted with the fixture (not the plain function)
    sc = json.loads((report / "scorecard.json").read_text())
    s = sc["suite"]
    assert (s["n_runs"], s["n_cases"]) == (9, 3)
    by_case = {c["case_id"]: (c["successes"], c["trials"]) for c in sc["cases"]}
    assert by_case == {"test_agent.py::test_refund": (3, 3),
                       "test_agent.py::test_refund_flaky": (2, 3),
                       "test_agent.py::test_no_delete": (0, 3)}
    # pass^k = mean over cases of C(c,k)/C(3,k): c = 3, 2, 0
    assert s["pass_hat_k"] == {"1": pytest.approx((1 + 2 / 3 + 0) / 3),
                               "2": pytest.approx((1 + 1 / 3 + 0) / 3),
                               "3": pytest.approx((1 + 0 + 0) / 3)}
    bad = next(r for r in sc["runs"] if r["case_id"].endswith("flaky") and r["trial"] == 2)
    assert not bad["success"] and "amount: expected 40, got 4" in bad["failure_reason"]
    assert sc["suite"]["forbidden_rate"]["value"] == pytest.approx(3 / 9)
    for name in ("scorecard.md", "report.html", "junit.xml"):
        assert (report / name).stat().st_size > 0
    junit = (report / "junit.xml").read_text()
    assert 'tests="9"' in junit and 'failures="4"' in junit
    assert "trajcheck: 9 run(s) of 3 case(s)" in out


def test_inert_without_the_fixture_or_option(pytester: pytest.Pytester):
    # registered, but nothing of trajcheck imported beyond the plugin module itself
    pytester.makepyfile(test_plain=(
        "import sys\n\n"
        "def test_ok():\n"
        "    assert 'trajcheck.testing.plugin' in sys.modules\n"
        "    loaded = [m for m in sys.modules if m.startswith('trajcheck.')]\n"
        "    assert 'trajcheck.testing.assertions' not in loaded, loaded\n"))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    lines = [x for x in res.stdout.lines if "trajcheck" in x]
    # the plugins line lists trajcheck among the others, in entry-point order
    assert len(lines) == 1 and lines[0].startswith("plugins: ") and " trajcheck-" in lines[0].replace(
        ":", ", ").replace(",", ""), lines
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--trajcheck-report", "r")
    res.assert_outcomes(passed=1)
    assert "no trajectory was asserted" in res.stdout.str()
    assert not (pytester.path / "r").exists()


# the assertions as plain functions, on data shaped unlike the docs' example
RUN = [{"name": "book", "args": {"flights": [{"no": "HAT1", "date": "2024-05-20"}], "city": "Zürich"}},
       {"name": "pay", "args": {"amount": 5}}]


def _message(fn, *a, **k) -> str:
    with pytest.raises(AssertionError) as e:
        fn(*a, **k)
    return str(e.value)


def test_nested_argument_is_the_deciding_one():
    from trajcheck.testing import assert_calls

    msg = _message(assert_calls, RUN, [{"name": "book", "args": {"flights": [
        {"no": "HAT1", "date": "2024-05-21"}]}}], mode="superset")
    assert "flights[0].date: expected '2024-05-21', got '2024-05-20'" in msg
    assert "call 1: pay(amount=5)  <- other call (allowed in this mode)" in msg


def test_non_ascii_and_exact_mode():
    from trajcheck.testing import assert_calls

    msg = _message(assert_calls, RUN, [{"name": "book", "args": {"city": "Zurich"}}, "pay"],
                   mode="exact")
    assert "city: expected 'Zurich', got 'Zürich'" in msg
    assert "#1 pay(...)" in msg and "call 1: pay(amount=5)  ok" in msg
    # the right city passes, extra keys allowed by default, refused under exact_keys
    assert_calls(RUN, [{"name": "book", "args": {"city": "Zürich"}}, "pay"], mode="exact")
    msg = _message(assert_calls, RUN, [{"name": "book", "args": {"city": "Zürich"}}, "pay"],
                   mode="exact", args_mode="exact_keys")
    assert "unexpected argument flights" in msg


def test_order_and_extras():
    from trajcheck.testing import assert_called, assert_calls

    msg = _message(assert_calls, RUN, ["pay", "book"], mode="in_order")
    assert "not in the required order" in msg
    assert_calls(RUN, ["pay", "book"], mode="unordered")
    msg = _message(assert_calls, RUN, ["book"], mode="exact")
    assert "call 1: pay(amount=5)  <- unexpected" in msg
    assert_called(RUN, "pay", {"amount": 5})
    msg = _message(assert_called, RUN, "pay", {"amount": 6})
    assert "amount: expected 6, got 5" in msg


def test_failed_then_retried_call_is_set_aside():
    from trajcheck.model import Step, ToolCall, ToolResult, Trajectory
    from trajcheck.testing import assert_calls

    c1 = ToolCall("pay", {"amount": 5}, call_id="a")
    c2 = ToolCall("pay", {"amount": 5}, call_id="b")
    traj = Trajectory(steps=(
        Step(0, "tool_call", tool_calls=(c1,)),
        Step(1, "tool_result", tool_result=ToolResult("a", "pay", "503", is_error=True)),
        Step(2, "tool_call", tool_calls=(c2,)),
        Step(3, "tool_result", tool_result=ToolResult("b", "pay", "ok", is_error=False))))
    assert_calls(traj, [{"name": "pay", "args": {"amount": 5}}], mode="exact")


def test_forbidden_call_text_is_escaped_and_unknown_fields_named():
    from trajcheck.errors import DatasetError
    from trajcheck.testing import assert_calls, assert_no_forbidden

    msg = _message(assert_no_forbidden, [{"name": "rm", "args": {"p": "\x1b[2J\n::x"}}], ["rm"])
    assert "\x1b" not in msg and msg.count("\n") == 1
    with pytest.raises(DatasetError, match="unknown field 'nmae'; did you mean 'name'"):
        assert_calls(RUN, [{"nmae": "book"}])
