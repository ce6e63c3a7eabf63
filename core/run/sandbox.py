"""Sandboxed databases for outcome checks: a fresh database per trial, tools, snapshots.

``SQLiteSandbox`` (standard library, the default) loads a case's ``initial_state`` SQL
fixture into a fresh database per trial, exposes the connection to the agent's tools and
snapshots every table to ``{table: [row dicts]}`` -- the shape ``metrics.final_state.state_diff``
and ``check_final_state`` read. ``SQLAlchemySandbox`` (the ``sql`` extra) does the same for
any SQLAlchemy URL, e.g. PostgreSQL, isolating each trial in a fresh schema.

Both are context managers with the same surface::

    with SQLiteSandbox("fixtures/tickets.sql") as sb:
        before = sb.snapshot()
        sb.execute("INSERT INTO tickets (title) VALUES (:t)", {"t": "laptop"})
        result = sb.call_tool(create_ticket, {"title": "x"}, name="create_ticket")
        after = sb.snapshot()

Tools get the database through ``sandbox.execute(sql, params)`` (named ``:param`` style works
on both back ends) or the raw ``sandbox.connection``. Statements run in autocommit mode;
``call_tool`` turns a raising tool into an error ``ToolResult`` (and rolls back an open
transaction) instead of crashing the run. Source: DESIGN.md ("sandbox": SQLite fixtures,
state snapshots, fault injection), seed 000 §4.1 (sandboxed tools on an isolated test
database reset to the initial fixture) and §2.6 (fault injection).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SandboxError, SecurityError
from ..model import ToolResult

Snapshot = dict[str, list[dict[str, Any]]]

__all__ = [
    "SQLAlchemySandbox",
    "SQLiteSandbox",
    "Snapshot",
    "SqlStatement",
    "call_tool",
    "open_sandbox",
    "resolve_fixture",
    "split_sql",
]


# ---------------------------------------------------------------------------------------
# fixture parsing


@dataclass(frozen=True)
class SqlStatement:
    """One statement of a fixture: its text (no trailing ``;``) and the 1-based line it starts on."""

    sql: str
    line: int


_DOLLAR_TAG = re.compile(r"\$[A-Za-z_0-9]*\$")


def split_sql(text: str) -> list[SqlStatement]:
    """Split SQL script text into statements at top-level ``;``.

    Quotes (``'...'``, ``"..."``, backticks, ``[...]``), ``--`` and ``/* */`` comments and
    PostgreSQL dollar quoting (``$tag$...$tag$``) are respected. Each statement records the
    line of its first non-blank, non-comment character, so errors can name it. Empty
    statements (comments only) are dropped. SQLite trigger bodies (``BEGIN ... END;``) are
    re-joined by ``SQLiteSandbox`` with ``sqlite3.complete_statement``.
    """
    out: list[SqlStatement] = []
    i, n = 0, len(text)
    line = 1
    buf_start = 0
    first_line: int | None = None

    def flush(end: int) -> None:
        nonlocal first_line
        chunk = text[buf_start:end].strip()
        if first_line is not None and chunk:
            out.append(SqlStatement(chunk, first_line))
        first_line = None

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        if first_line is None:
            first_line = line
            buf_start = i
        if c == ";":
            flush(i)
            buf_start = i + 1
            i += 1
            continue
        if c in "'\"`[":
            close = "]" if c == "[" else c
            j = i + 1
            while j < n:
                if text[j] == close:
                    if close != "]" and j + 1 < n and text[j + 1] == close:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            j = min(j + 1, n)
            line += text.count("\n", i, j)
            i = j
            continue
        if c == "$":
            m = _DOLLAR_TAG.match(text, i)
            if m:
                tag = m.group(0)
                j = text.find(tag, m.end())
                j = n if j == -1 else j + len(tag)
                line += text.count("\n", i, j)
                i = j
                continue
        i += 1
    flush(n)
    return out


def resolve_fixture(fixture: str | os.PathLike[str] | None,
                    base_dir: str | os.PathLike[str] | None = None,
                    allowed_roots: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """The fixture's path: absolute as given, else relative to ``base_dir`` (e.g. the
    dataset file's folder) when given, else to the working directory.

    Confinement (README "Security model"): when ``base_dir`` is given -- the fixture was
    named by a dataset row -- the path, with symlinks resolved, must lie inside ``base_dir``
    or one of ``allowed_roots`` (folders the user allows, ``--fixture-root``); otherwise
    SecurityError, whose message names the path but shows nothing of the file. With no
    ``base_dir`` (a path the caller's own code chose) any path is accepted.

    Raises SandboxError naming the path when the file does not exist.
    """
    if fixture is None:
        return None
    p = Path(fixture)
    if not p.is_absolute() and base_dir is not None:
        p = Path(base_dir) / p
    if base_dir is not None:
        real = p.resolve()
        roots = [Path(base_dir).resolve(), *(Path(r).resolve() for r in allowed_roots)]
        if not any(real == r or real.is_relative_to(r) for r in roots):
            raise SecurityError(
                f"fixture {str(fixture)!r} is outside the dataset's folder ({roots[0]})"
                + (f" and the allowed roots ({', '.join(map(str, roots[1:]))})" if roots[1:] else "")
                + "; refused (allow its folder with --fixture-root / fixture_roots)")
    if not p.is_file():
        raise SandboxError(f"fixture {str(fixture)!r} not found (looked at {p})")
    return p


def _read_fixture(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SandboxError(f"fixture {path}: cannot be read ({e})") from e


def _fixture_source(fixture: Path | None, fixture_sql: str | None) -> tuple[str, str] | None:
    """The fixture SQL of a sandbox and the name its errors give it: ``(file text, path)``,
    ``(fixture_sql, "<fixture_sql>")``, or None when the sandbox has no fixture. Shared by
    both back ends; SandboxError when the file cannot be read."""
    if fixture is not None:
        return _read_fixture(fixture), str(fixture)
    if fixture_sql is not None:
        return fixture_sql, "<fixture_sql>"
    return None


# ---------------------------------------------------------------------------------------
# values and ordering


def _norm_value(v: Any) -> Any:
    """Database values as plain JSON-like scalars (same on every back end).

    Decimal -> int when integral else float; date/time -> ISO string; UUID -> str;
    memoryview/bytearray -> bytes. Everything else unchanged.
    """
    if isinstance(v, decimal.Decimal):
        if v.is_finite() and v == v.to_integral_value():
            return int(v)
        return float(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (memoryview, bytearray)):
        return bytes(v)
    return v


def _sort_key(v: Any) -> tuple[Any, ...]:
    """A total order over mixed scalar values: None < numbers < text < bytes < other."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v):
            return (1, float("inf"), 1)
        return (1, v, 0)
    if isinstance(v, str):
        return (2, v)
    if isinstance(v, bytes):
        return (3, v)
    return (4, repr(v))


def _row_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(_sort_key(v) for v in row.values())


def _sorted_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=_row_key)


