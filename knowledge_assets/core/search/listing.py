"""The current notes a :class:`SearchFilters` keeps, listed without searching: what a query of
Obsidian operators alone (``path:日記/``, ``tag:日記 -tag:運動``) shows, as Obsidian's search box
lists the files they match.

One set-based statement over rag.latest_docs (one row a note), through the same
:func:`filter_clause` every search leg uses, so a listed note is one a search with those
operators could return.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import psycopg
from psycopg import sql

from knowledge_assets.core.search.filters import SearchFilters, filter_clause, with_excluded_notes
from knowledge_assets.core.search.note_sources import source_name
from knowledge_assets.core.search.search_sql import fetch_dicts

__all__ = ["EVERY_OTHER_NOTE", "MAX_OFFSET", "ListedNote", "next_offset", "notes_kept"]

# What a listing of exclusions alone (-tag:仕事) says: it is every note but those, as in
# Obsidian, and must not read as one folder's or tag's notes.
EVERY_OTHER_NOTE = "the query only leaves notes out: these are every note but those it excludes"
# The deepest page a caller may ask for: far past any vault, and a plain integer for Postgres.
MAX_OFFSET = 1_000_000


@dataclass(frozen=True)
class ListedNote:
    """A current note as a listing shows it: a tag's notes, or a query of operators alone."""

    file_path: str
    source: str
    title: str
    tags: tuple[str, ...]
    created: dt.date | None
    updated: dt.date | None


# Latest update first, then latest creation, then path and source: notes updated on the same day
# (a whole folder imported at once) still come in one order, so pages neither overlap nor skip.
_ORDER = "d.updated DESC NULLS LAST, d.created DESC NULLS LAST, d.file_path, d.source_table"


def notes_kept(
    conn: psycopg.Connection, filters: SearchFilters | None, *, limit: int = 50, offset: int = 0
) -> tuple[int, list[ListedNote]]:
    """How many current notes ``filters`` keep (every field, exclusions and excluded words
    included), and ``limit`` of them from ``offset``, most recently updated first."""
    if limit < 1 or not 0 <= offset <= MAX_OFFSET:
        raise ValueError(f"limit must be at least 1 and offset from 0 to {MAX_OFFSET:,}")
    # The notes holding an excluded word, found once through the keyword index (a list of ids
    # is cheaper for the planner than the sub-query in each row's condition).
    where, params = filter_clause(with_excluded_notes(conn, filters))
    rows = fetch_dicts(
        conn,
        sql.SQL(
            "SELECT count(*) OVER () AS total, d.source_table, d.file_path, d.title, d.tags,"
            " d.created, d.updated FROM rag.latest_docs d WHERE {where}"
            " ORDER BY {order} LIMIT %(l_limit)s OFFSET %(l_offset)s"
        ).format(where=where, order=sql.SQL(_ORDER)),
        {**params, "l_limit": limit, "l_offset": offset},
    )
    total = int(rows[0]["total"]) if rows else 0
    if not rows and offset > 0:  # a page past the last note: count on its own
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM rag.latest_docs d WHERE {where}").format(where=where),
            params,
            prepare=False,
        ).fetchone()
        total = int(row[0]) if row else 0
    return total, [
        ListedNote(
            r["file_path"], source_name(r["source_table"]), r["title"] or "",
            tuple(r["tags"] or ()), r["created"], r["updated"],
        )
        for r in rows
    ]  # fmt: skip


def next_offset(offset: int, shown: int, total: int) -> int | None:
    """Where the page after one of ``shown`` notes from ``offset`` starts, or None when it held
    the last of the ``total`` (a page past the end has none after it either)."""
    after = offset + shown
    return after if shown and after < total else None
