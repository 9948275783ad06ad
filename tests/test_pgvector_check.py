"""A database whose pgvector cannot hold the store is refused, before any migration, with one
line that names the version found and what to run."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from knowledge_assets.core.database import db, pgvector_check


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("0.8.1", (0, 8)), ("0.10.0", (0, 10)), ("1.0", (1, 0)), ("dev", None), (None, None)],
)
def test_versions_compare_by_number(text: str | None, parsed: tuple[int, int] | None) -> None:
    assert pgvector_check.parse(text) == parsed


@pytest.mark.parametrize(
    ("installed", "offered", "creator"),
    [
        (None, "0.7.0", None),
        (None, "0.8.5", None),
        ("0.7.4", "0.7.4", None),
        ("0.8.5", "0.8.5", ("notes_user", "notes")),  # created: who may create it no longer matters
        ("0.10.1", None, None),
    ],
)
def test_pgvector_from_0_7_holds_the_store(
    installed: str | None, offered: str | None, creator: tuple[str, str] | None
) -> None:
    assert pgvector_check.problem(installed, offered, creator=creator) is None


@pytest.mark.parametrize(
    ("installed", "offered", "says"),
    [
        (None, None, ["has no pgvector", "install it on the server", "DATABASE_URL"]),
        (None, "0.6.0", ["offers pgvector 0.6.0", "0.7 or later", "install a newer one"]),
        ("0.6.2", "0.8.5", ["has pgvector 0.6.2", "offers 0.8.5", "ALTER EXTENSION vector UPDATE"]),
        ("0.6.2", "0.6.2", ["has pgvector 0.6.2", "install a newer one", "ALTER EXTENSION"]),
        ("0.5.1", None, ["has pgvector 0.5.1", "install a newer one", "ALTER EXTENSION"]),
    ],
)
def test_an_older_or_missing_pgvector_gets_one_line_with_the_fix(
    installed: str | None, offered: str | None, says: list[str]
) -> None:
    reason = pgvector_check.problem(installed, offered)
    assert reason is not None and "\n" not in reason
    assert all(part in reason for part in says), reason


def test_a_role_that_may_not_create_pgvector_is_told_who_must() -> None:
    reason = pgvector_check.problem(None, "0.8.0", creator=("ops@example", "notes"))
    assert reason is not None and "\n" not in reason
    for part in ("role ops@example may not create it", "superuser", "CREATE EXTENSION vector;"):
        assert part in reason, reason
    assert reason.endswith("in notes, then run again")


def _migrations_table(url: str) -> object:
    with db.connect(url) as conn:
        row = conn.execute("SELECT to_regclass('meta.migrations')").fetchone()
    return row[0] if row else None


def test_a_blank_database_on_a_server_with_too_old_a_pgvector_is_left_untouched(
    blank_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test server's pgvector, held against a minimum above it: nothing is created."""
    monkeypatch.setattr(pgvector_check, "MIN_VERSION", (99, 0))
    with pytest.raises(db.MigrationError, match=r"offers pgvector \d+\.\d+.*99\.0 or later"):
        db.migrate(blank_db_url)
    assert _migrations_table(blank_db_url) is None
    with db.connect(blank_db_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM pg_extension WHERE extname = 'vector'"
        ).fetchone() == (0,)


def test_a_store_whose_pgvector_is_too_old_is_refused_before_new_migrations(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pgvector_check, "MIN_VERSION", (99, 0))
    with pytest.raises(db.MigrationError, match=r"this database has pgvector \d+\.\d+"):
        db.migrate(db_url)
    monkeypatch.undo()
    assert db.migrate(db_url) == []  # the store itself was left as it was


def test_the_test_servers_pgvector_holds_the_store(blank_db_url: str) -> None:
    with psycopg.connect(blank_db_url) as conn:
        assert pgvector_check.check(conn) is None


@pytest.fixture
def owner_url(server_url: str) -> Iterator[str]:
    """A blank database owned by a role that is not a superuser, as that role; both dropped
    afterwards."""
    role = f"ka_owner_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        try:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        except psycopg.errors.InsufficientPrivilege as exc:
            pytest.skip(f"the test server's role may not create roles: {exc}")
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(*map(sql.Identifier, (role, role)))
        )
    try:
        url = make_conninfo(server_url, user=role, dbname=role)
        try:
            psycopg.connect(url).close()
        except psycopg.OperationalError as exc:  # a server that asks new roles for a password
            pytest.skip(f"cannot connect as a new role: {exc}")
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(role))
            )
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_an_owner_who_may_not_create_pgvector_is_refused_with_who_must(owner_url: str) -> None:
    """The database's owner, not a superuser: Postgres would refuse CREATE EXTENSION half-way;
    the check names the role and the database first, and nothing is created."""
    with pytest.raises(db.MigrationError, match=r"role ka_owner_\w+ may not create it.*superuser"):
        db.migrate(owner_url)
    assert _migrations_table(owner_url) is None
