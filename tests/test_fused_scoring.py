"""The fused route of ``trajcheck eval`` (the usual native JSONL line read to its scoring
facts, traces.native_facts, and scored from them, fused_scoring) gives what the existing
route gives: the same ``RunResult`` (every field's value and type, in field order) as
``native.read_line`` + ``scoring.score_compact_by_id``, and the same stream (trajectories,
problems, skipped lines, formats) -- on every line of the volume generator's output, on
every trace of the examples and tests/data written as trajcheck JSONL, and on hostile
lines. No timing here (bench/stages.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest
from test_stream_fastpath import HOSTILE, _hostile_file, _same

from trajcheck.model import Case
from trajcheck.read.case_store import CaseStore
from trajcheck.read.dataset import load_case_store, load_cases
from trajcheck.read.limits import NOT_PLAIN, plain_loads
from trajcheck.read.traces import load
from trajcheck.read.traces.native import read_line
from trajcheck.read.traces.native_facts import LineRun, line_run
from trajcheck.read.traces.stream import stream
from trajcheck.score import fused_scoring
from trajcheck.score.fused_scoring import line_compact
from trajcheck.score.pipeline import evaluate_stream
from trajcheck.score.scoring import score_compact_by_id

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"


def _volume() -> Any:
    spec = importlib.util.spec_from_file_location("volume", ROOT / "bench" / "volume.py")
    vol = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(vol)  # type: ignore[union-attr]
    return vol


def _same_result(got: Any, want: Any, where: object) -> None:
    for f in dataclasses.fields(want):
        a, b = getattr(got, f.name), getattr(want, f.name)
        assert (a, type(a)) == (b, type(b)), (where, f.name, a, b)
    assert got == want and list(vars(got)) == list(vars(want)), where


def _compare_stream(p: Path) -> list[tuple[LineRun | Any, Any]]:
    """The fused stream and the plain one over ``p`` give the same runs (a LineRun's
    trajectory is the plain run), problems, skipped lines, formats, sources and cases;
    returns (fused item, plain trajectory) pairs."""
    plain = stream(p)
    fused = stream(p)
    try:
        want = list(plain)
    except Exception as e:  # the same error, by both routes
        with pytest.raises(type(e)) as got_e:
            list(fused.fused_runs())
        assert str(got_e.value) == str(e)
        return []
    got = list(fused.fused_runs())
    assert len(got) == len(want), p
    for i, (g, w) in enumerate(zip(got, want)):
        t = g.trajectory() if type(g) is LineRun else g
        assert t == w and _same(t, w), (p, i)
    for a in ("problems", "skipped", "formats", "n_read", "cases"):
        assert getattr(fused, a) == getattr(plain, a), (p, a)
    assert fused._acc.sources == plain._acc.sources
    # fresh facts for scoring (the pairs above had their trajectories built)
    again = list(stream(p).fused_runs())
    return list(zip(again, want))


def _compare_scores(pairs: list[tuple[Any, Any]], cases: Any) -> int:
    """Every LineRun of ``pairs`` whose case is in ``cases`` scores as its trajectory does;
    returns how many were compared."""
    n = 0
    for i, (g, t) in enumerate(pairs):
        if type(g) is not LineRun:
            continue
        cid = t.metadata.get("case_id")
        if cid is None or str(cid) not in cases:
            continue
        cid = str(cid)
        _same_result(line_compact(g, cases, cid), score_compact_by_id(t, cases, cid), (i, cid))
        n += 1
    return n


def _case_for(cid: str, t: Any, rnd: random.Random) -> dict[str, Any]:
    """A case for trajectory ``t``: some of its calls expected (arguments kept, changed or
    dropped, a call added), one tool optional, one forbidden -- inside the fast scorer's
    scope (every expected call exact)."""
    calls = [c for c in t.tool_calls() if c.name and isinstance(c.args, dict)]
    exp = []
    for c in calls[: rnd.randint(0, 4)]:
        a = dict(c.args)
        r = rnd.random()
        if r < 0.2 and a:
            k = next(iter(a))
            a[k] = ["changed", a[k]]
        elif r < 0.3:
            continue
        exp.append({"name": c.name, "args": a})
    if rnd.random() < 0.3:
        exp.append({"name": "never_called", "args": {"x": 1}})
    names = sorted({c.name for c in calls})
    row: dict[str, Any] = {"id": cid, "input": "task", "expected_calls": exp}
    if names and rnd.random() < 0.5:
        row["optional_calls"] = [rnd.choice(names)]
    if names and rnd.random() < 0.3:
        row["forbidden_calls"] = [rnd.choice(names)]
    return row


def _cases_file(path: Path, rows: list[dict[str, Any]]) -> tuple[dict[str, Case], CaseStore]:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {c.id: c for c in load_cases(path)}, load_case_store(path)


def test_volume_lines_take_the_fused_route_and_score_alike(tmp_path, monkeypatch):
    runs, cases_p = _volume().generate(tmp_path, 800, seed=5)
    pairs = _compare_stream(runs)
    assert len(pairs) == 800 and all(type(g) is LineRun for g, _ in pairs)  # every line fused
    by_id = {c.id: c for c in load_cases(cases_p)}
    store = load_case_store(cases_p)
    assert _compare_scores(pairs, by_id) == 800
    # from the case store, as the eval scores: no case and no trajectory built, no fallback
    built: list[str] = []
    getitem = CaseStore.__getitem__
    monkeypatch.setattr(CaseStore, "__getitem__", lambda self, cid: built.append(cid) or getitem(self, cid))
    fresh = list(stream(runs).fused_runs())
    got = [line_compact(g, store, g.metadata["case_id"]) for g in fresh]
    assert not built and all(g._traj is None for g in fresh)
    monkeypatch.undo()
    for r, (_, t) in zip(got, pairs):
        _same_result(r, score_compact_by_id(t, by_id, t.metadata["case_id"]), t.metadata["run_id"])
    # without reasons (what the eval asks for runs it will not show): the same result but a
    # failing run's reason, which is left out
    n_fail = 0
    for g, r in zip(fresh, got):
        lean = line_compact(g, store, g.metadata["case_id"], reasons=False)
        if r.success:
            _same_result(lean, r, g.metadata["run_id"])
        else:
            n_fail += 1
            assert r.outcome_reason and r.failure_reason == r.outcome_reason
            assert lean.outcome_reason is None and lean.failure_reason is None
            _same_result(lean, dataclasses.replace(r, outcome_reason=None, failure_reason=None),
                         g.metadata["run_id"])
    assert 100 < n_fail < 700  # both kinds are tried
    # and every line read by plain_loads + line_run is what read_line reads
    for raw in runs.read_bytes().splitlines():
        d = plain_loads(raw)
        assert d is not NOT_PLAIN and line_run(d) is not None and read_line(d) is not None


def _traces_of_the_repo() -> list[Any]:
    out = []
    files = sorted([*DATA.rglob("*.json"), *DATA.rglob("*.jsonl"),
                    *(ROOT / "examples").rglob("*.json"), *(ROOT / "examples").rglob("*.jsonl")])
    for p in files:
        try:
            out += load(p).trajectories
        except Exception:  # not a trace file (cases, labels, ground truth...)
            continue
    return out


def test_every_trace_of_the_examples_and_test_data_as_jsonl(tmp_path):
    trajs = _traces_of_the_repo()
    assert len(trajs) > 500
    rnd = random.Random(11)
    lines, rows = [], []
    for i, t in enumerate(trajs):
        d = t.to_dict()
        meta = dict(d.get("metadata") or {})
        # as written (metadata the fast scorer may have no say on), and with only the run
        # metadata it reads, so most lines are scored from their facts
        for j, m in enumerate((meta, {k: v for k, v in meta.items() if k in ("trial", "reward", "run_id")})):
            if j == 0 and i % 4:  # a quarter as written keeps the test short
                continue
            cid = f"t{i}_{j}"
            lines.append(json.dumps({**d, "metadata": {**m, "case_id": cid}}, allow_nan=True))
            rows.append(_case_for(cid, t, rnd))
    p = tmp_path / "runs.jsonl"
    p.write_text("".join(x + "\n" for x in lines))
    pairs = _compare_stream(p)
    assert len(pairs) == len(lines)
    by_id, store = _cases_file(tmp_path / "cases.jsonl", rows)
    n = _compare_scores(pairs, by_id)
    assert n > 0.9 * len(lines)  # nearly all fused (a NaN figure or an int cost is not)
    assert _compare_scores(pairs, store) == n
    # the native runs of the examples, against their own cases
    runs = ROOT / "examples" / "refund_desk" / "runs.jsonl"
    own = {c.id: c for c in load_cases(ROOT / "examples" / "refund_desk" / "cases.jsonl")}
    assert _compare_scores(_compare_stream(runs), own) >= 5


_CALL = {"name": "update", "args": {"id": 1, "v": "a"}, "call_id": "c1"}


def _run(steps: list[dict[str, Any]], **top: Any) -> str:
    return json.dumps({"steps": [{"index": i, **s} for i, s in enumerate(steps)],
                       "metadata": {"case_id": "s1", **top.pop("metadata", {})}, **top})


def _call(cid: str | None = "c1", name: str = "update", **args: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "args": args or {"id": 1, "v": "a"}}
    if cid is not None:
        c["call_id"] = cid
    return c


def _res(cid: Any = "c1", out: Any = "ok", **kw: Any) -> dict[str, Any]:
    return {"kind": "tool_result", "tool_result": {"call_id": cid, "output": out, **kw}}


# lines whose facts take each branch of the fused reader and scorer
SCORING_LINES = [
    _run([{"kind": "user"}, {"kind": "tool_call", "tool_calls": [_call()]}, _res()]),
    # a failed call retried, joined by id; then without ids; then ids reused
    _run([{"kind": "tool_call", "tool_calls": [_call()]}, _res(is_error=True),
          {"kind": "tool_call", "tool_calls": [_call("c2")]}, _res("c2")]),
    _run([{"kind": "tool_call", "tool_calls": [_call(None)]}, _res(None, error="boom"),
          {"kind": "tool_call", "tool_calls": [_call(None)]}, _res(None)]),
    _run([{"kind": "tool_call", "tool_calls": [_call(), _call()]}, _res(is_error=True), _res()]),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}, _res("zz", is_error=True)]),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}, _res(error="x"), _res(error="y")]),
    # JSON results: a write that returned what an earlier read returned changed nothing
    _run([{"kind": "tool_call", "tool_calls": [_call(name="get", id=1)]},
          _res(out={"id": 1, "v": "a"}),
          {"kind": "tool_call", "tool_calls": [_call("c2", name="update", id=1, v="b")]},
          _res("c2", out={"id": 1, "v": "a"}),
          {"kind": "tool_call", "tool_calls": [_call("c3", name="update", id=1, v="c")]},
          _res("c3", out='{"id": 1, "v": "a"}')]),
    _run([{"kind": "tool_call", "tool_calls": [_call(None, name="update", id=1, v="z")]},
          _res(None, out={"id": 1, "v": "a"}), _res(None, out={"id": 1, "v": "a"})]),
    # figures: totals given or summed, step times, usage with total_tokens or in/out only
    _run([{"kind": "assistant", "usage": {"total_tokens": 7}, "cost_usd": 0.5, "latency_ms": 3.0},
          {"kind": "final_response", "usage": {"input_tokens": 2}, "start_time": 1.5, "end_time": 4}]),
    _run([{"kind": "assistant", "start_time": 1.0}, {"kind": "assistant", "end_time": 9.25,
                                                      "latency_ms": 2.0}]),
    _run([{"kind": "assistant", "start_time": None, "latency_ms": 2.0}]),
    _run([{"kind": "assistant", "start_time": "t0"}]),
    _run([{"kind": "assistant", "usage": {"input_tokens": 1, "output_tokens": 2}}],
         total_usage={}, total_cost_usd=1.25, total_latency_ms=0.0),
    _run([{"kind": "assistant", "usage": {"input_tokens": 1}}], total_usage={"output_tokens": 4}),
    _run([{"kind": "assistant", "usage": {"input_tokens": 1}}], total_usage={"total_tokens": 9, "x": "y"}),
    _run([{"kind": "assistant", "usage": {"input_tokens": 1, "x": "y"}}]),
    _run([{"kind": "assistant", "cost_usd": 1}]),
    _run([{"kind": "assistant", "cost_usd": 1.5e308}, {"kind": "assistant", "cost_usd": 1.5e308}],
         total_cost_usd=2.0),
    # metadata: wrapper keys, run metadata the scorer reads, and keys it has no say on
    _run([{"kind": "tool_call", "tool_calls": [_call()]}], case_id="s2", trial=3, run_id="r"),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}],
         metadata={"reward": 0.5, "recorded_task_id": 7, "trial": 1}),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}], metadata={"route": "billing"}),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}], metadata={"terminated": False}),
    # calls and kinds the fused reader leaves to the existing route
    _run([{"kind": 3, "tool_calls": [_call()]}]),
    _run([{"kind": "tool_call", "tool_calls": [{**_call(), "call_id": 5}]}]),
    _run([{"kind": "tool_call", "tool_calls": [_call()]}, _res(["c1"])]),
    _run([{"kind": "tool_call", "tool_calls": [_call(), {"name": "update", "args": None}]}]),
    _run([{"kind": "tool_call", "tool_calls": [_call(name="update", id=float("1e300") * 10)]}]),
    _run([{"kind": "tool_call", "tool_calls": [_call(name="refund", amount=1.5, who=None)]}]),
    _run([{"kind": "tool_call", "tool_calls": [_call(name="refund", deep={"a": [1, {"b": 2}]})]},
          {"kind": "tool_call", "tool_calls": [_call("c2", name="refund", deep={"a": [1, {"b": 2}]})]}]),
]
_CASES = [
    {"id": "s1", "input": "t", "expected_calls": [{"name": "update", "args": {"id": 1, "v": "a"}}],
     "optional_calls": ["get"]},
    {"id": "s2", "input": "t", "expected_calls": [{"name": "update", "args": {"id": 1, "v": "b"}},
                                                  {"name": "refund", "args": {"amount": 1.5}}],
     "forbidden_calls": ["refund"]},
]


@pytest.mark.parametrize("case", _CASES, ids=["s1", "s2"])
def test_hostile_and_branch_lines_read_and_score_alike(tmp_path, case):
    lines = [x for x in HOSTILE if not x.startswith("\xff")] + SCORING_LINES
    p = _hostile_file(tmp_path, [x.replace('"case_id": "c1"', '"case_id": "s1"') for x in lines])
    # the hostile bytes line and a BOM, as test_stream_fastpath writes them
    pairs = _compare_stream(p)
    assert len(pairs) > 60
    rows = [{**case, "id": cid} for cid in ("s1", "s2", "c2", "top")]
    by_id, store = _cases_file(tmp_path / "cases.jsonl", rows)
    n = _compare_scores(pairs, by_id)
    assert n > 30 and _compare_scores(pairs, store) == n
    p2 = _hostile_file(tmp_path, HOSTILE, bom=True)
    _compare_stream(p2)


def test_the_eval_scorecard_is_the_same_by_either_route(tmp_path):
    runs, cases_p = _volume().generate(tmp_path, 400, seed=9)
    store = load_case_store(cases_p)
    want = evaluate_stream(list(stream(runs)), store, n_boot=100, keep_runs=20).to_dict()
    s = stream(runs)
    calls: list[int] = []
    real = fused_scoring.line_fast
    fused_scoring.line_fast = lambda r, plan, *a: calls.append(1) or real(r, plan, *a)  # type: ignore[assignment]
    try:
        got = evaluate_stream(s, store, n_boot=100, keep_runs=20).to_dict()
    finally:
        fused_scoring.line_fast = real  # type: ignore[assignment]
    assert len(calls) == 400  # the stream gave its runs as facts
    assert json.dumps(got, sort_keys=False) == json.dumps(want, sort_keys=False)
    kept = got["runs"]
    assert len(kept) == 20 and all(r.get("transcript") for r in kept)  # shown runs in full


def test_a_disagreement_with_a_recorded_reward_names_the_reason_by_either_route(tmp_path):
    # the fused route leaves out the reasons of runs it will not show, except where a run
    # records a reward: a disagreement with it names trajcheck's reason
    runs, cases_p = _volume().generate(tmp_path, 300, seed=4)
    lines = []
    for k, raw in enumerate(runs.read_bytes().splitlines()):
        d = json.loads(raw)
        if k % 3:  # a third of the runs record no reward
            d["metadata"]["reward"] = float(k % 2)
        lines.append(json.dumps(d))
    runs.write_text("\n".join(lines) + "\n")
    store = load_case_store(cases_p)
    want = evaluate_stream(list(stream(runs)), store, n_boot=50, keep_runs=10).to_dict()
    s = stream(runs)
    got = evaluate_stream(s, store, n_boot=50, keep_runs=10).to_dict()
    assert json.dumps(got) == json.dumps(want)
    dis = got["recorded_reward"]["disagreements"]
    fails = [d for d in dis if not d["ours"]]
    assert len(fails) > 20
    assert all("trajcheck fail: case '" in d["reason"] and "not matched" in d["reason"]
               or "unexpected state-changing call" in d["reason"] for d in fails), fails[:3]


def test_eval_hint_counts_unflagged_results_of_fused_lines(tmp_path):
    # a native line whose results carry no is_error flag: the error-pattern hint sees them
    # (the tally builds that run's trajectory); flagged results alone need no trajectory
    from click.testing import CliRunner

    from trajcheck.cli.app import main

    def line(i: int, out: str, flag: Any) -> str:
        res: dict[str, Any] = {"call_id": "c1", "output": out}
        if flag is not None:
            res["is_error"] = flag
        return _run([{"kind": "tool_call", "tool_calls": [_call()]},
                     {"kind": "tool_result", "tool_result": res}], metadata={"trial": i})

    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(x + "\n" for x in (line(0, "ok", None), line(1, "503 Service Unavailable", None),
                                               line(2, "Error: down", False), line(3, "fine", True))))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(_CASES[0]) + "\n")
    r = CliRunner().invoke(main, ["eval", str(runs), "--cases", str(cases), "-q", "--json",
                                  str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    hint = next(x for x in r.output.splitlines() if x.startswith("hint:"))
    assert hint == ("hint: 1 of 2 tool results from a source without an error flag (?) look like "
                    "errors (e.g. '503 Service Unavailable') and count as successful calls; "
                    "--error-pattern '\\b(50[0-4]|429)\\b' would mark them failed")
    assert json.loads((tmp_path / "a.json").read_text())["suite"]["n_runs"] == 4
