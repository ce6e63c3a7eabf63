"""Production-volume workload: a generated trajcheck JSONL file of N runs (N/4 cases x 4
trials, the runs of one case scattered over the file), its cases file, and the plain-Python
floor that reads the same file and computes a multiset F1 per run.

    python bench/volume.py generate --runs 100000 --out /tmp/vol100k     # runs.jsonl, cases.jsonl
    python bench/volume.py generate --runs 100000 --out /tmp/var100k --varied
    python bench/volume.py floor /tmp/vol100k/runs.jsonl /tmp/vol100k/cases.jsonl

Each run: a user turn, 3-9 tool calls (some in parallel steps, some failing and retried),
their results (~150 characters each), a final response, per-step token usage, latency and
cost, like a production trace. Seeded: the same N and seed give the same bytes.

``--varied``: every case has its own argument names and value types, as real suites do (the
default cases share two argument layouts): 1-5 arguments per call named from a pool of
ASCII and non-ASCII stems and suffixes, valued by text (some non-ASCII), integers, floats,
bools, null, lists and nested objects; a run changes one argument of a call as the default
runs change ``id``. The floor is the same function for both (it reads any expected
arguments): one multiset F1 of (name, sorted JSON of the arguments) per run. Varied files
are written as UTF-8 with their non-ASCII text as is (not ``\\u`` escapes).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

TOOLS = ("search_flights", "get_reservation", "book_flight", "cancel_reservation",
         "update_seat", "send_email", "get_user", "refund")
WORDS = ("flight", "seat", "window", "aisle", "refund", "policy", "booking", "passenger",
         "economy", "business", "baggage", "delay", "gate", "terminal", "upgrade", "miles")
TRIALS = 4


def _text(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def _args(rnd: random.Random, name: str) -> dict:
    return {"id": rnd.randint(1, 10**6), "user": f"u_{rnd.randint(1, 9999)}",
            "amount": round(rnd.uniform(1, 2000), 2), "confirm": rnd.random() < 0.5,
            "note": _text(rnd, 3)} if name in ("book_flight", "refund") else {
            "id": rnd.randint(1, 10**6), "q": _text(rnd, 2)}


STEMS = ("account", "amount", "city", "date", "dest", "email", "fare", "flight", "guest",
         "hotel", "item", "limit", "locale", "name", "note", "order", "origin", "page", "party",
         "price", "query", "reason", "room", "seat", "size", "sort", "tag", "tier", "user", "zone",
         "größe", "città", "número", "prénom", "día", "名前", "都市", "цена", "日付", "ödeme")
SUFFIXES = ("", "_id", "_code", "_at", "_list", "_filter", "_opts", "_v2", "_max", "_min",
            "_hint", "_extra")
TEXTS = ("Zürich", "São Paulo", "東京", "Kraków", "Ångström", "naïve café", "Москва",
         "🙂 ok", "window", "aisle", "refund please", "ÉCONOMIE", "north-east", "")


def _value(rnd: random.Random, depth: int = 0) -> Any:
    """One argument value of a random type: text, integer, float, bool, null, or (above
    depth 2 never) a list or an object with its own keys."""
    k = rnd.randrange(9 if depth < 2 else 6)
    if k == 0:
        return rnd.choice(TEXTS) + (f" {rnd.randint(1, 999)}" if rnd.random() < 0.5 else "")
    if k == 1:
        return _text(rnd, rnd.randint(1, 4))
    if k == 2:
        return rnd.randint(-10**6, 10**9)
    if k == 3:
        return round(rnd.uniform(-500, 5000), rnd.randint(0, 4))
    if k == 4:
        return rnd.random() < 0.5
    if k == 5:
        return None if rnd.random() < 0.5 else rnd.randint(0, 9)
    if k in (6, 7):
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    return {_arg_name(rnd): _value(rnd, depth + 1) for _ in range(rnd.randint(1, 3))}


def _arg_name(rnd: random.Random) -> str:
    return rnd.choice(STEMS) + rnd.choice(SUFFIXES)


def _varied_args(rnd: random.Random) -> dict:
    return {_arg_name(rnd): _value(rnd) for _ in range(rnd.randint(1, 5))}


def _changed(rnd: random.Random, v: Any) -> Any:
    """A value like ``v`` that differs from it (a run's wrong argument)."""
    if type(v) is bool:
        return not v
    if type(v) is int:
        return v + 1
    if type(v) is float:
        return v + 0.5
    if type(v) is str:
        return v + "x"
    if type(v) is list:
        return [*v, rnd.randint(0, 9)]
    if type(v) is dict:
        return {**v, "extra": True}
    return 0  # null


def case_of(seed: int, i: int, varied: bool = False) -> dict:
    """Case ``i``: 2-4 expected calls with arguments, two optional tools, one forbidden;
    ``varied``: each call's arguments its own (module doc)."""
    rnd = random.Random(seed * 1_000_003 + i)
    names = rnd.sample(TOOLS[:6], rnd.randint(2, 4))
    return {"id": f"case{i:07d}", "input": _text(rnd, 20),
            "expected_calls": [{"name": n, "args": _varied_args(rnd) if varied else _args(rnd, n)}
                               for n in names],
            "optional_calls": ["get_user", "search_flights"] if "search_flights" not in names
            else ["get_user"],
            "forbidden_calls": ["refund"]}


def run_of(seed: int, case: dict, trial: int) -> dict:
    """One run of ``case``: mostly right, sometimes a wrong argument, a missing or extra call,
    a failed call that is retried, two calls in one parallel step."""
    rnd = random.Random((seed * 1_000_003 + int(case["id"][4:])) * 7 + trial)
    calls = []
    for e in case["expected_calls"]:
        a = dict(e["args"])
        if rnd.random() < 0.15:
            k = "id" if "id" in a else rnd.choice(list(a))
            a[k] = _changed(rnd, a[k])
        if rnd.random() < 0.1:
            continue
        calls.append((e["name"], a))
    if rnd.random() < 0.3:
        calls.insert(0, ("get_user", {"id": rnd.randint(1, 10**6)}))
    if rnd.random() < 0.1:
        calls.append((rnd.choice(TOOLS), {"id": rnd.randint(1, 10**6)}))
    steps: list[dict] = [{"index": 0, "kind": "user", "content": _text(rnd, 25)}]
    k = 0
    i = 0
    while i < len(calls):
        group = calls[i:i + 2] if rnd.random() < 0.15 else calls[i:i + 1]
        fail = rnd.random() < 0.08
        tcs = [{"name": n, "args": a, "call_id": f"call_{k + j}"} for j, (n, a) in enumerate(group)]
        steps.append({"index": len(steps), "kind": "tool_call", "tool_calls": tcs,
                      "usage": {"input_tokens": rnd.randint(300, 3000),
                                "output_tokens": rnd.randint(10, 200)},
                      "latency_ms": round(rnd.uniform(200, 3000), 1), "cost_usd": 0.00042})
        for j, tc in enumerate(tcs):
            err = fail and j == 0
            steps.append({"index": len(steps), "kind": "tool_result",
                          "tool_result": {"call_id": tc["call_id"], "name": tc["name"],
                                          "output": ("Error: service unavailable" if err
                                                     else _text(rnd, 22)),
                                          "is_error": err}})
        k += len(group)
        if not fail:
            i += len(group)
    final = "Your request is done. " + _text(rnd, 15)
    steps.append({"index": len(steps), "kind": "final_response", "content": final,
                  "usage": {"input_tokens": rnd.randint(300, 3000), "output_tokens": 60},
                  "latency_ms": round(rnd.uniform(200, 3000), 1), "cost_usd": 0.00042})
    return {"steps": steps, "final_response": final, "source_format": "trajcheck",
            "metadata": {"case_id": case["id"], "trial": trial,
                         "run_id": f"{case['id']}-{trial}"}}


def generate(out: Path, n_runs: int, seed: int = 0, varied: bool = False) -> tuple[Path, Path]:
    """Write ``out/runs.jsonl`` (n_runs runs, runs of a case scattered) and ``out/cases.jsonl``
    (``varied``: ``case_of``'s)."""
    out.mkdir(parents=True, exist_ok=True)
    n_cases = max(1, n_runs // TRIALS)
    cases_p, runs_p = out / "cases.jsonl", out / "runs.jsonl"
    with cases_p.open("w", encoding="utf-8") as f:
        for i in range(n_cases):
            f.write(json.dumps(case_of(seed, i, varied), ensure_ascii=not varied) + "\n")
    order = list(range(n_cases * TRIALS))
    random.Random(seed).shuffle(order)
    with runs_p.open("w", encoding="utf-8") as f:
        for r in order:
            f.write(json.dumps(run_of(seed, case_of(seed, r // TRIALS, varied), r % TRIALS),
                               ensure_ascii=not varied) + "\n")
    return runs_p, cases_p


def floor(runs_path: str, cases_path: str) -> float:
    """The plain-Python floor: read the cases, then every run line, and compute a multiset
    F1 of (name, arguments) per run; returns the mean F1 (printed)."""
    expected: dict[str, Counter] = {}
    with open(cases_path, encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            expected[c["id"]] = Counter((e["name"], json.dumps(e["args"], sort_keys=True))
                                        for e in c["expected_calls"])
    total = 0.0
    n = 0
    with open(runs_path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            pred = Counter((c["name"], json.dumps(c["args"], sort_keys=True))
                           for s in r["steps"] for c in s.get("tool_calls", ()))
            exp = expected[r["metadata"]["case_id"]]
            tp = sum((pred & exp).values())
            p = tp / max(1, sum(pred.values()))
            rc = tp / max(1, sum(exp.values()))
            total += 2 * p * rc / (p + rc) if p + rc else 0.0
            n += 1
    mean = total / max(1, n)
    print(f"{n} runs, mean multiset F1 {mean:.4f}")
    return mean


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--runs", type=int, required=True)
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--varied", action="store_true",
                   help="each case its own argument names and value types")
    fl = sub.add_parser("floor")
    fl.add_argument("runs")
    fl.add_argument("cases")
    a = ap.parse_args(argv)
    if a.cmd == "generate":
        r, c = generate(a.out, a.runs, a.seed, a.varied)
        print(f"wrote {r} ({r.stat().st_size / 1e6:.0f} MB) and {c}", file=sys.stderr)
    else:
        floor(a.runs, a.cases)


if __name__ == "__main__":
    main()
