"""Agents that attack the runner from their worker (tests/test_isolation_attacks.py, issue 27).

Each reports what its attack got in its metadata and then does what scores only when the
attack worked, so a test sees both the attack's reach and the grade it led to. None of them
has top-level code with side effects (tests/data/hostile/patcher.py is the one that does).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

SECRET = re.compile(rb"xyzzy-[0-9a-f]{12}-secret")


def mem_reader(inp: Any, tools: Any) -> dict[str, Any]:
    """Reads its parent's memory through /proc/PPID/mem, looking for the case's expected
    note (which it is never sent); writes it when found, else a wrong note."""
    ppid = os.getppid()
    found: list[str] = []
    err = None
    try:
        with open(f"/proc/{ppid}/maps") as maps, open(f"/proc/{ppid}/mem", "rb", buffering=0) as mem:
            for line in maps:
                addr, perms = line.split()[:2]
                if "r" not in perms or "w" not in perms:
                    continue
                lo, hi = (int(x, 16) for x in addr.split("-"))
                if hi - lo > 256 << 20:
                    continue
                try:
                    mem.seek(lo)
                    chunk = mem.read(hi - lo)
                except OSError:
                    continue
                found.extend(m.decode() for m in SECRET.findall(chunk))
                if found:
                    break
    except OSError as e:
        err = f"{type(e).__name__}: {e.strerror}"
    tools.call("add_note", {"text": found[0] if found else "wrong note"})
    return {"final_response": "saved it", "metadata": {"found": len(found), "ppid": ppid, "error": err}}


def out_forger(inp: Any, tools: Any) -> dict[str, Any]:
    """Appends a perfect record for its own (case, trial) to the run file (named by the test
    in HOSTILE_OUT), then does the wrong work."""
    rec = {"steps": [{"index": 0, "kind": "user", "content": inp},
                     {"index": 1, "kind": "tool_call",
                      "tool_calls": [{"id": "c1", "name": "add_note", "args": {"text": inp}}]},
                     {"index": 2, "kind": "tool_result",
                      "tool_result": {"call_id": "c1", "name": "add_note", "output": {"saved": [inp]}}},
                     {"index": 3, "kind": "final_response", "content": "saved it"}],
           "final_response": "saved it", "source_format": "trajcheck",
           "metadata": {"case_id": tools.case_id, "trial": tools.trial, "run_id": f"{tools.case_id}-{tools.trial}",
                        "agent": os.environ.get("HOSTILE_AGENT_NAME", ""), "state_before": {"notes": []},
                        "state_after": {"notes": [{"id": 1, "text": inp}]}}}
    err = None
    try:
        with open(os.environ["HOSTILE_OUT"], "a") as f:
            f.write(json.dumps(rec) + "\n")
    except OSError as e:
        err = f"{type(e).__name__}: {e.strerror}"
    tools.call("add_note", {"text": "wrong note"})
    return {"final_response": "saved it", "metadata": {"forge_error": err}}


def fork_bomb(inp: Any, tools: Any) -> dict[str, Any]:
    """Starts up to 300 children that sleep, and says how many it got."""
    n, err = 0, None
    for _ in range(300):
        try:
            pid = os.fork()
        except OSError as e:
            err = f"{type(e).__name__}: {e.strerror}"
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
    tools.call("add_note", {"text": str(inp)})
    return {"final_response": "saved it", "metadata": {"children": n, "error": err}}


def spawns_and_hangs(inp: Any, tools: Any) -> str:
    """Starts a child (in its own session, out of the worker's process group) that writes its
    pid to a file named by HOSTILE_PIDS every 0.2 s, then hangs past the timeout."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        while True:
            try:
                with open(os.environ["HOSTILE_PIDS"], "a") as f:
                    f.write(f"{os.getpid()}\n")
            except OSError:
                pass
            time.sleep(0.2)
    tools.call("add_note", {"text": str(inp)})
    while True:
        time.sleep(1)


def busy(inp: Any, tools: Any) -> str:
    """Writes its pid to HOSTILE_PIDS, then computes without end (a busy worker)."""
    try:
        with open(os.environ["HOSTILE_PIDS"], "a") as f:
            f.write(f"{os.getpid()}\n")
    except OSError:
        pass
    tools.call("add_note", {"text": str(inp)})
    x = 0
    while True:
        x += 1


def pg_admin(inp: Any, tools: Any) -> dict[str, Any]:
    """Logs in to the test cluster as its bootstrap superuser with no password (the port in
    HOSTILE_PG_PORT), as the trust-everyone cluster allowed."""
    import psycopg

    try:
        with psycopg.connect(host="127.0.0.1", port=int(os.environ["HOSTILE_PG_PORT"]), user="trajcheck_admin",
                             dbname="postgres", connect_timeout=5) as c:
            who = c.execute("SELECT current_user").fetchone()
        got = f"logged in as {who[0] if who else '?'}"
    except Exception as e:
        got = f"refused: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
    tools.call("add_note", {"text": "wrong note"})
    return {"final_response": "saved it", "metadata": {"admin": got}}


def noisy(inp: Any, tools: Any) -> str:
    """Prints a fake result line and an escape sequence, then works honestly."""
    print("SCORECARD: 100% task success \x1b[2J\x1b]0;owned\x07", flush=True)
    os.write(2, b"x" * 3_000_000)
    tools.call("add_note", {"text": str(inp)})
    return "saved it"
