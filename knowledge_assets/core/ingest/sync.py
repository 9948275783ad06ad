"""Sync a source into its raw table: fetch only what changed, parse, upsert, delete, record rejections.

All writes of one sync happen in one transaction, so a failure (an unreachable source, a wrong
token) leaves the store exactly as it was. Files are written a batch at a time as they are
parsed (:mod:`~knowledge_assets.core.ingest.fetching`), so a first sync of a large vault never
holds every note's text at once.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field

import psycopg

from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.core.ingest import store
from knowledge_assets.core.ingest.deletion_guard import DeletionGuard, refuse_to_empty
from knowledge_assets.core.ingest.fetching import fetch_and_parse
from knowledge_assets.core.ingest.frontmatter import clean_text
from knowledge_assets.core.ingest.parsing import DEFAULT_MAX_BYTES, ParsedDoc, Rejection
from knowledge_assets.core.ingest.path_collisions import (
    Duplicates,
    case_losers,
    reread_case_duplicates,
)
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.base import ChangeSet, Source


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

    ``since`` is the head to diff from when the store has none recorded (the store's own
    last-synced head is always the right base: the sensor's may be older by the time it runs);
    ``full`` ignores it and compares the whole tree, which repairs anything a missed sync left.
    A sync that would delete most of the stored notes is refused (:class:`MassDeletion`).
    """
    table = source.table
    stored, known, last, base = _stored_state(conn, source, full=full, since=since)
    changes = source.changes(base, known)
    _reread_renamed_rejections(stored, known, changes)
    refuse_to_empty(source, len(stored), changes)
    guard = DeletionGuard(source, stored, changes, last)
    # Before anything is read: too many deletions for the new files to be renames of them all.
    guard.check(guard.certain, guard.deleting)
    reread_case_duplicates(set(stored), known, changes)
    report = SyncReport(source=source.key, head=changes.head, base=base)
    losers = case_losers(set(stored), changes)
    _reread_renamed_duplicates(known, changes, losers)
    duplicates = Duplicates(losers, set(stored))
    progress = progress or Progress("raw_docs", "files")
    with conn.transaction():
        moves = _remove(conn, table, changes, stored, report)
        for parsed in fetch_and_parse(source, changes, max_bytes, report, progress):
            _write_docs(conn, table, changes, *duplicates.split(parsed), moves, report)
        if duplicates.held:
            _write_docs(conn, table, changes, *duplicates.settle(), moves, report)
        report.deleted = [path for path in report.deleted if path not in moves.away]
        # Renames are known now (a new path with a deleted note's content): raising here rolls
        # back the deletions with the rest of the transaction.
        guard.check(len(report.deleted))
        _finish(conn, source, changes, report)
    return report


def _stored_state(
    conn: psycopg.Connection, source: Source, *, full: bool, since: str | None
) -> tuple[dict[str, str], dict[str, str], store.LastSync | None, str | None]:
    """The stored notes' versions, the versions of every path the store knows (rejected files
    too), the table's last sync, and the head to compare the source with (None: the whole tree).
    """
    table = source.table
    stored = store.stored_versions(conn, table)
    known = store.known_versions(stored, conn, table)
    last = store.last_sync(conn, table)
    conn.commit()
    # Another source key (a prefix or branch since changed) wrote the table last: its changes
    # are in no diff of this key's commits, so compare the whole tree.
    other = last is not None and last.key != source.key
    # The store's own head wins over ``since``: a run the sensor requested while another run
    # was syncing carries the head from before that sync, and a diff from it re-applied older
    # changes to a newer store (a note added and deleted since stayed), then recorded the head.
    base = None if full or other else (store.sync_state(conn, source.key) or since)
    return stored, known, last, base


def _reread_renamed_rejections(
    stored: Mapping[str, str], known: Mapping[str, str], changes: ChangeSet
) -> None:
    """A rejected file that was renamed (a source that reports renames: a commit diff) is read
    again at its new path, and its old path's rejection goes. Only stored notes move in place:
    the rejection would otherwise stay listed under a path that no longer exists, and the file
    at its new path never be read (its version is the rejected one's)."""
    for old, new in [pair for pair in changes.renamed if pair[0] not in stored]:
        _read_at_new_path(known, changes, old, new)


