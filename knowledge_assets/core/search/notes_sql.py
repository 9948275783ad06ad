"""SQL of the note-level reads: similar notes, one note by path, the tag list, tagged notes.

Like :mod:`knowledge_assets.core.search.search_sql`, values travel as parameters; only the model name
(for the partial index predicate) and the vector dimension are spliced in as literals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.index.index_build import vec_type
from knowledge_assets.core.search.hnsw_scan import set_hnsw_scan
from knowledge_assets.core.search.search_sql import ModelInfo, fetch_dicts


def note_vector(
    conn: psycopg.Connection, model: ModelInfo, file_path: str, table: str
) -> tuple[str | None, list[str]]:
    """The mean vector of a latest note's chunks (text form) and every path of its versions,
    all in the source of raw table ``table``.

    Versions are followed both ways through rag.superseded_docs, so neither an older nor a newer
    version of the note counts as "similar" to it. ``previous`` names a note of the same source.
    """
    row = conn.execute(
        sql.SQL(
            "WITH RECURSIVE fam(path) AS (SELECT %(p)s::text UNION"
            " SELECT CASE WHEN s.superseded_by = fam.path THEN s.file_path ELSE s.superseded_by END"
            " FROM rag.superseded_docs s JOIN fam"
            " ON s.source_table = %(t)s AND (s.superseded_by = fam.path OR s.file_path = fam.path))"
            " SELECT (SELECT avg(e.embedding::vector({dims}))::text FROM rag.latest_docs d"
            "  JOIN rag.chunks c ON c.document_id = d.id"
            "  JOIN rag.embedding_inputs i ON i.model = {model} AND i.template = {template}"
            "   AND i.chunk_hash = c.text_hash"
            "  JOIN rag.embeddings e ON e.model = i.model AND e.text_hash = i.text_hash"
            "  WHERE d.file_path = %(p)s AND d.source_table = %(t)s), (SELECT array_agg(path) FROM fam)"
        ).format(
            dims=sql.Literal(int(model.dims)),
            model=sql.Literal(model.model),
            template=sql.Literal(model.template),
        ),
        {"p": file_path, "t": table},
    ).fetchone()
    return (row[0], list(row[1] or [])) if row else (None, [file_path])


def similar_notes(
    conn: psycopg.Connection, model: ModelInfo, vector: str, *, table: str,
    exclude: Sequence[str], limit: int, k: int,
) -> tuple[list[dict[str, Any]], int]:  # fmt: skip
    """Notes owning the ``k`` nearest chunks to ``vector``, best chunk first, minus the paths
    ``exclude`` of the source of raw table ``table``; and how many neighbours the index returned
    (fewer than ``k``: the index is exhausted).

    The excluded notes' own passages are left out inside the scan: the nearest ones to a note's
    mean vector are its own, and a note of more sections than the deepest scan reaches had no
    other note among them."""
    vt = vec_type(model.dims)
    query = sql.SQL(
        "WITH own AS (SELECT i.text_hash FROM rag.latest_docs d"
        "  JOIN rag.chunks c ON c.document_id = d.id"
        "  JOIN rag.embedding_inputs i ON i.model = {model} AND i.template = {template}"
        "   AND i.chunk_hash = c.text_hash"
        "  WHERE d.source_table = %(t)s AND d.file_path = ANY(%(ex)s::text[])),"
        " nn AS (SELECT e.text_hash, (e.embedding::{vt}) <=> %(q)s::{vt} AS dist"
        "  FROM rag.embeddings e WHERE e.model = {model}"
        "  AND e.text_hash NOT IN (SELECT text_hash FROM own)"
        "  ORDER BY (e.embedding::{vt}) <=> %(q)s::{vt} LIMIT %(k)s)"
        " SELECT (SELECT count(*) FROM nn) AS nn_count, d.file_path, d.source_table, d.title, d.tags,"
        "  max(1 - nn.dist) AS score, (array_agg(c.heading ORDER BY nn.dist, c.id))[1] AS heading,"
        "  (array_agg(c.content ORDER BY nn.dist, c.id))[1] AS content"
        " FROM nn JOIN rag.embedding_inputs i ON i.model = {model} AND i.template = {template}"
        "  AND i.text_hash = nn.text_hash JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
        " JOIN rag.latest_docs d ON d.id = c.document_id"
        " WHERE NOT (d.source_table = %(t)s AND d.file_path = ANY(%(ex)s::text[]))"
        " GROUP BY d.id ORDER BY score DESC, d.file_path LIMIT %(limit)s"
    ).format(vt=vt, model=sql.Literal(model.model), template=sql.Literal(model.template))
    set_hnsw_scan(conn, ef_search=k, iterative=True)  # walks on past the note's own passages
    params = {"q": vector, "k": k, "t": table, "ex": list(exclude), "limit": limit}
    rows = fetch_dicts(conn, query, params)
    if rows:
        return rows, int(rows[0]["nn_count"])
    count = conn.execute(
        sql.SQL("SELECT count(*) FROM rag.embeddings WHERE model = {m}").format(
            m=sql.Literal(model.model)
        )
    ).fetchone()
    return [], min(k, int(count[0]) if count else 0)


def get_doc(conn: psycopg.Connection, file_path: str, table: str) -> dict[str, Any] | None:
    """The note at ``file_path`` in the source of raw table ``table``: the latest version, else
    a stored older/draft version (``latest`` false)."""
    latest = fetch_dicts(
        conn,
        sql.SQL(
            "SELECT file_path, title, tags, aliases, content_type, created, updated, frontmatter,"
            " content, true AS latest, NULL::text AS superseded_by, doc_type AS type, top_heading,"
            " url, source_table FROM rag.latest_docs"
            " WHERE file_path = %(p)s AND source_table = %(t)s"
        ),
        {"p": file_path, "t": table},
    )
    if latest:
        return latest[0]
    stored = fetch_dicts(
        conn,
        sql.SQL(
            "SELECT r.file_path, coalesce(rag.frontmatter_title(r.frontmatter -> 'title'), '')"
            " AS title,"
            " rag.note_tags(r.frontmatter->'tags') AS tags,"
            " rag.jsonb_text_array(r.frontmatter->'aliases') AS aliases,"
            " r.frontmatter->>'content_type' AS content_type, NULL::date AS created,"
            " NULL::date AS updated, r.frontmatter, r.content, false AS latest, s.superseded_by,"
            " NULL::text AS type, rag.frontmatter_title(r.frontmatter -> 'heading') AS top_heading,"
            " NULL::text AS url,"
            " %(t)s::text AS source_table FROM {raw} r LEFT JOIN rag.superseded_docs s"
            " ON s.file_path = r.file_path AND s.source_table = %(t)s"
            " WHERE r.file_path = %(p)s"
        ).format(raw=sql.Identifier("raw", table)),
        {"p": file_path, "t": table},
    )
    return stored[0] if stored else None


def list_tags(conn: psycopg.Connection) -> list[tuple[str, int]]:
    """(tag, number of latest notes carrying it), most used first."""
    rows = conn.execute("SELECT tag, count FROM rag.list_all_tags()").fetchall()
    return [(r[0], int(r[1])) for r in rows]


def latest_fields(
    conn: psycopg.Connection, notes: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """source_table, file_path, title, tags, dates and content of the latest version of each
    (raw table, path) note."""
    return fetch_dicts(
        conn,
        sql.SQL(
            "SELECT source_table, file_path, title, tags, created, updated, content"
            " FROM rag.latest_docs WHERE (source_table, file_path) IN"
            " (SELECT * FROM unnest(%(t)s::text[], %(p)s::text[]))"
        ),
        {"t": [table for table, _ in notes], "p": [path for _, path in notes]},
    )


def is_latest_note(conn: psycopg.Connection, file_path: str, table: str | None) -> bool:
    """Whether ``file_path``, exactly as given, is a latest note of raw table ``table`` (None:
    of any source)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT FROM rag.latest_docs WHERE file_path = %(p)s"
        " AND (%(t)s::text IS NULL OR source_table = %(t)s))",
        {"p": file_path, "t": table},
    ).fetchone()
    return bool(row and row[0])


