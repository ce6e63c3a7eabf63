"""One bad record or call loses only itself (DESIGN.md: readers keep malformed calls and record
the problem; a malformed line does not sink a whole file), and every problem says where:
``<file>:<line>``, ``<file> record <i>`` and a 0-based path inside the record."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.errors import TraceFormatError
from trajcheck.match.matching import call_matches
from trajcheck.model import ExpectedCall, Step, ToolCall, Trajectory
from trajcheck.read.traces import load

TAU = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return json.loads(TAU.read_text())


def _write(tmp_path: Path, name: str, recs: Any) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(recs))
    return p


@pytest.mark.parametrize("breakage, reason", [
    (lambda r: r.pop("traj"), "no 'traj' list"),
    (lambda r: r.__setitem__("traj", "oops"), "no 'traj' list ('traj' is a str)"),
    (lambda r: r.__setitem__("task_id", None), "field 'task_id' is null"),
    (lambda r: r.pop("task_id"), "no 'task_id'"),
])
def test_one_bad_tau_record_is_skipped_and_named(tmp_path: Path, records: list[dict[str, Any]],
                                                 breakage: Any, reason: str) -> None:
    recs = copy.deepcopy(records)
    breakage(recs[3])
    p = _write(tmp_path, "tau.json", recs)
    res = load(p)
    assert len(res) == 199 and res.formats == {"tau_bench": 199}
    assert res.skipped == [f"{p} record 3: {reason}; skipped"]
    assert res.problems == res.skipped and res.faults == []
    # the skipped run is task 3 trial 0: its case still comes from task 3's other trials
    assert "3-0" not in {t.metadata["run_id"] for t in res}
    assert len(res.cases) == 50 and "None" not in res.cases


def test_null_task_id_never_becomes_case_none(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    recs = copy.deepcopy(records[:2])
    recs[0]["task_id"] = None
    res = load(_write(tmp_path, "t.json", recs))
    assert [t.metadata["case_id"] for t in res] == ["1"] and list(res.cases) == ["1"]
    # a single record that cannot be read is not a trace: raises, naming file and reason
    p = _write(tmp_path, "one.json", recs[0])
    with pytest.raises(TraceFormatError, match=r"one\.json: .*field 'task_id' is null"):
        load(p)


def test_tau_problems_name_the_record_and_path(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    recs = copy.deepcopy(records[:20])
    del recs[17]["reward"]
    first_call = next(m for m in recs[0]["traj"] if m.get("tool_calls"))
    i = recs[0]["traj"].index(first_call)
    first_call["tool_calls"][0]["function"]["arguments"] = "{bad"
    p = _write(tmp_path, "tau_noreward.json", recs)
    res = load(p)
    assert len(res) == 20 and res.skipped == []
    assert res.faults[0].startswith(
        f"{p} record 0: traj[{i}].tool_calls[0] (get_user_details): arguments are not valid JSON")
    assert res.faults[1] == f"{p} record 17: field 'reward' is missing or not a number"
    assert len(res.faults) == 2


def test_jsonl_tau_line_reported_with_line_number(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    recs = copy.deepcopy(records[:3])
    recs[1]["traj"] = None
    p = tmp_path / "tau.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    res = load(p)
    assert len(res) == 2
    assert res.skipped == [f"{p}:2: no 'traj' list ('traj' is null); skipped"]


def test_file_with_no_trace_still_raises(tmp_path: Path) -> None:
    p = _write(tmp_path, "x.json", [{"task_id": 1}, {"task_id": 2, "traj": "no"}])
    with pytest.raises(TraceFormatError, match="not a trace"):
        load(p)


def test_cli_inspect_reads_the_good_runs(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    recs = copy.deepcopy(records)
    del recs[3]["traj"]
    p = _write(tmp_path, "tau.json", recs)
    r = CliRunner().invoke(main, ["inspect", str(p)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "record 3: no 'traj' list" in r.output


# ------------------------------------------------------------------ trajcheck's own JSONL


def _native_lines() -> list[dict[str, Any]]:
    t = Trajectory(steps=(Step(0, "user", content="hi"),
                          Step(1, "tool_call", tool_calls=(ToolCall("a", {"x": 1}), ToolCall("b", {"y": 2}, "c2"))),
                          Step(2, "final_response", content="ok")),
                   final_response="ok", metadata={"case_id": "c1"})
    return [t.to_dict() for _ in range(4)]


def test_native_call_without_name_is_kept_unnamed(tmp_path: Path) -> None:
    lines = _native_lines()
    del lines[1]["steps"][1]["tool_calls"][0]["name"]
    p = tmp_path / "runs.jsonl"
    p.write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    res = load(p)
    assert len(res) == 4 and res.skipped == []
    assert res.faults == [f"{p}:2: steps[1].tool_calls[0]: field 'name' is missing"]
    kept = res[1].tool_calls()[0]
    assert kept.name == "" and kept.args == {"x": 1}
    assert res[1].metadata["problems"] == ["steps[1].tool_calls[0]: field 'name' is missing"]
    # an unnamed call never matches an expected call (an ExpectedCall cannot be unnamed)
    assert not call_matches(kept, ExpectedCall("a", {"x": 1}))
    with pytest.raises(Exception, match="non-empty string"):
        ExpectedCall("")


def test_native_string_args_are_parsed(tmp_path: Path) -> None:
    lines = _native_lines()
    lines[1]["steps"][1]["tool_calls"][1]["args"] = "{not json"
    lines[2]["steps"][1]["tool_calls"][1]["args"] = '{"y": 3}'
    lines[3]["steps"][1]["tool_calls"][1]["args"] = "[1, 2]"
    p = tmp_path / "runs.jsonl"
    p.write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    res = load(p)
    assert len(res) == 4
    bad = res[1].tool_calls()[1]
    assert bad.args is None and bad.raw_args == "{not json"
    assert bad.args_parse_error is not None and bad.args_parse_error.startswith("arguments are not valid JSON")
    good = res[2].tool_calls()[1]
    assert good.args == {"y": 3} and good.raw_args == '{"y": 3}' and good.args_parse_error is None
    lst = res[3].tool_calls()[1]
    assert lst.args is None and lst.args_parse_error == "arguments parse to list, not an object"
    assert [f.split(": ", 2)[:2] for f in res.faults] == [[f"{p}:2", "steps[1].tool_calls[1] (b)"],
                                                          [f"{p}:4", "steps[1].tool_calls[1] (b)"]]
    assert not call_matches(bad, ExpectedCall("b"))  # unparsed args never match


def test_native_non_object_parts_are_reported_not_fatal() -> None:
    d = _native_lines()[0]
    d["steps"][1]["tool_calls"].append("oops")
    d["steps"][2]["usage"] = 5
    res = load(d)
    calls = res[0].tool_calls()
    assert len(res) == 1 and [c.name for c in calls] == ["a", "b", ""]
    assert calls[2].args is None and calls[2].args_parse_error == "call is a str, not an object"
    assert res.faults == ["<input>: steps[1].tool_calls[2]: call is a str, not an object; kept as an unnamed call",
                          "<input>: steps[2].usage: not an object (int); ignored"]