def _reread_renamed_duplicates(
    known: Mapping[str, str], changes: ChangeSet, losers: Mapping[str, str]
) -> None:
    """A note renamed onto the case or Unicode duplicate of another path (``x.md`` to
    ``note.md`` beside ``Note.md``) is read at its new path, where it is rejected as that
    duplicate, and its old path is deleted. Moved in place unread, it was stored under the
    new path beside its twin, and no later sync read it again (its version was unchanged)."""
    for old, new in [pair for pair in changes.renamed if pair[1] in losers]:
        _read_at_new_path(known, changes, old, new)


def _read_at_new_path(known: Mapping[str, str], changes: ChangeSet, old: str, new: str) -> None:
    """Turn the rename ``old`` -> ``new`` into the deletion of ``old`` and a read of ``new``."""
    changes.renamed.remove((old, new))
    changes.deleted.append(old)
    if new not in changes.fetch:
        changes.fetch.append(new)
        changes.versions[new] = known.get(old, "")


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
        kept_notes = f"{counted(count, 'stored note')} {noun_for(count, 'is', 'are')} kept"
        note = f"; its {kept_notes}" if count else ""
        report.unreadable.append((folder, reason + note))
    store.record_rejections(conn, table, [(f, clean_text(r), "") for f, r in report.unreadable])


@dataclass
class _Moves:
    """The notes a sync deletes, by content hash: a new file with one of these hashes is that
    note moved to a new path, reported as renamed (its old path goes to ``away``)."""

    deleted: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))
    away: set[str] = field(default_factory=set)

    def claim(self, content_hash: str) -> str | None:
        """The deleted path whose note holds ``content_hash``, once; None when none is left."""
        paths = self.deleted.get(content_hash)
        if not paths:
            return None
        old = paths.popleft()
        self.away.add(old)
        return old


def _remove(
    conn: psycopg.Connection, table: str, changes: ChangeSet, stored: Mapping[str, str],
    report: SyncReport,
) -> _Moves:  # fmt: skip
    """Delete the notes gone from the source and move the renamed ones. Only stored notes count
    as deleted (a rejected file that is gone just loses its rejection)."""
    moves = _Moves()
    if changes.deleted:
        report.deleted = sorted(p for p in changes.deleted if p in stored)
        report.forgotten = sorted(p for p in changes.deleted if p not in stored)
        for path, digest in sorted(store.stored_hashes(conn, table, report.deleted).items()):
            moves.deleted[digest].append(path)
        store.delete_docs(conn, table, changes.deleted)
    if changes.renamed:
        store.rename_docs(conn, table, changes.renamed)
        store.move_rejections(conn, table, changes.renamed)
        report.renamed = [(old, new) for old, new in changes.renamed if old in stored]
    return moves


def _write_docs(
    conn: psycopg.Connection,
    table: str,
    changes: ChangeSet,
    accepted: list[ParsedDoc],
    rejected: list[Rejection],
    moves: _Moves,
    report: SyncReport,
) -> None:
    """Write one batch of parsed files and record its rejections. A new path holding the
    content of a note deleted in this sync is that note, renamed or moved."""
    hashes = store.stored_hashes(conn, table, [d.path for d in accepted])
    for doc in accepted:
        if doc.path not in hashes:
            if (old := moves.claim(doc.content_hash)) is not None:
                report.renamed.append((old, doc.path))
            else:
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
    report.rejected += [(r.path, r.reason) for r in rejected]
    report.warnings += [(d.path, warning) for d in accepted for warning in d.warnings]


def _finish(
    conn: psycopg.Connection, source: Source, changes: ChangeSet, report: SyncReport
) -> None:
    """Record unreadable folders, count what stayed unchanged and move the synced head."""
    table = source.table
    _record_unreadable_folders(conn, table, changes, report)
    # Reported by this run: read now, or a folder or settings file found unreadable now.
    read = {path for path, _ in report.rejected + report.unreadable}
    report.still_rejected = [
        (path, reason) for path, reason in store.rejections(conn, table)
        if not path.endswith("/") and path not in read  # a folder's entry is no file
    ]  # fmt: skip
    warned = {path for path, _ in report.warnings}  # read now: the others were stored before
    report.still_warned = [p for p, _ in store.note_warnings(conn, table) if p not in warned]
    moved = {new for _, new in report.renamed} - set(report.changed)
    report.unchanged = (
        store.raw_count(conn, table) - len(report.new) - len(report.changed) - len(moved)
    )
    if report.wrote_anything or changes.base != changes.head:
        store.set_sync_state(conn, source.key, changes.head, table, source.location)
