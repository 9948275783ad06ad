"""Whether a model's embedding pass over every chunk can stop before counting: the last pass that
found every chunk text embedded recorded the snapshot it counted in (``rag.embedding_checks``),
and every transaction that changes ``rag.chunks`` or removes inputs or vectors leaves its id in
``rag.index_writes`` (statement triggers, sql/013). No id invisible to that snapshot means the
count it made still holds: nothing can be missing. Counting 194,000 chunk texts took 0.2 s per
query; this check reads a table of a few rows. When there were changes, the next count starts
from the last one and the texts they touched (:mod:`knowledge_assets.core.index.text_changes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from knowledge_assets.core.index import text_changes

# A pass that counted this long ago and never finished (its process died) no longer holds back
# the pruning of change records.
STALE_PASS = "7 days"


@dataclass(frozen=True)
class Count:
    """Distinct chunk texts, how many have vectors and the hashes of those without (None when
    there were too many to list), as one statement's snapshot saw them; ``passes`` are the
    ``rag.embedding_passes`` rows this pass registered (one per count), released when it
    records its outcome."""

    snapshot: str
    total: int
    done: int
    missing: list[str] | None
    passes: tuple[int, ...] = ()


def count(
    conn: psycopg.Connection, model: str, template: str, after: Count | None = None,
    list_up_to: int = 0,
) -> Count:  # fmt: skip
    """Count every distinct chunk text and those embedded with ``model`` under ``template``,
    and list the others if there are at most ``list_up_to``, with the snapshot the count was
    made in. ``after``: this pass's previous count, when it counts again.

    From a count that still holds but for logged changes (``after``, or the model's last
    complete pass), only the texts those changes touched are looked at
    (:mod:`knowledge_assets.core.index.text_changes`); otherwise every chunk text is counted, in
    one statement (the join comes out in hash order, so grouping needs no sort, and a few texts
    to embed need no second pass over the chunks).

    The pass is registered with its snapshot under the recorders' lock, so no other pass that
    records meanwhile drops a change record this one has not seen. Commits the caller's open
    reads first, so the lock is held for this count alone.
    """
    conn.commit()
    with conn.transaction():
        _lock(conn)
        base = after or last_check(conn, model, template)
        found = text_changes.recount(conn, model, template, base) if base else None
        snapshot, total, done, missing = found or _count_all(conn, model, template, list_up_to)
        registered = conn.execute(
            "INSERT INTO rag.embedding_passes (model, template, counted)"
            " VALUES (%s, %s, %s::pg_snapshot) RETURNING id",
            (model, template, snapshot),
        ).fetchone()
    assert registered is not None
    passes = (after.passes if after else ()) + (int(registered[0]),)
    listed = missing if missing is not None and len(missing) <= list_up_to else None
    return Count(snapshot, total, done, listed, passes)


def _count_all(
    conn: psycopg.Connection, model: str, template: str, list_up_to: int
) -> tuple[str, int, int, list[str] | None]:
    """(snapshot, distinct chunk texts, those with a vector, the others when at most
    ``list_up_to``) over every chunk."""
    row = conn.execute(
        "SELECT pg_current_snapshot()::text, count(*), count(*) FILTER (WHERE g.embedded),"
        " CASE WHEN count(*) FILTER (WHERE NOT g.embedded) <= %s THEN"
        "  coalesce(array_agg(g.text_hash) FILTER (WHERE NOT g.embedded), '{}') END"
        " FROM (SELECT c.text_hash, bool_or(i.chunk_hash IS NOT NULL) AS embedded"
        "  FROM rag.chunks c LEFT JOIN rag.embedding_inputs i ON i.model = %s"
        "   AND i.template = %s AND i.chunk_hash = c.text_hash AND i.part = 0"
        "  GROUP BY c.text_hash) g",
        (list_up_to, model, template),
    ).fetchone()
    assert row is not None  # an aggregate always returns its row
    return str(row[0]), int(row[1]), int(row[2]), None if row[3] is None else list(row[3])


def last_check(conn: psycopg.Connection, model: str, template: str) -> Count | None:
    """The model's last complete pass under ``template`` as a count with nothing missing."""
    row = conn.execute(
        "SELECT checked::text, texts FROM rag.embedding_checks WHERE model = %s AND template = %s",
        (model, template),
    ).fetchone()
    return Count(str(row[0]), int(row[1]), int(row[1]), []) if row else None


