"""Scoring from many threads at once gives every thread the single-threaded answer.

Hosts run evaluators in threads (MLflow ``genai.evaluate``, LangSmith ``evaluate`` with
``max_concurrency``, DeepEval's async runner): nothing lazily built at module level may be
built twice or half-built while another thread reads it (issue 29: two threads filling
``scoring._metric_fns()`` (a lazily filled module-level list) at once left 22 entries, and every later score in the process
raised "too many values to unpack").

The race happens only on first use, so each check runs in a fresh interpreter whose very
first scoring is done by 8 threads released together (with a tiny switch interval, so the
threads interleave inside the lazy builders), and compares each thread's results with the
same process's single-threaded results afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# random cases and runs covering the fast path and the general path: parallel calls, failed
# calls then retries, optional and forbidden tools (plain and glob), precedence, faults
# (false success), response checks, step bounds, argument modes
_GEN = r'''
import random

TOOLS = ("get_order", "issue_refund", "send_email", "delete_order", "search_faq")


def make_case(rng, i):
    exp = []
    for name in rng.sample(TOOLS[:3], rng.randint(0, 3)):
        call = {"name": name, "args": {"order_id": str(rng.randint(1, 3))}}
        if rng.random() < 0.2:
            call["args"]["note"] = "r\u00e9sum\u00e9 \u6ce8\u6587"
        if rng.random() < 0.2:
            call["args_mode"] = "exact_keys"
        exp.append(call)
    row = {"id": f"c{i}", "input": "Refund order 1 and e-mail the customer.", "expected_calls": exp}
    if rng.random() < 0.5:
        row["optional_calls"] = ["search_faq"]
    if rng.random() < 0.5:
        row["forbidden_calls"] = rng.choice([["delete_order"], ["delete_*"], ["send_*", "x"]])
    if rng.random() < 0.3:
        row["precedence"] = [["issue_refund", "send_email"]]
    if rng.random() < 0.3:
        row["faults"] = [{"tool": "issue_refund", "fault": "http_503", "times": 1}]
    if rng.random() < 0.2:
        row["response_must_include"] = ["refund"]
    if rng.random() < 0.3:
        row["max_steps"] = rng.randint(1, 6)
    if rng.random() < 0.3:
        row["optimal_steps"] = rng.randint(1, 4)
    return row


def make_run(rng, case_id, trial):
    steps = [{"kind": "user", "content": "Refund order 1 and e-mail the customer."}]
    n = 0
    for _ in range(rng.randint(0, 5)):
        calls = []
        for _ in range(rng.choice((1, 1, 1, 2))):
            args = {"order_id": str(rng.randint(1, 3))}
            if rng.random() < 0.2:
                args["note"] = "r\u00e9sum\u00e9 \u6ce8\u6587"
            calls.append({"name": rng.choice(TOOLS), "args": args, "call_id": f"k{n}"})
            n += 1
        steps.append({"kind": "tool_call", "tool_calls": calls})
        for c in calls:
            bad = rng.random() < 0.25
            steps.append({"kind": "tool_result", "tool_result": {
                "call_id": c["call_id"], "name": c["name"], "output": "error 503" if bad else "ok",
                "is_error": bad}})
    final = rng.choice(("The refund has been issued.", "Refund issued.", "Sorry, I could not do it.",
                        "I have successfully sent the e-mail."))
    steps.append({"kind": "final_response", "content": final})
    for i, s in enumerate(steps):
        s["index"] = i
    return {"steps": steps, "final_response": final,
            "metadata": {"case_id": case_id, "trial": trial}}


def world(seed, n_cases=40, trials=3):
    rng = random.Random(seed)
    rows = [make_case(rng, i) for i in range(n_cases)]
    runs = [make_run(rng, r["id"], t) for r in rows for t in range(trials)]
    return rows, runs
'''

_CORE = _GEN + r'''
import json, sys, threading
sys.setswitchinterval(1e-6)
from trajcheck.model import Case, Trajectory
from trajcheck.score import scoring
from trajcheck.score.suite import score_runs
from trajcheck.read.dataset import load_cases

rows, raw = world(int(sys.argv[1]))
case_file = sys.argv[2]
with open(case_file, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
cases = {r["id"]: Case.from_dict(r) for r in rows}
runs = [(Trajectory.from_dict(t), cases[t["metadata"]["case_id"]]) for t in raw]


def one_pass(order):
    # the dataset loader's validators are built on first use too
    out = {"loaded": json.dumps([c.to_dict() for c in load_cases(case_file)], sort_keys=True)}
    for i in order:
        traj, case = runs[i]
        out[i] = (json.dumps(scoring.score_run(traj, case).to_dict(), sort_keys=True, default=str),
                  json.dumps(scoring.score_run(traj, case, compact=True).to_dict(), sort_keys=True,
                             default=str),
                  json.dumps(scoring.score_compact_by_id(traj, cases, case.id).to_dict(),
                             sort_keys=True, default=str),
                  json.dumps(scoring.run_outcome(traj, case).to_dict(), sort_keys=True, default=str))
    return out


barrier = threading.Barrier(8)
got, errors = [None] * 8, []


def worker(k):
    order = list(range(len(runs)))
    random.Random(k).shuffle(order)
    barrier.wait()
    try:
        got[k] = one_pass(order)
    except Exception as e:  # noqa: BLE001 -- reported to the test
        errors.append(f"thread {k}: {type(e).__name__}: {e}")


threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.setswitchinterval(0.005)
alone = one_pass(range(len(runs)))
card = json.dumps(score_runs(runs).to_dict(), sort_keys=True, default=str)
differ = sum(1 for g in got if g is not None for i in alone if g[i] != alone[i])
print(json.dumps({"errors": errors, "differ": differ, "runs": len(runs),
                  "false_success": sum(1 for i in alone if '"false_success": true' in alone[i][0]),
                  "card_equal": card == json.dumps(score_runs(runs).to_dict(), sort_keys=True,
                                                   default=str)}))
'''


def run_fresh(script: str, *args: str) -> dict:
    """Run ``script`` in a fresh interpreter (no module of trajcheck imported yet) and
    return the JSON object it prints last."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_core_scoring_from_8_threads_equals_single_threaded(seed, tmp_path):
    out = run_fresh(_CORE, str(seed), str(tmp_path / "cases.jsonl"))
    assert out["errors"] == []
    assert out["differ"] == 0
    assert out["runs"] == 120
    # the random runs reach the figures the lazy builders feed (composite, false success)
    assert out["false_success"] > 0
    assert out["card_equal"]


