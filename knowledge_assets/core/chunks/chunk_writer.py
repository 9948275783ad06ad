"""Set-based chunk writes: a batch of notes' chunks is COPYed into a session-local staging table
and merged into ``rag.chunks`` by one statement (upsert by position, positions past a note's
end removed). The keyword statistics triggers then run once per batch, not once per note.

A chunk whose text (hash) already has tokens made under the same chunker signature gets those
tokens in SQL; only new texts go through the Python tokenizer.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from knowledge_assets.core.chunks.chunk_text import without_link_targets
from knowledge_assets.core.chunks.chunking import Chunk
from knowledge_assets.core.chunks.tokenize import Keywords
from knowledge_assets.core.index.index_build import build_workers, configure_index_build, gin_memory
from knowledge_assets.core.index.index_store import chunk_id, has_index

_STAGE = (
    "CREATE TEMP TABLE chunk_stage (id uuid, document_id uuid, chunk_index int,"
    " heading text, parent_heading text, heading_path text, content text, embedding_text text,"
    " text_hash text, token_estimate int, doc_hash text, chunker_sig text, warning text,"
    " tsv_input text, token_count int, heading_parts text[], url text, meta jsonb)"
    " ON COMMIT DELETE ROWS"
)
# A staged row is read once, by the merge: its long texts stay in the row (up to a page) and
# uncompressed. With Postgres' defaults each tsvector literal was compressed into a TOAST table
# and decompressed again for its one read: staging 80,000 chunks took 5.2-5.5 s of server CPU,
# 3.1 s without.
_STAGE_STORAGE = (
    "ALTER TABLE pg_temp.chunk_stage ALTER content SET STORAGE EXTERNAL,"
    " ALTER embedding_text SET STORAGE EXTERNAL, ALTER tsv_input SET STORAGE EXTERNAL,"
    " SET (toast_tuple_target = 8160)"
)
# One statement per batch. Every CTE sees the table as it was before the statement, so the
# tokens looked up by text hash are those of rows this statement may rewrite or remove.
_MERGE = (
    "WITH counts AS (SELECT d.id AS document_id, count(s.chunk_index) AS n"
    "  FROM unnest(%(docs)s::uuid[]) AS d(id)"
    "  LEFT JOIN pg_temp.chunk_stage s ON s.document_id = d.id GROUP BY d.id),"
    " removed AS (DELETE FROM rag.chunks c USING counts n"
    "  WHERE c.document_id = n.document_id AND c.chunk_index >= n.n RETURNING 1),"
    " written AS (INSERT INTO rag.chunks (id, document_id, chunk_index, heading, parent_heading,"
    "   heading_path, content, embedding_text, text_hash, token_estimate, doc_hash, chunker_sig,"
    "   warning, tokens, token_count, heading_parts, url, meta)"
    "  SELECT s.id, s.document_id, s.chunk_index, s.heading, s.parent_heading, s.heading_path,"
    "   s.content, s.embedding_text, s.text_hash, s.token_estimate, s.doc_hash, s.chunker_sig,"
    "   s.warning, coalesce(s.tsv_input::tsvector, r.tokens, ''::tsvector),"
    "   coalesce(s.token_count, r.token_count,"
    "    rag.tsvector_token_count(coalesce(s.tsv_input::tsvector, ''::tsvector))),"
    "   coalesce(s.heading_parts, '{}'), s.url, coalesce(s.meta, '{}')"
    "  FROM pg_temp.chunk_stage s LEFT JOIN LATERAL (SELECT y.tokens, y.token_count FROM ("
    "   (SELECT x.tokens, x.token_count FROM rag.chunks x WHERE s.tsv_input IS NULL"
    "    AND x.text_hash = s.text_hash AND x.chunker_sig = s.chunker_sig LIMIT 1)"
    "   UNION ALL (SELECT x.tokens, x.token_count FROM rag.departed_tokens x"
    "    WHERE s.tsv_input IS NULL AND x.text_hash = s.text_hash"
    "    AND x.chunker_sig = s.chunker_sig LIMIT 1)) y LIMIT 1) r ON true"
    "  ORDER BY s.document_id, s.chunk_index"
    "  ON CONFLICT (document_id, chunk_index) DO UPDATE SET heading = EXCLUDED.heading,"
    "  parent_heading = EXCLUDED.parent_heading, heading_path = EXCLUDED.heading_path,"
    "  content = EXCLUDED.content, embedding_text = EXCLUDED.embedding_text,"
    "  text_hash = EXCLUDED.text_hash, token_estimate = EXCLUDED.token_estimate,"
    "  doc_hash = EXCLUDED.doc_hash, chunker_sig = EXCLUDED.chunker_sig,"
    "  warning = EXCLUDED.warning, tokens = EXCLUDED.tokens, token_count = EXCLUDED.token_count,"
    "  heading_parts = EXCLUDED.heading_parts, url = EXCLUDED.url, meta = EXCLUDED.meta"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM removed), (SELECT count(*) FROM written)"
)


TokenSource = tuple[str, str]  # (headings, body) of a chunk, for tokenize.chunk_keywords


@dataclass
class NoteChunks:
    """One note's new chunks; ``token_inputs[i]`` is None when chunk i's tokens are reused,
    else its :func:`token_source`, and ``keywords[i]`` is then its tsvector literal and token
    count once tokenized. ``sig`` is the note's chunker signature when its source has chunking
    options of its own."""

    document_id: uuid.UUID
    path: str
    doc_hash: str
    chunks: list[Chunk]
    token_inputs: list[TokenSource | None]
    sig: str | None = None
    keywords: list[Keywords | None] = field(default_factory=list)
    inline_tags: list[str] = field(default_factory=list)
    title: str | None = None  # the note's title as the chunker reads it, when it has chunks
    link_names: list[str] = field(default_factory=list)  # core.chunks.links.link_names


def token_source(chunk: Chunk) -> TokenSource:
    """What a chunk's keyword tokens are made from: its headings (weighted) and its body
    (inherited metadata such as ``characters`` counts as body words), links reduced to their
    text (sql/038). The headings start with the note's title when it is not the parent
    heading (a frontmatter ``title: 2026年1月10日の日記`` over ``# 2026年1月10日``): the
    embedding text carries it, and a keyword search for 日記 found none of those notes."""
    headings = f"{chunk.parent_heading}\n{chunk.heading}"
    if chunk.title and chunk.title != chunk.parent_heading:
        headings = f"{chunk.title}\n{headings}"
    body = without_link_targets(chunk.content)
    if chunk.meta:
        from knowledge_assets.core.chunks.strategies import meta_line

        return headings, f"{meta_line(chunk.meta)}\n{body}"
    return headings, body


def tokenized_hashes(conn: psycopg.Connection, sig: str, hashes: Sequence[str]) -> set[str]:
    """The text hashes among ``hashes`` that some chunk made with ``sig`` already has tokens for
    (a stored chunk, or one of a renamed note: ``sql/065``)."""
    rows = conn.execute(
        "SELECT text_hash FROM rag.chunks WHERE text_hash = ANY(%(h)s::text[])"
        " AND chunker_sig = %(sig)s"
        " UNION SELECT text_hash FROM rag.departed_tokens WHERE text_hash = ANY(%(h)s::text[])"
        " AND chunker_sig = %(sig)s",
        {"h": list(hashes), "sig": sig},
    ).fetchall()
    return {r[0] for r in rows}


def forget_departed_tokens(conn: psycopg.Connection) -> None:
    """Empty the tokens kept of renamed notes' chunks: the chunks step has written the notes."""
    with conn.transaction():
        conn.execute("DELETE FROM rag.departed_tokens")


def stored_hashes(
    conn: psycopg.Connection, document_ids: Sequence[uuid.UUID]
) -> dict[tuple[uuid.UUID, int], str]:
    """(document, position) -> text hash of the chunks stored now for these notes."""
    rows = conn.execute(
        "SELECT document_id, chunk_index, text_hash FROM rag.chunks"
        " WHERE document_id = ANY(%s::uuid[])",
        (list(document_ids),),
    ).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


def write_notes(
    conn: psycopg.Connection, notes: Sequence[NoteChunks], sig: str, defer_stats: bool = False
) -> int:
    """Replace these notes' chunks in one statement; returns how many positions were removed.

    Runs inside the caller's transaction (a batch is all or nothing). ``defer_stats``: leave
    the keyword statistics to :func:`recount_keyword_stats`.
    """
    if defer_stats:
        defer_keyword_stats(conn)
    _stage(conn)
    with conn.cursor() as cur, cur.copy("COPY pg_temp.chunk_stage FROM STDIN") as copy:
        for note in notes:
            for c, keywords in zip(note.chunks, note.keywords, strict=True):
                tsv, count = keywords or (None, None)
                copy.write_row((
                    chunk_id(note.document_id, c.index), note.document_id, c.index, c.heading,
                    c.parent_heading, c.heading_path, c.content, c.embedding_text, c.text_hash,
                    c.token_estimate, note.doc_hash, note.sig or sig, c.warning, tsv, count,
                    list(c.heading_parts), c.url, Jsonb(c.meta),
                ))  # fmt: skip
    # A batch sorts a few thousand wide rows: keep that in memory, not in temporary files.
    conn.execute("SELECT set_config('work_mem', '64MB', true)")
    row = conn.execute(_MERGE, {"docs": [n.document_id for n in notes]}).fetchone()
    write_note_fields(conn, notes)
    return int(row[0]) if row else 0


# What the chunk refresh reads of a note besides its chunks: the tags written in its text
# (core.chunks.inline_tags), which follow the frontmatter's in ``tags``, and, for a note without
# a frontmatter title, its first H1 as the chunker finds it (outside code and comments: the
# latest_docs rule, a regular expression over the whole text, takes a "# comment" line of a
# shell script in a code block for one). A note whose fields are unchanged is not rewritten.
_NOTE_FIELDS = (
    "UPDATE rag.latest_docs d SET inline_tags = u.tags, link_names = u.links,"
    " tags = rag.merge_tags(rag.note_tags(d.frontmatter -> 'tags'), u.tags),"
    " title = CASE WHEN rag.frontmatter_title(d.frontmatter -> 'title') IS NULL"
    "  THEN coalesce(u.title, d.title) ELSE d.title END"
    " FROM (SELECT x.id, ARRAY(SELECT jsonb_array_elements_text(x.t)) AS tags, x.title,"
    "  ARRAY(SELECT jsonb_array_elements_text(x.l)) AS links"
    "  FROM unnest(%s::uuid[], %s::jsonb[], %s::text[], %s::jsonb[]) AS x(id, t, title, l)) u"
    " WHERE d.id = u.id AND (d.inline_tags IS DISTINCT FROM u.tags"
    "  OR d.link_names IS DISTINCT FROM u.links"
    "  OR (rag.frontmatter_title(d.frontmatter -> 'title') IS NULL AND u.title IS NOT NULL"
    "   AND d.title IS DISTINCT FROM u.title))"
)


def write_note_fields(conn: psycopg.Connection, notes: Sequence[NoteChunks]) -> None:
    """Record these notes' inline tags, chunker titles and link names, in one statement."""
    if notes:
        conn.execute(_NOTE_FIELDS, (
            [n.document_id for n in notes], [Jsonb(n.inline_tags) for n in notes],
            [n.title for n in notes], [Jsonb(n.link_names) for n in notes],
        ))  # fmt: skip


def _stage(conn: psycopg.Connection) -> None:
    """An empty staging table, made once per session (it lives until the connection closes)."""
    row = conn.execute("SELECT to_regclass('pg_temp.chunk_stage') IS NULL").fetchone()
    if row and row[0]:
        conn.execute(_STAGE)
        conn.execute(_STAGE_STORAGE)
    else:
        conn.execute("TRUNCATE pg_temp.chunk_stage")


# The keyword (GIN) index of rag.chunks, as 001_core.sql creates it.
KEYWORD_INDEX = "chunks_tokens_idx"
_KEYWORD_INDEX_DDL = sql.SQL(
    "CREATE INDEX IF NOT EXISTS {} ON rag.chunks USING GIN (tokens)"
).format(sql.Identifier(KEYWORD_INDEX))


def has_keyword_index(conn: psycopg.Connection) -> bool:
    """Whether rag.chunks has its keyword index (a bulk load drops it while it writes)."""
    return has_index(conn, KEYWORD_INDEX)


def drop_keyword_index(conn: psycopg.Connection) -> None:
    """Drop the keyword index for a bulk load (committed, so searches are not blocked)."""
    conn.commit()
    with conn.transaction():
        conn.execute(
            sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier("rag", KEYWORD_INDEX))
        )


