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

from knowledge_assets.core import db
from knowledge_assets.core.embedders.base import Embedder

READER_ROLE = "ka_reader"
READER_URL_ENV = "KA_READER_URL"
STATEMENT_TIMEOUT_MS = 30_000
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


class ReaderStore:
    """One lazily opened read-only connection and the query embedders, per server process.

    Tool calls are serialised on the connection (a personal server sees one client at a time).
    A connection that broke (the database restarted) is replaced and the call retried once.
    """

    def __init__(self, url: str | None = None) -> None:
        self._url = url
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self._embedders: dict[str, Embedder] = {}

    @property
    def url(self) -> str:
        """The reader URL, resolved on first use (this may start the embedded Postgres)."""
        if self._url is None:
            self._url = reader_url()
        return self._url

    def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Call ``fn`` with the connection; the read-only transaction ends afterwards."""
        with self._lock:
            for attempt in range(2):
                conn = self._connection()
                try:
                    return fn(conn)
                except psycopg.OperationalError:
                    if attempt or not (conn.closed or conn.broken):
                        raise
                    self._discard()
                    time.sleep(0.5)
                finally:
                    if not (conn.closed or conn.broken):
                        conn.rollback()
        raise AssertionError("unreachable")

    def cached_embedder(self, model: str, load: Callable[[], Embedder | None]) -> Embedder | None:
        """The query embedder of ``model``, built by ``load`` once per process."""
        if model not in self._embedders:
            embedder = load()
            if embedder is None:
                return None
            self._embedders[model] = embedder
        return self._embedders[model]

    def close(self) -> None:
        """Close the connection if one is open."""
        with self._lock:
            self._discard()

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._discard()
            self._conn = open_reader(self.url)
        return self._conn

    def _discard(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None
