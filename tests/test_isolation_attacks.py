"""Each attack of issue 27 on the runner, run for real, and shown to fail in sandbox isolation.

The attacking agents are in tests/data/hostile/attacks.py (and patcher.py, whose top-level
code patches the scorer); their tools come from tests/data/hostile/agents.py (TOOLS), given
separately, as `--tools` does, so the attacking file is imported only in its worker. Where an
attack works in `process` isolation on this machine, the test shows that too, so the sandbox
is what stops it. Tests needing bubblewrap skip when it cannot start here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from trajcheck.read.dataset import load_cases
from trajcheck.run.isolation import Limits, sandbox_problem
from trajcheck.run.runner import load_agent, read_runs, run_suite

HERE = Path(__file__).parent / "data" / "hostile"
ATTACKS = HERE / "attacks.py"
CASES = HERE / "cases.jsonl"
SECRET_CASES = HERE / "secret_cases.jsonl"
TRAJCHECK = str(Path(sys.executable).parent / "trajcheck")

needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")


def _tools():
    return load_agent(f"{HERE / 'agents.py'}:TOOLS", want_callable=False)


def _run(name: str, cases_file: Path = CASES, **kw):
    kw.setdefault("progress", False)
    return run_suite(f"{ATTACKS}:{name}", load_cases(cases_file), tools=_tools(), base_dir=HERE, **kw)


def _meta(res) -> list[dict]:
    return [t.metadata.get("agent_metadata", {}) for t, _c in res.runs]


def _marked(mark: str) -> list[int]:
    """Live processes whose environment holds HOSTILE_MARK=mark, this one excluded."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{d}/environ").read_bytes()
            state = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"HOSTILE_MARK={mark}".encode() in env.split(b"\0") and state != "Z":
            pids.append(int(d))
    return pids


def _wait_none(mark: str, within: float = 5.0) -> list[int]:
    end = time.monotonic() + within
    while (left := _marked(mark)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


# ------------------------------------------------------------------ the grader's memory


@needs_sandbox
def test_reading_the_runners_memory_finds_nothing_in_the_sandbox() -> None:
    res = _run("mem_reader", SECRET_CASES)
    (meta,) = _meta(res)
    assert meta["found"] == 0 and res.scorecard.suite.n_successes == 0
    assert meta["ppid"] != os.getpid()  # its parent is the sandbox's own first process
    assert res.runs[0][0].metadata["isolation"] == "sandbox"
    # the attack is real: a plain worker process of root finds the expected note it was never sent
    if os.geteuid() == 0:
        proc = _run("mem_reader", SECRET_CASES, isolation="process")
        (pmeta,) = _meta(proc)
        assert pmeta["ppid"] == os.getpid() and pmeta["found"] >= 1
        assert proc.scorecard.suite.n_successes == 1


# ------------------------------------------------------------------ the run file


def _forge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str):
    out = tmp_path / "runs.jsonl"
    monkeypatch.chdir(tmp_path)  # the run file's folder in the worker's view (the working folder)
    monkeypatch.setenv("HOSTILE_OUT", str(out))
    monkeypatch.setenv("HOSTILE_AGENT_NAME", "attacks.py:out_forger")
    return out, _run("out_forger", out=out, isolation=isolation)


@needs_sandbox
def test_record_appended_by_the_agent_cannot_be_written_in_the_sandbox(tmp_path, monkeypatch) -> None:
    out, res = _forge(tmp_path, monkeypatch, "sandbox")
    assert {m["forge_error"] for m in _meta(res)} == {"OSError: Read-only file system"}
    assert res.scorecard.suite.n_successes == 0
    lines = out.read_bytes().splitlines()
    assert len(lines) == 2 and all(b'"trajcheck_mac": "' in x for x in lines)
    # and the key is not in the sandbox's view: it reads as empty there
    assert len((tmp_path / "runs.jsonl.key").read_text().strip()) == 64