def ensure_keyword_index(conn: psycopg.Connection) -> bool:
    """Build the keyword index if it is missing, with memory and parallel workers sized for a
    one-go build; returns whether it was built."""
    present = has_keyword_index(conn)
    conn.commit()  # the build below commits on its own, not inside the caller's transaction
    if present:
        return False
    build_keyword_index(conn)
    return True


def build_keyword_index(conn: psycopg.Connection) -> None:
    """Build the keyword index (a no-op if it exists), in a transaction of its own."""
    with conn.transaction():
        configure_index_build(conn, gin_memory(), build_workers())
        conn.execute(_KEYWORD_INDEX_DDL)


def defer_keyword_stats(conn: psycopg.Connection) -> None:
    """Leave the keyword statistics of this transaction's chunk writes to
    :func:`recount_keyword_stats` (they are marked stale, in this transaction)."""
    conn.execute("SELECT set_config('rag.defer_keyword_stats', 'on', true)")


# The recount groups every lexeme occurrence of every chunk (some 30 million at 194,000 chunks):
# in memory rather than in temporary files.
RECOUNT_WORK_MEM = "256MB"


def recount_keyword_stats(conn: psycopg.Connection) -> bool:
    """Count the keyword statistics again if a bulk load left them stale (also one that was
    killed before its own recount); returns whether it did. Commits."""
    row = conn.execute("SELECT stale FROM rag.keyword_totals").fetchone()
    conn.commit()
    if not (row and row[0]):
        return False
    with conn.transaction():
        conn.execute("SELECT set_config('work_mem', %s, true)", (RECOUNT_WORK_MEM,))
        conn.execute("SELECT rag.keyword_stats_recount()")
    return True


def merge_keyword_pending(conn: psycopg.Connection) -> int:
    """Merge the keyword index's pending list into its tree; returns the pages merged.

    Postgres queues the index entries of written chunks in a pending list, which keeps writes
    batched (direct inserts made 5,000 chunk writes 2-3x slower) but which every keyword search
    then scans, unsorted, until a VACUUM merges it; in a search store autovacuum comes rarely,
    and at 100,000 chunks a pending list made keyword search about twice as slow. So each
    chunk refresh merges it once at its end. A role that may not maintain the index leaves it to
    autovacuum.
    """
    conn.commit()
    try:
        with conn.transaction():
            # to_regclass: NULL when the index is missing, and the strict function then too.
            row = conn.execute(
                "SELECT gin_clean_pending_list(to_regclass(%s))", (f"rag.{KEYWORD_INDEX}",)
            ).fetchone()
    except psycopg.errors.InsufficientPrivilege:
        return 0
    return int(row[0]) if row and row[0] is not None else 0