# the hosts' own runners, each in a fresh interpreter whose first scoring is the host's
# threaded one; values compared with the core functions called afterwards in one thread
# (test_host_table.core_value) on the refund-desk runs (a duplicate, a failed-then-retried
# call, a parallel pair, an order rule broken, a forbidden call, ...), each run twice
_HOST_PRELUDE = r'''
import json, math, os, sys, warnings
sys.setswitchinterval(1e-6)
sys.path.insert(0, sys.argv[1])
warnings.filterwarnings("ignore")
from dataclasses import replace
from pathlib import Path
from trajcheck.model import Case
from trajcheck.traces import load

# read without trajcheck.load_cases, which dry-runs the scorer on each case: the hosts'
# threads must be the first to score in this process
DATA = Path(sys.argv[1]).parent / "examples" / "refund_desk"
# without their database snapshots, so task success is judged from the calls (run_outcome)
RUNS = {t.metadata["case_id"]: replace(t, metadata={k: v for k, v in t.metadata.items()
                                                    if k not in ("state_before", "state_after")})
        for t in load(DATA / "runs.jsonl").trajectories}
CASES = {c.id: c for c in map(Case.from_dict, map(json.loads, (DATA / "cases.jsonl").read_text().splitlines()))}
KEYS = ("task_success", "composite", "false_success", "tool_call_f1", "ordering_accuracy",
        "duplicate_call_rate", "forbidden_calls", "efficiency")


def expected(case):
    return [{"name": e.name, "args": e.args} for e in case.expected_calls]


def settings(case):
    d = case.to_dict()
    for k in ("id", "input", "expected_calls"):
        d.pop(k, None)
    return d


def core_value(*args):
    import test_host_table  # loads the cases with load_cases: after the hosts' threads

    return test_host_table.core_value(*args)


def same(got, want):
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got == want
'''

_MLFLOW = _HOST_PRELUDE + r'''
os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
os.environ.pop("MLFLOW_GENAI_EVAL_MAX_WORKERS", None)  # MLflow's default pool
import mlflow
from trajcheck.adapters import mlflow as am

mlflow.set_tracking_uri(sys.argv[2])
mlflow.set_experiment("threads")
ids = [cid for cid in CASES for _ in range(2)]
rows = [am.row_from_trace(RUNS[cid], expected_calls=expected(CASES[cid]), **settings(CASES[cid]))
        for cid in ids]
scorers = [am.TrajcheckScorer(k) for k in KEYS]
df = mlflow.genai.evaluate(data=rows, scorers=scorers).result_df
sys.setswitchinterval(0.005)
bad, errors, checked = [], 0, 0
for i in range(len(df)):
    cid = df["request"].iloc[i]["case_id"]
    for k, s in zip(KEYS, scorers):
        got = df[f"{s.name}/value"].iloc[i]
        want = core_value(k, RUNS[cid], CASES[cid])
        errors += "error" in str(df[f"{s.name}/rationale"].iloc[i]).lower() and want is not None
        checked += want is not None
        if not same(got, want):
            bad.append([cid, k, repr(got), repr(want), str(df[f"{s.name}/rationale"].iloc[i])[:300]])
print(json.dumps({"rows": len(df), "bad": bad, "checked": checked}))
'''

