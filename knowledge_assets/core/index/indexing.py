"""Embed every chunk text that has no vector of the model yet.

A vector is keyed by (model, hash of the embedding text), so a text is embedded once per model
however many documents or re-chunkings share it. Each embedded batch is committed on its own, so
a failure or a killed run keeps every finished batch and the next run embeds only what is
missing. The batches themselves are :mod:`knowledge_assets.core.index.embed_batches`; chunking lives
in :mod:`knowledge_assets.core.chunks.chunk_refresh`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg

from knowledge_assets.core.counts import counted
from knowledge_assets.core.database import db
from knowledge_assets.core.database.db import Connect
from knowledge_assets.core.embedders.base import Embedder
from knowledge_assets.core.embedders.processes import SETTING as WORKERS_SETTING
from knowledge_assets.core.embedders.processes import ModelRunner, embed_workers
from knowledge_assets.core.index import embed_checks, index_store
from knowledge_assets.core.index.build_progress import run_watched
from knowledge_assets.core.index.embed_batches import EmbedPlan, EmbedReport, Row, embed_batches
from knowledge_assets.core.index.embedding_text import default_template
from knowledge_assets.core.index.index_build import (
    configure_build,
    ensure_model_index,
    model_index_name,
)
from knowledge_assets.core.progress import Progress

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
    watch: Connect | None = None,
) -> EmbedReport:
    """Embed every chunk (optionally of some documents) that has no vectors of this model under
    ``template`` (default: the model's measured default); with ``force``, every selected chunk
    again, overwriting its vectors.

    A chunk over the model's input limit is embedded in parts (see
    :func:`knowledge_assets.core.index.embedding_text.parts`). A part whose text already has a vector
    of the model is reused, never sent again. While a model moves to a new template, search keeps
    reading the old one until every chunk has vectors under the new one. A bulk run of a model
    that search is not using drops the model's HNSW index while it writes and rebuilds it before
    the model is marked complete (also when the run fails); a missing index (the model's first
    run, or a run stopped during that build) is built at the same point, even when nothing is
    left to embed. ``watch`` opens a second connection that follows the build, for progress
    lines (stage ``vector index``) beside ``progress``'s own.
    """
    started = time.perf_counter()
    template = template or default_template(embedder.model)
    report = _prepare_model(conn, embedder, template)
    whole = document_ids is None and not force
    texts = embed_checks.still_complete(conn, embedder.model, template) if whole else None
    if texts is not None and index_store.has_index(conn, model_index_name(embedder.model)):
        return _nothing_changed(conn, report, texts, started)
    counted, report.total, done = _count(conn, embedder.model, template, document_ids, whole)
    missing = report.total if force else report.total - done
    deferred = _defer_index(conn, embedder.model, missing, done)
    conn.commit()
    plan = EmbedPlan(embedder, template, set(), replace=force)
    size = batch_size or embedder.batch_size
    pages = _to_embed(conn, plan, document_ids, counted, size) if missing else []
    progress = progress or Progress("embeddings", "passages")
    _embed_pages(conn, plan, pages, size, missing, report, progress, deferred, watch)
    _finish(conn, embedder.model, template, report, counted)
    report.seconds_total = time.perf_counter() - started
    return report


def _count(
    conn: psycopg.Connection, model: str, template: str, document_ids: Sequence[Any] | None,
    whole: bool,
) -> tuple[embed_checks.Count | None, int, int]:  # fmt: skip
    """(the whole pass's count, texts, texts embedded): a pass over every chunk counts (and,
    when few are missing, lists) the texts without a vector, for :func:`_finish` to record; a
    pass over some documents or a forced one counts their texts only."""
    if whole:
        counted = embed_checks.count(conn, model, template, list_up_to=MISSING_LOOKUP_MAX)
        return counted, counted.total, counted.done
    total, done = index_store.count_texts(conn, model, document_ids, template)
    return None, total, done


def _embed_pages(
    conn: psycopg.Connection, plan: EmbedPlan, pages: Iterable[Sequence[Row]], size: int,
    missing: int, report: EmbedReport, progress: Progress, deferred: bool, watch: Connect | None,
) -> None:  # fmt: skip
    """Embed ``pages`` in the model's processes, then build the model's index if this run
    defers it; also after a failure, which then still surfaces as it was."""
    embedder = plan.embedder
    workers = report.processes = embed_workers(embedder, missing)
    if missing and workers == 1:  # worker processes load their own copies
        report.seconds_loading = _load(embedder)
    if workers > 1 and progress.log is not None:
        progress.log(
            f"{embedder.model} embeds in {counted(workers, 'process', 'processes')},"
            " one thread each"
            f" ({WORKERS_SETTING}=1 keeps it in this run's process)"
        )
    progress.start(missing)
    building = progress.stage_after("vector index", "vectors")
    try:
        with ModelRunner(embedder, workers) as runner:
            read = embed_batches(conn, plan, pages, size, report, progress, runner)
    except BaseException:
        if deferred:  # put the index back, but let the original error surface
            with contextlib.suppress(psycopg.Error):
                _build_index(conn, embedder, report, building, watch)
        raise
    report.reused = report.total - read
    if deferred:
        _build_index(conn, embedder, report, building, watch)


# Up to this many texts missing, the count lists them and their chunks are read by hash; more
# (a first build), and the chunks are read by one anti-join over them, a page at a time.
MISSING_LOOKUP_MAX = 5000

# Chunk rows read at a time (rounded to whole batches): a first build of 10,000 notes has
# 194,330 texts to embed, and reading their rows at once took the step's process from 522 MB
# to 1,075 MB (bench/results/scale.txt).
PAGE_ROWS = 4096


def _to_embed(
    conn: psycopg.Connection, plan: EmbedPlan, document_ids: Sequence[Any] | None,
    counted: embed_checks.Count | None, size: int,
) -> Iterable[Sequence[Row]]:  # fmt: skip
    """The chunk rows to embed: those the count listed, read by hash in one page, or else
    every chunk without vectors (every selected one when the plan replaces), page by page."""
    if counted is not None and counted.missing is not None:
        return [index_store.chunks_with_texts(conn, counted.missing)]
    model = plan.embedder.model
    return _pages(conn, model, plan.template, document_ids, plan.replace, size)


def _pages(
    conn: psycopg.Connection, model: str, template: str, document_ids: Sequence[Any] | None,
    force: bool, size: int,
) -> Iterator[list[Row]]:  # fmt: skip
    """The chunk rows to embed, a page at a time, in hash order (each page read after the
    previous one is written: ``embed_batches`` asks for the next page only then)."""
    page = max(1, PAGE_ROWS // size) * size
    after = ""
    while True:
        rows = index_store.chunks_to_embed(
            conn, model, template, document_ids, include_embedded=force, after=after, limit=page
        )
        conn.commit()  # each batch commits on its own, not inside this read
        if rows:
            yield rows
        if len(rows) < page:
            return
        after = rows[-1][0]


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
    """Whether this run builds ``model``'s index at its end, with memory sized for it and its
    progress reported: when the index is missing (the model's first run, or a run stopped while
    building it), or for a bulk load of a model search is not using, which drops it first."""
    name = model_index_name(model)
    if not index_store.has_index(conn, name):
        return True
    if todo < max(DEFER_INDEX_MIN, done // 8) or index_store.is_active(conn, model):
        return False
    index_store.drop_index(conn, name)
    return True


def _build_index(
    conn: psycopg.Connection, embedder: Embedder, report: EmbedReport, progress: Progress,
    watch: Connect | None,
) -> None:  # fmt: skip
    """Build the model's index in one go, with memory and workers sized for it."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.rollback()  # a failed batch left its transaction aborted
    started = time.perf_counter()
    rows = index_store.count_vectors(conn, embedder.model)
    conn.commit()

    def build(on: psycopg.Connection) -> None:
        with on.transaction():
            configure_build(on, rows, embedder.dims)
            ensure_model_index(on, embedder.model, embedder.dims)

    progress.start(rows)
    run_watched(conn, build, progress, watch)
    report.seconds_index = time.perf_counter() - started


