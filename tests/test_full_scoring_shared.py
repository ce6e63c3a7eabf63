"""Full per-run scoring with one evaluation shared by every metric (``scoring.score_run``
inside ``runmemo.per_run``) equals the metrics computed one by one, each alone: the same
``RunResult``, field by field and in field order, and each metric's detail equal to its
public function's own result, on every example and tests/data suite the other scoring
tests read and on bench/volume.py runs generated here.

A second check pins the results themselves: ``tests/data/full_scoring_digests.json`` holds
a SHA-256 of each run's ``RunResult.to_dict()`` JSON as the metrics gave it before their
work was shared (commit 7dac379), so a change that alters a figure, a reason or a table in
both ways at once fails too. Regenerate it only for an intended change of a metric:
``python tests/test_full_scoring_shared.py --write``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from trajcheck.metrics.calls import tool_call_prf
from trajcheck.metrics.composite import score_trajectory
from trajcheck.metrics.sequences import (
    call_rates,
    check_forbidden_sequences,
    error_recovery,
    ordering_accuracy,
)
from trajcheck.model import Case, Trajectory
from trajcheck.read.dataset import load_cases
from trajcheck.read.traces import load
from trajcheck.read.traces.stream import stream
from trajcheck.score.json_copy import json_copy
from trajcheck.score.run_detail import call_detail
from trajcheck.score.runmemo import per_run
from trajcheck.score.scoring import _score_run, run_outcome, score_run

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
DIGESTS = DATA / "full_scoring_digests.json"
N_VOLUME = 300


def _loaded(path: Path) -> list[tuple[Trajectory, Case]]:
    lr = load(path)
    return [(t, lr.cases[t.metadata["case_id"]]) for t in lr]


def suites(tmp: Path) -> dict[str, list[tuple[Trajectory, Case]]]:
    """Every (run, case) pair of the suites, by suite name."""
    out = {"tau_bench_airline": _loaded(DATA / "tau_bench" / "gpt-4o-airline.json")}
    for p in sorted((DATA / "tau_bench" / "more").glob("*.json.gz")):
        out["tau_bench/" + p.name] = _loaded(p)
    for p in sorted((DATA / "tau2" / "trajectories").glob("*.json.gz")):
        out["tau2/" + p.name[:7]] = _loaded(p)
    refund = {c.id: c for c in load_cases(ROOT / "examples" / "refund_desk" / "cases.jsonl")}
    out["refund_desk"] = [(t, refund[t.metadata["case_id"]])
                          for t in load(ROOT / "examples" / "refund_desk" / "runs.jsonl")]
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(vol)  # type: ignore[union-attr]
    runs, cases = vol.generate(tmp, N_VOLUME, seed=5)
    by_id = {c.id: c for c in load_cases(cases)}
    out["volume"] = [(t, by_id[t.metadata["case_id"]]) for t in stream(runs)]
    return out


def one_by_one(t: Trajectory, c: Case) -> Any:
    """The full result with every metric computed alone: outside ``per_run`` nothing is
    shared, each metric joins, sets retries aside, compiles and matches by itself."""
    return _score_run(t, c, None, None, True, False)


def _digest(r: Any) -> str:
    return hashlib.sha256(json.dumps(r.to_dict()).encode()).hexdigest()


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Trajectory, Case]]]:
    return suites(tmp_path_factory.mktemp("vol"))


def test_shared_equals_one_by_one(pairs: dict[str, list[tuple[Trajectory, Case]]]) -> None:
    n = 0
    for name, ps in pairs.items():
        for t, c in ps:
            got = score_run(t, c)
            want = one_by_one(t, c)
            for f in dataclasses.fields(want):
                a, b = getattr(got, f.name), getattr(want, f.name)
                assert (a, type(a)) == (b, type(b)), (name, c.id, f.name)
            assert list(vars(got)) == list(vars(want))
            assert json.dumps(got.to_dict()) == json.dumps(want.to_dict())
            n += 1
    assert n >= 480 + N_VOLUME


def test_metric_details_equal_public_functions(pairs: dict[str, list[tuple[Trajectory, Case]]]) -> None:
    """Each detail a full result holds is its metric's own result, called alone."""
    n_forb = n_order = 0
    for name, ps in pairs.items():
        for t, c in ps[:80]:
            m = score_run(t, c).metrics
            outcome = run_outcome(t, c)
            want = {"outcome": outcome, "tool_call_prf": tool_call_prf(t, c),
                    "call_rates": call_rates(t, c), "error_recovery": error_recovery(t),
                    "composite": score_trajectory(t, c, outcome=outcome)}
            if c.forbidden_sequences:
                want["forbidden_sequences"] = check_forbidden_sequences(t, c.forbidden_sequences)
                n_forb += 1
            if c.precedence:
                want["ordering"] = ordering_accuracy(t, c.precedence)
                n_order += 1
            assert set(m) == set(want), (name, c.id)
            for k, r in want.items():
                assert m[k] == json_copy(r.to_dict()), (name, c.id, k)
            with per_run():
                assert score_run(t, c).calls == call_detail(t, c)


def test_results_as_before(pairs: dict[str, list[tuple[Trajectory, Case]]]) -> None:
    """Every full result hashes as it did before the metrics shared their work."""
    want = json.loads(DIGESTS.read_text())
    got = {name: [_digest(score_run(t, c)) for t, c in ps] for name, ps in pairs.items()}
    assert set(got) == set(want)
    for name in got:
        bad = [i for i, (a, b) in enumerate(zip(got[name], want[name])) if a != b]
        assert len(got[name]) == len(want[name]) and not bad, (name, bad[:5])


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        table = {name: [_digest(one_by_one(t, c)) for t, c in ps]
                 for name, ps in suites(Path(d)).items()}
    DIGESTS.write_text(json.dumps(table, indent=0) + "\n")
    print({k: len(v) for k, v in table.items()})
