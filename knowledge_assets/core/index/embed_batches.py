"""One embedding pass's batches: texts sent to the model, vectors and inputs written.

The model runs in the calling thread while the previous batch is written in another, so the
database never makes the model wait; an in-process model of a large pass runs in worker
processes instead (:mod:`knowledge_assets.core.embedders.processes`), several batches at once,
and the batches are still written one after the other in their order. A batch that fails is
recorded against its notes, not fatal, unless the provider looks down (several failures in a
row, or nothing embedded at all).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from knowledge_assets.core import failures
from knowledge_assets.core.chunks.chunking import estimate_tokens
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.embedders.processes import ModelRunner
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.embedding_text import ChunkFields, parts, text_hash
from knowledge_assets.core.progress import Progress

__all__ = ["EmbedPlan", "EmbedReport", "Row", "embed_batches"]


@dataclass
class EmbedReport:
    """What an embedding pass did: ``embedded`` texts sent to the model (vectors written),
    ``texts_embedded`` the chunk texts they are of (fewer when a chunk text over the model's
    input limit went in parts), ``reused`` chunk texts that already had vectors of it under
    ``template``."""

    model: str
    template: str = ""
    embedded: int = 0
    texts_embedded: int = 0
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
    processes: int = 1  # processes the model ran in (worker processes, or the run's own)


# Batches that may fail one after another before the provider counts as down and the run stops.
MAX_FAILED_BATCHES_IN_A_ROW = 3


# One chunk row to embed: (chunk hash, embedding text, parent heading, heading, content).
Row = tuple[str, str, str, str, str]


@dataclass
class EmbedPlan:
    """How one run turns chunks into texts to embed, and which texts it already has: with
    ``replace``, those this run sent (every text is sent again, once); else those of the page
    being embedded that the store has vectors of."""

    embedder: Embedder
    template: str
    stored: set[str]
    replace: bool = False

    def texts(self, row: Row) -> list[tuple[int, str, str]]:
        """(part, text, text hash) of one chunk row from ``chunks_to_embed``."""
        _, embedding_text, parent, heading, content = row
        fields = ChunkFields.parse(embedding_text, parent, heading, content)
        count = getattr(self.embedder, "count_tokens", None) or estimate_tokens
        pieces = parts(self.template, fields, self.embedder.max_tokens, count)
        return [(i, text, text_hash(text)) for i, text in enumerate(pieces)]


# A chunk's hash and its (part, text, text hash) list.
_Chunk = tuple[str, list[tuple[int, str, str]]]


def embed_batches(
    conn: psycopg.Connection,
    plan: EmbedPlan,
    pages: Iterable[Sequence[Row]],
    size: int,
    report: EmbedReport,
    progress: Progress,
    runner: ModelRunner | None = None,
) -> int:
    """Embed and store ``pages`` of chunk rows, batch by batch; returns the rows read. A batch
    that fails is recorded, not fatal.

    The run still fails when every batch failed, or several in a row did (the provider is down
    or refuses the key: nothing would be gained by going on). Each page is asked for, and
    looked up in the store, once every batch before it is written: pages may read ``conn``.
    ``runner`` runs the model (default: in this process).
    """
    run = _Pass(conn, plan, report, runner or ModelRunner(plan.embedder))
    read = 0
    with ThreadPoolExecutor(max_workers=1) as writer:
        for page in pages:
            chunks = [(row[0], plan.texts(row)) for row in page]
            _known(conn, plan, [digest for _, texts in chunks for _, _, digest in texts])
            for start in range(0, len(chunks), size):
                run.submit(chunks[start : start + size])
                while run.full():
                    progress.advance(run.collect(writer))
            while run.queued:
                progress.advance(run.collect(writer))
            run.settle()
            read += len(page)
    if run.failed and report.embedded == 0 and run.last is not None:
        raise run.last  # nothing at all was embedded: the provider, not one batch, is the problem
    _record_embed_failures(conn, plan.embedder.model, run.failed, report)
    return read


def _known(conn: psycopg.Connection, plan: EmbedPlan, digests: list[str]) -> None:
    """Which texts of a page already have vectors: asked of the store per page, so memory
    stays that of a page (texts this run embedded are stored by then)."""
    if plan.replace:
        return
    plan.stored = index_store.stored_hashes(conn, plan.embedder.model, among=digests)
    conn.commit()  # each batch commits on its own, not inside this read


@dataclass
class _Batch:
    """A submitted batch: its vectors to come, its chunk hashes, its input rows (chunk hash,
    part, text hash) and the text hashes sent to the model, in the vectors' order."""

    vectors: Callable[[], Sequence[Sequence[float]]]
    chunk_hashes: list[str]
    inputs: list[tuple[str, int, str]]
    sent: list[str]