def _prepare_model(conn: psycopg.Connection, embedder: Embedder, template: str) -> EmbedReport:
    assume = getattr(embedder, "assume_dims", None)  # remote models whose size is not fixed
    with conn.transaction():
        stored_dims = index_store.model_dims(conn, embedder.model)
        if assume is not None and stored_dims is not None:
            assume(stored_dims)  # no probe request for a size the store already knows
        if stored_dims is None:  # a registered model's row stays as it is (first write wins)
            stored_dims = index_store.register_model(
                conn, embedder.model, embedder.provider, embedder.dims, embedder.max_tokens,
                getattr(embedder, "options", {}), template,
            )  # fmt: skip
    if stored_dims != embedder.dims:
        raise ValueError(
            f"model {embedder.model} is registered with {stored_dims} dimensions but the "
            f"embedder returns {embedder.dims}: register it under another name"
        )
    # The model's index is built at the end of the run when missing (_defer_index), not here:
    # over the vectors a stopped run left, a build with the default memory would run for minutes.
    return EmbedReport(model=embedder.model, template=template)


# A run that wrote at least this many vectors vacuums and analyzes the vector tables: right
# after a bulk load the planner's statistics still describe the empty tables, and search plans
# built on them walk every row. (VACUUM skips the pages no run changed since its last pass.)
ANALYZE_AFTER = 1000


def _finish(
    conn: psycopg.Connection, model: str, template: str, report: EmbedReport,
    counted: embed_checks.Count | None,
) -> None:  # fmt: skip
    """Mark the model complete or not. A pass over every chunk (``counted``: what it counted
    before embedding) that embedded everything it found missing is complete unless another
    transaction changed the chunks since; only then are the texts counted again."""
    if report.embedded >= ANALYZE_AFTER:
        db.vacuum_analyze(conn, "rag.embeddings", "rag.embedding_inputs")
    if counted is None:
        total, done = index_store.count_texts(conn, model, template=template)
    elif report.failed_texts or embed_checks.changed_since(conn, counted.snapshot):
        counted = embed_checks.count(conn, model, template, after=counted)
        total, done = counted.total, counted.done
    else:  # every text missing when counting was embedded since, and nothing else changed
        total, done = counted.total, counted.total
    with conn.transaction():
        report.complete = total == done
        report.active = index_store.mark_model_complete(conn, model, template, report.complete)
        if counted is not None:
            embed_checks.record(conn, model, template, counted, report.complete)


def _nothing_changed(
    conn: psycopg.Connection, report: EmbedReport, texts: int, started: float
) -> EmbedReport:
    """The report of a pass that found the model's last complete pass still holding."""
    report.total = report.reused = texts
    report.complete = True
    report.active = index_store.is_active(conn, report.model)
    conn.commit()
    report.seconds_total = time.perf_counter() - started
    return report
