"""Progress of an index build a person can watch.

At 10,000 notes a first build spends over a minute in one ``CREATE INDEX`` of the vectors
(HNSW) and several seconds in one of the keywords (GIN), with no word in the run log. Postgres
reports how far a running build is (``pg_stat_progress_create_index``), so another connection
reads it while the build runs, and a :class:`Progress` turns it into lines with a rate and the
time left. pgvector counts the rows an HNSW build has inserted, over every process of a
parallel build; a GIN build reports only how much of the table it has scanned.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psycopg

from knowledge_assets.core.database.db import Connect
from knowledge_assets.core.progress import Progress

# Often enough for a terminal bar to move, rarely enough to cost nothing next to the build.
POLL_SECONDS = 1.0

_PROGRESS = (
    "SELECT tuples_done, blocks_done, blocks_total FROM pg_stat_progress_create_index"
    " WHERE pid = %s"
)


def run_watched(
    conn: psycopg.Connection,
    build: Callable[[psycopg.Connection], None],
    progress: Progress,
    watch: Connect | None,
    every: float = POLL_SECONDS,
) -> None:
    """Run ``build(conn)`` (one ``CREATE INDEX ... USING hnsw``); while it runs, read its rows
    on a connection from ``watch`` every ``every`` seconds and advance ``progress`` (started
    with the rows to index).

    Watching is best effort: when the second connection cannot be had or read, the build goes
    on unwatched. A failure of the build itself is raised as it was raised. When this thread is
    interrupted (Ctrl-C, a run terminated from the UI), the build is cancelled rather than left
    to finish: it runs in another thread, which the interruption does not reach.
    """
    if watch is None:
        build(conn)
    else:
        pid = conn.info.backend_pid
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ka-index-build") as pool:
            done = pool.submit(build, conn)
            try:
                with contextlib.suppress(psycopg.Error), watch() as observer:
                    follow(done, lambda: pid, progress, observer, every)
                done.result()
            except BaseException:
                if not done.done():
                    with contextlib.suppress(psycopg.Error):  # the interruption is the news
                        conn.cancel_safe()
                raise
    finish(progress)


def follow(
    done: Future[Any], pid: Callable[[], int | None], progress: Progress,
    observer: psycopg.Connection, every: float = POLL_SECONDS, *, pages: bool = False,
) -> None:  # fmt: skip
    """Until ``done`` completes, advance ``progress`` every ``every`` seconds from the index
    build that backend ``pid()`` runs (None: it has not started yet), read on ``observer``.

    ``pages``: by the share of the table the build has scanned, in units of ``progress.total``
    (GIN); else by the rows it has inserted (HNSW). An error of ``observer`` ends the watching
    (rolled back), never the build.
    """
    try:
        while not _wait(done, every):
            backend = pid()
            if backend is None:
                continue
            row = observer.execute(_PROGRESS, (backend,)).fetchone()
            observer.commit()  # statistics are read once per transaction: the next read is fresh
            count = _count(row, progress.total, pages)
            if count > progress.done:
                progress.advance(count - progress.done)
    except psycopg.Error:
        with contextlib.suppress(psycopg.Error):
            observer.rollback()


def finish(progress: Progress) -> None:
    """The build is done: its last rows went in after the last look."""
    if progress.done < progress.total:
        progress.advance(progress.total - progress.done)


def _count(row: tuple[Any, ...] | None, total: int, pages: bool) -> int:
    if row is None:
        return 0
    tuples, blocks, of = row
    if pages:
        # On its first page a heap scan reports every page done (its position wraps around
        # from the start block): a full count means "just started", never "finished".
        return total * int(blocks) // int(of) if blocks and of and blocks < of else 0
    return min(int(tuples or 0), total)


def _wait(done: Future[Any], seconds: float) -> bool:
    """Whether ``done`` completed within ``seconds``."""
    try:
        done.exception(timeout=seconds)
    except TimeoutError:
        return False
    return True
