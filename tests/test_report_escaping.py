"""Reports show data literally: rich markup, terminal escapes and HTML/Markdown from traces do
nothing (README "Security model")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.textsafe import md, visible

EVIL = "[/bold]<script>alert(1)</script>\x1b[2J|x](javascript:alert(1))"


def _trace(cid: str, tool: str, cost: float | None = None) -> dict:
    t = {"steps": [{"index": 0, "kind": "user", "content": "hi"},
                   {"index": 1, "kind": "tool_call", "tool_calls": [{"name": tool, "args": {"q": EVIL},
                                                                      "call_id": "c1"}]},
                   {"index": 2, "kind": "tool_result", "tool_result": {"call_id": "c1", "name": tool,
                                                                        "output": EVIL, "is_error": True,
                                                                        "error": EVIL}},
                   {"index": 3, "kind": "final_response", "content": EVIL}],
         "final_response": EVIL, "metadata": {"case_id": cid, "run_id": EVIL}}
    if cost is not None:
        t["total_cost_usd"] = cost
    return t


def test_eval_with_markup_and_escapes_in_ids_and_names(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(json.dumps(_trace(c, EVIL, cost)) for c, cost in
                              ((EVIL, 1e17), ("ok", 0.01), ("ok", None))) + "\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": EVIL, "input": "x", "expected_calls": [{"name": "get"}]}) + "\n"
                     + json.dumps({"id": "ok", "input": "y", "expected_calls": [{"name": EVIL}]}) + "\n")
    mdp, html, js = tmp_path / "r.md", tmp_path / "r.html", tmp_path / "r.json"
    r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(cases), "--md", str(mdp),
                                  "--html", str(html), "--json", str(js)])
    assert r.exit_code == 0, r.output  # no MarkupError, no crash: a report like any other
    assert "\x1b" not in r.output and "\\x1b[2J" in r.output
    text = mdp.read_text()
    assert "<script>" not in text and "&lt;script>" in text
    assert re.search(r"(?<!\\)\]\(javascript", text) is None and "x\\](javascript" in text
    assert "\x1b" not in text
    assert "<script>alert" not in html.read_text()
    json.loads(js.read_text())


def test_inspect_with_markup_tool_names(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(_trace("c", "[/bold]")) + "\n" + json.dumps(_trace("d", "[red]x")) + "\n")
    r = CliRunner().invoke(main, ["inspect", str(runs)])
    assert r.exit_code == 0, r.output
    assert "[/bold]" in r.output and "[red]x" in r.output


def test_helpers() -> None:
    assert visible("a\x1b[31mb\u202ec\x07") == "a\\x1b[31mb\\u202ec\\x07"
    assert visible("tab\tnew\nline") == "tab\tnew\nline"
    assert md("a|b\nc <b>bold</b> < 1 \\| [t](u) ![i][r]") == \
        "a\\|b c &lt;b>bold&lt;/b> < 1 \\\\\\| [t\\](u) ![i\\][r]"
