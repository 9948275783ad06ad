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

from knowledge_assets.core import chunk_writer, failures, index_store
from knowledge_assets.core.chunk_writer import NoteChunks
from knowledge_assets.core.chunking import CHUNK_MAX_TOKENS, CHUNKER_VERSION, estimate_tokens
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.embedding_text import ChunkFields, default_template, parts, text_hash
from knowledge_assets.core.index_build import configure_build
from knowledge_assets.core.progress import Progress
from knowledge_assets.core.strategies import ChunkingOptions, chunk_for
from knowledge_assets.core.tokenize import KEYWORD_INDEX_VERSION
from knowledge_assets.core.tokenize_pool import Tokenizer, tokenizer_for


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
    changed_elsewhere: bool = True,
) -> ChunkReport:
    """Re-chunk every latest document whose content or chunker settings changed (every one
    when ``force``), then remove the vectors no chunk uses any more: always, unless the caller
    knows that no chunk left since the last refresh (``changed_elsewhere=False``) and this one
    removed or rewrote none.

    Notes go in batches: chunked here, tokenized by worker processes (while the previous batch
    is written), written by one statement per batch, each batch committed on its own.
    """
    sig = chunker_signature(max_tokens)
    report = ChunkReport()
    pending = index_store.docs_to_chunk(conn, sig, force=force)
    conn.commit()
    progress = progress or Progress("chunks", "notes")
    progress.start(len(pending))
    batches = [
        pending[i : i + CHUNK_BATCH_NOTES] for i in range(0, len(pending), CHUNK_BATCH_NOTES)
    ]
    if _defer_keyword_index(conn, len(pending)):
        chunk_writer.drop_keyword_index(conn)
    try:
        _write_batches(conn, batches, sig, max_tokens, estimate, progress, report)
    except BaseException:
        # Search must not be left without its keyword index; the original error surfaces.
        with contextlib.suppress(psycopg.Error):
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
            chunk_writer.ensure_keyword_index(conn)
        raise
    if chunk_writer.ensure_keyword_index(conn):  # also puts back one a killed run left dropped
        # A bulk load: until autovacuum runs, the planner would still see the tables as they
        # were before it, and plan searches as if they were nearly empty.
        conn.execute("ANALYZE rag.chunks, rag.latest_docs")
        conn.commit()
    if changed_elsewhere or report.documents or report.failed:
        with conn.transaction():
            report.embeddings_removed = index_store.delete_orphan_embeddings(conn)
    return report


# The keyword (GIN) index is built in one go, rather than maintained row by row, when a run
# re-chunks at least this many notes and at least half of all notes: a GIN build over 19,428
# chunks took about a third of the time inserting them into the index did.
DEFER_KEYWORD_INDEX_MIN = 200


def _defer_keyword_index(conn: psycopg.Connection, pending: int) -> bool:
    if pending < DEFER_KEYWORD_INDEX_MIN:
        return False
    row = conn.execute("SELECT count(*) FROM rag.latest_docs").fetchone()
    conn.commit()
    return 2 * pending >= (int(row[0]) if row else 0)


def _write_batches(
    conn: psycopg.Connection, batches: Sequence[Sequence[tuple[Any, ...]]], sig: str,
    max_tokens: int, estimate: Callable[[str], int], progress: Progress, report: ChunkReport,
) -> None:  # fmt: skip
    """Chunk, tokenize and write the batches: batch n+1 is chunked and tokenized while batch n
    is written."""
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
            _write(conn, notes, sig, report)
            progress.advance(len(notes))


def _prepare(
    conn: psycopg.Connection, batch: Sequence[tuple[Any, ...]], sig: str, max_tokens: int,
    estimate: Callable[[str], int], tokenizer: Tokenizer, report: ChunkReport,
) -> tuple[list[NoteChunks], Callable[[], list[str]]]:  # fmt: skip
    """Chunk a batch of notes and start tokenizing the texts that have no tokens yet."""
    notes = []
    for doc_id, path, _title, frontmatter, content, content_hash, doc_type, opts, doc_sig in batch:
        try:
            chunks = chunk_for(
                path, frontmatter or {}, content, doc_type=doc_type,
                options=ChunkingOptions.from_json(opts), max_tokens=max_tokens, estimate=estimate,
            )  # fmt: skip
        except Exception as exc:  # one note the chunker cannot handle must not stop the rest
            _failed(conn, report, doc_id, path, content_hash, exc)
            continue
        notes.append(NoteChunks(doc_id, path, content_hash, chunks, [], sig=doc_sig))
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
    sources = [t for n in notes for t in n.token_inputs if isinstance(t, tuple)]
    return notes, tokenizer.submit(sources)


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