def _lock(conn: psycopg.Connection) -> None:
    # Recorders and counters take turns, so none drops a change record another still needs.
    conn.execute("LOCK TABLE rag.embedding_checks IN SHARE ROW EXCLUSIVE MODE")


def still_complete(conn: psycopg.Connection, model: str, template: str) -> int | None:
    """The number of distinct chunk texts, when the last complete pass of ``model`` under
    ``template`` still holds (search reads that template and nothing changed since); else None."""
    row = conn.execute(
        "SELECT k.texts FROM rag.embedding_checks k JOIN rag.models m ON m.model = k.model"
        " WHERE k.model = %s AND k.template = %s AND m.template = k.template"
        " AND m.completed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM rag.index_writes w"
        "  WHERE NOT pg_visible_in_snapshot(w.xid, k.checked))",
        (model, template),
    ).fetchone()
    return int(row[0]) if row else None


def known_counts(conn: psycopg.Connection, model: str, template: str) -> tuple[int, int] | None:
    """(distinct chunk texts, of which embedded with ``model`` under ``template``) from the
    model's last complete pass and the logged changes since; None when only counting every
    chunk text can tell (no complete pass, or a change since that was not logged)."""
    texts = still_complete(conn, model, template)
    return (texts, texts) if texts is not None else counts_since_check(conn, model, template)


def counts_since_check(
    conn: psycopg.Connection, model: str, template: str
) -> tuple[int, int] | None:
    """:func:`known_counts` once the last complete pass is known not to hold as it is: from it
    through the logged changes since; None without one, or with a change that was not logged."""
    base = last_check(conn, model, template)
    found = text_changes.recount(conn, model, template, base) if base else None
    return (found[1], found[2]) if found else None


def changed_since(conn: psycopg.Connection, snapshot: str) -> bool:
    """Whether a transaction the snapshot did not see changed the chunks or removed vectors."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM rag.index_writes w"
        " WHERE NOT pg_visible_in_snapshot(w.xid, %s::pg_snapshot))",
        (snapshot,),
    ).fetchone()
    return bool(row and row[0])


def record(
    conn: psycopg.Connection, model: str, template: str, counted: Count, complete: bool
) -> None:
    """Record a complete pass (the snapshot ``counted`` was made in), or forget the last one;
    release this pass's registrations and those of passes that died long ago; then drop the
    change records that every recorded and every running pass has seen. Runs inside the
    caller's transaction."""
    _lock(conn)
    if complete:
        conn.execute(
            "INSERT INTO rag.embedding_checks (model, template, checked, texts)"
            " VALUES (%s, %s, %s::pg_snapshot, %s) ON CONFLICT (model, template)"
            " DO UPDATE SET checked = EXCLUDED.checked, texts = EXCLUDED.texts",
            (model, template, counted.snapshot, counted.total),
        )
    else:
        conn.execute(
            "DELETE FROM rag.embedding_checks WHERE model = %s AND template = %s", (model, template)
        )
    conn.execute(
        "DELETE FROM rag.embedding_passes WHERE id = ANY(%s) OR started_at < now() - %s::interval",
        (list(counted.passes), STALE_PASS),
    )
    conn.execute(
        "DELETE FROM rag.index_writes w WHERE NOT EXISTS (SELECT 1 FROM rag.embedding_checks k"
        " WHERE NOT pg_visible_in_snapshot(w.xid, k.checked)) AND NOT EXISTS (SELECT 1"
        " FROM rag.embedding_passes p WHERE NOT pg_visible_in_snapshot(w.xid, p.counted))"
    )
    text_changes.prune(conn)