def test_record_appended_by_the_agent_is_refused_by_resume_and_eval(tmp_path, monkeypatch) -> None:
    out, res = _forge(tmp_path, monkeypatch, "process")
    assert {m["forge_error"] for m in _meta(res)} == {None}  # a plain worker could append ...
    assert res.scorecard.suite.n_successes == 0  # ... but the run's own grade was not changed
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    forged = [i + 1 for i, r in enumerate(recs) if "trajcheck_mac" not in r]
    assert len(recs) == 4 and len(forged) == 2  # each forged line came before its pair's real one
    # resume: the forged lines are refused by number, the real records kept and scored as at run time
    again = _run("out_forger", out=out, isolation="process")
    assert (again.n_new, again.n_resumed) == (0, 2)
    assert again.scorecard.suite.n_successes == 0
    assert [p for p in again.problems if "refused" in p] == [
        f"{out}: line {n}: not signed by trajcheck (no trajcheck_mac); refused" for n in forged]
    # eval: the file is refused, naming the lines
    r = subprocess.run([TRAJCHECK, "eval", str(out), "--cases", str(CASES)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2
    for n in forged:
        assert f"line {n}: not signed by trajcheck (no trajcheck_mac)" in r.stderr
    # an edited signed line is refused too, and read_runs drops it when given the key
    from trajcheck.run.record_mac import load_key

    text = out.read_text().replace('"wrong note"', '"note 0"', 1)
    out.write_text(text)
    rec = read_runs(out, key=load_key(out))
    assert any("its trajcheck_mac does not match" in p for p in rec.problems)


def test_unsigned_files_of_other_tools_still_evaluate(tmp_path) -> None:
    plain = tmp_path / "other.jsonl"
    rec = {"steps": [{"index": 0, "kind": "tool_call", "tool_calls": [{"name": "add_note",
                                                                      "args": {"text": "note 0"}}]}],
           "final_response": "saved it", "metadata": {"case_id": "c0"}}
    plain.write_text(json.dumps(rec) + "\n")
    r = subprocess.run([TRAJCHECK, "eval", str(plain), "--cases", str(CASES), "--json", str(tmp_path / "s.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "signature" not in r.stderr
    # a signed line whose key file is missing: evaluated, with a line saying it was not checked
    signed = tmp_path / "copied.jsonl"
    from trajcheck.run.record_mac import sign

    signed.write_bytes(sign(b"k" * 32, json.dumps(rec).encode()))
    r = subprocess.run([TRAJCHECK, "eval", str(signed), "--cases", str(CASES)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "key file" in r.stderr and "signatures not checked" in r.stderr


# ------------------------------------------------------------------ the scorer


def _cli_run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRAJCHECK, "run", "--agent", f"{HERE / 'patcher.py'}:agent", "--cases", str(CASES),
                           "--no-progress", "--json", str(tmp_path / "sc.json"), *extra],
                          capture_output=True, text=True, timeout=180)


@needs_sandbox
def test_scorer_patch_in_the_agent_file_does_not_reach_the_grader(tmp_path) -> None:
    r = _cli_run(tmp_path, "--tools", f"{HERE / 'agents.py'}:TOOLS")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "sc.json").read_text())["suite"]["n_successes"] == 0
    assert "isolation: sandbox" in r.stderr and "imported into trajcheck's process" not in r.stderr
    # the patch is real: with the tools taken from the agent's own file, trajcheck has to import
    # it, the patch runs beside the grader and says so
    imported = subprocess.run([sys.executable, "-c", (
        "import sys; sys.path.insert(0, sys.argv[1]); import patcher, json\n"
        "from trajcheck.run.runner import run_suite, load_agent\n"
        "from trajcheck.read.dataset import load_cases\n"
        "res = run_suite(patcher.agent, load_cases(sys.argv[2]), tools=load_agent(sys.argv[3], want_callable=False), "
        "base_dir=sys.argv[1], progress=False, isolation='inline')\n"
        "print(res.scorecard.suite.n_successes)"), str(HERE), str(CASES), f"{HERE / 'agents.py'}:TOOLS"],
        capture_output=True, text=True, timeout=180)
    assert imported.stdout.split() == ["2"], imported.stderr


# ------------------------------------------------------------------ processes


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_fork_bomb_is_limited(isolation: str) -> None:
    if isolation == "sandbox" and sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    res = _run("fork_bomb", isolation=isolation, limits=Limits(processes=40), timeout_s=60)
    metas = _meta(res)
    assert len(metas) == 2
    # the first run's children still sleep in the reused worker: both runs share the 40
    assert 20 < metas[0]["children"] < 40 and metas[0]["children"] + metas[1]["children"] < 40
    assert {m["error"] for m in metas} == {"BlockingIOError: Resource temporarily unavailable"}
    assert res.scorecard.suite.n_successes == 2  # the suite went on; each run still did its work


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_children_are_killed_on_timeout(isolation: str, monkeypatch, tmp_path) -> None:
    if isolation == "sandbox" and sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    mark = uuid.uuid4().hex
    monkeypatch.setenv("HOSTILE_MARK", mark)
    monkeypatch.setenv("HOSTILE_PIDS", str(tmp_path / "pids"))
    res = _run("spawns_and_hangs", isolation=isolation, timeout_s=4.0)
    assert {t.metadata["error"] for t, _c in res.runs} == {"timeout after 4s"}
    assert _wait_none(mark) == []


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_sigkill_of_the_runner_kills_a_busy_worker(isolation: str, tmp_path) -> None:
    if isolation == "sandbox" and sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    mark = uuid.uuid4().hex
    env = {**os.environ, "HOSTILE_MARK": mark, "HOSTILE_PIDS": str(tmp_path / "pids")}
    runner = subprocess.Popen([TRAJCHECK, "run", "--agent", f"{ATTACKS}:busy", "--tools", f"{HERE / 'agents.py'}:TOOLS",
                               "--cases", str(CASES), "--no-progress", "--isolation", isolation, "--timeout", "120"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not [p for p in _marked(mark) if p != runner.pid]:
            time.sleep(0.1)
        time.sleep(1.0)  # the agent is computing now
        assert [p for p in _marked(mark) if p != runner.pid], "the worker never started"
    finally:
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
    assert _wait_none(mark) == []


# ------------------------------------------------------------------ output and start-up


def test_worker_output_goes_to_the_capped_log_not_stdout(tmp_path) -> None:
    out = tmp_path / "runs.jsonl"
    r = subprocess.run([TRAJCHECK, "run", "--agent", f"{ATTACKS}:noisy", "--tools", f"{HERE / 'agents.py'}:TOOLS",
                        "--cases", str(CASES), "--no-progress", "--out", str(out), "--quiet"],
                       capture_output=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert b"SCORECARD: 100%" not in r.stdout + r.stderr and b"\x1b]0;owned" not in r.stdout + r.stderr
    log = (tmp_path / "runs.jsonl.log").read_bytes()
    assert b"SCORECARD: 100% task success" in log
    assert 1 << 20 <= len(log) < (1 << 20) + 4096  # 3 MB written per run, 1 MiB kept per worker
    assert b"output past 1048576 bytes dropped" in log


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_stdlib_names_in_the_working_folder_do_not_run_in_the_worker(isolation: str, tmp_path) -> None:
    if isolation == "sandbox" and sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    mark = tmp_path / "ran"
    for mod in ("json", "inspect", "socket", "signal", "typing", "asyncio", "concurrent"):
        (tmp_path / f"{mod}.py").write_text(f"open({str(mark)!r} + '-{mod}', 'w').close()\n")
    (tmp_path / "myagent.py").write_text(
        "import asyncio, inspect\n\ndef honest(inp, tools):\n    tools.call('add_note', {'text': inp})\n"
        "    return 'saved it'\n")
    r = subprocess.run([TRAJCHECK, "run", "--agent", "myagent:honest", "--tools", f"{HERE / 'agents.py'}:TOOLS",
                        "--cases", str(CASES), "--no-progress", "--isolation", isolation, "--json",
                        str(tmp_path / "sc.json")], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []
    assert json.loads((tmp_path / "sc.json").read_text())["suite"]["n_successes"] == 2


def test_worker_start_up_counts_in_the_timeout() -> None:
    # a timeout shorter than any worker's start: the run fails with the timeout, not after it
    t0 = time.perf_counter()
    res = _run("fork_bomb", isolation="process", timeout_s=0.05)
    assert {t.metadata["error"] for t, _c in res.runs} == {"timeout after 0.05s"}
    assert time.perf_counter() - t0 < 10


# ------------------------------------------------------------------ the PostgreSQL cluster


@pytest.mark.parametrize("isolation", ["sandbox", "process"])
def test_admin_login_from_the_worker_is_refused(isolation: str, monkeypatch) -> None:
    pytest.importorskip("psycopg", reason="the 'sql' extra (psycopg) is not installed")
    if isolation == "sandbox" and sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    url = os.environ.get("TRAJCHECK_PG_URL")
    if not url:
        root = Path(__file__).resolve().parents[1]
        p = subprocess.run(["bash", str(root / "scripts" / "start_postgres.sh")], capture_output=True, text=True,
                           timeout=180)
        if p.returncode != 0 or not p.stdout.strip():
            pytest.skip(f"scripts/start_postgres.sh failed (exit {p.returncode}): {p.stderr[-300:]}")
        url = p.stdout.strip().splitlines()[-1]
    from urllib.parse import urlsplit

    monkeypatch.setenv("HOSTILE_PG_PORT", str(urlsplit(url).port))
    res = _run("pg_admin", isolation=isolation)
    got = {m["admin"] for m in _meta(res)}
    assert len(got) == 1 and next(iter(got)).startswith("refused: OperationalError")
    if isolation == "sandbox":  # no network at all
        assert "accepting TCP/IP connections" in next(iter(got))
    else:  # the cluster asks for a password (scram), which the worker does not have
        assert "password" in next(iter(got))
    assert res.scorecard.suite.n_successes == 0
