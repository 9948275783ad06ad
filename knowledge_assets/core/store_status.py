"""What the store holds and what needs the user's attention, in one read: each source's last sync,
the notes search reads and those it leaves out, the active model's coverage, and every file or
note with a problem (rejected files, notes with warnings, notes a later step could not index).

The problems are the ones the runs already record; this only gathers them, so that a person with
a messy vault can see what to fix without reading run logs (``knowledge-assets status``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg import sql

from knowledge_assets.core.index.coverage import missing_vectors
from knowledge_assets.core.ingest import store

__all__ = ["Problem", "SourceStatus", "StoreStatus", "read_status"]


@dataclass(frozen=True)
class SourceStatus:
    """One source: where it was last read from, when, and what its raw table holds."""

    name: str
    location: str | None
    synced_at: datetime | None
    head: str | None
    stored: int
    rejected: int


@dataclass(frozen=True)
class Problem:
    """A file or note to look at: its source, path and what is wrong with it."""

    source: str
    path: str
    reason: str


@dataclass
class StoreStatus:
    """The store at a glance (see the module doc)."""

    sources: list[SourceStatus] = field(default_factory=list)
    searchable: int = 0
    superseded: int = 0
    left_out: int = 0  # stored notes search does not read: drafts and notes without a body
    passages: int = 0
    model: str | None = None
    missing_vectors: int = 0
    rejected: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    failed: list[Problem] = field(default_factory=list)
    overlaps: list[str] = field(default_factory=list)  # folders two sources both index

    @property
    def problems(self) -> int:
        return len(self.rejected) + len(self.warnings) + len(self.failed) + len(self.overlaps)


_SOURCES = (
    "SELECT DISTINCT ON (source_table) source_table, location, synced_at, last_sha"
    " FROM meta.sync_state WHERE source_table IS NOT NULL ORDER BY source_table, synced_at DESC"
)
_FAILED = (
    "SELECT d.source_table, d.file_path, f.step, f.reason FROM rag.note_failures f"
    " JOIN rag.latest_docs d ON d.id = f.document_id ORDER BY d.source_table, d.file_path, f.step"
)
_COUNTS = (
    "SELECT (SELECT count(*) FROM rag.latest_docs), (SELECT count(*) FROM rag.superseded_docs),"
    " (SELECT count(*) FROM rag.chunks), (SELECT model FROM rag.models WHERE is_active)"
)


def read_status(conn: psycopg.Connection) -> StoreStatus:
    """The store's status (reads only)."""
    status = StoreStatus()
    tables = [r for r in conn.execute(_SOURCES).fetchall() if store.table_exists(conn, r[0])]
    for table, location, synced_at, head in tables:
        rejected = [Problem(store.source_name(table), p, r) for p, r in store.rejections(conn, table)]  # fmt: skip
        status.rejected += rejected
        status.warnings += [
            Problem(store.source_name(table), path, "; ".join(notes))
            for path, notes in store.note_warnings(conn, table)
        ]
        stored = store.raw_count(conn, table)
        name = store.source_name(table)
        status.sources.append(SourceStatus(name, location, synced_at, head, stored, len(rejected)))
    row = conn.execute(_COUNTS).fetchone()
    if row:
        status.searchable, status.superseded, status.passages = int(row[0]), int(row[1]), int(row[2])  # fmt: skip
        status.model = row[3]
    stored_total = sum(s.stored for s in status.sources)
    status.left_out = max(0, stored_total - status.searchable - status.superseded)
    status.missing_vectors = missing_vectors(conn) if status.model else 0
    status.overlaps = _overlaps(conn, [(t, loc) for t, loc, *_ in tables])
    status.failed = [
        Problem(store.source_name(table), path, f"{step}: {reason}")
        for table, path, step, reason in conn.execute(_FAILED).fetchall()
    ]
    return status


def _overlaps(conn: psycopg.Connection, places: list[tuple[str, str | None]]) -> list[str]:
    """A source folder inside another source's folder whose notes that source stores too: each
    of them is indexed twice, and found twice (a books folder kept in the vault)."""
    found = []
    folders = [(t, Path(loc)) for t, loc in places if loc and Path(loc).is_absolute()]
    for inner_table, inner in folders:
        for outer_table, outer in folders:
            if inner_table == outer_table or not inner.is_relative_to(outer):
                continue
            rel = inner.relative_to(outer).as_posix()
            if rel == "." or not _stores_under(conn, outer_table, rel + "/"):
                continue
            outer_name = "vault" if outer_table == "docs_local" else store.source_name(outer_table)
            fix = (
                f"move it out of the vault, or leave it out: KA_VAULT_EXCLUDE={rel}/ (or"
                " Obsidian's Excluded files)"
                if outer_table == "docs_local"
                else "move it out"
            )
            found.append(
                f"the {store.source_name(inner_table)} folder {inner} is inside the {outer_name}"
                f" folder {outer}: its notes are indexed and found twice; {fix}"
            )
    return found


def _stores_under(conn: psycopg.Connection, table: str, prefix: str) -> bool:
    query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE starts_with(file_path, %s))").format(
        store.raw_table(table)
    )
    row = conn.execute(query, (prefix,)).fetchone()
    return bool(row and row[0])
