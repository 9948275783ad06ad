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
from typing import Any

import psycopg
from psycopg import sql

from knowledge_assets.core.index.coverage import missing_vectors
from knowledge_assets.core.index.models import active_key, unconfigured_hint
from knowledge_assets.core.ingest import store
from knowledge_assets.core.ingest.conventions import bad_date
from knowledge_assets.core.settings import EmbedSettings

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


KINDS = ("rejected", "warnings", "failed")  # the kinds of problem, each a list of StoreStatus


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
    # Said when the model search uses is no longer configured: no update embeds with it.
    unconfigured_model_hint: str | None = None
    rejected: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    failed: list[Problem] = field(default_factory=list)
    overlaps: list[str] = field(default_factory=list)  # folders two sources both index
    # How many there are of each kind: the lists above hold the first ``limit`` of them.
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    @property
    def problems(self) -> int:
        return sum(self.counts.values()) + len(self.overlaps)


_SOURCES = (
    "SELECT DISTINCT ON (source_table) source_table, location, synced_at, last_sha"
    " FROM meta.sync_state WHERE source_table IS NOT NULL ORDER BY source_table, synced_at DESC"
)
# Each list is read up to ``limit`` rows (NULL: all), with the count of all of them: a vault of
# thousands of broken files must not cost every status (and every page load) all their rows.
_REJECTED = (
    "SELECT file_path, reason, count(*) OVER () FROM raw.rejected_files WHERE source_table = %s"
    " ORDER BY file_path LIMIT %s"
)
_WARNED = (
    "SELECT file_path, array_to_string(warnings, '; '), count(*) OVER () FROM {}"
    " WHERE warnings <> '{{}}' ORDER BY file_path LIMIT %s"
)
_FAILED = (
    "SELECT d.source_table, d.file_path, f.step || ': ' || f.reason, count(*) OVER ()"
    " FROM rag.note_failures f JOIN rag.latest_docs d ON d.id = f.document_id"
    " ORDER BY d.source_table, d.file_path, f.step LIMIT %s"
)
_COUNTS = (
    "SELECT (SELECT count(*) FROM rag.latest_docs), (SELECT count(*) FROM rag.superseded_docs),"
    " (SELECT count(*) FROM rag.chunks), (SELECT model FROM rag.models WHERE is_active)"
)


def read_status(conn: psycopg.Connection, limit: int | None = None) -> StoreStatus:
    """The store's status (reads only), with the first ``limit`` problems of each kind (None:
    every one) and how many there are of each."""
    status = StoreStatus()
    # At least one row is read, since the rows carry their total (with LIMIT 0 none would).
    fetch = None if limit is None else max(limit, 1)
    tables = [r for r in conn.execute(_SOURCES).fetchall() if store.table_exists(conn, r[0])]
    for table, location, synced_at, head in tables:
        name = store.source_name(table)
        rows = conn.execute(_REJECTED, (table, fetch)).fetchall()
        rejected = _add(status, "rejected", name, rows)
        _add(status, "warnings", name, _warned(conn, table, fetch))
        stored = store.raw_count(conn, table)
        status.sources.append(SourceStatus(name, location, synced_at, head, stored, rejected))
    row = conn.execute(_COUNTS).fetchone()
    if row:
        status.searchable, status.superseded, status.passages = int(row[0]), int(row[1]), int(row[2])  # fmt: skip
        status.model = row[3]
    stored_total = sum(s.stored for s in status.sources)
    status.left_out = max(0, stored_total - status.searchable - status.superseded)
    status.missing_vectors = missing_vectors(conn) if status.model else 0
    status.unconfigured_model_hint = _unconfigured(conn)
    status.overlaps = _overlaps(conn, [(t, loc) for t, loc, *_ in tables])
    for table, path, reason, total in conn.execute(_FAILED, (fetch,)).fetchall():
        status.failed.append(Problem(store.source_name(table), path, reason))
        status.counts["failed"] = int(total)
    if limit is not None:  # several sources each gave up to ``fetch``
        for kind in KINDS:
            setattr(status, kind, getattr(status, kind)[:limit])
    return status


# The dates latest_docs left empty because they are no dates (`created: 2024-02-30`), as its last
# refresh of the source found them (bound to the date keys of that refresh's settings).
_BAD_DATES = "SELECT plan -> 'plan' -> 'bad_dates' FROM meta.latest_state WHERE source_table = %s"
_WARNED_AT = (
    "SELECT file_path, array_to_string(warnings, '; ') FROM {}"
    " WHERE warnings <> '{{}}' AND file_path = ANY(%s)"
)


def _warned(conn: psycopg.Connection, table: str, fetch: int | None) -> list[tuple[Any, ...]]:
    """(path, warnings, total) of the first ``fetch`` notes of ``table`` with a warning: one
    stored when the file was read, or a date that is none, found when latest_docs was."""
    raw = store.raw_table(table)
    rows = conn.execute(sql.SQL(_WARNED).format(raw), (fetch,)).fetchall()
    total = int(rows[0][2]) if rows else 0
    found = conn.execute(_BAD_DATES, (table,)).fetchone()
    dates: dict[str, list[str]] = {}
    for path, key, value in found[0] if found and isinstance(found[0], list) else []:
        dates.setdefault(path, []).append(bad_date(key, value))
    if not dates:
        return rows
    # A note with both kinds is one note, its warnings on one line.
    both: dict[str, str] = dict(
        conn.execute(sql.SQL(_WARNED_AT).format(raw), (list(dates),)).fetchall()
    )
    total += len(dates) - len(both)
    merged = {path: reason for path, reason, _ in rows}
    for path, warnings in dates.items():
        merged[path] = "; ".join([*filter(None, [both.get(path)]), *warnings])
    listed = sorted(merged.items())[:fetch]
    return [(path, reason, total) for path, reason in listed]


def _add(status: StoreStatus, kind: str, source: str, rows: list[tuple[Any, ...]]) -> int:
    """Add one source's (path, reason, total) rows to the ``kind`` list; returns its total."""
    getattr(status, kind).extend(Problem(source, path, reason) for path, reason, _ in rows)
    total = int(rows[0][2]) if rows else 0
    status.counts[kind] += total
    return total


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
            outer_name = "vault" if outer_table == "docs_local" else store.source_name(outer_table)
            if rel == ".":  # one folder read twice: said once, of the pair in name order
                if inner_table < outer_table and _stores_under(conn, outer_table, ""):
                    found.append(
                        f"the {store.source_name(inner_table)} folder {inner} is the"
                        f" {outer_name} folder too: its notes are indexed and found twice;"
                        " remove one of the two, or point it at another folder"
                    )
                continue
            if not _stores_under(conn, outer_table, rel + "/"):
                continue
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


def _unconfigured(conn: psycopg.Connection) -> str | None:
    """What to do when the model search uses is not configured here, else None (also when the
    model settings cannot be read: status reports the store, the commands that embed say why)."""
    try:
        configured = EmbedSettings.from_env().model_keys()
    except ValueError:
        return None
    key = active_key(conn)
    return unconfigured_hint(key, configured) if key and key not in configured else None
