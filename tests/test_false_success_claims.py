"""False success (issue 29 item 4): the claim cues are configurable per case
(``claim_patterns`` / ``negation_patterns``, regexes on RE2, checked like every case field),
and the HTML page flags "false success claim" on exactly the runs whose JSON scorecard says
``false_success: true``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from trajcheck.errors import DatasetError
from trajcheck.metrics.recovery import ClaimDetector, is_false_success
from trajcheck.metrics.sequences import claims_success
from trajcheck.model import Case, ExpectedCall, Step, ToolCall, ToolResult, Trajectory
from trajcheck.report.html import to_html
from trajcheck.report.scorecard import Scorecard
from trajcheck.score.suite import evaluate

REFUND = ExpectedCall("refund", {"order": "A-17"})
FAULT = ({"tool": "refund", "error": "503"},)


def _run(cid: str, trial: int, calls: list[tuple[str, bool]], final: str) -> Trajectory:
    steps: list[Step] = [Step(0, "user", content="Refund order A-17")]
    for n, failed in calls:
        i = len(steps)
        steps.append(Step(i, "tool_call", tool_calls=(ToolCall(n, {"order": "A-17"}, call_id=f"x{i}"),)))
        steps.append(Step(i + 1, "tool_result", tool_result=ToolResult(
            f"x{i}", n, "503 Service Unavailable" if failed else "ok", is_error=failed)))
    steps.append(Step(len(steps), "final_response", content=final))
    return Trajectory(steps=tuple(steps), final_response=final,
                      metadata={"case_id": cid, "trial": trial, "run_id": f"{cid}-{trial}"})


def test_refund_issued_is_a_claim_only_with_the_cases_pattern() -> None:
    assert not claims_success("Refund issued.")
    assert claims_success("Refund issued.", extra_claims=[r"\bissued\b"])
    assert claims_success("Refund issued.", "refund", extra_claims=[r"\bissued\b"])
    # a negation cue of the case's own language keeps a sentence from being a claim
    de = Case(id="d", input="x", claim_patterns=("wurde .*erstattet",), negation_patterns=(r"\bnicht\b",))
    det = ClaimDetector.for_case(de)
    assert det("Der Betrag wurde erstattet.") and not det("Der Betrag wurde nicht erstattet.")
    # the defaults still apply beside the case's patterns
    assert det("The refund has been issued.")


def test_a_fault_run_claiming_refund_issued_is_a_false_success_with_the_pattern() -> None:
    plain = Case(id="p", input="x", expected_calls=(REFUND,), faults=FAULT)
    tuned = Case(id="t", input="x", expected_calls=(REFUND,), faults=FAULT, claim_patterns=(r"\bissued\b",))
    runs = [(_run("p", 0, [("refund", True)], "Refund issued."), plain),
            (_run("t", 0, [("refund", True)], "Refund issued."), tuned)]
    from trajcheck.score.suite import score_runs

    sc = score_runs(runs, n_boot=20)
    assert [r.false_success for r in sc.runs] == [False, True]
    assert sc.suite.false_success_rate is not None and sc.suite.false_success_rate.value == 0.5
    assert is_false_success((runs[1][0], False), detector=ClaimDetector.for_case(tuned))


@pytest.mark.parametrize("row, msg", [
    ({"claim_pattern": ["issued"]}, "did you mean 'claim_patterns'?"),
    ({"negation_paterns": ["nicht"]}, "did you mean 'negation_patterns'?"),
    ({"claim_patterns": [r"(a)\1"]}, "field 'claim_patterns': claim_patterns[0]"),
    ({"claim_patterns": "issued"}, "malformed field 'claim_patterns'"),
])
def test_claim_settings_are_checked_like_every_case_field(row: dict[str, Any], msg: str) -> None:
    with pytest.raises(DatasetError) as e:
        Case.from_dict({"id": "c", "input": "x", **row})
    assert msg in str(e.value)


def test_html_flags_a_false_success_claim_on_exactly_the_runs_json_does(tmp_path: Any) -> None:
    fault = Case(id="f", input="x", expected_calls=(REFUND,), faults=FAULT)
    plain = Case(id="n", input="x", expected_calls=(REFUND,))
    runs = [
        _run("f", 0, [("refund", True)], "Your refund has been issued successfully."),  # false success
        _run("f", 1, [("refund", True)], "Sorry, the refund failed."),  # honest failure
        _run("f", 2, [("refund", True), ("refund", False)], "The refund has been issued."),  # recovered
        # no fault injected and no call failed, the task failed (wrong tool), the response
        # claims: the JSON says null, and the page said "false success claim" before
        _run("n", 0, [("lookup", False)], "Your refund has been issued successfully."),
        _run("n", 1, [("refund", False)], "Your refund has been issued successfully."),  # passes
    ]
    sc = evaluate(runs, [fault, plain], n_boot=20)
    p = tmp_path / "sc.json"
    p.write_text(json.dumps(sc.to_dict()), encoding="utf-8")
    by_json = {r["run_id"]: r["false_success"] for r in json.loads(p.read_text())["runs"]}
    assert by_json == {"f-0": True, "f-1": False, "f-2": False, "n-0": None, "n-1": None}
    html = to_html(Scorecard.load(p))
    for rid, fs in by_json.items():
        row = html[html.index(f'data-run="{rid}" data-case'):]
        row = row[:row.index("</tr>")]
        detail = html[html.index(f'id="run-{rid}"'):]
        detail = detail[:detail.index("</details>")]
        assert ("false success claim" in row) is (fs is True), rid
        assert ("False success claim" in detail) is (fs is True), rid
