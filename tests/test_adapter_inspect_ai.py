"""trajcheck's scorers and epoch reducers inside a real Inspect AI eval (``inspect_ai.eval``, the
mockllm model, offline): the refund-desk task of ``examples/inspect_ai/refund_task.py`` runs
its eight cases for 4 epochs (some epochs replay another recorded run, so pass^k is not 0/1).
Every score Inspect logs equals the core function's on that run (``test_host_table.core_value``),
the run Inspect recorded is the replayed run (read back from the log file by trajcheck's Inspect
AI reader), and the reduced pass^2 / pass@2 and the success-rate metric equal
``trajcheck.metrics.reliability`` -- and Inspect's own ``pass_k`` / ``pass_at`` reducers."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from test_host_table import CASES, RUNS, all_cells, core_value  # noqa: E402

pytest.importorskip("inspect_ai")

from inspect_ai import Epochs, Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.scorer import Score, pass_at, pass_k  # noqa: E402

from trajcheck.adapters import inspect_ai as ai  # noqa: E402
from trajcheck.errors import MetricInputError  # noqa: E402
from trajcheck.metrics.reliability import pass_at_k, pass_hat_k, success_rate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "inspect_ai"))
import refund_task  # noqa: E402


def _calls(t):
    return [[(c.name, c.args) for c in s.tool_calls] for s in t.steps if s.tool_calls]


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    logs = inspect_eval(refund_task.refund_desk(), log_dir=str(tmp_path_factory.mktemp("logs")), display="none")
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_every_cell_equals_core_on_every_epoch(log):
    from trajcheck.read.traces import load

    read = {(t.metadata["case_id"], t.metadata["trial"]): t for t in load(log.location).trajectories}
    assert len(log.samples) == len(read) == 32
    n = 0
    for s in log.samples:
        cid, run_id = str(s.id), refund_task.replayed(str(s.id), s.epoch)
        run = RUNS[run_id]
        got = read[(cid, s.epoch)]
        # Inspect recorded the replayed run: same calls, same turns, same failures
        assert _calls(got) == _calls(run), (cid, s.epoch)
        assert [r.is_error for _c, r in got.pairs()] == [bool(r.is_error) for _c, r in run.pairs()]
        for label, k, mode, dialect in all_cells():
            sc = s.scores[_name(k, mode, dialect)]
            want = core_value(k, run, CASES[cid], mode, dialect)
            if want is None:
                assert math.isnan(sc.value) and sc.reason == "not_applicable" and sc.explanation, (cid, label)
                continue
            assert sc.value == want, (cid, s.epoch, label, sc.value, want, sc.explanation)
            n += 1
    assert n > 1500


def _name(k, mode, dialect):
    from trajcheck.adapters import _catalog

    return _catalog.default_key(k, mode if k == "trajectory_match" else None,
                                dialect if k == "trajectory_match" else None)


def _trials():
    from trajcheck.score.suite import run_outcome

    return {cid: [bool(run_outcome(RUNS[refund_task.replayed(cid, e)], CASES[cid]).passed) for e in range(1, 5)]
            for cid in CASES}


def test_pass_k_reducers_and_success_rate_equal_core(log):
    trials = _trials()
    assert trials["retry"] == [True, False, True, False] and trials["duplicate"] == [True, True, False, True]
    by = {(e.name, e.reducer): {k: m.value for k, m in e.metrics.items()} for e in log.results.scores}
    assert by[("trajcheck_task_success", "pass_hat_k_2")]["mean"] == pytest.approx(pass_hat_k(trials, 2), abs=1e-12)
    assert by[("trajcheck_task_success", "pass_at_k_2")]["mean"] == pytest.approx(pass_at_k(trials, 2), abs=1e-12)
    assert pass_hat_k(trials, 2) == pytest.approx((6 + 1 / 6 + 0.5) / 8)  # retry 2/4, duplicate 3/4
    n_ok = sum(map(sum, trials.values()))
    assert by[("trajcheck_task_success", None)]["success_rate"] == success_rate(n_ok, 32).score == 29 / 32
    assert math.isnan(by[("trajcheck_task_success", None)]["routing_macro_f1"])  # no expected route
    red = {(r.scorer, r.reducer): {str(x.sample_id): x.value for x in r.samples} for r in log.reductions}
    per = red[("trajcheck_task_success", "pass_hat_k_2")]
    assert per == {cid: pass_hat_k({cid: t}, 2) for cid, t in trials.items()}


def test_reducers_agree_with_inspects_own_pass_k(tmp_path):
    task = refund_task.refund_desk()
    t = Task(dataset=task.dataset, solver=task.solver, model=task.model,
             scorer=[ai.trajcheck_scorer("task_success")],
             epochs=Epochs(4, [ai.pass_hat_k(2), ai.pass_at_k(2), pass_k(2), pass_at(2)]))
    lg = inspect_eval(t, log_dir=str(tmp_path), display="none")[0]
    red = {r.reducer: {str(x.sample_id): x.value for x in r.samples} for r in lg.reductions}
    assert red["pass_hat_k_2"] == red["pass_k_2"]
    assert red["pass_at_k_2"] == pytest.approx(red["pass_at_2"], abs=1e-12)


def test_n_below_k_and_missing_reference(tmp_path):
    with pytest.raises(MetricInputError, match="epochs >= 3"):
        ai.trajcheck_epochs(2, 3)
    with pytest.raises(MetricInputError, match="k must be"):
        ai.pass_hat_k(0)
    two = [Score(value=1.0, metadata={"passed": True})] * 2
    r = ai.pass_hat_k(3)(two)
    assert math.isnan(r.value) and "at least 3 scored epochs" in r.explanation
    assert ai.pass_at_k(2)(two).value == 1.0 and ai.pass_hat_k(2)(two).value == 1.0
    # no expected calls in the sample: unscored with the reason, never a pass
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    out = ModelOutput.from_content(model="mockllm", content="hi")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    t = Task(dataset=[Sample(id="s", input="hello")], scorer=[ai.trajcheck_scorer("tool_call_f1")],
             model=get_model("mockllm/model", custom_outputs=[out]))
    lg = inspect_eval(t, log_dir=str(tmp_path), display="none")[0]
    sc = lg.samples[0].scores["trajcheck_tool_call_f1"]
    assert math.isnan(sc.value) and sc.reason == "scoring_failed" and "expected_calls" in sc.explanation


def test_inspect_eval_cli_reports_pass_k(tmp_path):
    """The example's one command, ``inspect eval examples/inspect_ai/refund_task.py --epochs 4``
    (four metrics, ``-T full=false``, to keep the suite short): Inspect's CLI keeps the task's
    reducers and logs pass^2 / pass@2 equal to the core's."""
    import subprocess

    from inspect_ai.log import read_eval_log

    p = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "examples/inspect_ai/refund_task.py",
                        "--epochs", "4", "-T", "full=false", "--log-dir", str(tmp_path), "--display", "plain"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "success_rate" in p.stdout and "0.906" in p.stdout
    # The example file holds two tasks, so the log directory holds two logs in no fixed order.
    logs = [read_eval_log(str(f)) for f in sorted(tmp_path.glob("*.eval"))]
    assert sorted(lg.eval.task for lg in logs) == ["refund_desk", "refund_desk_final_state"]
    lg = next(lg for lg in logs if lg.eval.task == "refund_desk")
    by = {(e.name, e.reducer): {k: m.value for k, m in e.metrics.items()} for e in lg.results.scores}
    trials = _trials()
    assert by[("trajcheck_task_success", "pass_hat_k_2")]["mean"] == pytest.approx(pass_hat_k(trials, 2), abs=1e-12)
    assert by[("trajcheck_task_success", "pass_at_k_2")]["mean"] == pytest.approx(pass_at_k(trials, 2), abs=1e-12)
    want = [core_value("ordering_accuracy", RUNS[refund_task.replayed(c, e)], CASES[c]) for c in CASES
            for e in range(1, 5)]
    got = by[("trajcheck_ordering_accuracy", "mean")]["mean"]
    per_case = [[w for w in want[i * 4:(i + 1) * 4] if w is not None] for i in range(len(CASES))]
    means = [sum(v) / len(v) for v in per_case if v]
    assert got == pytest.approx(sum(means) / len(means), abs=1e-12)


def test_final_state_from_a_sandbox_fixture_in_the_example(tmp_path):
    """The example's second task: final state from the sandbox fixture examples/refund_desk/shop.sql
    (before from the fixture, after from the run on the sandbox) equals the core's."""
    from test_host_examples import FIXTURE_WANT, fixture_core_values

    lg = inspect_eval(refund_task.refund_desk_final_state(), log_dir=str(tmp_path), display="none")[0]
    assert lg.status == "success", lg.error
    want = fixture_core_values()
    assert want == FIXTURE_WANT
    got = {str(s.id): s.scores["trajcheck_final_state"] for s in lg.samples}
    assert {k: v.value for k, v in got.items()} == want
    assert got["fixture_deleted"].explanation.startswith("table orders: 1 row removed")
