"""One writer at a time per store: a Postgres advisory lock around every write step.

Runs start from many places (the sensor, the nightly schedule, a backfill, ``demo``, the CLI)
and two of them on one store used to interleave: both reported the same notes as new and one
died in a deadlock while rebuilding an index. Each writing step now holds a session-level
advisory lock for as long as it writes. The lock belongs to the connection, so a run that is
killed (or whose database restarts) releases it with its connection; nothing is left to clean up.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

LOCK_NAME = "knowledge_assets.store.write"
TIMEOUT_ENV = "KA_STORE_LOCK_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 3600.0
POLL_S = 0.5
REPORT_EVERY_S = 30.0


# Who is told, in this process, that a writing step waits: see :func:`waits_told`.
_listeners: list[Callable[[str], None]] = []


class StoreBusy(RuntimeError):
    """Another run kept the store's write lock for longer than we were willing to wait."""


def lock_timeout_s() -> float:
    """How long a step waits for the write lock (``KA_STORE_LOCK_TIMEOUT_S``, default 1 hour)."""
    value = os.environ.get(TIMEOUT_ENV)
    try:
        return float(value) if value else DEFAULT_TIMEOUT_S
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV} must be a number of seconds, not {value!r}") from None


def _try_lock(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (LOCK_NAME,)).fetchone()
    if not conn.autocommit:
        conn.commit()  # the session lock outlives the transaction; no snapshot is kept open
    return bool(row and row[0])


def _holder(conn: psycopg.Connection) -> tuple[int, str] | None:
    """(pid, application name) of the session holding the write lock, or None."""
    row = conn.execute(
        "SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objid = hashtext(%s)::oid"
        " AND a.pid <> pg_backend_pid() LIMIT 1",
        (LOCK_NAME,),
    ).fetchone()
    if not conn.autocommit:
        conn.commit()
    return (int(row[0]), str(row[1] or "")) if row else None


def holder(conn: psycopg.Connection) -> str:
    """Who holds the write lock, for messages: ``pid N (application)``, or ``nobody``."""
    found = _holder(conn)
    if found is None:
        return "nobody"
    pid, name = found
    return f"pid {pid}" + (f" ({name})" if name else "")


def _in_progress(conn: psycopg.Connection) -> str | None:
    """The run holding the write lock as a waiting one names it: ``run 694053fe at embeddings,
    pid 4242`` (a writing step's connection is named after its run: resources.PostgresResource),
    else ``pid 4242 (its application)``; None when it was released meanwhile."""
    found = _holder(conn)
    if found is None:
        return None
    pid, name = found
    if name.startswith(RUN_NAME_PREFIX):
        return f"{name.removeprefix('knowledge-assets ')}, pid {pid}"
    return f"pid {pid}" + (f" ({name})" if name else "")


# How a writing step names its connection: ``knowledge-assets run 694053fe at embeddings``.
RUN_NAME_PREFIX = "knowledge-assets run "


@contextmanager
def store_write_lock(
    conn: psycopg.Connection,
    *,
    timeout_s: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold the store's write lock on ``conn`` for the block, waiting at most ``timeout_s``.

    Take it first on a fresh connection: waiting commits, and so does releasing it after a block
    that ended cleanly (a block that raised is rolled back first).

    ``on_wait`` hears, when the lock is taken and then every 30 s, who holds it. Raises
    :class:`StoreBusy` when the wait runs out; nothing was written then.
    """
    limit = lock_timeout_s() if timeout_s is None else timeout_s
    start = clock()
    next_report = start
    while not _try_lock(conn):
        now = clock()
        if now - start >= limit:
            raise StoreBusy(
                f"another run has been writing to the knowledge store for over {limit:.0f} s "
                f"({holder(conn)}); try again when it has finished, or raise {TIMEOUT_ENV}"
            )
        running = _in_progress(conn) if on_wait is not None and now >= next_report else None
        if on_wait is not None and running is not None:  # None: released, taken at the next try
            on_wait(f"waiting for the run in progress ({running}) to finish writing to the store")
            next_report = now + REPORT_EVERY_S
        sleep(POLL_S)
    try:
        yield
    except BaseException:
        if not (conn.closed or conn.broken):
            conn.rollback()  # the unlock below commits: never let it commit half a step
        raise
    finally:
        _unlock(conn)


def _unlock(conn: psycopg.Connection) -> None:
    """Release the lock if the session still works (a broken one has already released it)."""
    if conn.closed or conn.broken:
        return
    try:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            conn.rollback()
        conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (LOCK_NAME,))
        if not conn.autocommit:
            conn.commit()
    except psycopg.Error:
        pass  # the connection is closed right after; closing releases the lock too


def tell_wait(message: str) -> None:
    """Tell whoever asked (:func:`waits_told`) that a writing step of this process waits; with
    no one, a terminal on stderr."""
    if _listeners:
        for listener in list(_listeners):
            listener(message)
    elif sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


@contextmanager
def waits_told() -> Iterator[None]:
    """For the block, a step of this process that waits for another run's write lock says so
    in one line on this process's stderr as it is now: ``update`` and ``demo`` keep Dagster's
    log quiet, and while a run executes Dagster captures the step's stderr into its log files
    (so a step's own ``sys.stderr`` is no terminal, and its lines show up late if at all). A
    copy of the descriptor, taken before the run, still reaches the terminal, a pipe or a file."""
    try:
        out: io.TextIOWrapper | None = os.fdopen(
            os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace"
        )
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        out = None  # no descriptor (a test's StringIO): write to it as it is

    def tell(message: str) -> None:
        try:
            print(message, file=out or sys.stderr, flush=True)
        except (OSError, ValueError):  # nobody reads stderr any more: the run goes on
            pass

    _listeners.append(tell)
    try:
        yield
    finally:
        _listeners.remove(tell)
        if out is not None:
            out.close()
