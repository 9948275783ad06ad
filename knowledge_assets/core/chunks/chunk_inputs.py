"""Which latest documents a chunk refresh must chunk, and what the chunker reads of them.

The list is ids alone, and each batch's contents are read when the batch is chunked: a first
build of 50,000 notes read at once held every note's text in the run's process.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

# A document's source and the chunker signature its chunks must carry: a declared source's
# chunking options extend ``sig``.
_DOCS = sql.SQL(
    "FROM rag.latest_docs d LEFT JOIN meta.sources s ON s.source_table = d.source_table"
    " CROSS JOIN LATERAL (SELECT %(sig)s || CASE WHEN s.chunking_sig > ''"
    "   THEN ':' || s.chunking_sig ELSE '' END AS sig) e"
)


def docs_to_chunk(conn: psycopg.Connection, sig: str, *, force: bool = False) -> list[uuid.UUID]:
    """Ids of the latest documents whose chunks are missing or were made from other content or
    settings (every one with ``force``), in path order.

    Only a note's first chunk is looked at: a note's chunks are written by one statement that
    gives every position the note's hash and signature, so the first tells for all of them. An
    index holds the first chunks' hash and signature (``sql/022``), so chunk rows are read only
    on pages written since the table was last vacuumed.
    """
    query = sql.SQL(
        "SELECT d.id {docs} WHERE %(force)s OR NOT EXISTS (SELECT 1 FROM rag.chunks c"
        " WHERE c.document_id = d.id AND c.chunk_index = 0"
        "  AND c.doc_hash = d.content_hash AND c.chunker_sig = e.sig)"
        # A note chunked to nothing under its content and settings has no first chunk to tell.
        " AND NOT EXISTS (SELECT 1 FROM rag.chunkless_docs z WHERE z.document_id = d.id"
        "  AND z.doc_hash = d.content_hash AND z.chunker_sig = e.sig)"
        " ORDER BY d.file_path"
    ).format(docs=_DOCS)
    rows = conn.execute(query, {"sig": sig, "force": force}).fetchall()
    return [r[0] for r in rows]


def chunk_inputs(
    conn: psycopg.Connection, sig: str, ids: Sequence[uuid.UUID]
) -> list[tuple[Any, ...]]:
    """What the chunker reads of these documents, in path order: (id, path, title, frontmatter,
    content, content hash, doc type, chunking options, expected chunker signature). A document
    gone from ``rag.latest_docs`` since it was listed is left out."""
    query = sql.SQL(
        "SELECT d.id, d.file_path, d.title, d.frontmatter, d.content, d.content_hash,"
        " d.doc_type, s.chunking, e.sig {docs} WHERE d.id = ANY(%(ids)s::uuid[])"
        " ORDER BY d.file_path"
    ).format(docs=_DOCS)
    return conn.execute(query, {"sig": sig, "ids": list(ids)}).fetchall()


def record_chunkless(
    conn: psycopg.Connection, chunkless: Sequence[tuple[uuid.UUID, str, str]],
    chunked: Sequence[uuid.UUID],
) -> None:  # fmt: skip
    """Remember the notes (id, content hash, chunker signature) written with no chunk, so the
    next refresh leaves them be (``sql/066``), and forget the ``chunked`` ones, which have chunks
    now."""
    if chunked:
        conn.execute(
            "DELETE FROM rag.chunkless_docs WHERE document_id = ANY(%s::uuid[])", (list(chunked),)
        )
    if chunkless:
        ids, hashes, sigs = (list(column) for column in zip(*chunkless, strict=True))
        conn.execute(
            "INSERT INTO rag.chunkless_docs (document_id, doc_hash, chunker_sig)"
            " SELECT * FROM unnest(%s::uuid[], %s::text[], %s::text[])"
            " ON CONFLICT (document_id) DO UPDATE SET doc_hash = EXCLUDED.doc_hash,"
            " chunker_sig = EXCLUDED.chunker_sig",
            (ids, hashes, sigs),
        )
