"""Every benchmark result file of ../shared/data scored with no flags, against what each
file records: tau-bench's reward and r_actions, tau2's reward and db_check.db_match, and
tau2's own pass^k. The files are not copied into tests/data (a subset is, see test_tau2.py
and test_tau_domains.py); this test is skipped when the folder is absent. Set
TRAJCHECK_SHARED_DATA to the folder to run it from elsewhere (e.g. a git worktree).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from test_tau2 import tau2_pass_hat_k

from trajcheck.read.traces import load
from trajcheck.score.suite import evaluate

SHARED = Path(os.environ.get("TRAJCHECK_SHARED_DATA")
              or Path(__file__).resolve().parents[1].parent / "shared" / "data")
TAU2_FILES = sorted((SHARED / "tau2" / "trajectories").glob("*.json.gz"))

pytestmark = pytest.mark.skipif(
    not TAU2_FILES, reason=f"no tau2 result files under {SHARED} (the shared data folder is absent; "
                           "set TRAJCHECK_SHARED_DATA to run this test)")

# run ids trajcheck disagrees on, per file, with the reason (README "Benchmark result files")
EXPECTED_REWARD_MISSES = {
    # modify_pending_order_items with two extra (x -> x) pairs: they change nothing, but a
    # per-argument matcher cannot see the pairing of item_ids with new_item_ids
    "retail_gpt-4.1-mini_user-gpt-4.1_shahabeddin.json.gz": {"36-0"},
}


def test_every_tau2_file_agrees_with_its_recorded_verdicts() -> None:
    total = agree = db_n = db_agree = 0
    for path in TAU2_FILES:
        raw = json.loads(gzip.decompress(path.read_bytes()))
        sc = evaluate(load(path), n_boot=20)
        rr = sc.recorded_reward
        assert rr is not None
        assert rr.agree == rr.n == len(raw["simulations"]), (path.name, [d.reason for d in rr.disagreements])
        ca = rr.checks["db_match"]
        assert ca.agree == ca.n, (path.name, [d.reason for d in ca.disagreements])
        want = tau2_pass_hat_k(raw)
        assert rr.pass_hat_k.keys() == want.keys()
        for k in want:
            assert rr.pass_hat_k[k] == pytest.approx(want[k], abs=5e-5), path.name
        total, agree = total + rr.n, agree + rr.agree
        db_n, db_agree = db_n + ca.n, db_agree + ca.agree
    assert len(TAU2_FILES) == 12 and (agree, total) == (443, 443) and (db_agree, db_n) == (437, 437)


def test_tau_bench_files_agree_with_reward_and_r_actions() -> None:
    figures = {}
    for path in (SHARED / "tau_bench" / "gpt-4o-airline.json",
                 SHARED / "tau_bench" / "more" / "retail_gpt-4.1-mini_user-gpt-4.1_shahabeddin.json.gz"):
        rr = evaluate(load(path), n_boot=20).recorded_reward
        assert rr is not None
        assert {d.run_id for d in rr.disagreements} == EXPECTED_REWARD_MISSES.get(path.name, set())
        ra = rr.checks["r_actions"]
        figures[path.name] = (rr.agree, rr.n, ra.agree, ra.n)
    assert figures == {"gpt-4o-airline.json": (200, 200, 182, 182),
                       "retail_gpt-4.1-mini_user-gpt-4.1_shahabeddin.json.gz": (114, 115, 77, 77)}
