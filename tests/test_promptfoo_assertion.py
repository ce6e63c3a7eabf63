"""promptfoo_provider/assertion.py: get_assert on hand-computed cases (no promptfoo needed).

Every expected score below is worked out by hand from DESIGN.md's definitions; the promptfoo
end-to-end run is in test_promptfoo_cli.py.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

try:
    import promptfoo_provider  # noqa: F401
except ImportError:  # pytest run without the repository root on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hypothesis import given, settings
from hypothesis import strategies as st

from promptfoo_provider.assertion import get_assert
from trajcheck.metrics.composite import score_trajectory
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, Trajectory

OWN = "file://../../promptfoo_provider/assertion.py"


def ctx(config=None, vars=None, *, test_assert=None, metadata=None, prompt="p"):
    c = {"prompt": prompt, "vars": vars or {}, "test": {"description": "t", "assert": test_assert or []}}
    if config is not None:
        c["config"] = config
    if metadata is not None:
        c["metadata"] = metadata
    return c


def oai_call(i, name, args):
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


OPENAI_MSG = {"role": "assistant", "content": None, "tool_calls": [
    oai_call(1, "search_flights", {"origin": "SFO", "destination": "JFK"}),
    oai_call(2, "book_flight", {"flight_id": "FL100", "seats": 1})]}
EXPECTED = [{"name": "search_flights", "args": {"origin": "SFO", "destination": "JFK"}},
            {"name": "book_flight", "args": {"flight_id": "FL100"}}]


def check_shape(r):
    assert set(r) == {"pass", "score", "reason", "componentResults", "namedScores"}
    assert isinstance(r["pass"], bool) and isinstance(r["score"], float) and isinstance(r["reason"], str)
    assert r["reason"]
    json.dumps(r)  # promptfoo's wrapper json.dumps the result


def test_openai_message_exact_keys_vs_expected_keys():
    # exact_keys: book_flight carries an unexpected `seats` -> 1 of 2 match: P=R=F1=0.5
    r = get_assert(OPENAI_MSG, ctx({"expected_calls": EXPECTED, "args_mode": "exact_keys"}))
    check_shape(r)
    assert r["score"] == pytest.approx(0.5) and r["pass"] is False
    assert r["namedScores"] == {"tool_call_f1": 0.5, "tool_call_f1.precision": 0.5,
                                "tool_call_f1.recall": 0.5}
    assert "openai_chat" in r["reason"]
    # expected_keys: extra arguments allowed -> both match, F1 = 1; the default is the same
    r = get_assert(OPENAI_MSG, ctx({"expected_calls": EXPECTED, "args_mode": "expected_keys"}))
    assert r["score"] == 1.0 and r["pass"] is True
    assert get_assert(OPENAI_MSG, ctx({"expected_calls": EXPECTED}))["score"] == 1.0


def test_openai_output_as_json_string_and_message_list_agree():
    cfg = {"expected_calls": EXPECTED, "args_mode": "expected_keys"}
    as_str = get_assert(json.dumps(OPENAI_MSG), ctx(cfg))
    as_list = get_assert([{"role": "user", "content": "go"}, OPENAI_MSG], ctx(cfg))
    assert as_str["score"] == as_list["score"] == 1.0


def test_anthropic_tool_use_blocks():
    msg = {"role": "assistant", "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Paris"}}]}
    cfg = {"expected_calls": [{"name": "get_weather", "args": {"city": "Paris"}}, "get_time"], "threshold": 0.6}
    # 1 call, it matches; 2 expected: P = 1, R = 1/2, F1 = 2*0.5/1.5 = 2/3 >= 0.6
    r = get_assert(msg, ctx(cfg))
    assert r["score"] == pytest.approx(2 / 3) and r["pass"] is True and "anthropic" in r["reason"]
    # bare content blocks (no message wrapper) read the same
    assert get_assert(msg["content"], ctx(cfg))["score"] == pytest.approx(2 / 3)


def test_plain_list_json_string_with_optional_call():
    out = json.dumps([{"name": "a", "args": {"x": 1}}, {"name": "b", "args": {}}, {"name": "c"}])
    # c is optional and unmatched -> not counted: P = 2/2, R = 2/2
    r = get_assert(out, ctx({"expected_calls": ["a", "b"], "optional_calls": ["c"]}))
    assert r["score"] == 1.0 and r["pass"] is True
    # without the optional declaration c counts: P = 2/3, R = 1, F1 = 0.8
    r = get_assert(out, ctx({"expected_calls": ["a", "b"]}))
    assert r["score"] == pytest.approx(0.8) and r["pass"] is False


def test_config_and_vars_one_precedence_and_vars_json_strings_are_read():
    out = [{"name": "a", "args": {}}]
    # vars only (as a JSON string, as promptfoo users must write lists in vars)
    assert get_assert(out, ctx(None, {"expected_calls": '["a"]'}))["score"] == 1.0
    # config and vars disagree on expected_calls: an error naming both, never one silently
    r = get_assert(out, ctx({"expected_calls": ["b"]}, {"expected_calls": '["a"]'}))
    assert r["score"] == 0.0 and r["pass"] is False
    assert "the test's vars" in r["reason"] and "the assertion's config" in r["reason"]
    # keys missing from config come from vars.trajcheck: threshold 0.5, F1 = 2/3 passes
    r = get_assert([{"name": "a"}, {"name": "z"}],
                   ctx({"expected_calls": ["a"]}, {"trajcheck": '{"threshold": 0.5}'}))
    assert r["score"] == pytest.approx(2 / 3) and r["pass"] is True
    # a var named like a shared setting (threshold, tools, user, match, metric) is the prompt's
    r = get_assert([{"name": "a"}, {"name": "z"}], ctx({"expected_calls": ["a"]}, {"threshold": "0.5"}))
    assert r["score"] == pytest.approx(2 / 3) and r["pass"] is False
    # lists are joined: forbidden in config (defaultTest) and in vars both count
    r = get_assert([{"name": "drop_db"}], ctx({"metric": "forbidden", "forbidden_calls": "delete_namespace"},
                                              {"forbidden_calls": "drop_db, purge"}))
    assert r["score"] == 0.0 and r["pass"] is False and "drop_db" in r["reason"]


def _promptfoo_inverse(r):
    """What promptfoo 0.123.1 does to a dict result of a not-python assertion (no threshold):
    pass flipped, score kept (normalizeScriptAssertionResult)."""
    return not r["pass"], r["score"]


def test_negated_assertion_reports_one_minus_value_and_promptfoo_flip_gives_verdict():
    cfg = {"expected_calls": ["a", "b", "c"]}
    out = [{"name": "a"}, {"name": "b"}]
    # value: P = 1, R = 2/3, F1 = 0.8 -> fails at 1.0; negated score 1 - 0.8 = 0.2
    r = get_assert(out, ctx(cfg, test_assert=[{"type": "not-python", "value": OWN, "config": cfg}]))
    check_shape(r)
    assert r["score"] == pytest.approx(0.2)
    assert r["pass"] is False  # un-flipped: promptfoo flips it
    assert _promptfoo_inverse(r) == (True, pytest.approx(0.2))
    assert r["namedScores"] == {}
    assert len(r["componentResults"]) == 1 and r["componentResults"][0]["pass"] is True
    assert "1 - score = 0.2" in r["componentResults"][0]["reason"]
    # same assertion not negated: score 0.8, pass False
    r2 = get_assert(out, ctx(cfg, test_assert=[{"type": "python", "value": OWN, "config": cfg}]))
    assert r2["score"] == pytest.approx(0.8) and r2["pass"] is False and r2["componentResults"] == []


def test_negation_found_inside_assert_set_and_ambiguity_is_reported():
    cfg = {"expected_calls": ["a"]}
    nested = [{"type": "assert-set", "assert": [{"type": "not-python", "value": OWN, "config": cfg}]}]
    r = get_assert([{"name": "a"}], ctx(cfg, test_assert=nested))
    assert r["score"] == 0.0 and r["pass"] is True  # value 1 -> negated score 0; promptfoo flips -> fails
    # python and not-python with one config: a returned failure would pass once promptfoo
    # flips the not-python one, so the assertion raises and promptfoo fails both itself
    from promptfoo_provider.assertion import AssertionNotScored

    both = [{"type": "python", "value": OWN, "config": cfg}, {"type": "not-python", "value": OWN, "config": cfg}]
    with pytest.raises(AssertionNotScored, match="negation cannot be told apart"):
        get_assert([{"name": "a"}], ctx(cfg, test_assert=both))
    # the same when the assertion is not among the test's assertions at all
    other = [{"type": "python", "value": OWN, "config": {"expected_calls": ["b"]}}]
    with pytest.raises(AssertionNotScored, match="needs 'precedence'"):
        get_assert([{"name": "a"}], ctx({"metric": "ordering_accuracy"}, test_assert=other))


def test_bad_input_under_negation_still_fails_after_promptfoo_flip():
    cfg = {"expected_calls": ["a"]}
    r = get_assert(42, ctx(cfg, test_assert=[{"type": "not-python", "value": OWN, "config": cfg}]))
    assert _promptfoo_inverse(r)[0] is False and r["score"] == 0.0
    assert "output (int) has no tool calls" in r["componentResults"][0]["reason"]


def test_assertion_level_threshold_is_the_default():
    cfg = {"expected_calls": ["a", "b"]}
    out = [{"name": "a"}]  # P 1, R 0.5, F1 2/3
    r = get_assert(out, ctx(cfg, test_assert=[{"type": "python", "value": OWN, "config": cfg, "threshold": 0.6}]))
    assert r["score"] == pytest.approx(2 / 3) and r["pass"] is True
    r = get_assert(out, ctx(cfg, test_assert=[{"type": "python", "value": OWN, "config": cfg}]))
    assert r["pass"] is False  # default 1.0


def test_trajectory_match_promptfoo_and_neutral_mode_names():
    out = [{"name": "search"}, {"name": "book"}, {"name": "search"}]
    def tm(mode, expected):
        return get_assert(out, ctx({"metric": "trajectory_match", "mode": mode, "expected_calls": expected}))
    # promptfoo tool-sequence = in_order subsequence: [book, search] occurs in order -> 1
    assert tm("tool-sequence", ["book", "search"])["score"] == 1.0
    assert tm("trajectory:tool-sequence", ["search", "search"])["score"] == 1.0
    # [book, book]: only one book -> 0
    r = tm("tool-sequence", ["book", "book"])
    assert r["score"] == 0.0 and r["pass"] is False
    # neutral exact: 3 calls vs 2 expected -> 0; superset of [book] -> 1
    assert tm("exact", ["search", "book"])["score"] == 0.0
    assert tm("superset", ["book"])["score"] == 1.0
    # promptfoo tool-used = superset
    assert tm("tool-used", ["book", "search"])["score"] == 1.0
    assert "unknown" in tm("no-such-mode", ["a"])["reason"]


def test_forbidden_metric():
    out = [{"name": "lookup"}, {"name": "delete_account"}]
    r = get_assert(out, ctx({"metric": "forbidden", "forbidden_calls": ["delete_*"]}))
    assert r["score"] == 0.0 and r["pass"] is False and "delete_account" in r["reason"]
    r = get_assert(out, ctx({"metric": "forbidden", "forbidden_calls": ["drop_table"]}))
    assert r["score"] == 1.0 and r["pass"] is True
    r = get_assert(out, ctx({"metric": "forbidden"}))
    assert r["pass"] is False and "needs 'forbidden_calls'" in r["reason"]


def test_composite_equals_core_score():
    out = [{"name": "a", "args": {"x": 1}}, {"name": "b", "args": {"y": 2}}, {"name": "zzz", "args": {}}]
    cfg = {"metric": "composite", "expected_calls": [{"name": "a", "args": {"x": 1}}, {"name": "b", "args": {"y": 3}}],
           "max_steps": 4}
    r = get_assert(out, ctx(cfg))
    traj = Trajectory(steps=tuple(Step(i, "tool_call", tool_calls=(ToolCall(c["name"], c["args"]),))
                                  for i, c in enumerate(out)))
    case = Case(id="t", input="p", expected_calls=(ExpectedCall("a", {"x": 1}), ExpectedCall("b", {"y": 3})),
                max_steps=4)
    core = score_trajectory(traj, case, threshold=0.8)
    assert r["score"] == pytest.approx(core.score) and r["pass"] is bool(core.passed)
    assert core.reason in r["reason"]


def test_provider_metadata_trajectory_is_preferred_over_text_output():
    traj = Trajectory(steps=(Step(0, "tool_call", tool_calls=(ToolCall("a", {}),)),), final_response="done")
    meta = {"trajectory": traj.to_dict()}
    r = get_assert("done", ctx({"expected_calls": ["a"]}, metadata=meta))
    assert r["score"] == 1.0 and "metadata.trajectory" in r["reason"]
    # source: output -> the text output has no calls: P = 0 (nothing counted, 1 expected), F1 0
    r = get_assert("done", ctx({"expected_calls": ["a"], "source": "output"}, metadata=meta))
    assert r["score"] == 0.0 and "text" in r["reason"]


def test_unparsed_arguments_count_but_never_match():
    msg = {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                                "function": {"name": "f", "arguments": '{"bad'}}]}
    r = get_assert(msg, ctx({"expected_calls": ["f"]}))
    # the call is predicted (counted) but unmatched: P 0/1, R 0/1 -> F1 0
    assert r["score"] == 0.0 and r["pass"] is False and "trace problem" in r["reason"]


@pytest.mark.parametrize("output,config,needle", [
    (42, {"expected_calls": ["a"]}, "output (int) has no tool calls"),
    ("{not json", {"expected_calls": ["a"]}, "not valid JSON"),
    ({"foo": 1}, {"expected_calls": ["a"]}, "output (dict) could not be read as a trace"),
    (None, {"expected_calls": ["a"]}, "no output"),
    ([{"name": "a"}], {"expected_calls": 5}, "expected_calls: expected a list"),
    ([{"name": "a"}], {"expected_calls": [7]}, "expected_calls[0]"),
    ([{"name": "a"}], {"expected_calls": "[a"}, "expected_calls: not valid JSON"),
    ([{"name": "a"}], {"expected_calls": ["a"], "metric": "bleu"}, "unknown trajcheck metric 'bleu'"),
    ([{"name": "a"}], {"expected_calls": ["a"], "threshold": 2}, "threshold"),
    ([{"name": "a"}], {"expected_calls": ["a"], "colour": "red"}, "assertion config: unknown key 'colour'"),
    ([{"name": "a"}], {"expected_calls": ["a"], "args_mode": "loose"}, "args_mode"),
    ([{"name": "a"}], {"expected_calls": ["a"], "format": "klingon"}, "unknown format"),
])
def test_bad_input_fails_with_a_clear_reason(output, config, needle):
    r = get_assert(output, ctx(config))
    check_shape(r)
    assert r["pass"] is False and r["score"] == 0.0
    assert needle in r["reason"], r["reason"]


def test_context_not_a_mapping():
    r = get_assert([], "nope")  # type: ignore[arg-type]
    assert r["pass"] is False and "context must be a mapping" in r["reason"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.sampled_from(["name", "args", "role", "content", "tool_calls", "type", "input", "function", "x"]),
        kids, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(output=json_values, expected=json_values)
def test_never_raises_and_always_well_formed(output, expected):
    r = get_assert(output, ctx({"expected_calls": expected}))
    check_shape(r)
    assert math.isfinite(r["score"]) and 0.0 <= r["score"] <= 1.0


def test_assistant_message_output_says_failures_cannot_be_seen():
    # the team's own provider returns the assistant message: calls, no results. A metric that
    # needs a failed call is not applicable here, and the reason says why it cannot know.
    r = get_assert(OPENAI_MSG, ctx({"metric": "false_success"}))
    assert r["pass"] is True and r["metadata"]["trajcheck"]["not_applicable"] is True
    assert ("the output holds 2 tool call(s) and no tool results, so a failed call cannot be seen"
            in r["reason"])
    r = get_assert(OPENAI_MSG, ctx({"expected_calls": EXPECTED}))
    assert r["score"] == 1.0 and "no tool results" in r["reason"]


def test_error_looking_results_without_a_flag_get_the_error_pattern_hint():
    msgs = [{"role": "user", "content": "book"}, OPENAI_MSG,
            {"role": "tool", "tool_call_id": "c1", "content": '{"flights": ["FL100"]}'},
            {"role": "tool", "tool_call_id": "c2", "content": "Error: 503 service unavailable"},
            {"role": "assistant", "content": "Your flight is booked."}]
    r = get_assert(msgs, ctx({"expected_calls": EXPECTED}))
    assert r["score"] == 1.0
    assert ("hint: 1 of 2 tool results from a source without an error flag (openai_chat) look like errors "
            "(e.g. 'Error: 503 service unavailable') and count as successful calls; "
            "error_pattern: '^\\s*(Error|ERROR|error)\\b' would mark them failed") in r["reason"]
    # with the pattern given, the call is failed and no hint is printed
    r = get_assert(msgs, ctx({"expected_calls": EXPECTED, "error_pattern": "^Error", "metric": "false_success"}))
    assert "hint:" not in r["reason"] and "no tool results" not in r["reason"]
    assert r["score"] == 0.0 and r["pass"] is False  # a claim after a failed booking: 1 - rate 1.0
