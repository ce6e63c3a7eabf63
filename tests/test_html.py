"""The HTML report renders in headless Chromium and its DOM shows the JSON's numbers."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_suite import small_suite

from trajcheck.report import fmt
from trajcheck.report.html import to_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _ById(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: dict[str, str] = {}
        self._stack: list[str | None] = []
        self.scripts = 0
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for k in ("src", "href"):
            v = a.get(k) or ""
            if v.startswith(("http:", "https:", "//")):
                self.external.append(v)
        if tag in ("br", "img", "meta", "link", "rect", "line", "circle", "polyline"):
            return
        self._stack.append(a.get("id"))
        if a.get("id"):
            self.text[a["id"]] = ""

    def handle_endtag(self, tag):
        if tag in ("br", "img", "meta", "link", "rect", "line", "circle", "polyline"):
            return
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        for i in self._stack:
            if i:
                self.text[i] += data


def _dump_dom(html_path: Path, tmp: Path) -> str:
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp / 'chrome-profile'}", "--dump-dom", html_path.as_uri()],
        capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _check(sc, ids: dict[str, str]) -> None:
    s = sc.suite
    assert ids["task-success-value"] == fmt(s.task_success_rate.value)
    for k, v in s.pass_hat_k.items():
        assert ids[f"pass-hat-k-{k}"] == fmt(v)
        assert ids[f"pass-at-k-{k}"] == fmt(s.pass_at_k[k])
    rr = sc.recorded_reward
    if rr is not None:
        for k, v in rr.pass_hat_k.items():
            assert ids[f"recorded-pass-hat-k-{k}"] == fmt(v)
        for cell, n in rr.matrix.items():
            assert ids[f"agreement-{cell}"] == str(n)
        assert ids["agreement-agree"] == str(rr.agree)
    # task failures and composite-gate failures (task succeeded, composite below threshold)
    assert ids["n-failing"] == str(sum(not r.success or r.composite_passed is False for r in sc.runs))


def test_html_is_offline_and_holds_the_numbers():
    sc = small_suite()
    doc = to_html(sc)
    p = _ById()
    p.feed(doc)
    # one inline script (sorting and filtering; the page is complete without it), nothing loaded
    assert p.scripts == 1 and p.external == [] and "<script src" not in doc
    _check(sc, p.text)
    # failing runs link to their step-by-step trajectory
    assert 'href="#run-B-1"' in doc and 'id="run-B-1"' in doc and "<svg" in doc


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install -y chromium)")
def test_html_renders_in_headless_chromium(tmp_path):
    from trajcheck.read.traces import load
    from trajcheck.score.suite import evaluate

    data = Path(__file__).parent / "data" / "tau_bench" / "gpt-4o-airline.json"
    sc = evaluate(load(data), n_boot=200)
    f = tmp_path / "report.html"
    f.write_text(to_html(sc), encoding="utf-8")
    dom = _dump_dom(f, tmp_path)
    p = _ById()
    p.feed(dom)
    _check(sc, p.text)
    assert p.text["recorded-pass-hat-k-2"] == "0.2733"
    # every run is listed; the failing ones and the 9 that succeed at the task but fail the
    # composite gate are marked
    assert dom.count('<tr class="run-row ') == 200
    assert dom.count('<tr class="run-row v-fail"') == sum(not r.success for r in sc.runs) == 116
    assert dom.count('<tr class="run-row v-gate"') == sum(r.gate_failed for r in sc.runs) == 9
    assert dom.count("<svg") >= 3


def test_html_shows_efficiency_and_routing():
    from test_suite import eff_suite

    sc = eff_suite()
    doc = to_html(sc)
    p = _ById()
    p.feed(doc)
    e = sc.suite.efficiency
    for key in ("steps", "tokens", "latency_ms"):
        for q in ("p50", "p95", "p99"):
            assert p.text[f"eff-{key}-{q}"] == fmt(e[key][q])
    assert p.text["eff-tokens-p95"] == "2900" and p.text["eff-cost_usd-p99"] == "0.0497"
    assert p.text["eff-cost-per-success"] == "0.04" and p.text["eff-total-cost"] == "0.08"
    assert p.text["routing-accuracy"] == "0.6667"
    assert "routing confusion" in doc and doc.count('class="route-row"') == 3


def test_html_renders_one_run_of_cost_1e17(tmp_path: Path) -> None:
    """Issue 27 (Small): the only run with a cost at 1e17 made the cost histogram divide by
    zero (its one-value span was widened by 1, which 1e17 + 1 loses), so no report was written.
    Through the CLI as a user runs it: the report is written, the figure shown as it is."""
    import json
    import re

    from click.testing import CliRunner

    from trajcheck.cli.app import main
    call = {"index": 0, "kind": "assistant", "tool_calls": [{"name": "f", "args": {"x": 1}, "call_id": "c1"}]}
    res = {"index": 1, "kind": "tool_result", "tool_result": {"call_id": "c1", "name": "f", "output": "r"}}
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"steps": [call, res], "total_cost_usd": 1e17, "metadata": {"case_id": "c"}})
                    + "\n" + json.dumps({"steps": [call], "metadata": {"case_id": "c"}}) + "\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c", "input": "q", "expected_calls": [{"name": "f", "args": {"x": 1}}]}))
    html = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(cases), "--html", str(html)])
    assert r.exit_code == 0, r.output
    doc = html.read_text()
    p = _ById()
    p.feed(doc)
    assert p.text["eff-cost_usd-mean"] == p.text["eff-cost_usd-max"] == "100000000000000000"
    assert "<title>100000000000000000-100000000000000000 USD: 1 successful</title>" in doc  # the run without a cost is not in it
    page = re.sub(r"<script.*?</script>", "", doc, flags=re.S)
    assert re.search(r"\b(nan|inf|infinity)\b", page, flags=re.I) is None


def test_histogram_spans_a_float_cannot_hold() -> None:
    from trajcheck.report.html import svg_histogram
    # 1e17 alone: one bin; a span past the largest float (hi - lo = inf): 12 finite bins
    one = svg_histogram([1e17, 1e17], [], title="t")
    assert one.count("<rect") == 2 and ": 2 successful" in one
    wide = svg_histogram([1.7e308], [-1.7e308], title="t")
    assert wide.count("<rect") == 4 and ": 1 successful" in wide and ": 1 failed" in wide
    assert "inf" not in wide and "nan" not in wide
