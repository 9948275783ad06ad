"""Data migrations that mark notes for re-chunking, tested as a store made before them meets
them: apply one again, then list the notes the next chunks refresh takes up."""

from __future__ import annotations

from typing import Any

import psycopg

from knowledge_assets.core.chunks.chunk_inputs import docs_to_chunk
from knowledge_assets.core.chunks.chunk_refresh import chunker_signature
from knowledge_assets.core.chunks.chunking import CHUNK_MAX_TOKENS
from knowledge_assets.core.database import db


def rerun_migration(db_url: str, number: str) -> None:
    """Apply migration ``number`` (``"026"``) again, as a store made before it gets it at its
    next start."""
    with db.connect(db_url) as conn:
        conn.execute("DELETE FROM meta.migrations WHERE name LIKE %s", (f"{number}_%",))
        conn.commit()
    db.migrate(db_url)


def notes_to_rechunk(conn: psycopg.Connection) -> list[str]:
    """The paths of the notes the next chunks refresh re-chunks, in order."""
    rows = conn.execute(
        "SELECT file_path FROM rag.latest_docs WHERE id = ANY(%s) ORDER BY file_path",
        (docs_to_chunk(conn, chunker_signature(CHUNK_MAX_TOKENS)),),
    )
    return [r[0] for r in rows]


def chunk_state(conn: psycopg.Connection) -> list[tuple[str, Any, list[str]]]:
    """Each note's path, id, and its chunks' ids with their text hashes: what a migration that
    must not re-chunk a note leaves as it was."""
    return conn.execute(
        "SELECT file_path, d.id, array_agg(c.id::text || ':' || c.text_hash ORDER BY c.id)"
        " FROM rag.latest_docs d JOIN rag.chunks c ON c.document_id = d.id"
        " GROUP BY file_path, d.id ORDER BY file_path"
    ).fetchall()


def name_keys_by_path(conn: psycopg.Connection) -> dict[str, list[str]]:
    """Each note's path and the keys the known-item lookup finds it by (``name_keys``)."""
    return dict(conn.execute("SELECT file_path, name_keys FROM rag.latest_docs").fetchall())
