"""Connections to the knowledge store and the schema migration runner.

``DATABASE_URL`` points at any Postgres >= 15 with pgvector >= 0.7 (``halfvec``; 0.8 adds the
iterative index scans filtered searches use; ``pgvector_check`` refuses older ones). When it is
unset, an embedded PostgreSQL 18 + pgvector 0.8 (see ``embedded``) is started in a data
directory of the project's own, so a fresh machine needs nothing but pip. Several processes can
share that data directory.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from knowledge_assets.core.database import pgvector_check

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SQL_DIR = PROJECT_ROOT / "sql"
DEFAULT_DATA_DIR = PROJECT_ROOT / ".data"
_MIGRATION_RE = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_REPEATABLE_RE = re.compile(r"^R__[a-z0-9_]+\.sql$")
_servers: dict[Path, Any] = {}
_migrated: set[str] = set()


class MigrationError(RuntimeError):
    """An applied migration was edited, the migration files are inconsistent, or the database's
    pgvector cannot hold the store (:mod:`pgvector_check`)."""


def data_dir() -> Path:
    """The directory holding the embedded Postgres (``KA_DATA_DIR``, default ``.data/``)."""
    return Path(os.environ.get("KA_DATA_DIR") or DEFAULT_DATA_DIR).resolve()


def embedded_url(pgdata: Path | None = None) -> str:
    """Start (or attach to) the embedded Postgres and return its libpq URI."""
    from knowledge_assets.core.database import embedded

    path = (pgdata or data_dir() / "pg").resolve()
    if path not in _servers:
        _servers[path] = embedded.start(path)
    uri: str = _servers[path].get_uri()
    return uri


class DatabaseUrlError(ValueError):
    """``DATABASE_URL`` (or a role's URL, ``variable``) is not a connection string libpq can
    read; the message never quotes it (it may hold a password)."""

    def __init__(self, message: str, variable: str = "DATABASE_URL") -> None:
        super().__init__(message)
        self.variable = variable


def store_label() -> str:
    """Which store the URL resolves to, for messages: ``DATABASE_URL`` or the embedded store."""
    return "DATABASE_URL" if os.environ.get("DATABASE_URL") else "the embedded store"


def resolve_url(database_url: str | None = None) -> str:
    """The libpq URL to use: the argument, else ``DATABASE_URL``, else the embedded server."""
    url = database_url or os.environ.get("DATABASE_URL")
    if not url:
        return embedded_url()
    check_url(url)
    return url


def check_url(url: str, name: str = "DATABASE_URL") -> None:
    """Raise :class:`DatabaseUrlError` unless ``url`` (the value of the variable ``name``) is a
    postgresql:// URL or a libpq conninfo."""
    scheme = url.partition("://")[0] if "://" in url else None
    if scheme is not None and scheme.lower() not in ("postgresql", "postgres"):
        raise DatabaseUrlError(
            f"{name} is a {scheme}:// URL: it needs postgresql://user:password@host:5432/db", name
        )
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        # libpq's message quotes the string, or the part it stopped at: either may be a password.
        first = str(exc).strip().splitlines()[0]
        reason = re.sub(r'"([^"]*)"', lambda m: m[0] if len(m[1]) < 3 else '"…"', first)
        raise DatabaseUrlError(
            f"{name} cannot be read ({reason}): it needs postgresql://user:password@host:5432/db",
            name,
        ) from None


def store_url(database_url: str | None = None) -> str:
    """:func:`resolve_url`, with the migrations applied the first time this process asks."""
    url = resolve_url(database_url)
    if url not in _migrated:
        migrate(url)
        _migrated.add(url)
    return url


def dagster_storage_url(url: str) -> str:
    """The same database as a SQLAlchemy URL for Dagster's storage.

    SQLAlchemy 2.1 picks psycopg 3 for ``postgresql://``, and dagster-postgres then fails on
    ``NOTIFY run_events, $1``; psycopg2 is the driver dagster-postgres is written for.
    """
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    # A keyword/value conninfo ("host=... dbname=..."): rebuild it as a URL, socket dirs included.
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        # The parser's message quotes the string, which may hold a password: say less.
        raise ValueError("DATABASE_URL is neither a postgresql:// URL nor a conninfo") from None
    user = quote(str(info.pop("user", "")), safe="")
    password = info.pop("password", None)
    auth = f"{user}:{quote(str(password), safe='')}@" if password else (f"{user}@" if user else "")
    dbname = quote(str(info.pop("dbname", "")), safe="")
    query = urlencode({k: str(v) for k, v in info.items()})
    return f"postgresql+psycopg2://{auth}/{dbname}" + (f"?{query}" if query else "")


# Opens another connection to the same store (e.g. ``PostgresResource.connect``), for work that
# runs beside a connection's own: a second index build, or watching a long one.
Connect = Callable[[], AbstractContextManager[psycopg.Connection]]


@contextmanager
def connect(
    url: str, *, autocommit: bool = False, read_only: bool = False,
    application_name: str | None = None,
) -> Iterator[psycopg.Connection]:  # fmt: skip
    """Open a connection with pgvector types registered (named ``application_name`` in
    ``pg_stat_activity``, when given).

    Like psycopg's own context manager, a clean exit commits and an exception rolls back.
    """
    named: dict[str, Any] = {"application_name": application_name[:63]} if application_name else {}
    with psycopg.connect(url, autocommit=autocommit, **named) as conn:
        configure(conn, read_only=read_only)
        yield conn


# Memory for a session's temporary tables (allocated only as it uses them). A chunk write stages
# a few thousand rows at a time, some 20 MB: in Postgres' default 8 MB, staging 80,000 chunks
# took 3.1 s of server CPU, 2.5 s in this. Postgres only takes the setting before a session's
# first temporary table, hence here.
TEMP_BUFFERS = "64MB"


def configure(conn: psycopg.Connection, *, read_only: bool = False) -> None:
    """Make a fresh session read-only if asked, give it room for temporary tables, and register
    pgvector's types once it exists."""
    if read_only:
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    row = conn.execute(
        "SELECT set_config('temp_buffers', %s, false),"
        " EXISTS (SELECT 1 FROM pg_type WHERE typname = 'vector')",
        (TEMP_BUFFERS,),
    ).fetchone()
    if not conn.autocommit:
        conn.commit()
    if row and row[1]:
        register_vector(conn)


def vacuum_analyze(conn: psycopg.Connection, *tables: str) -> None:
    """``VACUUM (ANALYZE)`` these tables (``schema.name``) after a bulk load. Commits.

    ANALYZE alone gives the planner the new row counts, but the rows' visibility is still
    unrecorded: until a VACUUM, every search checks each row it reads against the commit log
    and marks it, and the first searches after a first build ran 6-20% slower. Only the tables
    themselves are vacuumed: their indexes (an HNSW graph is costly to clean) and out-of-line
    values, which searches reach through rows already checked, are left to autovacuum. A role
    that may not maintain a table leaves it to autovacuum too (Postgres only warns).
    """
    conn.commit()
    autocommit = conn.autocommit
    conn.autocommit = True  # VACUUM cannot run inside a transaction
    try:
        names = sql.SQL(", ").join(sql.Identifier(*t.split(".")) for t in tables)
        conn.execute(
            sql.SQL("VACUUM (ANALYZE, INDEX_CLEANUP OFF, PROCESS_TOAST FALSE) {}").format(names)
        )
    finally:
        conn.autocommit = autocommit


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def load_migrations(sql_dir: Path = SQL_DIR) -> tuple[list[Migration], list[Migration]]:
    """Numbered (append-only) migrations and repeatable ``R__`` files, each in name order."""
    numbered, repeatable = [], []
    for path in sorted(sql_dir.glob("*.sql")):
        migration = Migration(path.name, path.read_text(encoding="utf-8"))
        if _MIGRATION_RE.match(path.name):
            numbered.append(migration)
        elif _REPEATABLE_RE.match(path.name):
            repeatable.append(migration)
        else:
            raise MigrationError(f"{path.name}: expected NNN_name.sql or R__name.sql")
    return numbered, repeatable


# Roles are shared by every database of a server. Two databases migrated at once (two stores on
# one server, a test suite's workers) configure the same roles (sql/002, sql/008), and Postgres
# fails the later of two concurrent updates of one catalog row instead of waiting for it.
_CONCURRENT_CATALOG_UPDATE = "tuple concurrently updated"
MIGRATE_ATTEMPTS = 5


def migrate(url: str, sql_dir: Path = SQL_DIR) -> list[str]:
    """Apply new migrations, refuse edited ones, re-run repeatable files; return what was applied.
    A database whose pgvector is missing or too old is refused before anything is applied.

    An advisory lock serialises concurrent callers on one database (a sensor and a run starting
    together). The migrations run in one transaction, so one that lost a race for a role shared
    with another database of the server (``tuple concurrently updated``) is run again from the
    start, up to ``MIGRATE_ATTEMPTS`` times.
    """
    for attempt in range(1, MIGRATE_ATTEMPTS + 1):
        try:
            return _migrate_once(url, sql_dir)
        except psycopg.errors.InternalError_ as exc:
            if _CONCURRENT_CATALOG_UPDATE not in str(exc) or attempt == MIGRATE_ATTEMPTS:
                raise
            time.sleep(0.05 * attempt * (1 + random.random()))
    raise AssertionError("unreachable: the last attempt returns or raises")


# How long a command waits quietly for another process's migrations (two processes starting
# together take turns in well under a second) before it says what it waits for.
QUIET_MIGRATION_WAIT_S = 2.0


def _migration_lock(conn: psycopg.Connection) -> None:
    """Take the migrations' lock for this transaction; when another process holds it for long
    (an upgrade or a long migration of a large store), say so on stderr rather than hang unsaid."""
    lock = "SELECT pg_try_advisory_xact_lock(hashtext('knowledge_assets.migrate'))"
    deadline = time.monotonic() + QUIET_MIGRATION_WAIT_S
    while time.monotonic() < deadline:
        row = conn.execute(lock).fetchone()
        if row and row[0]:
            return
        time.sleep(0.1)
    print(
        "waiting for another process to finish migrating the knowledge store…",
        file=sys.stderr,
        flush=True,
    )
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('knowledge_assets.migrate'))")