# ---------------------------------------------------------------------------------------
# tool calls


def call_tool(fn: Callable[..., Any], args: Mapping[str, Any] | None = None, *,
              name: str | None = None, call_id: str | None = None,
              on_error: Callable[[], None] | None = None) -> ToolResult:
    """Run ``fn(**args)`` and wrap the outcome in a ``ToolResult``; never raises.

    A normal return gives ``ToolResult(output=value, is_error=False)``. Any ``Exception``
    (including injected faults from ``trajcheck.run.faults``) gives ``is_error=True`` with
    ``error = "<ExceptionType>: <message>"`` (an injected fault's own message) and
    ``output`` the fault's payload when it has one, else None; ``on_error`` (e.g. a
    rollback) is run first. ``args`` None means no arguments. ``name`` defaults to
    ``fn.__name__``. KeyboardInterrupt/SystemExit are not caught.
    """
    tool_name = name or getattr(fn, "__name__", None) or "tool"
    try:
        out = fn(**dict(args or {}))
    except Exception as e:  # a raising tool is an error result, not a crash
        if on_error is not None:
            try:
                on_error()
            except Exception:
                pass
        payload = getattr(e, "payload", None)
        text = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
        return ToolResult(call_id=call_id, name=tool_name, output=payload, is_error=True,
                          error=str(text))
    return ToolResult(call_id=call_id, name=tool_name, output=out, is_error=False)


# ---------------------------------------------------------------------------------------
# SQLite


