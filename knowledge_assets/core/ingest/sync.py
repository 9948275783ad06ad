"""Sync a source into its raw table: fetch only what changed, parse, upsert, delete, record rejections.

All writes of one sync happen in one transaction, so a failure (an unreachable source, a wrong
token) leaves the store exactly as it was. Files are written a batch at a time as they are
parsed, so a first sync of a large vault never holds every note's text at once.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import psycopg

from knowledge_assets.core.counts import counted, noun_for
from knowledge_assets.core.ingest import store
from knowledge_assets.core.ingest.deletion_guard import DeletionGuard, refuse_to_empty
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
    forgotten: list[str] = field(default_factory=list)  # rejected files gone: never stored
    rejected: list[tuple[str, str]] = field(default_factory=list)
    # Files rejected before and not read again (unchanged since): still rejected all the same.
    still_rejected: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    # (path, warning) of the notes read in this sync that were stored with a warning (a
    # frontmatter key written twice), and the paths of other notes stored with one before.
    warnings: list[tuple[str, str]] = field(default_factory=list)
    still_warned: list[str] = field(default_factory=list)
    fetched: int = 0

    @property
    def rejected_files(self) -> int:
        """Every file of the source that is rejected now, read in this sync or not."""
        return len(self.rejected) + len(self.still_rejected)

    @property
    def wrote_anything(self) -> bool:
        return bool(
            self.new or self.changed or self.deleted or self.renamed or self.forgotten
            or self.rejected or self.unreadable
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
    A sync that would delete most of the stored notes is refused (:class:`MassDeletion`).
    """
    table = source.table
    stored = store.stored_versions(conn, table)
    known = store.known_versions(stored, conn, table)
    last = store.last_sync(conn, table)
    conn.commit()
    # Another source key (a prefix or branch since changed) wrote the table last: its changes
    # are in no diff of this key's commits, so compare the whole tree.
    other = last is not None and last.key != source.key
    base = None if full or other else (since or store.sync_state(conn, source.key))
    changes = source.changes(base, known)
    refuse_to_empty(source, len(stored), changes)
    guard = DeletionGuard(source, stored, changes, last)
    # Before anything is read: too many deletions for the new files to be renames of them all.
    guard.check(guard.certain, guard.deleting)
    _reread_case_duplicates(set(stored), known, changes)
    report = SyncReport(source=source.key, head=changes.head, base=base)
    losers = _case_losers(set(stored), changes)
    progress = progress or Progress("raw_docs", "files")
    with conn.transaction():
        moves = _remove(conn, table, changes, stored, report)
        for parsed in _fetch_and_parse(source, changes, max_bytes, report, progress):
            _write_docs(conn, table, changes, *_split(parsed, losers), moves, report)
        report.deleted = [path for path in report.deleted if path not in moves.away]
        # Renames are known now (a new path with a deleted note's content): raising here rolls
        # back the deletions with the rest of the transaction.
        guard.check(len(report.deleted))
        _finish(conn, source, changes, report)
    return report


# Files per parse task, at most: the tasks in flight bound what a sync holds in memory.
MAX_PARSE_BATCH = 500


def _fetch_and_parse(
    source: Source, changes: ChangeSet, max_bytes: int, report: SyncReport, progress: Progress
) -> Iterator[list[ParsedDoc | Rejection]]:
    """Read every file to fetch, in order, while worker processes parse what was read (a large
    sync; a small one parses as it reads); yields the parsed files in order, a batch at a time,
    once a few batches are waiting."""
    progress.start(len(changes.fetch))
    with parse_pool_for(len(changes.fetch), max_bytes) as pool:
        size = min(batch_size(len(changes.fetch), pool.workers), MAX_PARSE_BATCH)
        ahead = 2 * pool.workers
        results: deque[Callable[[], list[ParsedDoc | Rejection]]] = deque()
        files: list[tuple[str, bytes]] = []
        for path in changes.fetch:
            data = _read_one(source, path)
            if isinstance(data, Rejection):
                results += [pool.submit(files), _ready([data])]
                files = []
            else:
                files.append((path, data))
                if len(files) >= size:
                    results.append(pool.submit(files))
                    files = []
            report.fetched += 1
            progress.advance()
            while len(results) > ahead:
                yield results.popleft()()
        results.append(pool.submit(files))
        while results:
            yield results.popleft()()


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


def _same_file_key(path: str) -> str:
    """What a path is on a file system that ignores case and Unicode normalization (macOS,
    Windows): ``Note.md`` and ``note.md``, or が as one character (NFC) and as か plus a
    combining mark (NFD), name the same file there."""
    return unicodedata.normalize("NFC", path).casefold()


def _case_losers(stored: set[str], changes: ChangeSet) -> dict[str, str]:
    """Paths equal but for case or Unicode normalization collide on such file systems: keep
    one, reject the rest. Returns each rejected path's kept path.

    The path already stored wins; otherwise the first in sorted order, so the choice is stable.
    """
    present = changes.present if changes.present is not None else _present(stored, changes)
    groups: dict[str, list[str]] = defaultdict(list)
    for path in present:
        groups[_same_file_key(path)].append(path)
    losers: dict[str, str] = {}
    for paths in groups.values():
        if len(paths) > 1:
            keep = min(paths, key=lambda p: (p not in stored, p))
            losers.update({p: keep for p in paths if p != keep})
    return losers


def _reread_case_duplicates(stored: set[str], known: dict[str, str], changes: ChangeSet) -> None:
    """Add to ``changes.fetch`` the rejected paths that collided (:func:`_same_file_key`) with a
    path this sync deletes or renames away: an unchanged rejected file is otherwise never read
    again, so the loser of a collision would stay rejected after its winner is gone.

    Their recorded version is the one they had when rejected; they were not read since, so it
    is still theirs.
    """
    gone = {_same_file_key(p) for p in [*changes.deleted, *(old for old, _ in changes.renamed)]}
    if not gone:
        return
    skip = set(changes.fetch) | set(changes.deleted)
    freed = [
        path for path in known
        if path not in stored and path not in skip and _same_file_key(path) in gone
        and not path.endswith("/")  # an unreadable folder's entry, not a file
    ]  # fmt: skip
    changes.fetch = sorted([*changes.fetch, *freed])
    changes.versions.update({path: known[path] for path in freed})


def _split(
    parsed: list[ParsedDoc | Rejection], losers: dict[str, str]
) -> tuple[list[ParsedDoc], list[Rejection]]:
    """Parsed files to write, and rejections (case duplicates among them)."""
    accepted: list[ParsedDoc] = []
    rejected: list[Rejection] = []
    for item in parsed:
        if item.path in losers:
            kept = losers[item.path]
            how = "case" if item.path.casefold() == kept.casefold() else "Unicode normalization"
            reason = f"duplicate of {kept} (paths differ only in {how})"
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
    read = {path for path, _ in report.rejected}
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
