"""Why a note is not searchable: superseded, a draft, empty, rejected, or failed to index.

``get`` (CLI and MCP) shows this next to a note that search will not return, so a user never
has to guess whether a note is missing, hidden on purpose or broken.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.ingest.conventions import Conventions
from knowledge_assets.core.ingest.store import RAW_TABLES
from knowledge_assets.core.search.note_sources import same_path

# Why an empty note (frontmatter only, headings and blank lines, a cleared file) is not searched;
# get (CLI, MCP, API) serves such a note and marks it with this.
EMPTY = "empty: no text besides headings"


def why_not_searchable(
    conn: psycopg.Connection, file_path: str, conventions: Conventions | None = None,
    table: str | None = None,
) -> str | None:  # fmt: skip
    """A short reason ``file_path`` (of source table ``table``, else of any source) is not
    searched, or None when it is a searchable note.

    Unknown paths give None too: the caller says "no note at ...".
    """
    latest = conn.execute(
        "SELECT f.step, f.reason FROM rag.latest_docs d"
        " LEFT JOIN rag.note_failures f ON f.document_id = d.id"
        " WHERE d.file_path = %s AND (%s::text IS NULL OR d.source_table = %s)"
        " ORDER BY f.step LIMIT 1",
        (file_path, table, table),
    ).fetchone()
    if latest is not None:
        step, reason = latest
        if step is None:
            return None
        verb = "chunked" if step == "chunks" else "embedded"
        return f"could not be {verb}: {reason}"
    return _excluded(conn, file_path, conventions or Conventions(), table)


def _excluded(
    conn: psycopg.Connection, file_path: str, conventions: Conventions, table: str | None
) -> str | None:
    row = conn.execute(
        "SELECT superseded_by FROM rag.superseded_docs WHERE file_path = %s"
        " AND (%s::text IS NULL OR source_table = %s) LIMIT 1",
        (file_path, table, table),
    ).fetchone()
    if row is not None:
        return f"superseded by {row[0]}"
    rejected = rejection(conn, file_path, table)
    stored = _stored(conn, file_path, table)
    if stored is None:
        return f"rejected because {rejected}" if rejected else None
    frontmatter, has_body = stored
    marker = conventions.draft_marker(frontmatter or {})
    if marker:
        return f"draft ({marker})"
    if not has_body:
        return EMPTY
    if rejected:
        return f"rejected because {rejected}"
    return "not indexed yet: materialize latest_docs"


def rejection(conn: psycopg.Connection, file_path: str, table: str | None = None) -> str | None:
    """The reason the current file at ``file_path`` (of source table ``table``, else of any)
    was rejected, if it was."""
    query = sql.SQL(
        "SELECT reason FROM raw.rejected_files WHERE {same}"
        " AND (%(t)s::text IS NULL OR source_table = %(t)s)"
        " ORDER BY source_table, file_path <> %(p)s LIMIT 1"
    ).format(same=same_path(conn))
    row = conn.execute(query, {"p": file_path, "t": table}).fetchone()
    return str(row[0]) if row else None


def _stored(
    conn: psycopg.Connection, file_path: str, table: str | None
) -> tuple[dict[str, Any], bool] | None:
    query = sql.SQL("SELECT frontmatter, has_body FROM {} WHERE file_path = %(p)s")
    tables = [table] if table else list(RAW_TABLES)
    row = conn.execute(
        sql.SQL(" UNION ALL ").join(query.format(sql.Identifier("raw", t)) for t in tables)
        + sql.SQL(" LIMIT 1"),
        {"p": file_path},
    ).fetchone()
    return (row[0], bool(row[1])) if row else None