def _fill_tokens(notes: list[NoteChunks], tokens: list[str], report: ChunkReport) -> None:
    it = iter(tokens)
    for note in notes:
        report.tokens_reused += sum(1 for t in note.token_inputs if t is None)
        note.token_inputs = [None if t is None else next(it) for t in note.token_inputs]


def _write(
    conn: psycopg.Connection, notes: list[NoteChunks], sig: str, report: ChunkReport
) -> None:
    """Write a batch in one statement; if it fails, note by note, so one bad note is recorded
    in ``report.failed`` and every other note still lands."""
    if not notes:
        return
    before = chunk_writer.stored_hashes(conn, [n.document_id for n in notes])
    try:
        with conn.transaction():
            report.chunks_removed += chunk_writer.write_notes(conn, notes, sig)
        written = notes
    except Exception as exc:
        if failures.is_fatal(conn, exc):
            raise
        written = []
        for note in notes:
            try:
                with conn.transaction():
                    report.chunks_removed += chunk_writer.write_notes(conn, [note], sig)
                written.append(note)
            except Exception as one:
                if failures.is_fatal(conn, one):
                    raise
                _failed(conn, report, note.document_id, note.path, note.doc_hash, one)
    with conn.transaction():
        failures.clear(conn, "chunks", [n.document_id for n in written])
    for note in written:
        same = sum(1 for c in note.chunks if before.get((note.document_id, c.index)) == c.text_hash)
        report.chunks_unchanged += same
        report.chunks_written += len(note.chunks) - same
        report.documents.append(note.path)
        report.warnings += [(note.path, c.warning) for c in note.chunks if c.warning]


@dataclass
class EmbedReport:
    """What an embedding pass did: ``embedded`` texts sent to the model, ``reused`` chunk texts
    that already had vectors of it under ``template``."""

    model: str
    template: str = ""
    embedded: int = 0
    reused: int = 0
    total: int = 0
    batches: int = 0
    seconds_loading: float = 0.0
    seconds_in_model: float = 0.0
    seconds_index: float = 0.0
    seconds_total: float = 0.0
    complete: bool = False
    active: bool = False
    failed_texts: int = 0


# A model's partial HNSW index is cheaper to build once after a bulk load than to maintain insert
# by insert (1,145 vectors of 512 dims: about 0.4 s against 5.5-7.3 s of server CPU, which on a
# small machine competes with the model for the same cores). A run with at least this many
# texts to embed, and at least an eighth of what is already stored, builds it at the end.
DEFER_INDEX_MIN = 256