class SQLiteSandbox:
    """A fresh SQLite database per trial (standard library ``sqlite3``).

    ``fixture``: path to a ``.sql`` file (a case's ``initial_state``), resolved against
    ``base_dir`` when relative; None gives an empty database. ``fixture_sql``: the same as
    text instead of a file (its errors name ``<fixture_sql>``). ``path``: a database file to
    create (it must not exist, so no trial sees another's writes); None (default) is an
    in-memory database. Statements run in autocommit mode (``isolation_level=None``); a
    tool may still ``BEGIN``/``COMMIT`` explicitly.

    Use as a context manager (``__enter__`` opens and loads, ``__exit__`` closes and
    deletes a file it created) or call ``open()``/``close()``. Raises SandboxError when the
    fixture is missing or a statement fails, naming the file and the statement's line.
    """

    backend = "sqlite"

    def __init__(self, fixture: str | os.PathLike[str] | None = None, *,
                 fixture_sql: str | None = None, path: str | os.PathLike[str] | None = None,
                 base_dir: str | os.PathLike[str] | None = None,
                 fixture_roots: Sequence[str | os.PathLike[str]] = ()) -> None:
        if fixture is not None and fixture_sql is not None:
            raise SandboxError("give either a fixture path or fixture_sql, not both")
        self.fixture = resolve_fixture(fixture, base_dir, fixture_roots)
        self.fixture_sql = fixture_sql
        self.path = Path(path) if path is not None else None
        self._conn: sqlite3.Connection | None = None

    # lifecycle
    def open(self) -> SQLiteSandbox:
        """Create the database and load the fixture; returns self."""
        if self._conn is not None:
            raise SandboxError("sandbox is already open")
        if self.path is not None and self.path.exists():
            raise SandboxError(f"sandbox database {self.path} already exists; a trial needs a fresh one")
        conn = sqlite3.connect(str(self.path) if self.path else ":memory:", isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.set_authorizer(_sqlite_authorizer)
        self._conn = conn
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Close the connection (and delete the database file this sandbox created)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            if self.path is not None and self.path.exists():
                self.path.unlink()

    def __enter__(self) -> SQLiteSandbox:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self) -> None:
        src = _fixture_source(self.fixture, self.fixture_sql)
        if src is None:
            return
        text, where = src
        conn = self.connection
        pending: list[SqlStatement] = []
        for st in split_sql(text):
            pending.append(st)
            sql = ";\n".join(s.sql for s in pending) + ";"
            if not sqlite3.complete_statement(sql):  # e.g. inside a trigger's BEGIN ... END
                continue
            start = pending[0].line
            pending = []
            try:
                conn.execute(sql)
            except sqlite3.Error as e:
                raise SandboxError(
                    f"fixture {where}, line {start}: {type(e).__name__}: {_no_echo(str(e))}") from e
        if pending:
            raise SandboxError(f"fixture {where}, line {pending[0].line}: incomplete statement")

    # access for tools
    @property
    def connection(self) -> sqlite3.Connection:
        """The open ``sqlite3.Connection`` (rows are ``sqlite3.Row``); SandboxError if closed."""
        if self._conn is None:
            raise SandboxError("sandbox is not open (use it as a context manager or call open())")
        return self._conn

    def execute(self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None
                ) -> list[dict[str, Any]]:
        """Run one statement and return its rows as dicts (``[]`` when it returns none).

        ``params``: a mapping for ``:name`` placeholders or a sequence for ``?``. Database
        errors propagate as ``sqlite3.Error`` so a tool can handle them; ``call_tool``
        turns them into error results.
        """
        cur = self.connection.execute(sql, params if params is not None else ())
        if cur.description is None:
            return []
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def call_tool(self, fn: Callable[..., Any], args: Mapping[str, Any] | None = None, *,
                  name: str | None = None, call_id: str | None = None) -> ToolResult:
        """``trajcheck.run.sandbox.call_tool`` that also rolls back a transaction the tool left open."""
        return call_tool(fn, args, name=name, call_id=call_id, on_error=self._rollback)

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.rollback()

    # state
    def tables(self) -> list[str]:
        """User table names, sorted (``sqlite_*`` internal tables left out)."""
        rows = self.connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        ).fetchall()
        return sorted(r[0] for r in rows)

    def snapshot(self) -> Snapshot:
        """Every table as ``{table: [row dict]}``: tables by name, rows in a deterministic
        order (sorted by their values column by column; None < numbers < text < bytes),
        keys in column order. Values are as SQLite returns them (int, float, str, bytes,
        None; SQLite stores NaN as NULL). Raises SandboxError if a table cannot be read."""
        snap: Snapshot = {}
        for t in self.tables():
            try:
                rows = self.execute(f'SELECT * FROM "{t.replace(chr(34), chr(34) * 2)}"')
            except sqlite3.Error as e:
                raise SandboxError(f"snapshot: cannot read table {t!r}: {e}") from e
            snap[t] = _sorted_rows([{k: _norm_value(v) for k, v in r.items()} for r in rows])
        return snap


