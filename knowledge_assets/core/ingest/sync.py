"""Sync a source into its raw table: fetch only what changed, parse, upsert, delete, record rejections.

All writes of one sync happen in one transaction after every file was fetched, so a failure
(an unreachable source, a wrong token) leaves the store exactly as it was.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from knowledge_assets.core.ingest import store
from knowledge_assets.core.ingest.frontmatter import clean_text
from knowledge_assets.core.ingest.parse_pool import parse_pool_for
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES, ParsedDoc, Rejection
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.base import ChangeSet, Source, UnreadableFile
from knowledge_assets.core.workers import batch_size


@dataclass
class SyncReport:
    """What one sync did, for the UI and the CLI."""

    source: str
    head: str
    base: str | None
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: int = 0
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    fetched: int = 0

    @property
    def wrote_anything(self) -> bool:
        return bool(
            self.new or self.changed or self.deleted or self.renamed or self.rejected
            or self.unreadable
        )  # fmt: skip


def sync_source(
    conn: psycopg.Connection,
    source: Source,
    *,
    full: bool = False,
    since: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
) -> SyncReport:
    """Bring ``raw.<source.table>`` up to date with the source.

    ``since`` overrides the stored last-synced head (a sensor passes the SHA it saw before);
    ``full`` ignores it and compares the whole tree, which repairs anything a missed sync left.
    """
    table = source.table
    stored = store.stored_versions(conn, table)
    known = store.known_versions(stored, conn, table)
    conn.commit()
    base = None if full else (since or store.sync_state(conn, source.key))
    changes = source.changes(base, known)
    report = SyncReport(source=source.key, head=changes.head, base=base)
    parsed = _fetch_and_parse(
        source, changes, max_bytes, report, progress or Progress("raw_docs", "files")
    )
    accepted, rejected = _split_case_duplicates(set(stored), changes, parsed)
    with conn.transaction():
        _write(conn, source, changes, accepted, rejected, report)
    return report


def _fetch_and_parse(
    source: Source, changes: ChangeSet, max_bytes: int, report: SyncReport, progress: Progress
) -> list[ParsedDoc | Rejection]:
    """Read every file to fetch, in order, while worker processes parse what was read (a large
    sync; a small one parses as it reads)."""
    results: list[Callable[[], list[ParsedDoc | Rejection]]] = []
    progress.start(len(changes.fetch))
    with parse_pool_for(len(changes.fetch), max_bytes) as pool:
        size = batch_size(len(changes.fetch), pool.workers)
        files: list[tuple[str, bytes]] = []
        for path in changes.fetch:
            data = _read_one(source, path)
            if isinstance(data, Rejection):
                results.append(pool.submit(files))
                results.append(_ready([data]))
                files = []
            else:
                files.append((path, data))
                if len(files) >= size:
                    results.append(pool.submit(files))
                    files = []
            report.fetched += 1
            progress.advance()
        results.append(pool.submit(files))
        return [item for wait in results for item in wait()]


def _ready(items: list[ParsedDoc | Rejection]) -> Callable[[], list[ParsedDoc | Rejection]]:
    return lambda: items


def _read_one(source: Source, path: str) -> bytes | Rejection:
    """Read one file; a file that cannot be read becomes its rejection.

    A ``SourceError`` other than :class:`UnreadableFile` (the source as a whole is unreachable)
    still ends the sync before anything is written.
    """
    if clean_text(path) != path:
        reason = "file name is not valid UTF-8 (or holds a NUL): rename the file"
        return Rejection(clean_text(path), reason, retry=True)
    try:
        return source.read(path)
    except UnreadableFile as exc:
        return Rejection(path, str(exc), retry=True)
    except OSError as exc:
        return Rejection(path, f"cannot be read: {exc.strerror or type(exc).__name__}", retry=True)


def _split_case_duplicates(
    stored: set[str], changes: ChangeSet, parsed: list[ParsedDoc | Rejection]
) -> tuple[list[ParsedDoc], list[Rejection]]:
    """Paths equal but for case collide on case-insensitive file systems: keep one, reject the rest.

    The path already stored wins; otherwise the first in sorted order, so the choice is stable.
    """
    present = changes.present if changes.present is not None else _present(stored, changes)
    groups: dict[str, list[str]] = defaultdict(list)
    for path in present:
        groups[path.casefold()].append(path)
    losers: dict[str, str] = {}
    for paths in groups.values():
        if len(paths) > 1:
            keep = min(paths, key=lambda p: (p not in stored, p))
            losers.update({p: keep for p in paths if p != keep})
    accepted: list[ParsedDoc] = []
    rejected: list[Rejection] = []
    for item in parsed:
        if item.path in losers:
            reason = f"duplicate of {losers[item.path]} (paths differ only in case)"
            rejected.append(Rejection(item.path, reason))
        elif isinstance(item, Rejection):
            rejected.append(item)
        else:
            accepted.append(item)
    return accepted, rejected


def _present(stored: set[str], changes: ChangeSet) -> set[str]:
    present = stored - set(changes.deleted) - {old for old, _ in changes.renamed}
    return present | {new for _, new in changes.renamed} | set(changes.fetch)


def _record_unreadable_folders(
    conn: psycopg.Connection, table: str, changes: ChangeSet, report: SyncReport
) -> None:
    """List folders that could not be read as rejections (with how many notes were kept), and
    drop such entries of folders readable again."""
    if changes.present is not None:
        store.clear_folder_rejections(conn, table, keep=list(changes.unreadable))
    kept = changes.present or set()
    for folder, reason in sorted(changes.unreadable.items()):
        count = sum(1 for p in kept if p.startswith(folder))
        report.unreadable.append((folder, f"{reason}; its {count} stored notes are kept"))
    store.record_rejections(conn, table, [(f, clean_text(r), "") for f, r in report.unreadable])


def _write(
    conn: psycopg.Connection,
    source: Source,
    changes: ChangeSet,
    accepted: list[ParsedDoc],
    rejected: list[Rejection],
    report: SyncReport,
) -> None:
    table = source.table
    if changes.deleted:
        report.deleted = sorted(changes.deleted)
        store.delete_docs(conn, table, report.deleted)
    if changes.renamed:
        store.rename_docs(conn, table, changes.renamed)
        report.renamed = list(changes.renamed)
    hashes = store.stored_hashes(conn, table, [d.path for d in accepted])
    for doc in accepted:
        if doc.path not in hashes:
            report.new.append(doc.path)
        elif hashes[doc.path] != doc.content_hash:
            report.changed.append(doc.path)
    store.upsert_docs(conn, table, [(d, changes.versions.get(d.path, "")) for d in accepted])
    store.clear_rejections(conn, table, [d.path for d in accepted])
    store.record_rejections(
        conn,
        table,
        [(r.path, clean_text(r.reason), "" if r.retry else changes.versions.get(r.path, ""))
         for r in rejected],
    )  # fmt: skip
    report.rejected = [(r.path, r.reason) for r in rejected]
    _record_unreadable_folders(conn, table, changes, report)
    report.unchanged = store.raw_count(conn, table) - len(report.new) - len(report.changed)
    if report.wrote_anything or changes.base != changes.head:
        store.set_sync_state(conn, source.key, changes.head)
