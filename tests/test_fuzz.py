"""Property-based fuzzing of everything that reads untrusted input (README "Security model").

Each example mutates a real sample (every trace format in tests/data, tau-bench records, the
example datasets' rows) and checks two things: only ``TrajcheckError`` subclasses escape,
and the good records around a bad one are all still read. The suite runs a small number of
examples per property; ``make fuzz`` runs 10,000 (TRAJCHECK_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fuzzing import dataset_rows, dumps, mutate, mutations, samples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajcheck.errors import TrajcheckError
from trajcheck.read.traces import load

N = int(os.environ.get("TRAJCHECK_FUZZ_EXAMPLES", "0"))
SHARE = {"between": 0.5, "alone": 0.3, "bytes": 0.2, "dataset": 0.2}  # of N, per property
SAMPLES = samples()
NAMES = sorted(SAMPLES)
ROWS = dataset_rows()


def _settings(default: int, share: str) -> Any:
    return settings(max_examples=int(N * SHARE[share]) if N else default, deadline=None, derandomize=not N,
                    suppress_health_check=list(HealthCheck), database=None)


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8", errors="surrogatepass")


@pytest.fixture(scope="module")
def good_counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Trajectories read from two copies of each unmutated sample, one per line."""
    d = tmp_path_factory.mktemp("good")
    out = {}
    for name in NAMES:
        p = d / f"{name}.jsonl"
        _write(p, [dumps(SAMPLES[name])] * 2)
        out[name] = len(load(p))
    return out


@_settings(150, "between")
@given(name=st.sampled_from(NAMES), muts=mutations)
def test_mutated_trace_between_good_ones(tmp_path_factory: pytest.TempPathFactory,
                                         good_counts: dict[str, int], name: str, muts: Any) -> None:
    bad = mutate(SAMPLES[name], muts)
    good = dumps(SAMPLES[name])
    p = tmp_path_factory.mktemp("fz") / "mixed.jsonl"
    _write(p, [good, dumps(bad), good])
    try:
        res = load(p)
    except TrajcheckError as e:  # only when nothing at all is a trace -- never with good lines
        pytest.fail(f"good records lost: {e}")
    assert len(res) >= good_counts[name], res.problems


@_settings(120, "alone")
@given(name=st.sampled_from(NAMES), muts=mutations)
def test_mutated_trace_alone_only_trajcheck_errors(name: str, muts: Any) -> None:
    bad = mutate(SAMPLES[name], muts)
    try:
        res = load(bad)
    except TrajcheckError:
        return
    for t in res:
        json.dumps(t.to_dict(), default=str)  # what was read can be written back
    _score_and_report(list(res))


CASE_ROW = {"id": "fz", "input": "x", "expected_calls": [{"name": "get_weather", "args": {"city": "Oslo"}},
                                                         {"name": "search", "match": {"q": "contains"},
                                                          "args": {"q": "a"}}],
            "forbidden_calls": ["delete_*"], "response_must_include": ["12C"], "max_steps": 8}


def _score_and_report(trajs: list[Any]) -> None:
    """What eval does with what was read: score every run, write the JSON, Markdown and
    terminal reports -- only trajcheck errors may come out."""
    import io

    from rich.console import Console

    from trajcheck.model import Case
    from trajcheck.report import render_terminal, to_markdown
    from trajcheck.score.suite import score_runs

    if not trajs:
        return
    case = Case.from_dict(CASE_ROW)
    try:
        sc = score_runs([(t, case) for t in trajs])
    except TrajcheckError:
        return
    json.dumps(sc.to_dict(), allow_nan=False)
    to_markdown(sc)
    render_terminal(sc, Console(file=io.StringIO(), width=120))


@_settings(100, "bytes")
@given(name=st.sampled_from(NAMES), cut=st.integers(0, 10 ** 6), junk=st.binary(min_size=1, max_size=8))
def test_byte_damage_in_one_line(tmp_path_factory: pytest.TempPathFactory, good_counts: dict[str, int],
                                 name: str, cut: int, junk: bytes) -> None:
    good = dumps(SAMPLES[name]).encode("utf-8", "surrogatepass")
    i = cut % len(good)
    bad = good[:i] + junk + good[i + 1:]
    p = tmp_path_factory.mktemp("fb") / "bytes.jsonl"
    p.write_bytes(good + b"\n" + bad.replace(b"\n", b" ") + b"\n" + good + b"\n")
    res = load(p)
    assert len(res) >= good_counts[name], res.problems


def _dataset(path: Path, rows: list[str]) -> None:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8", errors="surrogatepass")


@_settings(150, "dataset")
@given(i=st.integers(0, len(ROWS) - 1), muts=mutations)
def test_mutated_dataset_row(tmp_path_factory: pytest.TempPathFactory, i: int, muts: Any) -> None:
    from trajbuild import run

    from trajcheck.read.dataset import load_cases_report
    from trajcheck.score.suite import score_run

    row = mutate(ROWS[i], muts)
    others = [r for j, r in enumerate(ROWS) if j != i][:3]
    p = tmp_path_factory.mktemp("ds") / "cases.jsonl"
    _dataset(p, [json.dumps(others[0]), dumps(row), json.dumps(others[1]), json.dumps(others[2])])
    cases, errors = load_cases_report(p)
    ids = {c.id for c in cases}
    assert {o["id"] for o in others} <= ids, errors
    # every row that loads also scores: its faults were caught at load time
    t = run([("search_docs", {"query": "vpn", "limit": 3})],
            [("create_ticket", {"title": "x", "priority": "high"})], final="done")
    for c in cases:
        score_run(t, c)
