"""One writer at a time per store: a Postgres advisory lock around every write step.

Runs start from many places (the sensor, the nightly schedule, a backfill, ``demo``, the CLI)
and two of them on one store used to interleave: both reported the same notes as new and one
died in a deadlock while rebuilding an index. Each writing step now holds a session-level
advisory lock for as long as it writes. The lock belongs to the connection, so a run that is
killed (or whose database restarts) releases it with its connection; nothing is left to clean up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

LOCK_NAME = "knowledge_assets.store.write"
TIMEOUT_ENV = "KA_STORE_LOCK_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 3600.0
POLL_S = 0.5
REPORT_EVERY_S = 30.0


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


def holder(conn: psycopg.Connection) -> str:
    """Who holds the write lock, for messages: ``pid N (application)``, or ``nobody``."""
    row = conn.execute(
        "SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objid = hashtext(%s)::oid"
        " AND a.pid <> pg_backend_pid() LIMIT 1",
        (LOCK_NAME,),
    ).fetchone()
    if not conn.autocommit:
        conn.commit()
    if row is None:
        return "nobody"
    return f"pid {row[0]}" + (f" ({row[1]})" if row[1] else "")


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
        if on_wait is not None and now >= next_report:
            on_wait(f"waiting for another run to finish writing to the store ({holder(conn)})")
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
