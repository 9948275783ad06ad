"""Notes a step could not process (``rag.note_failures``): recorded, listed, cleared on success.

One note that cannot be chunked or embedded must never stop the others. Its failure is kept
here with the reason, so the asset checks can list it and ``get`` can say why the note is not
searchable; the next run tries the note again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from knowledge_assets.core.ingest.frontmatter import clean_text
from knowledge_assets.core.secrets import redact

MAX_REASON_CHARS = 500


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, else its type's name: driver and library errors
    add hints and context on later lines that a one-line error leaves out."""
    text = redact(str(exc)).strip()  # libpq quotes a URL it cannot parse whole, password too
    return text.splitlines()[0] if text else type(exc).__name__


def describe(exc: BaseException) -> str:
    """One line naming the error, for the UI: its type and the first line of its message."""
    first = (redact(str(exc)).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return clean_text(text)[:MAX_REASON_CHARS]


def is_fatal(conn: psycopg.Connection, exc: BaseException) -> bool:
    """Whether ``exc`` is about the store rather than one note (then the run must stop)."""
    if not isinstance(exc, Exception):
        return True  # KeyboardInterrupt, SystemExit, a cancelled run
    return conn.closed or conn.broken or isinstance(exc, psycopg.OperationalError)


def record(conn: psycopg.Connection, step: str, rows: Sequence[tuple[uuid.UUID, str, str]]) -> None:
    """Remember (document_id, doc_hash, reason) failures of ``step``, replacing older ones."""
    if not rows:
        return
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO rag.note_failures (document_id, step, reason, doc_hash)"
            " SELECT %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM rag.latest_docs WHERE id = %s)"
            " ON CONFLICT (document_id, step) DO UPDATE SET reason = EXCLUDED.reason,"
            " doc_hash = EXCLUDED.doc_hash, seen_at = now()",
            [(doc, step, clean_text(reason), doc_hash, doc) for doc, doc_hash, reason in rows],
        )


def clear(conn: psycopg.Connection, step: str, document_ids: Sequence[Any] | None) -> None:
    """Forget failures of ``step`` for these documents (``None``: for every document)."""
    conn.execute(
        "DELETE FROM rag.note_failures WHERE step = %(step)s"
        " AND (%(ids)s::uuid[] IS NULL OR document_id = ANY(%(ids)s::uuid[]))",
        {"step": step, "ids": None if document_ids is None else list(document_ids)},
    )


def clear_embedded(conn: psycopg.Connection, model: str) -> None:
    """Forget embedding failures of ``model`` for notes whose every chunk now has its vector."""
    with conn.transaction():
        conn.execute(
            "DELETE FROM rag.note_failures f WHERE f.step = 'embeddings'"
            " AND starts_with(f.reason, %(prefix)s) AND NOT EXISTS (SELECT 1 FROM rag.chunks c"
            " WHERE c.document_id = f.document_id AND NOT EXISTS (SELECT 1 FROM rag.embedding_inputs i"
            " WHERE i.model = %(model)s AND i.chunk_hash = c.text_hash))",
            {"prefix": f"{model}: ", "model": model},
        )


def listed(conn: psycopg.Connection) -> list[tuple[str, str, str]]:
    """(file, step, reason) of every recorded failure, by file."""
    return conn.execute(
        "SELECT d.file_path, f.step, f.reason FROM rag.note_failures f"
        " JOIN rag.latest_docs d ON d.id = f.document_id ORDER BY d.file_path, f.step"
    ).fetchall()


def documents_of_texts(conn: psycopg.Connection, hashes: Sequence[str]) -> list[tuple[Any, str]]:
    """(document_id, doc_hash) of the notes whose chunks have these chunk-text hashes."""
    return conn.execute(
        "SELECT DISTINCT c.document_id, c.doc_hash FROM rag.chunks c WHERE c.text_hash = ANY(%s)",
        (list(hashes),),
    ).fetchall()