_REFUSED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})
_REFUSED_PRAGMAS = frozenset({"writable_schema", "temp_store_directory", "data_store_directory",
                              "trusted_schema"})


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, db: str | None,
                       trigger: str | None) -> int:
    """SQLite authorizer of every sandbox connection (fixtures and tools alike): ``ATTACH``
    (which ``VACUUM INTO`` uses too) would read or write database files anywhere, extension
    loading and file functions would run or read code and files, and a few pragmas change
    where files go or let the schema be forged; all are refused ("not authorized"), the
    rest of SQL is allowed."""
    if action == sqlite3.SQLITE_ATTACH:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _REFUSED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _REFUSED_PRAGMAS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _authorize_sqlite_dbapi(dbapi_conn: Any, _record: Any) -> None:
    """SQLAlchemy ``connect`` hook of a ``sqlite://`` sandbox: its DB-API connection gets
    ``_sqlite_authorizer``; a driver without ``set_authorizer`` cannot be confined and is
    refused."""
    setter = getattr(dbapi_conn, "set_authorizer", None)
    if not callable(setter):
        raise SandboxError(f"SQLAlchemySandbox: the SQLite driver {type(dbapi_conn).__name__} has no "
                           "set_authorizer, so ATTACH and extensions could not be refused; use the "
                           "standard sqlite3 driver (sqlite://)")
    setter(_sqlite_authorizer)


def _no_echo(msg: str) -> str:
    """A database error message without the file text it may quote (SQLite's ``near "...":``
    and PostgreSQL's ``LINE n: ...`` context), so a fixture's content never reaches a report."""
    msg = re.sub(r'near "[^"]*":\s*', "", msg)
    return msg.split("\n", 1)[0].strip()


# ---------------------------------------------------------------------------------------
# SQLAlchemy (any URL; PostgreSQL tested)