_LANGSMITH = _HOST_PRELUDE + r"""
import uuid
for k in ("LANGSMITH_TEST_TRACKING", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
    os.environ[k] = "false"
os.environ.pop("LANGSMITH_API_KEY", None)
from langsmith import Client
from langsmith.schemas import Example
from trajcheck.adapters import langsmith as al

offline = Client(api_key="offline", api_url="http://127.0.0.1:9")  # never reached
ds = uuid.uuid4()
examples = [Example(id=uuid.uuid4(), dataset_id=ds, inputs={"input": RUNS[cid].user_input, "case_id": cid},
                    outputs={"expected_calls": expected(CASES[cid]), **settings(CASES[cid])})
            for cid in CASES]
import threading
made, gate = [], threading.Barrier(8)


def build(key):
    gate.wait()
    made.append(al.TrajcheckEvaluator(key))


ts = [threading.Thread(target=build, args=(KEYS[i % len(KEYS)],)) for i in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
classes = len({type(e) for e in made})
evs = [al.TrajcheckEvaluator(k) for k in KEYS]
res = offline.evaluate(lambda inputs: RUNS[inputs["case_id"]].to_dict(), data=examples, evaluators=evs,
                       upload_results=False, num_repetitions=2, max_concurrency=8)
rows = list(res)
sys.setswitchinterval(0.005)
bad, checked = [], 0
for row in rows:
    cid = row["example"].inputs["case_id"]
    got = {r.key: (r.score, r.comment) for r in row["evaluation_results"]["results"]}
    for k, ev in zip(KEYS, evs):
        want = core_value(k, RUNS[cid], CASES[cid])
        checked += want is not None
        if not same(got[ev.key][0], want):
            bad.append([cid, k, repr(got[ev.key]), repr(want)])
print(json.dumps({"rows": len(rows), "bad": bad, "checked": checked, "classes": classes}))
"""


def test_mlflow_genai_evaluate_default_workers(tmp_path):
    pytest.importorskip("mlflow")
    out = run_fresh(_MLFLOW, str(Path(__file__).parent), (tmp_path / "mlruns").as_uri())
    assert out["rows"] == 16
    assert out["bad"] == []
    assert out["checked"] >= 100


def test_langsmith_evaluate_max_concurrency_8():
    pytest.importorskip("langsmith")
    out = run_fresh(_LANGSMITH, str(Path(__file__).parent))
    assert out["classes"] == 1  # evaluators made from 8 threads at once: one evaluator class
    assert out["rows"] == 16
    assert out["bad"] == []
    assert out["checked"] >= 100


