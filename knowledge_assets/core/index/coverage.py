"""How many passages the active model has no vector for yet: vector search cannot find them and
hybrid search finds them by keyword only, until ``knowledge-assets update`` embeds them (after
an interrupted run, or ``update --no-embeddings``). Search says so in one warning line.

Read on every search, so the usual answer is cheap: when the last complete embedding pass still
holds (:func:`embed_checks.still_complete`, a table of a few rows) nothing can be missing and
nothing is counted. Otherwise the texts the changes since touched are looked at
(:mod:`knowledge_assets.core.index.text_changes`), and only when those changes were not logged
are the distinct chunk texts without an input of the model counted: 65 ms on a store of 194,000
chunks with 1,145 missing (``still_complete`` 0.2 ms).
"""

from __future__ import annotations

import threading
import time

import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.core.index.embed_checks import counts_since_check, still_complete

_MISSING = (
    "SELECT count(*) FROM (SELECT DISTINCT text_hash FROM rag.chunks) c WHERE NOT EXISTS ("
    " SELECT 1 FROM rag.embedding_inputs i WHERE i.model = %s AND i.template = %s"
    "  AND i.chunk_hash = c.text_hash AND i.part = 0)"
)


def unproven(conn: psycopg.Connection) -> tuple[str, str] | None:
    """(model, template) of the active model when its last complete pass may no longer hold
    (chunks changed since, or it never completed), so passages may lack a vector; else None."""
    row = conn.execute("SELECT model, template FROM rag.models WHERE is_active").fetchone()
    if row is None:
        return None
    model, template = str(row[0]), str(row[1])
    return None if still_complete(conn, model, template) is not None else (model, template)


def count_missing(conn: psycopg.Connection, model: str, template: str) -> int:
    """Distinct chunk texts without a vector of ``model`` under ``template``, once
    :func:`unproven` found that its last complete pass does not hold as it is."""
    known = counts_since_check(conn, model, template)
    if known is not None:
        return known[0] - known[1]
    row = conn.execute(_MISSING, (model, template)).fetchone()
    return int(row[0]) if row else 0


def missing_vectors(conn: psycopg.Connection) -> int:
    """Passages (distinct chunk texts) the active model has no vector for; 0 without one."""
    gap = unproven(conn)
    return count_missing(conn, *gap) if gap else 0


class RecentCount:
    """:func:`missing_vectors` for a long-lived process: a count is reused for ``ttl_s`` while
    the store stays incomplete, and the cheap check that it is complete again runs every time."""

    def __init__(self, ttl_s: float = 60.0) -> None:
        self._ttl_s = ttl_s
        self._counts: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()  # tool calls run in threads

    def count(self, conn: psycopg.Connection) -> int:
        """Passages the active model has no vector for, counted at most ``ttl_s`` ago."""
        gap = unproven(conn)
        if gap is None:
            return 0
        with self._lock:
            cached = self._counts.get(gap)
        if cached is None or time.monotonic() - cached[0] > self._ttl_s:
            cached = (time.monotonic(), count_missing(conn, *gap))
            with self._lock:
                self._counts[gap] = cached
        return cached[1]


def missing_warning(missing: int) -> str | None:
    """The warning search gives when ``missing`` passages have no vector, or None."""
    if missing <= 0:
        return None
    verb = "has" if missing == 1 else "have"
    return f"{counted(missing, 'passage')} {verb} no vector yet; run `knowledge-assets update`"
