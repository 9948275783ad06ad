"""Chunk the latest documents: only notes whose content or chunker settings changed.

Chunk-level incrementality: a document whose content hash and chunker settings are unchanged is
not touched; a changed document is re-chunked and written in one set-based statement per batch,
so one bad note is recorded and every other note lands. Vectors are keyed by the embedding
text, so re-chunking never re-embeds an unchanged text (:mod:`knowledge_assets.core.index.indexing`).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import psycopg

from knowledge_assets.core import failures
from knowledge_assets.core.chunks import chunk_inputs, chunk_writer
from knowledge_assets.core.chunks.chunk_writer import NoteChunks
from knowledge_assets.core.chunks.chunking import CHUNK_MAX_TOKENS, CHUNKER_VERSION, estimate_tokens
from knowledge_assets.core.chunks.inline_tags import inline_tags
from knowledge_assets.core.chunks.links import link_names
from knowledge_assets.core.chunks.strategies import BOOKMARK_TYPE, ChunkingOptions, chunk_for
from knowledge_assets.core.chunks.tokenize import KEYWORD_INDEX_VERSION, Keywords
from knowledge_assets.core.chunks.tokenize_pool import Tokenizer, tokenizer_for
from knowledge_assets.core.database import db
from knowledge_assets.core.database.db import Connect
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.build_progress import finish, follow
from knowledge_assets.core.progress import Progress


@dataclass
class ChunkReport:
    """What a chunk refresh did; ``failed`` are notes whose chunks could not be written."""

    documents: list[str] = field(default_factory=list)
    chunks_written: int = 0
    chunks_unchanged: int = 0
    chunks_removed: int = 0
    embeddings_removed: int = 0
    tokens_reused: int = 0
    warnings: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def chunker_signature(max_tokens: int) -> str:
    """Identifies the chunking rules, limit and keyword index format a chunk was made with; a
    change re-chunks (vectors are kept: they are keyed by the unchanged embedding text)."""
    key = f"{CHUNKER_VERSION}:{max_tokens}:{KEYWORD_INDEX_VERSION}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


# Notes per set-based write: large enough that per-statement costs vanish, small enough that a
# batch's chunks (and a retry note by note after an error) stay cheap.
CHUNK_BATCH_NOTES = 250


def refresh_chunks(
    conn: psycopg.Connection,
    *,
    max_tokens: int = CHUNK_MAX_TOKENS,
    estimate: Callable[[str], int] = estimate_tokens,
    progress: Progress | None = None,
    force: bool = False,
    helper: Connect | None = None,
) -> ChunkReport:
    """Re-chunk every latest document whose content or chunker settings changed (every one
    when ``force``), then remove the vectors no chunk uses any more: only among the texts that
    left ``rag.chunks`` since the last refresh (with notes deleted from ``latest_docs`` too), or
    every such vector when ``force``.

    Notes go in batches: read and chunked here (a batch's texts only when it is chunked),
    tokenized by worker processes (while the previous batch is written), written by one
    statement per batch, each batch committed on its own.
    ``helper`` opens a second connection to the store, for work a bulk load finishes with.
    """
    sig = chunker_signature(max_tokens)
    report = ChunkReport()
    pending = chunk_inputs.docs_to_chunk(conn, sig, force=force)
    conn.commit()
    progress = progress or Progress("chunks", "notes")
    progress.start(len(pending))
    batches = [
        pending[i : i + CHUNK_BATCH_NOTES] for i in range(0, len(pending), CHUNK_BATCH_NOTES)
    ]
    bulk = _bulk_load(conn, len(pending))
    if bulk:
        chunk_writer.drop_keyword_index(conn)
    try:
        _write_batches(conn, batches, sig, max_tokens, estimate, progress, report, bulk)
    except BaseException:
        # Search must not be left without its keyword index and statistics; the original
        # error surfaces.
        with contextlib.suppress(psycopg.Error):
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
            chunk_writer.ensure_keyword_index(conn)
            chunk_writer.merge_keyword_pending(conn)
            chunk_writer.recount_keyword_stats(conn)
        raise
    if any(_finish_keyword_index(conn, helper, progress)):
        # A bulk load: until autovacuum runs, the planner would still see the tables as they
        # were before it, and plan searches as if they were nearly empty.
        db.vacuum_analyze(conn, "rag.chunks", "rag.latest_docs", "rag.keyword_lexemes")
    chunk_writer.merge_keyword_pending(conn)
    chunk_writer.forget_departed_tokens(conn)
    with conn.transaction():
        report.embeddings_removed = index_store.delete_departed_embeddings(conn)
        if force:  # the repair run: also vectors no departure recorded (the orphan check's)
            report.embeddings_removed += index_store.delete_orphan_embeddings(conn)
    return report


def _finish_keyword_index(
    conn: psycopg.Connection, helper: Connect | None, progress: Progress
) -> tuple[bool, bool]:
    """Build the keyword index if it is missing (also one a killed run left dropped) and count
    stale keyword statistics again (also a killed run's debt); returns (built, recounted).

    With ``helper``, the index is built on a second connection while this one recounts: at
    194,330 chunks the two took 8.4 s and 4.3 s one after the other, each with a parallel
    worker, and they read ``rag.chunks`` under locks that do not conflict. Once the recount is
    done, this connection follows the build for progress lines (stage ``keyword index``).
    """
    if helper is None:
        return chunk_writer.ensure_keyword_index(conn), chunk_writer.recount_keyword_stats(conn)
    present = chunk_writer.has_keyword_index(conn)
    conn.commit()  # the recount below and the build on ``helper`` each run on their own
    if present:
        return False, chunk_writer.recount_keyword_stats(conn)
    builder: list[int] = []

    def build() -> None:
        with helper() as other:
            builder.append(other.info.backend_pid)
            chunk_writer.build_keyword_index(other)

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=1) as pool:
        built = pool.submit(build)
        recounted = chunk_writer.recount_keyword_stats(conn)
        indexed = progress.stage_after("keyword index", "passages")
        # Counted from the build's start: a build done during the recount would otherwise
        # report millions of passages a second.
        indexed.start(index_store.count_chunks(conn), since=began)  # recounted just above
        follow(built, lambda: builder[0] if builder else None, indexed, conn, pages=True)
        built.result()
        finish(indexed)
        return True, recounted


# The keyword (GIN) index is built in one go, rather than maintained row by row, and the keyword
# statistics are counted once at the end, rather than batch by batch, when a run re-chunks at
# least this many notes and at least half of all notes: a GIN build over 19,428 chunks took about
# a third of the time inserting them into the index did, and adding each batch's lexeme counts
# about half of the server time of writing its chunks.
DEFER_KEYWORD_INDEX_MIN = 200


def _bulk_load(conn: psycopg.Connection, pending: int) -> bool:
    if pending < DEFER_KEYWORD_INDEX_MIN:
        return False
    row = conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone()
    conn.commit()
    return 2 * pending >= (int(row[0]) if row else 0)


def _write_batches(
    conn: psycopg.Connection, batches: Sequence[Sequence[uuid.UUID]], sig: str,
    max_tokens: int, estimate: Callable[[str], int], progress: Progress, report: ChunkReport,
    bulk: bool = False,
) -> None:  # fmt: skip
    """Chunk, tokenize and write the batches: batch n+1 is chunked and tokenized while batch n
    is written. ``bulk``: leave the keyword statistics to one recount at the end."""
    pending = sum(len(b) for b in batches)
    with tokenizer_for(pending) as tokenizer:
        queued = (
            _prepare(conn, batches[0], sig, max_tokens, estimate, tokenizer, report)
            if batches
            else None
        )
        for index in range(len(batches)):
            notes, tokens = queued or ([], lambda: [])
            queued = (
                _prepare(conn, batches[index + 1], sig, max_tokens, estimate, tokenizer, report)
                if index + 1 < len(batches)
                else None
            )
            _fill_tokens(notes, tokens(), report)
            _write(conn, notes, sig, report, bulk)
            progress.advance(len(notes))


def _prepare(
    conn: psycopg.Connection, batch: Sequence[uuid.UUID], sig: str, max_tokens: int,
    estimate: Callable[[str], int], tokenizer: Tokenizer, report: ChunkReport,
) -> tuple[list[NoteChunks], Callable[[], list[Keywords]]]:  # fmt: skip
    """Read and chunk a batch of notes and start tokenizing the texts that have no tokens yet."""
    notes = []
    rows = chunk_inputs.chunk_inputs(conn, sig, batch)
    for doc_id, path, _title, frontmatter, content, content_hash, doc_type, opts, doc_sig in rows:
        markdown = doc_type != BOOKMARK_TYPE  # a bookmark file is JSON
        try:
            chunks = chunk_for(
                path, frontmatter or {}, content, doc_type=doc_type,
                options=ChunkingOptions.from_json(opts), max_tokens=max_tokens, estimate=estimate,
            )  # fmt: skip
            note = NoteChunks(doc_id, path, content_hash, chunks, [], doc_sig)
            note.inline_tags = inline_tags(content) if markdown else []
            note.link_names = link_names(content) if markdown else []
        except Exception as exc:  # one note the chunker cannot handle must not stop the rest
            _failed(conn, report, doc_id, path, content_hash, exc)
            continue
        note.title = chunks[0].title if markdown and chunks else None
        notes.append(note)
    # Tokens are reused only from chunks made under the note's own signature (a source with
    # chunking options of its own has one), as the merge looks them up.
    known: set[tuple[str, str]] = set()
    for note_sig in {n.sig or sig for n in notes}:
        hashes = [c.text_hash for n in notes if (n.sig or sig) == note_sig for c in n.chunks]
        known |= {(note_sig, h) for h in chunk_writer.tokenized_hashes(conn, note_sig, hashes)}
    conn.commit()
    for note in notes:
        note.token_inputs = [
            None if (note.sig or sig, c.text_hash) in known else chunk_writer.token_source(c)
            for c in note.chunks
        ]
    sources = [t for n in notes for t in n.token_inputs if t is not None]
    return notes, tokenizer.map(sources)


def _failed(
    conn: psycopg.Connection, report: ChunkReport, doc_id: Any, path: str, doc_hash: str,
    exc: BaseException,
) -> None:  # fmt: skip
    """Record a note that could not be chunked or written; its previous chunks stay."""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
        conn.rollback()  # a statement failed outside a savepoint: the transaction is aborted
    reason = failures.describe(exc)
    report.failed.append((path, reason))
    failures.record(conn, "chunks", [(doc_id, doc_hash, reason)])


def _fill_tokens(notes: list[NoteChunks], keywords: list[Keywords], report: ChunkReport) -> None:
    it = iter(keywords)
    for note in notes:
        report.tokens_reused += sum(1 for t in note.token_inputs if t is None)
        note.keywords = [None if t is None else next(it) for t in note.token_inputs]


def _write(
    conn: psycopg.Connection, notes: list[NoteChunks], sig: str, report: ChunkReport,
    bulk: bool = False,
) -> None:  # fmt: skip
    """Write a batch in one statement; if it fails, note by note, so one bad note is recorded
    in ``report.failed`` and every other note still lands."""
    if not notes:
        return
    before = chunk_writer.stored_hashes(conn, [n.document_id for n in notes])
    try:
        with conn.transaction():
            report.chunks_removed += chunk_writer.write_notes(conn, notes, sig, bulk)
        written = notes
    except Exception as exc:
        if failures.is_fatal(conn, exc):
            raise
        written = []
        for note in notes:
            try:
                with conn.transaction():
                    report.chunks_removed += chunk_writer.write_notes(conn, [note], sig, bulk)
                written.append(note)
            except Exception as one:
                if failures.is_fatal(conn, one):
                    raise
                _failed(conn, report, note.document_id, note.path, note.doc_hash, one)
    with conn.transaction():
        failures.clear(conn, "chunks", [n.document_id for n in written])
        chunk_inputs.record_chunkless(
            conn,
            [(n.document_id, n.doc_hash, n.sig or sig) for n in written if not n.chunks],
            [n.document_id for n in written if n.chunks],
        )
    for note in written:
        same = sum(1 for c in note.chunks if before.get((note.document_id, c.index)) == c.text_hash)
        report.chunks_unchanged += same
        report.chunks_written += len(note.chunks) - same
        report.documents.append(note.path)
        report.warnings += [(note.path, c.warning) for c in note.chunks if c.warning]
