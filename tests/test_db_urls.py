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
