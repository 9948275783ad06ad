"""Metadata helpers for the Dagster UI: typed tables, table identity and column schemas.

Rows are ``MetadataValue.table`` (the UI sorts and renders them as a table) and every asset that
is a table carries Dagster's standard ``dagster/table_name``, ``dagster/row_count`` and
``dagster/column_schema``, so the catalog shows its size and columns without a query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import dagster as dg
import psycopg

MAX_ROWS = 50

# What each stored column means, for the catalog's column view. Columns without an entry are
# still listed (the schema is read from the database, so it never falls behind a migration).
COLUMN_DESCRIPTIONS: Mapping[str, str] = {
    "id": "Deterministic id (UUID) of the row.",
    "file_path": "Path of the note inside its source.",
    "frontmatter": "YAML frontmatter of the note, as JSON (read by YAML 1.2, as Obsidian reads it).",
    "content": "Markdown body (frontmatter removed).",
    "content_hash": (
        "SHA-256 of the file; an unchanged hash is never processed again (empty: read again at"
        " the next sync)."
    ),
    "fetched_at": "When the file was last read from the source.",
    "version": "Source version: git blob SHA, or size and modification time of a local file.",
    "has_body": "Whether the body has text besides headings.",
    "source_table": "Raw table the note comes from.",
    "title": (
        'Title: frontmatter title (a number as written, a list\'s items joined by ", "), else the'
        " first H1 outside code and comments, else the file name."
    ),
    "tags": "Frontmatter tags, normalised, then the tags written in the text (#日記).",
    "inline_tags": "Tags written in the note's text (#日記), outside code, comments and links.",
    "link_names": (
        "Names the note's links lead to (file names without .md, any case): what finds the notes"
        " linking to a note."
    ),
    "tag_paths": (
        "Each tag and every tag it is nested under, lower-cased (Project/Alpha: project/alpha,"
        " project)."
    ),
    "name_keys": (
        "What a search typed as the note's name finds it by: its title, the short names a title"
        " X (Y) gives (X, and Y when Latin; empty when none), each alias, then its file name"
        " with and without a prefix_ (20251230_rag-design.md: 20251230ragdesign, ragdesign),"
        " as letters and digits, lower-cased, hiragana as katakana (ぱっけーじ finds パッケージ)."
    ),
    "doc_type": "Kind of document: a note, or the source's own type (e.g. a bookmark).",
    "top_heading": (
        "Frontmatter heading (a bookmark file's category), else the source's default; a list"
        ' reads as its items joined by ", ".'
    ),
    "url": "Web address of the note or section, when its source has one.",
    "heading_parts": "The section's heading path as a list.",
    "meta": "Frontmatter fields the section inherits (as the source declares).",
    "token_count": "Keyword tokens in the section, for keyword ranking.",
    "aliases": "Frontmatter aliases.",
    "content_type": "Kind of content, from the frontmatter.",
    "created": "Creation date from the frontmatter.",
    "updated": "Last update date from the frontmatter.",
    "document_id": "The note (latest_docs id) the section belongs to.",
    "chunk_index": "Position of the section in its note.",
    "heading": "Heading of the section.",
    "parent_heading": "Heading above the section.",
    "heading_path": "Every heading from the top of the note down to the section.",
    "embedding_text": "Text sent to the embedding model.",
    "text_hash": "SHA-256 of the embedding text; vectors are keyed by it.",
    "token_estimate": "Estimated length in model tokens.",
    "doc_hash": "Content hash of the note when it was split.",
    "chunker_sig": "Chunking rules and limit the section was made with.",
    "tokens": "Keyword tokens (Japanese and English) for full-text search.",
    "warning": "Why the section could not be split as asked, if it could not.",
    "warnings": (
        "What was odd in the note but cost it nothing, e.g. a frontmatter key written twice."
    ),
    "model": "Embedding model (the partition).",
    "dims": "Vector dimension.",
    "embedding": "The vector (pgvector).",
    "created_at": "When the vector was stored.",
}


def _cell(value: object) -> str | int | float | bool | None:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


_MORE = "…and {:,} more"
_MORE_READ = re.compile(r"…and ([\d,]+) more")


def rows_left_out(record: dg.TableRecord) -> int | None:
    """How many rows a table's last record says were left out (:func:`rows_table`), or None
    when the record is a row of its own."""
    texts = [v for v in record.data.values() if isinstance(v, str) and v]
    found = _MORE_READ.fullmatch(texts[0]) if len(texts) == 1 else None
    return int(found[1].replace(",", "")) if found else None


def rows_table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> dg.MetadataValue:
    """Rows as a UI table, cut at ``MAX_ROWS`` with a last row saying how many were left out."""
    rows = list(rows)
    records = [
        dg.TableRecord(dict(zip(columns, map(_cell, row), strict=True))) for row in rows[:MAX_ROWS]
    ]
    if len(rows) > MAX_ROWS:
        # Dagster requires every record to have the same fields.
        more = {name: "" for name in columns} | {columns[0]: _MORE.format(len(rows) - MAX_ROWS)}
        records.append(dg.TableRecord(more))
    schema = dg.TableSchema(columns=[dg.TableColumn(name) for name in columns])
    return dg.MetadataValue.table(records, schema=schema)


def grouped_table(
    groups: Mapping[str, Sequence[str]], columns: tuple[str, str] = ("change", "file")
) -> dg.MetadataValue:
    """Paths per group (e.g. new / changed / deleted) as one two-column table."""
    return rows_table(columns, [(name, path) for name, paths in groups.items() for path in paths])


def table_metadata(
    conn: psycopg.Connection, table: str, *, partition_filter: tuple[str, str] | None = None,
    row_count: int | None = None,
) -> dict[str, dg.MetadataValue]:  # fmt: skip
    """Dagster's table metadata for ``schema.table``, read from the store: its qualified name,
    its row count (``row_count`` when the caller has just counted the rows and written none
    since: counting 200,000 chunks again costs a pass over them) and its columns.
    ``partition_filter`` (column, value) adds the partition's own row count
    (``dagster/partition_row_count``)."""
    schema_name, table_name = table.split(".", 1)
    columns = conn.execute(
        "SELECT column_name, data_type, udt_name, is_nullable FROM information_schema.columns"
        " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
        (schema_name, table_name),
    ).fetchall()
    ident = psycopg.sql.Identifier(schema_name, table_name)
    total, part = _row_counts(conn, ident, partition_filter, row_count)
    database = conn.execute("SELECT current_database()").fetchone()
    metadata: dict[str, dg.MetadataValue] = {
        "dagster/table_name": dg.MetadataValue.text(f"{database[0] if database else ''}.{table}"),
        "dagster/row_count": dg.MetadataValue.int(total),
        "dagster/column_schema": dg.MetadataValue.table_schema(_schema(columns)),
    }
    if part is not None:
        metadata["dagster/partition_row_count"] = dg.MetadataValue.int(part)
    return metadata


def _row_counts(
    conn: psycopg.Connection, ident: psycopg.sql.Identifier,
    partition_filter: tuple[str, str] | None, known: int | None,
) -> tuple[int, int | None]:  # fmt: skip
    """The table's row count (``known`` if given) and the partition's, in one pass."""
    if partition_filter is None:
        if known is not None:
            return known, None
        row = conn.execute(psycopg.sql.SQL("SELECT count(*) FROM {}").format(ident)).fetchone()
        return (int(row[0]) if row else 0), None
    column, value = partition_filter
    query = psycopg.sql.SQL("SELECT count(*), count(*) FILTER (WHERE {} = %s) FROM {}")
    row = conn.execute(query.format(psycopg.sql.Identifier(column), ident), (value,)).fetchone()
    total, part = (int(row[0]), int(row[1])) if row else (0, 0)
    return (known if known is not None else total), part


def _schema(columns: Sequence[tuple[str, str, str, str]]) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name,
                _type(data_type, udt),
                description=COLUMN_DESCRIPTIONS.get(name),
                constraints=dg.TableColumnConstraints(nullable=nullable == "YES"),
            )
            for name, data_type, udt, nullable in columns
        ]
    )


def _type(data_type: str, udt: str) -> str:
    """The type as written in SQL: ``vector`` rather than USER-DEFINED, ``text[]`` not ARRAY."""
    if data_type == "ARRAY":
        return udt.lstrip("_") + "[]"
    return udt if data_type == "USER-DEFINED" else data_type


def split_notices(warnings: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """One notice per split section. Every part of an over-long section carries the section's
    warning ("<section> exceeds N tokens and has no ###: split on paragraphs"): the parts are
    counted into one "...: split into 3 parts" line instead of one line each."""
    first: dict[tuple[str, str], str] = {}
    parts: dict[tuple[str, str], int] = {}
    for path, warning in warnings:
        key = (path, warning.rpartition(": ")[0] or warning)
        first.setdefault(key, warning)
        parts[key] = parts.get(key, 0) + 1
    return [
        (path, f"{base}: split into {parts[(path, base)]} parts" if parts[(path, base)] > 1 else w)
        for (path, base), w in first.items()
    ]
