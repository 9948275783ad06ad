"""The MCP server's side of the store: a read-only ``ka_reader`` connection and note-path checks.

The server connects as the ``ka_reader`` role (created by ``sql/002_search.sql`` with SELECT-only
grants and ``default_transaction_read_only``) and also marks its own session read-only, so neither
a bug nor a crafted tool argument can change the store. Nothing here touches the database until
the first tool call.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders.base import Embedder

READER_ROLE = "ka_reader"
READER_URL_ENV = "KA_READER_URL"
STATEMENT_TIMEOUT_MS = 30_000
# Tool calls run in threads; each gets its own connection, up to this many at once.
MAX_CONNECTIONS = 4
BUSY_WAIT_S = 10.0
MAX_PATH_CHARS = 1024
_DRIVE_OR_SCHEME = re.compile(r"^(?:[A-Za-z]:|[A-Za-z][A-Za-z0-9+.-]*://)")

T = TypeVar("T")


class PathRefused(ValueError):
    """A note path that does not name a file inside the store (absolute, ``..``, empty, ...)."""


def reader_url(store_url: str | None = None) -> str:
    """The URL the server connects with.

    ``KA_READER_URL`` when set (a hosted Postgres where ``ka_reader`` has a password); otherwise
    the store URL (argument, ``DATABASE_URL`` or the embedded server) with the user replaced by
    ``ka_reader`` and any password dropped, which works with the embedded server's trust auth.
    """
    override = os.environ.get(READER_URL_ENV)
    if override:
        db.check_url(override, READER_URL_ENV)
        return override
    info = conninfo_to_dict(store_url or db.resolve_url())
    info["user"] = READER_ROLE
    info.pop("password", None)
    return make_conninfo("", **info)


def open_reader(url: str) -> psycopg.Connection:
    """Connect, make every transaction of the session read-only and bound each statement."""
    conn = psycopg.connect(url, connect_timeout=10, application_name="knowledge-assets-mcp")
    try:
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false)", (str(STATEMENT_TIMEOUT_MS),)
        )
        db.configure(conn, read_only=True)
    except BaseException:
        conn.close()
        raise
    return conn


def check_note_path(file_path: str) -> str:
    """The vault-relative POSIX form of ``file_path``; raises PathRefused for anything that
    could point outside the store: absolute paths, drive letters, URLs, ``..``, NUL bytes."""
    path = file_path.strip().replace("\\", "/")
    if not path:
        raise PathRefused("file_path is empty; pass a vault-relative path such as 'notes/a.md'")
    if len(path) > MAX_PATH_CHARS or "\x00" in path:
        raise PathRefused("file_path is not a valid note path")
    if path.startswith(("/", "~")) or _DRIVE_OR_SCHEME.match(path):
        raise PathRefused(
            f"refused {file_path!r}: only vault-relative paths are served (no leading '/', '~', "
            "drive letter or URL); use the path exactly as search_docs returns it"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused(f"refused {file_path!r}: '..' would leave the vault")
    if not parts:
        raise PathRefused(f"refused {file_path!r}: not a note path")
    return "/".join(parts)


class ServerBusy(RuntimeError):
    """Every reader connection stayed busy for longer than a call may wait."""


class ReaderStore:
    """Read-only connections opened on demand, at most ``max_connections`` at once, and the
    query embedders, per server process.

    Each call gets a connection of its own, so a slow call does not hold up the others; a call
    that finds every connection busy waits at most ``wait_s``. A search may also get a second
    connection (:meth:`run_pair`) to run its keyword and vector legs at the same time. When a
    connection broke (the database restarted), the call is retried once on fresh connections.
    Connections are opened in the calling thread, so an unreachable store fails the call at once
    with the real reason; psycopg_pool connects in a background worker and reports an
    unreachable store only as a timeout after the whole wait, and would add a dependency for what
    is a handful of connections.
    """

    def __init__(
        self, url: str | None = None, *, max_connections: int = MAX_CONNECTIONS,
        wait_s: float = BUSY_WAIT_S,
    ) -> None:  # fmt: skip
        self._url = url
        self._idle: list[psycopg.Connection] = []
        self._mutex = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._max = max_connections
        self._wait_s = wait_s
        self._embedders: dict[str, Embedder] = {}

    @property
    def url(self) -> str:
        """The reader URL, resolved on first use (this may start the embedded Postgres)."""
        with self._mutex:
            if self._url is None:
                self._url = reader_url()
            return self._url

    def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Call ``fn`` with a connection of its own; the read-only transaction ends afterwards."""
        return self._run(lambda conn, _companion: fn(conn), pair=False)

    def run_pair(self, fn: Callable[[psycopg.Connection, psycopg.Connection | None], T]) -> T:
        """Call ``fn`` with a connection and a second one for work that can run alongside
        (``core.search``'s ``companion``), or None when no other connection is free right now:
        a second one is never waited for, as ``fn`` can do without it."""
        return self._run(fn, pair=True)

    def _run(
        self, fn: Callable[[psycopg.Connection, psycopg.Connection | None], T], *, pair: bool
    ) -> T:
        if not self._slots.acquire(timeout=self._wait_s):
            raise ServerBusy(
                f"all {self._max} store connections stayed busy for {self._wait_s:.0f} s; "
                "retry in a moment"
            )
        second = pair and self._slots.acquire(blocking=False)
        try:
            for attempt in range(2):
                conn = self._checkout()
                companion = self._companion() if second else None
                try:
                    return fn(conn, companion)
                except psycopg.OperationalError:
                    if attempt or not any(_broken(c) for c in (conn, companion) if c is not None):
                        raise
                finally:
                    self._checkin(conn)
                    if companion is not None:
                        self._checkin(companion)
                # What broke one connection (a restart, terminated backends) broke the others
                # too, unseen until used (an unused companion looks fine): the retry opens
                # fresh ones.
                self.close()
                time.sleep(0.5)
            raise AssertionError("unreachable")
        finally:
            if second:
                self._slots.release()
            self._slots.release()

    def cached_embedder(self, model: str, load: Callable[[], Embedder | None]) -> Embedder | None:
        """The query embedder of ``model``, built by ``load`` once per process."""
        if model not in self._embedders:
            embedder = load()
            if embedder is None:
                return None
            self._embedders[model] = embedder
        return self._embedders[model]

    def warm_up(self, load: Callable[[psycopg.Connection], Embedder | None]) -> threading.Thread:
        """Load the active model's query embedder in a background thread, so the first search
        does not wait for the model (a failure is left for that search to report)."""

        def run() -> None:
            try:
                embedder = self.run(load)
                warm = getattr(embedder, "load", None)
                if warm is not None:  # in-process models read their weights now
                    warm()
            except Exception:  # the first tool call reports the problem with its context
                return

        thread = threading.Thread(target=run, name="ka-model-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Close the idle connections."""
        with self._mutex:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _checkout(self) -> psycopg.Connection:
        with self._mutex:
            while self._idle:
                conn = self._idle.pop()
                if not _broken(conn):
                    return conn
        return open_reader(self.url)

    def _companion(self) -> psycopg.Connection | None:
        # The first connection worked; if a second cannot be had, the call does without it.
        try:
            return self._checkout()
        except psycopg.OperationalError:
            return None

    def _checkin(self, conn: psycopg.Connection) -> None:
        if _broken(conn):
            return
        try:
            conn.rollback()
        except psycopg.Error:
            conn.close()
            return
        with self._mutex:
            self._idle.append(conn)


def is_unreachable(exc: psycopg.OperationalError) -> bool:
    """Could not connect, or the connection went away (as opposed to a query-level failure)."""
    state = exc.sqlstate
    return (
        state is None
        or state.startswith("08")
        or state in ("57P01", "57P02", "57P03", "28000", "28P01", "3D000")
    )


def over_limits(exc: psycopg.Error) -> bool:
    """The server refused the query as over one of its limits (class 54: "stack depth limit
    exceeded", a value too big): the query must be shortened, not retried."""
    return (exc.sqlstate or "").startswith("54")


def _broken(conn: psycopg.Connection) -> bool:
    return conn.closed or conn.broken
