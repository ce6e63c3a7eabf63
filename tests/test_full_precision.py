"""Figures keep full precision in results and JSON; only what a person reads is rounded.

A three-case suite where two runs of three succeed (task success 2/3), one run skips one
of two expected calls (F1 2/3) and every case is in one category (rate 2/3): the Python API, the
per-run results, the scorecard JSON, the categories and the comparison JSON store
0.6666666666666666; the terminal, Markdown and HTML reports show 0.6667.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from trajcheck.cli.app import main
from trajcheck.read.dataset import load_cases
from trajcheck.read.traces import load
from trajcheck.score.suite import evaluate

TWO_THIRDS = 0.6666666666666666  # the float nearest 2/3, as JSON writes it
SHOWN = "0.6667"


def _call(i: int, cid: str, name: str, args: dict) -> list[dict]:
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": f"{cid}-{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": f"{cid}-{i}", "content": "ok"}]


def _run(cid: str, calls: list[tuple[str, dict]]) -> dict:
    msgs: list[dict] = [{"role": "user", "content": f"fetch for {cid}"}]
    for i, (name, args) in enumerate(calls):
        msgs += _call(i, cid, name, args)
    msgs.append({"role": "assistant", "content": "done"})
    return {"messages": msgs, "metadata": {"case_id": cid, "trial": 0}}


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    cases = [{"id": f"c{i}", "input": f"fetch for c{i}", "metadata": {"category": "web"},
              "expected_calls": [{"name": "fetch", "args": {"url": f"u{i}"}}]} for i in range(3)]
    # c0 also expects a read-only lookup (optional for the outcome) that its run skips
    cases[0]["expected_calls"].insert(0, {"name": "lookup", "args": {"q": "u0"}})
    cases[0]["optional_calls"] = ["lookup"]
    a = [_run("c0", [("fetch", {"url": "u0"})]),  # P 1, R 1/2, F1 2/3
         _run("c1", [("fetch", {"url": "u1"})]),
         _run("c2", [("fetch", {"url": "wrong"})])]  # fails its task
    b = [_run(f"c{i}", [("fetch", {"url": f"u{i}"})]) for i in range(3)]
    paths = []
    for name, rows in (("cases.jsonl", cases), ("a.jsonl", a), ("b.jsonl", b)):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(p)
    return paths[0], paths[1], paths[2]


def test_python_api_results_keep_two_thirds_exactly(tmp_path: Path) -> None:
    cases, a, _b = _files(tmp_path)
    sc = evaluate(load(a).trajectories, load_cases(cases), n_boot=200)
    assert sc.suite.task_success_rate.value == 2 / 3 == TWO_THIRDS
    assert [r.success for r in sc.runs] == [True, True, False]
    r0 = sc.runs[0]
    assert (r0.precision, r0.recall, r0.f1) == (1.0, 0.5, TWO_THIRDS)
    assert sc.meta["by_category"]["web"] == {"runs": 3, "successes": 2, "rate": TWO_THIRDS}
    # the JSON form is the same numbers, and it round-trips
    d = sc.to_dict()
    assert d["suite"]["task_success_rate"]["value"] == TWO_THIRDS and d["runs"][0]["f1"] == TWO_THIRDS


def test_json_keeps_full_precision_and_reports_round(tmp_path: Path) -> None:
    cases, a, b = _files(tmp_path)
    out = {k: tmp_path / f"a.{k}" for k in ("json", "md", "html")}
    r = CliRunner().invoke(main, ["eval", str(a), "--cases", str(cases), "--json", str(out["json"]),
                                  "--md", str(out["md"]), "--html", str(out["html"])],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    raw = out["json"].read_text()
    d = json.loads(raw)
    assert d["suite"]["task_success_rate"]["value"] == TWO_THIRDS
    assert d["runs"][0]["f1"] == TWO_THIRDS  # per-run result
    assert d["meta"]["by_category"]["web"]["rate"] == TWO_THIRDS
    assert "0.6666666666666666" in raw and "0.6667" not in raw
    # what a person reads: rounded to 4 decimals, never the 16-digit float
    md, html = out["md"].read_text(), out["html"].read_text()
    # the HTML's data-* attributes hold the exact figures the table sorts by; nobody reads them
    assert 'data-f1="0.6666666666666666"' in html
    shown_html = re.sub(r'data-[\w-]+="[^"]*"', "", html)
    for text in (r.output, md, shown_html):
        assert SHOWN in text and "0.66666" not in text
    assert f"| task success rate | {SHOWN}" in md
    assert f'<td class="num" id="category-web">{SHOWN}</td>' in html

    # the comparison JSON keeps the exact figures as well; its HTML rounds
    r = CliRunner().invoke(main, ["eval", str(b), "--cases", str(cases), "-q", "--json", str(tmp_path / "b.json")])
    assert r.exit_code == 0, r.output
    cmp_json, cmp_html = tmp_path / "cmp.json", tmp_path / "cmp.html"
    r = CliRunner().invoke(main, ["compare", str(out["json"]), str(tmp_path / "b.json"),
                                  "--json", str(cmp_json), "--html", str(cmp_html)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    rows = {m["metric"]: m for m in json.loads(cmp_json.read_text())["deltas"]}
    tsr = rows["task_success_rate"]
    assert (tsr["a"], tsr["b"]) == (TWO_THIRDS, 1.0)
    assert tsr["delta"] == 1 / 3 and str(tsr["lo"]) == "0.0"  # not 0.3333; no "-0.0"
    assert SHOWN in r.output and "0.66666" not in r.output
    shown_html = re.sub(r'data-[\w-]+="[^"]*"', "", cmp_html.read_text())
    assert SHOWN in shown_html and "0.66666" not in shown_html
