"""The queries behind the data-quality checks: each returns the offending rows, named by file,
so a failing check can say *which* notes are wrong rather than how many.

Every query is read-only and takes its values as parameters.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import psycopg

from knowledge_assets.core.index import embed_checks
from knowledge_assets.core.ingest import store
from knowledge_assets.core.sources.base import Source
from knowledge_assets.core.sources.folder_links import is_symlinked


def chunks_without_vectors(conn: psycopg.Connection, model: str | None) -> list[tuple[str, int]]:
    """(file path, chunks without a vector of ``model``) for every latest note that has some;
    with no model (none active yet) every chunk counts as missing.

    The check runs after every embedding pass: when the model's last complete pass and the
    changes since show every chunk text embedded, no chunk is read (the per-note query took
    0.24-0.28 s at 194,000 chunks); only a gap, or changes that were not logged, are listed by
    note."""
    if model is not None and _known_complete(conn, model):
        return []
    return conn.execute(
        "SELECT d.file_path, count(*)::int FROM rag.chunks c"
        " JOIN rag.latest_docs d ON d.id = c.document_id"
        " WHERE NOT EXISTS (SELECT 1 FROM rag.embedding_inputs i JOIN rag.models m"
        "   ON m.model = i.model AND m.template = i.template"
        "   WHERE i.model = %s AND i.chunk_hash = c.text_hash)"
        " GROUP BY d.file_path ORDER BY d.file_path",
        (model,),
    ).fetchall()


def _known_complete(conn: psycopg.Connection, model: str) -> bool:
    row = conn.execute("SELECT template FROM rag.models WHERE model = %s", (model,)).fetchone()
    known = embed_checks.known_counts(conn, model, str(row[0])) if row else None
    return known is not None and known[0] == known[1]


def orphan_embeddings(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(model, text hash) of vectors whose text no chunk uses any more (under any template)."""
    return conn.execute(
        "SELECT e.model, e.text_hash FROM rag.embeddings e WHERE NOT EXISTS"
        " (SELECT 1 FROM rag.embedding_inputs i JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
        "  WHERE i.model = e.model AND i.text_hash = e.text_hash)"
        " ORDER BY e.model, e.text_hash"
    ).fetchall()


# One model's vectors of another size. ``dims`` is compared with constants, so the planner reads
# the column's statistics (one size in the whole table) and walks the (model, dims) index instead
# of scanning every row: compared with the models' column in one join, it scanned.
_WRONG_DIMENSION = (
    "SELECT DISTINCT coalesce(d.file_path, 'text ' || e.text_hash), e.model, e.dims,"
    " %(dims)s::int FROM rag.embeddings e"
    " LEFT JOIN rag.embedding_inputs i ON i.model = e.model AND i.text_hash = e.text_hash"
    " LEFT JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
    " LEFT JOIN rag.latest_docs d ON d.id = c.document_id"
    " WHERE e.model = %(model)s AND (e.dims < %(dims)s OR e.dims > %(dims)s)"
)


def wrong_dimension_vectors(conn: psycopg.Connection) -> list[tuple[str, str, int, int]]:
    """(file path or text hash, model, vector dims, model dims) of vectors of the wrong size.

    A vector used by several chunks is listed once per file; one no chunk uses is named by its
    text hash. A row's ``dims`` is its vector's size (the table's CHECK), so no vector is read.
    """
    found: list[tuple[str, str, int, int]] = []
    for model, dims in conn.execute("SELECT model, dims FROM rag.models").fetchall():
        params = {"model": model, "dims": dims}
        found += conn.execute(_WRONG_DIMENSION, params, prepare=False).fetchall()
    return sorted(found)


# One model's chunks over its limit, the limit a constant, so the planner walks the
# token_estimate index to the few long chunks; compared with the models' column in one join, it
# read every chunk (185 ms at 194,000 chunks).
_OVERSIZED = (
    "SELECT d.file_path, c.chunk_index, c.heading, c.token_estimate, %(model)s::text,"
    " %(limit)s::int FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
    " WHERE c.token_estimate > %(limit)s"
)


def oversized_chunks(conn: psycopg.Connection) -> list[tuple[str, int, str, int, str, int]]:
    """(file, chunk index, heading, estimated tokens, model, model limit) of every chunk longer
    than the input limit of a registered model (the model would truncate or refuse it)."""
    found: list[tuple[str, int, str, int, str, int]] = []
    for model, limit in conn.execute("SELECT model, max_tokens FROM rag.models").fetchall():
        params = {"model": model, "limit": limit}
        found += conn.execute(_OVERSIZED, params, prepare=False).fetchall()
    return sorted(found, key=lambda r: (r[0], r[1], r[4]))


def supersede_cycles(conn: psycopg.Connection) -> list[tuple[str, str, str]]:
    """(source table, file, superseded by) for every version caught in a ``previous`` cycle."""
    return conn.execute(
        "SELECT source_table, file_path, superseded_by FROM rag.superseded_docs"
        " WHERE in_cycle ORDER BY source_table, file_path"
    ).fetchall()


@dataclass
class SourceDrift:
    """How ``raw_docs`` differs from the source right now."""

    head: str
    synced_head: str | None
    source_files: int
    stored_files: int
    missing: list[str] = field(default_factory=list)  # in the source, not stored
    stale: list[str] = field(default_factory=list)  # stored, but changed in the source since
    extra: list[str] = field(default_factory=list)  # stored, but gone from the source
    unreadable: list[str] = field(default_factory=list)  # files and folders that cannot be read

    @property
    def in_sync(self) -> bool:
        """Same head as last synced, and every file stored (or rejected) at its current version;
        nothing in the source unreadable (its stored notes are kept, but may be stale)."""
        return self.head == self.synced_head and not (
            self.missing or self.stale or self.extra or self.unreadable
        )


def source_drift(conn: psycopg.Connection, source: Source) -> SourceDrift:
    """Compare the raw table with a full listing of the source (no file content is read).

    Rejected files count as stored at the version that was rejected, so a note that cannot be
    parsed is not reported as drift again and again.
    """
    versions = store.stored_versions(conn, source.table)
    known = store.known_versions(versions, conn, source.table)
    stored = set(versions)
    synced = store.sync_state(conn, source.key)
    conn.commit()
    changes = source.changes(None, known)
    present = changes.present or set()
    rejected = set(known) - stored
    # A file that could not be read is recorded with an empty version, so it is tried again.
    unreadable = {p for p in changes.fetch if known.get(p) == ""}
    return SourceDrift(
        head=changes.head,
        synced_head=synced,
        source_files=len(present - rejected),
        stored_files=len(stored),
        missing=sorted(p for p in changes.fetch if p not in known),
        stale=sorted(p for p in changes.fetch if p in known and p not in unreadable),
        extra=sorted(changes.deleted),
        unreadable=sorted(unreadable | _holding_back(changes.unreadable, stored)),
    )


def _holding_back(recorded: Mapping[str, str], stored: Collection[str]) -> set[str]:
    """The recorded paths that keep stored notes from their source: not a symlinked folder
    with nothing stored under it (never followed, so never stale)."""
    return {
        path for path, why in recorded.items()
        if not is_symlinked(why) or any(p.startswith(path) for p in stored)
    }  # fmt: skip
