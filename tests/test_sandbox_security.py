"""The sandbox as a boundary: fixtures confined to the dataset's folder, SQLite's authorizer,
PostgreSQL trials as unprivileged roles of their own, no file content in messages.

The PostgreSQL tests read TRAJCHECK_PG_URL (CI exports it from scripts/start_postgres.sh); when
it is unset they start that script's throwaway cluster, and skip only if that fails.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from trajcheck.errors import SandboxError, SecurityError
from trajcheck.run.sandbox import SQLAlchemySandbox, SQLiteSandbox, open_sandbox

ROOT = Path(__file__).resolve().parents[1]
HELPDESK = ROOT / "examples" / "helpdesk"


def test_fixture_outside_the_dataset_folder_is_refused(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "ok.sql").write_text("CREATE TABLE t (x INTEGER);")
    secret = tmp_path / "secret.sql"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with open_sandbox("ok.sql", base_dir=ds) as sb:
        assert sb.tables() == ["t"]
    for bad in ("../secret.sql", str(secret), "/etc/passwd"):
        with pytest.raises(SecurityError) as ei:
            open_sandbox(bad, base_dir=ds)
        assert f"fixture {bad!r} is outside the dataset's folder ({ds})" in str(ei.value)
        assert "root:x" not in str(ei.value)
    link = ds / "link.sql"
    link.symlink_to(secret)
    with pytest.raises(SecurityError):
        open_sandbox("link.sql", base_dir=ds)
    # a folder the user allows explicitly
    with pytest.raises(SandboxError) as ei:
        open_sandbox("../secret.sql", base_dir=ds, fixture_roots=[tmp_path]).open()
    assert "root:x" not in str(ei.value) and "line 1" in str(ei.value)


def test_fixture_errors_do_not_echo_the_file(tmp_path: Path) -> None:
    f = tmp_path / "f.sql"
    f.write_text("CREATE TABLE t (x INTEGER);\nsecret_token_123 is here;\n")
    with pytest.raises(SandboxError) as ei:
        SQLiteSandbox(f).open()
    assert str(ei.value) == f"fixture {f}, line 2: OperationalError: syntax error"


@pytest.mark.parametrize("sql", [
    "ATTACH DATABASE '{d}/other.db' AS o",
    "VACUUM INTO '{d}/copy.db'",
    "SELECT load_extension('{d}/evil')",
    "PRAGMA writable_schema = ON",
])
def test_sqlite_authorizer_refuses_file_access(tmp_path: Path, sql: str) -> None:
    with SQLiteSandbox(fixture_sql="CREATE TABLE t (x INTEGER);") as sb:
        with pytest.raises(sqlite3.DatabaseError, match="not authorized|authorization denied"):
            sb.execute(sql.format(d=tmp_path))
        assert sb.execute("SELECT COUNT(*) AS n FROM t") == [{"n": 0}]
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SandboxError, match="not authorized|authorization denied"):
        SQLiteSandbox(fixture_sql=sql.format(d=tmp_path)).open()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sql", [
    "ATTACH DATABASE '{d}/other.db' AS o",
    "VACUUM INTO '{d}/copy.db'",
    "SELECT load_extension('{d}/evil')",
    "PRAGMA writable_schema = ON",
])
def test_sqlalchemy_sqlite_sandbox_has_the_same_authorizer(tmp_path: Path, sql: str) -> None:
    pytest.importorskip("sqlalchemy", reason="the 'sql' extra (SQLAlchemy) is not installed")
    with SQLAlchemySandbox("sqlite://", fixture_sql="CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);") as sb:
        with pytest.raises(Exception, match="not authorized|authorization denied"):
            sb.execute(sql.format(d=tmp_path))
        # refused, not broken: the trial's database still answers
        assert sb.execute("SELECT x FROM t") == [{"x": 7}]
        assert sb.snapshot() == {"t": [{"x": 7}]}
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SandboxError, match="line 1: .*(not authorized|authorization denied)"):
        SQLAlchemySandbox("sqlite://", fixture_sql=sql.format(d=tmp_path)).open()
    assert list(tmp_path.iterdir()) == []


def test_example_read_only_tool_cannot_attach(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("hd_agents_sec", HELPDESK / "agents.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    other = tmp_path / "other.db"
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE s (v TEXT)")
    c.execute("INSERT INTO s VALUES ('private')")
    c.commit()
    c.close()
    with open_sandbox("fixtures/helpdesk.sql", base_dir=HELPDESK) as sb:
        tools = mod.TOOLS.bind(sb)
        r = tools.call("run_sql", {"query": f"ATTACH DATABASE '{other}' AS o"})
        assert r.is_error and "not authorized" in (r.error or "")
        r = tools.call("run_sql", {"query": "SELECT COUNT(*) AS n FROM tickets"})
        assert not r.is_error


# ------------------------------------------------------------------ PostgreSQL

@pytest.fixture(scope="module")
def pg_url() -> str:
    pytest.importorskip("sqlalchemy", reason="the 'sql' extra (SQLAlchemy) is not installed")
    pytest.importorskip("psycopg", reason="the 'sql' extra (psycopg) is not installed")
    url = os.environ.get("TRAJCHECK_PG_URL")
    if url:
        return url
    try:
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "start_postgres.sh")], capture_output=True,
                              text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"TRAJCHECK_PG_URL unset and scripts/start_postgres.sh could not run: {e}")
    if proc.returncode != 0 or not proc.stdout.strip():
        pytest.skip(f"scripts/start_postgres.sh failed (exit {proc.returncode}): {proc.stderr[-400:]}")
    return proc.stdout.strip().splitlines()[-1]


def _pg_error(sb: SQLAlchemySandbox, sql: str) -> str:
    with pytest.raises(Exception) as ei:
        sb.execute(sql)
    return str(getattr(ei.value, "orig", ei.value)).splitlines()[0]


def test_start_postgres_role_is_not_a_superuser(pg_url: str) -> None:
    import sqlalchemy as sa

    eng = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with eng.connect() as c:
        row = c.exec_driver_sql("SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user").one()
    eng.dispose()
    assert tuple(row) == (False, False)


def _pg_attack(pg_url: str, sql: str, params: dict | None = None) -> str:
    """Run ``sql`` as the handed-out role; the refusal's first line (the test fails if it ran)."""
    import sqlalchemy as sa

    eng = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as c:
            with pytest.raises(Exception) as ei:
                c.execute(sa.text(sql), params or {})
    finally:
        eng.dispose()
    return str(getattr(ei.value, "orig", ei.value)).splitlines()[0]


