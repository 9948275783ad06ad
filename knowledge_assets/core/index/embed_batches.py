"""One embedding pass's batches: texts sent to the model, vectors and inputs written.

The model runs in the calling thread while the previous batch is written in another, so the
database never makes the model wait. A batch that fails is recorded against its notes, not
fatal, unless the provider looks down (several failures in a row, or nothing embedded at all).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from knowledge_assets.core import failures
from knowledge_assets.core.chunks.chunking import estimate_tokens
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.index import index_store
from knowledge_assets.core.index.embedding_text import ChunkFields, parts, text_hash
from knowledge_assets.core.progress import Progress

__all__ = ["EmbedPlan", "EmbedReport", "embed_batches"]


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


# Batches that may fail one after another before the provider counts as down and the run stops.
MAX_FAILED_BATCHES_IN_A_ROW = 3


@dataclass
class EmbedPlan:
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


def embed_batches(
    conn: psycopg.Connection,
    plan: EmbedPlan,
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
    plan: EmbedPlan,
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
