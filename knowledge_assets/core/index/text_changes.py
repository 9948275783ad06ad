"""Counting a model's chunk texts again from an earlier count, through the texts the changes
since touched (``rag.text_changes``, logged by statement triggers, sql/051), instead of over
every chunk: after a one-note edit of a 10,000-note vault the full count joined 194,330 texts
with their inputs (0.1-0.25 s, growing with the vault); this looks up the edit's few texts.

An earlier count at snapshot S with ``total`` texts and the texts it found ``missing`` holds
but for the logged changes: every text present at S and not missing has a vector unless a
logged change removed its input. A logged text with n chunk rows now, which changes since S
added ``arrived`` and removed ``departed`` of, had n - arrived + departed rows at S; so the
total moves by the logged texts present now minus those present at S, and the missing ones are
the logged (or earlier missing) texts some chunk has and no input covers.
"""

from __future__ import annotations

from typing import Protocol

import psycopg

# Logged changes since the earlier count above which every chunk is counted again: looking up
# this many texts one by one costs about what one pass over 194,000 does.
RECOUNT_MAX = 20_000

# Texts any logged change touched; a text whose input was removed comes with 0 and 0.
_RECOUNT = (
    "WITH touched AS (SELECT x.text_hash, sum(x.arrived) AS a, sum(x.departed) AS d"
    "  FROM (SELECT t.text_hash, t.arrived, t.departed FROM rag.text_changes t"
    "   WHERE NOT pg_visible_in_snapshot(t.xid, %(base)s::pg_snapshot)"
    "   UNION ALL SELECT h, 0, 0 FROM unnest(%(missing)s::text[]) AS h) x"
    "  GROUP BY x.text_hash),"
    " now AS (SELECT t.a, t.d, t.text_hash,"
    "  (SELECT count(*) FROM rag.chunks c WHERE c.text_hash = t.text_hash) AS n,"
    "  EXISTS (SELECT 1 FROM rag.embedding_inputs i WHERE i.model = %(model)s"
    "   AND i.template = %(template)s AND i.chunk_hash = t.text_hash AND i.part = 0) AS embedded"
    "  FROM touched t)"
    " SELECT pg_current_snapshot()::text,"
    "  count(*) FILTER (WHERE n > 0) - count(*) FILTER (WHERE n - a + d > 0),"
    "  coalesce(array_agg(text_hash ORDER BY text_hash) FILTER (WHERE n > 0 AND NOT embedded),"
    "   '{}'),"
    "  EXISTS (SELECT 1 FROM rag.index_writes w WHERE NOT w.texts_logged"
    "   AND NOT pg_visible_in_snapshot(w.xid, %(base)s::pg_snapshot))"
    " FROM now"
)


class Counted(Protocol):
    """An earlier count: its snapshot, distinct texts, and the texts it found without a vector
    (None when there were too many to list)."""

    @property
    def snapshot(self) -> str: ...
    @property
    def total(self) -> int: ...
    @property
    def missing(self) -> list[str] | None: ...


def recount(
    conn: psycopg.Connection, model: str, template: str, base: Counted
) -> tuple[str, int, int, list[str] | None] | None:
    """(snapshot, distinct chunk texts, those with a vector, the others) counted from ``base``
    through the logged changes; None when a change since was not logged (a first build's, a
    large statement's, a truncation) or there are too many, and every chunk must be counted."""
    if base.missing is None or not _logged_since(conn, base.snapshot):
        return None
    row = conn.execute(
        _RECOUNT,
        {"base": base.snapshot, "missing": base.missing, "model": model, "template": template},
    ).fetchone()
    if row is None or row[3]:  # an unlogged change committed since the check above
        return None
    total = base.total + int(row[1])
    missing = list(row[2])
    return str(row[0]), total, total - len(missing), missing


def _logged_since(conn: psycopg.Connection, snapshot: str) -> bool:
    """Whether every change the snapshot did not see was logged, and few enough were."""
    row = conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM rag.index_writes w WHERE NOT w.texts_logged"
        "  AND NOT pg_visible_in_snapshot(w.xid, %(s)s::pg_snapshot)),"
        " (SELECT count(*) FROM (SELECT 1 FROM rag.text_changes t"
        "  WHERE NOT pg_visible_in_snapshot(t.xid, %(s)s::pg_snapshot) LIMIT %(max)s + 1) x)",
        {"s": snapshot, "max": RECOUNT_MAX},
    ).fetchone()
    return bool(row and row[0] and row[1] <= RECOUNT_MAX)


def prune(conn: psycopg.Connection) -> None:
    """Drop the logged texts of changes no count will start from any more (as their change
    records go); if the log still holds more than a recount would read (a model whose passes
    stopped long ago keeps it growing), drop it all and mark its changes unlogged, so a count
    from before them counts every chunk. Runs inside the caller's transaction, after the
    change records were pruned."""
    conn.execute(
        "DELETE FROM rag.text_changes t WHERE NOT EXISTS"
        " (SELECT 1 FROM rag.index_writes w WHERE w.xid = t.xid)"
    )
    row = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM rag.text_changes LIMIT %s + 1) x", (RECOUNT_MAX,)
    ).fetchone()
    if row and row[0] > RECOUNT_MAX:
        # One statement, so the changes marked are exactly those whose texts it drops.
        conn.execute(
            "WITH gone AS (DELETE FROM rag.text_changes RETURNING xid)"
            " UPDATE rag.index_writes w SET texts_logged = false"
            " WHERE w.xid IN (SELECT xid FROM gone)"
        )
