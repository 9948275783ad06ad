"""Chunk the latest documents and embed every chunk text that has no vector yet.

Chunk-level incrementality: a document whose content hash and chunker settings are unchanged is
not touched; a changed document is re-chunked in one transaction; a vector is keyed by
(model, hash of the embedding text), so a text is embedded once per model however many documents
or re-chunkings share it. Each embedded batch is committed on its own, so a failure or a killed
run keeps every finished batch and the next run embeds only what is missing.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import psycopg

from knowledge_assets.core import index_store
from knowledge_assets.core.chunking import CHUNKER_VERSION, chunk_document, estimate_tokens
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.tokenize import tsvector_input


@dataclass
class ChunkReport:
    """What a chunk refresh did."""

    documents: list[str] = field(default_factory=list)
    chunks_written: int = 0
    chunks_unchanged: int = 0
    chunks_removed: int = 0
    embeddings_removed: int = 0
    warnings: list[tuple[str, str]] = field(default_factory=list)


def chunker_signature(max_tokens: int) -> str:
    """Identifies the chunking rules and limit a chunk was made with; a change re-chunks."""
    return hashlib.sha256(f"{CHUNKER_VERSION}:{max_tokens}".encode()).hexdigest()[:16]


def refresh_chunks(
    conn: psycopg.Connection, *, max_tokens: int, estimate: Callable[[str], int] = estimate_tokens
) -> ChunkReport:
    """Re-chunk every latest document whose content or chunker settings changed."""
    sig = chunker_signature(max_tokens)
    report = ChunkReport()
    pending = index_store.docs_to_chunk(conn, sig)
    conn.commit()
    for doc_id, path, _title, frontmatter, content, content_hash in pending:
        chunks = chunk_document(
            path, frontmatter or {}, content, max_tokens=max_tokens, estimate=estimate
        )
        rows = [
            (
                c.index, c.heading, c.parent_heading, c.heading_path, c.content, c.embedding_text,
                c.text_hash, c.token_estimate, content_hash, sig, c.warning,
                tsvector_input(f"{c.parent_heading}\n{c.heading}\n{c.content}"),
            )
            for c in chunks
        ]  # fmt: skip
        with conn.transaction():
            before = index_store.existing_hashes(conn, doc_id)
            report.chunks_removed += index_store.replace_chunks(conn, doc_id, rows)
        same = sum(1 for c in chunks if before.get(c.index) == c.text_hash)
        report.chunks_unchanged += same
        report.chunks_written += len(chunks) - same
        report.documents.append(path)
        report.warnings += [(path, c.warning) for c in chunks if c.warning]
    with conn.transaction():
        report.embeddings_removed = index_store.delete_orphan_embeddings(conn)
    return report


@dataclass
class EmbedReport:
    """What an embedding pass did: ``embedded`` texts sent to the model, ``reused`` already stored."""

    model: str
    embedded: int = 0
    reused: int = 0
    total: int = 0
    batches: int = 0
    seconds_in_model: float = 0.0
    seconds_total: float = 0.0
    complete: bool = False
    active: bool = False


# A model's partial HNSW index is cheaper to build once after a bulk load than to maintain insert
# by insert (1,145 vectors of 512 dims: about 0.4 s against 5.5-7.3 s of server CPU, which on a
# small machine competes with the model for the same cores). A run with at least this many
# texts to embed, and at least an eighth of what is already stored, builds it at the end.
DEFER_INDEX_MIN = 256


def embed_missing(
    conn: psycopg.Connection,
    embedder: Embedder,
    *,
    document_ids: Sequence[Any] | None = None,
    batch_size: int | None = None,
) -> EmbedReport:
    """Embed every chunk text (optionally of some documents) that has no vector of this model.

    A bulk run of a model that search is not using drops the model's HNSW index while it writes
    and rebuilds it before the model is marked complete (also when the run fails).
    """
    started = time.perf_counter()
    report = _prepare_model(conn, embedder)
    total, done = index_store.count_texts(conn, embedder.model, document_ids)
    todo = index_store.texts_to_embed(conn, embedder.model, document_ids)
    deferred = _defer_index(conn, embedder.model, len(todo), done)
    conn.commit()
    report.total, report.reused = total, done
    try:
        _embed_batches(conn, embedder, todo, batch_size or embedder.batch_size, report)
    except BaseException:
        if deferred:  # put the index back, but let the original error surface
            with contextlib.suppress(psycopg.Error):
                _build_index(conn, embedder)
        raise
    if deferred:
        _build_index(conn, embedder)
    _finish(conn, embedder.model, report)
    report.seconds_total = time.perf_counter() - started
    return report


def _embed_batches(
    conn: psycopg.Connection,
    embedder: Embedder,
    todo: list[tuple[str, str]],
    size: int,
    report: EmbedReport,
) -> None:
    with ThreadPoolExecutor(max_workers=1) as writer:
        # The model runs in this thread while the previous batch is written in the other
        # one, so the database never makes the model wait.
        pending: Future[None] | None = None
        for start in range(0, len(todo), size):
            batch = todo[start : start + size]
            t0 = time.perf_counter()
            vectors = embedder.embed([text for _, text in batch], "document")
            report.seconds_in_model += time.perf_counter() - t0
            if pending is not None:
                pending.result()
            pending = writer.submit(_write_batch, conn, embedder.model, batch, vectors)
            report.embedded += len(batch)
            report.batches += 1
        if pending is not None:
            pending.result()


def _defer_index(conn: psycopg.Connection, model: str, todo: int, done: int) -> bool:
    """Drop ``model``'s index for a bulk load unless search is using the model."""
    from knowledge_assets.core.search_sql import model_index_name

    if todo < max(DEFER_INDEX_MIN, done // 8) or index_store.is_active(conn, model):
        return False
    index_store.drop_index(conn, model_index_name(model))
    return True


def _build_index(conn: psycopg.Connection, embedder: Embedder) -> None:
    from knowledge_assets.core.search_sql import ensure_model_index

    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()  # a failed batch left its transaction aborted
    with conn.transaction():
        ensure_model_index(conn, embedder.model, embedder.dims)


def _prepare_model(conn: psycopg.Connection, embedder: Embedder) -> EmbedReport:
    from knowledge_assets.core.search_sql import ensure_model_index

    with conn.transaction():
        stored_dims = index_store.register_model(
            conn, embedder.model, embedder.provider, embedder.dims, embedder.max_tokens,
            getattr(embedder, "options", {}),
        )  # fmt: skip
        if stored_dims != embedder.dims:
            raise ValueError(
                f"model {embedder.model} is registered with {stored_dims} dimensions but the "
                f"embedder returns {embedder.dims}: register it under another name"
            )
        ensure_model_index(conn, embedder.model, embedder.dims)
    return EmbedReport(model=embedder.model)


def _write_batch(
    conn: psycopg.Connection,
    model: str,
    batch: list[tuple[str, str]],
    vectors: Sequence[Sequence[float]],
) -> None:
    with conn.transaction():
        index_store.insert_embeddings(conn, model, [h for h, _ in batch], vectors)


def _finish(conn: psycopg.Connection, model: str, report: EmbedReport) -> None:
    total, done = index_store.count_texts(conn, model)
    with conn.transaction():
        report.complete = total == done
        report.active = index_store.mark_model_complete(conn, model, report.complete)