def latest_notes(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(source table, path) of every latest note."""
    rows = conn.execute("SELECT source_table, file_path FROM rag.latest_docs").fetchall()
    return [(r[0], r[1]) for r in rows]


def superseded_notes(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(source table, path) of every version a newer note names in ``previous``."""
    rows = conn.execute("SELECT source_table, file_path FROM rag.superseded_docs").fetchall()
    return [(r[0], r[1]) for r in rows]


def titled(conn: psycopg.Connection, title: str, limit: int) -> list[tuple[str, str]]:
    """(source table, path) of up to ``limit`` latest notes titled ``title``, in any case."""
    rows = conn.execute(
        "SELECT source_table, file_path FROM rag.latest_docs WHERE lower(title) = lower(%s)"
        " ORDER BY file_path LIMIT %s",
        (title.strip(), limit),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def linking_to(
    conn: psycopg.Connection, names: Sequence[str], limit: int
) -> list[tuple[str, str, str, str]]:
    """(table, path, title, body) of up to ``limit`` latest notes with a link to any of
    ``names`` (sql/047's ``link_names``, read from its index)."""
    return conn.execute(
        "SELECT source_table, file_path, title, content FROM rag.latest_docs"
        " WHERE link_names && %s::text[] ORDER BY title, file_path LIMIT %s",
        (list(names), limit),
    ).fetchall()


# Versions are followed this many steps back: a longer chain of `previous` is cut, not walked.
MAX_VERSIONS = 20


def earlier_versions(conn: psycopg.Connection, file_path: str, table: str) -> list[tuple[str, str]]:
    """(path, title) of the versions ``file_path`` supersedes through ``previous``, newest first:
    the one it names, the one that one names, and so on (at most :data:`MAX_VERSIONS`)."""
    rows = conn.execute(
        sql.SQL(
            "WITH RECURSIVE chain AS ("
            " SELECT file_path, 1 AS depth FROM rag.superseded_docs"
            "  WHERE superseded_by = %(p)s AND source_table = %(t)s"
            " UNION ALL"
            " SELECT s.file_path, c.depth + 1 FROM rag.superseded_docs s"
            "  JOIN chain c ON s.superseded_by = c.file_path"
            "  WHERE s.source_table = %(t)s AND c.depth < %(max)s)"
            " SELECT c.file_path, coalesce(rag.frontmatter_title(r.frontmatter -> 'title'), '')"
            " FROM (SELECT file_path, min(depth) AS depth FROM chain"
            "  WHERE file_path <> %(p)s GROUP BY 1) c"  # a cycle of `previous` leads back
            " JOIN {raw} r ON r.file_path = c.file_path ORDER BY c.depth, c.file_path"
        ).format(raw=sql.Identifier("raw", table)),
        {"p": file_path, "t": table, "max": MAX_VERSIONS},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]