def embed_missing(
    conn: psycopg.Connection,
    embedder: Embedder,
    *,
    template: str | None = None,
    document_ids: Sequence[Any] | None = None,
    batch_size: int | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> EmbedReport:
    """Embed every chunk (optionally of some documents) that has no vectors of this model under
    ``template`` (default: the model's measured default); with ``force``, every selected chunk
    again, overwriting its vectors.

    A chunk over the model's input limit is embedded in parts (see
    :func:`knowledge_assets.core.embedding_text.parts`). A part whose text already has a vector
    of the model is reused, never sent again. While a model moves to a new template, search keeps
    reading the old one until every chunk has vectors under the new one. A bulk run of a model
    that search is not using drops the model's HNSW index while it writes and rebuilds it before
    the model is marked complete (also when the run fails).
    """
    started = time.perf_counter()
    template = template or default_template(embedder.model)
    report = _prepare_model(conn, embedder, template)
    total, done = index_store.count_texts(conn, embedder.model, document_ids, template)
    todo = index_store.chunks_to_embed(
        conn, embedder.model, template, document_ids, include_embedded=force
    )
    deferred = _defer_index(conn, embedder.model, len(todo), done)
    conn.commit()
    report.total, report.reused = total, total - len(todo)
    plan = _Plan(embedder, template, set(), replace=force)
    if todo:
        report.seconds_loading = _load(embedder)
        if not force:
            plan.stored = _stored_among(conn, plan, todo)
            conn.commit()  # each batch below commits on its own, not inside this read
    progress = progress or Progress("embeddings", "passages")
    progress.start(len(todo))
    try:
        _embed_batches(conn, plan, todo, batch_size or embedder.batch_size, report, progress)
    except BaseException:
        if deferred:  # put the index back, but let the original error surface
            with contextlib.suppress(psycopg.Error):
                _build_index(conn, embedder, report)
        raise
    if deferred:
        _build_index(conn, embedder, report)
    # A run over every chunk that had nothing to do leaves the counts it started from.
    unchanged = (total, done) if document_ids is None and not todo else None
    _finish(conn, embedder.model, template, report, unchanged)
    report.seconds_total = time.perf_counter() - started
    return report


# Up to this many chunks to embed, a run asks the store only about their own texts' hashes;
# a larger one reads every hash of the model once.
STORED_LOOKUP_MAX = 5000


def _stored_among(
    conn: psycopg.Connection, plan: _Plan, todo: list[tuple[str, str, str, str, str]]
) -> set[str]:
    """Which texts of ``todo`` already have vectors of the model (shared with another chunk)."""
    if len(todo) > STORED_LOOKUP_MAX:
        return index_store.stored_hashes(conn, plan.embedder.model)
    hashes = [digest for row in todo for _, _, digest in plan.texts(row)]
    return index_store.stored_hashes(conn, plan.embedder.model, among=hashes)


# Batches that may fail one after another before the provider counts as down and the run stops.
MAX_FAILED_BATCHES_IN_A_ROW = 3


@dataclass
class _Plan:
    """How one run turns chunks into texts to embed, and which texts it already has."""

    embedder: Embedder
    template: str
    stored: set[str]
    replace: bool = False

    def texts(self, row: tuple[str, str, str, str, str]) -> list[tuple[int, str, str]]:
        """(part, text, text hash) of one chunk row from ``chunks_to_embed``."""
        _, embedding_text, parent, heading, content = row
        fields = ChunkFields.parse(embedding_text, parent, heading, content)
        count = getattr(self.embedder, "count_tokens", None) or estimate_tokens
        pieces = parts(self.template, fields, self.embedder.max_tokens, count)
        return [(i, text, text_hash(text)) for i, text in enumerate(pieces)]


def _embed_batches(
    conn: psycopg.Connection,
    plan: _Plan,
    todo: list[tuple[str, str, str, str, str]],
    size: int,
    report: EmbedReport,
    progress: Progress,
) -> None:
    """Embed and store ``todo`` batch by batch; a batch that fails is recorded, not fatal.

    The run still fails when every batch failed, or several in a row did (the provider is down
    or refuses the key: nothing would be gained by going on).
    """
    embedder = plan.embedder
    failed: list[tuple[list[str], str]] = []
    streak = 0
    last: Exception | None = None
    with ThreadPoolExecutor(max_workers=1) as writer:
        # The model runs in this thread while the previous batch is written in the other
        # one, so the database never makes the model wait.
        pending: tuple[Future[None], list[str], int] | None = None
        for start in range(0, len(todo), size):
            rows = todo[start : start + size]
            chunk_hashes = [row[0] for row in rows]
            inputs: list[tuple[str, int, str]] = []
            new: dict[str, str] = {}
            for row in rows:
                for part, text, digest in plan.texts(row):
                    inputs.append((row[0], part, digest))
                    if digest not in plan.stored:
                        new.setdefault(digest, text)
            t0 = time.perf_counter()
            try:
                vectors = embedder.embed(list(new.values()), "document") if new else []
            except Exception as exc:
                streak += 1
                if streak >= MAX_FAILED_BATCHES_IN_A_ROW:
                    raise
                failed.append((chunk_hashes, failures.describe(exc)))
                last = exc
                continue
            finally:
                report.seconds_in_model += time.perf_counter() - t0
            streak = 0
            _settle(conn, pending, failed, report, plan)
            plan.stored.update(new)
            batch = (list(new), vectors, inputs)
            pending = (writer.submit(_write_batch, conn, plan, *batch), chunk_hashes, len(new))
            report.embedded += len(new)
            report.batches += 1
            progress.advance(len(rows))
        _settle(conn, pending, failed, report, plan)
    if failed and report.embedded == 0 and last is not None:
        raise last  # nothing at all was embedded: the provider, not one batch, is the problem
    _record_embed_failures(conn, embedder.model, failed, report)


def _settle(
    conn: psycopg.Connection,
    pending: tuple[Future[None], list[str], int] | None,
    failed: list[tuple[list[str], str]],
    report: EmbedReport,
    plan: _Plan,
) -> None:
    """Wait for the batch being written; a batch the store refused is recorded as failed."""
    if pending is None:
        return
    future, chunk_hashes, embedded = pending
    try:
        future.result()
    except Exception as exc:
        if failures.is_fatal(conn, exc):
            raise
        failed.append((chunk_hashes, failures.describe(exc)))
        report.embedded -= embedded
        report.batches -= 1
        plan.stored.clear()  # the refused batch's texts are not stored: ask the store again
        plan.stored.update(index_store.stored_hashes(conn, plan.embedder.model))


def _record_embed_failures(
    conn: psycopg.Connection, model: str, failed: list[tuple[list[str], str]], report: EmbedReport
) -> None:
    """Record the notes of chunks whose batch failed (by chunk hash), and clear earlier
    failures of this model that are now embedded."""
    rows = []
    for chunk_hashes, reason in failed:
        report.failed_texts += len(chunk_hashes)
        for doc_id, doc_hash in failures.documents_of_texts(conn, chunk_hashes):
            rows.append((doc_id, doc_hash, f"{model}: {reason}"))
    conn.commit()
    failures.clear_embedded(conn, model)
    failures.record(conn, "embeddings", rows)


def _load(embedder: Embedder) -> float:
    """Load a local model's weights before the batches are timed, so ``seconds_in_model`` (and
    the rate derived from it) is embedding only; seconds spent loading. Remote models have
    nothing to load."""
    load = getattr(embedder, "load", None)
    if load is None:
        return 0.0
    started = time.perf_counter()
    load()
    return time.perf_counter() - started


def _defer_index(conn: psycopg.Connection, model: str, todo: int, done: int) -> bool:
    """Drop ``model``'s index for a bulk load unless search is using the model."""
    from knowledge_assets.core.search_sql import model_index_name

    if todo < max(DEFER_INDEX_MIN, done // 8) or index_store.is_active(conn, model):
        return False
    index_store.drop_index(conn, model_index_name(model))
    return True


def _build_index(conn: psycopg.Connection, embedder: Embedder, report: EmbedReport) -> None:
    """Build the model's index in one go, with memory and workers sized for it."""
    from knowledge_assets.core.search_sql import ensure_model_index

    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()  # a failed batch left its transaction aborted
    started = time.perf_counter()
    rows = index_store.count_vectors(conn, embedder.model)
    with conn.transaction():
        configure_build(conn, rows, embedder.dims)
        ensure_model_index(conn, embedder.model, embedder.dims)
    report.seconds_index = time.perf_counter() - started


def _prepare_model(conn: psycopg.Connection, embedder: Embedder, template: str) -> EmbedReport:
    from knowledge_assets.core.search_sql import ensure_model_index

    with conn.transaction():
        stored_dims = index_store.register_model(
            conn, embedder.model, embedder.provider, embedder.dims, embedder.max_tokens,
            getattr(embedder, "options", {}), template,
        )  # fmt: skip
        if stored_dims != embedder.dims:
            raise ValueError(
                f"model {embedder.model} is registered with {stored_dims} dimensions but the "
                f"embedder returns {embedder.dims}: register it under another name"
            )
        ensure_model_index(conn, embedder.model, embedder.dims)
    return EmbedReport(model=embedder.model, template=template)


def _write_batch(
    conn: psycopg.Connection,
    plan: _Plan,
    hashes: list[str],
    vectors: Sequence[Sequence[float]],
    inputs: list[tuple[str, int, str]],
) -> None:
    with conn.transaction():
        if hashes:
            index_store.insert_embeddings(
                conn, plan.embedder.model, hashes, vectors, replace=plan.replace
            )
        index_store.insert_inputs(conn, plan.embedder.model, plan.template, inputs)


# A run that wrote at least this many vectors refreshes the planner's statistics of the vector
# tables: right after a bulk load they still describe the empty tables, and search plans built
# on them walk every row.
ANALYZE_AFTER = 1000


def _finish(
    conn: psycopg.Connection, model: str, template: str, report: EmbedReport,
    counts: tuple[int, int] | None,
) -> None:  # fmt: skip
    if report.embedded >= ANALYZE_AFTER:
        conn.execute("ANALYZE rag.embeddings, rag.embedding_inputs")
        conn.commit()
    total, done = counts or index_store.count_texts(conn, model, template=template)
    with conn.transaction():
        report.complete = total == done
        report.active = index_store.mark_model_complete(conn, model, template, report.complete)
