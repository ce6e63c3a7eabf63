"""Where `trajcheck eval`'s CPU goes, stage by stage, on one generated file (bench/volume.py):
each stage timed alone in CPU seconds (time.process_time) and given per run.

    python bench/stages.py /tmp/vol/n10000      # runs.jsonl and cases.jsonl in that folder

Stages: case-file load and validation (dataset.load_case_store), reading (traces.stream),
keying runs to cases (intake.RunKeyer.key_id, and the case's plan from the case store by id:
case_plan.plan_for), per-run scoring (fast_scoring.fast_plan; scoring.score_run, compact, on
the built case for a run outside its scope; at the end, in full, the runs the scorecard
shows, as pipeline.score_into), aggregation (aggregate.SuitePartial.add), finalize (bootstrap
included) and the scorecard JSON write. The eval runs them interleaved in one pass; the sum
here is close to its CPU less interpreter start-up and imports.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    d = Path(sys.argv[1])
    from trajcheck.aggregate import SuitePartial
    from trajcheck.case_plan import plan_for
    from trajcheck.dataset import load_case_store
    from trajcheck.fast_scoring import fast_plan
    from trajcheck.intake import RunKeyer
    from trajcheck.pipeline import DEFAULT_KEEP_RUNS, scoring_gc
    from trajcheck.scoring import score_run
    from trajcheck.traces.stream import stream

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
    held: dict[int, tuple[object, str]] = {}
    part = SuitePartial(keep_runs=DEFAULT_KEEP_RUNS)
    keyer = RunKeyer(store)
    n = 0
    with scoring_gc():  # one pass, as the eval runs it; each stage's CPU summed apart
        it = iter(stream(d / "runs.jsonl"))
        t0 = clock()
        for tr in it:
            t1 = clock()
            cid = keyer.key_id(n, tr)
            plan = plan_for(store, cid) if cid is not None else None
            t2 = clock()
            acc["reading"] += t1 - t0
            acc["keying (case store)"] += t2 - t1
            if cid is not None:  # as pipeline.score_into (scoring.score_compact_by_id)
                r = fast_plan(tr, plan)
                if r is None:
                    r = score_run(tr, store[cid], compact=True)
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
