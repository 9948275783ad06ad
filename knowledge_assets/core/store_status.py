"""What the store holds and what needs the user's attention, in one read: each source's last sync,
the notes search reads and those it leaves out, the active model's coverage, and every file or
note with a problem (rejected files, notes with warnings, notes a later step could not index).

The problems are the ones the runs already record; this only gathers them, so that a person with
a messy vault can see what to fix without reading run logs (``knowledge-assets status``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import psycopg

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

    @property
    def problems(self) -> int:
        return len(self.rejected) + len(self.warnings) + len(self.failed)


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
    status.failed = [
        Problem(store.source_name(table), path, f"{step}: {reason}")
        for table, path, step, reason in conn.execute(_FAILED).fetchall()
    ]
    return status