def test_handed_out_role_cannot_make_itself_a_superuser(pg_url: str, tmp_path: Path) -> None:
    # Before PostgreSQL 16 a CREATEROLE role could grant itself these and run shell commands.
    for grp in ("pg_execute_server_program", "pg_write_server_files", "pg_read_server_files"):
        assert _pg_attack(pg_url, f"GRANT {grp} TO current_user") == f'must have admin option on role "{grp}"'
    assert "pg_execute_server_program" in _pg_attack(
        pg_url, f"COPY (SELECT 1) TO PROGRAM 'touch {tmp_path}/pwned'")
    assert list(tmp_path.iterdir()) == []
    assert _pg_attack(pg_url, "CREATE ROLE evil LOGIN") == "permission denied to create role"
    # the trial-role functions' owner cannot be borrowed, their code cannot be replaced
    assert _pg_attack(pg_url, "SET ROLE trajcheck_trials") == 'permission denied to set role "trajcheck_trials"'
    assert _pg_attack(pg_url, "CREATE OR REPLACE FUNCTION trajcheck_trials.close_trial(r text) RETURNS void "
                              "LANGUAGE sql AS 'SELECT 1'") == "permission denied for schema trajcheck_trials"
    assert _pg_attack(pg_url, "ALTER ROLE trajcheck_trials LOGIN").startswith("permission denied")


def test_trial_role_functions_make_only_confined_roles(pg_url: str) -> None:
    # close_trial drops only what open_trial made; open_trial takes only a trial role's name
    assert _pg_attack(pg_url, "SELECT trajcheck_trials.close_trial('trajcheck')") == (
        "close_trial: trajcheck was not made by open_trial")
    assert _pg_attack(pg_url, "SELECT trajcheck_trials.open_trial(:r, 'x')", {"r": 'Evil"; DROP'}).startswith(
        'open_trial: Evil"; DROP is not a trial role name')
    with SQLAlchemySandbox(pg_url, fixture_sql="CREATE TABLE t (x int);") as sb:
        # a live trial's role cannot be made again (with a password the caller chose)
        assert _pg_attack(pg_url, "SELECT trajcheck_trials.open_trial(:r, 'x')", {"r": sb.schema}) == (
            f'role "{sb.schema}" already exists')
        attrs = sb.execute("SELECT rolsuper, rolcreaterole, rolcreatedb, rolinherit, rolreplication, rolbypassrls "
                           "FROM pg_roles WHERE rolname = current_user")[0]
        assert set(attrs.values()) == {False}
        assert sb.execute("SELECT count(*) AS n FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member "
                          "WHERE r.rolname = current_user") == [{"n": 0}]
        assert _pg_error(sb, "SELECT trajcheck_trials.close_trial(current_user)").startswith(
            "permission denied for schema trajcheck_trials")


def test_postgres_fixture_and_tools_run_as_an_unprivileged_trial_role(pg_url: str, tmp_path: Path) -> None:
    with SQLAlchemySandbox(pg_url, fixture_sql="CREATE TABLE t (x int); INSERT INTO t VALUES (1);") as sb:
        who = sb.execute("SELECT current_user AS u, current_schema() AS s")[0]
        assert who == {"u": sb.schema, "s": sb.schema}
        assert "pg_execute_server_program" in _pg_error(sb, "COPY t FROM PROGRAM 'id'")
        assert "pg_write_server_files" in _pg_error(sb, f"COPY t TO '{tmp_path}/out.txt'")
        assert "permission denied for function pg_read_file" in _pg_error(sb, "SELECT pg_read_file('/etc/hostname')")
        assert "permission denied for schema public" in _pg_error(sb, "CREATE TABLE public.x (a int)")
        assert "must be superuser to create superusers" in _pg_error(sb, "CREATE ROLE evil SUPERUSER")
        with SQLAlchemySandbox(pg_url, fixture_sql="CREATE TABLE t (x int);") as other:
            assert f"permission denied for schema {sb.schema}" in _pg_error(other, f'SELECT * FROM "{sb.schema}".t')
            assert f"permission denied for schema {sb.schema}" in _pg_error(
                other, f'INSERT INTO "{sb.schema}".t VALUES (2)')
        assert sb.snapshot() == {"t": [{"x": 1}]}
        schema = sb.schema
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SandboxError, match="pg_execute_server_program"):
        SQLAlchemySandbox(pg_url, fixture_sql=f"COPY (SELECT 1) TO PROGRAM 'touch {tmp_path}/pwned'").open()
    assert list(tmp_path.iterdir()) == []
    import sqlalchemy as sa

    eng = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with eng.connect() as c:  # the trial's role and schema are gone
        assert c.exec_driver_sql(f"SELECT count(*) FROM pg_roles WHERE rolname = '{schema}'").scalar() == 0
        assert c.exec_driver_sql(f"SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'").scalar() == 0
    eng.dispose()
