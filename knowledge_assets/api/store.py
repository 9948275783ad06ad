"""Database sessions of the API: searches read as ``ka_reader`` (read-only), answers are recorded
as ``ka_qa_writer`` (may only read and append to ``qa.history``).

Short reads (searches, notes, tags, history) borrow connections from the server's
:class:`ReaderStore`, kept open between requests; a hybrid search borrows two and runs its keyword
and vector legs at once. Questions keep a connection of their own while the LLM answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg

from knowledge_assets.core.database import db
from knowledge_assets.core.failures import first_line
from knowledge_assets.mcp.reader import (
    STATEMENT_TIMEOUT_MS,
    ReaderStore,
    is_unreachable,
    open_reader,
    over_limits,
)

# Connections the server keeps for short reads: four hybrid searches at once, each on two.
POOLED_READERS = 8
T = TypeVar("T")

ROLE_HINT = (
    "run `knowledge-assets migrate` as a user that may create roles (it creates ka_reader and "
    "ka_qa_writer), or create them by hand and set KA_READER_URL / KA_QA_WRITER_URL"
)


class StoreUnavailable(RuntimeError):
    """The API cannot reach the store as one of its roles; the message says how to fix it."""


class ReadTimedOut(RuntimeError):
    """A read ran over the statement timeout (a long update holding a lock, or a very broad
    query) and was cancelled: the client may try again."""


class QueryTooComplex(ValueError):
    """The server refused the query as over one of its limits (class 54: stack depth, a value
    too big): the client should shorten it."""


@contextmanager
def reader(url: str) -> Iterator[psycopg.Connection]:
    """A read-only session as ``ka_reader``."""
    try:
        conn = open_reader(url)
    except psycopg.OperationalError as exc:
        raise _unavailable("the read-only role", exc) from None
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
    cannot be reached, ReadTimedOut when a read runs over the statement timeout, and
    QueryTooComplex when the server refuses the query as over one of its limits."""
    try:
        if pair:
            return readers.run_pair(fn)
        return readers.run(lambda conn: fn(conn, None))
    except psycopg.errors.QueryCanceled:
        seconds = STATEMENT_TIMEOUT_MS // 1000
        raise ReadTimedOut(
            f"the read ran over {seconds} s and was cancelled: the store may be busy with an"
            " update; try again, or narrow the query"
        ) from None
    except psycopg.Error as exc:
        if isinstance(exc, psycopg.OperationalError) and is_unreachable(exc):
            raise _unavailable("the read-only role", exc) from None
        if over_limits(exc):  # an OperationalError too
            raise QueryTooComplex(
                f"the query is too complex to search ({first_line(exc)}); shorten it"
            ) from None
        raise


@contextmanager
def writer(url: str) -> Iterator[psycopg.Connection]:
    """A session as ``ka_qa_writer``; commits on a clean exit."""
    try:
        conn = psycopg.connect(url, connect_timeout=10, application_name="knowledge-assets-api")
    except psycopg.OperationalError as exc:
        raise _unavailable("the history writer", exc) from None
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
        problems.append(first_line(exc))
    try:
        with writer(writer_url) as conn:
            conn.execute("SELECT 1 FROM qa.history LIMIT 1")
    except (StoreUnavailable, psycopg.Error) as exc:
        problems.append(first_line(exc))
    return problems


# Refusals that are about the role itself (its name, password or database), not the server. A
# refusal while connecting comes without an SQLSTATE in psycopg, so its text is read too.
_ROLE_STATES = ("28000", "28P01", "3D000")
_ROLE_REFUSED = re.compile(
    r'role "[^"]*" does not exist|authentication failed|pg_hba\.conf|database "[^"]*" does not'
    r" exist|permission denied"
)
DOWN_HINT = (
    "check that Postgres is running (DATABASE_URL; or the embedded store, which `knowledge-assets"
    " serve` starts), then retry"
)


def _unavailable(role: str, exc: psycopg.OperationalError) -> StoreUnavailable:
    """Why the store cannot be used as ``role``, with the fix that fits: a role refused, or a
    server that is not there (a missing socket is no reason to create roles by hand)."""
    if exc.sqlstate in _ROLE_STATES or _ROLE_REFUSED.search(str(exc)):
        return StoreUnavailable(f"cannot connect as {role}: {first_line(exc)}; {ROLE_HINT}")
    return StoreUnavailable(
        f"the knowledge store cannot be reached: {first_line(exc)}; {DOWN_HINT}"
    )
