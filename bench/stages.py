"""Where `trajcheck eval`'s CPU goes, stage by stage, on one generated file (bench/volume.py):
each stage timed alone in CPU seconds (time.process_time) and given per run.

    python bench/stages.py /tmp/vol/n10000      # runs.jsonl and cases.jsonl in that folder

Stages: case-file load and validation (dataset.load_case_store), reading
(traces.stream(...).fused_runs(): the usual native line read to its scoring facts,
traces.native_facts, any other line to its Trajectory), keying runs to cases
(intake.RunKeyer.key_id, and the case's plan from the case store by id: case_plan.plan_for),
per-run scoring (fused_scoring.line_compact from the facts, falling back to the built
trajectory; scoring.score_compact_by_id for a run read as a Trajectory; at the end, in
full, the runs the scorecard shows, their trajectories built then, as pipeline.score_into), aggregation (aggregate.SuitePartial.add), finalize (bootstrap
included) and the scorecard JSON write. The eval runs them interleaved in one pass; the sum
here is close to its CPU less interpreter start-up and imports.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    d = Path(sys.argv[1])
    from trajcheck.aggregate.partials import SuitePartial
    from trajcheck.read.dataset import load_case_store
    from trajcheck.read.intake import RunKeyer
    from trajcheck.read.traces.native_facts import LineRun
    from trajcheck.read.traces.stream import stream
    from trajcheck.score.case_plan import plan_for
    from trajcheck.score.fused_scoring import line_compact
    from trajcheck.score.pipeline import DEFAULT_KEEP_RUNS, scoring_gc
    from trajcheck.score.scoring import score_compact_by_id, score_run

    out: dict[str, float] = {}

    def lap(name: str, t0: float) -> float:
        now = time.process_time()
        out[name] = now - t0
        return now

    clock = time.process_time
    t = clock()
    store = load_case_store(d / "cases.jsonl")
    t = lap("case load", t)
    acc = dict.fromkeys(("reading", "keying (case store)", "scoring", "scoring in full (kept runs)",
                         "aggregate add"), 0.0)
    n_full = 0
    held: dict[int, tuple[Any, str]] = {}
    part = SuitePartial(keep_runs=DEFAULT_KEEP_RUNS)
    keyer = RunKeyer(store)
    n = 0
    # one pass, as the eval runs it (the runs shown scored in full inside the same collector
    # policy, as pipeline.score_into is); each stage's CPU summed apart
    with scoring_gc():
        it = stream(d / "runs.jsonl").fused_runs()
        t0 = clock()
        for tr in it:
            t1 = clock()
            cid = keyer.key_id(n, tr)  # type: ignore[arg-type]  # a LineRun has the metadata
            if cid is not None:  # decoded here (keying); line_compact finds it in the cache
                plan_for(store, cid)
            t2 = clock()
            acc["reading"] += t1 - t0
            acc["keying (case store)"] += t2 - t1
            if cid is not None:  # as pipeline.score_into
                if type(tr) is LineRun:
                    r = line_compact(tr, store, cid)  # the plan: from the store's cache
                else:
                    r = score_compact_by_id(tr, store, cid)
                t3 = clock()
                acc["scoring"] += t3 - t2
                if part.wants(r):  # held; scored in full at the end if still kept
                    held[n] = (tr, cid)
                    if len(held) > 2 * len(part.kept) + 64:
                        keep = {q for q, _ in part.kept}
                        held = {q: v for q, v in held.items() if q in keep}
                part.add(r, n)
                t0 = clock()
                acc["aggregate add"] += t0 - t3
            else:
                t0 = clock()
            n += 1
        t = clock()
        if held:  # as pipeline.score_into: the runs the scorecard shows, in full
            part._trim()
            for i, (seq, _r) in enumerate(part.kept):
                if seq in held:
                    tr, cid = held[seq]
                    if type(tr) is LineRun:
                        tr = tr.trajectory()
                    part.kept[i] = (seq, score_run(tr, store[cid]))
                    n_full += 1
        acc["scoring in full (kept runs)"] += clock() - t
    out.update(acc)
    t = clock()
    sc = part.finalize(problems=keyer.finish())
    t = lap("finalize", t)
    with tempfile.TemporaryDirectory() as tmp:
        sc.write_json(Path(tmp) / "sc.json")
    lap("write json", t)
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = sum(out.values())
    print(f"{n:,} runs, {len(store):,} cases, {n_full:,} scored again in full, "
          f"peak RSS {peak:.0f} MiB")
    print("| stage | CPU s | µs/run |\n| --- | --- | --- |")
    for k, v in out.items():
        print(f"| {k} | {v:.2f} | {v / n * 1e6:.1f} |")
    print(f"| total | {total:.2f} | {total / n * 1e6:.1f} |")


if __name__ == "__main__":
    main()
