"""`trajcheck inspect` via click's CliRunner."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli.app import main

DATA = Path(__file__).parent / "data"


def _row(out: str, label: str) -> str:
    m = re.search(rf"{re.escape(label)}\s*│\s*([^│]+?)\s*│", out)
    assert m, f"no row {label!r} in:\n{out}"
    return m.group(1)


def test_inspect_tau_bench() -> None:
    r = CliRunner().invoke(main, ["inspect", str(DATA / "tau_bench" / "gpt-4o-airline.json")],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert _row(r.output, "runs") == "200"
    assert _row(r.output, "tasks / cases") == "50"
    assert _row(r.output, "tool calls") == "1,164 across 14 tools"
    assert _row(r.output, "recorded rewards") == "200 runs, 84 with reward 1"
    assert _row(r.output, "format(s) detected") == "tau_bench (200)"
    assert re.search(r"get_reservation_details\s*│\s*377\s*│", r.output)
    # sorted by count: the first tool row is the most used one
    assert r.output.index("get_reservation_details") < r.output.index("search_direct_flight")


def test_inspect_reports_problems_and_exits_zero() -> None:
    r = CliRunner().invoke(main, ["inspect", str(DATA / "traces" / "otel_genai.jsonl")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert _row(r.output, "problems") == "1"
    assert "otel_genai.jsonl:2: not valid JSON" in r.output
    assert _row(r.output, "tool results") == "2 (1 failed)"


def test_inspect_non_trace(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}')
    r = CliRunner().invoke(main, ["inspect", str(p)], env={"COLUMNS": "200"})
    assert r.exit_code == 2
    assert "not a trace" in r.output and "x.json" in r.output


def test_inspect_names_format_and_wrapper_per_file() -> None:
    rt = DATA / "real_traces"
    r = CliRunner().invoke(main, ["inspect", str(rt / "vertex" / "adk_home_automation_dependent_tool_calls.test.json")],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert _row(r.output, "recognised") == "vertex (1) in ADK EvalSet"
    r = CliRunner().invoke(main, ["inspect", str(rt / "otel")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert re.search(r"any_agent_OPENAI_trace\.json\s*│\s*otel \(1\) in span dump\s*│", r.output)
    assert re.search(r"phoenix_pxi_turn_trace_spans\.json\s*│\s*otel \(1\)\s*│", r.output)