class SQLAlchemySandbox:
    """A fresh, isolated database namespace per trial on any SQLAlchemy URL (``sql`` extra).

    ``url``: e.g. ``postgresql+psycopg://user@127.0.0.1:5432/db`` (a bare ``postgresql://``
    URL is given the psycopg 3 driver). Isolation: each sandbox creates its own schema
    ``trajcheck_<random hex>`` (``schema_prefix`` changes the prefix), points the
    connection's ``search_path`` at it, loads the fixture there and drops the schema
    (``CASCADE``) on close, so a trial never sees another trial's writes. An in-memory
    SQLite URL (``sqlite://``) is isolated by being a new database per sandbox; other
    dialects without schema support raise SandboxError. Unqualified table names in the
    fixture and in tools therefore land in the trial's schema.

    Same surface as ``SQLiteSandbox``: ``connection`` (a SQLAlchemy ``Connection`` in
    autocommit mode), ``execute(sql, params)`` with ``:name`` placeholders, ``call_tool``,
    ``tables()``, ``snapshot()``. Snapshot values are normalised to plain scalars (Decimal
    -> int/float, dates -> ISO strings, UUID -> str) so diffs agree with SQLite's.
    Raises SandboxError when SQLAlchemy is missing, the server is unreachable, or a
    fixture statement fails (naming the file and line).
    """

    backend = "sqlalchemy"

    def __init__(self, url: str, fixture: str | os.PathLike[str] | None = None, *,
                 fixture_sql: str | None = None, base_dir: str | os.PathLike[str] | None = None,
                 schema_prefix: str = "trajcheck_",
                 fixture_roots: Sequence[str | os.PathLike[str]] = ()) -> None:
        if fixture is not None and fixture_sql is not None:
            raise SandboxError("give either a fixture path or fixture_sql, not both")
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema_prefix):
            raise SandboxError(f"schema_prefix {schema_prefix!r} must be lowercase letters, digits, _")
        self.url = url
        self.fixture = resolve_fixture(fixture, base_dir, fixture_roots)
        self.fixture_sql = fixture_sql
        self.schema_prefix = schema_prefix
        self.schema: str | None = None
        self._engine: Any = None
        self._conn: Any = None
        self._admin: Any = None  # PostgreSQL: the connecting role's connection, when trials get a role
        self._admin_engine: Any = None
        self._role: str | None = None
        self._role_by_function = False  # made by trajcheck_trials.open_trial (dropped by close_trial)

    def open(self) -> SQLAlchemySandbox:
        """Connect, create the trial's schema, load the fixture; returns self."""
        try:
            import sqlalchemy as sa
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise SandboxError("SQLAlchemySandbox needs the 'sql' extra: pip install 'trajcheck[sql]'") from e
        if self._conn is not None:
            raise SandboxError("sandbox is already open")
        url = sa.engine.make_url(self.url)
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        dialect = url.get_backend_name()
        kwargs: dict[str, Any] = {}
        if dialect == "sqlite":
            if url.database not in (None, "", ":memory:"):
                raise SandboxError(f"SQLAlchemySandbox: use SQLiteSandbox for a SQLite file URL ({self.url})")
            kwargs["poolclass"] = sa.pool.StaticPool
        try:
            self._engine = sa.create_engine(url, isolation_level="AUTOCOMMIT", **kwargs)
            if dialect == "sqlite":
                # the same authorizer as SQLiteSandbox's: no ATTACH / VACUUM INTO, no extensions
                sa.event.listen(self._engine, "connect", _authorize_sqlite_dbapi)
            self._conn = self._engine.connect()
        except Exception as e:
            self._dispose()
            raise SandboxError(f"cannot connect to {url.render_as_string(hide_password=True)}: {e}") from e
        try:
            if dialect != "sqlite":
                self.schema = self.schema_prefix + uuid.uuid4().hex[:16]
                if dialect == "postgresql":
                    self._open_pg_trial(sa, url)
                else:
                    self._conn.exec_driver_sql(f'CREATE SCHEMA "{self.schema}"')
                if dialect == "postgresql":
                    self._conn.exec_driver_sql(f'SET search_path TO "{self.schema}"')
                elif dialect in ("mysql", "mariadb"):
                    self._conn.exec_driver_sql(f"USE `{self.schema}`")
                else:
                    raise SandboxError(f"SQLAlchemySandbox: no per-trial isolation for dialect {dialect!r}")
            self._load()
        except BaseException:
            self.close()
            raise
        return self

    def _open_pg_trial(self, sa: Any, url: Any) -> None:
        """PostgreSQL confinement (docs/security.md): the trial gets a fresh login role of its
        own -- not a superuser, no CREATEDB/CREATEROLE, member of nothing -- that owns the
        trial's schema, and the fixture and the tools run on a connection as that role. So a
        fixture or an agent's SQL cannot run ``COPY ... PROGRAM``, read or write server files,
        or touch another trial's schema. The connecting role keeps only the admin connection,
        used to make and drop the trial role and schema: through the functions
        ``trajcheck_trials.open_trial`` / ``close_trial`` where the database has them
        (``scripts/start_postgres.sh`` installs them and hands out a role without CREATEROLE,
        which before PostgreSQL 16 equals superuser), else directly when the connecting role
        may create roles. Otherwise the trial runs as the connecting role in its own schema
        (isolated from other trials' data, but not a privilege boundary)."""
        import secrets

        admin = self._conn
        row = admin.exec_driver_sql(
            "SELECT rolsuper OR rolcreaterole, "
            "to_regprocedure('trajcheck_trials.open_trial(text,text)') IS NOT NULL "
            "AND has_function_privilege('trajcheck_trials.open_trial(text,text)', 'EXECUTE') "
            "AND has_function_privilege('trajcheck_trials.close_trial(text)', 'EXECUTE') "
            "FROM pg_roles WHERE rolname = current_user").first()
        may_create, has_functions = (bool(row[0]), bool(row[1])) if row else (False, False)
        role, pw = self.schema, secrets.token_hex(16)
        if has_functions:
            admin.execute(sa.text("SELECT trajcheck_trials.open_trial(:r, :p)"), {"r": role, "p": pw})
            self._role_by_function = True
        elif may_create:
            admin.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN PASSWORD \'{pw}\' NOSUPERUSER NOCREATEDB '
                                  "NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 2")
            admin.exec_driver_sql(f'GRANT "{role}" TO current_user')
            admin.exec_driver_sql(f'CREATE SCHEMA "{self.schema}" AUTHORIZATION "{role}"')
            admin.exec_driver_sql(f'ALTER ROLE "{role}" SET search_path TO "{self.schema}"')
        else:
            admin.exec_driver_sql(f'CREATE SCHEMA "{self.schema}"')
            return
        self._role = role
        self._admin, self._admin_engine = admin, self._engine
        self._engine = sa.create_engine(url.set(username=role, password=pw), isolation_level="AUTOCOMMIT")
        try:
            self._conn = self._engine.connect()
        except Exception as e:
            raise SandboxError(f"cannot connect as the trial role {role}: {e}") from e

    def _load(self) -> None:
        src = _fixture_source(self.fixture, self.fixture_sql)
        if src is None:
            return
        text, where = src
        for st in split_sql(text):
            try:
                self._conn.exec_driver_sql(st.sql)
            except Exception as e:
                msg = _no_echo(str(getattr(e, "orig", None) or e))
                raise SandboxError(f"fixture {where}, line {st.line}: {msg}") from e

    def close(self) -> None:
        """Drop the trial's schema (and its role) and close the connections."""
        if self._admin is not None:  # PostgreSQL with a trial role
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._dispose()
            self._conn, self._engine = self._admin, self._admin_engine
            self._admin = self._admin_engine = None
        if self._conn is not None:
            try:
                if self._role is not None and self._role_by_function:
                    import sqlalchemy as sa

                    self._conn.execute(sa.text("SELECT trajcheck_trials.close_trial(:r)"), {"r": self._role})
                else:
                    if self.schema is not None:
                        self._conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
                    if self._role is not None:
                        self._conn.exec_driver_sql(f'DROP OWNED BY "{self._role}"')
                        self._conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{self._role}"')
            except Exception:
                pass
            finally:
                self._role, self._role_by_function = None, False
                self._conn.close()
                self._conn = None
        self._dispose()

    def _dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> SQLAlchemySandbox:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> Any:
        """The open SQLAlchemy ``Connection`` (autocommit); SandboxError if closed."""
        if self._conn is None:
            raise SandboxError("sandbox is not open (use it as a context manager or call open())")
        return self._conn

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one statement (``:name`` placeholders) and return its rows as dicts."""
        import sqlalchemy as sa

        res = self.connection.execute(sa.text(sql), dict(params or {}))
        if not res.returns_rows:
            return []
        return [dict(r._mapping) for r in res]

    def call_tool(self, fn: Callable[..., Any], args: Mapping[str, Any] | None = None, *,
                  name: str | None = None, call_id: str | None = None) -> ToolResult:
        """``trajcheck.run.sandbox.call_tool`` that rolls back a transaction the tool left open."""
        return call_tool(fn, args, name=name, call_id=call_id, on_error=self._rollback)

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction():
            self._conn.rollback()

    def tables(self) -> list[str]:
        """Table names in the trial's schema, sorted."""
        import sqlalchemy as sa

        return sorted(sa.inspect(self.connection).get_table_names(schema=self.schema))

    def snapshot(self) -> Snapshot:
        """Every table as ``{table: [row dict]}``, ordered like ``SQLiteSandbox.snapshot``,
        values normalised to plain scalars. Raises SandboxError if a table cannot be read."""
        import sqlalchemy as sa

        snap: Snapshot = {}
        for t in self.tables():
            table = sa.Table(t, sa.MetaData(), schema=self.schema, autoload_with=self.connection)
            try:
                rows = [dict(r._mapping) for r in self.connection.execute(sa.select(table))]
            except Exception as e:
                raise SandboxError(f"snapshot: cannot read table {t!r}: {e}") from e
            snap[t] = _sorted_rows([{k: _norm_value(v) for k, v in r.items()} for r in rows])
        return snap


def open_sandbox(fixture: str | os.PathLike[str] | None = None, *, url: str | None = None,
                 base_dir: str | os.PathLike[str] | None = None,
                 fixture_roots: Sequence[str | os.PathLike[str]] = ()) -> SQLiteSandbox | SQLAlchemySandbox:
    """A sandbox for one trial (not yet opened; use it with ``with``).

    ``url`` None gives an in-memory ``SQLiteSandbox``; otherwise a ``SQLAlchemySandbox`` on
    ``url``. ``fixture`` is usually ``case.initial_state`` and ``base_dir`` the dataset's
    folder, which (with ``fixture_roots``) confines where fixtures may come from
    (``resolve_fixture``). Raises SandboxError for a missing fixture file, SecurityError for
    one outside the allowed folders.
    """
    if url is None:
        return SQLiteSandbox(fixture, base_dir=base_dir, fixture_roots=fixture_roots)
    return SQLAlchemySandbox(url, fixture, base_dir=base_dir, fixture_roots=fixture_roots)