# every metric a host can show (adapters._catalog.ROW_METRICS) and the suite figures, from 8
# threads released together in a fresh interpreter: each thread builds its own cases and
# runs from the rows (so the matcher registry, the case schema's validators and the lazily
# loaded matchers are first built while the threads race), reads the case file and a bad
# one, and resolves matcher specs by name; the answers are compared with the same process's
# single-threaded ones afterwards
_EVERY_METRIC = _GEN + r'''
import json, sys, threading
from trajcheck.model import Case, Trajectory
from trajcheck.adapters._catalog import ROW_METRICS, MissingReference, Options, compute
from trajcheck.adapters._suite import RunRecord, compute_figures
from trajcheck.errors import DatasetError, TrajcheckError
from trajcheck.match.matchers import registry
from trajcheck.read import dataset

rows, raw = world(int(sys.argv[1]))
rng = random.Random(int(sys.argv[1]) + 100)
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]+$"},
                                           "note": {"type": "string"}}, "required": ["order_id"]}
for r in rows:  # references the random world lacks: matchers, tool schemas, final state, routes
    for e in r["expected_calls"]:
        if rng.random() < 0.5:
            e["match"] = {"order_id": rng.choice(["regex:^[0-9]+$", "contains:1", "normalized",
                                                  {"type": "one_of", "values": ["1", "2"]}])}
    if rng.random() < 0.5:
        r["tools"] = [{"name": n, "parameters": SCHEMA} for n in TOOLS]
    if rng.random() < 0.4:
        r["expected_final_state"] = {"orders": [{"status": "refunded"}]}
    r["expected_route"] = rng.choice(["billing", "tech"])
for t in raw:
    t["metadata"]["route"] = rng.choice(["billing", "tech"])
    t["metadata"]["after"] = {"orders": [{"id": 1, "status": rng.choice(["paid", "refunded"])}]}
case_file, bad_file = sys.argv[2], sys.argv[3]
with open(case_file, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
bad = [dict(rows[0], id="bad", expected_calls=[{"name": "get_order", "argz": {}}])]
with open(bad_file, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows[:3] + bad)
SPECS = ["exact", "regex:^[0-9]+$", "numeric:0.5", "contains:1", "fields", "bfcl", "normalized"]
BEFORE = {"orders": [{"id": 1, "status": "paid"}]}


def one_pass(order):
    out = {"specs": {}}
    for s in SPECS:
        try:
            out["specs"][s] = id(registry.get_matcher(s))
        except TrajcheckError as e:  # 'fields' needs its parameters: the same error everywhere
            out["specs"][s] = f"{type(e).__name__}: {e}"
    out["loaded"] = json.dumps([c.to_dict() for c in dataset.load_cases(case_file)], sort_keys=True)
    try:
        dataset.load_cases(bad_file)
        out["bad"] = "loaded"
    except DatasetError as e:
        out["bad"] = str(e)
    cases = {r["id"]: Case.from_dict(r) for r in rows}
    records = []
    for i in order:
        t = Trajectory.from_dict(raw[i])
        case = cases[t.metadata["case_id"]]
        opts = Options(before_state=BEFORE, after_state=t.metadata["after"])
        for m in ROW_METRICS:
            try:
                v = json.dumps(compute(m.key, t, case, opts).to_dict(), sort_keys=True, default=str)
            except MissingReference as e:
                v = f"missing: {e}"
            except TrajcheckError as e:
                v = f"{type(e).__name__}: {e}"
            out[f"{i} {m.key}"] = v
            if m.key == "task_success":
                ok = json.loads(v).get("passed") if v.startswith("{") else None
                records.append((i, RunRecord(case.id, ok, t.metadata["route"], case.expected_route)))
    records = [r for _, r in sorted(records, key=lambda x: x[0])]
    out["suite"] = json.dumps({k: r.to_dict() for k, r in compute_figures(records, n_boot=200).items()},
                              sort_keys=True, default=str)
    return out


n_threads = 8
barrier = threading.Barrier(n_threads)
got, errors = [None] * n_threads, []


def worker(k):
    order = list(range(len(raw)))
    random.Random(k).shuffle(order)
    barrier.wait()
    try:
        got[k] = one_pass(order)
    except Exception as e:  # noqa: BLE001 -- reported to the test
        errors.append(f"thread {k}: {type(e).__name__}: {e}")


sys.setswitchinterval(1e-6)
threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.setswitchinterval(0.005)
alone = one_pass(range(len(raw)))
differ = sorted({key for g in got if g is not None for key in alone if key != "specs" and g[key] != alone[key]})
specs_shared = all(g["specs"] == alone["specs"] for g in got if g is not None)
values = [v for key, v in alone.items() if key not in ("specs", "loaded", "bad", "suite")]
print(json.dumps({
    "errors": errors, "differ": differ[:20], "specs_shared": specs_shared, "specs": alone["specs"],
    "bad": alone["bad"], "n_values": len(values),
    "scored": sum(1 for v in values if v.startswith("{") and json.loads(v)["score"] is not None),
    "keys_scored": sorted({key.split(" ")[1] for key, v in alone.items()
                           if " " in key and v.startswith("{") and json.loads(v)["score"] is not None}),
    "validators": [len(dataset._FAST), len(dataset._SLOW)],
    "defaults": sorted(registry._DEFAULT_INSTANCES),
}))
'''


@pytest.mark.parametrize("seed", [1, 2])
def test_every_host_metric_from_8_threads_equals_single_threaded(seed, tmp_path):
    from trajcheck.adapters._catalog import ROW_METRICS

    out = run_fresh(_EVERY_METRIC, str(seed), str(tmp_path / "cases.jsonl"), str(tmp_path / "bad.jsonl"))
    assert out["errors"] == []
    assert out["differ"] == []
    # every thread resolved each string spec to the one shared instance (or the same error)
    assert out["specs_shared"]
    assert isinstance(out["specs"]["regex:^[0-9]+$"], int) and isinstance(out["specs"]["bfcl"], int)
    assert out["specs"]["fields"].startswith("MatcherError: fields matcher: give exactly one of")
    assert "bad.jsonl:4: case 'bad': expected_calls[0]: unknown field 'argz' (did you mean 'args'?)" in out["bad"]
    # each validator built once although 8 threads asked for it first at the same moment
    assert out["validators"] == [1, 1]
    assert {"regex:^[0-9]+$", "numeric:0.5", "contains:1", "bfcl"} <= set(out["defaults"])
    assert out["n_values"] == 120 * len(ROW_METRICS)
    # every metric gave a number on some run (none only missing or erroring throughout)
    assert out["keys_scored"] == sorted(m.key for m in ROW_METRICS)
