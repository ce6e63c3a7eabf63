"""The tree's shape that issue 31 asked for, held so it does not drift back: core/ holds at most
12 top-level modules (the rest lives in the stage packages read, match, metrics, score,
aggregate, report, run, judges, engines, cli), and no module of the library is over 800 lines
(split one that grows past it by concern, as metrics.provenance and metrics.comparison were)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_has_at_most_12_top_level_modules() -> None:
    top = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert len(top) <= 12, top


def test_no_module_over_800_lines() -> None:
    long = {}
    for pkg in ("core", "adapters", "promptfoo_provider"):
        for p in (ROOT / pkg).rglob("*.py"):
            n = len(p.read_text(encoding="utf-8").splitlines())
            if n > 800:
                long[str(p.relative_to(ROOT))] = n
    assert long == {}


def test_every_metrics_module_imports_on_its_own() -> None:
    # a moved name re-exported at import time would make a cycle (provenance <-> calls); each
    # module is imported first in a fresh interpreter, as a user's script does
    import subprocess
    import sys

    mods = sorted(p.stem for p in (ROOT / "core" / "metrics").glob("*.py") if p.stem != "__init__")
    for m in mods:
        r = subprocess.run([sys.executable, "-c", f"import trajcheck.metrics.{m}"], capture_output=True, text=True)
        assert r.returncode == 0, (m, r.stderr[-500:])
    r = subprocess.run([sys.executable, "-c", "from trajcheck.metrics.calls import argument_provenance\n"
                        "from trajcheck.metrics.reliability import paired_compare"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]
