"""Dagster's storage gets the store's database as a psycopg2 SQLAlchemy URL, whatever its form."""

from __future__ import annotations

import pytest
import sqlalchemy

from knowledge_assets.core.database import db


@pytest.mark.parametrize(
    ("given", "user", "password", "database", "query"),
    [
        ("postgresql://me:pw@db.local:5433/notes", "me", "pw", "notes", {}),
        (
            "postgres://me@db.local/notes?sslmode=require",
            "me",
            None,
            "notes",
            {"sslmode": "require"},
        ),
        (
            "user=postgres dbname=ka host=/tmp/pg/data",
            "postgres",
            None,
            "ka",
            {"host": "/tmp/pg/data"},
        ),
        (
            "host=localhost port=5433 user=me password=p@ss:/ dbname=notes",
            "me",
            "p@ss:/",
            "notes",
            {"host": "localhost", "port": "5433"},
        ),
    ],
)
def test_storage_url_keeps_every_connection_parameter(
    given: str, user: str, password: str | None, database: str, query: dict[str, str]
) -> None:
    url = sqlalchemy.engine.make_url(db.dagster_storage_url(given))
    assert url.drivername == "postgresql+psycopg2"
    assert (url.username, url.password, url.database) == (user, password, database)
    assert dict(url.query) == query


def test_storage_url_refuses_garbage() -> None:
    with pytest.raises(ValueError, match="neither a postgresql:// URL nor a conninfo"):
        db.dagster_storage_url("not a url at all")


BAD_URLS = [
    ("postgresql://alice:S3cr3tPW@[bad/notes", "IPv6 host"),
    ("mysql://alice:S3cr3tPW@db.local/notes", "is a mysql:// URL"),
    ("host=db.local password S3cr3tPW", 'missing "="'),
]


@pytest.mark.parametrize(("url", "says"), BAD_URLS)
def test_unreadable_database_url_is_refused_without_quoting_it(url: str, says: str) -> None:
    with pytest.raises(db.DatabaseUrlError) as caught:
        db.resolve_url(url)
    assert says in str(caught.value) and "postgresql://user:password@host" in str(caught.value)
    assert "S3cr3tPW" not in str(caught.value) and caught.value.__cause__ is None


@pytest.mark.parametrize(("url", "says"), BAD_URLS[:2])
def test_password_of_an_unreadable_database_url_is_still_redacted(
    url: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_assets.core import secrets

    monkeypatch.setenv("DATABASE_URL", url)
    assert secrets.redact(f'libpq: {says} in "{url}"') == f'libpq: {says} in "{url}"'.replace(
        "S3cr3tPW", secrets.MASK
    )
