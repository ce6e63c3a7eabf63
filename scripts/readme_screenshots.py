"""Render the README's screenshots of the HTML reports (docs/*.png) in headless Chromium.

    .venv/bin/python scripts/readme_screenshots.py

The eval report is of the bundled tau-bench GPT-4o airline runs; the compare report is of
two versions of the helpdesk example agent (good_agent vs false_success_agent, 2 trials per
case, run here by `trajcheck run`). Each shot is taken at a 1400 px wide window, then
scaled to 1000 px and reduced to a 256-colour palette to keep the repository small (needs
Pillow; without it the full-size PNG is written).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from cdp import Browser  # noqa: E402

from trajcheck.read.traces import load  # noqa: E402
from trajcheck.report.html import to_html  # noqa: E402
from trajcheck.score.suite import evaluate  # noqa: E402


def _small(src: Path, dst: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        dst.write_bytes(src.read_bytes())
        return
    im = Image.open(src).convert("RGB")
    im = im.resize((1000, round(im.height * 1000 / im.width)), Image.LANCZOS)
    im.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(dst, optimize=True)


def _at(b: Browser, tmp: Path, dst: Path, element: str, height: int) -> None:
    top = b.js(f"document.getElementById('{element}').getBoundingClientRect().top + window.scrollY")
    raw = tmp / "raw.png"
    b.screenshot_at(raw, top - 12, height)
    _small(raw, dst)
    print(f"wrote {dst.relative_to(ROOT)}")


def main() -> None:
    from click.testing import CliRunner

    from trajcheck.cli.app import main as cli

    docs = ROOT / "docs"
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        sc = evaluate(load(ROOT / "examples" / "tau_bench_airline" / "gpt-4o-airline.json"),
                      source="examples/tau_bench_airline/gpt-4o-airline.json")
        page = tmp / "report.html"
        page.write_text(to_html(sc), encoding="utf-8")
        hd = ROOT / "examples" / "helpdesk"
        for name, agent in (("a", "good_agent"), ("b", "false_success_agent")):
            r = CliRunner().invoke(cli, ["run", "--agent", f"{hd / 'agents.py'}:{agent}", "--cases",
                                         str(hd / "cases.jsonl"), "--trials", "2", "--json",
                                         str(tmp / f"{name}.json"), "-q", "--no-progress"])
            assert r.exit_code == 0, r.output
        r = CliRunner().invoke(cli, ["compare", str(tmp / "a.json"), str(tmp / "b.json"),
                                     "--html", str(tmp / "compare.html")])
        assert r.exit_code == 0, r.output
        html = (tmp / "compare.html").read_text()
        (tmp / "compare.html").write_text(html.replace(str(tmp) + "/", ""), encoding="utf-8")
        b = Browser(tmp)
        try:
            b.open(page.as_uri())
            b.screenshot_at(tmp / "raw.png", 0, 1250)
            _small(tmp / "raw.png", docs / "report-overview.png")
            print("wrote docs/report-overview.png")
            b.js("(() => {const v = document.getElementById('f-kind'); v.value = 'wrong arguments';"
                 "v.dispatchEvent(new Event('change'));"
                 "document.querySelector('#runs th[data-col=\"6\"]').click();})()")
            _at(b, tmp, docs / "report-runs.png", "runs-h", 900)
            b.open(page.as_uri() + "#run-0-0")
            _at(b, tmp, docs / "report-run.png", "run-0-0", 1000)
            b.open((tmp / "compare.html").as_uri())
            b.screenshot_at(tmp / "raw.png", 0, 1450)
            _small(tmp / "raw.png", docs / "compare.png")
            print("wrote docs/compare.png")
        finally:
            b.close()


if __name__ == "__main__":
    main()
