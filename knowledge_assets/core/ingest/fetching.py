"""Read the files a sync fetches and parse them: worker processes parse one batch while the next
is read, and the parsed files come back in order a few batches at a time, so a first sync of a
large vault never holds every note's text at once. A file that cannot be read becomes its
rejection; a source that cannot be reached at all ends the sync."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator

from knowledge_assets.core.ingest.frontmatter import clean_text
from knowledge_assets.core.ingest.parse_pool import parse_pool_for
from knowledge_assets.core.ingest.parsing import ParsedDoc, Rejection, too_large
from knowledge_assets.core.ingest.sync_report import SyncReport
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.sources.base import ChangeSet, FileTooLarge, Source, UnreadableFile
from knowledge_assets.core.workers import batch_size

# Files per parse task, at most: the tasks in flight bound what a sync holds in memory.
MAX_PARSE_BATCH = 500


def fetch_and_parse(
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
            data = _read_one(source, path, max_bytes)
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


def _read_one(source: Source, path: str, max_bytes: int) -> bytes | Rejection:
    """Read one file; a file that cannot be read, or is over ``max_bytes``, becomes its
    rejection (an oversized one as the parser words it, not read again until it changes).

    A ``SourceError`` other than :class:`UnreadableFile` (the source as a whole is unreachable)
    still ends the sync before anything is written.
    """
    if clean_text(path) != path:
        reason = "file name is not valid UTF-8 (or holds a NUL): rename the file"
        return Rejection(clean_text(path), reason, retry=True)
    try:
        return source.read(path, max_bytes)
    except FileTooLarge as exc:
        return too_large(path, exc.size, max_bytes)
    except UnreadableFile as exc:
        return Rejection(path, str(exc), retry=True)
    except OSError as exc:
        return Rejection(path, f"cannot be read: {exc.strerror or type(exc).__name__}", retry=True)
