"""The one-command host examples on the refund desk (examples/<host>/refund_desk.py) run
offline and print each host's own view; the printed numbers are the core's (checked here on
the order rule broken and kept, the duplicate and the retried failure; tests/test_host_table.py
checks every cell)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_host_table import CASES, RUNS, core_value  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]

# (host, printed name of a metric for a key)
NAMES = {
    "deepeval": {"ordering_accuracy": "Ordering Accuracy (trajcheck)",
                 "duplicate_call_rate": "Duplicate Call Rate (trajcheck)",
                 "error_recovery": "Error Recovery (trajcheck)",
                 "composite": "Trajectory Composite (trajcheck)"},
    **{host: {k: f"trajcheck_{k}" for k in ("ordering_accuracy", "duplicate_call_rate", "error_recovery", "composite")}
       for host in ("ragas", "langsmith", "mlflow")},
}


def _blocks(out: str) -> dict[str, str]:
    parts = re.split(r"^== (\w+).*$", out, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("host", ["deepeval", "ragas", "langsmith", "mlflow"])
def test_host_example_prints_the_core_numbers(host, tmp_path):
    pytest.importorskip(host)
    env = dict(os.environ, DEEPEVAL_TELEMETRY_OPT_OUT="YES", RAGAS_DO_NOT_TRACK="true",
               LANGSMITH_TRACING="false", MLFLOW_TRACKING_URI=(tmp_path / "mlruns").as_uri())
    env.pop("OPENAI_API_KEY", None)
    p = subprocess.run([sys.executable, str(ROOT / "examples" / host / "refund_desk.py")], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    blocks = _blocks(p.stdout)
    assert set(CASES) <= set(blocks), sorted(blocks)
    for cid, key in (("order_broken", "ordering_accuracy"), ("order_kept", "ordering_accuracy"),
                     ("duplicate", "duplicate_call_rate"), ("retry", "error_recovery"),
                     # the refund e-mail sent before the refund: composite 0.0 (rules factor)
                     ("order_broken", "composite"), ("order_kept", "composite")):
        want = core_value(key, RUNS[cid], CASES[cid])
        m = re.search(rf"^  {re.escape(NAMES[host][key])}: ([0-9.]+)", blocks[cid], flags=re.M)
        assert m is not None and float(m.group(1)) == want, (host, cid, key, blocks[cid][:2000])
    # a score that does not apply is skipped the host's way
    none = re.search(rf"^  {re.escape(NAMES[host]['error_recovery'])}: (.*)$", blocks["order_kept"], flags=re.M)
    assert none is not None and none.group(1).split(" ")[0] in ("skipped", "nan", "None"), none
    assert "pass" in blocks["suite"] or "success_rate" in blocks["suite"]
