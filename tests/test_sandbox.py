"""trajcheck.run.sandbox: fixtures, snapshots, tools, isolation -- on SQLite and on a real PostgreSQL.

The PostgreSQL tests read TRAJCHECK_PG_URL; when it is unset they start a throwaway
cluster with scripts/start_postgres.sh, and skip (saying why) only if that fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from trajcheck.errors import SandboxError
from trajcheck.metrics.outcome import check_final_state, state_diff
from trajcheck.run.sandbox import (
    SQLAlchemySandbox,
    SQLiteSandbox,
    call_tool,
    open_sandbox,
    split_sql,
)

ROOT = Path(__file__).resolve().parents[1]

FIXTURE = """\
-- a tiny help-desk
CREATE TABLE tickets (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL,
    requester TEXT
);
CREATE TABLE audit_log (id INTEGER PRIMARY KEY, ticket_id INTEGER, action TEXT);
INSERT INTO tickets VALUES (1, 'VPN; drops hourly', 'low', 'open', 'u_1');
INSERT INTO tickets VALUES (2, 'It''s slow', 'high', 'open', 'u_2');
INSERT INTO audit_log VALUES (1, 1, 'create'), (2, 2, 'create');
"""


# -- a small tool set that works on both back ends (named :params, no dialect features) --

def make_tools(sb: Any) -> dict[str, Any]:
    def create_ticket(title: str, priority: str, requester: str) -> dict[str, Any]:
        new_id = sb.execute("SELECT COALESCE(MAX(id), 0) + 1 AS n FROM tickets")[0]["n"]
        sb.execute("INSERT INTO tickets (id, title, priority, status, requester) "
                   "VALUES (:id, :t, :p, 'open', :r)", {"id": new_id, "t": title, "p": priority, "r": requester})
        log_id = sb.execute("SELECT COALESCE(MAX(id), 0) + 1 AS n FROM audit_log")[0]["n"]
        sb.execute("INSERT INTO audit_log (id, ticket_id, action) VALUES (:i, :t, 'create')",
                   {"i": log_id, "t": new_id})
        return {"ticket_id": new_id}

    def update_ticket(ticket_id: int, status: str) -> dict[str, Any]:
        if not sb.execute("SELECT id FROM tickets WHERE id = :i", {"i": ticket_id}):
            raise LookupError(f"ticket {ticket_id} not found")
        sb.execute("UPDATE tickets SET status = :s WHERE id = :i", {"s": status, "i": ticket_id})
        return {"ticket_id": ticket_id, "status": status}

    return {"create_ticket": create_ticket, "update_ticket": update_ticket}


SCRIPT = [
    ("create_ticket", {"title": "Laptop won't boot", "priority": "high", "requester": "u_381"}),
    ("update_ticket", {"ticket_id": 1, "status": "closed"}),
    ("update_ticket", {"ticket_id": 99, "status": "closed"}),  # raises -> error result
]

# Hand-computed diff of SCRIPT against FIXTURE (ignoring id/created_at/updated_at).
EXPECTED_DIFF = {
    "added": {
        "audit_log": [{"id": 3, "ticket_id": 3, "action": "create"}],
        "tickets": [
            {"id": 1, "title": "VPN; drops hourly", "priority": "low", "status": "closed", "requester": "u_1"},
            {"id": 3, "title": "Laptop won't boot", "priority": "high", "status": "open", "requester": "u_381"},
        ],
    },
    "removed": {
        "tickets": [{"id": 1, "title": "VPN; drops hourly", "priority": "low", "status": "open", "requester": "u_1"}],
    },
    "tables_dropped": [],
    "tables_created": [],
    "ignore": ["id", "created_at", "updated_at"],
    "summary": "audit_log: +1 -0; tickets: +2 -1",
}


def run_script(sb: Any) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    tools = make_tools(sb)
    before = sb.snapshot()
    results = [sb.call_tool(tools[name], args, name=name) for name, args in SCRIPT]
    return before, sb.snapshot(), results


@pytest.fixture
def fixture_file(tmp_path: Path) -> Path:
    p = tmp_path / "helpdesk.sql"
    p.write_text(FIXTURE)
    return p


# ------------------------------------------------------------------ PostgreSQL server

@pytest.fixture(scope="module")
def pg_url() -> str:
    pytest.importorskip("sqlalchemy", reason="the 'sql' extra (SQLAlchemy) is not installed")
    pytest.importorskip("psycopg", reason="the 'sql' extra (psycopg) is not installed")
    url = os.environ.get("TRAJCHECK_PG_URL")
    if url:
        return url
    script = ROOT / "scripts" / "start_postgres.sh"
    try:
        proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"TRAJCHECK_PG_URL unset and scripts/start_postgres.sh could not run: {e}")
    if proc.returncode != 0 or not proc.stdout.strip():
        pytest.skip("TRAJCHECK_PG_URL unset and scripts/start_postgres.sh failed "
                    f"(exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
    return proc.stdout.strip().splitlines()[-1]


# ------------------------------------------------------------------ SQLite

def test_sqlite_fixture_snapshot_is_deterministic(fixture_file: Path) -> None:
    with SQLiteSandbox(fixture_file) as sb:
        snap = sb.snapshot()
    assert list(snap) == ["audit_log", "tickets"]
    assert snap["tickets"] == [
        {"id": 1, "title": "VPN; drops hourly", "priority": "low", "status": "open", "requester": "u_1"},
        {"id": 2, "title": "It's slow", "priority": "high", "status": "open", "requester": "u_2"},
    ]
    assert snap["audit_log"] == [{"id": 1, "ticket_id": 1, "action": "create"},
                                 {"id": 2, "ticket_id": 2, "action": "create"}]


def test_sqlite_tools_and_diff(fixture_file: Path) -> None:
    with SQLiteSandbox(fixture_file) as sb:
        before, after, results = run_script(sb)
    assert [r.is_error for r in results] == [False, False, True]
    assert results[0].output == {"ticket_id": 3}
    assert results[2].error == "LookupError: ticket 99 not found"
    assert state_diff(before, after).to_dict() == EXPECTED_DIFF
    expected = {"tickets": {"added": [{"title": "Laptop won't boot", "priority": "high", "requester": "u_381"},
                                      {"id": 1, "status": "closed"}],
                            "removed": [{"id": 1, "status": "open"}]},
                "audit_log": [{"action": "create", "ticket_id": 3}]}
    res = check_final_state(before, after, expected)
    assert res.passed is True and res.score == 1.0 and res.parts["matched"] == 4


def test_sqlite_trials_are_isolated(fixture_file: Path, tmp_path: Path) -> None:
    snaps = []
    for trial in range(3):
        with SQLiteSandbox(fixture_file) as sb:
            snaps.append(sb.snapshot())
            make_tools(sb)["create_ticket"](title=f"t{trial}", priority="low", requester="u")
            assert len(sb.snapshot()["tickets"]) == 3
    assert snaps[0] == snaps[1] == snaps[2] and len(snaps[0]["tickets"]) == 2
    # file-backed: a fresh file per trial, deleted on close; an existing file is refused
    db = tmp_path / "trial.db"
    with SQLiteSandbox(fixture_file, path=db) as sb:
        sb.execute("DELETE FROM tickets")
        assert db.exists()
    assert not db.exists()
    db.write_text("")
    with pytest.raises(SandboxError, match="already exists"):
        SQLiteSandbox(fixture_file, path=db).open()


def test_concurrent_sqlite_sandboxes_do_not_share(fixture_file: Path) -> None:
    with SQLiteSandbox(fixture_file) as a, SQLiteSandbox(fixture_file) as b:
        a.execute("DELETE FROM tickets")
        assert len(a.snapshot()["tickets"]) == 0
        assert len(b.snapshot()["tickets"]) == 2


def test_sqlite_fixture_error_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE TABLE t (x INTEGER);\n\n-- comment\nINSERT INTO t VALUES (1);\nINSERT INTO nope\n  VALUES (2);\n")
    with pytest.raises(SandboxError) as ei:
        SQLiteSandbox(bad).open()
    msg = str(ei.value)
    assert f"{bad}, line 5:" in msg and "no such table: nope" in msg


def test_sqlite_incomplete_statement_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"<fixture_sql>, line 2: incomplete statement"):
        SQLiteSandbox(fixture_sql="CREATE TABLE t (x);\nCREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT 1;").open()
    with pytest.raises(SandboxError, match="not found"):
        SQLiteSandbox(tmp_path / "missing.sql")
    with pytest.raises(SandboxError, match="not open"):
        _ = SQLiteSandbox().connection


def test_sqlite_trigger_fixture_loads() -> None:
    sql = ("CREATE TABLE t (x INTEGER);\nCREATE TABLE log (x INTEGER);\n"
           "CREATE TRIGGER g AFTER INSERT ON t BEGIN INSERT INTO log VALUES (NEW.x * 10); END;\n"
           "INSERT INTO t VALUES (4);")
    with SQLiteSandbox(fixture_sql=sql) as sb:
        assert sb.snapshot() == {"log": [{"x": 40}], "t": [{"x": 4}]}


def test_tool_that_raises_is_an_error_result_and_rolls_back(fixture_file: Path) -> None:
    with SQLiteSandbox(fixture_file) as sb:
        def half_done(title: str) -> None:
            sb.execute("BEGIN")
            sb.execute("INSERT INTO tickets VALUES (9, :t, 'low', 'open', NULL)", {"t": title})
            raise RuntimeError("disk full")

        before = sb.snapshot()
        r = sb.call_tool(half_done, {"title": "x"}, call_id="c1")
        assert (r.is_error, r.error, r.name, r.call_id) == (True, "RuntimeError: disk full", "half_done", "c1")
        assert sb.snapshot() == before  # the open transaction was rolled back
        # a database error inside a tool is captured the same way
        r2 = sb.call_tool(lambda: sb.execute("SELECT * FROM nope"), name="q")
        assert r2.is_error and r2.error is not None and "no such table" in r2.error
    # the plain helper works without a sandbox
    r3 = call_tool(lambda a: a + 1, {"a": 1}, name="inc")
    assert (r3.output, r3.is_error) == (2, False)
    r4 = call_tool(lambda: 1 / 0)
    assert r4.is_error and r4.error == "ZeroDivisionError: division by zero"


def test_nan_rows_in_sqlite_become_null() -> None:
    # SQLite stores a NaN REAL as NULL; the snapshot reports None, not a NaN that never equals itself
    with SQLiteSandbox(fixture_sql="CREATE TABLE m (k TEXT, v REAL);") as sb:
        sb.execute("INSERT INTO m VALUES ('a', :v), ('b', 1.5)", {"v": float("nan")})
        assert sb.snapshot() == {"m": [{"k": "a", "v": None}, {"k": "b", "v": 1.5}]}


def test_split_sql_respects_quotes_comments_and_lines() -> None:
    text = ("-- head; not a statement\nCREATE TABLE a (x TEXT); /* c;\n c */\n"
            "INSERT INTO a VALUES ('x;y'), (\"q;\");\n\n"
            "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;\nSELECT 2")
    got = [(s.line, s.sql) for s in split_sql(text)]
    assert got == [
        (2, "CREATE TABLE a (x TEXT)"),
        (4, "INSERT INTO a VALUES ('x;y'), (\"q;\")"),
        (6, "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql"),
        (7, "SELECT 2"),
    ]


def test_open_sandbox_factory(fixture_file: Path) -> None:
    sb = open_sandbox(fixture_file.name, base_dir=fixture_file.parent)
    assert isinstance(sb, SQLiteSandbox)
    with sb:
        assert len(sb.snapshot()["tickets"]) == 2


# ------------------------------------------------------------------ PostgreSQL

def test_postgres_same_diffs_as_sqlite(pg_url: str, fixture_file: Path) -> None:
    with SQLiteSandbox(fixture_file) as sb:
        lite = run_script(sb)
    with SQLAlchemySandbox(pg_url, fixture_file) as pg:
        assert pg.schema is not None and pg.schema.startswith("trajcheck_")
        pgres = run_script(pg)
    assert pgres[0] == lite[0]  # same initial snapshot
    assert pgres[1] == lite[1]  # same final snapshot
    assert state_diff(pgres[0], pgres[1]).to_dict() == state_diff(lite[0], lite[1]).to_dict() == EXPECTED_DIFF
    assert [(r.is_error, r.error) for r in pgres[2]] == [(r.is_error, r.error) for r in lite[2]]


def test_postgres_trials_are_isolated(pg_url: str, fixture_file: Path) -> None:
    with SQLAlchemySandbox(pg_url, fixture_file) as a, SQLAlchemySandbox(pg_url, fixture_file) as b:
        assert a.schema != b.schema
        a.execute("DELETE FROM tickets")
        make_tools(a)["create_ticket"](title="only in a", priority="low", requester="u")
        assert [r["title"] for r in a.snapshot()["tickets"]] == ["only in a"]
        assert [r["title"] for r in b.snapshot()["tickets"]] == ["VPN; drops hourly", "It's slow"]
        schema_a = a.schema
    # the trial's schema is dropped on close; a later trial starts from the fixture again
    import sqlalchemy as sa

    eng = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with eng.connect() as c:
        left = c.execute(sa.text("SELECT count(*) FROM information_schema.schemata WHERE schema_name = :s"),
                         {"s": schema_a}).scalar()
    eng.dispose()
    assert left == 0
    with SQLAlchemySandbox(pg_url, fixture_file) as c2:
        assert len(c2.snapshot()["tickets"]) == 2


def test_postgres_fixture_error_names_file_and_line(pg_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad_pg.sql"
    bad.write_text("CREATE TABLE t (x int);\nINSERT INTO t VALUES (1);\n\nINSERT INTO t VALUES ('not a number');\n")
    with pytest.raises(SandboxError) as ei:
        SQLAlchemySandbox(pg_url, bad).open()
    assert f"{bad}, line 4:" in str(ei.value) and "invalid input syntax" in str(ei.value)


def test_postgres_tool_error_rolls_back(pg_url: str, fixture_file: Path) -> None:
    with SQLAlchemySandbox(pg_url, fixture_file) as sb:
        before = sb.snapshot()
        r = sb.call_tool(lambda: sb.execute("INSERT INTO tickets (id, title) VALUES (7, NULL)"), name="bad_insert")
        assert r.is_error and r.error is not None and "IntegrityError" in r.error
        assert sb.snapshot() == before
        assert sb.execute("SELECT 1 AS one") == [{"one": 1}]  # connection still usable


def test_unreachable_server_is_a_sandbox_error() -> None:
    pytest.importorskip("sqlalchemy")
    with pytest.raises(SandboxError, match="cannot connect"):
        SQLAlchemySandbox("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2").open()
