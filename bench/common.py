"""Shared bench helpers: a fresh database on the embedded server (or DATABASE_URL), and the
jsquad vault put through the real pipeline."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from knowledge_assets.core import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.indexing import embed_missing, refresh_chunks
from knowledge_assets.core.ingest import sync_source
from knowledge_assets.core.latest import refresh_latest
from knowledge_assets.core.sources.local import LocalSource

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
JSQUAD = SHARED / "eval" / "jsquad"


def fresh_database() -> str:
    """A new, migrated database; the embedded server lives in a temporary folder."""
    base = os.environ.get("DATABASE_URL") or db.embedded_url(Path(tempfile.mkdtemp()) / "pg")
    name = f"ka_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(base)
    info["dbname"] = name
    url = psycopg.conninfo.make_conninfo(**info)
    db.migrate(url)
    return url


def ingest_jsquad(url: str, embedder: Embedder) -> None:
    """The jsquad vault through the real pipeline into ``url``: sync, latest versions, chunks
    sized for ``embedder``, and its vectors."""
    with db.connect(url) as conn:
        source = LocalSource(JSQUAD / "vault")
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=embedder.max_tokens)
        embed_missing(conn, embedder)