class _Pass:
    """One pass's batches: submitted to the model in order, collected in the same order, and
    each written in another thread while the model runs on the next ones."""

    def __init__(
        self, conn: psycopg.Connection, plan: EmbedPlan, report: EmbedReport, runner: ModelRunner
    ) -> None:
        self.conn, self.plan, self.report, self.runner = conn, plan, report, runner
        self.failed: list[tuple[list[str], str]] = []
        self.streak = 0
        self.last: Exception | None = None
        self.queued: deque[_Batch] = deque()
        # The batch being written: its future, chunk hashes, the text hashes it embedded and
        # how many chunk texts those are.
        self.pending: tuple[Future[None], list[str], list[str], int] | None = None

    def submit(self, chunks: list[_Chunk]) -> None:
        """Send one batch's texts without a stored vector to the model."""
        inputs: list[tuple[str, int, str]] = []
        new: dict[str, str] = {}
        for chunk_hash, texts in chunks:
            for part, text, digest in texts:
                inputs.append((chunk_hash, part, digest))
                if digest not in self.plan.stored:
                    new.setdefault(digest, text)
        vectors = self.runner.submit(list(new.values()))
        self.queued.append(_Batch(vectors, [c for c, _ in chunks], inputs, list(new)))

    def full(self) -> bool:
        """Whether the oldest batch must be collected before another is submitted."""
        return len(self.queued) >= self.runner.window

    def collect(self, writer: ThreadPoolExecutor) -> int:
        """Wait for the oldest batch's vectors and start writing them; returns its chunks, or
        0 if the model failed on it."""
        batch = self.queued.popleft()
        t0 = time.perf_counter()
        try:
            vectors = batch.vectors()
        except Exception as exc:
            self.streak += 1
            if self.streak >= MAX_FAILED_BATCHES_IN_A_ROW:
                raise
            self.failed.append((batch.chunk_hashes, failures.describe(exc)))
            self.last = exc
            return 0
        finally:
            self.report.seconds_in_model += time.perf_counter() - t0
        self.streak = 0
        self.settle()
        # A text that an earlier batch in flight also sent is stored once, by the earlier one.
        keep = [i for i, digest in enumerate(batch.sent) if digest not in self.plan.stored]
        hashes = [batch.sent[i] for i in keep]
        self.plan.stored.update(hashes)
        future = writer.submit(
            _write_batch, self.conn, self.plan, hashes, [vectors[i] for i in keep], batch.inputs
        )
        kept = set(hashes)
        texts = len({chunk for chunk, _part, digest in batch.inputs if digest in kept})
        self.pending = (future, batch.chunk_hashes, hashes, texts)
        self.report.embedded += len(hashes)
        self.report.texts_embedded += texts
        self.report.batches += 1
        return len(batch.chunk_hashes)

    def settle(self) -> None:
        """Wait for the batch being written; a batch the store refused is recorded as failed,
        and its texts count as not stored."""
        if self.pending is None:
            return
        (future, chunk_hashes, embedded, texts), self.pending = self.pending, None
        try:
            future.result()
        except Exception as exc:
            if failures.is_fatal(self.conn, exc):
                raise
            self.failed.append((chunk_hashes, failures.describe(exc)))
            self.report.embedded -= len(embedded)
            self.report.texts_embedded -= texts
            self.report.batches -= 1
            self.plan.stored.difference_update(embedded)


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


def _write_batch(
    conn: psycopg.Connection,
    plan: EmbedPlan,
    hashes: list[str],
    vectors: Sequence[Sequence[float]],
    inputs: list[tuple[str, int, str]],
) -> None:
    with conn.transaction():
        # A batch lost to a server crash is embedded again by the next run (its vectors and
        # inputs go together), so it need not wait for its commit to reach the disk; the
        # pass's final, synchronous commit flushes every batch before it.
        conn.execute("SET LOCAL synchronous_commit = off")
        if hashes:
            index_store.insert_embeddings(
                conn, plan.embedder.model, hashes, vectors, replace=plan.replace
            )
        index_store.insert_inputs(conn, plan.embedder.model, plan.template, inputs)
