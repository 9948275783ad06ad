"""Progress of an HNSW index build a person can watch.

At 10,000 notes the first build spends over a minute in one ``CREATE INDEX`` statement, with
no word in the run log. Postgres reports how many rows a running build has inserted
(``pg_stat_progress_create_index.tuples_done``; pgvector counts every process of a parallel
build), so a second connection reads it while the build runs, and a :class:`Progress` turns it
into lines with a rate and the time left.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import psycopg

from knowledge_assets.core.database.db import Connect
from knowledge_assets.core.progress import Progress

# Often enough for a terminal bar to move, rarely enough to cost nothing next to the build.
POLL_SECONDS = 1.0

_TUPLES_DONE = "SELECT tuples_done FROM pg_stat_progress_create_index WHERE pid = %s"


def run_watched(
    conn: psycopg.Connection,
    build: Callable[[psycopg.Connection], None],
    progress: Progress,
    watch: Connect | None,
    every: float = POLL_SECONDS,
) -> None:
    """Run ``build(conn)``; while it runs, read its progress on a connection from ``watch``
    every ``every`` seconds and advance ``progress`` (started with the rows to index).

    Watching is best effort: when the second connection cannot be had or read, the build goes
    on unwatched. A failure of the build itself is raised as it was raised.
    """
    if watch is None:
        build(conn)
    else:
        pid = conn.info.backend_pid
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ka-index-build") as pool:
            done = pool.submit(build, conn)
            _follow(done, pid, progress, watch, every)
            done.result()
    if progress.done < progress.total:  # the last rows went in after the last look
        progress.advance(progress.total - progress.done)


def _follow(done: Future[None], pid: int, progress: Progress, watch: Connect, every: float) -> None:
    """Report the build's rows until ``done`` completes (or watching fails)."""
    try:
        with watch() as observer:
            observer.autocommit = True  # each read sees the statistics as they are now
            while not _wait(done, every):
                row = observer.execute(_TUPLES_DONE, (pid,)).fetchone()
                rows = min(int(row[0]), progress.total) if row and row[0] is not None else 0
                if rows > progress.done:
                    progress.advance(rows - progress.done)
    except psycopg.Error:
        return  # the build goes on; its own outcome is what counts


def _wait(done: Future[None], seconds: float) -> bool:
    """Whether ``done`` completed within ``seconds``."""
    try:
        done.exception(timeout=seconds)
    except TimeoutError:
        return False
    return True
