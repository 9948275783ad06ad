"""Database sessions of the API: searches read as ``ka_reader`` (read-only), answers are recorded
as ``ka_qa_writer`` (may only read and append to ``qa.history``).

Short reads (searches, notes, tags, history) borrow connections from the server's
:class:`ReaderStore`, kept open between requests; a hybrid search borrows two and runs its keyword
and vector legs at once. Questions keep a connection of their own while the LLM answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg

from knowledge_assets.core.database import db
from knowledge_assets.mcp.reader import ReaderStore, is_unreachable, open_reader

# Connections the server keeps for short reads: four hybrid searches at once, each on two.
POOLED_READERS = 8
T = TypeVar("T")

ROLE_HINT = (
    "run `knowledge-assets migrate` as a user that may create roles (it creates ka_reader and "
    "ka_qa_writer), or create them by hand and set KA_READER_URL / KA_QA_WRITER_URL"
)


class StoreUnavailable(RuntimeError):
    """The API cannot reach the store as one of its roles; the message says how to fix it."""


@contextmanager
def reader(url: str) -> Iterator[psycopg.Connection]:
    """A read-only session as ``ka_reader``."""
    try:
        conn = open_reader(url)
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"cannot connect as the read-only role: {_first_line(exc)}; {ROLE_HINT}") from None  # fmt: skip
    try:
        yield conn
    finally:
        conn.close()


def pooled(url: str) -> ReaderStore:
    """The server's read-only connections; none is opened before the first request."""
    return ReaderStore(url, max_connections=POOLED_READERS)


def read(
    readers: ReaderStore, fn: Callable[[psycopg.Connection, psycopg.Connection | None], T], *,
    pair: bool = False,
) -> T:  # fmt: skip
    """``fn(conn, companion)`` on pooled connections; ``companion`` is a second connection when
    ``pair`` asks for one and one is free, else None. Raises StoreUnavailable when the store
    cannot be reached."""
    try:
        if pair:
            return readers.run_pair(fn)
        return readers.run(lambda conn: fn(conn, None))
    except psycopg.OperationalError as exc:
        if is_unreachable(exc):
            raise StoreUnavailable(f"cannot connect as the read-only role: {_first_line(exc)}; {ROLE_HINT}") from None  # fmt: skip
        raise


@contextmanager
def writer(url: str) -> Iterator[psycopg.Connection]:
    """A session as ``ka_qa_writer``; commits on a clean exit."""
    try:
        conn = psycopg.connect(url, connect_timeout=10, application_name="knowledge-assets-api")
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"cannot connect as the history writer: {_first_line(exc)}; {ROLE_HINT}") from None  # fmt: skip
    with conn:
        db.configure(conn)
        yield conn


def check_roles(reader_url: str, writer_url: str) -> list[str]:
    """Problems with the two roles, as one-line messages (empty when both work)."""
    problems = []
    try:
        with reader(reader_url) as conn:
            conn.execute("SELECT 1 FROM rag.latest_docs LIMIT 1")
    except (StoreUnavailable, psycopg.Error) as exc:
        problems.append(_first_line(exc))
    try:
        with writer(writer_url) as conn:
            conn.execute("SELECT 1 FROM qa.history LIMIT 1")
    except (StoreUnavailable, psycopg.Error) as exc:
        problems.append(_first_line(exc))
    return problems


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