def _migrate_once(url: str, sql_dir: Path) -> list[str]:
    numbered, repeatable = load_migrations(sql_dir)
    applied: list[str] = []
    with connect(url, autocommit=True) as conn, conn.transaction():
        _migration_lock(conn)
        if (reason := pgvector_check.check(conn)) is not None:
            raise MigrationError(reason)
        conn.execute("CREATE SCHEMA IF NOT EXISTS meta")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS meta.migrations (name text PRIMARY KEY,"
            " sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = dict(conn.execute("SELECT name, sha256 FROM meta.migrations").fetchall())
        for migration in numbered:
            if migration.name in done:
                if done[migration.name] != migration.sha256:
                    raise MigrationError(
                        f"{migration.name} was edited after it was applied; migrations are "
                        "append-only: add a new NNN_name.sql instead"
                    )
                continue
            conn.execute(migration.sql.encode("utf-8"))
            conn.execute(
                "INSERT INTO meta.migrations (name, sha256) VALUES (%s, %s)",
                (migration.name, migration.sha256),
            )
            applied.append(migration.name)
        for migration in repeatable:
            if done.get(migration.name) == migration.sha256:
                continue
            conn.execute(migration.sql.encode("utf-8"))
            conn.execute(
                "INSERT INTO meta.migrations (name, sha256) VALUES (%s, %s) ON CONFLICT (name)"
                " DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()",
                (migration.name, migration.sha256),
            )
            applied.append(migration.name)
    return applied
